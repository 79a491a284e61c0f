//! The `google-generative-ai` wire API: the Gemini API's streaming `generateContent`
//! (`POST {baseUrl}/models/{model}:streamGenerateContent?alt=sse`, the key in
//! `x-goog-api-key`), as pi 1.6 speaks it through `@google/genai`.
//!
//! The body ([`super::google_body`]) is what the SDK writes from 1.6's parameters, and the
//! stream ([`super::google_events`]) is read as 1.6 reads the SDK's chunks. What depends on the
//! model family lives here, with 1.6's tests of the model id: whether thinking is asked for by
//! `thinkingLevel` (Gemini 3 and later, Gemma 4) or by a token `thinkingBudget`, whether tool
//! calls carry ids and tool results images (Gemini 3 and later), and whether strict tool
//! sampling is offered. Failures are worded as the SDK words them (the error body itself);
//! retries, hooks and cancellation are the shared ones of [`super::stream`].

use std::sync::OnceLock;

use async_trait::async_trait;
use regex::Regex;
use serde_json::Value;

use super::google_body as body;
use super::google_events::GoogleParser;
use super::stream::{sse_request, stream_call, RequestBody};
use super::thinking_map::{self, ThinkingLevelMap};
use super::{CallContext, Model, Provider, ProviderError, Request, ThinkingLevel};
use crate::message::AssistantMessage;

pub const GOOGLE_API: &str = "google-generative-ai";

pub struct GoogleGenerativeAi {
    client: reqwest::Client,
}

impl GoogleGenerativeAi {
    pub fn new(client: reqwest::Client) -> Self {
        GoogleGenerativeAi { client }
    }
}

#[async_trait]
impl Provider for GoogleGenerativeAi {
    fn api(&self) -> &'static str {
        GOOGLE_API
    }

    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        let key = req
            .api_key
            .as_deref()
            .filter(|k| !k.is_empty())
            .ok_or_else(|| {
                ProviderError::Other(format!("No API key for provider: {}", req.model.provider))
            })?;
        let replayed = body::replayed(req);
        let body = body::body(req, &replayed)?;
        let mut http = sse_request(stream_url(&req.model), RequestBody::of(&body, ctx)?);
        http.api_key(&req.model, Some(key), "x-goog-api-key", str::to_string);
        let parser = || GoogleParser::new(&req.model, ctx.deltas.clone());
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

/// Where the stream is asked for: the SDK's `models/` resource name under the base URL (which
/// already has the API version).
pub fn stream_url(model: &Model) -> String {
    let base = model.base_url.strip_suffix('/').unwrap_or(&model.base_url);
    let name = if model.id.starts_with("models/") || model.id.starts_with("tunedModels/") {
        model.id.clone()
    } else {
        format!("models/{}", model.id)
    };
    format!("{base}/{name}:streamGenerateContent?alt=sse")
}

/// An HTTP failure as the SDK's `ApiError` says it: the error body's JSON, or for a body that
/// is not JSON, the SDK's own wrapping of its text with the status.
pub(super) fn worded(e: ProviderError) -> ProviderError {
    e.worded_http(|status, body| match serde_json::from_str::<Value>(body) {
        Ok(v) => v.to_string(),
        Err(_) => {
            let reason = ProviderError::status_text(status);
            serde_json::json!({"error": {"message": body, "code": status, "status": reason}})
                .to_string()
        }
    })
}

fn regex(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    // The patterns are constants a test compiles; one that did not would only make its model
    // family go unrecognized.
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

/// The major version in a `gemini-N…`/`gemini-live-N…` id (1.6's `getGeminiMajorVersion`).
pub(super) fn gemini_major(id: &str) -> Option<u32> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let id = id.to_lowercase();
    let caps = regex(&RE, r"^gemini(?:-live)?-(\d+)")?.captures(&id)?;
    caps.get(1)?.as_str().parse().ok()
}

/// Whether function calls and responses carry their ids (Claude and gpt-oss behind Google
/// APIs, Gemini 3 and later).
pub(super) fn requires_tool_call_id(id: &str) -> bool {
    id.starts_with("claude-") || id.starts_with("gpt-oss-") || gemini_major(id) >= Some(3)
}

/// Whether images may go inside a function response (else they follow as a user turn).
pub(super) fn multimodal_function_response(id: &str) -> bool {
    gemini_major(id).is_none_or(|m| m >= 3)
}

/// Whether the model samples tool arguments strictly (`VALIDATED` calling).
pub(super) fn supports_strict_tools(id: &str) -> bool {
    gemini_major(id) >= Some(3)
}

