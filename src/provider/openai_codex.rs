//! The `openai-codex-responses` wire API: the ChatGPT-subscription endpoint
//! (`POST {baseUrl}/codex/responses`) a ChatGPT Plus/Pro login talks to, as pi 1.6 speaks it
//! over server-sent events.
//!
//! The conversation is the Responses API's ([`super::openai_responses_body`]'s items, with
//! Codex's `strict: null` tools and, for models that take the thinking level inside the
//! conversation, a `configuration_update` item carrying it while the body asks for `medium`),
//! and the stream is read by the Responses parser in its Codex mode. What is Codex's lives
//! here: the endpoint, the account the request is billed to (taken from the access token's
//! JWT, as 1.6 does), Codex's headers and its error wording (a usage limit said in the
//! user's plan's words); the session's id keys the prompt cache (`prompt_cache_key`,
//! `session-id`). 1.6 also offers a WebSocket transport and zstd-compressed bodies;
//! the backend takes the plain SSE request this sends as well, which 1.6 itself falls back to.

use async_trait::async_trait;
use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;

use super::context_budget::clamp_max_tokens;
use super::openai_responses_body::{self as body, Flavor, Item, Tool};
use super::openai_responses_events::ResponsesParser;
use super::stream::{sse_request, stream_call, RequestBody};
use super::thinking_map;
use super::{CallContext, Model, Provider, ProviderError, Request, ThinkingLevel};
use crate::message::AssistantMessage;

pub const CODEX_API: &str = "openai-codex-responses";

const DEFAULT_BASE_URL: &str = "https://chatgpt.com/backend-api";
/// The access token's claim naming the ChatGPT account.
const JWT_CLAIM: &str = "https://api.openai.com/auth";
/// Responses rejects `max_output_tokens` below this.
const MIN_OUTPUT_TOKENS: u64 = 16;
/// The body's effort while `configuration_update` items carry the level.
const CONFIGURATION_UPDATE_REQUEST_EFFORT: &str = "medium";

pub struct OpenAiCodex {
    client: reqwest::Client,
}

impl OpenAiCodex {
    pub fn new(client: reqwest::Client) -> Self {
        OpenAiCodex { client }
    }
}

#[async_trait]
impl Provider for OpenAiCodex {
    fn api(&self) -> &'static str {
        CODEX_API
    }

    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        let Some(key) = req.credential().await?.filter(|k| !k.is_empty()) else {
            return Err(ProviderError::Other(format!(
                "No API key for provider: {}",
                req.model.provider
            )));
        };
        let account = account_id(&key)
            .ok_or_else(|| ProviderError::Other("Failed to extract accountId from token".into()))?;
        let efforts = Efforts::of(&req.model, req.thinking);
        let replayed = body::replayed(req);
        let body = codex_body(req, &replayed, &efforts)?;
        let mut http = sse_request(stream_url(&req.model), RequestBody::of(&body, ctx)?);
        http.header("originator", "pi");
        http.credential_header("authorization", &format!("Bearer {key}"));
        http.header("chatgpt-account-id", &account);
        http.header("openai-beta", "responses=experimental");
        if let Some(session) = body::prompt_cache_key(req) {
            http.header("session-id", session);
            http.header("x-client-request-id", session);
        }
        let parser = || ResponsesParser::codex(&req.model, ctx.deltas.clone());
        let mut message = stream_call(&self.client, http, ctx, &req.model, parser)
            .await
            .map_err(worded)?;
        message.provider_thinking_level = efforts.update.map(str::to_string);
        Ok(message)
    }
}

/// The JSON request body (before `before_provider_request`), as hooks see it.
pub fn build_body(req: &Request) -> Value {
    let replayed = body::replayed(req);
    codex_body(req, &replayed, &Efforts::of(&req.model, req.thinking))
        .ok()
        .and_then(|b| serde_json::to_value(b).ok())
        .unwrap_or(Value::Null)
}

/// `codex/responses` under the base URL (Codex's default when it is empty), unless the base
/// already names it.
pub fn stream_url(model: &Model) -> String {
    let raw = Some(model.base_url.trim())
        .filter(|b| !b.is_empty())
        .map_or(DEFAULT_BASE_URL, |_| model.base_url.as_str());
    let base = raw.trim_end_matches('/');
    if base.ends_with("/codex/responses") {
        base.to_string()
    } else if base.ends_with("/codex") {
        format!("{base}/responses")
    } else {
        format!("{base}/codex/responses")
    }
}

/// The ChatGPT account an access token belongs to, from its JWT's claim.
pub fn account_id(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (Some(_), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    // JWTs are base64url without padding; 1.6's atob also takes the padded standard form.
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .or_else(|_| base64::engine::general_purpose::STANDARD.decode(payload))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims[JWT_CLAIM]["chatgpt_account_id"]
        .as_str()
        .filter(|a| !a.is_empty())
        .map(str::to_string)
}

/// The efforts of a request, as 1.6's `streamSimple` and `buildRequestBody` resolve them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Efforts<'a> {
    /// The body's `reasoning.effort` (none: no `reasoning`).
    pub request: Option<&'a str>,
    /// The level a `configuration_update` item switches to.
    pub update: Option<&'a str>,
}

