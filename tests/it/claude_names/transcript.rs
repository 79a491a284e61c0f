//! Item 4: `transcript_path` is a Claude-Code-format view of the session, kept up to date.

use std::path::Path;

use serde_json::{json, Value};

use super::{hook, jsonl, py, seen, settings, FLAG};
use crate::common::hooks::run_pi;
use crate::common::mock::{MockModel, MockUsage, Turn};
use crate::common::{path_str, TestAgent};

/// How popular Stop hooks read the transcript: the lines from the end, the last `assistant`
/// record's text blocks.
const LAST_ASSISTANT: &str = r#"
last = None
with open(data["transcript_path"]) as f:
    lines = f.readlines()
for line in reversed(lines):
    entry = json.loads(line)
    if entry.get("type") == "assistant":
        texts = [c["text"] for c in entry["message"]["content"] if c.get("type") == "text"]
        if texts:
            last = "\n".join(texts)
            break
with open(os.path.join(here, "last-assistant.txt"), "w") as out:
    out.write(last or "(none)")
with open(os.path.join(here, "transcript-copy.jsonl"), "w") as out:
    out.writelines(lines)
"#;

#[tokio::test]
async fn a_stop_hook_reads_the_final_assistant_message_from_a_claude_code_transcript() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("bash", json!({"command": "echo from-the-tool"}))]),
        Turn::text("All done: 42 files checked."),
    ])
    .await;
    mock.set_usage(MockUsage {
        input: 120,
        output: 30,
        cache_read: 500,
        cache_write: 64,
    });
    let agent = TestAgent::with_mock(&mock);
    py(&agent, "stop.py", LAST_ASSISTANT);
    settings(&agent, json!({"Stop": [{"hooks": [hook("stop.py")]}]}));
    let out = run_pi(
        &agent,
        &[
            "--model",
            "mock/mock-model",
            "--mode",
            "json",
            FLAG[0],
            FLAG[1],
            "check the files",
        ],
    )
    .await;
    out.assert_ok();
    assert_eq!(
        agent.read_string("last-assistant.txt"),
        "All done: 42 files checked."
    );
    let stop = &seen(&agent, "stop.py")[0];
    let path = stop["transcript_path"].as_str().unwrap();
    let session_id = stop["session_id"].as_str().unwrap();
    let records = jsonl(&agent.cwd.join("transcript-copy.jsonl"));
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["user", "assistant", "user", "assistant"],
        "{records:#?}"
    );
    // Claude Code's common fields, chained by parentUuid.
    let mut parent = Value::Null;
    for r in &records {
        assert_eq!(r["sessionId"], session_id);
        assert_eq!(r["cwd"], path_str(&agent.cwd));
        assert_eq!(r["parentUuid"], parent, "{r}");
        assert_eq!(r["isSidechain"], false);
        assert!(r["timestamp"].as_str().unwrap().ends_with('Z'), "{r}");
        assert_eq!(r["uuid"].as_str().unwrap().len(), 36, "{r}");
        parent = r["uuid"].clone();
    }
    assert_eq!(records[0]["message"]["role"], "user");
    assert_eq!(records[0]["message"]["content"], "check the files");
    let call = &records[1]["message"];
    assert_eq!(call["role"], "assistant");
    assert_eq!(call["content"][0]["type"], "tool_use");
    assert_eq!(call["content"][0]["name"], "Bash");
    assert_eq!(
        call["content"][0]["input"],
        json!({"command": "echo from-the-tool"})
    );
    assert_eq!(
        call["usage"],
        json!({"input_tokens": 120, "output_tokens": 30,
               "cache_read_input_tokens": 500, "cache_creation_input_tokens": 64})
    );
    let result = &records[2]["message"]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], call["content"][0]["id"]);
    assert_eq!(result["content"].as_str().unwrap().trim(), "from-the-tool");
    assert_eq!(records[3]["message"]["stop_reason"], "end_turn");

    // pi's own session file is untouched by this: still pi's format, elsewhere.
    let sessions: Vec<_> = walk(&agent.agent_dir.join("sessions"));
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_ne!(Path::new(path), sessions[0].as_path());
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&sessions[0])
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["type"], "session");
    assert!(
        Path::new(path).is_file(),
        "the transcript stays with the session"
    );
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[tokio::test]
async fn a_pre_tool_use_hook_sees_earlier_calls_and_results_in_the_transcript_as_it_grows() {
    let agent = TestAgent::new();
    agent.write_file("a.txt", "alpha\n");
    // Reads the whole transcript at each call: what it says about the calls so far.
    py(
        &agent,
        "look_back.py",
        r#"
records = [json.loads(l) for l in open(data["transcript_path"])]
uses = [c for r in records if r["type"] == "assistant"
        for c in r["message"]["content"] if c["type"] == "tool_use"]
results = [c for r in records if r["type"] == "user" and isinstance(r["message"]["content"], list)
           for c in r["message"]["content"] if c["type"] == "tool_result"]
with open(os.path.join(here, "look-back.jsonl"), "a") as out:
    out.write(json.dumps({"call": data["tool_use_id"], "lines": len(records),
                          "uses": [[u["id"], u["name"], u["input"]] for u in uses],
                          "results": [[r["tool_use_id"], r["content"]] for r in results]}) + "\n")
"#,
    );
    settings(
        &agent,
        json!({"PreToolUse": [{"matcher": "*", "hooks": [hook("look_back.py")]}]}),
    );
    let steps = json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo first-output"}, "id": "c1"}]},
        {"thinking": "now the file", "toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}, "id": "c2"}]},
        "done"
    ]);
    let mut args = agent.faux_args(steps);
    args.extend(
        ["--mode", "json"]
            .iter()
            .chain(FLAG.iter())
            .map(|s| s.to_string()),
    );
    args.push("go".into());
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    let looks = jsonl(&agent.cwd.join("look-back.jsonl"));
    assert_eq!(looks.len(), 2, "{out}");
    // At the first call: the prompt and the call itself.
    assert_eq!(looks[0]["call"], "c1");
    assert_eq!(
        looks[0]["uses"],
        json!([["c1", "Bash", {"command": "echo first-output"}]])
    );
    assert_eq!(looks[0]["results"], json!([]));
    // At the second: the first call's result too, and the new call in Claude Code's shape.
    assert_eq!(looks[1]["call"], "c2");
    let file = path_str(&agent.cwd.join("a.txt"));
    assert_eq!(
        looks[1]["uses"],
        json!([["c1", "Bash", {"command": "echo first-output"}],
               ["c2", "Read", {"file_path": file}]])
    );
    let results = looks[1]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0][0], "c1");
    assert!(
        results[0][1].as_str().unwrap().contains("first-output"),
        "{results:?}"
    );
    assert!(
        looks[1]["lines"].as_u64() > looks[0]["lines"].as_u64(),
        "the transcript grew: {looks:?}"
    );
}

