//! The Gemini API's streamed `GenerateContentResponse` chunks as pi's deltas, as pi 1.6's
//! `google-generative-ai.js` reads them.
//!
//! Each chunk's first candidate brings whole parts: text (thinking when `thought: true`)
//! continues the open block of its kind or starts a new one; a `functionCall` part is a
//! complete tool call, started, filled and ended at once (several may come in one chunk), its
//! id generated as 1.6 does when Gemini gives none or repeats one. A `thoughtSignature` on a
//! part is kept on its block for the next turn. `finishReason` gives the stop reason and
//! `usageMetadata` the token counts (the latest wins); the stream has no end marker, so its
//! end is judged when the body ends: no finish reason, or one that means a failure, is an
//! error in 1.6's words.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tokio::sync::mpsc;

use super::sse::SseEvent;
use super::stream::{BlockKind, Flow, MessageBuilder, StreamEnd, StreamParser};
use super::{Model, ProviderError};
use crate::delta::AssistantDelta;
use crate::message::{now_ms, AssistantMessage, StopReason};

/// 1.6's module-wide `toolCallCounter`: generated ids stay unique across calls of a run.
static TOOL_CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Turns Gemini stream chunks into a message.
pub struct GoogleParser {
    b: MessageBuilder,
    /// The text or thinking block parts are appended to.
    current: Option<usize>,
    /// Ids of the tool calls so far, to catch repeats.
    call_ids: Vec<String>,
    /// Whether the stream is Vertex AI's (1.6 names it so in its errors).
    vertex: bool,
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn u64_of(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// 1.6's `mapStopReason`; `None` for a reason it does not know (it fails the call).
fn stop_reason(reason: &str) -> Option<StopReason> {
    Some(match reason {
        "STOP" => StopReason::Stop,
        "MAX_TOKENS" | "CONTINUATION" => StopReason::Length,
        "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "SAFETY"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION"
        | "IMAGE_OTHER"
        | "RECITATION"
        | "FINISH_REASON_UNSPECIFIED"
        | "OTHER"
        | "LANGUAGE"
        | "MALFORMED_FUNCTION_CALL"
        | "UNEXPECTED_TOOL_CALL"
        | "TOO_MANY_TOOL_CALLS"
        | "NO_IMAGE" => StopReason::Error,
        _ => return None,
    })
}

impl GoogleParser {
    /// Emits `start` on `deltas`.
    pub fn new(model: &Model, deltas: mpsc::UnboundedSender<AssistantDelta>) -> Self {
        GoogleParser {
            b: MessageBuilder::new(model, deltas),
            current: None,
            call_ids: Vec::new(),
            vertex: model.api == super::google_vertex::GOOGLE_VERTEX_API,
        }
    }

    fn end_current(&mut self) {
        if let Some(idx) = self.current.take() {
            self.b.end_block(idx);
        }
    }

    fn text_part(&mut self, part: &Value, text: &str) {
        let kind = if part.get("thought") == Some(&Value::Bool(true)) {
            BlockKind::Thinking
        } else {
            BlockKind::Text
        };
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
        // Some backends send the signature on the block's first part only: a later part
        // without one keeps it.
        if let Some(sig) = str_of(part, "thoughtSignature").filter(|s| !s.is_empty()) {
            self.b.set_signature(idx, sig.to_string());
        }
        match kind {
            BlockKind::Thinking => self.b.thinking_delta(idx, text),
            _ => self.b.text_delta(idx, text),
        }
    }

    fn call_part(&mut self, part: &Value, call: &Value) {
        self.end_current();
        let name = str_of(call, "name").unwrap_or_default();
        let id = match str_of(call, "id").filter(|id| !id.is_empty()) {
            Some(id) if !self.call_ids.iter().any(|c| c == id) => id.to_string(),
            _ => format!(
                "{name}_{}_{}",
                now_ms(),
                TOOL_CALL_COUNTER.fetch_add(1, Ordering::Relaxed) + 1
            ),
        };
        let args = match call.get("args") {
            None | Some(Value::Null) => "{}".to_string(),
            Some(a) => a.to_string(),
        };
        let idx = self.b.start_tool_call(&id, name);
        if let Some(sig) = str_of(part, "thoughtSignature").filter(|s| !s.is_empty()) {
            self.b.set_signature(idx, sig.to_string());
        }
        self.b.tool_args_delta(idx, &args);
        self.b.end_block(idx);
        self.call_ids.push(id);
    }

    fn usage(&mut self, u: &Value) {
        let cached = u64_of(u, "cachedContentTokenCount");
        let thoughts = u64_of(u, "thoughtsTokenCount");
        let usage = &mut self.b.usage;
        usage.input = u64_of(u, "promptTokenCount").saturating_sub(cached);
        usage.output = u64_of(u, "candidatesTokenCount") + thoughts;
        usage.cache_read = cached;
        usage.cache_write = 0;
        usage.reasoning = Some(thoughts);
        self.b.usage_reported = true;
    }

    fn chunk(&mut self, v: &Value) -> Result<(), ProviderError> {
        if let Some(id) = str_of(v, "responseId") {
            self.b.set_response_id(id);
        }
        let candidate = v.pointer("/candidates/0");
        let parts = candidate
            .and_then(|c| c.pointer("/content/parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            if let Some(text) = str_of(part, "text") {
                self.text_part(part, text);
            }
            if let Some(call) = part.get("functionCall").filter(|c| c.is_object()) {
                self.call_part(part, call);
            }
        }
        if let Some(reason) = candidate
            .and_then(|c| str_of(c, "finishReason"))
            .filter(|r| !r.is_empty())
        {
            self.b.set_raw_stop_reason(reason);
            let mapped = stop_reason(reason)
                .ok_or_else(|| ProviderError::Other(format!("Unhandled stop reason: {reason}")))?;
            self.b.stop_reason = Some(mapped);
        }
        if let Some(u) = v.get("usageMetadata").filter(|u| u.is_object()) {
            self.usage(u);
        }
        Ok(())
    }
}

/// An `error` object in the stream, as the SDK words one (`got status: …`); rate limits and
/// server errors keep their status so they are retried.
fn stream_error(v: &Value) -> ProviderError {
    let error = &v["error"];
    let status = error
        .get("status")
        .map(|s| match s {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| "undefined".into());
    let message = format!("got status: {status}. {v}");
    match error.get("code").and_then(Value::as_u64) {
        Some(code @ 400..=599) => ProviderError::Api {
            status: code as u16,
            message,
            retry_after_ms: None,
        },
        _ => ProviderError::Other(message),
    }
}

impl StreamParser for GoogleParser {
    fn flush(&mut self) {
        self.b.flush();
    }

    fn on_event(&mut self, ev: SseEvent) -> Result<Flow, ProviderError> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| ProviderError::Protocol(format!("invalid JSON chunk: {e}")))?;
        if v.get("error").is_some_and(Value::is_object) {
            return Err(stream_error(&v));
        }
        self.chunk(&v)?;
        Ok(Flow::Continue)
    }

    fn finish(mut self, _end: StreamEnd) -> Result<AssistantMessage, ProviderError> {
        self.end_current();
        let message = self.b.raw_stop_reason().map(str::to_string);
        match self.b.stop_reason {
            None => Err(ProviderError::StreamDropped(
                if self.vertex {
                    "Google Vertex stream ended without a finish reason"
                } else {
                    "Google stream ended without a finish reason"
                }
                .into(),
            )),
            Some(StopReason::Error) => Err(ProviderError::Other(match message {
                Some(raw) => format!("Provider stopped with: {raw}"),
                None => "An unknown error occurred".into(),
            })),
            Some(_) => Ok(self.b.finish(StopReason::Stop)),
        }
    }
}
