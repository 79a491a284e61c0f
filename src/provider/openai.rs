//! The `openai-completions` wire API: streaming Chat Completions with tools.
//!
//! This one API covers OpenAI itself and most other servers (Ollama, llama.cpp, vLLM,
//! OpenRouter, Groq, DeepSeek…), so the request uses only widely supported fields and the
//! parser is lenient where those servers differ: reasoning under any of the known field names,
//! tool calls with or without ids, usage in any chunk, a missing `[DONE]` after a
//! `finish_reason`. The model's `compat` object switches the few fields that must differ.

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::mpsc;

use super::copilot_headers;
use super::openai_body;
use super::openai_chunk::Chunk;
use super::session_affinity;
use super::sse::SseEvent;
use super::stream::{
    join_url, sse_request, stream_call, Flow, MessageBuilder, RequestBody, StreamEnd, StreamParser,
};
use super::{CallContext, Model, Provider, ProviderError, Request, ThinkingLevel};
use crate::delta::AssistantDelta;
use crate::message::{AssistantMessage, StopReason};

pub struct OpenAiCompletions {
    client: reqwest::Client,
}

impl OpenAiCompletions {
    pub fn new(client: reqwest::Client) -> Self {
        OpenAiCompletions { client }
    }
}

#[async_trait]
impl Provider for OpenAiCompletions {
    fn api(&self) -> &'static str {
        "openai-completions"
    }

    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        let auth = req.resolved_auth().await?;
        let url = join_url(auth.base_url(&req.model), "chat/completions");
        let replayed = openai_body::replayed(req);
        let body = RequestBody::of(&openai_body::body(req, &replayed), ctx)?;
        let mut http = sse_request(url, body);
        http.api_key(&req.model, auth.key.as_deref(), "authorization", |k| {
            format!("Bearer {k}")
        });
        copilot_headers::apply(&mut http, req);
        session_affinity::apply(&mut http, req, session_affinity::Api::Completions);
        let parser = || OpenAiParser::new(&req.model, ctx.deltas.clone());
        stream_call(&self.client, http, ctx, &req.model, parser).await
    }
}

pub(super) fn compat_bool(model: &Model, key: &str) -> Option<bool> {
    model.compat.get(key).and_then(Value::as_bool)
}

pub(super) fn reasoning_effort(level: ThinkingLevel) -> Option<&'static str> {
    match level {
        ThinkingLevel::Off => None,
        ThinkingLevel::Minimal => Some("minimal"),
        ThinkingLevel::Low => Some("low"),
        ThinkingLevel::Medium => Some("medium"),
        // Chat Completions has no level above "high" that servers agree on.
        ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => Some("high"),
    }
}

/// The JSON request body (before `before_provider_request`), as hooks see it.
pub fn build_body(req: &Request) -> Value {
    let replayed = openai_body::replayed(req);
    serde_json::to_value(openai_body::body(req, &replayed)).unwrap_or(Value::Null)
}

/// The block currently receiving fragments; Chat Completions streams blocks one after another.
#[derive(Debug)]
enum Current {
    Text(usize),
    Thinking(usize),
    Tool {
        idx: usize,
        /// The server's `index` for this call, when it sends one.
        index: Option<u64>,
        id: Option<String>,
    },
}

impl Current {
    fn idx(&self) -> usize {
        match self {
            Current::Text(i) | Current::Thinking(i) => *i,
            Current::Tool { idx, .. } => *idx,
        }
    }
}

/// Turns `chat.completion.chunk` events into a message.
pub struct OpenAiParser {
    b: MessageBuilder,
    current: Option<Current>,
    finish_reason: Option<String>,
}

impl OpenAiParser {
    /// Emits `start` on `deltas`.
    pub fn new(model: &Model, deltas: mpsc::UnboundedSender<AssistantDelta>) -> Self {
        OpenAiParser {
            b: MessageBuilder::new(model, deltas),
            current: None,
            finish_reason: None,
        }
    }

    fn end_current(&mut self) {
        if let Some(c) = self.current.take() {
            self.b.end_block(c.idx());
        }
    }

