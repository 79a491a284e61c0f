//! The parts every HTTP wire API shares: sending the request through the provider hooks,
//! mapping HTTP failures to [`ProviderError`], reading the body as SSE with cancellation and an
//! idle timeout, and building the [`AssistantMessage`] while emitting [`AssistantDelta`]s.
//!
//! Keeping these in one place means both APIs order deltas the same way, redact credentials
//! for hooks the same way ([`super::headers`]) and classify errors the same way, so the retry layer and the event
//! stream see one behaviour regardless of the model behind it. Each API only supplies a
//! [`StreamParser`] that turns its events into [`MessageBuilder`] calls, plus its own request
//! body.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::cost::CostRates;
use super::headers::RequestHeaders;
use super::sse::{SseDecoder, SseEvent};
use super::{CallContext, Model, ProviderError};
use crate::delta::AssistantDelta;
use crate::message::{
    now_ms, AssistantMessage, Content, Message, StopReason, ToolCall, ToolResultMessage, Usage,
};

/// How much of an error response body is kept for the error message.
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// A stream that sends nothing (not even a keep-alive) for this long is treated as dropped, so
/// a silently dead connection ends in a retry instead of hanging the turn forever. Generous
/// because reasoning models may think for minutes before their first byte.
pub const STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// An error body that trickles in is cut short after this long without data.
const ERROR_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `f` unless the call is cancelled first.
pub async fn cancellable<F: Future>(
    cancel: &CancellationToken,
    f: F,
) -> Result<F::Output, ProviderError> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(ProviderError::Aborted),
        v = f => Ok(v),
    }
}

/// An HTTP request before the hooks have seen it.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    pub url: String,
    /// Every header with its real value; hooks see the credentials among them redacted.
    pub headers: RequestHeaders,
    pub body: RequestBody,
}

/// A request body: JSON for `before_provider_request` hooks to rewrite, or, when no hook
/// would, the bytes written straight from the provider's borrowed body.
#[derive(Debug, Clone)]
pub enum RequestBody {
    Json(Value),
    Bytes(Vec<u8>),
}

impl RequestBody {
    /// `body` as this call needs it.
    pub fn of<T: serde::Serialize>(body: &T, ctx: &CallContext) -> Result<Self, ProviderError> {
        let encode =
            |e: serde_json::Error| ProviderError::Other(format!("cannot encode request body: {e}"));
        if ctx.hooks.rewrites_request() {
            serde_json::to_value(body)
                .map(RequestBody::Json)
                .map_err(encode)
        } else {
            // Sized from the previous body: each request carries the conversation so far, so
            // it is a little longer than the last, and growing from empty copied it ~7 times.
            static LAST_LEN: std::sync::atomic::AtomicUsize =
                std::sync::atomic::AtomicUsize::new(0);
            let hint = LAST_LEN.load(std::sync::atomic::Ordering::Relaxed);
            let mut bytes = Vec::with_capacity(hint + hint / 4 + 1024);
            serde_json::to_writer(&mut bytes, body).map_err(encode)?;
            LAST_LEN.store(bytes.len(), std::sync::atomic::Ordering::Relaxed);
            Ok(RequestBody::Bytes(bytes))
        }
    }
}

impl HttpRequest {
    pub fn new(url: String, body: RequestBody) -> Self {
        HttpRequest {
            url,
            headers: RequestHeaders::default(),
            body,
        }
    }

    /// Adds a header (a credential if its name says so, as `authorization` does).
    pub fn header(&mut self, name: &str, value: &str) {
        self.headers.set(name, value);
    }

    /// Adds a header carrying the API key, whatever its name.
    pub fn credential_header(&mut self, name: &str, value: &str) {
        self.headers.set_credential(name, value);
    }

    /// Adds the API key as the API sends it (`name: value`, `value` made from the key), or
    /// where the model's credential says it goes instead; nothing when there is no key.
    pub fn api_key(
        &mut self,
        model: &Model,
        key: Option<&str>,
        name: &str,
        value: impl Fn(&str) -> String,
    ) {
        let Some(key) = key.filter(|k| !k.is_empty()) else {
            return;
        };
        match model.auth.key_header {
            Some(header) => self.credential_header(header, &format!("Bearer {key}")),
            None => self.credential_header(name, &value(key)),
        }
    }

    /// Adds the model's configured headers, which override the API defaults.
    pub fn model_headers(&mut self, model: &Model) {
        self.headers.set_configured(&model.headers);
    }
}

/// A streamed call's request, as both wire APIs make it: `body` POSTed to `url` as JSON,
/// answered with server-sent events. The API's own headers and the credential come next.
pub fn sse_request(url: String, body: RequestBody) -> HttpRequest {
    let mut http = HttpRequest::new(url, body);
    http.header("content-type", "application/json");
    http.header("accept", "text/event-stream");
    http
}

/// Sends `http` with the model's configured headers (which override the API's) and streams
/// the answer into the parser `parser` makes. The parser is made once the response is in,
/// because making it announces the message (`start`): a request that fails starts none.
pub async fn stream_call<P: StreamParser>(
    client: &reqwest::Client,
    mut http: HttpRequest,
    ctx: &CallContext,
    model: &Model,
    parser: impl FnOnce() -> P,
) -> Result<AssistantMessage, ProviderError> {
    http.model_headers(model);
    let resp = send(client, http, ctx).await?;
    run_stream(resp, ctx, model, parser()).await
}

