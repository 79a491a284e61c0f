//! The model calls of a compaction (pi's `compact`): one summary of the history, or of the
//! history and, separately, of a split turn's beginning, merged. The file lists are appended
//! to the summary so they survive even if the model leaves them out.
//!
//! Each call is a plain one-message request without tools, streamed through the provider
//! like any turn but with its deltas discarded: the summary is shown only once complete.
//! Transient failures are retried with the same policy as agent turns, because a dropped
//! stream should not throw away a compaction the user waited for.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::files::format_file_lists;
use super::prepare::Preparation;
use super::prompt::{
    history_max_tokens, history_prompt, merge_split_turn, turn_prefix_max_tokens,
    turn_prefix_prompt, NO_PRIOR_HISTORY, SYSTEM_PROMPT,
};
use super::serialize::serialize_agent_messages;
use super::{CompactionError, CompactionResult, SummaryStage};
use crate::message::{text_of, AssistantMessage, Cost, Message, StopReason, Usage};
use crate::provider::retry::RetryPolicy;
use crate::provider::{
    CallContext, Model, NoProviderHooks, Provider, ProviderError, Request, ThinkingLevel,
};

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
    pub(super) async fn summarize(
        &self,
        stage: SummaryStage,
        prompt: String,
        max_tokens: u64,
        cancel: &CancellationToken,
    ) -> Result<(String, Usage), CompactionError> {
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

fn add_usage(a: &Usage, b: &Usage) -> Usage {
    let cost = |x: &Cost, y: &Cost| Cost {
        input: x.input + y.input,
        output: x.output + y.output,
        cache_read: x.cache_read + y.cache_read,
        cache_write: x.cache_write + y.cache_write,
        total: x.total + y.total,
    };
    Usage {
        input: a.input + b.input,
        output: a.output + b.output,
        cache_read: a.cache_read + b.cache_read,
        cache_write: a.cache_write + b.cache_write,
        total_tokens: a.total_tokens + b.total_tokens,
        cost: cost(&a.cost, &b.cost),
    }
}

/// pi's `compact`: summarizes `prep` and returns the compaction to store. The history call
/// goes first, then the turn prefix of a split turn (sequentially, as pi 0.84 does).
pub async fn compact(
    summarizer: &SummaryModel<'_>,
    prep: &Preparation,
    custom_instructions: Option<&str>,
    cancel: CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let reserve = prep.settings.reserve_tokens;
    let model_max = summarizer.model.max_tokens;
    let history = |messages| {
        history_prompt(
            &serialize_agent_messages(messages),
            prep.previous_summary.as_deref(),
            custom_instructions,
        )
    };

    let (mut summary, usage) = if prep.is_split_turn && !prep.turn_prefix_messages.is_empty() {
        let (history_text, history_usage) = if prep.messages_to_summarize.is_empty() {
            (NO_PRIOR_HISTORY.to_string(), None)
        } else {
            let (t, u) = summarizer
                .summarize(
                    SummaryStage::History,
                    history(&prep.messages_to_summarize),
                    history_max_tokens(reserve, model_max),
                    &cancel,
                )
                .await?;
            (t, Some(u))
        };
        let (prefix_text, prefix_usage) = summarizer
            .summarize(
                SummaryStage::TurnPrefix,
                turn_prefix_prompt(&serialize_agent_messages(&prep.turn_prefix_messages)),
                turn_prefix_max_tokens(reserve, model_max),
                &cancel,
            )
            .await?;
        let usage = match history_usage {
            Some(h) => add_usage(&h, &prefix_usage),
            None => prefix_usage,
        };
        (merge_split_turn(&history_text, &prefix_text), usage)
    } else {
        summarizer
            .summarize(
                SummaryStage::History,
                history(&prep.messages_to_summarize),
                history_max_tokens(reserve, model_max),
                &cancel,
            )
            .await?
    };

    let details = prep.file_ops.lists();
    summary.push_str(&format_file_lists(&details));
    Ok(CompactionResult {
        summary,
        first_kept_entry_id: prep.first_kept_entry_id.clone(),
        tokens_before: prep.tokens_before,
        usage: Some(usage),
        details,
    })
}

#[cfg(test)]
mod tests;
