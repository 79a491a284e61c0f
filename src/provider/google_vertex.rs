//! The `google-vertex` wire API: Gemini on Vertex AI, as pi 1.6 speaks it through
//! `@google/genai` with `vertexai: true` (`google-vertex.js`) and `google-auth-library`.
//!
//! The body and the stream are the Gemini API's ([`super::google_body`],
//! [`super::google_events`]), but for what 1.6's Vertex path does its own way (function call
//! and response key order, 2.5 Flash-Lite's budgets, the error naming Vertex). What differs is
//! where the request goes and with what credential:
//!
//! - **A key** (`--api-key`, auth.json, `GOOGLE_CLOUD_API_KEY`, models.json; not the
//!   `gcp-vertex-credentials` marker nor a `<placeholder>`): Vertex AI express mode,
//!   `https://aiplatform.googleapis.com/v1/publishers/google/models/{model}:streamGenerateContent`,
//!   the key in `x-goog-api-key`.
//! - **Application Default Credentials** otherwise ([`super::gcp_auth`]), with a project
//!   (`GOOGLE_CLOUD_PROJECT`, else `GCLOUD_PROJECT`) and a location (`GOOGLE_CLOUD_LOCATION`),
//!   each read from the credential's `env` object before the environment:
//!   `https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent`
//!   (`aiplatform.googleapis.com` for `global`, `aiplatform.{us,eu}.rep.googleapis.com` for the
//!   multi-regions), `Authorization: Bearer <access token>`.
//!
//! The catalog's base URL (`https://{location}-aiplatform.googleapis.com`) only stands for the
//! SDK's choice above; `GOOGLE_VERTEX_BASE_URL` replaces the host as it does for the SDK. A
//! base URL without `{location}` (a models.json proxy) is the collection itself: the model path
//! goes right under it (after `v1`, unless the URL has its own version), without the project.

use async_trait::async_trait;
use regex::Regex;
use std::sync::OnceLock;

use super::gcp_auth;
use super::google::worded;
use super::google_body as body;
use super::google_events::GoogleParser;
use super::stream::{sse_request, stream_call, RequestBody};
use super::{CallContext, Model, Provider, ProviderError, Request};
use crate::message::AssistantMessage;

pub const GOOGLE_VERTEX_API: &str = "google-vertex";
/// The API version 1.6 asks the SDK for.
const API_VERSION: &str = "v1";
/// The key 1.6's models.json entries give a Vertex provider that signs in with Application
/// Default Credentials: it means "no key".
pub const CREDENTIALS_MARKER: &str = "gcp-vertex-credentials";
/// Express mode's host, and the `global` location's.
const GLOBAL_BASE: &str = "https://aiplatform.googleapis.com/";

pub struct GoogleVertex {
    client: reqwest::Client,
}

impl GoogleVertex {
    pub fn new(client: reqwest::Client) -> Self {
        GoogleVertex { client }
    }
}

/// How a request is authorized, and so where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target<'a> {
    /// Express mode: a Google Cloud API key.
    Key(&'a str),
    /// Application Default Credentials, in a project and location.
    Adc { project: String, location: String },
}

/// The key 1.6 sends, if any (its `resolveApiKey`): trimmed, and neither the credentials
/// marker nor a `<placeholder>`.
pub fn api_key(raw: Option<&str>) -> Option<&str> {
    let key = raw?.trim();
    let placeholder = key.len() > 2 && key.starts_with('<') && key.ends_with('>') && {
        let inner = &key[1..key.len() - 1];
        !inner.contains('>')
    };
    (!key.is_empty() && key != CREDENTIALS_MARKER && !placeholder).then_some(key)
}

/// `name` from the credential's `env` object, else the environment, when not empty.
fn var(model: &Model, name: &str) -> Option<String> {
    model.env_var(name).filter(|v| !v.is_empty())
}

/// The project (1.6's `resolveProject`).
pub fn project(model: &Model) -> Result<String, ProviderError> {
    var(model, "GOOGLE_CLOUD_PROJECT")
        .or_else(|| var(model, "GCLOUD_PROJECT"))
        .ok_or_else(|| {
            ProviderError::Other(
                "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or \
                 pass project in options."
                    .into(),
            )
        })
}

/// The location (1.6's `resolveLocation`).
pub fn location(model: &Model) -> Result<String, ProviderError> {
    var(model, "GOOGLE_CLOUD_LOCATION").ok_or_else(|| {
        ProviderError::Other(
            "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in \
             options."
                .into(),
        )
    })
}

/// How `req` is authorized: its key, else ADC in the project and location.
pub fn target(req: &Request) -> Result<Target<'_>, ProviderError> {
    Ok(match api_key(req.api_key.as_deref()) {
        Some(key) => Target::Key(key),
        None => Target::Adc {
            project: project(&req.model)?,
            location: location(&req.model)?,
        },
    })
}