/// Joins `base` and `path` without doubling or dropping the slash.
pub fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// Sends `request` and shows the response's status and headers to the hooks: the response,
/// its status and its headers. The client has no total timeout (it would cut long streams),
/// so waiting for the response head is bounded here; slow local servers may take minutes
/// over a long prompt.
pub(super) async fn send_reported(
    request: reqwest::RequestBuilder,
    ctx: &CallContext,
) -> Result<(reqwest::Response, u16, BTreeMap<String, String>), ProviderError> {
    let cancel = &ctx.cancel;
    let resp = cancellable(
        cancel,
        tokio::time::timeout(STREAM_IDLE_TIMEOUT, request.send()),
    )
    .await?
    .map_err(|_| {
        ProviderError::Connection(format!(
            "no response within {} s",
            STREAM_IDLE_TIMEOUT.as_secs()
        ))
    })?
    .map_err(|e| ProviderError::Connection(error_chain(&e)))?;
    let status = resp.status().as_u16();
    let resp_headers = from_header_map(resp.headers());
    cancellable(
        cancel,
        ctx.hooks.after_provider_response(status, &resp_headers),
    )
    .await?;
    Ok((resp, status, resp_headers))
}

/// Sends the request through the hooks and returns the response if its status is a success.
pub async fn send(
    client: &reqwest::Client,
    req: HttpRequest,
    ctx: &CallContext,
) -> Result<reqwest::Response, ProviderError> {
    let cancel = &ctx.cancel;
    // Headers first, then the body, in the seeds' order: a hook that tags a request in
    // `before_provider_headers` sees that same request's payload next.
    let shown = req.headers.for_hooks();
    let edited = cancellable(cancel, ctx.hooks.before_provider_headers(shown)).await?;
    let headers = req.headers.after_hooks(edited);
    let header_map = to_header_map(&headers)?;
    let body = match req.body {
        RequestBody::Json(v) => {
            let v = cancellable(cancel, ctx.hooks.before_provider_request(v)).await?;
            serde_json::to_vec(&v)
                .map_err(|e| ProviderError::Other(format!("cannot encode request body: {e}")))?
        }
        RequestBody::Bytes(b) => b,
    };

    let request = match parsed_url(&req.url) {
        Some(url) => client.post(url),
        // reqwest reports what is wrong with it when the request is sent.
        None => client.post(&req.url),
    };
    let request = request.headers(header_map).body(body);
    let (resp, status, resp_headers) = send_reported(request, ctx).await?;
    if status >= 400 {
        let retry_after_ms = retry_after_ms(&resp_headers);
        let message = read_bounded(resp, cancel, MAX_ERROR_BODY).await?;
        return Err(ProviderError::Http {
            status,
            message: message.trim().to_string(),
            retry_after_ms,
        });
    }
    Ok(resp)
}

/// `url` parsed, remembering the last one: every turn of a run posts to the same endpoint,
/// and parsing it (the host through IDNA) costs more than the rest of the request's head.
/// `None` when it does not parse.
fn parsed_url(url: &str) -> Option<reqwest::Url> {
    static LAST: std::sync::Mutex<Option<(String, reqwest::Url)>> = std::sync::Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((text, parsed)) = last.as_ref() {
        if text == url {
            return Some(parsed.clone());
        }
    }
    let parsed = reqwest::Url::parse(url).ok()?;
    *last = Some((url.to_string(), parsed.clone()));
    Some(parsed)
}

pub(super) fn to_header_map(
    headers: &BTreeMap<String, String>,
) -> Result<HeaderMap, ProviderError> {
    let mut map = HeaderMap::with_capacity(headers.len());
    for (k, v) in headers {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| ProviderError::Other(format!("invalid HTTP header name {k:?}")))?;
        // The value is not echoed: it may be a secret.
        let value = HeaderValue::from_str(v)
            .map_err(|_| ProviderError::Other(format!("invalid value for HTTP header {k:?}")))?;
        map.insert(name, value);
    }
    Ok(map)
}

pub(super) fn from_header_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in headers {
        let v = String::from_utf8_lossy(v.as_bytes());
        out.entry(k.as_str().to_string())
            .and_modify(|prev| {
                prev.push_str(", ");
                prev.push_str(&v);
            })
            .or_insert_with(|| v.into_owned());
    }
    out
}

/// The server's requested delay: `retry-after-ms` (OpenAI) or `retry-after` in seconds.
/// HTTP-date values are ignored; the retry layer's own backoff applies then.
pub fn retry_after_ms(headers: &BTreeMap<String, String>) -> Option<u64> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        if ms.is_finite() && ms >= 0.0 {
            return Some(ms as u64);
        }
    }
    let secs = headers.get("retry-after")?.trim().parse::<f64>().ok()?;
    (secs.is_finite() && secs >= 0.0).then_some((secs * 1000.0) as u64)
}

/// Reads at most `limit` bytes of the body as (lossy) text.
pub(super) async fn read_bounded(
    mut resp: reqwest::Response,
    cancel: &CancellationToken,
    limit: usize,
) -> Result<String, ProviderError> {
    let mut buf = Vec::new();
    while buf.len() < limit {
        let next = cancellable(
            cancel,
            tokio::time::timeout(ERROR_BODY_TIMEOUT, resp.chunk()),
        );
        match next.await? {
            Ok(Ok(Some(chunk))) => {
                let take = chunk.len().min(limit - buf.len());
                buf.extend_from_slice(&chunk[..take]);
            }
            Ok(Ok(None)) => break,
            // The status already says what went wrong; a half-read body is still useful.
            Ok(Err(_)) | Err(_) => break,
        }
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// An error with its causes, because reqwest's top-level message ("error sending request")
/// hides the useful part (DNS, TLS, connection refused).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let c = cause.to_string();
        if !s.contains(&c) {
            s.push_str(": ");
            s.push_str(&c);
        }
        source = cause.source();
    }
    s
}

