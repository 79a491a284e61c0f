//! placeholder
use async_trait::async_trait;

use super::{CallContext, Provider, ProviderError, Request};
use crate::message::AssistantMessage;

#[derive(Debug, Clone, Default)]
pub struct FauxScript;

pub struct Faux;
impl Faux {
    pub fn new(_s: FauxScript) -> Self {
        Faux
    }
}

#[async_trait]
impl Provider for Faux {
    fn api(&self) -> &'static str {
        "faux"
    }
    async fn stream(
        &self,
        _req: &Request,
        _ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        Err(ProviderError::Other("not implemented".into()))
    }
}