    fn on_text(&mut self, delta: &str) {
        let idx = match self.current {
            Some(Current::Text(i)) => i,
            _ => {
                self.end_current();
                let i = self.b.start_text();
                self.current = Some(Current::Text(i));
                i
            }
        };
        self.b.text_delta(idx, delta);
    }

    fn on_thinking(&mut self, delta: &str) {
        let idx = match self.current {
            Some(Current::Thinking(i)) => i,
            _ => {
                self.end_current();
                let i = self.b.start_thinking();
                self.current = Some(Current::Thinking(i));
                i
            }
        };
        self.b.thinking_delta(idx, delta);
    }

    fn on_tool_fragment(&mut self, tc: &Value) {
        let index = tc.get("index").and_then(Value::as_u64);
        let id = tc
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let function = tc.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str);
        // A few servers send the arguments as an object instead of a JSON string.
        let args = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        };
        // A fragment continues the current call unless its index or id says otherwise; servers
        // differ in which of the two they repeat.
        let continues = match &self.current {
            Some(Current::Tool {
                index: ci, id: cid, ..
            }) => {
                // A fragment without an index continues; one whose index is new starts a call.
                let same_index = match (index, ci) {
                    (None, _) => true,
                    (Some(a), Some(b)) => a == *b,
                    (Some(_), None) => false,
                };
                let same_id = id.is_none() || cid.is_none() || id == cid.as_deref();
                same_index && same_id
            }
            _ => false,
        };
        let idx = if continues {
            let Some(Current::Tool {
                idx, id: cur_id, ..
            }) = &mut self.current
            else {
                return;
            };
            if cur_id.is_none() {
                *cur_id = id.map(str::to_string);
            }
            let idx = *idx;
            self.b.set_tool_identity(idx, id, name);
            idx
        } else {
            self.end_current();
            let idx = self
                .b
                .start_tool_call(id.unwrap_or_default(), name.unwrap_or_default());
            self.current = Some(Current::Tool {
                idx,
                index,
                id: id.map(str::to_string),
            });
            idx
        };
        // Every fragment is a `toolcall_delta`, an empty one too (the call's first, which
        // carries its name), as pi 1.6 streams it.
        self.b
            .tool_args_delta(idx, args.as_deref().unwrap_or_default());
    }

    /// pi 1.6's `parseChunkUsage`: `cached_tokens` are cache reads (hits on earlier
    /// requests' cache; OpenAI and OpenRouter put them in `prompt_tokens_details`, DeepSeek
    /// says `prompt_cache_hit_tokens`, Kimi a top-level `cached_tokens`) and
    /// `cache_write_tokens` this request's writes, counted apart: neither is subtracted from
    /// the other, only both from the prompt's tokens.
    fn on_usage(&mut self, u: &Value) {
        let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
        let prompt = n(u.get("prompt_tokens"));
        let cache_read = n(present(u.pointer("/prompt_tokens_details/cached_tokens"))
            .or_else(|| present(u.get("prompt_cache_hit_tokens")))
            .or_else(|| present(u.get("cached_tokens"))));
        let cache_write = n(u.pointer("/prompt_tokens_details/cache_write_tokens"));
        self.b.usage.input = prompt.saturating_sub(cache_read + cache_write);
        self.b.usage.output = n(u.get("completion_tokens"));
        self.b.usage.cache_read = cache_read;
        self.b.usage.cache_write = cache_write;
        // pi 1.6 takes the first count that is not 0.
        let reasoning = match n(u.pointer("/completion_tokens_details/reasoning_tokens")) {
            0 => n(u.get("reasoning_tokens")),
            r => r,
        };
        self.b.usage.reasoning = Some(reasoning);
        self.b.usage_reported = true;
    }
}

/// A value that is there and not `null` (JavaScript's `??` goes past both).
fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

/// An error object sent inside the stream (OpenAI, OpenRouter and vLLM all do this).
fn stream_error(err: &Value) -> ProviderError {
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| err.to_string());
    let code = err
        .get("code")
        .or_else(|| err.get("status"))
        .and_then(|c| c.as_u64().or_else(|| c.as_str()?.parse().ok()))
        .filter(|c| (400..600).contains(c));
    let by_type = match err.get("type").and_then(Value::as_str) {
        Some("server_error") => Some(500),
        Some("rate_limit_exceeded") | Some("rate_limit_error") => Some(429),
        _ => None,
    };
    match code.or(by_type) {
        Some(status) => ProviderError::Http {
            status: status as u16,
            message,
            retry_after_ms: None,
        },
        None => ProviderError::Other(message),
    }
}