/// Whether the parser wants more events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Done,
}

/// How the stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// The parser saw the API's end marker.
    Complete,
    /// The body ended without one.
    Eof,
}

/// One wire API's event interpretation.
pub trait StreamParser {
    fn on_event(&mut self, ev: SseEvent) -> Result<Flow, ProviderError>;
    /// Sends the deltas parsed so far, with the usage known by now (see
    /// [`MessageBuilder::flush`]).
    fn flush(&mut self);
    /// Builds the final message, or explains why the stream was incomplete.
    fn finish(self, end: StreamEnd) -> Result<AssistantMessage, ProviderError>;
}

/// Who sees each raw event before the parser does (`provider_stream_event`), if anyone.
pub type Observer<'a> = Option<&'a (dyn Fn(&SseEvent) + Send + Sync)>;

/// Decodes one chunk and hands its events to the parser.
pub fn feed_chunk<P: StreamParser>(
    decoder: &mut SseDecoder,
    parser: &mut P,
    chunk: &[u8],
) -> Result<Flow, ProviderError> {
    feed_chunk_observed(decoder, parser, chunk, None)
}

/// [`feed_chunk`], showing each event to `observe` first.
fn feed_chunk_observed<P: StreamParser>(
    decoder: &mut SseDecoder,
    parser: &mut P,
    chunk: &[u8],
    observe: Observer<'_>,
) -> Result<Flow, ProviderError> {
    let events = decoder
        .feed(chunk)
        .map_err(|e| ProviderError::Protocol(e.to_string()))?;
    let mut flow = Ok(Flow::Continue);
    for ev in events {
        if let Some(observe) = observe {
            observe(&ev);
        }
        flow = parser.on_event(ev);
        if !matches!(flow, Ok(Flow::Continue)) {
            break;
        }
    }
    // What this read brought is sent at once, stamped with the usage it reported (pi 1.6's
    // provider, too, has parsed what it received before its events are written).
    parser.flush();
    flow
}

/// Ends the body: flushes the decoder and lets the parser judge completeness.
pub fn finish_stream<P: StreamParser>(
    decoder: SseDecoder,
    parser: P,
) -> Result<AssistantMessage, ProviderError> {
    finish_stream_observed(decoder, parser, None)
}

fn finish_stream_observed<P: StreamParser>(
    mut decoder: SseDecoder,
    mut parser: P,
    observe: Observer<'_>,
) -> Result<AssistantMessage, ProviderError> {
    let last = decoder
        .finish()
        .map_err(|e| ProviderError::Protocol(e.to_string()))?;
    if let Some(ev) = last {
        if let Some(observe) = observe {
            observe(&ev);
        }
        let flow = parser.on_event(ev);
        parser.flush();
        if flow? == Flow::Done {
            return parser.finish(StreamEnd::Complete);
        }
    }
    parser.finish(StreamEnd::Eof)
}

/// Reads the response body as SSE into `parser` until it is done, the body ends, the call is
/// cancelled or the connection stays silent for [`STREAM_IDLE_TIMEOUT`]. Each raw event goes
/// to the hooks first when one observes the stream (checked once: nobody listening costs
/// nothing per event).
pub async fn run_stream<P: StreamParser>(
    mut resp: reqwest::Response,
    ctx: &CallContext,
    model: &Model,
    mut parser: P,
) -> Result<AssistantMessage, ProviderError> {
    let hooks = ctx.hooks.clone();
    let show =
        move |ev: &SseEvent| hooks.provider_stream_event(model, ev.event.as_deref(), &ev.data);
    let observe: Observer<'_> = if ctx.hooks.observes_stream() {
        Some(&show)
    } else {
        None
    };
    let mut decoder = SseDecoder::new();
    loop {
        let next = cancellable(
            &ctx.cancel,
            tokio::time::timeout(STREAM_IDLE_TIMEOUT, resp.chunk()),
        )
        .await?;
        match next {
            Err(_) => {
                return Err(ProviderError::StreamDropped(format!(
                    "no data for {} s",
                    STREAM_IDLE_TIMEOUT.as_secs()
                )))
            }
            Ok(Err(e)) => return Err(ProviderError::StreamDropped(error_chain(&e))),
            Ok(Ok(Some(chunk))) => {
                if feed_chunk_observed(&mut decoder, &mut parser, &chunk, observe)? == Flow::Done {
                    return parser.finish(StreamEnd::Complete);
                }
            }
            Ok(Ok(None)) => return finish_stream_observed(decoder, parser, observe),
        }
    }
}

/// The kind of a content block under construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Text,
    Thinking,
    ToolCall,
}

#[derive(Debug)]
enum Block {
    Text {
        text: String,
        signature: Option<String>,
    },
    Thinking {
        text: String,
        signature: Option<String>,
    },
    ToolCall {
        id: String,
        name: String,
        /// Raw argument JSON as streamed; parsed when the block ends.
        args: String,
        parsed: Option<serde_json::Value>,
        signature: Option<String>,
    },
}

impl Block {
    fn kind(&self) -> BlockKind {
        match self {
            Block::Text { .. } => BlockKind::Text,
            Block::Thinking { .. } => BlockKind::Thinking,
            Block::ToolCall { .. } => BlockKind::ToolCall,
        }
    }
}