#[tokio::test]
async fn without_a_session_file_hooks_still_get_a_transcript_that_goes_away_at_exit() {
    let agent = TestAgent::new();
    py(&agent, "stop.py", LAST_ASSISTANT);
    settings(&agent, json!({"Stop": [{"hooks": [hook("stop.py")]}]}));
    let mut args = agent.faux_args(json!([{"thinking": "hmm", "text": "Nothing saved."}]));
    args.extend(
        ["--no-session", "-p"]
            .iter()
            .chain(FLAG.iter())
            .map(|s| s.to_string()),
    );
    args.push("hi".into());
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    assert_eq!(agent.read_string("last-assistant.txt"), "Nothing saved.");
    let records = jsonl(&agent.cwd.join("transcript-copy.jsonl"));
    let blocks: Vec<&str> = records
        .iter()
        .filter(|r| r["type"] == "assistant")
        .map(|r| r["message"]["content"][0]["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        blocks,
        ["thinking", "text"],
        "one record per block, as Claude Code writes"
    );
    let path = seen(&agent, "stop.py")[0]["transcript_path"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!path.is_empty());
    assert!(
        !Path::new(&path).exists(),
        "--no-session leaves no transcript behind: {path}"
    );
    assert!(walk(&agent.agent_dir)
        .iter()
        .all(|p| !p.display().to_string().contains("transcript")));
}
