//! Subscription logins (OAuth): the providers pi 1.6 signs in to, their tokens as 1.6 stores
//! them in `auth.json`, and refreshing them. A login is the user's: its tokens live in
//! `auth.json` (0600, changed under the lock TypeScript pi also takes), reach a provider only
//! as its credential header, and are never handed to hooks, tools or logs.
//!
//! [`stored`] turns a stored login into the key of each request (refreshed shortly before it
//! expires, once across every pi and TypeScript pi sharing the file); [`login`] signs in,
//! through a loopback callback or a pasted code, and [`device`] polls a device-code login.
//! What differs between providers' OAuth clients (how grants are encoded, the state sent,
//! whether another callback port will do) is data on [`Client`], so every flow takes the same
//! path.

pub mod anthropic;
pub mod browser;
pub mod device;
pub mod flow;
pub mod github_copilot;
pub mod github_copilot_models;
pub mod hook_flow;
pub mod kimi_coding;
pub mod login;
pub mod meta;
pub mod openai_chatgpt;
pub mod openai_codex;
pub mod openrouter;
pub mod post;
pub mod radius;
pub mod stored;
pub mod xai;

pub use flow::{AuthEvent, Choice, Interaction, OAuthFlow, Prompt, RequestAuth};

use std::time::Duration;

use serde_json::{json, Map, Value};

/// A token is refreshed when less than this is left of it (pi 1.6's window).
pub const REFRESH_BEFORE: Duration = Duration::from_secs(5 * 60);
/// How long a token request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How a client's token endpoint takes its grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantEncoding {
    /// A JSON object (Anthropic).
    Json,
    /// `application/x-www-form-urlencoded` (OpenAI).
    Form,
}

/// What a client's authorization request carries as its `state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateKind {
    /// The PKCE verifier itself (Anthropic, whose copy-code page shows `code#state`).
    Verifier,
    /// 16 random bytes in hex, unrelated to the verifier (OpenAI).
    Random,
}

/// One provider's OAuth client, as pi 1.6 registers it.
#[derive(Debug)]
pub struct Client {
    /// The provider it signs in to (`auth.json`'s key).
    pub provider: &'static str,
    /// How 1.6 names the login.
    pub name: &'static str,
    pub client_id: &'static str,
    authorize_url: &'static str,
    token_url: &'static str,
    pub scopes: &'static str,
    /// The loopback port the browser is sent back to.
    pub callback_port: u16,
    pub callback_path: &'static str,
    /// Whether another port will do when `callback_port` is taken. Not where the provider
    /// registered the redirect URI itself (OpenAI's 1455): the browser could not come back to
    /// another, so only pasting works then.
    pub callback_fallback: bool,
    /// Query parameters the authorization URL carries besides OAuth's own.
    pub authorize_params: &'static [(&'static str, &'static str)],
    pub state: StateKind,
    pub grant: GrantEncoding,
    /// What is taken off the token's lifetime when it is stored (1.6's Anthropic stores five
    /// minutes less than the server gives; its OpenAI stores the lifetime as given).
    pub expiry_margin: Duration,
}

/// The logins pi can sign in to, in the order 1.6's `/login` lists them: its preferred
/// partners (Radius, OpenRouter) first, then by provider name.
const FLOWS: &[&dyn OAuthFlow] = &[
    &radius::Radius,
    &openrouter::OpenRouter,
    &anthropic::Anthropic,
    &github_copilot::GitHubCopilot,
    &kimi_coding::KimiCoding,
    &meta::Meta,
    &openai_chatgpt::OpenAiChatGpt,
    &openai_codex::OpenAiCodex,
    &xai::Xai,
];

/// Every subscription login pi has, in 1.6's order.
pub fn flows() -> impl Iterator<Item = &'static dyn OAuthFlow> {
    FLOWS.iter().copied()
}

