//! Claude Code command hooks through the real binary, written the way Claude Code's
//! documentation writes them (bash scripts that exit 2 with a reason on stderr, Python
//! scripts that print hook JSON), configured in an unmodified `.claude/settings.json` passed
//! with `--claude-hooks`: every event pi runs, both styles, the failure policies (exit 127,
//! timeout, killed), matcher forms, tool names and arguments both ways, `ask` with and without
//! a user, and the latency `pi hooks` shows.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::hooks::{decisions, hook_errors, run_json, run_pi};
use crate::common::mock::{MockModel, Turn};
use crate::common::rpc::RpcProcess;
use crate::common::{path_str, process_gone, tool_ends, wait_until, TestAgent};
use crate::hooks_messages::request_messages;

/// What Python hooks start with: read the event, keep a copy for the test to look at.
const PY_PRELUDE: &str = r#"#!/usr/bin/env python3
import json, os, sys
data = json.load(sys.stdin)
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "seen-" + os.path.basename(sys.argv[0]) + ".jsonl"), "a") as f:
    f.write(json.dumps(data) + "\n")
"#;

/// Writes an executable hook script to `.claude/hooks/<name>`.
fn script(agent: &TestAgent, name: &str, body: &str) {
    let p = agent.write_file(&format!(".claude/hooks/{name}"), body);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A Python hook: the prelude, then `body` (which has `data`).
fn py(agent: &TestAgent, name: &str, body: &str) {
    script(agent, name, &format!("{PY_PRELUDE}{body}\n"));
}

/// How Claude Code's docs point at a project hook.
fn cmd(name: &str) -> String {
    format!("\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/{name}")
}

fn hook(name: &str) -> Value {
    json!({"type": "command", "command": cmd(name)})
}

/// An unmodified Claude Code settings file (other keys included) with these `hooks`.
fn settings(agent: &TestAgent, hooks: Value) {
    agent.write_file(
        ".claude/settings.json",
        serde_json::to_string_pretty(&json!({
            "permissions": {"allow": ["Bash(npm run lint)"]},
            "hooks": hooks
        }))
        .unwrap(),
    );
}

const FLAG: [&str; 2] = ["--claude-hooks", ".claude/settings.json"];

/// The events a Python hook read, in order.
fn seen(agent: &TestAgent, name: &str) -> Vec<Value> {
    std::fs::read_to_string(agent.cwd.join(format!("seen-{name}.jsonl")))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn end<'a>(ends: &'a [crate::common::ToolEnd], id: &str) -> &'a crate::common::ToolEnd {
    ends.iter()
        .find(|e| e.id == id)
        .unwrap_or_else(|| panic!("no {id}"))
}

const BASH_GUARD: &str = r#"#!/bin/bash
# Blocks destructive commands (exit-code style).
input=$(cat)
echo "$input" >> "$CLAUDE_PROJECT_DIR/seen-bash_guard.sh.jsonl"
command=$(printf '%s' "$input" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"].get("command", ""))')
if [[ "$command" == *"rm -rf"* ]]; then
  echo "Blocked: rm -rf is not allowed here" >&2
  exit 2
fi
exit 0
"#;

const PROTECT_ENV: &str = r#"
path = data.get("tool_input", {}).get("file_path", "")
if path.endswith(".env"):
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "Writing .env files is not allowed"}}))
sys.exit(0)
"#;

