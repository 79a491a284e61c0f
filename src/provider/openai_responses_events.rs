//! The Responses API's stream events as pi's deltas, as pi 1.6's `processResponsesStream`
//! maps them.
//!
//! Every output item (`reasoning`, `message`, `function_call`) is a content block, keyed by
//! its `output_index`: `response.output_item.added` starts it, the `*.delta` events fill it and
//! `response.output_item.done` ends it with the item's final text or arguments. A reasoning
//! item's JSON becomes its thinking block's signature, which the body builder sends back on
//! the next turn (with `store: false` the API keeps nothing between requests). The terminal
//! `response.completed`/`response.incomplete` carries usage and the status the stop reason
//! comes from; `response.failed` and `error` end the call with an error.
//!
//! Codex's endpoint ([`ResponsesParser::codex`]) ends with `response.done` as well, may send a
//! status outside the API's (read as none), and words its failures its own way.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::sse::SseEvent;
use super::stream::{BlockKind, Flow, MessageBuilder, StreamEnd, StreamParser};
use super::{Model, ProviderError};
use crate::delta::AssistantDelta;
use crate::message::{AssistantMessage, StopReason};

/// Turns Responses stream events into a message.
pub struct ResponsesParser {
    b: MessageBuilder,
    /// Open blocks by the item's `output_index`.
    slots: HashMap<u64, usize>,
    /// Reasoning blocks by item id, for the signatures `response.completed` completes.
    reasoning_by_id: HashMap<String, usize>,
    /// Tool calls whose `output_item.done` has not come.
    unfinished: BTreeSet<usize>,
    terminal: bool,
    /// Why an `incomplete` response is an error, when it is one.
    incomplete_error: Option<String>,
    /// Reading Codex's stream.
    codex: bool,
}

