//! The resource side of the hub: listing resources and templates across connected servers
//! (or one), and reading one, for the `*_mcp_resource*` tools.

use std::sync::Arc;

use serde_json::Value;

use super::{lock, McpHub, Server, Status, FIRST_PROMPT_WAIT};
use crate::mcp::client::McpError;

impl McpHub {
    /// Resources of one server, or of every connected server when `server` is `None`, as
    /// (server, resource) pairs.
    pub async fn list_resources(
        &self,
        server: Option<&str>,
        templates: bool,
    ) -> Result<Vec<(String, Value)>, McpError> {
        if server.is_none() {
            self.wait_settled(FIRST_PROMPT_WAIT).await;
        }
        let mut out = Vec::new();
        for (name, s) in self.targets(server)? {
            let conn = match self.connection(&s).await {
                Ok(c) => c,
                Err(e) if server.is_none() => {
                    tracing::debug!(server = %name, error = %e, "skipped for resources");
                    continue;
                }
                Err(e) => return Err(e),
            };
            let items = if templates {
                conn.list_resource_templates(s.config.timeout).await
            } else {
                conn.list_resources(s.config.timeout).await
            };
            match items {
                Ok(items) => out.extend(items.into_iter().map(|r| (name.clone(), r))),
                Err(e) if server.is_none() => {
                    tracing::debug!(server = %name, error = %e, "resources unavailable");
                }
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, McpError> {
        let s = self.server(server)?;
        let conn = self.connection(&s).await?;
        conn.read_resource(uri, s.config.timeout).await
    }

    fn targets(&self, server: Option<&str>) -> Result<Vec<(String, Arc<Server>)>, McpError> {
        Ok(match server {
            Some(n) => vec![(n.to_string(), self.server(n)?)],
            None => self
                .all()
                .into_iter()
                .filter(|s| *lock(&s.status) == Status::Connected)
                .map(|s| (s.config.name.clone(), s))
                .collect(),
        })
    }
}
