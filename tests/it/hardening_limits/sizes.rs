//! Issue 24, item 5: what a hook registers or appends is bounded — per item and in total per
//! hook — and a flood of large calls leaves pi's memory flat; `pi hook replay` streams a session
//! with one huge line instead of holding it.
//!
//! The limits under test (hook-protocol.md §7): a tool definition at most 256 KiB and a hook's
//! tools 4 MiB in all; a session entry at most 1 MiB and a hook's entries 16 MiB per run. Each
//! refusal is the error code `too_large` with a message naming the limit.

use std::io::Write;

use serde_json::{json, Value};

use super::*;

/// The `result` messages the recorded hook `name` got, in order.
fn results(agent: &TestAgent, name: &str) -> Vec<Value> {
    recorded(agent, name)
        .into_iter()
        .filter(|m| m["type"] == "result")
        .collect()
}

/// A hook that floods `count` calls of `kind` (`register` or `append`, each carrying `size`
/// bytes) when the model's `bash` call reaches its gate, and lets the call through once every
/// call of the flood is answered.
fn flooder(agent: &TestAgent, kind: &str, count: usize, size: usize) -> Value {
    let mut hook = limits_hook(
        agent,
        "flood",
        json!({"subscriptions": gate_on_bash(),
               "flood": {"kind": kind, "count": count, "size": size, "await": true}}),
    );
    // The gate's reply waits for the whole flood, which a debug build reads for a while.
    hook["timeout_ms"] = json!(120_000);
    hook
}

/// Runs the faux `bash` call through the flooder; returns the output and pi's peak RSS (kB).
async fn run_flood(agent: &TestAgent) -> (Output, u64) {
    let pi = Running::start(
        agent,
        bash_then_final("touch tool-ran"),
        &["--mode", "json", "--hook-events", "go"],
    );
    let (out, peak) = pi.finish_within(crate::common::RUN_TIMEOUT).await;
    out.assert_ok();
    assert!(
        agent.cwd.join("tool-ran").exists(),
        "the gate never let the call through\n{out}"
    );
    assert_eq!(final_text(&out.events()), "final text", "{out}");
    (out, peak)
}

#[track_caller]
fn assert_too_large(result: &Value, limit: &str) {
    assert_eq!(
        result["error"]["code"], "too_large",
        "expected a too_large refusal: {result}"
    );
    let message = result["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(limit),
        "the refusal should name the limit {limit}: {message:?}"
    );
}

/// The session files under the agent's session directory.
fn session_files(agent: &TestAgent) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![agent.agent_dir.join("sessions")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out
}

/// `tools.register` calls of 12 MB hidden tools (40 of them took pi to 525 MB; half as many,
/// to keep a debug build quick, would still take it past 250 MB): each is refused as too
/// large, and pi's memory stays flat.
#[tokio::test]
async fn a_flood_of_huge_tool_registrations_is_refused_and_memory_stays_flat() {
    let agent = TestAgent::new();
    use_hooks(&agent, vec![flooder(&agent, "register", 20, 12_000_000)]);
    let (out, peak) = run_flood(&agent).await;
    assert!(
        peak < MEMORY_BOUND_KB,
        "pi's peak memory reached {peak} kB under a flood of tools.register\n{}",
        out.stderr
    );
    let answers = results(&agent, "flood");
    assert_eq!(answers.len(), 20, "{answers:?}");
    for a in &answers {
        assert_too_large(a, "256 KiB");
    }
}

/// Tools of a legitimate size are accepted until the hook's tools reach 4 MiB in all; past that
/// each registration is refused, naming the total.
#[tokio::test]
async fn a_hooks_registered_tools_are_bounded_in_total() {
    let agent = TestAgent::new();
    use_hooks(&agent, vec![flooder(&agent, "register", 24, 200_000)]);
    run_flood(&agent).await;
    let answers = results(&agent, "flood");
    assert_eq!(answers.len(), 24, "{answers:?}");
    // 20 tools of about 200 kB each fit in 4 MiB; the 21st would not.
    for (i, a) in answers.iter().enumerate() {
        if i < 20 {
            assert_eq!(
                a["value"]["registered"],
                json!([format!("big{i}")]),
                "tool {i}: {a}"
            );
        } else {
            assert_too_large(a, "4 MiB");
        }
    }
}

