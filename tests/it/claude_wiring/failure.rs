//! A PreToolUse gate that cannot start, or that crashes, must not let the call through
//! silently. Claude Code reads exit 1 (node's missing script), exit 2 (python's) and exit 127
//! alike as "the hook said something": pi finds a missing script before it runs the command
//! and fails under the hook's policy (closed by default); and `commandHooksStrictExit` (user
//! settings, or forced by the managed policy) makes every exit but 0 and 2 of a PreToolUse
//! hook a failure, as Claude Code's own `onFailure: "block"` does for one hook.

use serde_json::{json, Value};

use super::{end, exe, has_node, settings, FLAG};
use crate::common::hooks::{bash_then_final, hook_errors, run_json};
use crate::common::{path_str, Output, TestAgent};

/// One PreToolUse hook `entry` (matcher Bash) before a bash call that creates `ran`.
async fn gate(agent: &TestAgent, entry: Value) -> (Output, Vec<Value>) {
    settings(
        agent,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [entry]}]}),
    );
    let _ = std::fs::remove_file(agent.cwd.join("ran"));
    let (out, events) = run_json(agent, bash_then_final("touch ran"), &FLAG).await;
    out.assert_ok();
    (out, events)
}

fn command(c: &str) -> Value {
    json!({"type": "command", "command": c})
}

#[track_caller]
fn assert_failed_closed(agent: &TestAgent, out: &Output, events: &[Value], says: &str) {
    let e = end(events, "call-1");
    assert!(
        e.is_error && e.text.contains(says) && e.text.contains("fails closed"),
        "the call was not blocked as a failure saying {says:?}: {}\n{out}",
        e.text
    );
    assert!(!agent.cwd.join("ran").exists(), "{out}");
}

#[tokio::test]
async fn a_hook_whose_script_is_missing_fails_closed_and_open_only_when_asked() {
    let agent = TestAgent::new();
    // Python exits 2 for a missing script, which Claude Code reads as "block": not a decision.
    let missing = "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/missing.py";
    let (out, events) = gate(&agent, command(missing)).await;
    let want = format!(
        "{} does not exist",
        path_str(&agent.cwd.join(".claude/hooks/missing.py"))
    );
    assert_failed_closed(&agent, &out, &events, &want);
    assert!(
        hook_errors(&events)
            .iter()
            .any(|h| h["kind"] == "not_found"),
        "{out}"
    );
    // Under `fail: "open"` the same broken hook lets the call go ahead (it decided nothing).
    let (out, events) = gate(&agent, json!({"command": missing, "fail": "open"})).await;
    assert!(!end(&events, "call-1").is_error, "{out}");
    assert!(agent.cwd.join("ran").exists(), "{out}");

    // A relative script, resolved in the project directory as the shell would.
    let (out, events) = gate(&agent, command("bash .claude/hooks/gone.sh")).await;
    assert_failed_closed(&agent, &out, &events, "gone.sh does not exist");

    // An interpreter that does not exist (`#!/usr/bin/env` of a missing program).
    exe(
        &agent.cwd.join(".claude/hooks/odd.sh"),
        "#!/usr/bin/env no-such-interpreter-25\nexit 0\n",
    );
    let (out, events) = gate(
        &agent,
        command("\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/odd.sh"),
    )
    .await;
    assert_failed_closed(&agent, &out, &events, "exit 127");

    if has_node() {
        // Node exits 1 for a missing script: Claude Code lets the call through.
        let (out, events) = gate(
            &agent,
            command("node \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.js"),
        )
        .await;
        assert_failed_closed(&agent, &out, &events, "guard.js does not exist");
    }
}

/// A gate that crashes on the input it gets: a traceback and exit 1.
const CRASHES: &str = r#"#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
sys.exit(0 if data["tool_input"]["cmd"] else 0)
"#;

/// A PostToolUse hook that always exits 1: a non-blocking error whatever the setting says.
const POST_WARNS: &str = "#!/bin/bash\ncat >/dev/null\necho 'formatter missing' >&2\nexit 1\n";

fn crash_hooks(agent: &TestAgent, pre: Value) {
    exe(&agent.cwd.join(".claude/hooks/crash.py"), CRASHES);
    exe(&agent.cwd.join(".claude/hooks/post.sh"), POST_WARNS);
    settings(
        agent,
        json!({
            "PreToolUse": [{"matcher": "Bash", "hooks": [pre]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [
                command("\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/post.sh")]}]}),
    );
}

async fn crash_run(agent: &TestAgent) -> (Output, Vec<Value>) {
    let _ = std::fs::remove_file(agent.cwd.join("ran"));
    let (out, events) = run_json(agent, bash_then_final("touch ran"), &FLAG).await;
    out.assert_ok();
    (out, events)
}

#[tokio::test]
async fn strict_exit_makes_a_crashed_pre_tool_use_gate_block() {
    let mut agent = TestAgent::new();
    let pre = command("python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/crash.py");
    crash_hooks(&agent, pre.clone());

    // Claude Code's rule by default: exit 1 is a non-blocking error, the call runs.
    let (out, events) = crash_run(&agent).await;
    assert!(!end(&events, "call-1").is_error, "{out}");
    assert!(agent.cwd.join("ran").exists());

    // The user's setting: the crash is a failure, closed by default; pi says at start-up
    // which hooks it applies to. PostToolUse exits are unaffected.
    agent.write_settings(&json!({"commandHooksStrictExit": true}));
    let (out, events) = crash_run(&agent).await;
    let e = end(&events, "call-1");
    assert!(
        e.is_error
            && e.text.contains("exited with code 1")
            && e.text.contains("KeyError")
            && e.text.contains("fails closed"),
        "{}\n{out}",
        e.text
    );
    assert!(!agent.cwd.join("ran").exists(), "{out}");
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("commandHooksStrictExit"))
        .unwrap_or_else(|| panic!("no start-up line about commandHooksStrictExit\n{out}"));
    assert!(line.contains("claude:PreToolUse:crash.py"), "{line}");
    assert!(!line.contains("post.sh"), "{line}");

    // The managed policy forces it: the user's `false` does not turn it off.
    let policy = agent.home.join("managed-settings.json");
    std::fs::write(&policy, json!({"commandHooksStrictExit": true}).to_string()).unwrap();
    agent.env("PI_MANAGED_SETTINGS", &path_str(&policy));
    agent.write_settings(&json!({"commandHooksStrictExit": false}));
    let (out, events) = crash_run(&agent).await;
    assert!(end(&events, "call-1").is_error, "{out}");
    assert!(!agent.cwd.join("ran").exists(), "{out}");
    assert!(
        out.stderr.contains(&path_str(&policy)),
        "the start-up line does not name the managed policy\n{out}"
    );
}

#[tokio::test]
async fn on_failure_block_makes_an_unexpected_exit_block_as_in_claude_code() {
    let agent = TestAgent::new();
    let pre = json!({"type": "command", "onFailure": "block",
                     "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/crash.py"});
    crash_hooks(&agent, pre);
    let (out, events) = crash_run(&agent).await;
    let e = end(&events, "call-1");
    assert!(
        e.is_error && e.text.contains("exited with code 1") && e.text.contains("onFailure"),
        "{}\n{out}",
        e.text
    );
    assert!(!agent.cwd.join("ran").exists(), "{out}");
}
