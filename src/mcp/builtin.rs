//! The tools pi adds when MCP servers are configured: `tool_search` (finds deferred tools and
//! activates them for the next request) and the resource tools `list_mcp_resources`,
//! `list_mcp_resource_templates` and `read_mcp_resource`, which work across servers so the
//! model needs no per-server resource tools.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::cut;
use super::hub::WeakHub;
use super::search::{rank, Doc};
use super::tool::call_error;
use crate::message::Content;
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

pub const TOOL_SEARCH: &str = "tool_search";

/// How many tools one search activates when the model gives no limit.
const DEFAULT_LIMIT: usize = 5;

pub struct ToolSearch {
    pub hub: WeakHub,
}

fn hub_of(w: &WeakHub) -> Result<super::hub::McpHub, ToolError> {
    w.upgrade()
        .ok_or_else(|| ToolError::Failed("MCP is shutting down".into()))
}

#[async_trait]
impl Tool for ToolSearch {
    fn name(&self) -> &str {
        TOOL_SEARCH
    }
    fn description(&self) -> &str {
        "Search the tools of connected MCP servers that are not declared yet (deferred tools). \
         Describe what you need in a few words; the best matches are activated and become \
         callable in your next step. Returns their names and descriptions."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words describing the capability you need"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "How many tools to activate at most (default 5)"}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }
    fn prompt_snippet(&self) -> Option<String> {
        Some("Find and activate tools of connected MCP servers that are not declared yet".into())
    }

    async fn execute(
        &self,
        _call_id: &str,
        args: Value,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let hub = hub_of(&self.hub)?;
        let query = args.get("query").and_then(Value::as_str).unwrap_or("");
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_LIMIT, |l| l.clamp(1, 20) as usize);
        hub.wait_settled(super::hub::FIRST_PROMPT_WAIT).await;
        let deferred = hub.tools().deferred();
        if deferred.is_empty() {
            return Ok(ToolOutput::text(
                "No deferred MCP tools are available (no connected server defers any).",
            ));
        }
        let docs: Vec<Doc> = deferred
            .iter()
            .map(|t| Doc {
                name: &t.name,
                description: &t.description,
                server: &t.group,
            })
            .collect();
        let hits = rank(&docs, query, limit);
        if hits.is_empty() {
            return Ok(ToolOutput::text(format!(
                "No deferred tool matches {query:?}. {} deferred tools exist on: {}.",
                deferred.len(),
                servers_of(&deferred)
            )));
        }
        let names: Vec<String> = hits.iter().map(|&i| deferred[i].name.clone()).collect();
        hub.tools().activate(&names);
        let mut text = String::from("Activated (callable from your next step):\n");
        for &i in &hits {
            let t = &deferred[i];
            text.push_str(&format!("- {} — {}\n", t.name, first_line(&t.description)));
        }
        Ok(ToolOutput {
            content: vec![Content::text(text.trim_end())],
            details: Some(json!({"query": query, "activated": names})),
            ..Default::default()
        })
    }
}

fn servers_of(tools: &[crate::tools::dynamic::DeferredTool]) -> String {
    let mut s: Vec<&str> = tools.iter().map(|t| t.group.as_str()).collect();
    s.dedup();
    s.join(", ")
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("").trim()
}

/// `list_mcp_resources` and `list_mcp_resource_templates`.
pub struct ListResources {
    pub hub: WeakHub,
    pub templates: bool,
}