/// `session.append_entry` calls of 12 MB each (40 of them took pi to 530 MB and wrote 458 MB;
/// half as many here): each is refused, nothing reaches the session file, and memory stays
/// flat.
#[tokio::test]
async fn a_flood_of_huge_session_entries_is_refused_and_memory_stays_flat() {
    let agent = TestAgent::new();
    use_hooks(&agent, vec![flooder(&agent, "append", 20, 12_000_000)]);
    let (out, peak) = run_flood(&agent).await;
    assert!(
        peak < MEMORY_BOUND_KB,
        "pi's peak memory reached {peak} kB under a flood of session.append_entry\n{}",
        out.stderr
    );
    let answers = results(&agent, "flood");
    assert_eq!(answers.len(), 20, "{answers:?}");
    for a in &answers {
        assert_too_large(a, "1 MiB");
    }
    let files = session_files(&agent);
    assert_eq!(files.len(), 1, "{files:?}");
    let size = std::fs::metadata(&files[0]).expect("session file").len();
    assert!(size < 1 << 20, "the session file grew to {size} bytes");
}

/// Entries of a legitimate size are written until the hook's entries of this run reach 16 MiB;
/// past that each is refused, naming the total, and the session holds only those written.
#[tokio::test]
async fn a_hooks_session_entries_are_bounded_in_total() {
    let agent = TestAgent::new();
    use_hooks(&agent, vec![flooder(&agent, "append", 24, 900_000)]);
    run_flood(&agent).await;
    let answers = results(&agent, "flood");
    assert_eq!(answers.len(), 24, "{answers:?}");
    // 18 entries of about 900 kB fit in 16 MiB; the 19th would not.
    for (i, a) in answers.iter().enumerate() {
        if i < 18 {
            assert!(a["value"]["id"].is_string(), "entry {i}: {a}");
        } else {
            assert_too_large(a, "16 MiB");
        }
    }
    let files = session_files(&agent);
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).expect("session file");
    let written = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "custom" && e["customType"] == "flood")
        .count();
    assert_eq!(written, 18);
}

