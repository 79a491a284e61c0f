//! The `anthropic-messages` wire API: streaming Messages with tool use and extended thinking.
//!
//! Anthropic addresses content blocks by index and frames every block with explicit start and
//! stop events, so the parser maps those indices onto the message's content and lets the
//! shared [`MessageBuilder`] emit pi's deltas. Thinking blocks keep their signature so they can
//! be sent back verbatim, which the API requires when a thinking turn continues after tool use.

use std::collections::HashMap;

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::mpsc;

use super::anthropic_body;
use super::anthropic_params;
use super::anthropic_system::native_tool_changes;
use super::copilot_headers;
use super::session_affinity;
use super::sse::SseEvent;
use super::stream::{
    join_url, sse_request, stream_call, Flow, MessageBuilder, RequestBody, StreamEnd, StreamParser,
};
use super::{CallContext, Model, Provider, ProviderError, Request};
use crate::delta::AssistantDelta;
use crate::message::{AssistantMessage, StopReason};

pub const API_VERSION: &str = "2023-06-01";

pub struct AnthropicMessages {
    client: reqwest::Client,
}

impl AnthropicMessages {
    pub fn new(client: reqwest::Client) -> Self {
        AnthropicMessages { client }
    }
}

#[async_trait]
impl Provider for AnthropicMessages {
    fn api(&self) -> &'static str {
        "anthropic-messages"
    }

    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        let auth = req.resolved_auth().await?;
        let key = auth.key.as_deref();
        let copilot = copilot_headers::is_copilot(&req.model);
        let login = key.filter(|k| !copilot && is_subscription_token(k));
        let replayed = anthropic_body::replayed(req);
        let (body, plan) = anthropic_body::body(req, &replayed, login.is_some())?;
        let body = RequestBody::of(&body, ctx)?;
        // 1.6's SDK posts to the beta endpoint, asking for JSON errors.
        let url = format!("{}?beta=true", messages_url(auth.base_url(&req.model)));
        let mut http = sse_request(url, body);
        http.header("accept", "application/json");
        http.header("anthropic-version", API_VERSION);
        http.header("anthropic-dangerous-direct-browser-access", "true");
        let betas = anthropic_params::betas(req, login.is_some(), native_tool_changes(req));
        if !betas.is_empty() {
            http.header("anthropic-beta", &betas.join(","));
        }
        if login.is_none() && !copilot {
            session_affinity::apply(&mut http, req, session_affinity::Api::Anthropic);
        }
        match login {
            // A Claude Pro/Max login: a bearer token, sent as Claude Code sends it.
            Some(token) => {
                http.credential_header("authorization", &format!("Bearer {token}"));
                http.header("user-agent", CLAUDE_CODE_USER_AGENT);
                http.header("x-app", "cli");
            }
            // Copilot takes its token as a bearer, as 1.6's client sends it there.
            None if copilot => {
                if let Some(token) = key.filter(|k| !k.is_empty()) {
                    http.credential_header("authorization", &format!("Bearer {token}"));
                }
                copilot_headers::apply(&mut http, req);
            }
            None => http.api_key(&req.model, key, "x-api-key", str::to_string),
        }
        let tools: Option<Vec<String>> =
            login.map(|_| req.tools.iter().map(|t| t.name.clone()).collect());
        let parser = || AnthropicParser::new(&req.model, ctx.deltas.clone()).named_from(tools);
        let mut message = stream_call(&self.client, http, ctx, &req.model, parser).await?;
        // The effort this reply was asked for, which the next request's markers repeat.
        message.provider_thinking_level = plan.effort_markers;
        Ok(message)
    }
}

/// `{baseUrl}/v1/messages`, without doubling a `/v1` the configured base already has.
pub fn messages_url(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    if base.ends_with("/v1") {
        join_url(base, "messages")
    } else {
        join_url(base, "v1/messages")
    }
}