#[async_trait]
impl Tool for ListResources {
    fn name(&self) -> &str {
        if self.templates {
            "list_mcp_resource_templates"
        } else {
            "list_mcp_resources"
        }
    }
    fn description(&self) -> &str {
        if self.templates {
            "List the resource templates (parameterised URIs) of connected MCP servers, or of one server."
        } else {
            "List the resources (files, records, documents) that connected MCP servers offer, or one server's. Read one with read_mcp_resource."
        }
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "Only this server (default: every connected server)"}
            },
            "additionalProperties": false
        })
    }

    async fn execute(
        &self,
        _call_id: &str,
        args: Value,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let hub = hub_of(&self.hub)?;
        let server = args.get("server").and_then(Value::as_str);
        let items = hub
            .list_resources(server, self.templates)
            .await
            .map_err(|e| call_error(server.unwrap_or("(all)"), e))?;
        if items.is_empty() {
            return Ok(ToolOutput::text(if self.templates {
                "No resource templates."
            } else {
                "No resources."
            }));
        }
        let key = if self.templates { "uriTemplate" } else { "uri" };
        let mut text = String::new();
        for (server, r) in &items {
            let uri = r.get(key).and_then(Value::as_str).unwrap_or("");
            let name = r.get("name").and_then(Value::as_str).unwrap_or("");
            let mime = r.get("mimeType").and_then(Value::as_str);
            text.push_str(&format!("{server}: {uri}"));
            if !name.is_empty() {
                text.push_str(&format!(" ({name})"));
            }
            if let Some(m) = mime {
                text.push_str(&format!(" [{m}]"));
            }
            if let Some(d) = r.get("description").and_then(Value::as_str) {
                text.push_str(&format!(" — {}", first_line(d)));
            }
            text.push('\n');
        }
        let list: Vec<Value> = items
            .iter()
            .map(|(s, r)| json!({"server": s, "resource": r}))
            .collect();
        Ok(ToolOutput {
            content: vec![Content::text(cut::middle_cut(text.trim_end()))],
            details: Some(json!({ "items": list })),
            ..Default::default()
        })
    }
}

pub struct ReadResource {
    pub hub: WeakHub,
}

#[async_trait]
impl Tool for ReadResource {
    fn name(&self) -> &str {
        "read_mcp_resource"
    }
    fn description(&self) -> &str {
        "Read one resource of an MCP server by its URI (from list_mcp_resources or a resource link in a tool result)."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "The MCP server's name"},
                "uri": {"type": "string", "description": "The resource URI"}
            },
            "required": ["server", "uri"],
            "additionalProperties": false
        })
    }

    async fn execute(
        &self,
        _call_id: &str,
        args: Value,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let hub = hub_of(&self.hub)?;
        let server = args.get("server").and_then(Value::as_str).unwrap_or("");
        let uri = args.get("uri").and_then(Value::as_str).unwrap_or("");
        let r = hub
            .read_resource(server, uri)
            .await
            .map_err(|e| call_error(server, e))?;
        Ok(resource_output(server, uri, &r))
    }
}

/// A `resources/read` result: text as text (cut when long), images as images, other binary
/// contents as a line saying what they are.
pub fn resource_output(server: &str, uri: &str, r: &Value) -> ToolOutput {
    let mut text = String::new();
    let mut images = Vec::new();
    for c in r
        .get("contents")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let mime = c.get("mimeType").and_then(Value::as_str).unwrap_or("");
        if let Some(t) = c.get("text").and_then(Value::as_str) {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(t);
        } else if let Some(b) = c.get("blob").and_then(Value::as_str) {
            if mime.starts_with("image/") {
                images.push(Content::Image {
                    data: b.to_string(),
                    mime_type: mime.to_string(),
                });
            } else {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&format!(
                    "[binary content of {} ({}), {} bytes base64]",
                    c.get("uri").and_then(Value::as_str).unwrap_or(uri),
                    if mime.is_empty() {
                        "unknown type"
                    } else {
                        mime
                    },
                    b.len()
                ));
            }
        }
    }
    let mut content = Vec::new();
    if !text.is_empty() || images.is_empty() {
        content.push(Content::text(cut::middle_cut(&text)));
    }
    content.extend(images);
    ToolOutput {
        content,
        details: Some(json!({"server": server, "uri": uri})),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::text_of;

    #[test]
    fn a_resource_gives_its_text_and_names_binary_parts() {
        let out = resource_output(
            "s",
            "test://1",
            &json!({"contents": [
                {"uri": "test://1", "mimeType": "text/plain", "text": "hello"},
                {"uri": "test://2", "mimeType": "application/octet-stream", "blob": "AAAA"}
            ]}),
        );
        let t = text_of(&out.content);
        assert!(
            t.starts_with("hello\n[binary content of test://2 (application/octet-stream)"),
            "{t}"
        );
    }

    #[test]
    fn an_image_resource_is_an_image() {
        let out = resource_output(
            "s",
            "u",
            &json!({"contents": [{"uri": "u", "mimeType": "image/png", "blob": "iVBOR"}]}),
        );
        assert_eq!(out.content.len(), 1);
        assert!(matches!(&out.content[0], Content::Image { .. }));
    }
}