/// Session lines with two `bash` calls: the first ran (its result is `huge` bytes of output,
/// one line of the file), the second was blocked.
fn write_session(path: &std::path::Path, huge: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("session file"));
    let lines = [
        json!({"type": "session", "version": 3, "id": "big-session", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/p"}),
        json!({"type": "message", "id": "a1", "parentId": null, "timestamp": "2025-01-01T00:00:01Z",
               "message": {"role": "assistant", "content": [
                   {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cat build.log"}},
                   {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "rm -rf /"}}],
               "api": "faux", "provider": "faux", "model": "m", "stopReason": "toolUse", "timestamp": 1}}),
    ];
    for l in &lines {
        writeln!(f, "{l}").expect("write");
    }
    // The huge line, written in pieces: the test holds none of it.
    write!(
        f,
        r#"{{"type":"message","id":"r1","parentId":"a1","timestamp":"2025-01-01T00:00:02Z","message":{{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{{"type":"text","text":""#
    )
    .expect("write");
    let chunk = "build output, one more line of it. ".repeat(4096);
    let mut left = huge;
    while left > 0 {
        let n = left.min(chunk.len());
        f.write_all(&chunk.as_bytes()[..n]).expect("write");
        left -= n;
    }
    writeln!(f, r#""}}],"isError":false,"timestamp":2}}}}"#).expect("write");
    let blocked = json!({"type": "message", "id": "r2", "parentId": "r1", "timestamp": "2025-01-01T00:00:02Z",
        "message": {"role": "toolResult", "toolCallId": "c2", "toolName": "bash",
                    "content": [{"type": "text", "text": "Blocked by hook policy: no"}], "isError": true, "timestamp": 2}});
    writeln!(f, "{blocked}").expect("write");
    f.flush().expect("flush");
}

/// `pi hook replay` of a 150 MB session whose tool result is one huge line (it peaked at 3.3×
/// the file): the file is streamed, so pi's peak memory stays under half the file, and the
/// decisions are exactly those of the same session with a short result.
#[tokio::test]
async fn replay_streams_a_session_with_one_huge_line() {
    let agent = TestAgent::new();
    let (small, big) = (agent.tmp.join("small.jsonl"), agent.tmp.join("big.jsonl"));
    write_session(&small, 64);
    write_session(&big, 150_000_000);
    let file_kb = std::fs::metadata(&big).expect("big session").len() / 1024;
    let replay = |file: &std::path::Path| {
        vec![
            "hook".to_string(),
            "replay".into(),
            crate::common::hooks::sample("policy.py"),
            "--session".into(),
            path_str(file),
            "--json".into(),
        ]
    };
    let (expected, _) = Running::spawn(&agent, replay(&small)).finish().await;
    expected.assert_ok();
    let (out, peak) = Running::spawn(&agent, replay(&big))
        .finish_within(crate::common::RUN_TIMEOUT)
        .await;
    out.assert_ok();
    assert!(
        peak < file_kb / 2,
        "pi hook replay peaked at {peak} kB on a {file_kb} kB session\n{}",
        out.stderr
    );
    let calls = |o: &Output| {
        let doc: Value = serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}\n{o}"));
        let mut calls = doc["calls"].clone();
        for c in calls.as_array_mut().expect("calls") {
            c.as_object_mut().expect("call").remove("file");
            c["decision"]
                .as_object_mut()
                .expect("decision")
                .remove("latency_us");
        }
        calls
    };
    let got = calls(&out);
    assert_eq!(got, calls(&expected), "{out}");
    let outcomes: Vec<(&str, &str)> = got
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| {
            (
                c["recorded"].as_str().unwrap_or_default(),
                c["decision"]["outcome"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(outcomes, [("ok", "allow"), ("blocked", "block")], "{out}");
    crate::common::hooks::assert_no_hook_processes(&agent);
}

/// A hook whose every `turn_end` reply adds ten entries of about 900 kB. Boundary entries are
/// written to the session like `session.append_entry`'s, so they count against the same
/// 16 MiB: the first turn's ten are written, the second turn's reply (which would pass the
/// budget) is refused whole as `too_large`, and the session file stays bounded.
#[tokio::test]
async fn entries_a_hook_adds_at_turn_boundaries_count_against_its_budget() {
    let agent = TestAgent::new();
    let script = agent.cwd.join("boundary_flood.py");
    std::fs::write(
        &script,
        format!(
            r#"import sys
sys.path.insert(0, {frames:?})
import _frame
_frame.handshake("boundary-flood", subscriptions=[{{"event": "turn_end"}}])
turn = 0
while True:
    msg = _frame.read()
    if msg is None or msg.get("type") == "shutdown":
        break
    if msg.get("type") == "event" and msg.get("id") is not None:
        turn += 1
        entries = [{{"type": "custom", "custom_type": "flood",
                    "data": {{"turn": turn, "n": i, "blob": "x" * 900000}}}} for i in range(10)]
        _frame.write({{"type": "reply", "id": msg["id"], "result": {{"entries": entries}}}})
"#,
            frames = path_str(&crate::common::hooks::repo().join("fixtures/hooks")),
        ),
    )
    .expect("write the hook");
    use_hooks(
        &agent,
        vec![json!({"command": format!("python3 {}", path_str(&script)),
                    "name": "boundary-flood", "timeout_ms": 60_000})],
    );
    let mut args = agent.faux_args(bash_then_final("true"));
    args.extend(["--mode", "json", "--hook-events", "go"].map(String::from));
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    let events = out.events();
    let refused: Vec<_> = crate::common::hooks::hook_errors(&events)
        .into_iter()
        .filter(|e| e["kind"] == "too_large")
        .collect();
    assert_eq!(refused.len(), 1, "one turn_end reply refused\n{out}");
    let message = refused[0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("16 MiB"), "{message}");
    let files = session_files(&agent);
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).expect("session file");
    let turns: Vec<i64> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "custom" && e["customType"] == "flood")
        .map(|e| e["data"]["turn"].as_i64().unwrap_or(0))
        .collect();
    assert_eq!(
        turns,
        vec![1; 10],
        "only the first turn's entries are written"
    );
}