#[tokio::test]
async fn pre_tool_use_blocks_by_exit_code_and_by_json_and_lets_the_rest_run() {
    let agent = TestAgent::new();
    script(&agent, "bash_guard.sh", BASH_GUARD);
    py(&agent, "protect_env.py", PROTECT_ENV);
    settings(
        &agent,
        json!({"PreToolUse": [
            {"matcher": "Bash", "hooks": [hook("bash_guard.sh")]},
            {"matcher": "Edit|Write", "hooks": [hook("protect_env.py")]}]}),
    );
    let steps = json!([
        {"toolCalls": [
            {"name": "bash", "arguments": {"command": "rm -rf build"}, "id": "c1"},
            {"name": "write", "arguments": {"path": "secrets/.env", "content": "KEY=1"}, "id": "c2"},
            {"name": "write", "arguments": {"path": "notes.txt", "content": "hi"}, "id": "c3"},
            {"name": "bash", "arguments": {"command": "echo fine"}, "id": "c4"}]},
        "done"
    ]);
    let (out, events) = run_json(&agent, steps, &FLAG).await;
    out.assert_ok();
    let ends = tool_ends(&events);
    let c1 = end(&ends, "c1");
    assert!(
        c1.is_error && c1.text.contains("rm -rf is not allowed here"),
        "{out}"
    );
    let c2 = end(&ends, "c2");
    assert!(
        c2.is_error && c2.text.contains("Writing .env files is not allowed"),
        "{out}"
    );
    assert!(!end(&ends, "c3").is_error, "{out}");
    assert_eq!(end(&ends, "c4").text.trim(), "fine");
    assert!(!agent.cwd.join("secrets/.env").exists());
    assert_eq!(agent.read_string("notes.txt"), "hi");

    // Claude Code's stdin, with Claude Code's names; the transcript is there.
    let bash = seen(&agent, "bash_guard.sh");
    assert_eq!(
        bash.len(),
        2,
        "the matcher `Bash` selects only the bash calls"
    );
    let first = bash.iter().find(|e| e["tool_use_id"] == "c1").unwrap();
    assert_eq!(first["hook_event_name"], "PreToolUse");
    assert_eq!(first["tool_name"], "Bash");
    assert_eq!(first["tool_input"], json!({"command": "rm -rf build"}));
    assert_eq!(first["cwd"], path_str(&agent.cwd));
    assert!(!first["session_id"].as_str().unwrap().is_empty());
    let transcript = first["transcript_path"].as_str().unwrap();
    assert!(std::path::Path::new(transcript).is_file(), "{transcript}");
    let writes = seen(&agent, "protect_env.py");
    assert_eq!(writes.len(), 2);
    assert!(writes.iter().all(|w| w["tool_name"] == "Write"));
    let env_write = writes.iter().find(|w| w["tool_use_id"] == "c2").unwrap();
    assert_eq!(
        env_write["tool_input"]["file_path"],
        path_str(&agent.cwd.join("secrets/.env"))
    );

    // Each hook is a hook like any other in the decisions.
    let blocked = decisions(&events, "tool_call")
        .into_iter()
        .find(|d| d["toolCallId"] == "c1")
        .unwrap();
    assert_eq!(blocked["outcome"], "block");
    assert_eq!(
        blocked["answers"][0]["hook"],
        "claude:PreToolUse:bash_guard.sh"
    );
}

#[tokio::test]
async fn updated_input_patches_in_pis_shape_and_hooks_combine_in_configuration_order() {
    let agent = TestAgent::new();
    agent.write_file("a.txt", "hello world\n");
    py(
        &agent,
        "shout.py",
        r#"
ti = dict(data["tool_input"])
ti["new_string"] = ti["new_string"].upper()
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
    "permissionDecision": "allow", "updatedInput": ti}}))
"#,
    );
    py(&agent, "audit.py", "");
    py(&agent, "reads.py", "");
    py(&agent, "globs.py", "");
    settings(
        &agent,
        json!({"PreToolUse": [
            {"matcher": "Edit", "hooks": [hook("shout.py"), hook("audit.py")]},
            {"matcher": "^Rea.$", "hooks": [hook("reads.py")]},
            {"matcher": "Glob", "hooks": [hook("globs.py")]}]}),
    );
    let steps = json!([
        {"toolCalls": [{"name": "edit", "arguments": {"path": "a.txt",
            "edits": [{"oldText": "world", "newText": "there"}]}, "id": "e1"}]},
        {"toolCalls": [
            {"name": "read", "arguments": {"path": "a.txt"}, "id": "r1"},
            {"name": "find", "arguments": {"pattern": "*.txt"}, "id": "f1"},
            {"name": "ls", "arguments": {}, "id": "l1"}]},
        "done"
    ]);
    let extra = [FLAG[0], FLAG[1], "--tools", "read,edit,find,ls"];
    let (out, events) = run_json(&agent, steps, &extra).await;
    out.assert_ok();
    assert_eq!(agent.read_string("a.txt"), "hello THERE\n", "{out}");
    // The second hook saw the first one's patch, in Claude Code's shape.
    let audited = seen(&agent, "audit.py");
    assert_eq!(audited[0]["tool_name"], "Edit");
    assert_eq!(
        audited[0]["tool_input"],
        json!({"file_path": path_str(&agent.cwd.join("a.txt")), "old_string": "world",
               "new_string": "THERE", "replace_all": false})
    );
    let d = decisions(&events, "tool_call")
        .into_iter()
        .find(|d| d["toolCallId"] == "e1")
        .unwrap();
    assert_eq!(d["outcome"], "patched");
    let hooks: Vec<&str> = d["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["hook"].as_str().unwrap())
        .collect();
    assert_eq!(
        hooks,
        ["claude:PreToolUse:shout.py", "claude:PreToolUse:audit.py"]
    );
    assert_eq!(
        d["answers"][0]["patch"],
        json!({"edits": [{"oldText": "world", "newText": "THERE"}]})
    );
    // A regex matcher and pi's find as Claude Code's Glob; ls matched by nobody.
    let reads = seen(&agent, "reads.py");
    assert_eq!(reads.len(), 1);
    assert_eq!(reads[0]["tool_name"], "Read");
    assert_eq!(
        reads[0]["tool_input"]["file_path"],
        path_str(&agent.cwd.join("a.txt"))
    );
    let globs = seen(&agent, "globs.py");
    assert_eq!(globs.len(), 1);
    assert_eq!(globs[0]["tool_input"], json!({"pattern": "*.txt"}));
}

