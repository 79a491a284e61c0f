//! The Claude Code events pi runs beyond the tool, prompt and session ones (issue 25, items 3
//! and 6), through the real binary with hooks written the way Claude Code's documentation
//! writes them — bash scripts that exit 2 with a reason on stderr, Python scripts that print
//! hook JSON — in an unmodified `.claude/settings.json` passed with `--claude-hooks`:
//! PostToolUseFailure, PermissionRequest, SubagentStart/SubagentStop, InstructionsLoaded,
//! ConfigChange, Setup, `async` hooks, the idle notification and PreCompact on a session with
//! nothing to compact; and `pi hook replay --claude-hooks` agreeing with the live run.
//!
//! `tools`: the events about a tool call, and the replay; `moments`: those pi has no event
//! for; `background`: `async` hooks and the idle notification.

mod background;
mod lifecycle;
mod moments;
mod tools;

use std::os::unix::fs::PermissionsExt;

use serde_json::{json, Value};

use crate::common::{TestAgent, ToolEnd};

/// What Python hooks start with: read the event, keep a copy for the test to look at (with
/// the time it ran).
pub(super) const PY_PRELUDE: &str = r#"#!/usr/bin/env python3
import json, os, sys, time
data = json.load(sys.stdin)
data["_ran_at"] = time.time()
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "seen-" + os.path.basename(sys.argv[0]) + ".jsonl"), "a") as f:
    f.write(json.dumps(data) + "\n")
"#;

/// Writes an executable hook script to `.claude/hooks/<name>`.
pub(super) fn script(agent: &TestAgent, name: &str, body: &str) {
    let p = agent.write_file(&format!(".claude/hooks/{name}"), body);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A Python hook: the prelude, then `body` (which has `data`).
pub(super) fn py(agent: &TestAgent, name: &str, body: &str) {
    script(agent, name, &format!("{PY_PRELUDE}{body}\n"));
}

/// How Claude Code's docs point at a project hook.
pub(super) fn cmd(name: &str) -> String {
    format!("\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/{name}")
}

pub(super) fn hook(name: &str) -> Value {
    json!({"type": "command", "command": cmd(name)})
}

/// An unmodified Claude Code settings file (other keys included) with these `hooks`.
pub(super) fn settings(agent: &TestAgent, hooks: Value) {
    agent.write_file(
        ".claude/settings.json",
        serde_json::to_string_pretty(&json!({
            "permissions": {"allow": ["Bash(npm run lint)"]},
            "hooks": hooks
        }))
        .unwrap(),
    );
}

pub(super) const FLAG: [&str; 2] = ["--claude-hooks", ".claude/settings.json"];

/// The events a Python hook read, in order.
pub(super) fn seen(agent: &TestAgent, name: &str) -> Vec<Value> {
    std::fs::read_to_string(agent.cwd.join(format!("seen-{name}.jsonl")))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub(super) fn end<'a>(ends: &'a [ToolEnd], id: &str) -> &'a ToolEnd {
    ends.iter()
        .find(|e| e.id == id)
        .unwrap_or_else(|| panic!("no {id}"))
}
