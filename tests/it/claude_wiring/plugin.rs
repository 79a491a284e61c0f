//! A Claude Code plugin directory used unchanged: its `hooks/hooks.json` names its scripts
//! through `${CLAUDE_PLUGIN_ROOT}` (quoted and not, shell and exec form), and its scripts read
//! their files through the variable and keep state in `${CLAUDE_PLUGIN_DATA}`. Without the
//! variable, `node "/scripts/guard.js"` exits 1 — a non-blocking error to Claude Code — and
//! the gate silently never runs.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{end, exe, has_node};
use crate::common::hooks::{run_json, run_pi};
use crate::common::{path_str, TestAgent};

/// A plugin as its author publishes it, installed where Claude Code's cache would put it.
fn install(agent: &TestAgent, name: &str, hooks: Value, files: &[(&str, &str)]) -> PathBuf {
    let root = agent
        .home
        .join(".claude/plugins/cache/acme")
        .join(name)
        .join("1.0.0");
    let manifest = json!({"name": name, "version": "1.0.0",
                          "description": "Blocks destructive shell commands",
                          "author": {"name": "Acme"}});
    let write = |rel: &str, text: &str| exe(&root.join(rel), text);
    write(".claude-plugin/plugin.json", &manifest.to_string());
    write(
        "hooks/hooks.json",
        &serde_json::to_string_pretty(&hooks).unwrap(),
    );
    for (rel, text) in files {
        write(rel, text);
    }
    root
}

/// The safety-gate plugin's PreToolUse hook, as plugins write them in Python.
const GUARD_PY: &str = r#"#!/usr/bin/env python3
"""safety-gate: blocks destructive shell commands (PreToolUse, matcher Bash)."""
import json
import os
import sys

root = os.environ["CLAUDE_PLUGIN_ROOT"]
with open(os.path.join(root, "config", "rules.json")) as f:
    rules = json.load(f)

data = json.load(sys.stdin)
command = data.get("tool_input", {}).get("command", "")
for pattern in rules["deny"]:
    if pattern in command:
        print(f"safety-gate: '{pattern}' is not allowed", file=sys.stderr)
        sys.exit(2)

with open(os.path.join(os.environ["CLAUDE_PLUGIN_DATA"], "allowed.log"), "a") as f:
    f.write(command + "\n")
sys.exit(0)
"#;

/// Its PostToolUse audit, run in exec form (`args`, no shell).
const AUDIT_PY: &str = r#"#!/usr/bin/env python3
import json, os, sys
data = json.load(sys.stdin)
with open(os.path.join(os.environ["CLAUDE_PLUGIN_DATA"], "audit.log"), "a") as f:
    f.write(data["tool_input"].get("command", "") + "\n")
"#;

fn safety_gate(agent: &TestAgent) -> PathBuf {
    install(
        agent,
        "safety-gate",
        json!({"description": "Safety gate for shell commands", "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/guard.py",
                 "timeout": 10}]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "python3",
                 "args": ["${CLAUDE_PLUGIN_ROOT}/hooks/audit.py"]}]}]}}),
        &[
            ("hooks/guard.py", GUARD_PY),
            ("hooks/audit.py", AUDIT_PY),
            (
                "config/rules.json",
                r#"{"deny": ["rm -rf", "git push --force"]}"#,
            ),
        ],
    )
}

fn dangerous_then_safe() -> Value {
    json!([
        {"toolCalls": [
            {"name": "bash", "arguments": {"command": "rm -rf build"}, "id": "c1"},
            {"name": "bash", "arguments": {"command": "echo safe > ok.txt"}, "id": "c2"}]},
        "done"
    ])
}

/// Runs the dangerous and the safe call with `--claude-hooks target`; asserts the gate
/// blocked the first and let the second run.
async fn assert_gated(agent: &TestAgent, target: &Path) -> Vec<Value> {
    agent.write_file("build/artifact", "keep me");
    let _ = std::fs::remove_file(agent.cwd.join("ok.txt"));
    let flag = ["--claude-hooks", &path_str(target)];
    let (out, events) = run_json(agent, dangerous_then_safe(), &flag).await;
    out.assert_ok();
    let c1 = end(&events, "c1");
    assert!(
        c1.is_error && c1.text.contains("safety-gate: 'rm -rf' is not allowed"),
        "the plugin's gate did not block rm -rf: {}\n{out}",
        c1.text
    );
    assert!(agent.cwd.join("build/artifact").exists(), "{out}");
    let c2 = end(&events, "c2");
    assert!(
        !c2.is_error,
        "the safe call was blocked: {}\n{out}",
        c2.text
    );
    assert_eq!(agent.read_string("ok.txt"), "safe\n");
    events
}