/// Builds one assistant message and emits pi's delta sequence for it: `start`, then for each
/// content block `*_start`, `*_delta`…, `*_end` with `contentIndex` = the block's index in
/// the final `content`, then `done`. Blocks are ended explicitly or, at the latest, in index
/// order by [`finish`](Self::finish), so every started block gets exactly one end.
pub struct MessageBuilder {
    tx: mpsc::UnboundedSender<AssistantDelta>,
    /// Deltas parsed from the current read, sent by [`flush`](Self::flush).
    pending: Vec<AssistantDelta>,
    blocks: Vec<Block>,
    open: Vec<bool>,
    message: AssistantMessage,
    /// Token counts as the provider reports them; priced by [`finish`](Self::finish).
    pub usage: Usage,
    /// Whether the provider has reported any usage yet: until it has, the message keeps pi's
    /// initial usage (zero, unpriced).
    pub usage_reported: bool,
    rates: CostRates,
    pub stop_reason: Option<StopReason>,
}

impl MessageBuilder {
    /// Starts the message and emits `start`.
    pub fn new(model: &Model, tx: mpsc::UnboundedSender<AssistantDelta>) -> Self {
        let b = MessageBuilder {
            tx,
            pending: Vec::new(),
            usage_reported: false,
            blocks: Vec::new(),
            open: Vec::new(),
            message: AssistantMessage::empty(&model.api, &model.provider, &model.id),
            usage: Usage::default(),
            rates: model.cost.clone(),
            stop_reason: None,
        };
        // `message_start` goes out as soon as the response does, not with the first deltas.
        let _ = b.tx.send(AssistantDelta::Start);
        b
    }

    fn emit(&mut self, d: AssistantDelta) {
        self.pending.push(d);
    }

