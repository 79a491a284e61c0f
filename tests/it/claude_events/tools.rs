//! PostToolUseFailure, PermissionRequest and SubagentStart/SubagentStop, and `pi hook replay
//! --claude-hooks` agreeing with the live run on the first two.

use serde_json::{json, Value};

use super::{end, hook, py, script, seen, settings, FLAG};
use crate::common::hooks::{model_calls, run_json, run_pi};
use crate::common::{path_str, tool_ends, TestAgent};

const BASH_GUARD: &str = r#"#!/bin/bash
# Blocks destructive commands (exit-code style).
command=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"].get("command", ""))')
if [[ "$command" == *"rm -rf"* ]]; then
  echo "Blocked: rm -rf is not allowed here" >&2
  exit 2
fi
exit 0
"#;

/// A PostToolUseFailure hook in the JSON style: context for the model about the failure.
const FAILURE_HINT: &str = r#"
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUseFailure",
    "additionalContext": "Hint for " + data["tool_use_id"] + ": read the error above"}}))
"#;

#[tokio::test]
async fn post_tool_use_failure_gives_feedback_on_failed_and_blocked_calls_only() {
    let agent = TestAgent::new();
    script(&agent, "guard.sh", BASH_GUARD);
    py(&agent, "failed.py", FAILURE_HINT);
    // The exit-code style: exit 2's stderr is shown to the model (the tool already failed).
    script(
        &agent,
        "failed.sh",
        "#!/bin/bash\ncat >/dev/null\necho 'exit-2 feedback from the hook' >&2\nexit 2\n",
    );
    py(&agent, "succeeded.py", "");
    settings(
        &agent,
        json!({
            "PreToolUse": [{"matcher": "Bash", "hooks": [hook("guard.sh")]}],
            "PostToolUseFailure": [{"matcher": "Bash", "hooks": [hook("failed.py"), hook("failed.sh")]}],
            "PostToolUse": [{"hooks": [hook("succeeded.py")]}]}),
    );
    let steps = json!([
        {"toolCalls": [
            {"name": "bash", "arguments": {"command": "echo fine"}, "id": "b1"},
            {"name": "bash", "arguments": {"command": "echo failing; exit 3"}, "id": "b2"},
            {"name": "bash", "arguments": {"command": "rm -rf build"}, "id": "b3"}]},
        "done"
    ]);
    let (out, events) = run_json(&agent, steps, &FLAG).await;
    out.assert_ok();
    assert!(
        !out.stderr.contains("PostToolUseFailure"),
        "no warning about the event: {out}"
    );
    let ends = tool_ends(&events);
    let b1 = end(&ends, "b1");
    assert_eq!(b1.text.trim(), "fine", "{out}");
    let b2 = end(&ends, "b2");
    assert!(b2.is_error, "{out}");
    assert!(
        b2.text.contains("failing")
            && b2.text.contains("Hint for b2: read the error above")
            && b2.text.contains("exit-2 feedback from the hook"),
        "{}",
        b2.text
    );
    // A call a gate blocked failed too: the hook's feedback follows the block's reason.
    let b3 = end(&ends, "b3");
    assert!(b3.is_error, "{out}");
    assert!(
        b3.text.contains("rm -rf is not allowed here")
            && b3.text.contains("Hint for b3: read the error above"),
        "{}",
        b3.text
    );
    assert!(
        b3.text.find("rm -rf is not allowed here") < b3.text.find("Hint for b3"),
        "{}",
        b3.text
    );

    // Claude Code's stdin: the error, not a tool_response. (A blocked call fails before the
    // batch runs, so b3's hook ran first.)
    let mut failed = seen(&agent, "failed.py");
    failed.sort_by_key(|e| e["tool_use_id"].as_str().unwrap_or_default().to_string());
    let ids: Vec<&str> = failed
        .iter()
        .map(|e| e["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["b2", "b3"], "{failed:?}");
    for e in &failed {
        assert_eq!(e["hook_event_name"], "PostToolUseFailure");
        assert_eq!(e["tool_name"], "Bash");
        assert_eq!(e["is_interrupt"], false);
        assert!(e.get("tool_response").is_none(), "{e}");
    }
    assert_eq!(
        failed[0]["tool_input"],
        json!({"command": "echo failing; exit 3"})
    );
    assert!(failed[0]["error"].as_str().unwrap().contains("failing"));
    assert!(failed[1]["error"]
        .as_str()
        .unwrap()
        .contains("rm -rf is not allowed here"));
    // PostToolUse is for calls that succeeded, as in Claude Code.
    let ok: Vec<Value> = seen(&agent, "succeeded.py")
        .into_iter()
        .map(|e| e["tool_use_id"].clone())
        .collect();
    assert_eq!(ok, [json!("b1")]);
}

/// A PreToolUse hook that leaves every Bash call to the person (`ask`), and a
/// PermissionRequest hook that answers for them on some.
const ASK: &str = r#"
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
    "permissionDecision": "ask", "permissionDecisionReason": "needs approval"}}))