#[tokio::test]
async fn a_plugin_used_unchanged_gates_through_its_plugin_root() {
    let agent = TestAgent::new();
    let root = safety_gate(&agent);

    // Its hooks file, as `claude --plugin-dir` would read it.
    assert_gated(&agent, &root.join("hooks/hooks.json")).await;
    // State goes to the plugin's data directory in pi's agent directory, which survives the
    // plugin's updates; the exec-form audit got the root substituted in its argument.
    let data = agent.agent_dir.join("claude-plugins/data/safety-gate");
    let allowed = std::fs::read_to_string(data.join("allowed.log")).unwrap_or_default();
    assert_eq!(allowed, "echo safe > ok.txt\n");
    let audited = std::fs::read_to_string(data.join("audit.log")).unwrap_or_default();
    assert_eq!(audited, "echo safe > ok.txt\n");

    // The plugin directory itself.
    assert_gated(&agent, &root).await;

    // `pi hooks` says where the plugin is.
    let out = run_pi(&agent, &["hooks", "--claude-hooks", &path_str(&root)]).await;
    out.assert_ok();
    assert!(
        out.stdout
            .contains(&format!("plugin:        safety-gate ({})", path_str(&root))),
        "{out}"
    );
}

/// The same gate in Node, with the root quoted (the plugin lives under a directory with a
/// space) and a JSON `deny`, as most published plugins write it.
const GUARD_JS: &str = r#"#!/usr/bin/env node
// no-rm: PreToolUse gate.
const fs = require("fs");
const path = require("path");

let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const data = JSON.parse(input);
  const command = (data.tool_input && data.tool_input.command) || "";
  const rules = JSON.parse(
    fs.readFileSync(path.join(process.env.CLAUDE_PLUGIN_ROOT, "rules.json"), "utf8")
  );
  const hit = rules.deny.find((p) => command.includes(p));
  if (hit) {
    console.log(JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: `safety-gate: '${hit}' is not allowed`,
      },
    }));
  }
  process.exit(0);
});
"#;

#[tokio::test]
async fn a_node_plugin_gate_with_a_quoted_root_does_not_fail_open() {
    if !has_node() {
        eprintln!("note: `node` is not on PATH; skipping the Node plugin test");
        return;
    }
    let agent = TestAgent::new();
    let root = agent.home.join("my plugins/no-rm");
    exe(
        &root.join(".claude-plugin/plugin.json"),
        &json!({"name": "no-rm"}).to_string(),
    );
    exe(
        &root.join("hooks/hooks.json"),
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "node \"${CLAUDE_PLUGIN_ROOT}/scripts/guard.js\""}]}]}})
        .to_string(),
    );
    exe(&root.join("scripts/guard.js"), GUARD_JS);
    exe(&root.join("rules.json"), r#"{"deny": ["rm -rf"]}"#);
    assert_gated(&agent, &root.join("hooks/hooks.json")).await;
}

/// `pi hook replay --claude-hooks PLUGIN` judges the calls of the live run as the live run
/// did: the plugin directory is read the same way, its hooks get the same root.
#[tokio::test]
async fn replay_with_a_plugin_directory_agrees_with_the_live_run() {
    let agent = TestAgent::new();
    let root = safety_gate(&agent);
    assert_gated(&agent, &root).await;
    let sessions = path_str(&agent.agent_dir.join("sessions"));
    let out = run_pi(
        &agent,
        &[
            "hook",
            "replay",
            "--claude-hooks",
            &path_str(&root),
            "--session",
            &sessions,
            "--json",
        ],
    )
    .await;
    out.assert_ok();
    let doc: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{out}"));
    let judged: Vec<(&str, &str, &str)> = doc["calls"]
        .as_array()
        .unwrap_or_else(|| panic!("no calls\n{out}"))
        .iter()
        .map(|c| {
            (
                c["call_id"].as_str().unwrap_or_default(),
                c["recorded"].as_str().unwrap_or_default(),
                c["decision"]["outcome"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    // The recorded result is the Claude Code hook's own reason, which does not start with
    // "Blocked": the session tells it from an error no more than pi 1.6's does.
    assert_eq!(
        judged,
        [("c1", "error", "block"), ("c2", "ok", "allow")],
        "{out}"
    );
    assert!(
        doc["calls"][0]["decision"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("safety-gate: 'rm -rf' is not allowed"),
        "{out}"
    );
}