    /// Sends the pending deltas, preceded by the usage as the provider has reported it so far
    /// (when any delta is pending), so each `message_update` carries the running counts.
    pub fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let usage = self.running_usage();
        // A dropped receiver means nobody renders deltas any more; the returned message is
        // still authoritative, so the stream goes on.
        let _ = self.tx.send(AssistantDelta::Usage(usage));
        for d in self.pending.drain(..) {
            let _ = self.tx.send(d);
        }
    }

    /// The usage reported so far, totalled and priced; pi's initial zero usage before any.
    fn running_usage(&self) -> Usage {
        if !self.usage_reported {
            return Usage::default();
        }
        let mut usage = self.usage.clone();
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write;
        self.rates.price(&mut usage);
        usage
    }

    /// The provider's own name for why it stopped (`tool_calls`, `end_turn`, …).
    pub fn set_raw_stop_reason(&mut self, reason: &str) {
        self.message.raw_stop_reason = Some(reason.to_string());
    }

    /// The provider's stop reason as set so far.
    pub fn raw_stop_reason(&self) -> Option<&str> {
        self.message.raw_stop_reason.as_deref()
    }

    fn push(&mut self, block: Block) -> usize {
        let idx = self.blocks.len();
        let d = match &block {
            Block::Text { .. } => AssistantDelta::TextStart { content_index: idx },
            Block::Thinking { .. } => AssistantDelta::ThinkingStart { content_index: idx },
            Block::ToolCall { id, name, .. } => AssistantDelta::ToolCallStart {
                content_index: idx,
                id: id.clone(),
                tool_name: name.clone(),
            },
        };
        self.blocks.push(block);
        self.open.push(true);
        self.emit(d);
        idx
    }

    /// The provider's response id (the first one seen wins; later chunks repeat it).
    pub fn set_response_id(&mut self, id: &str) {
        if self.message.response_id.is_none() && !id.is_empty() {
            self.message.response_id = Some(id.to_string());
        }
    }

    pub fn start_text(&mut self) -> usize {
        self.push(Block::Text {
            text: String::new(),
            signature: None,
        })
    }

    pub fn start_thinking(&mut self) -> usize {
        self.push(Block::Thinking {
            text: String::new(),
            signature: None,
        })
    }

    pub fn start_tool_call(&mut self, id: &str, name: &str) -> usize {
        self.push(Block::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            args: String::new(),
            parsed: None,
            signature: None,
        })
    }

    /// The kind of block `idx` if it exists and is still open.
    pub fn open_kind(&self, idx: usize) -> Option<BlockKind> {
        match self.open.get(idx) {
            Some(true) => self.blocks.get(idx).map(Block::kind),
            _ => None,
        }
    }

    fn open_block(&mut self, idx: usize) -> Option<&mut Block> {
        if self.open.get(idx).copied() != Some(true) {
            return None;
        }
        self.blocks.get_mut(idx)
    }

    /// Appends text to an open text block; deltas for other blocks are ignored.
    pub fn text_delta(&mut self, idx: usize, delta: &str) {
        if let Some(Block::Text { text: t, .. }) = self.open_block(idx) {
            t.push_str(delta);
            self.emit(AssistantDelta::TextDelta {
                content_index: idx,
                delta: delta.to_string(),
            });
        }
    }

    pub fn thinking_delta(&mut self, idx: usize, delta: &str) {
        if let Some(Block::Thinking { text, .. }) = self.open_block(idx) {
            text.push_str(delta);
            self.emit(AssistantDelta::ThinkingDelta {
                content_index: idx,
                delta: delta.to_string(),
            });
        }
    }

    /// Appends to a thinking block's signature (no delta: pi does not stream signatures).
    pub fn signature_delta(&mut self, idx: usize, delta: &str) {
        if let Some(Block::Thinking { signature, .. }) = self.open_block(idx) {
            signature.get_or_insert_with(String::new).push_str(delta);
        }
    }

    pub fn tool_args_delta(&mut self, idx: usize, delta: &str) {
        if let Some(Block::ToolCall { args, .. }) = self.open_block(idx) {
            args.push_str(delta);
            self.emit(AssistantDelta::ToolCallDelta {
                content_index: idx,
                delta: delta.to_string(),
            });
        }
    }

    /// The argument text tool call block `idx` has received so far.
    pub fn tool_args(&self, idx: usize) -> Option<&str> {
        match self.blocks.get(idx) {
            Some(Block::ToolCall { args, .. }) => Some(args),
            _ => None,
        }
    }

    /// Replaces an open tool call's argument text without a delta: the provider sent the
    /// complete arguments and they do not continue what was streamed.
    pub fn set_tool_args(&mut self, idx: usize, text: &str) {
        if let Some(Block::ToolCall { args, .. }) = self.open_block(idx) {
            *args = text.to_string();
        }
    }

    /// Replaces an open text or thinking block's text without a delta, for APIs whose
    /// closing event carries the block's final text (its `*_end` then shows it).
    pub fn set_block_text(&mut self, idx: usize, new_text: &str) {
        match self.open_block(idx) {
            Some(Block::Text { text: t, .. }) | Some(Block::Thinking { text: t, .. }) => {
                *t = new_text.to_string();
            }
            _ => {}
        }
    }

    /// Sets an open block's signature, replacing any: a thinking block's
    /// `thinkingSignature`, a text block's `textSignature`, a tool call's `thoughtSignature`.
    pub fn set_signature(&mut self, idx: usize, value: String) {
        match self.open_block(idx) {
            Some(Block::Thinking { signature, .. })
            | Some(Block::Text { signature, .. })
            | Some(Block::ToolCall { signature, .. }) => *signature = Some(value),
            None => {}
        }
    }

    /// Updates the signature of a thinking block, ended or not (a response's last event
    /// may complete what the block's own end carried).
    pub fn update_signature(&mut self, idx: usize, f: impl FnOnce(&str) -> Option<String>) {
        if let Some(Block::Thinking {
            signature: Some(sig),
            ..
        }) = self.blocks.get_mut(idx)
        {
            if let Some(new) = f(sig) {
                *sig = new;
            }
        }
    }

    /// Fills in a tool call's id or name when it arrives after the block started.
    pub fn set_tool_identity(&mut self, idx: usize, new_id: Option<&str>, new_name: Option<&str>) {
        if let Some(Block::ToolCall { id, name, .. }) = self.open_block(idx) {
            if let Some(v) = new_id.filter(|v| !v.is_empty()) {
                *id = v.to_string();
            }
            if let Some(v) = new_name.filter(|v| !v.is_empty()) {
                *name = v.to_string();
            }
        }
    }

    /// The id of tool call block `idx`, if it is one.
    pub fn tool_id(&self, idx: usize) -> Option<&str> {
        match self.blocks.get(idx) {
            Some(Block::ToolCall { id, .. }) => Some(id),
            _ => None,
        }
    }

    /// Ends block `idx` (once) and emits its `*_end` with the full content.
    pub fn end_block(&mut self, idx: usize) {
        let Some(block) = self.open_block(idx) else {
            return;
        };
        let d = match block {
            Block::Text { text: t, .. } => AssistantDelta::TextEnd {
                content_index: idx,
                content: t.clone(),
            },
            Block::Thinking { text, .. } => AssistantDelta::ThinkingEnd {
                content_index: idx,
                content: text.clone(),
            },
            Block::ToolCall {
                id,
                name,
                args,
                parsed,
                signature,
            } => {
                if id.is_empty() {
                    // Some local servers omit ids; results must still pair with their call.
                    *id = format!("call_{}_{idx}", now_ms());
                }
                let value = parse_tool_arguments(args, name);
                *parsed = Some(value.clone());
                AssistantDelta::ToolCallEnd {
                    content_index: idx,
                    tool_call: ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: value,
                        thought_signature: signature.clone(),
                    },
                }
            }
        };
        self.open[idx] = false;
        self.emit(d);
    }

    pub fn has_tool_calls(&self) -> bool {
        self.blocks.iter().any(|b| b.kind() == BlockKind::ToolCall)
    }

    /// Ends open blocks, emits `done` and returns the message, its usage totalled and priced at
    /// the model's rates. A tool call with a plain `stop` reason (some servers do this) becomes
    /// `toolUse`, since the loop must run the calls.
    pub fn finish(mut self, default_reason: StopReason) -> AssistantMessage {
        for idx in 0..self.blocks.len() {
            self.end_block(idx);
        }
        let mut reason = self.stop_reason.unwrap_or(default_reason);
        if reason == StopReason::Stop && self.has_tool_calls() {
            reason = StopReason::ToolUse;
        }
        let usage = self.running_usage();
        self.emit(AssistantDelta::Done { reason });
        self.flush();
        let content = std::mem::take(&mut self.blocks)
            .into_iter()
            .map(|b| match b {
                Block::Text { text, signature } => Content::Text {
                    text,
                    text_signature: signature,
                },
                Block::Thinking { text, signature } => Content::Thinking {
                    thinking: text,
                    signature,
                },
                Block::ToolCall {
                    id,
                    name,
                    parsed,
                    args,
                    signature,
                } => Content::ToolCall(ToolCall {
                    arguments: parsed.unwrap_or_else(|| parse_tool_arguments(&args, &name)),
                    id,
                    name,
                    thought_signature: signature,
                }),
            })
            .collect();
        let mut message = self.message;
        message.content = content;
        message.usage = usage;
        message.stop_reason = reason;
        message
    }
}

/// Tool arguments from the streamed JSON. Empty means no arguments; anything unparsable or not
/// an object becomes `{}` so the turn goes on and argument validation reports the problem.
fn parse_tool_arguments(raw: &str, tool: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Default::default());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) | Err(_) => {
            tracing::warn!(
                tool,
                "tool call arguments are not a JSON object; using {{}}"
            );
            Value::Object(Default::default())
        }
    }
}

