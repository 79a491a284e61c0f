//! `model.complete`: a hook asks pi for one model request through pi's own providers and keys
//! (pi 1.6's `ctx.modelRegistry.complete` and pi-ai's `complete`/`stream`, which an extension
//! in TypeScript pi calls in process with the user's credentials). The key stays in pi: the
//! hook names a model and gets back the assistant message and its streamed deltas, never the
//! request pi sent. The call is parsed and checked here; the controller runs it
//! ([`SessionControl::complete`](super::calls::SessionControl)), so its usage is counted in
//! the session's like a compaction's.
//!
//! A request is withdrawn by the hook (`call_cancel`), by its process ending, or by pi's abort
//! of the run it was made in; the call then answers `cancelled`.

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::calls::{err, HostCalls};
use super::instance::{call_scope, ProgressSink};
use super::protocol::CallError;
use crate::message::Message;
use crate::provider::{ThinkingLevel, ToolSpec};

/// What a hook asks `model.complete` for.
#[derive(Debug, Clone)]
pub struct CompleteRequest {
    /// `{provider, id}`; `None`: the session's current model (and its key).
    pub model: Option<(String, String)>,
    pub system_prompt: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    /// Caps the model's own output limit.
    pub max_tokens: Option<u64>,
    /// `None`: off (pi-ai's `complete` without `reasoning`).
    pub thinking: Option<ThinkingLevel>,
}

fn invalid(message: impl Into<String>) -> CallError {
    err("invalid_params", message)
}

/// Messages in pi-ai's shape; a message without a `timestamp` gets 0, as a hook rarely cares.
fn messages(params: &Value) -> Result<Vec<Message>, CallError> {
    let list = params
        .get("messages")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
        .ok_or_else(|| invalid("`messages` (a non-empty list of messages) is required"))?;
    list.iter()
        .enumerate()
        .map(|(i, m)| {
            let mut m = m.clone();
            if let Some(o) = m.as_object_mut() {
                o.entry("timestamp").or_insert(json!(0));
            }
            serde_json::from_value(m).map_err(|e| invalid(format!("`messages[{i}]`: {e}")))
        })
        .collect()
}

/// pi-ai's `Tool`: `{name, description, parameters}` (a JSON Schema).
#[derive(serde::Deserialize)]
struct HookToolSpec {
    name: String,
    #[serde(default)]
    description: String,
    parameters: Value,
}

fn tools(params: &Value) -> Result<Vec<ToolSpec>, CallError> {
    let specs: Vec<HookToolSpec> = match params.get("tools") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
            invalid(format!(
                "`tools` must be a list of {{name, description, parameters}}: {e}"
            ))
        })?,
    };
    Ok(specs
        .into_iter()
        .map(|t| ToolSpec {
            name: t.name,
            description: t.description,
            parameters: t.parameters,
            constrained_sampling: None,
        })
        .collect())
}

fn opt_str<'a>(params: &'a Value, key: &str) -> Result<Option<&'a str>, CallError> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(format!("`{key}` must be a string"))),
    }
}

/// Parses `model.complete`'s params.
pub fn parse(params: &Value) -> Result<CompleteRequest, CallError> {
    let model = match params.get("model") {
        None | Some(Value::Null) => None,
        Some(m) => {
            let field = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
            match (field("provider"), field("id")) {
                (Some(p), Some(id)) => Some((p, id)),
                _ => return Err(invalid("`model` must be {provider, id}")),
            }
        }
    };
    let max_tokens = match params.get("max_tokens") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .filter(|n| *n > 0)
                .ok_or_else(|| invalid("`max_tokens` must be a positive integer"))?,
        ),
    };
    let thinking = match opt_str(params, "thinking")? {
        None => None,
        Some(l) => Some(ThinkingLevel::parse(l).ok_or_else(|| {
            invalid(format!(
                "`thinking` must be one of {}, not {l:?}",
                ThinkingLevel::ALL.join(", ")
            ))
        })?),
    };
    Ok(CompleteRequest {
        model,
        system_prompt: opt_str(params, "system_prompt")?.unwrap_or("").to_string(),
        messages: messages(params)?,
        tools: tools(params)?,
        max_tokens,
        thinking,
    })
}

/// Serves `model.complete` for `hook`: `{message}`, the assistant message in pi-ai's shape.
pub(super) async fn handle(
    calls: &HostCalls,
    hook: &str,
    params: &Value,
) -> Result<Value, CallError> {
    let request = parse(params)?;
    let control = calls.control()?;
    let scope = call_scope().unwrap_or_default();
    // pi's abort of the run in progress withdraws it too; an abort that already happened
    // (the token of a run that ended aborted) is no reason to refuse a command's request.
    let run = calls
        .agent()
        .ok()
        .map(|a| a.cancel_token())
        .filter(|t| !t.is_cancelled())
        .unwrap_or_default();
    let cancel = CancellationToken::new();
    let progress = scope.progress.unwrap_or_else(|| ProgressSink::new(|_| {}));
    let guard = cancel.clone();
    let watch = tokio::spawn(async move {
        tokio::select! {
            _ = scope.withdrawn.cancelled() => {}
            _ = run.cancelled() => {}
        }
        guard.cancel();
    });
    let out = control.complete(hook, request, progress, cancel).await;
    watch.abort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_needs_messages_and_well_formed_options() {
        let ok = parse(&json!({
            "model": {"provider": "mock", "id": "m"},
            "system_prompt": "Be brief.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            "max_tokens": 100,
            "thinking": "low"
        }))
        .unwrap();
        assert_eq!(ok.model, Some(("mock".into(), "m".into())));
        assert_eq!(ok.messages.len(), 1);
        assert_eq!(ok.thinking, Some(ThinkingLevel::Low));
        for bad in [
            json!({}),
            json!({"messages": []}),
            json!({"messages": [{"role": "nobody"}]}),
            json!({"messages": [{"role": "user", "content": "x"}], "model": {"id": "m"}}),
            json!({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}),
            json!({"messages": [{"role": "user", "content": "x"}], "thinking": "hot"}),
        ] {
            assert_eq!(parse(&bad).unwrap_err().code, "invalid_params", "{bad}");
        }
    }
}
