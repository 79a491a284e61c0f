//! Model providers behind one trait, and the registry that maps an `api` name to one.
//!
//! A provider turns a [`Request`] (system prompt, messages, tool schemas) into one streamed
//! [`AssistantMessage`]: it sends [`AssistantDelta`]s on the channel as they arrive and returns
//! the final message. Retry with backoff lives in [`retry`], above the providers, so every wire
//! API gets the same policy and the same `auto_retry_*` events.

pub mod anthropic;
mod anthropic_body;
mod anthropic_params;
mod anthropic_system;
#[cfg(test)]
mod anthropic_tests;
mod anthropic_wire;
pub mod bedrock;
pub mod bedrock_auth;
mod bedrock_body;
mod bedrock_events;
mod bedrock_models;
mod bedrock_sign;
mod cache_retention;
mod constrained_sampling;
mod context_budget;
pub mod copilot_headers;
pub mod cost;
pub mod faux;
#[cfg(test)]
mod fixture_case;
pub mod gcp_auth;
pub mod google;
mod google_body;
mod google_events;
pub mod google_vertex;
pub mod headers;
pub mod http;
mod kept_json;
pub mod mistral;
mod mistral_body;
mod mistral_events;
mod mistral_ids;
pub mod openai;
mod openai_body;
mod openai_chunk;
pub mod openai_codex;
pub mod openai_responses;
mod openai_responses_body;
mod openai_responses_events;
mod openai_responses_ids;
mod openai_responses_system;
pub mod pi_messages;
pub mod retry;
mod session_affinity;
pub mod sse;
pub mod stream;
#[cfg(test)]
mod system_messages_tests;
pub mod thinking_map;
pub mod transcript;

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::delta::AssistantDelta;
use crate::message::{AssistantMessage, Message};

/// Thinking (reasoning) levels, as pi names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    #[default]
    Off,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
    Max,
}

impl ThinkingLevel {
    pub const ALL: [&'static str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.to_ascii_lowercase().as_str() {
            "off" => Self::Off,
            "minimal" => Self::Minimal,
            "low" => Self::Low,
            "medium" => Self::Medium,
            "high" => Self::High,
            "xhigh" => Self::Xhigh,
            "max" => Self::Max,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        Self::ALL[self as usize]
    }

    /// Anthropic thinking budget in tokens for this level (pi's defaults).
    pub fn budget_tokens(self) -> u32 {
        match self {
            Self::Off => 0,
            Self::Minimal => 1024,
            Self::Low => 2048,
            Self::Medium => 8192,
            Self::High | Self::Xhigh | Self::Max => 16384,
        }
    }
}

/// Everything a provider needs to know about the model it talks to.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    pub id: String,
    pub name: String,
    pub provider: String,
    pub api: String,
    pub base_url: String,
    /// Extra HTTP headers, values already resolved, each marked if it is a credential.
    pub headers: BTreeMap<String, headers::ModelHeader>,
    pub reasoning: bool,
    /// `"text"`, `"image"`: what the model takes in (APIs that must replace images for a
    /// model without image input read it). Not shown to clients.
    #[serde(skip)]
    pub input: Vec<String>,
    pub context_window: u64,
    pub max_tokens: u64,
    /// Prices ($/Mtok); every message this model produces is priced with them when it ends.
    pub cost: cost::CostRates,
    /// Provider-specific compatibility switches from models.json, passed through.
    pub compat: Value,
    /// How long the provider keeps a prompt cache entry, when models.json declares it.
    #[serde(skip_serializing_if = "PromptCache::is_unknown")]
    pub prompt_cache: PromptCache,
    /// `thinkingLevelMap`: the levels the model offers and their API names (empty: none
    /// given). Read by the APIs whose requests depend on it; not shown to clients.
    #[serde(skip)]
    pub thinking_level_map: thinking_map::ThinkingLevelMap,
    /// How the key travels and what the stored credential carries besides it: not part of
    /// the model as clients see it (`get_state`).
    #[serde(skip)]
    pub auth: ModelAuth,
}

/// What a provider's credential says beyond the key itself (pi 1.6's per-provider auth).
#[derive(Debug, Clone, Default)]
pub struct ModelAuth {
    /// A subscription login's token, asked for at each request (it refreshes itself before it
    /// expires); it replaces the run's key.
    pub token: Option<Arc<dyn TokenSource>>,
    /// Send the key only as `<header>: Bearer <key>`, not in the API's own key header
    /// (Cloudflare's AI Gateway takes `cf-aig-authorization`).
    pub key_header: Option<&'static str>,
    /// The credential's own variables (auth.json's `env` object), read before the process
    /// environment: an Azure resource name, a Cloudflare account id.
    pub env: BTreeMap<String, String>,
}

/// A key that changes during a run: a subscription login's access token, which its source
/// refreshes (under auth.json's lock, shared with TypeScript pi) shortly before it expires.
#[async_trait]
pub trait TokenSource: Send + Sync + std::fmt::Debug {
    /// What to send now: the token, and the base URL when the login decides it (GitHub
    /// Copilot's per-account endpoint).
    async fn auth(&self) -> Result<crate::oauth::RequestAuth, ProviderError>;
}

