//! The `bedrock-converse-stream` wire API: Amazon Bedrock's ConverseStream
//! (`POST {endpoint}/model/{modelId}/converse-stream`, answered in the binary event-stream
//! framing), as pi 1.6 speaks it through the AWS SDK.
//!
//! The endpoint, region and credential come from [`super::bedrock_auth`], the body from
//! [`super::bedrock_body`], the stream is read by [`super::bedrock_events`]. The hooks see the
//! headers and the body before the request is signed, so what they change is signed too (and
//! they never see a signature, key or token); SigV4 is [`super::bedrock_sign`]'s, a bearer
//! token goes in `Authorization`. HTTP failures are worded as 1.6 words the SDK's exceptions
//! (`Throttling error: …`), keeping their status for the retry layer.

use std::time::SystemTime;

use async_trait::async_trait;
use serde_json::Value;

use super::bedrock_auth::{self, BedrockAuth, Target};
use super::bedrock_body;
use super::bedrock_events::{error_prefix, BedrockParser, FrameDecoder};
use super::bedrock_sign::sign_request;
use super::headers::RequestHeaders;
use super::sse::SseEvent;
use super::stream::{
    cancellable, error_chain, read_bounded, retry_after_ms, to_header_map, Flow, RequestBody,
    StreamEnd, StreamParser, MAX_ERROR_BODY, STREAM_IDLE_TIMEOUT,
};
use super::{CallContext, Model, Provider, ProviderError, Request};
use crate::message::AssistantMessage;

pub const BEDROCK_API: &str = "bedrock-converse-stream";

pub struct BedrockConverseStream {
    client: reqwest::Client,
}

impl BedrockConverseStream {
    pub fn new(client: reqwest::Client) -> Self {
        BedrockConverseStream { client }
    }
}

#[async_trait]
impl Provider for BedrockConverseStream {
    fn api(&self) -> &'static str {
        BEDROCK_API
    }

    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        let key = req.credential().await?;
        let target = bedrock_auth::target(&req.model, key.as_deref())?;
        let body = RequestBody::of(&bedrock_body::body(req)?, ctx)?;
        let url = stream_url(&target.endpoint, &req.model.id);
        let resp = send(&self.client, &url, &req.model, body, &target, ctx).await?;
        read_stream(resp, ctx, &req.model).await
    }
}

/// The JSON request body (before `before_provider_request`), as hooks see it.
pub fn build_body(req: &Request) -> Value {
    bedrock_body::body(req).unwrap_or(Value::Null)
}

