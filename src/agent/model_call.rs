//! One model call inside a turn: builds the request (after the `context` and
//! `context_with_system` chains), streams it,
//! forwards deltas as `message_update` events, and retries transient failures with backoff,
//! surfacing `auto_retry_start` / `auto_retry_end`. Failures become an assistant message with
//! `stopReason` `error` or `aborted`, never a lost turn.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, AssistantDelta};
use super::Agent;
use crate::message::{AssistantMessage, Message, StopReason, Usage};
use crate::provider::{CallContext, ProviderError, Request};

impl Agent {
    /// Returns the final message and whether its `message_start` was already emitted.
    pub(super) async fn call_model(
        &mut self,
        cancel: &CancellationToken,
    ) -> (AssistantMessage, bool) {
        let transcript = self.messages();
        let context = self.hooks.context(transcript.clone()).await;
        // The hooks that see the prompt see one leading prompt, which the transcript's system
        // messages replay to, and the conversation without them.
        let conversation: Vec<Arc<Message>> = context
            .iter()
            .filter(|m| !matches!(m.as_ref(), Message::System(_)))
            .cloned()
            .collect();
        let (config, provider, registry) = self.handle.snapshot();
        let tools = registry.offered(self.handle.active_tools().as_deref());
        self.follow_prompt(&config.system_prompt);
        let system_prompt = self
            .run_system_prompt
            .clone()
            .unwrap_or_else(|| config.system_prompt.text().to_string());
        let (system_prompt, edited) = self
            .hooks
            .context_with_system(system_prompt, conversation.clone())
            .await;
        let messages = with_system_messages(context, &conversation, &system_prompt, edited);
        let req = Request {
            model: config.model,
            api_key: config.api_key,
            system_prompt,
            messages,
            tools,
            thinking: config.thinking,
            session_id: self.session_id.as_ref().and_then(|id| id()),
        };
        // Validators compile while the model answers (only the first call starts it).
        registry.warm();
        let retry_cancel = self.handle.fresh_retry_token();
        let began = std::time::Instant::now();
        let mut attempt = 0u32;
        loop {
            if let Some(observe) = &self.requests {
                observe(&super::SentRequest {
                    request: req.clone(),
                    provider: provider.clone(),
                    hooks: self.hooks.provider_hooks(),
                    transcript: transcript.clone(),
                });
            }
            let mut started = false;
            let result = self
                .stream_once(provider.clone(), &req, cancel, &mut started)
                .await;
            match result {
                Ok(msg) => {
                    if attempt > 0 {
                        self.emit(AgentEvent::AutoRetryEnd {
                            success: true,
                            attempt,
                            final_error: None,
                        });
                    }
                    return (msg, started);
                }
                Err(err) => {
                    attempt += 1;
                    let failed = self
                        .retry_or_fail(&err, attempt, &req.model, cancel, &retry_cancel)
                        .await;
                    if let Some(mut message) = failed {
                        // A response that failed (not one the user aborted) ends like any
                        // other, with its duration and thinking level, as in pi 1.6.
                        if message.stop_reason != StopReason::Aborted {
                            stamp(&mut message, &req, began);
                        }
                        return (message, false);
                    }
                }
            }
        }
    }

    /// After failed attempt number `attempt`: `None` once the policy's delay has passed and
    /// the call is to be tried again, else the message the call ends with (the error, or the
    /// abort that came during the wait).
    async fn retry_or_fail(
        &mut self,
        err: &ProviderError,
        attempt: u32,
        model: &crate::provider::Model,
        cancel: &CancellationToken,
        retry_cancel: &CancellationToken,
    ) -> Option<AssistantMessage> {
        // The policy as it is now: auto-retry may have been switched off meanwhile.
        let retry = self.handle.read_config(|c| c.retry);
        let delay = if cancel.is_cancelled() || retry_cancel.is_cancelled() {
            None
        } else {
            retry.delay_for(attempt, err)
        };
        let Some(delay_ms) = delay else {
            if attempt > 1 {
                self.emit(AgentEvent::AutoRetryEnd {
                    success: false,
                    attempt: attempt - 1,
                    final_error: Some(err.to_string()),
                });
            }
            return Some(self.failed_message(model, err, cancel));
        };
        self.emit(AgentEvent::AutoRetryStart {
            attempt,
            max_attempts: retry.max_retries,
            delay_ms,
            error_message: err.to_string(),
        });
        tokio::select! {
            _ = cancel.cancelled() => {
                Some(self.failed_message(model, &ProviderError::Aborted, cancel))
            }
            // `abort_retry`: this attempt's error is the outcome.
            _ = retry_cancel.cancelled() => {
                self.emit(AgentEvent::AutoRetryEnd {
                    success: false,
                    attempt,
                    final_error: Some(err.to_string()),
                });
                Some(self.failed_message(model, err, cancel))
            }
            _ = tokio::time::sleep(std::time::Duration::from_millis(delay_ms)) => None,
        }
    }

