//! Issue 24, item 4: a file lock a hook holds (`tools.with_file_lock`) and never releases
//! cannot keep pi waiting. The model's `write` or `edit` of that file, or a hook's nested
//! `tools.execute` of `write`, waits on the lock; SIGTERM, SIGINT and an RPC `abort` end that
//! wait at once, the waiting tool reports it was aborted, and the file is left as it was.
//!
//! The locker (`limits.py` with `lock`) takes the lock as the run starts (`before_agent_start`)
//! and keeps running; it records `tool_execution_start`, which is how a test knows the tool
//! is about to wait: nothing else stands between that event and the lock.

use std::path::{Path, PathBuf};
use std::time::Instant;

use nix::sys::signal::Signal;
use serde_json::{json, Value};

use super::*;

const ORIGINAL: &str = "original\n";

/// The locked file (holding [`ORIGINAL`]) and the settings entry of the hook that locks it.
fn locker(agent: &TestAgent) -> (PathBuf, Value) {
    let target = agent.write_file("locked.txt", ORIGINAL);
    let mut hook = limits_hook(
        agent,
        "locker",
        json!({"subscriptions": [{"event": "before_agent_start"},
                                 {"event": "tool_execution_start"}],
               "lock": {"path": path_str(&target),
                        "marker": path_str(&agent.tmp.join("lock-granted"))}}),
    );
    // The lock is granted before the reply: a generous deadline, never reached.
    hook["timeout_ms"] = json!(60_000);
    (target, hook)
}

/// Waits until the locker holds the file and a call of `tool` has started (so it is about to
/// wait on the lock, or waiting).
#[track_caller]
fn wait_for_waiting(agent: &TestAgent, tool: &str) {
    wait_for_file(
        &agent.tmp.join("lock-granted"),
        "the locker never got the lock",
    );
    let granted = recorded(agent, "locker")
        .into_iter()
        .find(|m| m["type"] == "result")
        .expect("the lock's result is recorded");
    assert!(
        granted["value"]["lock_id"].is_u64(),
        "tools.with_file_lock failed: {granted}"
    );
    assert!(
        wait_until(HOOK_RUN_TIMEOUT, || {
            recorded_events(agent, "locker", "tool_execution_start")
                .iter()
                .any(|e| e["payload"]["tool_name"] == tool)
        }),
        "no call of {tool} started"
    );
}

#[track_caller]
fn assert_untouched(target: &Path) {
    assert_eq!(
        std::fs::read_to_string(target).expect("the locked file"),
        ORIGINAL,
        "the locked file was changed after the run was stopped"
    );
}

/// The first record `pred` holds for, whether it came before the last response or comes later.
async fn record(rpc: &mut crate::common::rpc::RpcProcess, pred: impl Fn(&Value) -> bool) -> Value {
    let seen = rpc.transcript.iter().find_map(|s| match s {
        crate::common::rpc::Step::Out(v) if pred(v) => Some(v.clone()),
        _ => None,
    });
    match seen {
        Some(v) => v,
        None => rpc.until(pred).await,
    }
}

/// `signal` while the model's `tool` call waits on the hook's lock: pi exits with `code` at
/// once, without touching the file and without leaving the locker running.
async fn signal_while_a_tool_waits_on_a_lock(tool: &str, args: Value, signal: Signal, code: i32) {
    let agent = TestAgent::new();
    let (target, hook) = locker(&agent);
    use_hooks(&agent, vec![hook]);
    let mut args = args;
    args["path"] = json!(path_str(&target));
    let steps = json!([
        {"toolCalls": [{"name": tool, "arguments": args, "id": "call-1"}]},
        "final text"
    ]);
    let pi = Running::start(&agent, steps, &["-p", "go"]);
    wait_for_waiting(&agent, tool);
    let signalled = Instant::now();
    pi.signal(signal);
    let (out, _) = pi.finish().await;
    let took = signalled.elapsed();
    out.assert_code(code);
    assert!(
        took < PROMPT,
        "pi took {took:?} to exit on {signal} while {tool} waited on a file lock\n{out}"
    );
    assert!(!out.stdout.contains("final text"), "{out}");
    assert_untouched(&target);
    assert_hook_gone(&agent, "locker");
}

#[tokio::test]
async fn sigterm_ends_a_write_waiting_on_a_hooks_file_lock_at_once() {
    signal_while_a_tool_waits_on_a_lock(
        "write",
        json!({"content": "changed\n"}),
        Signal::SIGTERM,
        143,
    )
    .await;
}

#[tokio::test]
async fn sigint_ends_a_write_waiting_on_a_hooks_file_lock_at_once() {
    signal_while_a_tool_waits_on_a_lock(
        "write",
        json!({"content": "changed\n"}),
        Signal::SIGINT,
        130,
    )
    .await;
}

