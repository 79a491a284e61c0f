//! Waiting for servers: the first prompt waits (bounded) for the servers with direct tools,
//! and `tool_search` and the resource listing for every server still connecting.

use std::time::Duration;

use super::{lock, McpHub, Status};
use crate::mcp::config::ServerConfig;
use crate::tools::Exposure;

impl McpHub {
    /// Servers whose tools include direct ones, by configuration.
    fn has_direct(config: &ServerConfig) -> bool {
        config.exposure == Exposure::Direct
            || config
                .tool_exposure
                .iter()
                .any(|(_, e)| *e == Exposure::Direct)
    }

    /// Waits (at most `within`) until no enabled server is still connecting (a search must
    /// not miss the tools of a server that is about to arrive).
    pub async fn wait_settled(&self, within: Duration) {
        let mut rx = self.subscribe();
        let _ = tokio::time::timeout(within, async {
            while self
                .all()
                .iter()
                .any(|s| *lock(&s.status) == Status::Connecting)
            {
                if rx.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
    }

    /// Waits (at most `within`) until no server with direct tools is still connecting; returns
    /// the servers with direct tools that are not connected, with why.
    pub async fn wait_direct(&self, within: Duration) -> Vec<(String, String)> {
        let mut rx = self.subscribe();
        let pending = |hub: &McpHub| {
            hub.all().iter().any(|s| {
                s.config.enabled
                    && Self::has_direct(&s.config)
                    && *lock(&s.status) == Status::Connecting
            })
        };
        let _ = tokio::time::timeout(within, async {
            while pending(self) {
                if rx.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
        self.all()
            .iter()
            .filter(|s| s.config.enabled && Self::has_direct(&s.config))
            .filter_map(|s| {
                let name = s.config.name.clone();
                match &*lock(&s.status) {
                    Status::Connected => None,
                    Status::Connecting => Some((name, "still connecting".to_string())),
                    Status::Failed(e) => Some((name, e.clone())),
                    other => Some((name, other.label().to_string())),
                }
            })
            .collect()
    }
}
