//! The `openai-responses` and `azure-openai-responses` wire APIs: streaming OpenAI Responses
//! (`POST {baseUrl}/responses`), as pi 1.6 speaks it.
//!
//! Both send the same body ([`super::openai_responses_body`]) and read the same events
//! ([`super::openai_responses_events`]); they differ in where the request goes and how the key
//! travels. OpenAI takes `Authorization: Bearer`; Azure takes an `api-key` header, an
//! `api-version` query and its deployment name as the body's `model`, resolved from the
//! environment as 1.6's `azure-openai-config.js` does. Retries, hooks and cancellation are the
//! shared ones of [`super::stream`].

use async_trait::async_trait;
use serde_json::Value;

use super::copilot_headers;
use super::openai_responses_body::{self as body, Flavor};
use super::openai_responses_events::ResponsesParser;
use super::session_affinity;
use super::stream::{join_url, sse_request, stream_call, RequestBody};
use super::{CallContext, Model, Provider, ProviderError, Request};
use crate::message::AssistantMessage;

pub const OPENAI_RESPONSES_API: &str = "openai-responses";
pub const AZURE_RESPONSES_API: &str = "azure-openai-responses";

/// Azure's `api-version` when `AZURE_OPENAI_API_VERSION` is not set.
const DEFAULT_AZURE_API_VERSION: &str = "v1";

pub struct OpenAiResponses {
    client: reqwest::Client,
}

impl OpenAiResponses {
    pub fn new(client: reqwest::Client) -> Self {
        OpenAiResponses { client }
    }
}

/// OpenAI's flavor for a request sent with `key`.
fn openai_flavor<'a>(req: &'a Request, key: Option<&str>) -> Flavor<'a> {
    let model = &req.model;
    // Sign in with ChatGPT (a token, not an `sk-` key, to OpenAI itself) rejects
    // configuration_update items (1.6's `isChatGPTSignIn`).
    let chatgpt = model.provider == "openai"
        && model.base_url == "https://api.openai.com/v1"
        && key.is_some_and(|k| !k.starts_with("sk-"));
    Flavor {
        model: &model.id,
        tool_call_providers: body::OPENAI_TOOL_CALL_PROVIDERS,
        strict_default: false,
        openai: true,
        loose_strict: Some(false),
        configuration_update: body::mid_conversation_effort(req).filter(|_| !chatgpt),
        chatgpt_sign_in: chatgpt,
    }
}

#[async_trait]
impl Provider for OpenAiResponses {
    fn api(&self) -> &'static str {
        OPENAI_RESPONSES_API
    }

    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        let auth = req.resolved_auth().await?;
        let url = join_url(auth.base_url(&req.model), "responses");
        let replayed = body::replayed(req);
        let key = auth.key.as_deref();
        let flavor = openai_flavor(req, key);
        let body = RequestBody::of(&body::body(req, &replayed, flavor)?, ctx)?;
        let mut http = sse_request(url, body);
        http.api_key(&req.model, key, "authorization", |k| format!("Bearer {k}"));
        copilot_headers::apply(&mut http, req);
        session_affinity::apply(&mut http, req, session_affinity::Api::Responses);
        let parser = || ResponsesParser::new(&req.model, ctx.deltas.clone());
        stream_call(&self.client, http, ctx, &req.model, parser).await
    }
}

pub struct AzureOpenAiResponses {
    client: reqwest::Client,
}

impl AzureOpenAiResponses {
    pub fn new(client: reqwest::Client) -> Self {
        AzureOpenAiResponses { client }
    }
}

#[async_trait]
impl Provider for AzureOpenAiResponses {
    fn api(&self) -> &'static str {
        AZURE_RESPONSES_API
    }

    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        let env = |k: &str| req.model.env_var(k);
        let key = req.credential().await?;
        let key = key.as_deref().filter(|k| !k.is_empty()).ok_or_else(|| {
            ProviderError::Other(format!("No API key for provider: {}", req.model.provider))
        })?;
        let azure = azure::resolve(&req.model, &env)?;
        let url = format!(
            "{}?api-version={}",
            join_url(&azure.base_url, "responses"),
            urlencoding(&azure.api_version)
        );
        let replayed = body::replayed(req);
        let flavor = Flavor {
            model: &azure.deployment,
            tool_call_providers: body::AZURE_TOOL_CALL_PROVIDERS,
            strict_default: true,
            openai: false,
            loose_strict: Some(false),
            configuration_update: None,
            chatgpt_sign_in: false,
        };
        let body = RequestBody::of(&body::body(req, &replayed, flavor)?, ctx)?;
        let mut http = sse_request(url, body);
        http.credential_header("api-key", key);
        let parser = || ResponsesParser::new(&req.model, ctx.deltas.clone());
        stream_call(&self.client, http, ctx, &req.model, parser).await
    }
}