#[tokio::test]
async fn sigterm_ends_an_edit_waiting_on_a_hooks_file_lock_at_once() {
    signal_while_a_tool_waits_on_a_lock(
        "edit",
        json!({"oldText": "original", "newText": "changed"}),
        Signal::SIGTERM,
        143,
    )
    .await;
}

/// An RPC `abort` while the model's `write` waits on the lock is answered at once; the write
/// ends as aborted, the file is untouched, and pi goes on serving commands.
#[tokio::test]
async fn rpc_abort_ends_a_write_waiting_on_a_hooks_file_lock_at_once() {
    let agent = TestAgent::new();
    let (target, hook) = locker(&agent);
    use_hooks(&agent, vec![hook]);
    let steps = json!([
        {"toolCalls": [{"name": "write", "id": "call-1",
                        "arguments": {"path": path_str(&target), "content": "changed\n"}}]},
        "final text"
    ]);
    let mut rpc = agent.rpc(&agent.faux_args(steps));
    let ok = rpc
        .request(json!({"id": "p", "type": "prompt", "message": "go"}))
        .await;
    assert_eq!(ok["success"], true, "{ok}");
    wait_for_waiting(&agent, "write");
    let asked = Instant::now();
    let answer = rpc.request(json!({"id": "a", "type": "abort"})).await;
    let took = asked.elapsed();
    assert_eq!(answer["success"], true, "{answer}\n{}", rpc.tail());
    assert!(
        took < PROMPT,
        "abort was answered after {took:?} while a write waited on a file lock\n{}",
        rpc.tail()
    );
    let end = record(&mut rpc, |v| {
        v["type"] == "tool_execution_end" && v["toolCallId"] == "call-1"
    })
    .await;
    assert_eq!(end["isError"], true, "{end}");
    let text = crate::common::blocks_text(&end["result"]["content"]);
    assert!(
        text.contains("aborted"),
        "the write should say it was aborted: {text:?}"
    );
    record(&mut rpc, |v| v["type"] == "agent_settled").await;
    assert_untouched(&target);
    // Still serving: the next command is answered.
    let state = rpc.request(json!({"id": "s", "type": "get_state"})).await;
    assert_eq!(state["success"], true, "{state}");
    assert_eq!(rpc.close().await, Some(0), "{}", rpc.tail());
    assert_untouched(&target);
    assert_hook_gone(&agent, "locker");
}

/// A hook tool (`save`) whose nested `tools.execute` of `write` waits on another hook's lock:
/// an RPC `abort` ends the nested wait too — the hook is answered at once that its write was
/// aborted — instead of letting the write through whenever the lock is released.
#[tokio::test]
async fn rpc_abort_ends_a_nested_write_waiting_on_a_file_lock_at_once() {
    let agent = TestAgent::new();
    let (target, locker) = locker(&agent);
    let save = json!({"name": "save", "description": "Saves through write.",
                      "parameters": {"type": "object"}});
    let write = json!({"method": "tools.execute",
                       "params": {"tool": "write",
                                  "arguments": {"path": path_str(&target),
                                                "content": "changed\n"}}});
    let saver = scripted(
        &agent,
        "saver",
        json!({"tools": [save], "tool": {"save": {"call": write, "on_cancel_touch":
               path_str(&agent.tmp.join("save-cancelled"))}}}),
    );
    use_hooks(&agent, vec![locker, saver]);
    let steps = json!([
        {"toolCalls": [{"name": "save", "arguments": {}, "id": "call-save"}]},
        "final text"
    ]);
    let mut rpc = agent.rpc(&agent.faux_args(steps));
    let ok = rpc
        .request(json!({"id": "p", "type": "prompt", "message": "go"}))
        .await;
    assert_eq!(ok["success"], true, "{ok}");
    wait_for_waiting(&agent, "write");
    let asked = Instant::now();
    let answer = rpc.request(json!({"id": "a", "type": "abort"})).await;
    assert_eq!(answer["success"], true, "{answer}");
    let answered = wait_until(PROMPT, || {
        recorded(&agent, "saver")
            .iter()
            .any(|m| m["type"] == "result")
    });
    let took = asked.elapsed();
    assert!(
        answered,
        "the nested write was still waiting {took:?} after the abort\n{}",
        rpc.tail()
    );
    let result = recorded(&agent, "saver")
        .into_iter()
        .find(|m| m["type"] == "result")
        .expect("recorded above");
    assert_eq!(result["value"]["is_error"], true, "{result}");
    let text = crate::common::blocks_text(&result["value"]["content"]);
    assert!(text.contains("aborted"), "{result}");
    assert_untouched(&target);
    assert_eq!(rpc.close().await, Some(0), "{}", rpc.tail());
    assert_untouched(&target);
    for h in ["locker", "saver"] {
        assert_hook_gone(&agent, h);
    }
}
