//! placeholder

use async_trait::async_trait;

use super::{CallContext, Provider, ProviderError, Request};
use crate::message::AssistantMessage;

pub struct AnthropicMessages {
    #[allow(dead_code)]
    client: reqwest::Client,
}

impl AnthropicMessages {
    pub fn new(client: reqwest::Client) -> Self {
        AnthropicMessages { client }
    }
}

#[async_trait]
impl Provider for AnthropicMessages {
    fn api(&self) -> &'static str {
        "anthropic-messages"
    }
    async fn stream(
        &self,
        _req: &Request,
        _ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        Err(ProviderError::Other("not implemented".into()))
    }
}
