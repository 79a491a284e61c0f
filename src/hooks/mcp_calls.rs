//! `mcp.register`, and the run's MCP servers as hooks see them: [`McpControl`], which the
//! controller implements over its MCP hub, so hooks never name the MCP module (issue 26: hooks
//! reach MCP only through the controller). It is attached at start-up apart from
//! [`SessionControl`](super::session_calls::SessionControl), because hooks may add servers
//! from `session_start` on, before the session controller exists.
//!
//! What is the hooks' own stays here: which place a hook comes from (a server it registers is
//! trusted as that place is) and the environment its values resolve in (the hook's own).

use async_trait::async_trait;
use serde_json::Value;

use super::calls::{err, str_param, HostCalls};
use super::protocol::CallError;
use crate::config::ForeignEnv;

/// One `mcp.register` request, checked as far as the hooks' side can.
pub struct McpRegistration<'a> {
    pub name: &'a str,
    /// The `mcp.json` entry object.
    pub server: &'a Value,
    /// Whether the hook comes from a project (or nobody knows where): its server is then
    /// treated as a project's entry, the least trusted place a running hook can come from.
    pub from_project: bool,
    /// The hook's own environment, in which the entry's values resolve.
    pub env: ForeignEnv,
}

/// The run's MCP servers, as hooks' host calls and Claude Code's tool names need them.
#[async_trait]
pub trait McpControl: Send + Sync {
    /// Checks the entry as `mcp.json`'s are, adds and connects it; answers
    /// `{state, tools, deferred}` once it has connected, or why it could not.
    async fn register(&self, request: McpRegistration<'_>) -> Result<Value, CallError>;

    /// The server's and the tool's own names of pi's MCP tool `pi_tool`, as the tool registry
    /// keeps them (`None` for a tool it does not hold).
    fn registered_origin(&self, pi_tool: &str) -> Option<(String, String)>;

    /// The names of the configured servers.
    fn server_names(&self) -> Vec<String>;
}

/// `mcp.register {name, server}`: one `mcp.json` entry, checked as the file's are, added and
/// connected; answers once it has connected (or why it could not). Its `env` and header
/// values must resolve in the hook's own environment (`process::granted_env`).
pub(super) async fn register(
    calls: &HostCalls,
    hook: &str,
    params: &Value,
) -> Result<Value, CallError> {
    use crate::hooks::spec::HookSource;
    let mcp = calls
        .mcp()
        .ok_or_else(|| err("unavailable", "MCP is off in this run (--no-tools)"))?;
    let name = str_param(params, "name")?;
    let server = params
        .get("server")
        .filter(|v| v.is_object())
        .ok_or_else(|| {
            err(
                "invalid_params",
                "`server` (an mcp.json entry object) is required",
            )
        })?;
    // Unknown is treated as the least trusted place a running hook can come from.
    let from_project = match calls.source(hook) {
        Some(HookSource::Managed | HookSource::User | HookSource::Cli | HookSource::Discovered) => {
            false
        }
        Some(HookSource::Project) | None => true,
    };
    // Its values resolve in the hook's own environment, never pi's, and run nothing.
    let env = match calls.instance(hook) {
        Some(h) => crate::hooks::process::granted_env(h.spec()),
        None => ForeignEnv::hook(hook, []),
    };
    mcp.register(McpRegistration {
        name,
        server,
        from_project,
        env,
    })
    .await
}