/// Whether thinking is asked for by level rather than by budget (1.6's
/// `usesGoogleThinkingLevel`).
pub(super) fn uses_thinking_level(id: &str) -> bool {
    static V3: OnceLock<Option<Regex>> = OnceLock::new();
    static V4: OnceLock<Option<Regex>> = OnceLock::new();
    static GEMMA4: OnceLock<Option<Regex>> = OnceLock::new();
    let id = id.to_lowercase();
    let matches = |cell, p| regex(cell, p).is_some_and(|r| r.is_match(&id));
    matches(&V3, r"gemini-3(?:\.\d+)?-(?:pro|flash)")
        || matches(&V4, r"gemini-(?:[4-9]|[1-9]\d)")
        || id == "gemini-flash-latest"
        || id == "gemini-flash-lite-latest"
        || matches(&GEMMA4, r"gemma-?4")
}

/// `thinkingConfig`: by level or by budget, with or without thoughts in the answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_thoughts: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<i64>,
}

/// A level as Gemini names it, after the model's map (1.6's `resolveGoogleThinkingLevel`):
/// only the four levels Gemini has are valid.
fn api_level(model: &Model, level: ThinkingLevel) -> Result<&'static str, ProviderError> {
    let map: &ThinkingLevelMap = &model.thinking_level_map;
    let mapped = thinking_map::mapped(map, level);
    let name = match mapped {
        Some(Some(s)) => s.to_lowercase(),
        _ => level.as_str().to_string(),
    };
    Ok(match name.as_str() {
        "minimal" => "MINIMAL",
        "low" => "LOW",
        "medium" => "MEDIUM",
        "high" => "HIGH",
        _ => {
            let shown = match mapped {
                Some(Some(s)) => s.to_string(),
                Some(None) => "null".into(),
                None => "undefined".into(),
            };
            return Err(ProviderError::Other(format!(
                "Unsupported Google thinking level mapping for {}/{}: {} -> {shown}",
                model.provider,
                model.id,
                level.as_str()
            )));
        }
    })
}

/// 1.6's `getGoogleBudget` without custom budgets: 2.5 models' tables, else dynamic (-1).
/// Vertex AI's has no table of its own for 2.5 Flash-Lite (its Flash one applies).
fn budget(id: &str, level: &str, vertex: bool) -> i64 {
    let table: [i64; 4] = if id.contains("2.5-pro") {
        [128, 2048, 8192, 32768]
    } else if id.contains("2.5-flash-lite") && !vertex {
        [512, 2048, 8192, 24576]
    } else if id.contains("2.5-flash") {
        [128, 2048, 8192, 24576]
    } else {
        return -1;
    };
    match level {
        "MINIMAL" => table[0],
        "LOW" => table[1],
        "MEDIUM" => table[2],
        _ => table[3],
    }
}

/// The `thinkingConfig` for `level` (1.6's `streamSimple` and `buildParams`): none for a
/// model without reasoning; thinking off is a zero budget, or, for a level model that cannot
/// switch it off, the lowest level it has (1.6's `getDisabledGoogleThinkingConfig`).
pub fn thinking_config(
    model: &Model,
    level: ThinkingLevel,
) -> Result<Option<ThinkingConfig>, ProviderError> {
    if !model.reasoning {
        return Ok(None);
    }
    let map = &model.thinking_level_map;
    let by_level = uses_thinking_level(&model.id);
    // Off is not clamped: 1.6's agent asks for no reasoning then, and the provider sends its
    // disabled form.
    let level = match level {
        ThinkingLevel::Off => ThinkingLevel::Off,
        l => thinking_map::clamp(true, map, l),
    };
    if level == ThinkingLevel::Off {
        let fallback = thinking_map::clamp(true, map, ThinkingLevel::Off);
        let config = if !by_level || fallback == ThinkingLevel::Off {
            ThinkingConfig {
                include_thoughts: None,
                thinking_level: None,
                thinking_budget: Some(0),
            }
        } else {
            ThinkingConfig {
                include_thoughts: None,
                thinking_level: Some(api_level(model, fallback)?),
                thinking_budget: None,
            }
        };
        return Ok(Some(config));
    }
    let name = api_level(model, level)?;
    Ok(Some(if by_level {
        ThinkingConfig {
            include_thoughts: Some(true),
            thinking_level: Some(name),
            thinking_budget: None,
        }
    } else {
        ThinkingConfig {
            include_thoughts: Some(true),
            thinking_level: None,
            thinking_budget: Some(budget(
                &model.id,
                name,
                model.api == super::google_vertex::GOOGLE_VERTEX_API,
            )),
        }
    }))
}

#[cfg(test)]
#[path = "google_tests.rs"]
mod tests;