/// Anthropic accepts tool ids matching `^[a-zA-Z0-9_-]{1,64}$`; ids from other providers
/// (`functions.read:0`, long UUIDs) are mapped onto that, consistently for call and result.
pub fn sanitize_tool_id(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if s.is_empty() {
        "tool_call".into()
    } else {
        s
    }
}

/// The JSON request body (before `before_provider_request`), as hooks see it.
pub fn build_body(req: &Request) -> Value {
    let replayed = anthropic_body::replayed(req);
    let login = !copilot_headers::is_copilot(&req.model)
        && (req.model.auth.token.is_some()
            || req.api_key.as_deref().is_some_and(is_subscription_token));
    anthropic_body::body(req, &replayed, login)
        .ok()
        .and_then(|(body, _)| serde_json::to_value(body).ok())
        .unwrap_or(Value::Null)
}

/// Whether `key` is a Claude Pro/Max login's access token rather than an API key (how pi 1.6
/// tells them apart).
pub fn is_subscription_token(key: &str) -> bool {
    key.contains("sk-ant-oat")
}

/// The Claude Code version pi 1.6 presents itself as.
const CLAUDE_CODE_USER_AGENT: &str = "claude-cli/2.1.322";

/// Turns Messages stream events into a message.
pub struct AnthropicParser {
    b: MessageBuilder,
    /// Anthropic block index → content index. Unknown block kinds (redacted thinking, server
    /// tools) are not mapped, so their deltas are skipped without shifting later indices.
    blocks: HashMap<u64, usize>,
    stop_reason: Option<String>,
    /// The request's tool names, when it offered them under Claude Code's names: a call is
    /// named back as the tool offered it.
    offered: Option<Vec<String>>,
}

impl AnthropicParser {
    /// Emits `start` on `deltas`.
    pub fn new(model: &Model, deltas: mpsc::UnboundedSender<AssistantDelta>) -> Self {
        AnthropicParser {
            b: MessageBuilder::new(model, deltas),
            blocks: HashMap::new(),
            stop_reason: None,
            offered: None,
        }
    }

    /// Names tool calls back from Claude Code's names to the `offered` tools'.
    pub fn named_from(mut self, offered: Option<Vec<String>>) -> Self {
        self.offered = offered;
        self
    }

    /// Applies whichever usage fields the event carries; `message_delta` repeats some of them
    /// with final values.
    fn on_usage(&mut self, u: &Value) {
        let get = |k: &str| u.get(k).and_then(Value::as_u64);
        if let Some(v) = get("input_tokens") {
            self.b.usage.input = v;
        }
        if let Some(v) = get("output_tokens") {
            self.b.usage.output = v;
        }
        if let Some(v) = get("cache_read_input_tokens") {
            self.b.usage.cache_read = v;
        }
        if let Some(v) = get("cache_creation_input_tokens") {
            self.b.usage.cache_write = v;
        }
        if let Some(v) = u
            .pointer("/cache_creation/ephemeral_1h_input_tokens")
            .and_then(Value::as_u64)
        {
            self.b.usage.cache_write_1h = Some(v);
        }
        // Reasoning tokens are a part of the output tokens, reported in `message_delta`.
        if let Some(v) = u
            .pointer("/output_tokens_details/thinking_tokens")
            .and_then(Value::as_u64)
        {
            self.b.usage.reasoning = Some(v);
        }
        self.b.usage_reported = true;
    }

