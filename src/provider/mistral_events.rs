//! Mistral's streamed completion chunks as pi's deltas, as pi 1.6's `consumeChatStream` reads
//! them.
//!
//! A chunk's first choice brings `delta.content`, a string or a list of chunks (`text`, and
//! `thinking` whose own list of texts is joined): each continues the open block of its kind or
//! ends it and starts one. Empty pieces open nothing (GLM sends them around thinking, and a
//! split thinking block is rejected on replay). `delta.tool_calls` end the open text or
//! thinking block; each call, keyed by its `index`, is started once and fed its arguments
//! (a string, or an object 1.6 writes out as JSON); a call without an id (or with `"null"`)
//! is named from its index. Calls stay open until the stream ends, then end in order after
//! the last text block. `usage` (cached prompt tokens under any of the names 1.6 reads) and
//! `finish_reason` may come in any chunk; `[DONE]` ends the stream, which must have had a
//! finish reason by then.

use serde_json::Value;
use tokio::sync::mpsc;

use super::mistral_ids;
use super::sse::SseEvent;
use super::stream::{BlockKind, Flow, MessageBuilder, StreamEnd, StreamParser};
use super::{Model, ProviderError};
use crate::delta::AssistantDelta;
use crate::message::{AssistantMessage, StopReason};

/// 1.6's wording of a finish reason `error`: "server error" is what makes it retried.
pub const SERVER_ERROR_STOP: &str = "Provider stopped with: error (server error)";

/// A call's key in the stream: its index, or its id when it has none.
#[derive(Debug, PartialEq, Eq)]
enum CallKey {
    Index(u64),
    Id(String),
}

/// Turns Mistral stream chunks into a message.
pub struct MistralParser {
    b: MessageBuilder,
    /// The open text or thinking block.
    current: Option<usize>,
    /// Open tool calls in the order they started, with their block index.
    calls: Vec<(CallKey, usize)>,
    /// The mapped finish reason, or 1.6's error message for one that is a failure.
    stop: Option<Result<StopReason, String>>,
}

/// 1.6's `mapChatStopReason`.
fn stop_reason(reason: &str) -> Result<StopReason, String> {
    match reason {
        "stop" => Ok(StopReason::Stop),
        "length" | "model_length" => Ok(StopReason::Length),
        "tool_calls" => Ok(StopReason::ToolUse),
        "error" => Err(SERVER_ERROR_STOP.to_string()),
        other => Err(format!("Provider stopped with: {other}")),
    }
}

fn number(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|n| n.is_finite())
}

/// Cached prompt tokens under the first name present (1.6's `getMistralCachedPromptTokens`),
/// within `0..=prompt`.
fn cached_tokens(usage: &Value, prompt: u64) -> u64 {
    let found = [
        "/promptTokensDetails/cachedTokens",
        "/prompt_tokens_details/cached_tokens",
        "/promptTokenDetails/cachedTokens",
        "/prompt_token_details/cached_tokens",
        "/numCachedTokens",
        "/num_cached_tokens",
    ]
    .iter()
    .map(|p| usage.pointer(p))
    .find(|v| v.is_some_and(|v| !v.is_null()))
    .flatten();
    let cached = number(found).unwrap_or(0.0).max(0.0) as u64;
    cached.min(prompt)
}

impl MistralParser {
    /// Emits `start` on `deltas`.
    pub fn new(model: &Model, deltas: mpsc::UnboundedSender<AssistantDelta>) -> Self {
        MistralParser {
            b: MessageBuilder::new(model, deltas),
            current: None,
            calls: Vec::new(),
            stop: None,
        }
    }

    fn end_current(&mut self) {
        if let Some(idx) = self.current.take() {
            self.b.end_block(idx);
        }
    }

    /// Appends `piece` to the open block of `kind`, starting one when another is open.
    fn piece(&mut self, kind: BlockKind, piece: &str) {
        if piece.is_empty() {
            return;
        }
        let idx = match self.current {
            Some(idx) if self.b.open_kind(idx) == Some(kind) => idx,
            _ => {
                self.end_current();
                let idx = match kind {
                    BlockKind::Thinking => self.b.start_thinking(),
                    _ => self.b.start_text(),
                };
                self.current = Some(idx);
                idx
            }
        };
        match kind {
            BlockKind::Thinking => self.b.thinking_delta(idx, piece),
            _ => self.b.text_delta(idx, piece),
        }
    }

