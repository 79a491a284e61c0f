//! One MCP server tool as a pi tool: declared under its `mcp__server__tool` name with the
//! server's description and input schema (validated like a built-in's), gated by `tool_call` and
//! post-processed by `tool_result` like any other, because it *is* any other tool to the agent.
//! Progress notifications become the tool's partial updates; an abort cancels the request.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::client::{ListedTool, McpError};
use super::config::tool_name;
use super::hub::WeakHub;
use super::result;
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

pub struct McpTool {
    hub: WeakHub,
    server: String,
    /// The name the server knows it by.
    remote: String,
    name: String,
    description: String,
    schema: Value,
}

impl McpTool {
    pub fn new(hub: WeakHub, server: &str, listed: ListedTool) -> McpTool {
        let description = if listed.description.trim().is_empty() {
            format!("Tool {} of the MCP server {server}.", listed.name)
        } else {
            listed.description
        };
        McpTool {
            hub,
            server: server.to_string(),
            name: tool_name(server, &listed.name),
            remote: listed.name,
            description,
            schema: listed.input_schema,
        }
    }

    pub fn server(&self) -> &str {
        &self.server
    }
}

/// What the model reads when a call fails for a reason other than the tool's own answer.
pub fn call_error(server: &str, e: McpError) -> ToolError {
    match e {
        McpError::Aborted => ToolError::Aborted,
        other => ToolError::Failed(format!("MCP server {server}: {other}")),
    }
}

fn progress_text(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    let mut s = match total {
        Some(t) => format!("progress {progress}/{t}"),
        None => format!("progress {progress}"),
    };
    if let Some(m) = message.filter(|m| !m.is_empty()) {
        s.push_str(": ");
        s.push_str(m);
    }
    s
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.schema.clone()
    }

    fn mcp_origin(&self) -> Option<(&str, &str)> {
        Some((&self.server, &self.remote))
    }

    async fn execute(
        &self,
        _call_id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let Some(hub) = self.hub.upgrade() else {
            return Err(call_error(&self.server, McpError::Closed));
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let call = hub.call(&self.server, &self.remote, args, &ctx.cancel, Some(tx));
        tokio::pin!(call);
        let answer = loop {
            tokio::select! {
                r = &mut call => break r,
                Some((progress, total, message)) = rx.recv() => {
                    ctx.send_update(ToolOutput {
                        content: vec![crate::message::Content::text(progress_text(progress, total, message.as_deref()))],
                        details: Some(json!({"server": self.server, "tool": self.remote, "progress": progress, "total": total})),
                        ..Default::default()
                    });
                }
            }
        };
        let value = answer.map_err(|e| call_error(&self.server, e))?;
        result::convert(&self.server, &self.remote, &value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_reads_like_a_counter() {
        assert_eq!(
            progress_text(2.0, Some(5.0), Some("step")),
            "progress 2/5: step"
        );
        assert_eq!(progress_text(1.0, None, None), "progress 1");
    }
}