    fn on_block_start(&mut self, index: u64, block: &Value) {
        let idx = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let idx = self.b.start_text();
                if let Some(t) = block.get("text").and_then(Value::as_str) {
                    if !t.is_empty() {
                        self.b.text_delta(idx, t);
                    }
                }
                idx
            }
            Some("thinking") => {
                let idx = self.b.start_thinking();
                if let Some(t) = block.get("thinking").and_then(Value::as_str) {
                    if !t.is_empty() {
                        self.b.thinking_delta(idx, t);
                    }
                }
                if let Some(s) = block.get("signature").and_then(Value::as_str) {
                    if !s.is_empty() {
                        self.b.signature_delta(idx, s);
                    }
                }
                idx
            }
            Some("tool_use") => {
                let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let name = self
                    .offered
                    .as_ref()
                    .and_then(|tools| tools.iter().find(|t| t.eq_ignore_ascii_case(name)))
                    .map_or(name, String::as_str);
                let idx = self.b.start_tool_call(id, name);
                // Input normally streams as JSON deltas after an empty `{}`; a complete input
                // given up front is used as the arguments.
                if let Some(input) = block
                    .get("input")
                    .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
                {
                    self.b.tool_args_delta(idx, &input.to_string());
                }
                idx
            }
            _ => return,
        };
        self.blocks.insert(index, idx);
    }

    fn on_block_delta(&mut self, index: u64, delta: &Value) {
        let Some(&idx) = self.blocks.get(&index) else {
            return;
        };
        let s = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or_default();
        match delta.get("type").and_then(Value::as_str) {
            Some("text_delta") => self.b.text_delta(idx, s("text")),
            Some("thinking_delta") => self.b.thinking_delta(idx, s("thinking")),
            Some("signature_delta") => self.b.signature_delta(idx, s("signature")),
            Some("input_json_delta") => {
                let part = s("partial_json");
                if !part.is_empty() {
                    self.b.tool_args_delta(idx, part);
                }
            }
            _ => {}
        }
    }
}

/// An `error` event: overloaded and server errors keep an HTTP-like status so they are retried.
fn stream_error(v: &Value) -> ProviderError {
    let err = v.get("error").unwrap_or(v);
    let kind = err.get("type").and_then(Value::as_str).unwrap_or("error");
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| err.to_string());
    let status = match kind {
        "overloaded_error" => Some(529),
        "api_error" => Some(500),
        "rate_limit_error" => Some(429),
        "timeout_error" => Some(504),
        _ => None,
    };
    match status {
        Some(status) => ProviderError::Http {
            status,
            message,
            retry_after_ms: None,
        },
        None => ProviderError::Other(format!("{kind}: {message}")),
    }
}

impl StreamParser for AnthropicParser {
    fn flush(&mut self) {
        self.b.flush();
    }