impl StreamParser for OpenAiParser {
    fn flush(&mut self) {
        self.b.flush();
    }

    fn on_event(&mut self, ev: SseEvent) -> Result<Flow, ProviderError> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            return Ok(Flow::Done);
        }
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        let chunk = Chunk::parse(data)
            .map_err(|e| ProviderError::Protocol(format!("invalid JSON chunk: {e}")))?;
        if let Some(err) = &chunk.error {
            return Err(stream_error(err));
        }
        if let Some(id) = &chunk.id {
            self.b.set_response_id(id);
        }
        if let Some(u) = &chunk.usage {
            self.on_usage(u);
        }
        let Some(choice) = chunk.choice else {
            return Ok(Flow::Continue);
        };
        // Some servers (Moonshot) put usage in the choice instead.
        if chunk.usage.is_none() {
            if let Some(u) = &choice.usage {
                self.on_usage(u);
            }
        }
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content.filter(|s| !s.is_empty()) {
                self.on_text(&text);
            }
            if let Some(r) = &delta.reasoning {
                self.on_thinking(r);
            }
            for tc in &delta.tool_calls {
                self.on_tool_fragment(tc);
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.end_current();
            self.b.stop_reason = Some(match reason.as_ref() {
                "length" => StopReason::Length,
                "tool_calls" | "function_call" => StopReason::ToolUse,
                // "stop", and the assorted names local servers invent for a normal end.
                _ => StopReason::Stop,
            });
            self.b.set_raw_stop_reason(&reason);
            self.finish_reason = Some(reason.to_string());
        }
        Ok(Flow::Continue)
    }

    fn finish(self, end: StreamEnd) -> Result<AssistantMessage, ProviderError> {
        match (end, self.finish_reason.as_deref()) {
            (StreamEnd::Eof, None) => Err(ProviderError::StreamDropped(
                "stream ended before finish_reason or [DONE]".into(),
            )),
            (_, Some("content_filter")) => Err(ProviderError::Other(
                "the provider's content filter stopped the response".into(),
            )),
            _ => Ok(self.b.finish(StopReason::Stop)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use async_trait::async_trait;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;
    use serde_json::json;

    use crate::message::{Content, Message, ToolCall, ToolResultMessage, UserContent, UserMessage};
    use crate::provider::stream::test_support::*;
    use crate::provider::{ProviderHooks, ToolSpec};

    const FIXTURE: &str = include_str!("../../fixtures/providers/openai_tool_call.sse");

    fn request(base_url: &str) -> Request {
        Request {
            model: model("openai-completions", base_url),
            api_key: Some("sk-test".into()),
            system_prompt: "You are pi.".into(),
            messages: vec![Message::user("list files").into()],
            tools: vec![ToolSpec {
                name: "read".into(),
                description: "Read a file".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
                constrained_sampling: None,
            }]
            .into(),
            thinking: ThinkingLevel::Off,
            session_id: None,
        }
    }

    fn parse(
        stream: &str,
        chunk: usize,
    ) -> (Result<AssistantMessage, ProviderError>, Vec<AssistantDelta>) {
        let (ctx, mut rx) = context();
        let m = model("openai-completions", "http://h");
        let r = parse_in_chunks(
            stream.as_bytes(),
            chunk,
            OpenAiParser::new(&m, ctx.deltas.clone()),
        );
        (r, drain(&mut rx))
    }

    fn check_fixture_message(m: &AssistantMessage) {
        assert_eq!(m.api, "openai-completions");
        assert_eq!(m.model, "test-model");
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_eq!(
            m.content,
            vec![
                Content::text("Let me look at the file."),
                Content::ToolCall(ToolCall {
                    thought_signature: None,
                    id: "call_abc123".into(),
                    name: "read".into(),
                    arguments: json!({"path": "src/main.rs"}),
                }),
                Content::ToolCall(ToolCall {
                    thought_signature: None,
                    id: "call_def456".into(),
                    name: "bash".into(),
                    arguments: json!({"command": "ls -la"}),
                }),
            ]
        );
        assert_eq!(m.usage.input, 100);
        assert_eq!(m.usage.output, 32);
        assert_eq!(m.usage.cache_read, 28);
        assert_eq!(m.usage.cache_write, 0);
        assert_eq!(m.usage.total_tokens, 160);
    }

    #[test]
    fn fixture_parses_whole_and_in_one_byte_chunks() {
        for size in [FIXTURE.len(), 1, 7] {
            let (r, deltas) = parse(FIXTURE, size);
            check_fixture_message(&r.unwrap());
            assert_well_formed(&deltas, 3);
            assert_eq!(
                deltas.last(),
                Some(&AssistantDelta::Done {
                    reason: StopReason::ToolUse
                })
            );
        }
    }

    #[test]
    fn fixture_split_at_every_byte_parses_identically() {
        let bytes = FIXTURE.as_bytes();
        let m = model("openai-completions", "http://h");
        for i in 0..=bytes.len() {
            let (ctx, mut rx) = context();
            let r = parse_chunk_list(
                &[&bytes[..i], &bytes[i..]],
                OpenAiParser::new(&m, ctx.deltas.clone()),
            );
            check_fixture_message(&r.unwrap());
            assert_well_formed(&drain(&mut rx), 3);
        }
    }

    #[test]
    fn fixture_delta_sequence_matches_pi() {
        let (_, deltas) = parse(FIXTURE, FIXTURE.len());
        let kinds: Vec<String> = deltas
            .iter()
            .map(|d| {
                serde_json::to_value(d).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                "start",
                "text_start",
                "text_delta",
                "text_delta",
                "text_end",
                "toolcall_start",
                // The call's first fragment (its name, no arguments yet) is a delta too.
                "toolcall_delta",
                "toolcall_delta",
                "toolcall_delta",
                "toolcall_end",
                "toolcall_start",
                // The call's first fragment (its name, no arguments yet) is a delta too.
                "toolcall_delta",
                "toolcall_delta",
                "toolcall_delta",
                "toolcall_end",
                "done"
            ]
        );
    }

    #[test]
    fn reasoning_fields_become_thinking_blocks() {
        let s = "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n\
                 data: {\"choices\":[{\"delta\":{\"reasoning\":\" ok\"}}]}\n\n\
                 data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n\
                 data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
                 data: [DONE]\n\n";
        let (r, deltas) = parse(s, 3);
        let m = r.unwrap();
        assert_eq!(
            m.content,
            vec![
                Content::Thinking {
                    thinking: "hmm ok".into(),
                    signature: None
                },
                Content::text("Hi")
            ]
        );
        assert_eq!(m.stop_reason, StopReason::Stop);
        assert_well_formed(&deltas, 2);
    }

    #[test]
    fn stream_without_end_is_dropped() {
        let s = "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n";
        let (r, _) = parse(s, 5);
        assert!(matches!(r, Err(ProviderError::StreamDropped(_))));
        assert!(r.unwrap_err().is_retryable());
    }

    #[test]
    fn finish_reason_without_done_is_complete() {
        let s = "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"length\"}]}\n\n";
        let (r, _) = parse(s, 5);
        let m = r.unwrap();
        assert_eq!(m.stop_reason, StopReason::Length);
        assert_eq!(m.text(), "Hi");
    }

    /// One text chunk, the finish, and a usage chunk carrying `usage`.
    fn with_usage(usage: &str) -> String {
        format!(
            "data: {{\"choices\":[{{\"delta\":{{\"content\":\"Hi\"}},\"finish_reason\":\"stop\"}}]}}\n\n\
             data: {{\"choices\":[],\"usage\":{usage}}}\n\ndata: [DONE]\n\n"
        )
    }

    #[test]
    fn cache_writes_are_counted_apart_from_cache_reads_and_input() {
        // As pi 1.6 reads it: cached_tokens are reads, cache_write_tokens writes, and only
        // the prompt's tokens lose both.
        let s = with_usage(
            r#"{"prompt_tokens":1000,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":700,"cache_write_tokens":200}}"#,
        );
        let m = parse(&s, 6).0.unwrap();
        let u = &m.usage;
        assert_eq!((u.input, u.cache_read, u.cache_write), (100, 700, 200));
        assert_eq!((u.output, u.total_tokens), (20, 1020));
        // DeepSeek's spelling of cache hits.
        let s = with_usage(
            r#"{"prompt_tokens":50,"completion_tokens":5,"prompt_cache_hit_tokens":30,"prompt_tokens_details":{"cached_tokens":null}}"#,
        );
        let u = parse(&s, 6).0.unwrap().usage;
        assert_eq!((u.input, u.cache_read, u.cache_write), (20, 30, 0));
        // Kimi's: a top-level cached_tokens.
        let s = with_usage(r#"{"prompt_tokens":50,"completion_tokens":5,"cached_tokens":40}"#);
        let u = parse(&s, 6).0.unwrap().usage;
        assert_eq!((u.input, u.cache_read, u.cache_write), (10, 40, 0));
        // More cached than prompted (a server's miscount) leaves no negative input.
        let s = with_usage(
            r#"{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":8,"cache_write_tokens":8}}"#,
        );
        let u = parse(&s, 6).0.unwrap().usage;
        assert_eq!((u.input, u.cache_read, u.cache_write), (0, 8, 8));
    }

    #[test]
    fn usage_inside_the_choice_is_read_and_priced() {
        let s = "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\",\
                 \"usage\":{\"prompt_tokens\":400000,\"completion_tokens\":100000}}]}\n\ndata: [DONE]\n\n";
        let (ctx, _rx) = context();
        let mut m = model("openai-completions", "http://h");
        m.cost.input = 2.5;
        m.cost.output = 10.0;
        let parser = OpenAiParser::new(&m, ctx.deltas.clone());
        let msg = parse_in_chunks(s.as_bytes(), 11, parser).unwrap();
        assert_eq!((msg.usage.input, msg.usage.output), (400_000, 100_000));
        assert_eq!(msg.usage.cost.input, 1.0);
        assert_eq!(msg.usage.cost.output, 1.0);
        assert_eq!(msg.usage.cost.total, 2.0);
    }

    #[test]
    fn invalid_tool_arguments_become_empty_object() {
        let s = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"command\\\": \"}}]}}]}\n\n\
                 data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n\
                 data: [DONE]\n\n";
        let (r, _) = parse(s, 4);
        let m = r.unwrap();
        assert_eq!(m.tool_calls()[0].arguments, json!({}));
        assert_eq!(m.stop_reason, StopReason::ToolUse);
    }

    #[test]
    fn calls_without_index_split_by_id_and_missing_ids_are_generated() {
        let s = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"x\",\"arguments\":\"{}\"}}]}}]}\n\n\
                 data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"y\",\"arguments\":{\"k\":1}}}]}}]}\n\n\
                 data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":5,\"function\":{\"name\":\"z\"}}]}}]}\n\n\
                 data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
        let (r, deltas) = parse(s, 9);
        let m = r.unwrap();
        let calls = m.tool_calls();
        assert_eq!(calls.len(), 3);
        assert_eq!((calls[0].id.as_str(), calls[0].name.as_str()), ("a", "x"));
        assert_eq!(calls[1].arguments, json!({"k": 1}));
        assert!(!calls[2].id.is_empty());
        // Tool calls with a plain "stop" still need running.
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_well_formed(&deltas, 3);
    }

    #[test]
    fn in_stream_errors_map_to_provider_errors() {
        let s = "data: {\"error\":{\"message\":\"upstream failed\",\"code\":502}}\n\n";
        match parse(s, 100).0 {
            Err(ProviderError::Http {
                status, message, ..
            }) => {
                assert_eq!(status, 502);
                assert_eq!(message, "upstream failed");
            }
            other => panic!("{other:?}"),
        }
        let s = "data: {\"error\":{\"message\":\"bad\",\"type\":\"invalid_request_error\"}}\n\n";
        assert!(matches!(parse(s, 100).0, Err(ProviderError::Other(m)) if m == "bad"));
        let s = "data: {\"error\":{\"message\":\"oops\",\"type\":\"server_error\"}}\n\n";
        assert!(parse(s, 100).0.unwrap_err().is_retryable());
    }

    #[test]
    fn content_filter_is_an_error() {
        let s = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"content_filter\"}]}\n\ndata: [DONE]\n\n";
        assert!(matches!(parse(s, 100).0, Err(ProviderError::Other(_))));
    }

    #[test]
    fn body_has_pi_fields() {
        let mut req = request("http://h/v1");
        let body = build_body(&req);
        assert_eq!(body["model"], "test-model");
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["max_completion_tokens"], 4096);
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "You are pi."})
        );
        assert_eq!(
            body["messages"][1],
            json!({"role": "user", "content": "list files"})
        );
        assert_eq!(body["tools"][0]["type"], "function");
        assert_eq!(body["tools"][0]["function"]["name"], "read");
        assert!(body["tools"][0]["function"]["parameters"].is_object());
        assert!(body.get("reasoning_effort").is_none());

        req.model.reasoning = true;
        req.thinking = ThinkingLevel::Medium;
        req.model.compat = json!({"supportsDeveloperRole": true, "maxTokensField": "max_tokens"});
        let body = build_body(&req);
        assert_eq!(body["reasoning_effort"], "medium");
        assert_eq!(body["messages"][0]["role"], "developer");
        assert_eq!(body["max_tokens"], 4096);
        assert!(body.get("max_completion_tokens").is_none());
    }

    #[test]
    fn history_converts_tool_calls_results_and_images() {
        let mut req = request("http://h");
        let mut a = AssistantMessage::empty("openai-completions", "p", "m");
        a.stop_reason = StopReason::ToolUse;
        a.content = vec![
            Content::Thinking {
                thinking: "private".into(),
                signature: None,
            },
            Content::ToolCall(ToolCall {
                thought_signature: None,
                id: "call_1".into(),
                name: "read".into(),
                arguments: json!({"path": "a.png"}),
            }),
        ];
        req.messages = vec![
            Message::User(UserMessage {
                content: UserContent::Blocks(vec![
                    Content::text("look"),
                    Content::Image {
                        data: "QUJD".into(),
                        mime_type: "image/png".into(),
                    },
                ]),
                timestamp: 0,
            }),
            Message::Assistant(a),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "call_1".into(),
                tool_name: "read".into(),
                content: vec![Content::Image {
                    data: "REVG".into(),
                    mime_type: "image/png".into(),
                }],
                details: None,
                is_error: false,
                structured_content: None,
                usage: None,
                duration_ms: None,
                timestamp: 0,
            }),
        ]
        .into_iter()
        .map(Arc::new)
        .collect();
        let body = build_body(&req);
        let msgs = body["messages"].as_array().expect("messages");
        assert_eq!(
            msgs[1]["content"][1]["image_url"]["url"],
            "data:image/png;base64,QUJD"
        );
        assert_eq!(msgs[2]["role"], "assistant");
        assert_eq!(msgs[2]["content"], Value::Null);
        assert_eq!(msgs[2]["tool_calls"][0]["id"], "call_1");
        assert_eq!(
            msgs[2]["tool_calls"][0]["function"]["arguments"],
            "{\"path\":\"a.png\"}"
        );
        assert_eq!(
            msgs[3],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "(see attached image)"})
        );
        assert_eq!(msgs[4]["role"], "user");
        assert_eq!(
            msgs[4]["content"][1]["image_url"]["url"],
            "data:image/png;base64,REVG"
        );
        assert_eq!(msgs.len(), 5);
    }

    #[derive(Default)]
    struct RecordingHooks {
        seen_headers: Mutex<Vec<BTreeMap<String, String>>>,
        statuses: Mutex<Vec<u16>>,
    }

    #[async_trait]
    impl ProviderHooks for RecordingHooks {
        async fn before_provider_request(&self, mut payload: Value) -> Value {
            payload["hooked"] = json!(true);
            payload
        }
        async fn before_provider_headers(
            &self,
            mut headers: BTreeMap<String, String>,
        ) -> BTreeMap<String, String> {
            self.seen_headers.lock().unwrap().push(headers.clone());
            headers.insert("x-hook".into(), "1".into());
            headers
        }
        async fn after_provider_response(&self, status: u16, _h: &BTreeMap<String, String>) {
            self.statuses.lock().unwrap().push(status);
        }
    }

    #[tokio::test]
    async fn http_round_trip_through_hooks() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(
                ResponseTemplate::new(200).set_body_raw(FIXTURE.as_bytes(), "text/event-stream"),
            )
            .mount(&server)
            .await;
        let mut req = request(&format!("{}/v1/", server.uri()));
        req.model.headers.insert("X-Custom".into(), "c".into());
        let hooks = Arc::new(RecordingHooks::default());
        let (mut ctx, mut rx) = context();
        ctx.hooks = hooks.clone();
        let m = OpenAiCompletions::new(crate::provider::http::client())
            .stream(&req, &ctx)
            .await
            .unwrap();
        check_fixture_message(&m);
        assert_well_formed(&drain(&mut rx), 3);

        let received = server.received_requests().await.unwrap();
        let r = &received[0];
        assert_eq!(r.headers.get("authorization").unwrap(), "Bearer sk-test");
        assert_eq!(r.headers.get("x-custom").unwrap(), "c");
        assert_eq!(r.headers.get("x-hook").unwrap(), "1");
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["hooked"], true);
        assert_eq!(body["model"], "test-model");

        let seen = hooks.seen_headers.lock().unwrap();
        assert!(seen[0].contains_key("x-custom"));
        assert_eq!(
            seen[0]["authorization"],
            crate::provider::headers::REDACTED,
            "hooks must not see the key"
        );
        assert_eq!(*hooks.statuses.lock().unwrap(), vec![200]);
    }

    #[tokio::test]
    async fn http_error_status_maps_with_retry_after() {
        let server = MockServer::start().await;
        let big = "x".repeat(200_000);
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(429)
                    .insert_header("retry-after", "3")
                    .set_body_string(format!("rate limited {big}")),
            )
            .mount(&server)
            .await;
        let (ctx, _rx) = context();
        let err = OpenAiCompletions::new(crate::provider::http::client())
            .stream(&request(&server.uri()), &ctx)
            .await
            .unwrap_err();
        match err {
            ProviderError::Http {
                status,
                message,
                retry_after_ms,
            } => {
                assert_eq!(status, 429);
                assert!(message.starts_with("rate limited"));
                assert!(message.len() <= crate::provider::stream::MAX_ERROR_BODY);
                assert_eq!(retry_after_ms, Some(3000));
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn refused_connection_is_a_connection_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let (ctx, _rx) = context();
        let err = OpenAiCompletions::new(crate::provider::http::client())
            .stream(&request(&format!("http://{addr}")), &ctx)
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::Connection(_)), "{err:?}");
    }

    #[tokio::test]
    async fn cancellation_aborts_a_pending_request() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
            .mount(&server)
            .await;
        let (ctx, _rx) = context();
        let cancel = ctx.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cancel.cancel();
        });
        let err = OpenAiCompletions::new(crate::provider::http::client())
            .stream(&request(&server.uri()), &ctx)
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::Aborted));
    }

    #[tokio::test]
    async fn cancellation_aborts_mid_stream() {
        // A server that sends one chunk and then stalls forever.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut sock, _) = listener.accept().await.unwrap();
            let mut buf = vec![0u8; 65536];
            let _ = sock.read(&mut buf).await;
            let chunk = "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n";
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n",
                chunk.len()
            );
            sock.write_all(head.as_bytes()).await.unwrap();
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        let (ctx, mut rx) = context();
        let cancel = ctx.cancel.clone();
        let task = tokio::spawn(async move {
            OpenAiCompletions::new(crate::provider::http::client())
                .stream(&request(&format!("http://{addr}")), &ctx)
                .await
        });
        // Wait for the first delta, then cancel.
        loop {
            if let Some(AssistantDelta::TextDelta { .. }) = rx.recv().await {
                break;
            }
        }
        cancel.cancel();
        let r = tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .unwrap()
            .unwrap();
        assert!(matches!(r, Err(ProviderError::Aborted)));
    }
}
