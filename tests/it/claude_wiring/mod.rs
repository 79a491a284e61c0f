//! Issue 25, items 1, 5 and part of 6: how Claude Code hooks are wired in, through the real
//! binary with hooks written the way Claude Code's documentation and real plugins write them.
//!
//! `plugin` holds a plugin directory used unchanged (`${CLAUDE_PLUGIN_ROOT}`,
//! `${CLAUDE_PLUGIN_DATA}`), `failure` the hooks that cannot start and the strict exit-code
//! setting, `env` what a hook may ask for of pi's environment (`env`, `envPassthrough`), and
//! `names` the names inline commands are shown under.

mod env;
mod failure;
mod names;
mod plugin;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{json, Value};

use crate::common::{tool_ends, TestAgent, ToolEnd};

/// Writes an executable file (parents created).
fn exe(path: &Path, body: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// An unmodified Claude Code `.claude/settings.json` with these `hooks`.
fn settings(agent: &TestAgent, hooks: Value) {
    agent.write_file(
        ".claude/settings.json",
        serde_json::to_string_pretty(&json!({"hooks": hooks})).unwrap(),
    );
}

const FLAG: [&str; 2] = ["--claude-hooks", ".claude/settings.json"];

/// The tool result of the call `id`.
#[track_caller]
fn end(events: &[Value], id: &str) -> ToolEnd {
    tool_ends(events)
        .into_iter()
        .find(|e| e.id == id)
        .unwrap_or_else(|| panic!("no result for {id}"))
}

fn has_node() -> bool {
    std::env::var("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("node").is_file()))
        .unwrap_or(false)
}