/// The subscription login for `provider`, when pi has one.
pub fn flow(provider: &str) -> Option<&'static dyn OAuthFlow> {
    FLOWS.iter().copied().find(|f| f.provider() == provider)
}

impl Client {
    /// The authorization endpoint; `PI_OAUTH_<PROVIDER>_AUTHORIZE_URL` replaces it (a proxy,
    /// or a test's server).
    pub fn authorize_url(&self) -> String {
        self.endpoint("AUTHORIZE_URL", self.authorize_url)
    }

    /// The token endpoint; `PI_OAUTH_<PROVIDER>_TOKEN_URL` replaces it.
    pub fn token_url(&self) -> String {
        self.endpoint("TOKEN_URL", self.token_url)
    }

    /// `default`, or `PI_OAUTH_<PROVIDER>_<what>` when set.
    pub fn endpoint(&self, what: &str, default: &str) -> String {
        endpoint(self.provider, what, default)
    }

    /// How a user signs in again.
    pub fn sign_in_again(&self) -> String {
        format!("sign in again with `pi auth login {}`", self.provider)
    }
}

/// `default`, or `PI_OAUTH_<PROVIDER>_<what>` when set (`provider` upper-cased, `-` as `_`):
/// every endpoint a login talks to can be pointed elsewhere (a proxy, or a test's server).
pub fn endpoint(provider: &str, what: &str, default: &str) -> String {
    let var = format!(
        "PI_OAUTH_{}_{what}",
        provider.to_ascii_uppercase().replace('-', "_")
    );
    std::env::var(var)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_string())
}

/// A login's tokens, as `auth.json` holds them: `expires` in milliseconds since the epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    pub access: String,
    pub refresh: String,
    pub expires: i64,
    /// What else the login stores beside the tokens (ChatGPT's `accountId`, Copilot's
    /// `enterpriseUrl`), kept as written.
    pub extra: Map<String, Value>,
}

impl Tokens {
    /// The tokens of an `auth.json` entry of type `oauth`.
    pub fn from_entry(entry: &Value) -> Option<Tokens> {
        (entry["type"] == "oauth").then_some(())?;
        let extra = entry
            .as_object()?
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "type" | "access" | "refresh" | "expires"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Some(Tokens {
            extra,
            access: entry["access"].as_str()?.to_string(),
            refresh: entry["refresh"].as_str().unwrap_or_default().to_string(),
            expires: entry["expires"].as_i64().or_else(|| {
                // A float from a JavaScript writer is still milliseconds.
                entry["expires"].as_f64().map(|f| f as i64)
            })?,
        })
    }

    /// `entry` with these tokens; its other fields (an account id, a scope) are kept.
    pub fn into_entry(self, entry: Option<&Value>) -> Value {
        let mut map = entry
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_else(Map::new);
        // A new entry in 1.6's order: the tokens, then what the login stores beside them.
        map.insert("type".into(), json!("oauth"));
        map.insert("refresh".into(), json!(self.refresh));
        map.insert("access".into(), json!(self.access));
        map.insert("expires".into(), json!(self.expires));
        map.extend(self.extra);
        Value::Object(map)
    }

    /// Whether the token has less than [`REFRESH_BEFORE`] left at `now_ms`.
    pub fn expires_soon(&self, now_ms: i64) -> bool {
        self.expires_within(now_ms, REFRESH_BEFORE)
    }