#[tokio::test]
async fn ask_without_anyone_to_ask_blocks_the_call() {
    let agent = TestAgent::new();
    py(
        &agent,
        "ask.py",
        r#"
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
    "permissionDecision": "ask", "permissionDecisionReason": "Network access needs a human"}}))
"#,
    );
    settings(
        &agent,
        json!({"PreToolUse": [{"matcher": "*", "hooks": [hook("ask.py")]}]}),
    );
    let (out, events) = run_json(
        &agent,
        crate::common::hooks::bash_then_final("touch ran"),
        &FLAG,
    )
    .await;
    out.assert_ok();
    let e = end(&tool_ends(&events), "call-1").clone();
    assert!(e.is_error, "{out}");
    assert!(
        e.text.contains("Network access needs a human") && e.text.contains("no one can be asked"),
        "{}",
        e.text
    );
    assert!(!agent.cwd.join("ran").exists());
}

/// A failure policy run: one PreToolUse hook `entry` before a bash call that creates `ran`.
async fn gate_run(agent: &TestAgent, entry: Value) -> (crate::common::Output, Vec<Value>) {
    settings(
        agent,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [entry]}]}),
    );
    let _ = std::fs::remove_file(agent.cwd.join("ran"));
    let (out, events) = run_json(
        agent,
        crate::common::hooks::bash_then_final("touch ran"),
        &FLAG,
    )
    .await;
    out.assert_ok();
    (out, events)
}

#[tokio::test]
async fn a_hook_that_cannot_run_fails_closed_unless_its_policy_is_open() {
    let agent = TestAgent::new();
    // Exit 127: a mistyped path. Claude Code would let the call through; pi does not.
    let (out, events) = gate_run(&agent, hook("no_such_hook.sh")).await;
    let e = end(&tool_ends(&events), "call-1").clone();
    assert!(
        e.is_error && e.text.contains("exit 127") && e.text.contains("fails closed"),
        "{out}"
    );
    assert!(!agent.cwd.join("ran").exists());
    assert!(
        hook_errors(&events)
            .iter()
            .any(|h| h["kind"] == "not_found"),
        "{out}"
    );

    // Killed by a signal.
    script(
        &agent,
        "dies.sh",
        "#!/bin/bash\ncat >/dev/null\nkill -9 $$\n",
    );
    let (out, events) = gate_run(&agent, hook("dies.sh")).await;
    let e = end(&tool_ends(&events), "call-1").clone();
    assert!(e.is_error && e.text.contains("signal 9"), "{out}");
    assert!(!agent.cwd.join("ran").exists());

    // A timeout kills the hook and what it started.
    script(
        &agent,
        "hangs.sh",
        "#!/bin/bash\nsleep 300 &\necho $! > \"$CLAUDE_PROJECT_DIR/child.pid\"\nsleep 300\n",
    );
    let (out, events) = gate_run(
        &agent,
        json!({"type": "command", "command": cmd("hangs.sh"), "timeout": 1}),
    )
    .await;
    let e = end(&tool_ends(&events), "call-1").clone();
    assert!(e.is_error && e.text.contains("timeout of 1 s"), "{out}");
    assert!(!agent.cwd.join("ran").exists());
    let child: i32 = agent.read_string("child.pid").trim().parse().unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || process_gone(child)),
        "the hook's child {child} outlived its timeout"
    );

    // `fail: "open"`: reported, and the call goes ahead.
    let (out, events) = gate_run(
        &agent,
        json!({"type": "command", "command": cmd("no_such_hook.sh"), "fail": "open"}),
    )
    .await;
    assert!(!end(&tool_ends(&events), "call-1").is_error, "{out}");
    assert!(agent.cwd.join("ran").exists());

    // Exit 1 is Claude Code's non-blocking error: shown, and the call goes ahead.
    script(
        &agent,
        "warns.sh",
        "#!/bin/bash\ncat >/dev/null\necho 'lint config missing' >&2\nexit 1\n",
    );
    let (out, events) = gate_run(&agent, hook("warns.sh")).await;
    assert!(!end(&tool_ends(&events), "call-1").is_error, "{out}");
    assert!(agent.cwd.join("ran").exists());
    let errs = hook_errors(&events);
    assert!(
        errs.iter().any(|h| h["kind"] == "nonblocking_error"
            && h["message"]
                .as_str()
                .unwrap()
                .contains("lint config missing")),
        "{out}"
    );
}