/// The conversation as it can be replayed to a model (pi 1.6's `transformMessages`). Both APIs
/// reject histories where a tool call lacks its result or a result lacks its call, and pi does
/// not replay failed turns, so: assistant messages that ended in `error` or `aborted` are
/// dropped (with any results for their calls), results without a preceding call are dropped,
/// and a call that never got a result gets a synthetic error result before the conversation
/// moves on. A system message that comes while a batch of calls is open waits until the batch
/// closes (after its results, synthetic ones included), so it never splits a call from its
/// result. The kept messages are shared with the request, not copied.
pub fn replayable_messages(messages: &[Arc<Message>]) -> Vec<Arc<Message>> {
    let mut out = Vec::with_capacity(messages.len());
    let mut batch = Batch::default();
    for m in messages {
        match m.as_ref() {
            Message::Assistant(a) => {
                batch.close(&mut out);
                if matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) {
                    continue;
                }
                batch
                    .pending
                    .extend(a.content.iter().filter_map(|c| match c {
                        Content::ToolCall(tc) => Some((tc.id.as_str(), tc.name.as_str())),
                        _ => None,
                    }));
                batch.open = !batch.pending.is_empty();
                out.push(Arc::clone(m));
            }
            Message::ToolResult(r) => {
                if let Some(pos) = batch
                    .pending
                    .iter()
                    .position(|(id, _)| *id == r.tool_call_id)
                {
                    batch.pending.remove(pos);
                    out.push(Arc::clone(m));
                }
            }
            Message::User(_) | Message::Custom(_) => {
                batch.close(&mut out);
                out.push(Arc::clone(m));
            }
            Message::System(_) if batch.open => batch.held.push(Arc::clone(m)),
            Message::System(_) => out.push(Arc::clone(m)),
        }
    }
    batch.close(&mut out);
    out
}

/// The tool calls of the last assistant message, while their results come.
#[derive(Default)]
struct Batch<'a> {
    /// Borrowed from the messages: this runs for the whole transcript before every request.
    pending: Vec<(&'a str, &'a str)>,
    open: bool,
    /// System messages that came while the batch was open.
    held: Vec<Arc<Message>>,
}