"#;

const PERMISSION: &str = r#"
command = data["tool_input"]["command"]
decision = None
if command.startswith("touch allowed"):
    decision = {"behavior": "allow", "updatedInput": {"command": "touch allowed-and-patched"}}
elif command.startswith("touch denied"):
    decision = {"behavior": "deny", "message": "denied by the permission policy"}
elif command.startswith("touch halt"):
    decision = {"behavior": "deny", "message": "stop everything", "interrupt": True}
if decision:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}))
"#;

fn permission_settings(agent: &TestAgent) {
    py(agent, "ask.py", ASK);
    py(agent, "permission.py", PERMISSION);
    py(agent, "failed.py", FAILURE_HINT);
    settings(
        agent,
        json!({
            "PreToolUse": [{"matcher": "Bash", "hooks": [hook("ask.py")]}],
            "PermissionRequest": [{"matcher": "Bash", "hooks": [hook("permission.py")]}],
            "PostToolUseFailure": [{"matcher": "Bash", "hooks": [hook("failed.py")]}]}),
    );
}

#[tokio::test]
async fn permission_request_answers_before_anyone_is_asked() {
    let agent = TestAgent::new();
    permission_settings(&agent);
    let steps = json!([
        {"toolCalls": [
            {"name": "bash", "arguments": {"command": "touch allowed"}, "id": "p1"},
            {"name": "bash", "arguments": {"command": "touch denied"}, "id": "p2"},
            {"name": "bash", "arguments": {"command": "touch undecided"}, "id": "p3"}]},
        "done"
    ]);
    let (out, events) = run_json(&agent, steps, &FLAG).await;
    out.assert_ok();
    let ends = tool_ends(&events);
    // Allowed, with the hook's input (Claude Code's shape, mapped back to pi's).
    assert!(!end(&ends, "p1").is_error, "{out}");
    assert!(agent.cwd.join("allowed-and-patched").exists(), "{out}");
    assert!(!agent.cwd.join("allowed").exists());
    let p2 = end(&ends, "p2");
    assert!(
        p2.is_error && p2.text.contains("denied by the permission policy"),
        "{out}"
    );
    assert!(!agent.cwd.join("denied").exists());
    // No decision and no one to ask: blocked, as before.
    let p3 = end(&ends, "p3");
    assert!(
        p3.is_error && p3.text.contains("no one can be asked"),
        "{}",
        p3.text
    );
    assert!(!agent.cwd.join("undecided").exists());
    let asked = seen(&agent, "permission.py");
    assert_eq!(asked.len(), 3, "{asked:?}");
    for e in &asked {
        assert_eq!(e["hook_event_name"], "PermissionRequest");
        assert_eq!(e["tool_name"], "Bash");
        assert!(e.get("tool_use_id").is_none(), "{e}");
        assert_eq!(e["permission_suggestions"], json!([]));
    }
    assert_eq!(asked[0]["tool_input"], json!({"command": "touch allowed"}));
    assert_eq!(model_calls(&events), 2, "{out}");

    // `interrupt: true` with a deny stops the run: no model call follows the batch.
    let steps = json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": "touch halt"}, "id": "h1"}]},
        "never reached"
    ]);
    let (out, events) = run_json(&agent, steps, &FLAG).await;
    let ends = tool_ends(&events);
    let h1 = end(&ends, "h1");
    assert!(h1.is_error && h1.text.contains("stop everything"), "{out}");
    assert_eq!(model_calls(&events), 1, "{out}");
    assert!(!agent.cwd.join("halt").exists());
}

