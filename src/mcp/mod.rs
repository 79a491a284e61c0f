//! MCP: pi's client for Model Context Protocol servers (issue 11). `config` reads `mcp.json`
//! and `edit` changes it (`pi mcp add/remove`); `hub` runs a session's servers, each a
//! `client` connection (rmcp) over a stdio child (`spawn`) or streamable HTTP (`http`); `tool`
//! and `builtin` are the tools the model sees; `result` and `cut` turn answers into tool
//! results; `search` ranks deferred tools for `tool_search`; `log` is `mcp.log`.

pub mod builtin;
pub mod client;
pub mod config;
pub mod cut;
pub mod edit;
pub mod http;
pub mod hub;
pub mod launch;
pub mod log;
pub mod result;
pub mod search;
pub mod spawn;
pub mod tool;

use std::path::Path;

use crate::tools::DynamicTools;

/// The servers of a run: the user's `mcp.json`, then a trusted project's `.pi/mcp.json`,
/// whose values may read only `project_env` (what the user grants the project); problems as
/// messages for the user.
pub fn load_for_run(
    agent_dir: &Path,
    cwd: &Path,
    trusted: bool,
    project_env: &std::sync::Arc<crate::config::ForeignEnv>,
) -> (
    std::collections::BTreeMap<String, config::ServerConfig>,
    Vec<String>,
) {
    let project = cwd.join(".pi").join("mcp.json");
    config::load(
        &agent_dir.join("mcp.json"),
        (trusted && project.is_file()).then_some((project.as_path(), project_env)),
    )
}

/// One line per project server that reads a variable the user granted the project
/// (`projectEnv`): what the user is shown so a grant in use is never silent.
pub fn grants_used<'a>(servers: impl IntoIterator<Item = &'a config::ServerConfig>) -> Vec<String> {
    servers
        .into_iter()
        .filter(|s| s.source == config::Source::Project)
        .filter_map(|s| {
            let mut names = config::referenced_vars(s);
            names.retain(|n| !crate::config::scope::PROJECT_BASE_VARS.contains(&n.as_str()));
            names.dedup();
            (!names.is_empty()).then(|| {
                format!(
                    "the project's MCP server \"{}\" reads {} (granted by projectEnv in your settings)",
                    s.name,
                    names.join(", ")
                )
            })
        })
        .collect()
}

/// The system prompt's MCP block: the connected servers, how many tools each has and how many
/// of those are deferred, and how to reach the deferred ones. `None` with no server connected.
pub fn prompt_section(tools: &DynamicTools) -> Option<String> {
    let groups: Vec<String> = tools
        .groups()
        .into_iter()
        .filter(|g| g != hub::BUILTIN_GROUP)
        .collect();
    if groups.is_empty() {
        return None;
    }
    let mut any_deferred = false;
    let list: Vec<String> = groups
        .iter()
        .map(|g| {
            let (direct, deferred, _hidden) = tools.counts(g);
            any_deferred |= deferred > 0;
            match deferred {
                0 => format!("{g} ({direct} tools)"),
                d => format!("{g} ({direct} tools, {d} more deferred)"),
            }
        })
        .collect();
    let mut s = format!(
        "Connected MCP servers (their tools are named mcp__<server>__<tool>): {}.",
        list.join(", ")
    );
    if any_deferred {
        s.push_str(
            "\nDeferred tools are not declared yet: call tool_search with a few words describing \
             what you need, and its matches become callable in your next step.",
        );
    }
    Some(s)
}