/// The model's resource path (the SDK's `tModel` for Vertex AI).
fn model_path(id: &str) -> Result<String, ProviderError> {
    if id.contains("..") || id.contains('?') || id.contains('&') {
        return Err(ProviderError::Other("invalid model parameter".into()));
    }
    Ok(
        if id.starts_with("publishers/") || id.starts_with("projects/") || id.starts_with("models/")
        {
            id.to_string()
        } else if let Some((publisher, rest)) = id.split_once('/') {
            let name = rest.split('/').next().unwrap_or_default();
            format!("publishers/{publisher}/models/{name}")
        } else {
            format!("publishers/google/models/{id}")
        },
    )
}

/// A base URL of the user's (1.6's `resolveCustomBaseUrl`): one with `{location}` is the
/// catalog's stand-in for the SDK's own.
fn custom_base_url(base: &str) -> Option<&str> {
    let trimmed = base.trim();
    (!trimmed.is_empty() && !trimmed.contains("{location}")).then_some(trimmed)
}

/// Whether a path segment of `url` is an API version (`v1`, `v1beta1`).
fn includes_api_version(url: &str) -> bool {
    static SEGMENT: OnceLock<Option<Regex>> = OnceLock::new();
    static ANYWHERE: OnceLock<Option<Regex>> = OnceLock::new();
    match reqwest::Url::parse(url) {
        Ok(parsed) => {
            let re = SEGMENT
                .get_or_init(|| Regex::new(r"^v\d+(?:beta\d*)?$").ok())
                .as_ref();
            parsed
                .path()
                .split('/')
                .any(|part| re.is_some_and(|r| r.is_match(part)))
        }
        Err(_) => ANYWHERE
            .get_or_init(|| Regex::new(r"(?:^|/)v\d+(?:beta\d*)?(?:/|$)").ok())
            .as_ref()
            .is_some_and(|r| r.is_match(url)),
    }
}

/// Where the stream is asked for.
pub fn stream_url(model: &Model, target: &Target<'_>) -> Result<String, ProviderError> {
    // The SDK reads it from the process environment only.
    let from_env = std::env::var("GOOGLE_VERTEX_BASE_URL").ok();
    stream_url_with(model, target, from_env)
}

/// [`stream_url`] with `GOOGLE_VERTEX_BASE_URL` as given.
fn stream_url_with(
    model: &Model,
    target: &Target<'_>,
    from_env: Option<String>,
) -> Result<String, ProviderError> {
    let path = model_path(&model.id)?;
    let (base, version, in_project) = match custom_base_url(&model.base_url) {
        Some(custom) => {
            let version = if includes_api_version(custom) {
                ""
            } else {
                API_VERSION
            };
            (custom.to_string(), version, false)
        }
        None => {
            let base = match (from_env.filter(|v| !v.is_empty()), target) {
                (Some(base), _) => base,
                (None, Target::Key(_)) => GLOBAL_BASE.to_string(),
                (None, Target::Adc { location, .. }) => match location.as_str() {
                    "global" => GLOBAL_BASE.to_string(),
                    "us" | "eu" => format!("https://aiplatform.{location}.rep.googleapis.com/"),
                    _ => format!("https://{location}-aiplatform.googleapis.com/"),
                },
            };
            (base, API_VERSION, true)
        }
    };
    let mut url = base.strip_suffix('/').unwrap_or(&base).to_string();
    if !version.is_empty() {
        url.push('/');
        url.push_str(version);
    }
    if let (true, Target::Adc { project, location }) = (in_project, target) {
        url.push_str(&format!("/projects/{project}/locations/{location}"));
    }
    url.push('/');
    url.push_str(&path);
    url.push_str(":streamGenerateContent?alt=sse");
    Ok(url)
}

#[async_trait]
impl Provider for GoogleVertex {
    fn api(&self) -> &'static str {
        GOOGLE_VERTEX_API
    }

    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        // 1.6's order: the project and location are asked for before the body is built, and
        // the credentials are spent only when the request goes out.
        let target = target(req)?;
        let replayed = body::replayed(req);
        let body = body::body(req, &replayed)?;
        let url = stream_url(&req.model, &target)?;
        let mut http = sse_request(url, RequestBody::of(&body, ctx)?);
        match &target {
            Target::Key(key) => {
                http.api_key(&req.model, Some(key), "x-goog-api-key", str::to_string);
            }
            Target::Adc { .. } => {
                let token = gcp_auth::access_token(&self.client, &req.model, &ctx.cancel).await?;
                http.credential_header("authorization", &format!("Bearer {}", token.token));
                if let Some(project) = &token.quota_project {
                    http.header("x-goog-user-project", project);
                }
            }
        }
        let parser = || GoogleParser::new(&req.model, ctx.deltas.clone());
        stream_call(&self.client, http, ctx, &req.model, parser)
            .await
            .map_err(worded)
    }
}

#[cfg(test)]
#[path = "google_vertex_tests.rs"]
mod tests;
