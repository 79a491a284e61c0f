//! The `mistral-conversations` wire API: Mistral's streaming chat completions
//! (`POST {baseUrl}/v1/chat/completions`, the key as `Authorization: Bearer`), as pi 1.6
//! speaks it. 1.6 calls the endpoint with `fetch` itself, writing the body in the wire names
//! `@mistralai/mistralai` would send.
//!
//! The body is [`super::mistral_body`]'s, the stream is read by [`super::mistral_events`].
//! What depends on the model lives here: how a thinking level is asked for (the model's
//! `thinkingLevelMap` names a `reasoning_effort`; a reasoning model without one gets
//! `prompt_mode: "reasoning"`), and how failures are worded (`Mistral API error (status):
//! body`, the body cut at 4000 characters as 1.6 cuts it). Retries, hooks and cancellation are
//! the shared ones of [`super::stream`].

use async_trait::async_trait;
use serde_json::Value;

use super::mistral_body as body;
use super::mistral_events::MistralParser;
use super::stream::{sse_request, stream_call, RequestBody};
use super::thinking_map;
use super::{CallContext, Model, Provider, ProviderError, Request, ThinkingLevel};
use crate::message::AssistantMessage;

pub const MISTRAL_API: &str = "mistral-conversations";

/// How much of an error body 1.6 keeps in the message (UTF-16 code units).
const MAX_ERROR_BODY_CHARS: usize = 4000;

pub struct MistralConversations {
    client: reqwest::Client,
}

impl MistralConversations {
    pub fn new(client: reqwest::Client) -> Self {
        MistralConversations { client }
    }
}

#[async_trait]
impl Provider for MistralConversations {
    fn api(&self) -> &'static str {
        MISTRAL_API
    }

    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        let key = req.credential().await?.filter(|k| !k.is_empty());
        let Some(key) = key else {
            return Err(ProviderError::Other(format!(
                "No API key for provider: {}",
                req.model.provider
            )));
        };
        let replayed = body::replayed(req);
        let body = body::body(req, &replayed)?;
        let mut http = sse_request(stream_url(&req.model), RequestBody::of(&body, ctx)?);
        http.api_key(&req.model, Some(&key), "authorization", |k| {
            format!("Bearer {k}")
        });
        // The session keeps to one replica, unless the model's headers pick one.
        if let Some(session) = req.session_id.as_deref() {
            if !req
                .model
                .headers
                .keys()
                .any(|h| h.eq_ignore_ascii_case("x-affinity"))
            {
                http.header("x-affinity", session);
            }
        }
        let parser = || MistralParser::new(&req.model, ctx.deltas.clone());
        stream_call(&self.client, http, ctx, &req.model, parser)
            .await
            .map_err(worded)
    }
}

/// The JSON request body (before `before_provider_request`), as hooks see it.
pub fn build_body(req: &Request) -> Value {
    let replayed = body::replayed(req);
    body::body(req, &replayed)
        .ok()
        .and_then(|b| serde_json::to_value(b).ok())
        .unwrap_or(Value::Null)
}

/// `v1/chat/completions` under the base URL, whose path keeps what it has (1.6 resolves the
/// endpoint against the base URL with one trailing slash).
pub fn stream_url(model: &Model) -> String {
    // A query or fragment on the base URL is dropped by 1.6's URL resolution too.
    let head = model.base_url.split(['?', '#']).next().unwrap_or_default();
    format!("{}/v1/chat/completions", head.trim_end_matches('/'))
}

/// The thinking fields of a request (1.6's `streamSimple`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThinkingFields<'a> {
    pub reasoning_effort: Option<&'a str>,
    pub prompt_mode: Option<&'static str>,
}

/// The level clamped to what the model offers; a model with a `thinkingLevelMap` then asks
/// for the map's name of it (`high` when the map has none, the map's `off` name when thinking
/// is off), any other reasoning model for `prompt_mode: "reasoning"` when it thinks at all.
pub fn thinking_fields(model: &Model, level: ThinkingLevel) -> ThinkingFields<'_> {
    let map = &model.thinking_level_map;
    let clamped = match level {
        ThinkingLevel::Off => None,
        l => Some(thinking_map::clamp(model.reasoning, map, l)),
    }
    .filter(|l| *l != ThinkingLevel::Off);
    if !model.reasoning {
        return ThinkingFields::default();
    }
    if map.is_empty() {
        return ThinkingFields {
            reasoning_effort: None,
            prompt_mode: clamped.map(|_| "reasoning"),
        };
    }
    let effort = match clamped {
        Some(l) => Some(thinking_map::mapped(map, l).flatten().unwrap_or("high")),
        None => thinking_map::mapped(map, ThinkingLevel::Off).flatten(),
    };
    ThinkingFields {
        reasoning_effort: effort.filter(|e| !e.is_empty()),
        prompt_mode: None,
    }
}

/// 1.6's `truncateErrorText`: at most `max` UTF-16 code units, then how many were cut.
fn truncated(text: &str, max: usize) -> String {
    let total = text.encode_utf16().count();
    if total <= max {
        return text.to_string();
    }
    let mut units = 0;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        if units + c.len_utf16() > max {
            break;
        }
        units += c.len_utf16();
        end = i + c.len_utf8();
    }
    format!("{}... [truncated {} chars]", &text[..end], total - max)
}

/// An HTTP failure as 1.6 words it: the status and the (trimmed, cut) body, or without a
/// body the status text.
pub fn error_message(status: u16, body: &str, status_text: Option<&str>) -> String {
    let body = body.trim();
    if !body.is_empty() {
        return format!(
            "Mistral API error ({status}): {}",
            truncated(body, MAX_ERROR_BODY_CHARS)
        );
    }
    let said = match status_text.filter(|s| !s.is_empty()) {
        Some(s) => s.to_string(),
        None => format!("Request failed with status {status}"),
    };
    format!("Mistral API error ({status}): {said}")
}

fn worded(e: ProviderError) -> ProviderError {
    e.worded_http(|status, body| {
        let reason = Some(ProviderError::status_text(status)).filter(|r| !r.is_empty());
        error_message(status, body, reason)
    })
}

#[cfg(test)]
#[path = "mistral_tests.rs"]
mod tests;