impl<'a> Efforts<'a> {
    pub fn of(model: &'a Model, level: ThinkingLevel) -> Efforts<'a> {
        let clamped = match level {
            ThinkingLevel::Off => ThinkingLevel::Off,
            l => thinking_map::clamp(model.reasoning, &model.thinking_level_map, l),
        };
        // Off is asked for as effort `none` on a reasoning model, so switching to it keeps the
        // cache where configuration updates carry the level.
        let asked = match clamped {
            ThinkingLevel::Off if model.reasoning => Some(ThinkingLevel::Off),
            ThinkingLevel::Off => None,
            l => Some(l),
        };
        let Some(asked) = asked else {
            return Efforts {
                request: None,
                update: None,
            };
        };
        let resolved = resolve(model, asked);
        let mid_conversation =
            model.compat.get("supportsMidConvoEffort") == Some(&Value::Bool(true));
        match (mid_conversation, resolved) {
            (true, Some(effort)) => Efforts {
                request: Some(CONFIGURATION_UPDATE_REQUEST_EFFORT),
                update: Some(effort),
            },
            (_, resolved) => Efforts {
                request: resolved,
                update: None,
            },
        }
    }
}

/// The provider's name of a level (off: `none`); none where the model's map says it takes no
/// reasoning field for it.
fn resolve(model: &Model, level: ThinkingLevel) -> Option<&str> {
    let map = &model.thinking_level_map;
    match (level, thinking_map::mapped(map, level)) {
        (ThinkingLevel::Off, None) => Some("none"),
        (ThinkingLevel::Off, Some(named)) => named,
        (_, Some(Some(named))) => Some(named),
        (l, _) => Some(l.as_str()),
    }
}

#[derive(Debug, Serialize)]
struct Text {
    verbosity: &'static str,
}

#[derive(Debug, Serialize)]
struct Reasoning<'a> {
    effort: &'a str,
    summary: &'static str,
}

/// The request body, in 1.6's field order.
#[derive(Debug, Serialize)]
pub struct CodexBody<'a> {
    model: &'a str,
    store: bool,
    stream: bool,
    input: Vec<Item<'a>>,
    text: Text,
    include: [&'static str; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    tool_choice: &'static str,
    parallel_tool_calls: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Reasoning<'a>>,
}

fn codex_body<'a>(
    req: &'a Request,
    replayed: &'a [std::sync::Arc<crate::message::Message>],
    efforts: &Efforts<'a>,
) -> Result<CodexBody<'a>, ProviderError> {
    let model = &req.model;
    let flavor = Flavor {
        model: &model.id,
        tool_call_providers: body::OPENAI_TOOL_CALL_PROVIDERS,
        strict_default: true,
        openai: false,
        loose_strict: None,
        configuration_update: efforts.update,
        chatgpt_sign_in: false,
    };
    let (tools, input) = body::tools_and_input(req, replayed, flavor)?;
    let max_tokens = clamp_max_tokens(req);
    let max_output =
        max_tokens > 0 && model.compat.get("supportsMaxOutputTokens") != Some(&Value::Bool(false));
    Ok(CodexBody {
        model: &model.id,
        store: false,
        stream: true,
        input,
        text: Text { verbosity: "low" },
        include: ["reasoning.encrypted_content"],
        prompt_cache_key: body::prompt_cache_key(req),
        tool_choice: "auto",
        parallel_tool_calls: true,
        max_output_tokens: max_output.then(|| max_tokens.max(MIN_OUTPUT_TOKENS)),
        tools,
        reasoning: efforts.request.map(|effort| Reasoning {
            effort,
            summary: "auto",
        }),
    })
}

/// An HTTP failure in 1.6's words: the error's own message, else the body as it came; a
/// usage limit as "You have hit your ChatGPT usage limit (plan). Try again in ~N min.", not
/// retried (it lasts for hours).
fn worded(e: ProviderError) -> ProviderError {
    if let ProviderError::Http {
        status, message, ..
    } = &e
    {
        if let Some(limit) = usage_limit(*status, message) {
            return ProviderError::Other(limit);
        }
    }
    e.worded_http(|_, body| {
        let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        match parsed.pointer("/error/message").and_then(Value::as_str) {
            Some(m) if !m.is_empty() => m.to_string(),
            _ if body.is_empty() => "Request failed".to_string(),
            _ => body.to_string(),
        }
    })
}

/// 1.6's wording of a usage limit (a 429, or a limit's error code), when `body` is one.
fn usage_limit(status: u16, body: &str) -> Option<String> {
    let parsed: Value = serde_json::from_str(body).ok()?;
    let error = parsed.get("error").filter(|e| e.is_object())?;
    let code = error["code"]
        .as_str()
        .filter(|c| !c.is_empty())
        .or(error["type"].as_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let limited = [
        "usage_limit_reached",
        "usage_not_included",
        "rate_limit_exceeded",
    ]
    .iter()
    .any(|c| code.contains(c));
    if !limited && status != 429 {
        return None;
    }
    let plan = error["plan_type"]
        .as_str()
        .map(|p| format!(" ({} plan)", p.to_lowercase()))
        .unwrap_or_default();
    let when = error["resets_at"]
        .as_f64()
        .map(|at| {
            let mins = ((at * 1000.0 - crate::oauth::now_ms() as f64) / 60_000.0)
                .round()
                .max(0.0);
            format!(" Try again in ~{mins} min.")
        })
        .unwrap_or_default();
    Some(
        format!("You have hit your ChatGPT usage limit{plan}.{when}")
            .trim()
            .to_string(),
    )
}

#[cfg(test)]
#[path = "openai_codex_tests.rs"]
mod tests;