#[tokio::test]
async fn post_tool_use_adds_context_or_replaces_the_result() {
    let agent = TestAgent::new();
    py(
        &agent,
        "lint.py",
        r#"
if data["tool_response"]["stdout"].strip() == "built":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
        "additionalContext": "3 lint warnings in main.rs"}}))
"#,
    );
    py(
        &agent,
        "style.py",
        r#"
print(json.dumps({"decision": "block", "reason": "notes.txt must end with a newline"}))
"#,
    );
    settings(
        &agent,
        json!({"PostToolUse": [
            {"matcher": "Bash", "hooks": [hook("lint.py")]},
            {"matcher": "Write", "hooks": [hook("style.py")]}]}),
    );
    let steps = json!([
        {"toolCalls": [
            {"name": "bash", "arguments": {"command": "echo built"}, "id": "b1"},
            {"name": "write", "arguments": {"path": "notes.txt", "content": "x"}, "id": "w1"}]},
        "done"
    ]);
    let (out, events) = run_json(&agent, steps, &FLAG).await;
    out.assert_ok();
    let ends = tool_ends(&events);
    // pi's result, then the hook's context as a block of its own.
    assert_eq!(
        end(&ends, "b1").text,
        "built\n\n3 lint warnings in main.rs",
        "{out}"
    );
    let w = end(&ends, "w1");
    assert!(w.is_error, "{out}");
    assert_eq!(w.text, "notes.txt must end with a newline");
    let lint = seen(&agent, "lint.py");
    assert_eq!(lint[0]["hook_event_name"], "PostToolUse");
    assert_eq!(lint[0]["tool_name"], "Bash");
    assert_eq!(lint[0]["tool_response"]["success"], true);
    assert_eq!(
        seen(&agent, "style.py")[0]["tool_response"]["filePath"],
        path_str(&agent.cwd.join("notes.txt"))
    );
}

#[tokio::test]
async fn user_prompt_submit_adds_context_or_drops_the_prompt() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    script(
        &agent,
        "prompt.sh",
        r#"#!/bin/bash
input=$(cat)
echo "$input" >> "$CLAUDE_PROJECT_DIR/seen-prompt.sh.jsonl"
if printf '%s' "$input" | grep -q 'password'; then
  echo "Prompts must not contain passwords" >&2
  exit 2
fi
echo "Current branch: main"
"#,
    );
    settings(
        &agent,
        json!({"UserPromptSubmit": [{"hooks": [hook("prompt.sh")]}]}),
    );
    let args = [
        "--model",
        "mock/mock-model",
        "--mode",
        "json",
        "--hook-events",
        FLAG[0],
        FLAG[1],
        "what changed?",
    ];
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    let msgs = request_messages(&mock, 0);
    assert!(
        msgs.iter()
            .any(|(r, t)| r == "user" && t == "what changed?"),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|(_, t)| t.contains("Current branch: main")),
        "{msgs:?}"
    );
    let first = &seen(&agent, "prompt.sh")[0];
    assert_eq!(first["hook_event_name"], "UserPromptSubmit");
    assert_eq!(first["prompt"], "what changed?");

    let args = [
        "--model",
        "mock/mock-model",
        "--mode",
        "json",
        "--hook-events",
        FLAG[0],
        FLAG[1],
        "my password is hunter2",
    ];
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    assert_eq!(
        mock.requests().len(),
        1,
        "a blocked prompt never reaches the model: {out}"
    );
    assert!(
        out.stderr.contains("Prompts must not contain passwords"),
        "{out}"
    );
}