/// A request's credential once asked for: the key it sends and, when the credential decides
/// it, the base URL it goes to instead of the model's (as 1.6's `toAuth` `baseUrl` does).
#[derive(Debug, Clone, Default)]
pub struct Credential {
    pub key: Option<String>,
    base_url: Option<String>,
}

impl Credential {
    /// Where the request goes: the credential's base URL, else `model`'s.
    pub fn base_url<'a>(&'a self, model: &'a Model) -> &'a str {
        self.base_url.as_deref().unwrap_or(&model.base_url)
    }
}

impl Request {
    /// The key this request sends: the login's current token when the model has one, else
    /// the run's key.
    pub async fn credential(&self) -> Result<Option<String>, ProviderError> {
        Ok(self.resolved_auth().await?.key)
    }

    /// The key and the base URL this request uses: the login's (its current token and the
    /// endpoint it names, if any) when the model has one, else the run's key and the model's
    /// URL. APIs a login can redirect (Copilot's) build their URL from this.
    pub async fn resolved_auth(&self) -> Result<Credential, ProviderError> {
        match &self.model.auth.token {
            Some(source) => source.auth().await.map(|a| Credential {
                key: Some(a.key),
                base_url: a.base_url,
            }),
            None => Ok(Credential {
                key: self.api_key.clone(),
                base_url: None,
            }),
        }
    }
}

impl Model {
    /// Whether the model takes images.
    pub fn supports_images(&self) -> bool {
        self.input.iter().any(|i| i == "image")
    }

    /// The variable `name` as this model's provider sees it: the credential's value, else the
    /// process environment's.
    pub fn env_var(&self, name: &str) -> Option<String> {
        self.auth
            .env
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
    }
}

/// `promptCache`: the provider's best-effort prompt cache lifetime, in seconds, per retention
/// tier. Unset means the cache behaviour is unknown, so nothing is kept warm for the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptCache {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub long: Option<f64>,
}

impl PromptCache {
    pub fn is_unknown(&self) -> bool {
        self.short.is_none() && self.long.is_none()
    }
}

/// A tool as the model sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
    /// pi 1.6's `constrainedSampling` hint on its built-in tools: declared in the
    /// transcript's system messages, never sent to an API.
    #[serde(skip)]
    pub constrained_sampling: Option<Value>,
}

impl ToolSpec {
    /// How `tool` is offered to the model.
    pub fn of(tool: &dyn crate::tools::Tool) -> ToolSpec {
        ToolSpec {
            name: tool.name().to_string(),
            description: tool.description().to_string(),
            parameters: tool.parameters(),
            constrained_sampling: tool.constrained_sampling(),
        }
    }
}

/// One request to a model.
#[derive(Debug, Clone)]
pub struct Request {
    pub model: Model,
    pub api_key: Option<String>,
    pub system_prompt: String,
    /// The agent's context, shared with it and the session: building a request copies no
    /// message, and providers serialize the body from these references.
    pub messages: Vec<Arc<Message>>,
    /// The registry's specs, shared: a request copies no schema.
    pub tools: Arc<[ToolSpec]>,
    pub thinking: ThinkingLevel,
    /// The session's id, for the APIs that key their prompt cache by it (1.6's `sessionId`:
    /// OpenAI's `prompt_cache_key`, Codex's `session-id`); none outside a session.
    pub session_id: Option<String>,
}

/// Why a provider call failed. `retryable` errors (429, 5xx, dropped streams) are retried by
/// [`retry`]; the rest end the turn with an error message.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderError {
    #[error("{status} {message}")]
    Http {
        status: u16,
        message: String,
        /// Server-requested delay (Retry-After), if any.
        retry_after_ms: Option<u64>,
    },
    /// An HTTP failure as the API's own client words it, whole: the message says everything
    /// (Google's SDK makes it the error body), so no status goes in front. Retried as
    /// [`ProviderError::Http`] is.
    #[error("{message}")]
    Api {
        status: u16,
        message: String,
        retry_after_ms: Option<u64>,
    },
    #[error("connection error: {0}")]
    Connection(String),
    #[error("stream ended unexpectedly: {0}")]
    StreamDropped(String),
    /// A transient failure the API reported in its own words (Mistral's `error` finish
    /// reason, a stream without one): retried, worded as the API's client words it.
    #[error("{0}")]
    Transient(String),
    #[error("invalid response from provider: {0}")]
    Protocol(String),
    #[error("{0}")]
    Other(String),
    #[error("aborted")]
    Aborted,
}