impl Batch<'_> {
    /// Synthetic results for the calls that got none, then the held system messages.
    fn close(&mut self, out: &mut Vec<Arc<Message>>) {
        for (id, name) in self.pending.drain(..) {
            out.push(Arc::new(Message::ToolResult(ToolResultMessage {
                tool_call_id: id.to_string(),
                tool_name: name.to_string(),
                content: vec![Content::text("No result provided")],
                details: None,
                is_error: true,
                structured_content: None,
                usage: None,
                duration_ms: None,
                timestamp: now_ms(),
            })));
        }
        self.open = false;
        out.append(&mut self.held);
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Shared helpers for the provider tests: a model, a context with a delta receiver, and
    //! feeding recorded streams in arbitrary chunkings.

    use std::sync::Arc;

    use super::*;
    use crate::provider::NoProviderHooks;

    pub fn model(api: &str, base_url: &str) -> Model {
        Model {
            id: "test-model".into(),
            name: "Test".into(),
            provider: "test".into(),
            api: api.into(),
            base_url: base_url.into(),
            headers: BTreeMap::new(),
            reasoning: false,
            input: vec!["text".into(), "image".into()],
            context_window: 100_000,
            max_tokens: 4096,
            cost: Default::default(),
            compat: Value::Null,
            prompt_cache: Default::default(),
            thinking_level_map: Default::default(),
            auth: Default::default(),
        }
    }

    pub fn context() -> (CallContext, mpsc::UnboundedReceiver<AssistantDelta>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            CallContext {
                deltas: tx,
                cancel: CancellationToken::new(),
                hooks: Arc::new(NoProviderHooks),
            },
            rx,
        )
    }

    pub fn drain(rx: &mut mpsc::UnboundedReceiver<AssistantDelta>) -> Vec<AssistantDelta> {
        // The running usage travels beside the deltas; these tests look at the deltas.
        let mut v = Vec::new();
        while let Ok(d) = rx.try_recv() {
            if !matches!(d, AssistantDelta::Usage(_)) {
                v.push(d);
            }
        }
        v
    }

    /// Feeds `bytes` in chunks of `size` through the same path as the network reader.
    pub fn parse_in_chunks<P: StreamParser>(
        bytes: &[u8],
        size: usize,
        parser: P,
    ) -> Result<AssistantMessage, ProviderError> {
        let chunks: Vec<&[u8]> = bytes.chunks(size.max(1)).collect();
        parse_chunk_list(&chunks, parser)
    }

    /// Feeds the given chunks in order through the same path as the network reader.
    pub fn parse_chunk_list<P: StreamParser>(
        chunks: &[&[u8]],
        mut parser: P,
    ) -> Result<AssistantMessage, ProviderError> {
        let mut decoder = SseDecoder::new();
        for chunk in chunks {
            if feed_chunk(&mut decoder, &mut parser, chunk)? == Flow::Done {
                return parser.finish(StreamEnd::Complete);
            }
        }
        finish_stream(decoder, parser)
    }

    /// Checks the delta sequence is well formed: `start` first, `done` last, every block
    /// started once in index order, deltas only while open, and one end per block.
    pub fn assert_well_formed(deltas: &[AssistantDelta], blocks: usize) {
        assert_eq!(deltas.first(), Some(&AssistantDelta::Start));
        assert!(matches!(deltas.last(), Some(AssistantDelta::Done { .. })));
        let mut state = vec![0u8; blocks]; // 0 unstarted, 1 open, 2 ended
        let mut next_start = 0;
        for d in &deltas[1..deltas.len() - 1] {
            let (idx, phase) = match d {
                AssistantDelta::TextStart { content_index }
                | AssistantDelta::ThinkingStart { content_index }
                | AssistantDelta::ToolCallStart { content_index, .. } => (*content_index, 0),
                AssistantDelta::TextDelta { content_index, .. }
                | AssistantDelta::ThinkingDelta { content_index, .. }
                | AssistantDelta::ToolCallDelta { content_index, .. } => (*content_index, 1),
                AssistantDelta::TextEnd { content_index, .. }
                | AssistantDelta::ThinkingEnd { content_index, .. }
                | AssistantDelta::ToolCallEnd { content_index, .. } => (*content_index, 2),
                other => panic!("unexpected {other:?}"),
            };
            match phase {
                0 => {
                    assert_eq!(idx, next_start, "blocks start in order");
                    assert_eq!(state[idx], 0);
                    state[idx] = 1;
                    next_start += 1;
                }
                1 => assert_eq!(state[idx], 1, "delta for block {idx} while not open"),
                _ => {
                    assert_eq!(state[idx], 1, "end for block {idx} while not open");
                    state[idx] = 2;
                }
            }
        }
        assert!(
            state.iter().all(|s| *s == 2),
            "every block ended: {state:?}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use crate::message::UserMessage;
    use serde_json::json;

    #[test]
    fn builder_emits_pi_order_and_parses_arguments() {
        let (ctx, mut rx) = context();
        let mut b = MessageBuilder::new(&model("x", "http://h"), ctx.deltas.clone());
        let t = b.start_text();
        b.text_delta(t, "Hi");
        let c = b.start_tool_call("c1", "read");
        b.end_block(t);
        b.tool_args_delta(c, "{\"path\":");
        b.tool_args_delta(c, "\"a\"}");
        let bad = b.start_tool_call("", "bash");
        b.tool_args_delta(bad, "{\"command\": \"ls");
        b.usage.input = 10;
        b.usage.output = 5;
        b.usage.cache_read = 3;
        b.usage_reported = true;
        let m = b.finish(StopReason::Stop);
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_eq!(m.usage.total_tokens, 18);
        assert_eq!(m.content[0], Content::text("Hi"));
        let calls = m.tool_calls();
        assert_eq!(calls[0].arguments, json!({"path": "a"}));
        assert_eq!(calls[1].arguments, json!({}));
        assert!(calls[1].id.starts_with("call_"));
        let deltas = drain(&mut rx);
        assert_well_formed(&deltas, 3);
        // The end event carries the same generated id as the final message.
        assert!(deltas.iter().any(|d| matches!(d,
            AssistantDelta::ToolCallEnd { tool_call, .. } if tool_call.id == calls[1].id)));
    }

    #[test]
    fn finished_message_is_priced_at_the_models_rates() {
        let (ctx, _rx) = context();
        let mut m = model("x", "http://h");
        m.cost = CostRates {
            input: 2.0,
            output: 8.0,
            cache_read: 0.5,
            cache_write: 1.0,
            tiers: Vec::new(),
        };
        let mut b = MessageBuilder::new(&m, ctx.deltas.clone());
        b.usage.input = 500_000;
        b.usage.output = 250_000;
        b.usage.cache_read = 2_000_000;
        b.usage.cache_write = 1_000_000;
        b.usage_reported = true;
        let msg = b.finish(StopReason::Stop);
        let c = &msg.usage.cost;
        assert_eq!(
            (c.input, c.output, c.cache_read, c.cache_write),
            (1.0, 2.0, 1.0, 1.0)
        );
        assert_eq!(c.total, 5.0);
    }

    #[test]
    fn key_and_configured_headers_keep_their_credential_marks() {
        let mut r = HttpRequest::new("u".into(), RequestBody::Json(json!({})));
        r.header("Content-Type", "application/json");
        r.credential_header("x-key-by-origin", "k");
        let mut m = model("x", "http://h");
        m.headers.insert(
            "x-var".into(),
            crate::provider::headers::ModelHeader::credential("v"),
        );
        m.headers.insert("x-lit".into(), "lit".into());
        r.model_headers(&m);
        let shown = r.headers.for_hooks();
        assert_eq!(shown["content-type"], "application/json");
        assert_eq!(shown["x-lit"], "lit");
        assert_eq!(shown["x-key-by-origin"], crate::provider::headers::REDACTED);
        assert_eq!(shown["x-var"], crate::provider::headers::REDACTED);
        assert_eq!(r.headers.get("x-var"), Some("v"));
    }

    #[test]
    fn retry_after_in_seconds_or_ms() {
        let mut h = BTreeMap::new();
        h.insert("retry-after".to_string(), "2".to_string());
        assert_eq!(retry_after_ms(&h), Some(2000));
        h.insert("retry-after-ms".to_string(), "150".to_string());
        assert_eq!(retry_after_ms(&h), Some(150));
        let mut d = BTreeMap::new();
        d.insert(
            "retry-after".to_string(),
            "Wed, 21 Oct 2015 07:28:00 GMT".to_string(),
        );
        assert_eq!(retry_after_ms(&d), None);
    }

    #[test]
    fn join_url_handles_slashes() {
        assert_eq!(join_url("http://h/v1/", "/x"), "http://h/v1/x");
        assert_eq!(join_url("http://h/v1", "x"), "http://h/v1/x");
    }

    fn assistant(calls: &[&str], reason: StopReason) -> Message {
        let mut a = AssistantMessage::empty("x", "p", "m");
        a.stop_reason = reason;
        for id in calls {
            a.content.push(Content::ToolCall(ToolCall {
                thought_signature: None,
                id: id.to_string(),
                name: "t".into(),
                arguments: json!({}),
            }));
        }
        Message::Assistant(a)
    }

    fn result(id: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "t".into(),
            content: vec![Content::text("ok")],
            details: None,
            is_error: false,
            structured_content: None,
            usage: None,
            duration_ms: None,
            timestamp: 0,
        })
    }

    fn ids(out: &[Arc<Message>]) -> Vec<String> {
        out.iter()
            .map(|m| match m.as_ref() {
                Message::User(UserMessage { content, .. }) => format!("u:{}", content.as_text()),
                Message::Assistant(a) => format!("a:{}", a.tool_calls().len()),
                Message::ToolResult(r) => format!("r:{}:{}", r.tool_call_id, r.is_error),
                Message::Custom(c) => format!("c:{}", c.custom_type),
                Message::System(_) => "s".to_string(),
            })
            .collect()
    }

    /// As 1.6's `transformMessages`: a system message never lands between calls and their
    /// results; it follows the batch (its synthetic results included).
    #[test]
    fn a_system_message_waits_until_the_batch_of_calls_closes() {
        let system = || {
            Message::System(crate::message::system::SystemMessage {
                content: crate::message::UserContent::Text("x".into()),
                sections: None,
                timestamp: 0,
                tools_added: None,
                tools_removed: None,
            })
        };
        let msgs = vec![
            system(),
            Message::user("hi"),
            assistant(&["a", "b"], StopReason::ToolUse),
            system(),
            result("a"),
            system(),
            Message::user("next"),
        ];
        let msgs: Vec<Arc<Message>> = msgs.into_iter().map(Arc::new).collect();
        assert_eq!(
            ids(&replayable_messages(&msgs)),
            [
                "s",
                "u:hi",
                "a:2",
                "r:a:false",
                "r:b:true",
                "s",
                "s",
                "u:next"
            ]
        );
    }

    #[test]
    fn replayable_pairs_calls_and_results() {
        let msgs = vec![
            Message::user("hi"),
            assistant(&["a", "b"], StopReason::ToolUse),
            result("b"),
            result("zzz"),
            Message::user("next"),
            assistant(&["c"], StopReason::Aborted),
            result("c"),
            assistant(&[], StopReason::Stop),
        ];
        let msgs: Vec<Arc<Message>> = msgs.into_iter().map(Arc::new).collect();
        assert_eq!(
            ids(&replayable_messages(&msgs)),
            vec!["u:hi", "a:2", "r:b:false", "r:a:true", "u:next", "a:0"]
        );
    }
}

