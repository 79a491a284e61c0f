//! The model calls of a compaction or a branch summary. The session library says what to ask
//! ([`compaction::plan_compaction`], [`compaction::plan_branch_summary`]) and what to store
//! from the answers; the calls are the controller's, like every other model call.
//!
//! Each call is a plain one-message request without tools, streamed through the provider
//! like any turn but with its deltas discarded: the summary is shown only once complete.
//! Transient failures are retried with the same policy as agent turns, because a dropped
//! stream should not throw away a compaction the user waited for.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::message::{text_of, AssistantMessage, Message, StopReason, Usage};
use crate::provider::retry::RetryPolicy;
use crate::provider::{
    CallContext, Model, NoProviderHooks, Provider, ProviderError, Request, ThinkingLevel,
};
use crate::session::compaction::prompt::SYSTEM_PROMPT;
use crate::session::compaction::{
    self, BranchSummaryResult, CompactionError, CompactionResult, Preparation, SummaryRequest,
};
use crate::session::AgentMessage;

/// The model that writes summaries, and how to call it.
#[derive(Clone, Copy)]
pub struct SummaryModel<'a> {
    pub provider: &'a dyn Provider,
    pub model: &'a Model,
    pub api_key: Option<&'a str>,
    /// The session's thinking level; used only when the model reasons, as in pi.
    pub thinking: ThinkingLevel,
    pub retry: RetryPolicy,
}

impl<'a> SummaryModel<'a> {
    /// Thinking off and the default retry policy.
    pub fn new(provider: &'a dyn Provider, model: &'a Model, api_key: Option<&'a str>) -> Self {
        SummaryModel {
            provider,
            model,
            api_key,
            thinking: ThinkingLevel::Off,
            retry: RetryPolicy::default(),
        }
    }

    fn request(&self, prompt: String, max_tokens: u64) -> Request {
        let mut model = self.model.clone();
        // Providers take the output cap from the model.
        model.max_tokens = max_tokens;
        Request {
            model,
            api_key: self.api_key.map(str::to_string),
            system_prompt: SYSTEM_PROMPT.to_string(),
            messages: vec![Arc::new(Message::user(prompt))],
            tools: Arc::new([]),
            thinking: if self.model.reasoning {
                self.thinking
            } else {
                ThinkingLevel::Off
            },
            // A summary is no turn of the session's conversation: it shares no cache key.
            session_id: None,
        }
    }

    async fn stream_once(
        &self,
        req: &Request,
        cancel: &CancellationToken,
    ) -> Result<AssistantMessage, ProviderError> {
        let (deltas, _discarded) = mpsc::unbounded_channel();
        let ctx = CallContext {
            deltas,
            cancel: cancel.child_token(),
            hooks: Arc::new(NoProviderHooks),
        };
        self.provider.stream(req, &ctx).await
    }

    /// One summary: the text of the reply, and its usage.
    async fn summarize(
        &self,
        request: SummaryRequest,
        cancel: &CancellationToken,
    ) -> Result<(String, Usage), CompactionError> {
        let SummaryRequest {
            stage,
            prompt,
            max_tokens,
        } = request;
        let req = self.request(prompt, max_tokens);
        let mut attempt = 0u32;
        let reply = loop {
            if cancel.is_cancelled() {
                return Err(CompactionError::Cancelled);
            }
            let err = match self.stream_once(&req, cancel).await {
                Ok(reply) => break reply,
                Err(err) => err,
            };
            if cancel.is_cancelled() || matches!(err, ProviderError::Aborted) {
                return Err(CompactionError::Cancelled);
            }
            attempt += 1;
            let Some(delay_ms) = self.retry.delay_for(attempt, &err) else {
                return Err(CompactionError::Provider {
                    stage,
                    message: err.to_string(),
                });
            };
            tokio::select! {
                _ = cancel.cancelled() => return Err(CompactionError::Cancelled),
                _ = tokio::time::sleep(std::time::Duration::from_millis(delay_ms)) => {}
            }
        };
        match reply.stop_reason {
            StopReason::Aborted => return Err(CompactionError::Cancelled),
            StopReason::Error => {
                return Err(CompactionError::Provider {
                    stage,
                    message: reply
                        .error_message
                        .filter(|m| !m.is_empty())
                        .unwrap_or_else(|| "Unknown error".into()),
                })
            }
            _ => {}
        }
        let text = text_of(&reply.content);
        if text.trim().is_empty() {
            return Err(CompactionError::EmptySummary { stage });
        }
        Ok((text, reply.usage))
    }
}

/// pi's `compact`: summarizes `prep` and returns the compaction to store.
pub async fn compact(
    summarizer: &SummaryModel<'_>,
    prep: &Preparation,
    custom_instructions: Option<&str>,
    cancel: CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let plan = compaction::plan_compaction(prep, custom_instructions, summarizer.model.max_tokens);
    let history = match plan.history {
        Some(req) => Some(summarizer.summarize(req, &cancel).await?),
        None => None,
    };
    let turn_prefix = match plan.turn_prefix {
        Some(req) => Some(summarizer.summarize(req, &cancel).await?),
        None => None,
    };
    Ok(compaction::finish_compaction(prep, history, turn_prefix))
}

/// Summarize the abandoned `messages` (oldest first) of a branch being left.
pub async fn summarize_branch(
    summarizer: &SummaryModel<'_>,
    messages: &[AgentMessage],
    reserve_tokens: u64,
    custom_instructions: Option<&str>,
    cancel: CancellationToken,
) -> Result<BranchSummaryResult, CompactionError> {
    let plan = compaction::plan_branch_summary(
        messages,
        reserve_tokens,
        custom_instructions,
        summarizer.model.max_tokens,
    )?;
    let (summary, usage) = summarizer.summarize(plan.request.clone(), &cancel).await?;
    Ok(plan.finish(summary, usage))
}

#[cfg(test)]
mod tests;
