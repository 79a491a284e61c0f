//! placeholder

use async_trait::async_trait;

use super::{CallContext, Provider, ProviderError, Request};
use crate::message::AssistantMessage;

pub struct OpenAiCompletions {
    #[allow(dead_code)]
    client: reqwest::Client,
}

impl OpenAiCompletions {
    pub fn new(client: reqwest::Client) -> Self {
        OpenAiCompletions { client }
    }
}

#[async_trait]
impl Provider for OpenAiCompletions {
    fn api(&self) -> &'static str {
        "openai-completions"
    }
    async fn stream(
        &self,
        _req: &Request,
        _ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        Err(ProviderError::Other("not implemented".into()))
    }
}