    fn failed_message(
        &self,
        m: &crate::provider::Model,
        err: &ProviderError,
        cancel: &CancellationToken,
    ) -> AssistantMessage {
        let mut msg = AssistantMessage::empty(&m.api, &m.provider, &m.id);
        if cancel.is_cancelled() || matches!(err, ProviderError::Aborted) {
            msg.stop_reason = StopReason::Aborted;
            msg.error_message = Some("Request was aborted".into());
        } else {
            msg.stop_reason = StopReason::Error;
            msg.error_message = Some(err.to_string());
        }
        msg
    }

    /// One attempt. Deltas are forwarded while the provider runs; a partial message streamed by
    /// a failed attempt is closed with an error `message_end` so clients can discard it.
    async fn stream_once(
        &mut self,
        provider: Arc<dyn crate::provider::Provider>,
        req: &Request,
        cancel: &CancellationToken,
        started: &mut bool,
    ) -> Result<AssistantMessage, ProviderError> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let ctx = CallContext {
            deltas: tx,
            cancel: cancel.child_token(),
            hooks: self.hooks.provider_hooks(),
        };
        let began = std::time::Instant::now();
        let fut = provider.stream(req, &ctx);
        tokio::pin!(fut);
        let mut usage = Usage::default();
        let result = loop {
            tokio::select! {
                r = &mut fut => break r,
                Some(d) = rx.recv() => self.forward_delta(&req.model, d, started, &mut usage),
            }
        };

        while let Ok(d) = rx.try_recv() {
            self.forward_delta(&req.model, d, started, &mut usage);
        }
        if let Err(err) = &result {
            if *started {
                *started = false;
                let mut partial = self.failed_message(&req.model, err, cancel);
                partial.stop_reason = StopReason::Error;
                stamp(&mut partial, req, began);
                self.emit_message_end(&Arc::new(Message::Assistant(partial)));
            }
        }
        result.map(|mut msg| {
            stamp(&mut msg, req, began);
            msg
        })
    }

    fn forward_delta(
        &self,
        m: &crate::provider::Model,
        delta: AssistantDelta,
        started: &mut bool,
        usage: &mut Usage,
    ) {
        match delta {
            AssistantDelta::Start => {
                if !*started {
                    *started = true;
                    let mut message = AssistantMessage::empty(&m.api, &m.provider, &m.id);
                    message.stop_reason = StopReason::Pending;
                    self.emit(AgentEvent::MessageStart {
                        message: Arc::new(Message::Assistant(message)),
                    });
                }
            }
            AssistantDelta::Usage(u) => *usage = u,
            delta => self.emit(AgentEvent::MessageUpdate {
                usage: usage.clone(),
                assistant_message_event: delta,
            }),
        }
    }
}

/// What pi 1.6 adds to a response once it has ended: how long it took (unless the provider
/// said) and the thinking level the request asked for.
fn stamp(msg: &mut AssistantMessage, req: &Request, began: std::time::Instant) {
    if msg.duration_ms.is_none() {
        msg.duration_ms = Some(began.elapsed().as_millis().min(u128::from(u64::MAX)) as u64);
    }
    msg.thinking_level = Some(req.thinking.as_str().to_string());
}

/// The request's messages: the context with its system messages where they are, for the APIs
/// that take them in place (see [`crate::provider::transcript`]), while the prompt sent is the
/// one they replay to and no hook changed the conversation; else the conversation as the
/// hooks left it, whose one leading prompt is `system_prompt` (as pi 1.6 projects a prompt a
/// hook forced).
fn with_system_messages(
    context: Vec<Arc<Message>>,
    conversation: &[Arc<Message>],
    system_prompt: &str,
    edited: Vec<Arc<Message>>,
) -> Vec<Arc<Message>> {
    let unchanged = edited.len() == conversation.len()
        && edited
            .iter()
            .zip(conversation)
            .all(|(a, b)| Arc::ptr_eq(a, b));
    let replayed = crate::message::system::current(context.iter().map(Arc::as_ref));
    match replayed {
        Some(s) if unchanged && s.text() == system_prompt => context,
        _ => edited,
    }
}