#[cfg(test)]
pub(crate) mod body_support {
    //! A request with every kind of content both wire bodies convert, for checking that the
    //! body written from references is the body hooks see.

    use std::sync::Arc;

    use serde_json::json;

    use crate::message::{
        AssistantMessage, Content, Message, StopReason, ToolCall, ToolResultMessage, UserContent,
        UserMessage,
    };
    use crate::provider::{Request, ThinkingLevel, ToolSpec};

    fn image() -> Content {
        Content::Image {
            data: "QUJD\"/+".into(),
            mime_type: "image/png".into(),
        }
    }

    fn result(id: &str, content: Vec<Content>, is_error: bool) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read".into(),
            content,
            details: None,
            is_error,
            structured_content: None,
            usage: None,
            duration_ms: None,
            timestamp: 0,
        })
    }

    pub fn every_kind(api: &str) -> Request {
        let mut model = super::test_support::model(api, "http://127.0.0.1:9");
        model.reasoning = true;
        let mut a = AssistantMessage::empty(api, "test", "test-model");
        a.stop_reason = StopReason::ToolUse;
        a.content = vec![
            Content::Thinking {
                thinking: "plan \u{2028}".into(),
                signature: Some("sig".into()),
            },
            Content::text("one"),
            Content::text("two \"quoted\"\n"),
            Content::ToolCall(ToolCall {
                thought_signature: None,
                id: "functions.read:0".into(),
                name: "read".into(),
                arguments: json!({"path": "a.png", "n": [1, 2.5, null]}),
            }),
            Content::ToolCall(ToolCall {
                thought_signature: None,
                id: "c2".into(),
                name: "bash".into(),
                arguments: json!("not an object"),
            }),
        ];
        let calls_only = {
            let mut c = AssistantMessage::empty(api, "test", "test-model");
            c.stop_reason = StopReason::ToolUse;
            c.content = vec![Content::ToolCall(ToolCall {
                thought_signature: None,
                id: "c3".into(),
                name: "read".into(),
                arguments: json!({}),
            })];
            c
        };
        let messages = vec![
            Message::user("plain ü"),
            Message::User(UserMessage {
                content: UserContent::Blocks(vec![Content::text("look"), image()]),
                timestamp: 0,
            }),
            Message::User(UserMessage {
                content: UserContent::Blocks(vec![Content::text("a"), Content::text("b")]),
                timestamp: 0,
            }),
            Message::Assistant(a),
            result(
                "functions.read:0",
                vec![Content::text("body"), image()],
                false,
            ),
            result("c2", Vec::new(), true),
            Message::Assistant(calls_only),
            result("c3", vec![Content::text("x"), Content::text("y")], false),
            Message::User(UserMessage {
                content: UserContent::Text("  ".into()),
                timestamp: 0,
            }),
            Message::user("last"),
        ];
        Request {
            model,
            api_key: None,
            system_prompt: "sys".into(),
            messages: messages.into_iter().map(Arc::new).collect(),
            tools: vec![ToolSpec {
                name: "read".into(),
                description: "reads".into(),
                parameters: json!({"type": "object"}),
                constrained_sampling: None,
            }]
            .into(),
            thinking: ThinkingLevel::High,
            session_id: None,
        }
    }
}
