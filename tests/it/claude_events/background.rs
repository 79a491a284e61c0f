//! What runs in the background: `async: true` hooks (not waited for, unable to block, their
//! context with the next prompt) and the idle notification (after the idle time).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::{cmd, hook, py, seen, settings, FLAG};
use crate::common::mock::{MockModel, Turn};
use crate::common::{wait_until, TestAgent};
use crate::hooks_messages::request_messages;

#[tokio::test]
async fn an_async_hook_does_not_hold_up_the_call_and_its_context_comes_with_the_next_prompt() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("bash", json!({"command": "touch ran"}))]),
        Turn::text("first done"),
        Turn::text("second done"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    // Waited for, this hook would wait for a call that cannot run before it answers, and its
    // deny would block it.
    py(
        &agent,
        "background.py",
        r#"
marker = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "ran")
for _ in range(400):
    if os.path.exists(marker):
        break
    time.sleep(0.025)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
    "permissionDecision": "deny", "permissionDecisionReason": "too late",
    "additionalContext": "ASYNC-CONTEXT ran=" + str(os.path.exists(marker))}}))
"#,
    );
    settings(
        &agent,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": cmd("background.py"), "async": true, "timeout": 5}]}]}),
    );
    let args = [
        "--model",
        "mock/mock-model",
        FLAG[0],
        FLAG[1],
        "--hook-events",
    ];
    let mut rpc = agent.rpc(&args);
    rpc.send(json!({"id": "p1", "type": "prompt", "message": "go"}))
        .await;
    let end = rpc.event("tool_execution_end").await;
    assert_eq!(end["isError"], false, "{}", rpc.tail());
    rpc.event("agent_settled").await;
    assert!(agent.cwd.join("ran").exists(), "{}", rpc.tail());
    // Its output is reported when it ends.
    let done = rpc
        .until(|v| v["type"] == "hook_decision" && v["outcome"] == "async")
        .await;
    assert_eq!(
        done["answers"][0]["hook"],
        "claude:PreToolUse:background.py"
    );
    rpc.send(json!({"id": "p2", "type": "prompt", "message": "next"}))
        .await;
    rpc.event("agent_settled").await;
    rpc.close().await;
    let third: String = request_messages(&mock, 2)
        .into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(third.contains("ASYNC-CONTEXT ran=True"), "{third}");
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[tokio::test]
async fn the_idle_notification_waits_for_the_configured_idle_time() {
    let agent = TestAgent::new();
    agent.write_settings(&json!({"messageIdleNotifThresholdMs": 1500}));
    py(&agent, "idle.py", "");
    py(&agent, "prompted.py", "");
    settings(
        &agent,
        json!({"Notification": [
            {"matcher": "idle_prompt", "hooks": [hook("idle.py")]}]}),
    );
    let mut args = agent.faux_args(json!(["hello"]));
    args.extend(FLAG.iter().map(|s| s.to_string()));
    let mut rpc = agent.rpc(&args);
    rpc.send(json!({"id": "p", "type": "prompt", "message": "hi"}))
        .await;
    rpc.event("agent_settled").await;
    let settled = now_secs();
    let idle = || seen(&agent, "idle.py");
    assert!(
        wait_until(Duration::from_secs(15), || !idle().is_empty()),
        "{}",
        rpc.tail()
    );
    let n = &idle()[0];
    assert_eq!(n["notification_type"], "idle_prompt");
    assert_eq!(n["hook_event_name"], "Notification");
    let waited = n["_ran_at"].as_f64().unwrap() - settled;
    assert!(
        waited >= 1.2,
        "idle_prompt came {waited:.2} s after the run settled, not after the idle time"
    );
    rpc.close().await;
    assert_eq!(idle().len(), 1);
}