/// The statuses Codex's terminal events may carry; any other is read as none.
const CODEX_STATUSES: [&str; 6] = [
    "completed",
    "incomplete",
    "failed",
    "cancelled",
    "queued",
    "in_progress",
];

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn u64_of(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

impl ResponsesParser {
    /// Emits `start` on `deltas`.
    pub fn new(model: &Model, deltas: mpsc::UnboundedSender<AssistantDelta>) -> Self {
        ResponsesParser {
            b: MessageBuilder::new(model, deltas),
            slots: HashMap::new(),
            reasoning_by_id: HashMap::new(),
            unfinished: BTreeSet::new(),
            terminal: false,
            incomplete_error: None,
            codex: false,
        }
    }

    /// A parser of Codex's stream; emits `start` on `deltas`.
    pub fn codex(model: &Model, deltas: mpsc::UnboundedSender<AssistantDelta>) -> Self {
        ResponsesParser {
            codex: true,
            ..ResponsesParser::new(model, deltas)
        }
    }

    /// The open block of `kind` for the event's `output_index`.
    fn slot(&self, ev: &Value, kind: BlockKind) -> Option<usize> {
        let index = ev.get("output_index").and_then(Value::as_u64)?;
        let idx = *self.slots.get(&index)?;
        (self.b.open_kind(idx) == Some(kind)).then_some(idx)
    }

    fn start_item(&mut self, index: u64, item: &Value) -> Option<usize> {
        let idx = match str_of(item, "type")? {
            "reasoning" => self.b.start_thinking(),
            "message" => {
                self.final_answer_phase(item);
                self.b.start_text()
            }
            "function_call" => {
                let id = format!(
                    "{}|{}",
                    str_of(item, "call_id").unwrap_or_default(),
                    str_of(item, "id").unwrap_or_default()
                );
                let idx = self
                    .b
                    .start_tool_call(&id, str_of(item, "name").unwrap_or_default());
                if let Some(args) = str_of(item, "arguments").filter(|a| !a.is_empty()) {
                    self.b.set_tool_args(idx, args);
                }
                self.unfinished.insert(idx);
                idx
            }
            _ => return None,
        };
        self.slots.insert(index, idx);
        Some(idx)
    }

    fn final_answer_phase(&mut self, item: &Value) {
        if str_of(item, "type") == Some("message") && str_of(item, "phase") == Some("final_answer")
        {
            self.b.stop_reason = Some(StopReason::Stop);
        }
    }

    /// The provider's complete arguments: the missing rest as a delta when they continue
    /// what was streamed, else they replace it.
    fn replace_args(&mut self, idx: usize, full: &str) {
        let so_far = self.b.tool_args(idx).unwrap_or_default();
        match full.strip_prefix(so_far) {
            Some("") => {}
            Some(rest) => {
                let rest = rest.to_string();
                self.b.tool_args_delta(idx, &rest);
            }
            None => self.b.set_tool_args(idx, full),
        }
    }

    fn item_done(&mut self, ev: &Value) {
        let Some(item) = ev.get("item") else { return };
        self.final_answer_phase(item);
        let index = ev.get("output_index").and_then(Value::as_u64).unwrap_or(0);
        let idx = match self.slots.get(&index) {
            Some(i) => *i,
            None => match self.start_item(index, item) {
                Some(i) => i,
                None => return,
            },
        };
        match (str_of(item, "type"), self.b.open_kind(idx)) {
            (Some("reasoning"), Some(BlockKind::Thinking)) => {
                let joined = |key: &str| {
                    item.get(key)
                        .and_then(Value::as_array)
                        .map(|parts| {
                            let texts: Vec<&str> =
                                parts.iter().filter_map(|p| str_of(p, "text")).collect();
                            texts.join("\n\n")
                        })
                        .unwrap_or_default()
                };
                let text = Some(joined("summary"))
                    .filter(|t| !t.is_empty())
                    .or_else(|| Some(joined("content")).filter(|t| !t.is_empty()));
                if let Some(text) = text {
                    self.b.set_block_text(idx, &text);
                }
                self.b.set_signature(idx, item.to_string());
                if let Some(id) = str_of(item, "id") {
                    self.reasoning_by_id.insert(id.to_string(), idx);
                }
            }
            (Some("message"), Some(BlockKind::Text)) => {
                let text: String = item
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|parts| {
                        parts
                            .iter()
                            .filter_map(|p| match str_of(p, "type") {
                                Some("output_text") => str_of(p, "text"),
                                _ => str_of(p, "refusal"),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                self.b.set_block_text(idx, &text);
                self.b.set_signature(idx, text_signature(item));
            }
            (Some("function_call"), Some(BlockKind::ToolCall)) => {
                if let Some(args) = str_of(item, "arguments").filter(|a| !a.is_empty()) {
                    let full = args.to_string();
                    self.replace_args(idx, &full);
                }
                self.unfinished.remove(&idx);
            }
            _ => return,
        }
        self.b.end_block(idx);
        self.slots.remove(&index);
    }

    /// Azure may send a reasoning item's `encrypted_content` only in the final response
    /// (pi 1.6's `backfillReasoningSignatures`).
    fn backfill_signatures(&mut self, output: &[Value]) {
        for item in output {
            if str_of(item, "type") != Some("reasoning") {
                continue;
            }
            let Some(encrypted) = item.get("encrypted_content").filter(|e| truthy(e)) else {
                continue;
            };
            let Some(idx) = str_of(item, "id").and_then(|id| self.reasoning_by_id.get(id)) else {
                continue;
            };
            self.b.update_signature(*idx, |sig| {
                let mut stored: Map<String, Value> = serde_json::from_str(sig).ok()?;
                if stored.get("encrypted_content").is_some_and(truthy) {
                    return None;
                }
                stored.insert("encrypted_content".into(), encrypted.clone());
                Some(Value::Object(stored).to_string())
            });
        }
    }

    fn finalize(&mut self, response: &Value) {
        self.terminal = true;
        if let Some(output) = response.get("output").and_then(Value::as_array) {
            self.backfill_signatures(output);
        }
        if let Some(id) = str_of(response, "id") {
            self.b.set_response_id(id);
        }
        if let Some(u) = response.get("usage").filter(|u| u.is_object()) {
            let cached = u64_of(u.pointer("/input_tokens_details/cached_tokens"));
            let written = u64_of(u.pointer("/input_tokens_details/cache_write_tokens"));
            let usage = &mut self.b.usage;
            // OpenAI counts cached and cache-write tokens in input_tokens.
            usage.input = u64_of(u.get("input_tokens")).saturating_sub(cached + written);
            usage.output = u64_of(u.get("output_tokens"));
            usage.cache_read = cached;
            usage.cache_write = written;
            usage.reasoning = Some(u64_of(u.pointer("/output_tokens_details/reasoning_tokens")));
            self.b.usage_reported = true;
        }
        let status =
            str_of(response, "status").filter(|s| !self.codex || CODEX_STATUSES.contains(s));
        let reason = response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str);
        let raw = match (status, reason) {
            (Some(s), Some(r)) => Some(format!("{s}.{r}")),
            (Some(s), None) => Some(s.to_string()),
            _ => None,
        };
        if let Some(raw) = raw {
            self.b.set_raw_stop_reason(&raw);
        }
        self.incomplete_error = None;
        self.b.stop_reason = Some(match (status, reason) {
            (Some("incomplete"), Some("max_output_tokens")) => StopReason::Length,
            (Some("incomplete"), r) => {
                self.incomplete_error = Some(match r {
                    Some(r) => format!("Response incomplete: {r}"),
                    None => "Response incomplete without a provider reason".into(),
                });
                StopReason::Error
            }
            (Some("failed") | Some("cancelled"), _) => {
                self.incomplete_error = Some("An unknown error occurred".into());
                StopReason::Error
            }
            _ => StopReason::Stop,
        });
    }
}

/// 1.6's `encodeTextSignatureV1`: the message item's id and phase, sent back on replay.
fn text_signature(item: &Value) -> String {
    let mut sig = String::from("{\"v\":1");
    if let Some(id) = item.get("id").filter(|i| !i.is_null()) {
        sig.push_str(",\"id\":");
        sig.push_str(&id.to_string());
    }
    if let Some(phase) = item.get("phase").filter(|p| truthy(p)) {
        sig.push_str(",\"phase\":");
        sig.push_str(&phase.to_string());
    }
    sig.push('}');
    sig
}

/// JavaScript truthiness for a JSON value that is there.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty(),
        Value::Number(n) => n.as_f64() != Some(0.0),
        _ => true,
    }
}

/// The error an `error` event or a failed response ends the call with: rate limits and server
/// errors by their code as the HTTP statuses the retry layer knows, the rest plain, in 1.6's
/// words (a context overflow's text is what compaction recognizes).
fn stream_error(code: Option<&str>, message: String) -> ProviderError {
    let status = match code {
        Some("rate_limit_exceeded") | Some("rate_limit_error") => Some(429),
        Some("server_error") | Some("internal_error") | Some("server_is_overloaded") => Some(500),
        _ => None,
    };
    match status {
        Some(status) => ProviderError::Http {
            status,
            message,
            retry_after_ms: None,
        },
        None => ProviderError::Other(message),
    }
}

/// A Codex stream failure: retried as [`stream_error`] decides, worded as Codex says it
/// (no status in front).
fn codex_error(code: Option<&str>, message: String) -> ProviderError {
    match stream_error(code, message) {
        ProviderError::Http {
            status,
            message,
            retry_after_ms,
        } => ProviderError::Api {
            status,
            message,
            retry_after_ms,
        },
        other => other,
    }
}

fn failed(response: &Value) -> ProviderError {
    let error = response.get("error").filter(|e| e.is_object());
    let code = error
        .and_then(|e| str_of(e, "code"))
        .filter(|c| !c.is_empty());
    let message = match error {
        Some(e) => format!(
            "{}: {}",
            code.unwrap_or("unknown"),
            str_of(e, "message")
                .filter(|m| !m.is_empty())
                .unwrap_or("no message")
        ),
        None => match response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str)
        {
            Some(r) => format!("incomplete: {r}"),
            None => "Unknown error (no error details in response)".into(),
        },
    };
    stream_error(code, message)
}

