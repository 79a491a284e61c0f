//! The controller's side of `model.complete` (see `hooks::complete_calls`): the model a hook
//! names is resolved with the user's credentials exactly as `/model` would resolve it (a model
//! pi does not know is `not_found`, one without a key `failed`), the request is streamed
//! through pi's provider with its deltas forwarded, and its usage is written as a `usage`
//! entry (`kind: "model_complete"`, `note`: the hook), so the session's stats and cost count
//! what extensions spend. The key goes to the provider only: neither the answer nor the
//! progress carries anything of the request.

use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{ControllerError, Core};
use crate::agent::events::AgentEvent;
use crate::delta::StreamDelta;
use crate::hooks::complete_calls::CompleteRequest;
use crate::hooks::instance::ProgressSink;
use crate::hooks::protocol::CallError;
use crate::message::{AssistantMessage, StopReason};
use crate::provider::{
    CallContext, Model, NoProviderHooks, Provider, ProviderError, Request, ThinkingLevel,
};

/// The model a hook's request goes to, its key and the provider that speaks its API.
type Resolved = (Model, Option<String>, Arc<dyn Provider>);

/// The `usage` entry's `kind` for a hook's model request.
const USAGE_KIND: &str = "model_complete";

fn call_err(code: &str, message: impl Into<String>) -> CallError {
    crate::hooks::calls::call_error(code, message)
}

impl Core {
    /// The model `(provider, id)` with its key and wire API, or the session's current one.
    fn complete_model(&self, named: Option<&(String, String)>) -> Result<Resolved, CallError> {
        let config = self.handle.config();
        let Some((provider, id)) = named else {
            return Ok((config.model, config.api_key, self.handle.provider()));
        };
        if config.model.provider == *provider && config.model.id == *id {
            return Ok((config.model, config.api_key, self.handle.provider()));
        }
        let registry = self.registry();
        let (p, entry) = registry.find(provider, id).ok_or_else(|| {
            call_err(
                "not_found",
                ControllerError::ModelNotFound {
                    provider: provider.clone(),
                    id: id.clone(),
                }
                .to_string(),
            )
        })?;
        let mut model = registry
            .build_model(p, entry)
            .map_err(|e| call_err("failed", e.to_string()))?;
        let api_key = registry
            .require_api_key(&mut model, None)
            .map_err(|e| call_err("failed", e.to_string()))?;
        let implementation = self.fixed.providers.get(&model.api).ok_or_else(|| {
            call_err(
                "failed",
                ControllerError::UnsupportedApi {
                    model: model.id.clone(),
                    api: model.api.clone(),
                }
                .to_string(),
            )
        })?;
        Ok((model, api_key, implementation))
    }

    /// Runs a hook's `model.complete` (see the module comment).
    pub(super) async fn hook_complete(
        &self,
        hook: &str,
        req: CompleteRequest,
        progress: ProgressSink,
        cancel: CancellationToken,
    ) -> Result<Value, CallError> {
        let (mut model, api_key, provider) = self.complete_model(req.model.as_ref())?;
        if let Some(cap) = req.max_tokens {
            model.max_tokens = if model.max_tokens > 0 {
                cap.min(model.max_tokens)
            } else {
                cap
            };
        }
        let thinking = match req.thinking {
            Some(level) if model.reasoning => level,
            _ => ThinkingLevel::Off,
        };
        let request = Request {
            model,
            api_key,
            system_prompt: req.system_prompt,
            messages: req.messages.into_iter().map(Arc::new).collect(),
            tools: req.tools.into(),
            thinking,
            session_id: None,
        };
        let (deltas, mut rx) = mpsc::unbounded_channel();
        let forward = tokio::spawn(async move {
            while let Some(d) = rx.recv().await {
                if matches!(
                    d,
                    StreamDelta::TextDelta { .. } | StreamDelta::ThinkingDelta { .. }
                ) {
                    if let Ok(v) = serde_json::to_value(&d) {
                        progress.send(v);
                    }
                }
            }
        });
        let ctx = CallContext {
            deltas,
            cancel: cancel.clone(),
            // The hooks' own provider events are not asked about a hook's request: a
            // `before_provider_request` hook that calls `model.complete` would recurse.
            hooks: Arc::new(NoProviderHooks),
        };
        let reply = provider.stream(&request, &ctx).await;
        drop(ctx);
        let _ = forward.await;
        let message = match reply {
            Err(ProviderError::Aborted) => {
                return Err(call_err("cancelled", "the model request was cancelled"))
            }
            Err(e) => return Err(call_err("failed", e.to_string())),
            Ok(m) if matches!(m.stop_reason, StopReason::Aborted) || cancel.is_cancelled() => {
                self.record_complete_usage(hook, &m);
                return Err(call_err("cancelled", "the model request was cancelled"));
            }
            Ok(m) => m,
        };
        self.record_complete_usage(hook, &message);
        let message = serde_json::to_value(&message)
            .map_err(|e| call_err("failed", format!("the reply did not serialise: {e}")))?;
        Ok(json!({ "message": message }))
    }

    /// What the request cost, as a `usage` entry, announced as `entry_appended`.
    fn record_complete_usage(&self, hook: &str, msg: &AssistantMessage) {
        let usage = serde_json::to_value(&msg.usage).unwrap_or_default();
        let appended = self
            .session
            .record(|s| s.append_usage(USAGE_KIND, &msg.provider, &msg.model, usage, Some(hook)));
        match appended {
            Ok(id) => {
                let entry = self
                    .session
                    .lock()
                    .entry(&id)
                    .and_then(|e| serde_json::to_value(e).ok());
                if let Some(entry) = entry {
                    self.emit(AgentEvent::EntryAppended { entry });
                }
            }
            Err(e) => tracing::warn!(error = %e, hook, "could not record a hook's model usage"),
        }
    }
}