/// A query value percent-encoded (api versions are plain, but the variable is the user's).
fn urlencoding(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The JSON request body (before `before_provider_request`), as hooks see it.
pub fn build_body(req: &Request) -> Value {
    let replayed = body::replayed(req);
    let encoded = if req.model.api == AZURE_RESPONSES_API {
        let env = |k: &str| req.model.env_var(k);
        let deployment = azure::deployment(&req.model, &env);
        let flavor = Flavor {
            model: &deployment,
            tool_call_providers: body::AZURE_TOOL_CALL_PROVIDERS,
            strict_default: true,
            openai: false,
            loose_strict: Some(false),
            configuration_update: None,
            chatgpt_sign_in: false,
        };
        body::body(req, &replayed, flavor).map(serde_json::to_value)
    } else {
        body::body(req, &replayed, openai_flavor(req, req.api_key.as_deref()))
            .map(serde_json::to_value)
    };
    encoded.ok().and_then(Result::ok).unwrap_or(Value::Null)
}

pub mod azure {
    //! Where an Azure request goes, from pi 1.6's `azure-openai-config.js`.

    use super::{Model, ProviderError, DEFAULT_AZURE_API_VERSION};

    /// The endpoint, version and deployment of one Azure request.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct AzureTarget {
        pub base_url: String,
        pub api_version: String,
        pub deployment: String,
    }

    fn set(v: Option<String>) -> Option<String> {
        v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
    }

    /// The deployment for `model`: `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (`id=deployment,…`)
    /// names it, else the model id is the deployment.
    pub fn deployment(model: &Model, env: &dyn Fn(&str) -> Option<String>) -> String {
        let map = env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP").unwrap_or_default();
        map.split(',')
            .rev()
            .filter_map(|entry| {
                let (id, name) = entry.trim().split_once('=')?;
                let name = name.split('=').next().unwrap_or(name);
                (!id.is_empty() && !name.is_empty()).then(|| (id.trim(), name.trim()))
            })
            .find(|(id, _)| *id == model.id)
            .map(|(_, name)| name.to_string())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| model.id.clone())
    }

    /// `AZURE_OPENAI_BASE_URL`, else `https://{AZURE_OPENAI_RESOURCE_NAME}.openai.azure.com/openai/v1`,
    /// else the model's `baseUrl`; Azure hosts get the `/openai/v1` path the API lives under.
    pub fn resolve(
        model: &Model,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<AzureTarget, ProviderError> {
        let base = set(env("AZURE_OPENAI_BASE_URL"))
            .or_else(|| {
                set(env("AZURE_OPENAI_RESOURCE_NAME"))
                    .map(|r| format!("https://{r}.openai.azure.com/openai/v1"))
            })
            .or_else(|| set(Some(model.base_url.clone())))
            .ok_or_else(|| {
                ProviderError::Other(
                    "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or \
                     AZURE_OPENAI_RESOURCE_NAME, or the model's baseUrl."
                        .into(),
                )
            })?;
        Ok(AzureTarget {
            base_url: normalize(&base)?,
            api_version: set(env("AZURE_OPENAI_API_VERSION"))
                .unwrap_or_else(|| DEFAULT_AZURE_API_VERSION.to_string()),
            deployment: deployment(model, env),
        })
    }

    fn normalize(base: &str) -> Result<String, ProviderError> {
        let trimmed = base.trim().trim_end_matches('/');
        let mut url = reqwest::Url::parse(trimmed)
            .map_err(|_| ProviderError::Other(format!("Invalid Azure OpenAI base URL: {base}")))?;
        let host = url.host_str().unwrap_or_default();
        let azure_host = [
            ".openai.azure.com",
            ".cognitiveservices.azure.com",
            ".ai.azure.com",
        ]
        .iter()
        .any(|d| host.ends_with(d));
        let path = url.path().trim_end_matches('/').to_string();
        if azure_host && matches!(path.as_str(), "" | "/openai" | "/openai/v1/responses") {
            url.set_path("/openai/v1");
            url.set_query(None);
        }
        Ok(url.as_str().trim_end_matches('/').to_string())
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::provider::stream::test_support::model;

        fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
            let pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        }

        #[test]
        fn the_environment_names_endpoint_version_and_deployment() {
            let m = model("azure-openai-responses", "https://fallback.example/v1");
            let t = resolve(&m, &env_of(&[])).unwrap();
            assert_eq!(t.base_url, "https://fallback.example/v1");
            assert_eq!(
                (t.api_version.as_str(), t.deployment.as_str()),
                ("v1", "test-model")
            );

            let env = env_of(&[
                ("AZURE_OPENAI_RESOURCE_NAME", "res"),
                ("AZURE_OPENAI_API_VERSION", "2025-04-01-preview"),
                (
                    "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
                    "other=x, test-model = my-dep ,bad",
                ),
            ]);
            let t = resolve(&m, &env).unwrap();
            assert_eq!(t.base_url, "https://res.openai.azure.com/openai/v1");
            assert_eq!(t.api_version, "2025-04-01-preview");
            assert_eq!(t.deployment, "my-dep");

            let env = env_of(&[
                (
                    "AZURE_OPENAI_BASE_URL",
                    "https://r.cognitiveservices.azure.com/",
                ),
                ("AZURE_OPENAI_RESOURCE_NAME", "ignored"),
            ]);
            let t = resolve(&m, &env).unwrap();
            assert_eq!(
                t.base_url,
                "https://r.cognitiveservices.azure.com/openai/v1"
            );
        }

        #[test]
        fn azure_paths_are_normalized_and_others_kept() {
            for (given, want) in [
                (
                    "https://a.openai.azure.com/openai",
                    "https://a.openai.azure.com/openai/v1",
                ),
                (
                    "https://a.openai.azure.com/openai/v1/responses?x=1",
                    "https://a.openai.azure.com/openai/v1",
                ),
                (
                    "https://a.ai.azure.com/custom/",
                    "https://a.ai.azure.com/custom",
                ),
                (
                    "http://127.0.0.1:8080/openai/v1/",
                    "http://127.0.0.1:8080/openai/v1",
                ),
            ] {
                assert_eq!(normalize(given).unwrap(), want, "{given}");
            }
            assert!(normalize("not a url").is_err());
            let mut m = model("azure-openai-responses", "");
            m.base_url = String::new();
            assert!(resolve(&m, &|_: &str| None).is_err());
        }
    }
}

#[cfg(test)]
#[path = "openai_responses_tests.rs"]
mod tests;