#[tokio::test]
async fn pi_hook_replay_agrees_with_the_live_run_on_permission_requests_and_failure_feedback() {
    let agent = TestAgent::new();
    permission_settings(&agent);
    let steps = json!([
        {"toolCalls": [
            {"name": "bash", "arguments": {"command": "touch allowed"}, "id": "p1"},
            {"name": "bash", "arguments": {"command": "touch denied"}, "id": "p2"},
            {"name": "bash", "arguments": {"command": "touch undecided"}, "id": "p3"},
            {"name": "read", "arguments": {"path": "nothing-here.txt"}, "id": "p4"}]},
        "done"
    ]);
    let (out, events) = run_json(&agent, steps, &FLAG).await;
    out.assert_ok();
    let live = tool_ends(&events);
    let sessions = path_str(&agent.agent_dir.join("sessions"));
    let out = run_pi(
        &agent,
        &[
            "hook",
            "replay",
            FLAG[0],
            FLAG[1],
            "--session",
            &sessions,
            "--json",
        ],
    )
    .await;
    out.assert_ok();
    let doc: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{out}"));
    let call = |id: &str| -> Value {
        doc["calls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["call_id"] == id)
            .unwrap_or_else(|| panic!("no {id}: {out}"))["decision"]
            .clone()
    };
    // The PermissionRequest hook's allow and its input, as the live run applied them.
    assert_eq!(call("p1")["outcome"], "patch", "{out}");
    assert_eq!(
        call("p1")["patch"],
        json!({"command": "touch allowed-and-patched"})
    );
    assert!(!end(&live, "p1").is_error);
    // The blocks, with the reason the model was told and the PostToolUseFailure feedback that
    // followed it.
    for id in ["p2", "p3"] {
        let d = call(id);
        assert_eq!(d["outcome"], "block", "{out}");
        let live_text = &end(&live, id).text;
        // A replay has no one to ask, as print mode has not; the live run was in json mode.
        let reason = d["reason"]
            .as_str()
            .unwrap()
            .replace("in print mode", "in json mode");
        let feedback = d["feedback"][0].as_str().unwrap_or_else(|| panic!("{d}"));
        assert_eq!(feedback, format!("Hint for {id}: read the error above"));
        assert!(
            live_text.contains(&reason) && live_text.contains(feedback),
            "live: {live_text}\nreplayed: {d}"
        );
    }
    // A call no hook looks at costs nothing.
    assert_eq!(call("p4")["outcome"], "not_asked", "{out}");
}

#[tokio::test]
async fn subagent_hooks_are_accepted_and_never_fire_for_the_main_agent() {
    let agent = TestAgent::new();
    py(
        &agent,
        "subagent_stop.py",
        r#"print(json.dumps({"decision": "block", "reason": "keep going"}))"#,
    );
    py(&agent, "subagent_start.py", "");
    py(&agent, "stop.py", "");
    settings(
        &agent,
        json!({
            "SubagentStart": [{"hooks": [hook("subagent_start.py")]}],
            "SubagentStop": [{"hooks": [hook("subagent_stop.py")]}],
            "Stop": [{"hooks": [hook("stop.py")]}]}),
    );
    let (out, events) = run_json(&agent, json!(["done", "should not be reached"]), &FLAG).await;
    out.assert_ok();
    assert_eq!(
        model_calls(&events),
        1,
        "a SubagentStop block must not keep the main agent going: {out}"
    );
    assert!(seen(&agent, "subagent_stop.py").is_empty());
    assert!(seen(&agent, "subagent_start.py").is_empty());
    assert_eq!(seen(&agent, "stop.py").len(), 1, "Stop still runs");
    assert!(
        !out.stderr.contains("SubagentStart") && !out.stderr.contains("SubagentStop"),
        "accepted without a warning: {out}"
    );
}