impl StreamParser for ResponsesParser {
    fn flush(&mut self) {
        self.b.flush();
    }

    fn on_event(&mut self, ev: SseEvent) -> Result<Flow, ProviderError> {
        let data = ev.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(Flow::Continue);
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| ProviderError::Protocol(format!("invalid JSON event: {e}")))?;
        let ty = str_of(&v, "type")
            .or(ev.event.as_deref())
            .unwrap_or_default();
        let delta = || str_of(&v, "delta").unwrap_or_default();
        match ty {
            "response.created" => {
                if let Some(id) = v.pointer("/response/id").and_then(Value::as_str) {
                    self.b.set_response_id(id);
                }
            }
            "response.output_item.added" => {
                if let (Some(index), Some(item)) =
                    (v.get("output_index").and_then(Value::as_u64), v.get("item"))
                {
                    self.start_item(index, item);
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(idx) = self.slot(&v, BlockKind::Thinking) {
                    self.b.thinking_delta(idx, delta());
                }
            }
            "response.reasoning_summary_part.done" => {
                if let Some(idx) = self.slot(&v, BlockKind::Thinking) {
                    self.b.thinking_delta(idx, "\n\n");
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(idx) = self.slot(&v, BlockKind::Text) {
                    self.b.text_delta(idx, delta());
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(idx) = self.slot(&v, BlockKind::ToolCall) {
                    self.b.tool_args_delta(idx, delta());
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(idx) = self.slot(&v, BlockKind::ToolCall) {
                    let full = str_of(&v, "arguments").unwrap_or_default().to_string();
                    self.replace_args(idx, &full);
                }
            }
            "response.output_item.done" => self.item_done(&v),
            "response.done" if self.codex => {
                if let Some(r) = v.get("response") {
                    self.finalize(r);
                }
                return Ok(Flow::Done);
            }
            "response.failed" if self.codex => {
                let error = v.pointer("/response/error");
                let code = error.and_then(|e| str_of(e, "code"));
                let message = error
                    .and_then(|e| str_of(e, "message"))
                    .filter(|m| !m.is_empty())
                    .unwrap_or("Codex response failed");
                return Err(codex_error(code, message.to_string()));
            }
            "error" if self.codex => {
                let nested = v.get("error").filter(|e| e.is_object());
                let field = |k: &str| str_of(&v, k).or_else(|| nested.and_then(|e| str_of(e, k)));
                let (code, message) = (field("code"), field("message"));
                let said = message
                    .filter(|m| !m.is_empty())
                    .or(code.filter(|c| !c.is_empty()))
                    .map_or_else(|| v.to_string(), str::to_string);
                return Err(codex_error(code, format!("Codex error: {said}")));
            }
            "response.completed" | "response.incomplete" => {
                if let Some(r) = v.get("response") {
                    self.finalize(r);
                }
                return Ok(Flow::Done);
            }
            "response.failed" => {
                let response = v.get("response").cloned().unwrap_or(Value::Null);
                if let Some(status) = str_of(&response, "status") {
                    self.b.set_raw_stop_reason(status);
                }
                return Err(failed(&response));
            }
            "error" => {
                let code = v.get("code").map(|c| match c {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
                let message = format!(
                    "Error Code {}: {}",
                    code.as_deref().unwrap_or("undefined"),
                    str_of(&v, "message").unwrap_or("undefined")
                );
                return Err(stream_error(code.as_deref(), message));
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn finish(self, end: StreamEnd) -> Result<AssistantMessage, ProviderError> {
        if end == StreamEnd::Eof && !self.terminal {
            let said = "OpenAI Responses stream ended before a terminal response event".into();
            // Codex's words are 1.6's error message as it is; both are retried.
            return Err(if self.codex {
                ProviderError::Transient(said)
            } else {
                ProviderError::StreamDropped(said)
            });
        }
        if let Some(message) = self.incomplete_error {
            return Err(ProviderError::Other(message));
        }
        let tool_use = self.b.stop_reason == Some(StopReason::ToolUse)
            || (self.b.stop_reason == Some(StopReason::Stop) && self.b.has_tool_calls());
        if tool_use {
            if let Some(idx) = self.unfinished.iter().next() {
                let id = self.b.tool_id(*idx).unwrap_or_default();
                return Err(ProviderError::Other(format!(
                    "OpenAI Responses stream completed with an unfinished tool call ({id})"
                )));
            }
        }
        Ok(self.b.finish(StopReason::Stop))
    }
}
