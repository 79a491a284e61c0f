//! `--mode json`: one JSON object per line on stdout, pi's event names and order, and
//! nothing else on stdout.

use serde_json::{json, Value};

use crate::common::{of_type, TestAgent};

/// Event labels in order, for the lifecycle events (role attached to message events).
fn lifecycle(events: &[Value]) -> Vec<String> {
    const KEEP: [&str; 8] = [
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
    ];
    events
        .iter()
        .filter_map(|e| {
            let ty = e["type"].as_str()?;
            if !KEEP.contains(&ty) {
                return None;
            }
            Some(match e["message"]["role"].as_str() {
                Some(role) if ty.starts_with("message_") => format!("{ty}:{role}"),
                _ => ty.to_string(),
            })
        })
        .collect()
}

async fn one_tool_run() -> (crate::common::Output, Vec<Value>) {
    let agent = TestAgent::new();
    let steps = json!([
        {"text": "Checking.", "toolCalls": [{"name": "bash", "arguments": {"command": "echo hi"}, "id": "call-one"}]},
        {"text": "It printed hi."}
    ]);
    let out = agent.run_faux(steps, &["--mode", "json", "run echo"]).await;
    out.assert_ok();
    let events = out.events();
    (out, events)
}

#[tokio::test]
async fn every_stdout_line_is_a_typed_json_object() {
    let (out, events) = one_tool_run().await;
    assert!(out.stdout.ends_with('\n'), "{out}");
    assert!(!events.is_empty());
    for e in &events {
        assert!(
            e["type"].as_str().is_some_and(|t| !t.is_empty()),
            "event without type: {e}"
        );
    }
}

/// pi's agent loop (`runAgentLoop` in packages/agent/src/agent-loop.ts) emits `agent_start`,
/// then `turn_start`, then the prompt's `message_start`/`message_end` (pi 1.6: the system
/// message declaring the prompt and tools first); clients that open a turn view on
/// `turn_start` rely on the user message arriving inside it.
#[tokio::test]
async fn one_tool_run_emits_events_in_pi_order() {
    let (_, events) = one_tool_run().await;
    let expected = [
        "agent_start",
        "turn_start",
        "message_start:system",
        "message_end:system",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "message_end:assistant",
        "tool_execution_start",
        "tool_execution_end",
        "message_start:toolResult",
        "message_end:toolResult",
        "turn_end",
        "turn_start",
        "message_start:assistant",
        "message_end:assistant",
        "turn_end",
        "agent_end",
    ];
    assert_eq!(lifecycle(&events), expected);
    // A session header, if present, comes first.
    if let Some(i) = events.iter().position(|e| e["type"] == "session") {
        assert_eq!(i, 0, "session header must be the first line");
    }
}

#[tokio::test]
async fn events_carry_pi_payloads() {
    let (_, events) = one_tool_run().await;
    let start = of_type(&events, "tool_execution_start")[0];
    assert_eq!(start["toolCallId"], "call-one");
    assert_eq!(start["toolName"], "bash");
    assert_eq!(start["args"], json!({"command": "echo hi"}));

    let end = of_type(&events, "tool_execution_end")[0];
    assert_eq!(end["toolCallId"], "call-one");
    assert_eq!(end["isError"], false);
    assert!(
        end["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("hi")),
        "{end}"
    );

    let assistant_ends: Vec<_> = of_type(&events, "message_end")
        .into_iter()
        .filter(|e| e["message"]["role"] == "assistant")
        .collect();
    let first = &assistant_ends[0]["message"];
    assert_eq!(first["stopReason"], "toolUse");
    assert_eq!(first["content"][0]["type"], "text");
    assert_eq!(first["content"][0]["text"], "Checking.");
    assert_eq!(first["content"][1]["type"], "toolCall");
    assert_eq!(first["content"][1]["id"], "call-one");
    assert_eq!(
        first["content"][1]["arguments"],
        json!({"command": "echo hi"})
    );
    assert!(first["usage"]["totalTokens"].is_number());
    assert_eq!(assistant_ends[1]["message"]["stopReason"], "stop");

    let turn_ends = of_type(&events, "turn_end");
    assert_eq!(
        turn_ends[0]["toolResults"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(turn_ends[0]["toolResults"][0]["toolCallId"], "call-one");
    assert_eq!(turn_ends[0]["message"]["role"], "assistant");

    let all = of_type(&events, "agent_end")[0]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let roles: Vec<_> = all
        .iter()
        .map(|m| m["role"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "toolResult", "assistant"]
    );
}

#[tokio::test]
async fn text_deltas_rebuild_the_final_text() {
    let (_, events) = one_tool_run().await;
    let deltas: String = of_type(&events, "message_update")
        .iter()
        .map(|e| &e["assistantMessageEvent"])
        .filter(|d| d["type"] == "text_delta")
        .filter_map(|d| d["delta"].as_str())
        .collect();
    assert_eq!(deltas, "Checking.It printed hi.");
    // Updates are delta-only: no cumulative message copies.
    assert!(of_type(&events, "message_update")
        .iter()
        .all(|e| e.get("message").is_none()));
}

#[tokio::test]
async fn errored_run_still_writes_only_json_and_exits_1() {
    let agent = TestAgent::new();
    let out = agent
        .run_faux(
            json!([{"error": "scripted failure"}]),
            &["--mode", "json", "hi"],
        )
        .await;
    out.assert_code(1);
    let events = out.events();
    let last_assistant = of_type(&events, "message_end")
        .into_iter()
        .rev()
        .find(|e| e["message"]["role"] == "assistant")
        .expect("assistant message_end");
    assert_eq!(last_assistant["message"]["stopReason"], "error");
    assert!(last_assistant["message"]["errorMessage"]
        .as_str()
        .is_some_and(|m| m.contains("scripted failure")));
    assert!(of_type(&events, "agent_end").len() == 1);
}

#[tokio::test]
async fn tool_calls_and_results_carry_their_type_and_role_as_in_rpc_and_pi_1_6() {
    let (_out, events) = one_tool_run().await;
    let end = events
        .iter()
        .find(|e| e["assistantMessageEvent"]["type"] == "toolcall_end")
        .expect("a toolcall_end");
    assert_eq!(
        end["assistantMessageEvent"]["toolCall"]["type"], "toolCall",
        "{end}"
    );
    let turn = of_type(&events, "turn_end")
        .into_iter()
        .find(|e| e["toolResults"].as_array().is_some_and(|r| !r.is_empty()))
        .expect("a turn_end with tool results");
    assert_eq!(turn["toolResults"][0]["role"], "toolResult", "{turn}");
}
