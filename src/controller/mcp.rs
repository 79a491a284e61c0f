//! The controller's side of MCP: the first prompt's wait for servers with direct tools (at
//! most ten seconds, then it goes on and says which are missing), the system prompt's MCP
//! block kept current at each run's start, and server state changes turned into
//! `mcp_server` events for every front end.

use std::sync::atomic::Ordering;
use std::sync::Weak;

use super::Core;
use crate::agent::events::AgentEvent;
use crate::mcp::hub::{Status, FIRST_PROMPT_WAIT};

impl Core {
    /// Before a run's first model request.
    pub(super) async fn mcp_before_run(&self) {
        let Some(hub) = &self.fixed.mcp else {
            return;
        };
        if !self.mcp_waited.swap(true, Ordering::SeqCst) {
            let cancel = self.handle.cancel_token();
            let missing = tokio::select! {
                m = hub.wait_direct(FIRST_PROMPT_WAIT) => m,
                _ = cancel.cancelled() => Vec::new(),
            };
            for (server, why) in missing {
                self.emit(AgentEvent::McpServer {
                    server,
                    state: "unavailable".into(),
                    tools: 0,
                    error: Some(why),
                });
            }
        }
        self.adopt_joined_tools();
        // Rendering the prompt is not free and most runs change nothing it says about tools.
        let version = hub.tools().version();
        if self.mcp_prompt_version.swap(version, Ordering::SeqCst) != version {
            self.refresh_system_prompt();
        }
    }

    /// Re-render the system prompt when what it says about tools changed.
    pub(super) fn refresh_system_prompt(&self) {
        let env = self.env();
        let prompt = env.resources.system_prompt(
            &self.handle.tools(),
            self.handle.active_tools().as_deref(),
            &self.place().cwd,
        );
        if self.handle.config().system_prompt != prompt {
            self.handle.update_config(|c| c.system_prompt = prompt);
        }
    }
}

/// Forward the hub's state changes as `mcp_server` events, one per server whose state or tool
/// count changed, until the controller is gone.
pub(super) fn watch(core: Weak<Core>) {
    let Some(hub) = core.upgrade().and_then(|c| c.fixed.mcp.clone()) else {
        return;
    };
    let mut rx = hub.subscribe();
    let hub = hub.downgrade();
    tokio::spawn(async move {
        let mut seen: std::collections::BTreeMap<String, (Status, usize)> = Default::default();
        loop {
            {
                let (Some(core), Some(hub)) = (core.upgrade(), hub.upgrade()) else {
                    return;
                };
                core.adopt_joined_tools();
                for v in hub.views() {
                    let now = (v.status.clone(), v.tools);
                    if seen.get(&v.name) == Some(&now) || v.status == Status::Disabled {
                        continue;
                    }
                    seen.insert(v.name.clone(), now);
                    let error = match &v.status {
                        Status::Failed(e) => Some(e.clone()),
                        _ => None,
                    };
                    core.emit(AgentEvent::McpServer {
                        server: v.name,
                        state: v.status.label().to_string(),
                        tools: v.tools,
                        error,
                    });
                }
            }
            if rx.changed().await.is_err() {
                return;
            }
        }
    });
}

/// Hooks reach the run's MCP servers through this (`mcp.register`, Claude Code's MCP tool
/// names); the hub's own checks and errors answer them.
#[async_trait::async_trait]
impl crate::hooks::calls::McpControl for crate::mcp::hub::McpHub {
    async fn register(
        &self,
        request: crate::hooks::calls::McpRegistration<'_>,
    ) -> Result<serde_json::Value, crate::hooks::protocol::CallError> {
        use crate::hooks::calls::call_error;
        use crate::mcp::config::{check_values, entry, Source};
        let crate::hooks::calls::McpRegistration {
            name,
            server,
            from_project,
            env,
        } = request;
        let source = if from_project {
            Source::Project
        } else {
            Source::User
        };
        let mut config = entry(name, server, source)
            .map_err(|e| call_error("invalid_params", format!("server {name:?}: {e}")))?;
        check_values(&config, &env)
            .map_err(|e| call_error("invalid_params", format!("server {name:?}: {e}")))?;
        config.foreign = Some(std::sync::Arc::new(env));
        let view = self
            .add(config)
            .await
            .map_err(|e| call_error("failed", format!("MCP server {name:?}: {e}")))?;
        let tools: Vec<String> = self
            .tools()
            .deferred()
            .into_iter()
            .filter(|t| t.group == name)
            .map(|t| t.name)
            .collect();
        Ok(
            serde_json::json!({"state": view.status.label(), "tools": view.tools, "deferred": tools}),
        )
    }

    fn registered_origin(&self, pi_tool: &str) -> Option<(String, String)> {
        self.tools().mcp_origin(pi_tool)
    }

    fn server_names(&self) -> Vec<String> {
        self.views().into_iter().map(|v| v.name).collect()
    }
}