#[tokio::test]
async fn session_start_context_reaches_the_model_and_session_end_runs_at_exit() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    py(
        &agent,
        "start.py",
        r#"
print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
    "additionalContext": "This project indents with tabs."}}))
"#,
    );
    py(&agent, "end.py", "");
    settings(
        &agent,
        json!({
            "SessionStart": [{"matcher": "startup", "hooks": [hook("start.py")]}],
            "SessionEnd": [{"hooks": [hook("end.py")]}]}),
    );
    let args = [
        "--model",
        "mock/mock-model",
        "--mode",
        "json",
        "--hook-events",
        FLAG[0],
        FLAG[1],
        "hi",
    ];
    run_pi(&agent, &args).await.assert_ok();
    let msgs = request_messages(&mock, 0);
    assert!(
        msgs.iter()
            .any(|(_, t)| t.contains("This project indents with tabs.")),
        "{msgs:?}"
    );
    assert_eq!(seen(&agent, "start.py")[0]["source"], "startup");
    let ended = seen(&agent, "end.py");
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["hook_event_name"], "SessionEnd");
    assert_eq!(ended[0]["reason"], "other");
}

#[tokio::test]
async fn a_stop_hook_that_blocks_continues_the_run_with_its_reason() {
    let mock = MockModel::start(vec![Turn::text("done"), Turn::text("tests pass now")]).await;
    let agent = TestAgent::with_mock(&mock);
    py(
        &agent,
        "stop.py",
        r#"
if not data["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "Run the tests before stopping."}))
"#,
    );
    settings(&agent, json!({"Stop": [{"hooks": [hook("stop.py")]}]}));
    let args = [
        "--model",
        "mock/mock-model",
        "--mode",
        "json",
        "--hook-events",
        FLAG[0],
        FLAG[1],
        "fix it",
    ];
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    assert_eq!(mock.requests().len(), 2, "{out}");
    assert_eq!(
        request_messages(&mock, 1).last().unwrap(),
        &(
            "user".to_string(),
            "Run the tests before stopping.".to_string()
        )
    );
    let stops: Vec<bool> = seen(&agent, "stop.py")
        .iter()
        .map(|e| e["stop_hook_active"].as_bool().unwrap())
        .collect();
    assert_eq!(stops, [false, true]);
}

#[tokio::test]
async fn with_a_user_ask_asks_and_notification_and_pre_compact_run() {
    let agent = TestAgent::new();
    // Small enough that two exchanges leave something to compact.
    agent.write_settings(&json!({
        "compaction": {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20}}));
    py(
        &agent,
        "ask.py",
        r#"
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
    "permissionDecision": "ask", "permissionDecisionReason": "touching files"}}))