impl ProviderError {
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Http { status, .. } | ProviderError::Api { status, .. } => {
                *status == 429 || *status >= 500
            }
            ProviderError::Connection(_)
            | ProviderError::StreamDropped(_)
            | ProviderError::Transient(_) => true,
            _ => false,
        }
    }

    /// An HTTP failure said in the API's own client's words: `say(status, body)` is the whole
    /// message; the status and the server's delay stay for retries. Other errors pass as
    /// they are.
    pub fn worded_http(self, say: impl FnOnce(u16, &str) -> String) -> ProviderError {
        match self {
            ProviderError::Http {
                status,
                message,
                retry_after_ms,
            } => ProviderError::Api {
                status,
                message: say(status, &message),
                retry_after_ms,
            },
            other => other,
        }
    }

    /// The HTTP reason phrase of `status` (`Too Many Requests`), as `fetch`'s `statusText`
    /// has it; empty for a status without one.
    pub fn status_text(status: u16) -> &'static str {
        reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("")
    }

    /// The delay the server asked for, if any.
    pub fn retry_after_ms(&self) -> Option<u64> {
        match self {
            ProviderError::Http { retry_after_ms, .. }
            | ProviderError::Api { retry_after_ms, .. } => *retry_after_ms,
            _ => None,
        }
    }
}

/// Hook points inside a provider call (SPEC 4.3): `before_provider_request` may replace the
/// JSON payload, `before_provider_headers` may edit headers, `after_provider_response` sees the
/// status and headers before the body is read, `provider_stream_event` each raw stream event. The default does nothing, so providers call
/// these unconditionally and the extension host attaches by implementing the trait.
#[async_trait]
pub trait ProviderHooks: Send + Sync {
    /// Whether [`Self::before_provider_request`] may see and rewrite the body. When it will
    /// not, providers write the body straight from the request's messages, never building
    /// it as JSON values (which would copy the conversation).
    fn rewrites_request(&self) -> bool {
        true
    }
    async fn before_provider_request(&self, payload: Value) -> Value {
        payload
    }
    async fn before_provider_headers(
        &self,
        headers: BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        headers
    }
    async fn after_provider_response(&self, _status: u16, _headers: &BTreeMap<String, String>) {}
    /// Whether [`Self::provider_stream_event`] wants the raw events; asked once per response.
    fn observes_stream(&self) -> bool {
        false
    }
    /// One raw event of the response stream (`event`: its SSE event name, if any), before
    /// the provider parses it. Read-only, and must not block.
    fn provider_stream_event(&self, _model: &Model, _event: Option<&str>, _data: &str) {}
}

/// Hooks that do nothing.
pub struct NoProviderHooks;
impl ProviderHooks for NoProviderHooks {
    fn rewrites_request(&self) -> bool {
        false
    }
}

/// Context of one provider call besides the request itself.
#[derive(Clone)]
pub struct CallContext {
    pub deltas: mpsc::UnboundedSender<AssistantDelta>,
    pub cancel: CancellationToken,
    pub hooks: Arc<dyn ProviderHooks>,
}

/// One wire API.
#[async_trait]
pub trait Provider: Send + Sync {
    /// The `api` name this provider implements (`openai-completions`, …).
    fn api(&self) -> &'static str;

    /// Streams one assistant message. Deltas go to `ctx.deltas` as they are parsed; the
    /// returned message is authoritative. Cancellation returns `Err(ProviderError::Aborted)`.
    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError>;
}

/// The registry of wire APIs.
pub struct Providers {
    by_api: BTreeMap<&'static str, Arc<dyn Provider>>,
}

impl Providers {
    pub fn new() -> Self {
        Providers {
            by_api: BTreeMap::new(),
        }
    }

    /// The built-in wire APIs. The HTTP client is shared so connections are reused.
    pub fn builtin(faux_script: Option<faux::FauxScript>) -> Self {
        let client = http::client();
        let mut p = Providers::new();
        p.register(Arc::new(openai::OpenAiCompletions::new(client.clone())));
        p.register(Arc::new(openai_responses::OpenAiResponses::new(
            client.clone(),
        )));
        p.register(Arc::new(openai_responses::AzureOpenAiResponses::new(
            client.clone(),
        )));
        p.register(Arc::new(openai_codex::OpenAiCodex::new(client.clone())));
        p.register(Arc::new(pi_messages::PiMessages::new(client.clone())));
        p.register(Arc::new(google::GoogleGenerativeAi::new(client.clone())));
        p.register(Arc::new(mistral::MistralConversations::new(client.clone())));
        p.register(Arc::new(google_vertex::GoogleVertex::new(client.clone())));
        p.register(Arc::new(bedrock::BedrockConverseStream::new(
            client.clone(),
        )));
        p.register(Arc::new(anthropic::AnthropicMessages::new(client)));
        p.register(Arc::new(faux::Faux::new(faux_script.unwrap_or_default())));
        p
    }

    pub fn register(&mut self, p: Arc<dyn Provider>) {
        self.by_api.insert(p.api(), p);
    }

    pub fn get(&self, api: &str) -> Option<Arc<dyn Provider>> {
        self.by_api.get(api).cloned()
    }
}

impl Default for Providers {
    fn default() -> Self {
        Self::new()
    }
}