    fn on_event(&mut self, ev: SseEvent) -> Result<Flow, ProviderError> {
        if ev.data.trim().is_empty() {
            return Ok(Flow::Continue);
        }
        let v: Value = serde_json::from_str(&ev.data)
            .map_err(|e| ProviderError::Protocol(format!("invalid JSON event: {e}")))?;
        // The payload's own `type` is authoritative; the SSE `event:` name mirrors it.
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .or(ev.event.as_deref())
            .unwrap_or_default();
        let index = v.get("index").and_then(Value::as_u64);
        match kind {
            "message_start" => {
                if let Some(id) = v.pointer("/message/id").and_then(Value::as_str) {
                    self.b.set_response_id(id);
                }
                if let Some(u) = v.pointer("/message/usage") {
                    // pi 1.6 starts the hour-long cache writes at 0 here when unreported.
                    self.b.usage.cache_write_1h.get_or_insert(0);
                    self.on_usage(u);
                }
            }
            "content_block_start" => {
                if let (Some(i), Some(block)) = (index, v.get("content_block")) {
                    self.on_block_start(i, block);
                }
            }
            "content_block_delta" => {
                if let (Some(i), Some(delta)) = (index, v.get("delta")) {
                    self.on_block_delta(i, delta);
                }
            }
            "content_block_stop" => {
                if let Some(idx) = index.and_then(|i| self.blocks.get(&i)) {
                    self.b.end_block(*idx);
                }
            }
            "message_delta" => {
                if let Some(reason) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.b.stop_reason = Some(match reason {
                        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
                        "tool_use" => StopReason::ToolUse,
                        // end_turn, stop_sequence, pause_turn, and anything newer.
                        _ => StopReason::Stop,
                    });
                    self.b.set_raw_stop_reason(reason);
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(u) = v.get("usage") {
                    self.on_usage(u);
                }
            }
            "message_stop" => return Ok(Flow::Done),
            "error" => return Err(stream_error(&v)),
            // ping and event types added later.
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn finish(self, end: StreamEnd) -> Result<AssistantMessage, ProviderError> {
        match (end, self.stop_reason.as_deref()) {
            // A stop reason means the model finished; only the closing event went missing.
            (StreamEnd::Eof, None) => Err(ProviderError::StreamDropped(
                "stream ended before message_stop".into(),
            )),
            (_, Some("refusal")) => Err(ProviderError::Other(
                "the model declined to respond (stop_reason: refusal)".into(),
            )),
            _ => Ok(self.b.finish(StopReason::Stop)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;
    use crate::message::{Content, Message, ToolCall};
    use crate::provider::stream::test_support::*;
    use crate::provider::ToolSpec;

    const FIXTURE: &str = include_str!("../../fixtures/providers/anthropic_tool_call.sse");

    fn request(base_url: &str) -> Request {
        Request {
            model: model("anthropic-messages", base_url),
            api_key: Some("sk-ant-test".into()),
            system_prompt: "You are pi.".into(),
            messages: vec![Message::user("read main").into()],
            tools: vec![ToolSpec {
                name: "read".into(),
                description: "Read a file".into(),
                parameters: json!({"type": "object"}),
                constrained_sampling: None,
            }]
            .into(),
            thinking: crate::provider::ThinkingLevel::Off,
            session_id: None,
        }
    }

    fn parse(
        stream: &str,
        chunk: usize,
    ) -> (Result<AssistantMessage, ProviderError>, Vec<AssistantDelta>) {
        let (ctx, mut rx) = context();
        let m = model("anthropic-messages", "http://h");
        let r = parse_in_chunks(
            stream.as_bytes(),
            chunk,
            AnthropicParser::new(&m, ctx.deltas.clone()),
        );
        (r, drain(&mut rx))
    }

    fn check_fixture_message(m: &AssistantMessage) {
        assert_eq!(m.api, "anthropic-messages");
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_eq!(
            m.content,
            vec![
                Content::Thinking {
                    thinking: "The user wants main.rs.".into(),
                    signature: Some("EqQBCkYIARgCKkBsig==".into()),
                },
                Content::text("I'll read the file."),
                Content::ToolCall(ToolCall {
                    thought_signature: None,
                    id: "toolu_01A09q90qw90lq917835lq9".into(),
                    name: "read".into(),
                    arguments: json!({"path": "src/main.rs", "limit": 50}),
                }),
            ]
        );
        assert_eq!(m.usage.input, 472);
        assert_eq!(m.usage.output, 89);
        assert_eq!(m.usage.cache_read, 1024);
        assert_eq!(m.usage.cache_write, 200);
        assert_eq!(m.usage.total_tokens, 472 + 89 + 1024 + 200);
    }

    #[test]
    fn fixture_message_is_priced_with_its_cache_tokens() {
        let (ctx, _rx) = context();
        let mut m = model("anthropic-messages", "http://h");
        m.cost = crate::provider::cost::CostRates {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: Vec::new(),
        };
        let parser = AnthropicParser::new(&m, ctx.deltas.clone());
        let msg = parse_in_chunks(FIXTURE.as_bytes(), 17, parser).unwrap();
        let c = &msg.usage.cost;
        // usage 472 in, 89 out, 1024 cache read, 200 cache write (see check_fixture_message).
        assert_eq!(c.input, 3.0 / 1e6 * 472.0);
        assert_eq!(c.output, 15.0 / 1e6 * 89.0);
        assert_eq!(c.cache_read, 0.3 / 1e6 * 1024.0);
        assert_eq!(c.cache_write, 3.75 / 1e6 * 200.0);
        assert!((c.total - 0.0038082).abs() < 1e-12, "{c:?}");
    }

    #[test]
    fn fixture_parses_whole_and_in_one_byte_chunks() {
        for size in [FIXTURE.len(), 1, 13] {
            let (r, deltas) = parse(FIXTURE, size);
            check_fixture_message(&r.unwrap());
            assert_well_formed(&deltas, 3);
        }
    }

    #[test]
    fn fixture_split_at_every_byte_parses_identically() {
        let bytes = FIXTURE.as_bytes();
        let m = model("anthropic-messages", "http://h");
        for i in 0..=bytes.len() {
            let (ctx, mut rx) = context();
            let r = parse_chunk_list(
                &[&bytes[..i], &bytes[i..]],
                AnthropicParser::new(&m, ctx.deltas.clone()),
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
                "thinking_start",
                "thinking_delta",
                "thinking_end",
                "text_start",
                "text_delta",
                "text_delta",
                "text_end",
                "toolcall_start",
                "toolcall_delta",
                "toolcall_delta",
                "toolcall_end",
                "done"
            ]
        );
    }

    #[test]
    fn missing_message_stop_without_stop_reason_is_dropped() {
        let cut = FIXTURE.find("event: message_delta").unwrap();
        let (r, _) = parse(&FIXTURE[..cut], 64);
        assert!(matches!(r, Err(ProviderError::StreamDropped(_))));
    }

    #[test]
    fn error_events_map_to_provider_errors() {
        let s = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
        match parse(s, 10).0 {
            Err(e @ ProviderError::Http { status: 529, .. }) => assert!(e.is_retryable()),
            other => panic!("{other:?}"),
        }
        let s = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}\n\n";
        assert!(matches!(parse(s, 10).0, Err(ProviderError::Other(_))));
    }

    #[test]
    fn unknown_blocks_are_skipped_without_shifting_indices() {
        let s = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n\
                 event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"xx\"}}\n\n\
                 event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
                 event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
                 event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n\
                 event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n\
                 event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":7}}\n\n";
        // No message_stop, but a stop reason arrived: complete.
        let (r, deltas) = parse(s, 5);
        let m = r.unwrap();
        assert_eq!(m.content, vec![Content::text("ok")]);
        assert_eq!(m.stop_reason, StopReason::Length);
        assert_eq!(m.usage.output, 7);
        assert_well_formed(&deltas, 1);
    }

    #[test]
    fn urls_do_not_double_v1() {
        assert_eq!(
            messages_url("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(messages_url("http://proxy/v1/"), "http://proxy/v1/messages");
    }

    #[tokio::test]
    async fn http_round_trip() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .and(header("x-api-key", "sk-ant-test"))
            .and(header("anthropic-version", API_VERSION))
            .respond_with(
                ResponseTemplate::new(200).set_body_raw(FIXTURE.as_bytes(), "text/event-stream"),
            )
            .mount(&server)
            .await;
        let (ctx, mut rx) = context();
        let m = AnthropicMessages::new(crate::provider::http::client())
            .stream(&request(&server.uri()), &ctx)
            .await
            .unwrap();
        check_fixture_message(&m);
        assert_well_formed(&drain(&mut rx), 3);
    }

    #[tokio::test]
    async fn http_overloaded_is_retryable() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(529).set_body_string(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ))
            .mount(&server)
            .await;
        let (ctx, _rx) = context();
        let err = AnthropicMessages::new(crate::provider::http::client())
            .stream(&request(&server.uri()), &ctx)
            .await
            .unwrap_err();
        assert!(err.is_retryable());
        assert!(matches!(err, ProviderError::Http { status: 529, .. }));
    }

    #[tokio::test]
    async fn cancellation_aborts() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
            .mount(&server)
            .await;
        let (ctx, _rx) = context();
        ctx.cancel.cancel();
        let err = AnthropicMessages::new(crate::provider::http::client())
            .stream(&request(&server.uri()), &ctx)
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::Aborted));
    }
}