"#,
    );
    py(&agent, "notify.py", "");
    script(
        &agent,
        "compact.sh",
        "#!/bin/bash\ncat > \"$CLAUDE_PROJECT_DIR/seen-compact.sh.jsonl\"\necho 'not now' >&2\nexit 2\n",
    );
    settings(
        &agent,
        json!({
            "PreToolUse": [{"matcher": "Bash", "hooks": [hook("ask.py")]}],
            "Notification": [{"matcher": "permission_prompt", "hooks": [hook("notify.py")]}],
            "PreCompact": [{"matcher": "manual", "hooks": [hook("compact.sh")]}]}),
    );
    let mut steps = crate::common::hooks::bash_then_final("touch ran");
    steps.as_array_mut().unwrap().push(json!("second answer"));
    let mut args = agent.faux_args(steps);
    args.extend(FLAG.iter().map(|s| s.to_string()));
    let mut rpc: RpcProcess = agent.rpc(&args);
    rpc.send(json!({"id": "p", "type": "prompt", "message": "go"}))
        .await;
    let confirm = rpc
        .until(|v| v["type"] == "extension_ui_request" && v["method"] == "confirm")
        .await;
    // The question names the exact command, not only the tool.
    assert_eq!(
        confirm["message"],
        "touching files\n\nBash command:\ntouch ran"
    );
    rpc.send(json!({"type": "extension_ui_response", "id": confirm["id"], "confirmed": true}))
        .await;
    rpc.event("agent_settled").await;
    assert!(agent.cwd.join("ran").exists(), "{}", rpc.tail());
    let notified = || seen(&agent, "notify.py");
    assert!(
        wait_until(Duration::from_secs(10), || !notified().is_empty()),
        "{}",
        rpc.tail()
    );
    assert_eq!(notified()[0]["notification_type"], "permission_prompt");
    assert_eq!(notified()[0]["hook_event_name"], "Notification");

    let long = format!("second question {}", "beta ".repeat(30));
    rpc.send(json!({"id": "q", "type": "prompt", "message": long}))
        .await;
    rpc.event("agent_settled").await;
    let answer = rpc.request(json!({"id": "c", "type": "compact"})).await;
    let compacted = seen(&agent, "compact.sh");
    assert_eq!(compacted[0]["trigger"], "manual", "{answer}");
    assert_ne!(
        answer["success"], true,
        "the hook cancelled the compaction: {answer}"
    );
    rpc.close().await;
}

#[tokio::test]
async fn pi_hooks_lists_claude_hooks_with_the_latency_of_recorded_runs() {
    let agent = TestAgent::new();
    script(&agent, "fast.sh", "#!/bin/bash\ncat >/dev/null\nexit 0\n");
    settings(
        &agent,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [hook("fast.sh")]}]}),
    );
    let list = ["hooks", FLAG[0], FLAG[1]];
    let out = run_pi(&agent, &list).await;
    out.assert_ok();
    assert!(out.stdout.contains("claude:PreToolUse:fast.sh"), "{out}");
    assert!(out.stdout.contains("matcher:       Bash"), "{out}");
    assert!(out.stdout.contains("no runs recorded yet"), "{out}");
    let (run, _) = run_json(&agent, crate::common::hooks::bash_then_final("true"), &FLAG).await;
    run.assert_ok();
    let out = run_pi(&agent, &list).await;
    assert!(out.stdout.contains("latency:       median"), "{out}");
    assert!(
        out.stdout.contains("over 1 run(s) (spawn + run, recorded)"),
        "{out}"
    );
}

#[tokio::test]
async fn managed_command_hooks_run_first_fail_closed_and_can_be_the_only_ones() {
    let mut agent = TestAgent::new();
    // The administrator's script lives outside the project, with an absolute path.
    let admin = agent.home.join("admin");
    std::fs::create_dir_all(&admin).unwrap();
    let deny = admin.join("deny.sh");
    std::fs::write(
        &deny,
        "#!/bin/bash\ncat >/dev/null\necho \"managed policy: no shell ($PATH)\" >&2\nexit 2\n",
    )
    .unwrap();
    std::fs::set_permissions(&deny, std::fs::Permissions::from_mode(0o755)).unwrap();
    let policy = agent.home.join("managed-settings.json");
    std::fs::write(
        &policy,
        json!({"allowManagedHooksOnly": true, "commandHooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "command", "command": path_str(&deny), "fail": "open"}]}]}})
        .to_string(),
    )
    .unwrap();
    agent.env("PI_MANAGED_SETTINGS", &path_str(&policy));
    py(&agent, "user.py", "");
    settings(
        &agent,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [hook("user.py")]}]}),
    );
    let (out, events) = run_json(
        &agent,
        crate::common::hooks::bash_then_final("touch ran"),
        &FLAG,
    )
    .await;
    out.assert_ok();
    let e = end(&tool_ends(&events), "call-1").clone();
    assert!(
        e.is_error && e.text.contains("managed policy: no shell"),
        "{out}"
    );
    // The fixed environment of managed hooks, not the user's PATH.
    assert!(
        e.text.contains(&format!(
            "({})",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        )),
        "{}",
        e.text
    );
    assert!(!agent.cwd.join("ran").exists());
    assert!(
        seen(&agent, "user.py").is_empty(),
        "allowManagedHooksOnly drops the user's hooks"
    );
    assert!(
        out.stderr.contains("1 Claude Code hook(s) ignored"),
        "{out}"
    );
    assert!(out.stderr.contains("always fails closed"), "{out}");
}
