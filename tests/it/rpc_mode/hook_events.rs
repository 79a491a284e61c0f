//! What hooks add to the RPC stream: pi's own events (`hook_decision`, `hook_error`,
//! `hook_state`, `mcp_server`) only for a client that asked (`--hook-events`), so a client
//! written for pi 1.6 reads exactly 1.6's stream; and `entry_appended` for a hook's
//! `session.append_entry`, as 1.6 sends it for an extension's `appendEntry`.

use serde_json::{json, Value};

use crate::common::hooks::{scripted, use_hooks};
use crate::common::rpc::{RpcProcess, Step};
use crate::common::{MockModel, TestAgent, Turn};

const MOCK: [&str; 4] = ["--provider", "mock", "--model", "mock-model"];

fn outs(r: &RpcProcess) -> Vec<Value> {
    r.transcript
        .iter()
        .filter_map(|s| match s {
            Step::Out(v) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

/// One prompt whose bash call a failing `guard` hook refuses, with `extra` flags; the
/// transcript.
async fn guarded_run(extra: &[&str]) -> Vec<Value> {
    let mock = MockModel::start(vec![
        Turn::tools(&[("bash", json!({"command": "touch gated-ran"}))]),
        Turn::text("final text"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "guard",
            json!({"subscriptions": [{"event": "tool_call", "tools": ["bash"]}],
                "on": {"tool_call": {"error": "refusing"}}}),
        )],
    );
    let mut args: Vec<&str> = MOCK.to_vec();
    args.extend_from_slice(extra);
    let mut r = agent.rpc(&args);
    r.request(json!({"id": "p", "type": "prompt", "message": "go"}))
        .await;
    r.event("agent_settled").await;
    assert!(
        !agent.cwd.join("gated-ran").exists(),
        "the gate failed closed"
    );
    assert_eq!(r.close().await, Some(0));
    outs(&r)
}

fn ours_only(records: &[Value]) -> Vec<&Value> {
    records
        .iter()
        .filter(|v| {
            let t = v["type"].as_str().unwrap_or("");
            t.starts_with("hook_") || t == "mcp_server"
        })
        .collect()
}

#[tokio::test]
async fn hook_events_reach_only_rpc_clients_that_asked_for_them() {
    let plain = guarded_run(&[]).await;
    assert_eq!(
        ours_only(&plain),
        Vec::<&Value>::new(),
        "a client that never asked got pi's own events"
    );
    // The refusal itself is in 1.6's events: the call's error result.
    let end = plain
        .iter()
        .find(|v| v["type"] == "tool_execution_end")
        .expect("tool_execution_end");
    assert_eq!(end["isError"], true, "{end}");

    let asked = guarded_run(&["--hook-events"]).await;
    let error = ours_only(&asked)
        .into_iter()
        .find(|v| v["type"] == "hook_error")
        .cloned()
        .unwrap_or_else(|| panic!("no hook_error event with --hook-events: {asked:?}"));
    assert_eq!(
        (&error["hook"], &error["event"]),
        (&json!("guard"), &json!("tool_call")),
        "{error}"
    );
}

#[tokio::test]
async fn a_hooks_appended_entry_is_announced_as_entry_appended() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("bash", json!({"command": "true"}))]),
        Turn::text("final text"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let append = json!({"method": "session.append_entry",
        "params": {"custom_type": "audit", "data": {"seen": "bash"}}});
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "auditor",
            json!({"subscriptions": [{"event": "tool_call", "tools": ["bash"]}],
                "on": {"tool_call": {"call": append, "reply": {}}}}),
        )],
    );
    let mut r = agent.rpc(&MOCK);
    r.request(json!({"id": "p", "type": "prompt", "message": "go"}))
        .await;
    r.event("agent_settled").await;
    let entries = r.request(json!({"id": "e", "type": "get_entries"})).await;
    assert_eq!(r.close().await, Some(0));
    let appended: Vec<Value> = outs(&r)
        .into_iter()
        .filter(|v| v["type"] == "entry_appended")
        .collect();
    let [event] = appended.as_slice() else {
        panic!("one entry_appended expected: {appended:?}")
    };
    // pi 1.6's shape: the entry as the session has it, under `entry`.
    let mut keys: Vec<&str> = event
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    assert_eq!(keys, ["entry", "type"], "{event}");
    let entry = &event["entry"];
    assert_eq!(entry["type"], "custom", "{entry}");
    assert_eq!(entry["customType"], "audit", "{entry}");
    assert_eq!(entry["data"], json!({"seen": "bash"}), "{entry}");
    let stored = entries["data"]["entries"]
        .as_array()
        .and_then(|es| es.iter().find(|e| e["id"] == entry["id"]))
        .unwrap_or_else(|| panic!("the announced entry is not in the session: {entries}"));
    assert_eq!(stored, entry, "announced as stored");
}
