//! Bedrock's `application/vnd.amazon.eventstream` response as pi's deltas, as pi 1.6 reads the
//! SDK's `ConverseStreamOutput` items.
//!
//! The binary framing (prelude, headers, payload, CRCs) is decoded by `aws-smithy-eventstream`;
//! each frame becomes an [`SseEvent`] named by its `:event-type` (an exception frame by
//! `exception:` and its `:exception-type`), so the shared [`StreamParser`] path applies. Text
//! and reasoning blocks start with their first delta (Bedrock sends no start for them), a tool
//! use starts with `contentBlockStart` and streams its JSON input; a reasoning signature is
//! kept on its block, encrypted reasoning (`redactedContent`) is kept as base64 behind 1.6's
//! placeholder text. `messageStop` gives the stop reason, `metadata` the usage; exceptions in
//! the stream fail the call worded as 1.6 words them.

use std::collections::HashMap;

use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use aws_smithy_types::event_stream::HeaderValue;
use base64::Engine;
use bytes::BytesMut;
use serde_json::Value;
use tokio::sync::mpsc;

use super::bedrock_body::REDACTED_THINKING;
use super::sse::SseEvent;
use super::stream::{Flow, MessageBuilder, StreamEnd, StreamParser};
use super::{Model, ProviderError};
use crate::delta::AssistantDelta;
use crate::message::{AssistantMessage, StopReason};

/// Splits the byte stream into frames.
#[derive(Default)]
pub struct FrameDecoder {
    buf: BytesMut,
    decoder: MessageFrameDecoder,
}

impl FrameDecoder {
    /// The frames completed by `chunk`, as events.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, ProviderError> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        loop {
            match self.decoder.decode_frame(&mut self.buf) {
                Ok(DecodedFrame::Complete(m)) => out.push(as_event(&m)),
                Ok(DecodedFrame::Incomplete) => return Ok(out),
                Err(e) => return Err(ProviderError::Protocol(format!("event stream: {e}"))),
            }
        }
    }

    /// Whether bytes of an unfinished frame are left.
    pub fn has_partial(&self) -> bool {
        !self.buf.is_empty()
    }
}

fn header(m: &aws_smithy_types::event_stream::Message, name: &str) -> Option<String> {
    m.headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| match h.value() {
            HeaderValue::String(s) => Some(s.as_str().to_string()),
            _ => None,
        })
}

fn as_event(m: &aws_smithy_types::event_stream::Message) -> SseEvent {
    let payload = String::from_utf8_lossy(m.payload()).into_owned();
    let event = match header(m, ":message-type").as_deref() {
        Some("exception") => format!(
            "exception:{}",
            header(m, ":exception-type").unwrap_or_default()
        ),
        Some("error") => {
            let code = header(m, ":error-code").unwrap_or_default();
            let message = header(m, ":error-message").unwrap_or_default();
            return SseEvent {
                event: Some(format!("error:{code}")),
                data: message,
            };
        }
        _ => header(m, ":event-type").unwrap_or_default(),
    };
    SseEvent {
        event: Some(event),
        data: payload,
    }
}

/// A block the stream has open: its content index, and encrypted reasoning gathered for it.
struct Open {
    idx: usize,
    redacted: Option<Vec<u8>>,
}

/// Turns Converse stream events into a message.
pub struct BedrockParser {
    b: MessageBuilder,
    open: HashMap<u64, Open>,
}

/// 1.6's words for the modeled exceptions (its `BEDROCK_ERROR_PREFIXES`).
pub fn error_prefix(name: &str) -> &str {
    match name {
        "InternalServerException" => "Internal server error",
        "ModelStreamErrorException" => "Model stream error",
        "ValidationException" => "Validation error",
        "ThrottlingException" => "Throttling error",
        "ServiceUnavailableException" => "Service unavailable",
        other => other,
    }
}

/// An exception in the stream: server-side failures keep a status so they are retried as
/// 1.6's agent retries their words.
fn stream_exception(kind: &str, data: &str) -> ProviderError {
    let message = serde_json::from_str::<Value>(data)
        .ok()
        .and_then(|v| {
            v.get("message")
                .or_else(|| v.get("Message"))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| data.to_string());
    // `throttlingException` → `ThrottlingException`.
    let mut name: String = kind.chars().take(1).flat_map(char::to_uppercase).collect();
    name.push_str(kind.get(1..).unwrap_or(""));
    let text = format!("{}: {message}", error_prefix(&name));
    let status = match name.as_str() {
        "InternalServerException" => Some(500),
        "ServiceUnavailableException" => Some(503),
        "ThrottlingException" if is_rate_limit(&message) => Some(429),
        _ => None,
    };
    match status {
        Some(status) => ProviderError::Api {
            status,
            message: text,
            retry_after_ms: None,
        },
        None => ProviderError::Other(text),
    }
}

/// Whether 1.6's agent would retry a throttling message (its retryable patterns).
fn is_rate_limit(message: &str) -> bool {
    let m = message.to_lowercase();
    m.contains("too many requests") || m.contains("rate limit") || m.contains("rate-limit")
}

/// 1.6's `mapStopReason`.
fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
        "tool_use" => StopReason::ToolUse,
        _ => StopReason::Error,
    }
}