    fn content(&mut self, content: &Value) {
        let items = match content {
            Value::String(s) => return self.piece(BlockKind::Text, s),
            Value::Array(items) => items,
            _ => return,
        };
        for item in items {
            match item {
                Value::String(s) => self.piece(BlockKind::Text, s),
                _ => match item.get("type").and_then(Value::as_str) {
                    Some("thinking") => {
                        let text: String = item
                            .get("thinking")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                            .collect();
                        self.piece(BlockKind::Thinking, &text);
                    }
                    Some("text") => {
                        let text = item.get("text").and_then(Value::as_str).unwrap_or_default();
                        self.piece(BlockKind::Text, text);
                    }
                    _ => {}
                },
            }
        }
    }

    fn tool_call(&mut self, call: &Value) {
        self.end_current();
        let index = call.get("index").and_then(Value::as_u64);
        let id = match call.get("id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() && id != "null" => id.to_string(),
            _ => mistral_ids::for_index(index.unwrap_or(0)),
        };
        let key = match index {
            Some(i) => CallKey::Index(i),
            None => CallKey::Id(id.clone()),
        };
        let function = call.get("function");
        let idx = match self.calls.iter().find(|(k, _)| *k == key) {
            Some((_, idx)) => *idx,
            None => {
                let name = function
                    .and_then(|f| f.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let idx = self.b.start_tool_call(&id, name);
                self.calls.push((key, idx));
                idx
            }
        };
        let args = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => "{}".to_string(),
            Some(v) => v.to_string(),
        };
        self.b.tool_args_delta(idx, &args);
    }

    fn usage(&mut self, u: &Value) {
        let prompt = number(u.get("prompt_tokens")).unwrap_or(0.0) as u64;
        let cached = cached_tokens(u, prompt);
        let usage = &mut self.b.usage;
        usage.input = prompt.saturating_sub(cached);
        usage.output = number(u.get("completion_tokens")).unwrap_or(0.0) as u64;
        usage.cache_read = cached;
        usage.cache_write = 0;
        self.b.usage_reported = true;
    }

    fn chunk(&mut self, v: &Value) {
        if let Some(id) = v.get("id").and_then(Value::as_str) {
            self.b.set_response_id(id);
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage(u);
        }
        let Some(choice) = v.pointer("/choices/0") else {
            return;
        };
        if let Some(reason) = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
        {
            self.b.set_raw_stop_reason(reason);
            self.stop = Some(stop_reason(reason));
        }
        let Some(delta) = choice.get("delta") else {
            return;
        };
        if let Some(content) = delta.get("content") {
            self.content(content);
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.tool_call(call);
        }
    }
}

impl StreamParser for MistralParser {
    fn flush(&mut self) {
        self.b.flush();
    }

    fn on_event(&mut self, ev: SseEvent) -> Result<Flow, ProviderError> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        if data == "[DONE]" {
            return Ok(Flow::Done);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::Other(format!("invalid JSON in the Mistral stream: {e}"))
        })?;
        if !v.get("choices").is_some_and(Value::is_array) {
            return Err(ProviderError::Other(
                "Invalid Mistral streaming event".into(),
            ));
        }
        self.chunk(&v);
        Ok(Flow::Continue)
    }

    fn finish(mut self, _end: StreamEnd) -> Result<AssistantMessage, ProviderError> {
        // 1.6's order: the last text or thinking block ends, then every call in turn.
        self.end_current();
        for (_, idx) in std::mem::take(&mut self.calls) {
            self.b.end_block(idx);
        }
        let failure = match self.stop.take() {
            Some(Ok(reason)) => return Ok(self.b.finish(reason)),
            None => ProviderError::Transient("Mistral stream ended without a finish reason".into()),
            Some(Err(message)) if message == SERVER_ERROR_STOP => ProviderError::Transient(message),
            Some(Err(message)) => ProviderError::Other(message),
        };
        // The blocks are shown ended all the same, as 1.6's events before its error.
        self.b.flush();
        Err(failure)
    }
}
