//! What Claude Code hooks see of names and of the conversation, through the real binary with
//! hooks written the way Claude Code's documentation and popular hook collections write them:
//! MCP tools in Claude Code's spelling (`mcp__seq-think__…`, hyphen kept) in `tool_name` and in
//! matchers, a matcher naming a server pi does not know warned about at start-up, and
//! `transcript_path` pointing at a Claude-Code-format JSONL view of the session that hooks
//! read as they read Claude Code's (the last assistant message, earlier tool calls).
//!
//! `mcp` holds item 2 of issue 25 (MCP names), `transcript` item 4.

mod mcp;
mod transcript;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{json, Value};

use crate::common::TestAgent;

/// What every Python hook starts with: read the event and keep a copy for the test.
const PY_PRELUDE: &str = r#"#!/usr/bin/env python3
import json, os, sys
data = json.load(sys.stdin)
here = os.environ["CLAUDE_PROJECT_DIR"]
with open(os.path.join(here, "seen-" + os.path.basename(sys.argv[0]) + ".jsonl"), "a") as f:
    f.write(json.dumps(data) + "\n")
"#;

/// Writes an executable Python hook `.claude/hooks/<name>`: the prelude, then `body`.
pub(super) fn py(agent: &TestAgent, name: &str, body: &str) {
    let p = agent.write_file(
        &format!(".claude/hooks/{name}"),
        format!("{PY_PRELUDE}{body}\n"),
    );
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

pub(super) fn hook(name: &str) -> Value {
    json!({"type": "command", "command": format!("\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/{name}")})
}

/// An unmodified Claude Code settings file with these `hooks`.
pub(super) fn settings(agent: &TestAgent, hooks: Value) {
    agent.write_file(
        ".claude/settings.json",
        serde_json::to_string_pretty(&json!({"hooks": hooks})).unwrap(),
    );
}

pub(super) const FLAG: [&str; 2] = ["--claude-hooks", ".claude/settings.json"];

/// The events a Python hook read, in order.
pub(super) fn seen(agent: &TestAgent, name: &str) -> Vec<Value> {
    jsonl(&agent.cwd.join(format!("seen-{name}.jsonl")))
}

pub(super) fn jsonl(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}