/// The model id as a path segment, as the SDK escapes it (`encodeURIComponent` and `!'()*`).
fn path_segment(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn stream_url(endpoint: &str, model_id: &str) -> String {
    format!(
        "{}/model/{}/converse-stream",
        endpoint.trim_end_matches('/'),
        path_segment(model_id)
    )
}

/// Headers the SDK owns: a configured header or a hook cannot set them (1.6's
/// `isReservedHeader`), since they are signed or carry the credential.
fn reserved(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("x-amz-") || n == "authorization" || n == "host"
}

/// Sends the request through the hooks, then signs what they left and posts it.
async fn send(
    client: &reqwest::Client,
    url: &str,
    model: &Model,
    body: RequestBody,
    target: &Target,
    ctx: &CallContext,
) -> Result<reqwest::Response, ProviderError> {
    let cancel = &ctx.cancel;
    let mut headers = RequestHeaders::default();
    headers.set("content-type", "application/json");
    let configured = model
        .headers
        .iter()
        .filter(|(k, _)| !reserved(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    headers.set_configured(&configured);
    let edited = cancellable(
        cancel,
        ctx.hooks.before_provider_headers(headers.for_hooks()),
    )
    .await?;
    let mut final_headers: Vec<(String, String)> = headers
        .after_hooks(edited)
        .into_iter()
        .filter(|(k, _)| !reserved(k))
        .collect();
    let body = match body {
        RequestBody::Json(v) => {
            let v = cancellable(cancel, ctx.hooks.before_provider_request(v)).await?;
            serde_json::to_vec(&v)
                .map_err(|e| ProviderError::Other(format!("cannot encode request body: {e}")))?
        }
        RequestBody::Bytes(b) => b,
    };
    match &target.auth {
        BedrockAuth::Bearer(token) => {
            final_headers.push(("authorization".into(), format!("Bearer {token}")));
        }
        BedrockAuth::SigV4(creds) => {
            let signed = sign_request(
                url,
                &final_headers,
                &body,
                creds,
                &target.region,
                SystemTime::now(),
            )?;
            final_headers.extend(signed);
        }
    }
    let map = to_header_map(&final_headers.into_iter().collect())?;
    let request = client.post(url).headers(map).body(body);
    let (resp, status, resp_headers) = super::stream::send_reported(request, ctx).await?;
    if status >= 400 {
        let retry_after_ms = retry_after_ms(&resp_headers);
        let text = read_bounded(resp, cancel, MAX_ERROR_BODY).await?;
        let error_type = resp_headers.get("x-amzn-errortype").map(String::as_str);
        return Err(ProviderError::Api {
            status,
            message: http_error(status, error_type, text.trim()),
            retry_after_ms,
        });
    }
    Ok(resp)
}

/// An HTTP failure in 1.6's words: the exception's readable prefix and its message, or, for
/// a body that names no exception (a gateway's), the status and the body.
pub fn http_error(status: u16, error_type: Option<&str>, body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let from_body = parsed.as_ref().and_then(|v| {
        v.get("__type")
            .or_else(|| v.get("code"))
            .and_then(Value::as_str)
    });
    // `ThrottlingException:http://internal…` or `com.amazon…#ThrottlingException`.
    let name = error_type
        .or(from_body)
        .map(|t| t.split(':').next().unwrap_or(t))
        .map(|t| t.rsplit('#').next().unwrap_or(t))
        .filter(|t| !t.is_empty());
    let message = parsed.as_ref().and_then(|v| {
        v.get("message")
            .or_else(|| v.get("Message"))
            .and_then(Value::as_str)
    });
    match (name, message) {
        (Some(name), Some(message)) => format!("{}: {message}", error_prefix(name)),
        (Some(name), None) => format!("{}: {status}: {body}", error_prefix(name)),
        (None, _) => format!("{status}: {body}"),
    }
}

/// Reads the event stream into a message until it ends, the call is cancelled or the
/// connection stays silent for [`STREAM_IDLE_TIMEOUT`]; each frame goes to the hooks first
/// when one observes the stream.
async fn read_stream(
    mut resp: reqwest::Response,
    ctx: &CallContext,
    model: &Model,
) -> Result<AssistantMessage, ProviderError> {
    let observe = ctx.hooks.observes_stream();
    let mut parser = BedrockParser::new(model, ctx.deltas.clone());
    let mut frames = FrameDecoder::default();
    loop {
        let next = cancellable(
            &ctx.cancel,
            tokio::time::timeout(STREAM_IDLE_TIMEOUT, resp.chunk()),
        )
        .await?;
        let chunk = match next {
            Err(_) => {
                return Err(ProviderError::StreamDropped(format!(
                    "no data for {} s",
                    STREAM_IDLE_TIMEOUT.as_secs()
                )))
            }
            Ok(Err(e)) => return Err(ProviderError::StreamDropped(error_chain(&e))),
            Ok(Ok(None)) => return parser.finish(StreamEnd::Eof),
            Ok(Ok(Some(chunk))) => chunk,
        };
        let show = |ev: &SseEvent| {
            if observe {
                ctx.hooks
                    .provider_stream_event(model, ev.event.as_deref(), &ev.data);
            }
        };
        if feed(&mut frames, &mut parser, &chunk, &show)? == Flow::Done {
            return parser.finish(StreamEnd::Complete);
        }
    }
}

/// Hands the frames `chunk` completes to the parser, then sends what they brought.
pub fn feed(
    frames: &mut FrameDecoder,
    parser: &mut BedrockParser,
    chunk: &[u8],
    show: &dyn Fn(&SseEvent),
) -> Result<Flow, ProviderError> {
    let mut flow = Ok(Flow::Continue);
    for ev in frames.feed(chunk)? {
        show(&ev);
        flow = parser.on_event(ev);
        if !matches!(flow, Ok(Flow::Continue)) {
            break;
        }
    }
    parser.flush();
    flow
}

#[cfg(test)]
#[path = "bedrock_tests.rs"]
mod tests;