    /// Whether the token has less than `left` left at `now_ms`.
    pub fn expires_within(&self, now_ms: i64, left: Duration) -> bool {
        now_ms.saturating_add(i64::try_from(left.as_millis()).unwrap_or(i64::MAX)) >= self.expires
    }
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Why a token request failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum OAuthError {
    /// The server refused the grant (`invalid_grant`, 400/401): the login is over.
    #[error("the {name} login was refused by {url} ({detail}); {again}")]
    Refused {
        name: &'static str,
        url: String,
        detail: String,
        again: String,
    },
    #[error("{name}: the token request to {url} failed: {detail}")]
    Failed {
        name: &'static str,
        url: String,
        detail: String,
    },
    /// The provider's answer in 1.6's words for it; `again` (how to sign in again) when it
    /// means the login is over.
    #[error("{message}{}", again.as_ref().map(|a| format!("; {a}")).unwrap_or_default())]
    Said {
        message: String,
        again: Option<String>,
    },
}

/// Asks `client`'s token endpoint for tokens with `grant` (the code exchange or a refresh).
pub async fn request_tokens(
    http: &reqwest::Client,
    client: &'static Client,
    grant: Value,
) -> Result<Tokens, OAuthError> {
    let url = client.token_url();
    let failed = |detail: String| OAuthError::Failed {
        name: client.name,
        url: url.clone(),
        detail,
    };
    let request = http.post(&url).header("accept", "application/json");
    let request = match client.grant {
        GrantEncoding::Json => request.json(&grant),
        GrantEncoding::Form => request
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body(&grant)),
    };
    let response = request
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|e| failed(e.to_string()))?;
    let status = response.status();
    let text = response.text().await.map_err(|e| failed(e.to_string()))?;
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    if !status.is_success() {
        let detail = body["error_description"]
            .as_str()
            .or(body["error"].as_str())
            .map_or_else(
                || format!("HTTP {status}"),
                |e| format!("HTTP {status}: {e}"),
            );
        if matches!(status.as_u16(), 400 | 401 | 403) {
            return Err(OAuthError::Refused {
                name: client.name,
                url,
                detail,
                again: client.sign_in_again(),
            });
        }
        return Err(failed(detail));
    }
    let (Some(access), Some(expires_in)) =
        (body["access_token"].as_str(), body["expires_in"].as_f64())
    else {
        return Err(failed(
            "the answer has no access_token or expires_in".into(),
        ));
    };
    let refresh = body["refresh_token"]
        .as_str()
        .or(grant["refresh_token"].as_str())
        .unwrap_or_default();
    Ok(Tokens {
        extra: Map::new(),
        access: access.to_string(),
        refresh: refresh.to_string(),
        expires: now_ms() + (expires_in * 1000.0) as i64
            - i64::try_from(client.expiry_margin.as_millis()).unwrap_or(0),
    })
}

/// `grant`'s string fields as a form body, in their order.
fn form_body(grant: &Value) -> String {
    let mut form = form_urlencoded::Serializer::new(String::new());
    for (key, value) in grant.as_object().into_iter().flatten() {
        if let Some(v) = value.as_str() {
            form.append_pair(key, v);
        }
    }
    form.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_grant_is_encoded_in_its_order() {
        let grant = json!({"grant_type": "refresh_token", "refresh_token": "a b&c",
            "client_id": "app_x"});
        assert_eq!(
            form_body(&grant),
            "grant_type=refresh_token&refresh_token=a+b%26c&client_id=app_x"
        );
    }

    #[test]
    fn entries_keep_their_other_fields_and_expiry_is_windowed() {
        let entry = json!({"type": "oauth", "refresh": "r", "access": "a", "expires": 1000,
            "accountId": "acct"});
        let t = Tokens::from_entry(&entry).unwrap();
        assert_eq!(t.access, "a");
        let renewed = Tokens {
            extra: Map::new(),
            access: "a2".into(),
            refresh: "r2".into(),
            expires: 5,
        }
        .into_entry(Some(&entry));
        assert_eq!(
            renewed,
            json!({"type": "oauth", "refresh": "r2", "access": "a2", "expires": 5,
                "accountId": "acct"})
        );
        assert!(Tokens::from_entry(&json!({"type": "api_key", "key": "k"})).is_none());
        let t = Tokens {
            extra: Map::new(),
            access: "a".into(),
            refresh: "r".into(),
            expires: 10 * 60 * 1000,
        };
        assert!(!t.expires_soon(4 * 60 * 1000));
        assert!(t.expires_soon(5 * 60 * 1000));
    }
}
