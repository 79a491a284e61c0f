//! Tools registered by hooks, through the real binary: the model calls them like built-ins,
//! their `progress` streams as `tool_execution_update`, their arguments are validated and
//! gated before `tool_execute`, their results pass other hooks' `tool_result` chain, and an
//! abort (SIGTERM) sends `cancel` and leaves no hook process behind.

use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use crate::common::hooks::{
    assert_hook_gone, decisions, final_text, recorded, run_json, scripted, use_hooks,
    HOOK_RUN_TIMEOUT,
};
use crate::common::{kill_group, of_type, only_tool_end, path_str, wait_until, TestAgent};

fn counter_tool() -> Value {
    json!({
        "name": "counter",
        "description": "Count up to n, reporting progress.",
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}},
                       "required": ["n"], "additionalProperties": false}
    })
}

fn call_counter(args: Value) -> Value {
    json!([
        {"toolCalls": [{"name": "counter", "arguments": args, "id": "call-count"}]},
        "final text"
    ])
}

fn tool_executes(agent: &TestAgent, hook: &str) -> Vec<Value> {
    recorded(agent, hook)
        .into_iter()
        .filter(|m| m["type"] == "tool_execute")
        .collect()
}

#[tokio::test]
async fn hook_tool_streams_progress_and_its_result_passes_another_hooks_tool_result_chain() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![
            scripted(
                &agent,
                "toolbox",
                json!({
                "tools": [counter_tool()],
                "tool": {"counter": {"progress": ["counted 1", "counted 2"],
                    "reply": {"content": [{"type": "text", "text": "counted to 2"}],
                              "details": {"n": 2}}}}}),
            ),
            scripted(
                &agent,
                "annotator",
                json!({
                "subscriptions": [{"event": "tool_result", "tools": ["count*"]}],
                "on": {"tool_result": {"append": "[reviewed by annotator]"}}}),
            ),
        ],
    );
    let (out, events) = run_json(&agent, call_counter(json!({"n": 2})), &[]).await;
    out.assert_ok();

    let execs = tool_executes(&agent, "toolbox");
    assert_eq!(execs.len(), 1, "{out}");
    assert_eq!(execs[0]["tool"], "counter");
    assert_eq!(execs[0]["call_id"], "call-count");
    assert_eq!(execs[0]["arguments"], json!({"n": 2}));

    let updates: Vec<String> = of_type(&events, "tool_execution_update")
        .into_iter()
        .filter(|u| u["toolCallId"] == "call-count")
        .map(|u| crate::common::blocks_text(&u["partialResult"]["content"]))
        .collect();
    assert_eq!(updates, ["counted 1", "counted 2"], "{out}");

    let end = only_tool_end(&out);
    assert_eq!(end.name, "counter");
    assert!(!end.is_error, "{out}");
    assert_eq!(end.text, "counted to 2\n[reviewed by annotator]");
    assert_eq!(end.details, json!({"n": 2}));
    // The model got the annotated result.
    let result_msg = of_type(&events, "message_end")
        .into_iter()
        .find(|e| e["message"]["role"] == "toolResult")
        .expect("tool result message");
    assert_eq!(
        crate::common::blocks_text(&result_msg["message"]["content"]),
        "counted to 2\n[reviewed by annotator]"
    );
    let d = decisions(&events, "tool_result");
    assert_eq!(d[0]["answers"][0]["hook"], "annotator");
    assert_eq!(d[0]["outcome"], "patched");
    assert_eq!(final_text(&events), "final text");
    for h in ["toolbox", "annotator"] {
        assert_hook_gone(&agent, h);
    }
}

#[tokio::test]
async fn hook_tool_with_invalid_arguments_never_reaches_the_hook() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "toolbox",
            json!({"tools": [counter_tool()]}),
        )],
    );
    let (out, events) = run_json(&agent, call_counter(json!({"n": "lots"})), &[]).await;
    out.assert_ok();
    let end = only_tool_end(&out);
    assert!(end.is_error, "{out}");
    assert!(
        end.text.contains("/n"),
        "the error should point at the argument: {}",
        end.text
    );
    assert!(tool_executes(&agent, "toolbox").is_empty());
    assert_eq!(final_text(&events), "final text");
    assert_hook_gone(&agent, "toolbox");
}

#[tokio::test]
async fn hook_tool_blocked_by_another_hooks_gate_never_executes() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![
            scripted(
                &agent,
                "toolbox",
                json!({"tools": [counter_tool()],
                "tool": {"counter": {"reply": {"content": [{"type": "text", "text": "ran"}]}}}}),
            ),
            scripted(
                &agent,
                "gatekeeper",
                json!({
                "subscriptions": [{"event": "tool_call", "tools": ["counter"]}],
                "on": {"tool_call": {"reply": {"block": true, "reason": "no counting"}}}}),
            ),
        ],
    );
    let (out, events) = run_json(&agent, call_counter(json!({"n": 1})), &[]).await;
    out.assert_ok();
    let end = only_tool_end(&out);
    assert!(end.is_error);
    assert_eq!(end.text, "no counting");
    assert!(tool_executes(&agent, "toolbox").is_empty(), "{out}");
    assert_eq!(final_text(&events), "final text");
    for h in ["toolbox", "gatekeeper"] {
        assert_hook_gone(&agent, h);
    }
}

#[tokio::test]
async fn sigterm_while_a_hook_tool_runs_sends_cancel_and_exits_143() {
    let agent = TestAgent::new();
    let started = agent.tmp.join("tool-started");
    let cancelled = agent.tmp.join("tool-cancelled");
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "toolbox",
            json!({
            "tools": [counter_tool()],
            "tool": {"counter": {"progress": ["working"],
                "touch": path_str(&started), "on_cancel_touch": path_str(&cancelled)}}}),
        )],
    );
    let mut args = agent.faux_args(call_counter(json!({"n": 1000})));
    args.extend(["-p".to_string(), "go".to_string()]);
    let child = agent.command(&args).spawn().expect("spawn pi");
    let pi = child.id().expect("pid") as i32;

    assert!(
        wait_until(HOOK_RUN_TIMEOUT, || started.exists()),
        "the hook tool never started"
    );
    kill(Pid::from_raw(pi), Signal::SIGTERM).expect("signal pi");
    let out = match tokio::time::timeout(HOOK_RUN_TIMEOUT, child.wait_with_output()).await {
        Ok(out) => crate::common::Output::from(out.expect("wait")),
        Err(_) => {
            kill_group(pi);
            panic!("pi did not exit after SIGTERM");
        }
    };
    out.assert_code(143);
    assert!(
        wait_until(Duration::from_secs(5), || cancelled.exists()),
        "the hook never received cancel for its running tool\n{out}"
    );
    assert!(!out.stdout.contains("final text"), "{out}");
    assert_hook_gone(&agent, "toolbox");
}
