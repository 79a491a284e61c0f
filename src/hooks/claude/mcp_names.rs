//! Where Claude Code hooks learn the real names behind pi's MCP tools, and the start-up check
//! of matchers that name MCP servers.
//!
//! pi's name of an MCP tool (`mcp__seq_think__run`) lost every character outside
//! `[A-Za-z0-9_]`, so Claude Code's spelling (`mcp__seq-think__run`) cannot be derived from it:
//! the run's tool registry keeps each MCP tool's server and tool names, and is asked first.
//! A tool the registry no longer holds (its server dropped while a call was under way) is
//! matched against the configured servers' names instead, its tool part kept as pi wrote it.
//!
//! A matcher naming a server that is not configured (`mcp__memory__.*` with no `memory`
//! server) matches nothing, so the gate it was meant to be never runs: [`unknown_servers`]
//! says so at start-up, naming the hook, the matcher and the servers there are.

use super::config::ClaudeSpec;
use super::names::{claude_mcp_part, McpOrigins};
use crate::hooks::calls::HostCalls;
use crate::tools::mcp_tool_name as tool_name;

impl McpOrigins for HostCalls {
    fn origin(&self, pi_tool: &str) -> Option<(String, String)> {
        let mcp = self.mcp()?;
        if let Some(o) = mcp.registered_origin(pi_tool) {
            return Some(o);
        }
        let servers = mcp.server_names();
        origin_by_servers(pi_tool, &servers)
    }
}

/// The origin of pi's `pi_tool` among `servers` by name alone: the server whose pi spelling
/// starts the name (the longest, should two), and the rest of the name as the tool's.
pub fn origin_by_servers(pi_tool: &str, servers: &[String]) -> Option<(String, String)> {
    servers
        .iter()
        .filter_map(|s| {
            let prefix = tool_name(s, "");
            let tool = pi_tool.strip_prefix(&prefix)?;
            (!tool.is_empty()).then_some((prefix.len(), s, tool))
        })
        .max_by_key(|(len, _, _)| *len)
        .map(|(_, s, tool)| (s.clone(), tool.to_string()))
}

/// Whether `named` (a matcher's server part) is one of `servers`, in its own, Claude Code's
/// or pi's spelling.
fn is_known(named: &str, servers: &[String]) -> bool {
    servers.iter().any(|s| {
        named == s || named == claude_mcp_part(s) || tool_name(s, "") == format!("mcp__{named}__")
    })
}

/// One line per hook whose matcher names an MCP server none of `servers` (the configured
/// ones) is.
pub fn unknown_servers(specs: &[ClaudeSpec], servers: &[String]) -> Vec<String> {
    let known = if servers.is_empty() {
        "no MCP server is configured".to_string()
    } else {
        format!("configured MCP servers: {}", servers.join(", "))
    };
    let mut lines = Vec::new();
    for spec in specs {
        let Some(text) = spec.matcher_text.as_deref() else {
            continue;
        };
        for named in spec.matcher.mcp_servers() {
            if is_known(&named, servers) {
                continue;
            }
            lines.push(format!(
                "Claude Code hook {} ({}): its matcher {text:?} names MCP server {named:?}, which \
                 is not configured, so it selects no tool ({known})",
                spec.name, spec.origin
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::claude::config::{assign_names, from_value};
    use crate::hooks::spec::HookSource;
    use serde_json::json;

    fn servers(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_tool_the_registry_lost_is_found_by_its_servers_name() {
        let s = servers(&["seq-think", "seq", "github"]);
        assert_eq!(
            origin_by_servers("mcp__seq_think__run_it", &s),
            Some(("seq-think".into(), "run_it".into()))
        );
        assert_eq!(
            origin_by_servers("mcp__seq__x", &s),
            Some(("seq".into(), "x".into()))
        );
        assert_eq!(origin_by_servers("mcp__gitlab__x", &s), None);
        assert_eq!(origin_by_servers("bash", &s), None);
    }

    #[test]
    fn only_matchers_naming_servers_that_do_not_exist_are_reported() {
        let (mut specs, _) = from_value(
            &json!({"PreToolUse": [
                {"matcher": "mcp__memory__.*", "hooks": [{"type": "command", "command": "m.py"}]},
                {"matcher": "mcp__seq-think__.*|Bash", "hooks": [{"type": "command", "command": "a.py"}]},
                {"matcher": "^mcp__seq_think__", "hooks": [{"type": "command", "command": "b.py"}]},
                {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "c.py"}]},
                {"hooks": [{"type": "command", "command": "d.py"}]}]}),
            "settings.json",
            HookSource::Cli,
        )
        .unwrap();
        assign_names(&mut specs, &[]);
        let lines = unknown_servers(&specs, &servers(&["seq-think"]));
        assert_eq!(lines.len(), 1, "{lines:?}");
        let l = &lines[0];
        assert!(l.contains("claude:PreToolUse:m.py"), "{l}");
        assert!(l.contains("settings.json: PreToolUse[0].hooks[0]"), "{l}");
        assert!(l.contains("\"mcp__memory__.*\""), "{l}");
        assert!(l.contains("\"memory\""), "{l}");
        assert!(l.contains("configured MCP servers: seq-think"), "{l}");
        let none = unknown_servers(&specs, &[]);
        assert_eq!(none.len(), 3, "{none:?}");
        assert!(none[0].contains("no MCP server is configured"));
    }
}