fn u64_of(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

impl BedrockParser {
    /// Emits `start` on `deltas`.
    pub fn new(model: &Model, deltas: mpsc::UnboundedSender<AssistantDelta>) -> Self {
        BedrockParser {
            b: MessageBuilder::new(model, deltas),
            open: HashMap::new(),
        }
    }

    fn delta(&mut self, v: &Value) {
        let block = v["contentBlockIndex"].as_u64().unwrap_or(0);
        let delta = &v["delta"];
        if let Some(text) = delta.get("text").and_then(Value::as_str) {
            let idx = match self.open.get(&block) {
                Some(o) => o.idx,
                None => {
                    let idx = self.b.start_text();
                    self.open.insert(
                        block,
                        Open {
                            idx,
                            redacted: None,
                        },
                    );
                    idx
                }
            };
            self.b.text_delta(idx, text);
        } else if let Some(tool) = delta.get("toolUse") {
            if let Some(o) = self.open.get(&block) {
                let input = tool.get("input").and_then(Value::as_str).unwrap_or("");
                self.b.tool_args_delta(o.idx, input);
            }
        } else if let Some(r) = delta.get("reasoningContent") {
            self.reasoning(block, r);
        }
    }

    fn reasoning(&mut self, block: u64, r: &Value) {
        let b = &mut self.b;
        let open = self.open.entry(block).or_insert_with(|| {
            let idx = b.start_thinking();
            b.signature_delta(idx, "");
            Open {
                idx,
                redacted: None,
            }
        });
        let idx = open.idx;
        if let Some(text) = r
            .get("text")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            b.thinking_delta(idx, text);
        }
        if let Some(sig) = r
            .get("signature")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            if open.redacted.is_none() {
                b.signature_delta(idx, sig);
            }
        }
        let redacted = r
            .get("redactedContent")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        if let Some(bytes) =
            redacted.and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        {
            let chunks = open.redacted.get_or_insert_with(|| {
                b.set_signature(idx, String::new());
                b.thinking_delta(idx, REDACTED_THINKING);
                Vec::new()
            });
            chunks.extend_from_slice(&bytes);
        }
    }

    fn stop_block(&mut self, v: &Value) {
        let block = v["contentBlockIndex"].as_u64().unwrap_or(0);
        if let Some(o) = self.open.remove(&block) {
            self.flush_redacted(&o);
            self.b.end_block(o.idx);
        }
    }

    fn flush_redacted(&mut self, o: &Open) {
        if let Some(bytes) = &o.redacted {
            let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
            self.b.set_signature(o.idx, encoded);
        }
    }

    fn metadata(&mut self, v: &Value) {
        let Some(u) = v.get("usage").filter(|u| u.is_object()) else {
            return;
        };
        let usage = &mut self.b.usage;
        usage.input = u64_of(u, "inputTokens");
        usage.output = u64_of(u, "outputTokens");
        usage.cache_read = u64_of(u, "cacheReadInputTokens");
        usage.cache_write = u64_of(u, "cacheWriteInputTokens");
        usage.cache_write_1h = u.get("cacheDetails").and_then(Value::as_array).map(|d| {
            d.iter()
                .filter(|x| x["ttl"] == "1h")
                .map(|x| u64_of(x, "inputTokens"))
                .sum()
        });
        self.b.usage_reported = true;
    }
}

impl StreamParser for BedrockParser {
    fn flush(&mut self) {
        self.b.flush();
    }

    fn on_event(&mut self, ev: SseEvent) -> Result<Flow, ProviderError> {
        let kind = ev.event.unwrap_or_default();
        if let Some(exception) = kind.strip_prefix("exception:") {
            return Err(stream_exception(exception, &ev.data));
        }
        if let Some(code) = kind.strip_prefix("error:") {
            return Err(ProviderError::Other(format!("{code}: {}", ev.data)));
        }
        let v: Value = serde_json::from_str(&ev.data)
            .map_err(|e| ProviderError::Protocol(format!("invalid JSON event: {e}")))?;
        match kind.as_str() {
            "messageStart" if v["role"] != "assistant" => {
                return Err(ProviderError::Other(
                    "Unexpected assistant message start but got user message start instead".into(),
                ));
            }
            "contentBlockStart" => {
                if let Some(tool) = v.pointer("/start/toolUse") {
                    let id = tool["toolUseId"].as_str().unwrap_or("");
                    let name = tool["name"].as_str().unwrap_or("");
                    let idx = self.b.start_tool_call(id, name);
                    let block = v["contentBlockIndex"].as_u64().unwrap_or(0);
                    self.open.insert(
                        block,
                        Open {
                            idx,
                            redacted: None,
                        },
                    );
                }
            }
            "contentBlockDelta" => self.delta(&v),
            "contentBlockStop" => self.stop_block(&v),
            "messageStop" => {
                let reason = v["stopReason"].as_str().unwrap_or("");
                if !reason.is_empty() {
                    self.b.set_raw_stop_reason(reason);
                }
                self.b.stop_reason = Some(stop_reason(reason));
            }
            "metadata" => self.metadata(&v),
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn finish(mut self, _end: StreamEnd) -> Result<AssistantMessage, ProviderError> {
        let open: Vec<Open> = self.open.drain().map(|(_, o)| o).collect();
        for o in &open {
            self.flush_redacted(o);
        }
        match self.b.stop_reason {
            None => Err(ProviderError::StreamDropped(
                "Bedrock stream ended without a stop reason".into(),
            )),
            Some(StopReason::Error) => Err(ProviderError::Other(match self.b.raw_stop_reason() {
                Some(raw) => format!("Provider stopped with: {raw}"),
                None => "An unknown error occurred".into(),
            })),
            Some(_) => Ok(self.b.finish(StopReason::Stop)),
        }
    }
}
