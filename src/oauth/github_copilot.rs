//! GitHub Copilot, as pi 1.6 signs in to it (provider `github-copilot`): the GitHub domain
//! asked first (blank for github.com, else a GitHub Enterprise host), then GitHub's device
//! login (a code entered at the page GitHub names, polled with GitHub's rules: one interval's
//! wait before the first poll), and the GitHub token exchanged at
//! `api.<domain>/copilot_internal/v2/token` for a Copilot token.
//!
//! The stored entry is 1.6's: `refresh` is the GitHub token, `access` the Copilot token,
//! `expires` its `expires_at` less five minutes, `enterpriseUrl` the Enterprise host (none for
//! github.com) and `availableModelIds` the models the account offers
//! ([`super::github_copilot_models`]). Refreshing is the exchange again, with the GitHub token,
//! which does not rotate. The Copilot token names the account's endpoint (`proxy-ep=…`): every
//! request goes there ([`OAuthFlow::to_auth`]), never to the catalog's URL, and only the
//! Copilot token travels with it; the GitHub token goes to GitHub alone.
//!
//! Tests point the endpoints elsewhere with `PI_OAUTH_GITHUB_COPILOT_DEVICE_CODE_URL`,
//! `…_ACCESS_TOKEN_URL` (GitHub's two device-login endpoints), `…_COPILOT_TOKEN_URL` (the
//! exchange) and `…_API_URL` (the account's endpoint, whatever the token names).

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::device::{self, Poll, Schedule};
use super::flow::{AuthEvent, Interaction, OAuthFlow, Prompt, RequestAuth};
use super::github_copilot_models as models;
use super::login::LoginError;
use super::{OAuthError, Tokens};

pub const PROVIDER: &str = "github-copilot";
const NAME: &str = "GitHub Copilot";
/// VS Code's Copilot Chat client id, which 1.6 signs in as.
const CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
const USER_AGENT: &str = "GitHubCopilotChat/0.35.0";
/// The headers every Copilot API request carries (1.6's `COPILOT_HEADERS`; the catalog's
/// models carry the same).
pub const COPILOT_HEADERS: [(&str, &str); 4] = [
    ("user-agent", USER_AGENT),
    ("editor-version", "vscode/1.107.0"),
    ("editor-plugin-version", "copilot-chat/0.35.0"),
    ("copilot-integration-id", "vscode-chat"),
];
const DEFAULT_BASE_URL: &str = "https://api.individual.githubcopilot.com";
/// 1.6 stores the Copilot token as expiring this much before GitHub says it does.
const EXPIRY_MARGIN_MS: i64 = 5 * 60 * 1000;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Why talking to GitHub failed, in 1.6's words.
#[derive(Debug, thiserror::Error)]
pub enum CopilotError {
    /// An error status (1.6's `fetchJson`: status, reason and the body).
    #[error("{status} {reason}: {body}")]
    Status {
        status: u16,
        reason: &'static str,
        body: String,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Network(String),
}

impl CopilotError {
    /// `response`'s body when its status is a success.
    pub async fn checked(response: reqwest::Response) -> Result<String, CopilotError> {
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| CopilotError::Network(e.to_string()))?;
        if status.is_success() {
            return Ok(body);
        }
        Err(CopilotError::Status {
            status: status.as_u16(),
            reason: status.canonical_reason().unwrap_or(""),
            body,
        })
    }
}

impl From<CopilotError> for LoginError {
    fn from(e: CopilotError) -> LoginError {
        LoginError::Provider(e.to_string())
    }
}

#[derive(Debug)]
pub struct GitHubCopilot;

#[async_trait]
impl OAuthFlow for GitHubCopilot {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn name(&self) -> &'static str {
        NAME
    }

    async fn login(&self, ui: &dyn Interaction) -> Result<Tokens, LoginError> {
        let input = ui
            .prompt(Prompt::Text {
                message: "GitHub Enterprise URL/domain (blank for github.com)".into(),
                placeholder: Some("company.ghe.com".into()),
            })
            .await
            .ok_or(LoginError::Cancelled)?;
        let enterprise = normalize_domain(&input);
        if !input.trim().is_empty() && enterprise.is_none() {
            return Err(LoginError::Provider(
                "Invalid GitHub Enterprise URL/domain".into(),
            ));
        }
        let urls = Urls::of(enterprise.as_deref());
        let http = crate::provider::http::client();
        let device = start_device_flow(&http, &urls).await?;
        ui.notify(AuthEvent::DeviceCode {
            user_code: device.user_code.clone(),
            verification_uri: device.verification_uri.clone(),
            open_browser: true,
        });
        let schedule = Schedule {
            interval: device.interval,
            expires_in: Some(device.expires_in),
            wait_before_first_poll: true,
        };
        let github_token =
            device::poll_device_code(schedule, || poll_access_token(&http, &urls, &device)).await?;
        let mut tokens = exchange(&http, &urls, &github_token, enterprise.as_deref()).await?;
        let base_url = api_base_url(&tokens.access, enterprise.as_deref());
        let catalog = models::fetch(&http, &tokens.access, &base_url, models::SIGN_IN).await?;
        let mut available = catalog.available;
        if !catalog.to_enable.is_empty() {
            ui.notify(AuthEvent::Progress {
                message: "Enabling models...".into(),
            });
            let enabled = models::enable(&http, &tokens.access, &base_url, &catalog.to_enable);
            for id in enabled.await {
                if !available.contains(&id) {
                    available.push(id);
                }
            }
        }
        tokens
            .extra
            .insert("availableModelIds".into(), json!(available));
        Ok(tokens)
    }

    async fn refresh(&self, http: &reqwest::Client, tokens: &Tokens) -> Result<Tokens, OAuthError> {
        let enterprise = enterprise_domain(tokens);
        let urls = Urls::of(enterprise.as_deref());
        let refused = |e: CopilotError, url: &str| match e {
            CopilotError::Status {
                status: 401 | 403, ..
            } => OAuthError::Refused {
                name: NAME,
                url: url.to_string(),
                detail: e.to_string(),
                again: self.sign_in_again(),
            },
            e => OAuthError::Failed {
                name: NAME,
                url: url.to_string(),
                detail: e.to_string(),
            },
        };
        let mut renewed = exchange(http, &urls, &tokens.refresh, enterprise.as_deref())
            .await
            .map_err(|e| refused(e, &urls.copilot_token))?;
        let base_url = api_base_url(&renewed.access, enterprise.as_deref());
        let catalog = models::fetch(http, &renewed.access, &base_url, models::EXCHANGE)
            .await
            .map_err(|e| refused(e, &format!("{base_url}/models")))?;
        renewed
            .extra
            .insert("availableModelIds".into(), json!(catalog.available));
        Ok(renewed)
    }

    fn to_auth(&self, tokens: &Tokens) -> RequestAuth {
        RequestAuth {
            key: tokens.access.clone(),
            base_url: Some(api_base_url(
                &tokens.access,
                enterprise_domain(tokens).as_deref(),
            )),
        }
    }

    fn offers(&self, tokens: &Tokens, model: &str) -> bool {
        // 1.6's `filterModels`: only a list of strings restricts.
        match tokens
            .extra
            .get("availableModelIds")
            .and_then(Value::as_array)
        {
            Some(ids) if ids.iter().all(Value::is_string) => ids.iter().any(|id| id == model),
            _ => true,
        }
    }
}

/// The host a user's answer names (`company.ghe.com`, or a URL on it); `None` for a blank or
/// unreadable answer.
pub fn normalize_domain(input: &str) -> Option<String> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return None;
    }
    let url = if trimmed.contains("://") {
        reqwest::Url::parse(trimmed)
    } else {
        reqwest::Url::parse(&format!("https://{trimmed}"))
    };
    url.ok()?.host_str().map(str::to_string)
}

/// The Enterprise host a stored login is for; `None` for github.com.
fn enterprise_domain(tokens: &Tokens) -> Option<String> {
    let url = tokens.extra.get("enterpriseUrl")?.as_str()?;
    normalize_domain(url)
}

/// The account's Copilot endpoint: the one the token names (`proxy-ep=proxy.x` is
/// `https://api.x`), else the Enterprise's, else Copilot Individual's.
pub fn api_base_url(token: &str, enterprise: Option<&str>) -> String {
    // 1.6's `/proxy-ep=([^;]+)/`: the first non-empty value, wherever it stands.
    let named = token
        .match_indices("proxy-ep=")
        .map(|(at, key)| {
            token[at + key.len()..]
                .split(';')
                .next()
                .unwrap_or_default()
        })
        .find(|host| !host.is_empty());
    let derived = match (named, enterprise) {
        (Some(host), _) => match host.strip_prefix("proxy.") {
            Some(rest) => format!("https://api.{rest}"),
            None => format!("https://{host}"),
        },
        (None, Some(domain)) => format!("https://copilot-api.{domain}"),
        (None, None) => DEFAULT_BASE_URL.to_string(),
    };
    super::endpoint(PROVIDER, "API_URL", &derived)
}

/// GitHub's endpoints on `domain` (github.com when `None`).
struct Urls {
    device_code: String,
    access_token: String,
    copilot_token: String,
}

impl Urls {
    fn of(enterprise: Option<&str>) -> Urls {
        let domain = enterprise.unwrap_or("github.com");
        let url = |what: &str, default: String| super::endpoint(PROVIDER, what, &default);
        Urls {
            device_code: url(
                "DEVICE_CODE_URL",
                format!("https://{domain}/login/device/code"),
            ),
            access_token: url(
                "ACCESS_TOKEN_URL",
                format!("https://{domain}/login/oauth/access_token"),
            ),
            copilot_token: url(
                "COPILOT_TOKEN_URL",
                format!("https://api.{domain}/copilot_internal/v2/token"),
            ),
        }
    }
}

/// What GitHub's device login hands out.
struct Device {
    device_code: String,
    user_code: String,
    verification_uri: String,
    interval: Option<Duration>,
    expires_in: Duration,
}

/// A number of seconds from GitHub as a duration; `None` when it is not one.
fn seconds(v: &Value) -> Option<Duration> {
    Duration::try_from_secs_f64(v.as_f64()?.max(0.0)).ok()
}

async fn start_device_flow(http: &reqwest::Client, urls: &Urls) -> Result<Device, LoginError> {
    let form = form_urlencoded::Serializer::new(String::new())
        .append_pair("client_id", CLIENT_ID)
        .append_pair("scope", "read:user")
        .finish();
    let body = form_post(http, &urls.device_code, form).await?;
    let data: Value = serde_json::from_str(&body)
        .map_err(|_| LoginError::Provider("Invalid device code response".into()))?;
    let text = |k: &str| data[k].as_str().map(str::to_string);
    let interval = &data["interval"];
    let (Some(device_code), Some(user_code), Some(uri), Some(expires_in)) = (
        text("device_code"),
        text("user_code"),
        text("verification_uri"),
        seconds(&data["expires_in"]),
    ) else {
        return Err(LoginError::Provider(
            "Invalid device code response fields".into(),
        ));
    };
    if !(interval.is_null() || interval.is_number()) {
        return Err(LoginError::Provider(
            "Invalid device code response fields".into(),
        ));
    }
    // The page is opened in the user's browser: only a web page will do.
    let trusted = reqwest::Url::parse(&uri)
        .ok()
        .filter(|u| matches!(u.scheme(), "https" | "http"))
        .ok_or_else(|| {
            LoginError::Provider("Untrusted verification_uri in device code response".into())
        })?;
    Ok(Device {
        device_code,
        user_code,
        verification_uri: trusted.to_string(),
        interval: seconds(interval),
        expires_in,
    })
}

/// POSTs `form` to `url` as 1.6's device login does; the answer's body.
async fn form_post(
    http: &reqwest::Client,
    url: &str,
    form: String,
) -> Result<String, CopilotError> {
    let response = http
        .post(url)
        .header("accept", "application/json")
        .header("content-type", "application/x-www-form-urlencoded")
        .header("user-agent", USER_AGENT)
        .body(form)
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|e| CopilotError::Network(crate::provider::stream::error_chain(&e)))?;
    CopilotError::checked(response).await
}

/// One poll of the device login: the GitHub token once the user has entered the code.
async fn poll_access_token(http: &reqwest::Client, urls: &Urls, device: &Device) -> Poll<String> {
    let form = form_urlencoded::Serializer::new(String::new())
        .append_pair("client_id", CLIENT_ID)
        .append_pair("device_code", &device.device_code)
        .append_pair("grant_type", "urn:ietf:params:oauth:grant-type:device_code")
        .finish();
    let body = match form_post(http, &urls.access_token, form).await {
        Ok(b) => b,
        Err(e) => return Poll::Failed(e.to_string()),
    };
    let raw: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    if let Some(token) = raw["access_token"].as_str() {
        return Poll::Complete(token.to_string());
    }
    match raw["error"].as_str() {
        Some("authorization_pending") => Poll::Pending,
        Some("slow_down") => Poll::SlowDown {
            interval: seconds(&raw["interval"]),
        },
        Some(error) => {
            let description = raw["error_description"]
                .as_str()
                .filter(|d| !d.is_empty())
                .map_or_else(String::new, |d| format!(": {d}"));
            Poll::Failed(format!("Device flow failed: {error}{description}"))
        }
        None => Poll::Failed("Invalid device token response".into()),
    }
}

/// The Copilot token for `github_token`, as the entry 1.6 stores (without its models).
async fn exchange(
    http: &reqwest::Client,
    urls: &Urls,
    github_token: &str,
    enterprise: Option<&str>,
) -> Result<Tokens, CopilotError> {
    let mut request = http
        .get(&urls.copilot_token)
        .header("accept", "application/json")
        .header("authorization", format!("Bearer {github_token}"));
    for (k, v) in COPILOT_HEADERS {
        request = request.header(k, v);
    }
    let response = request
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|e| CopilotError::Network(crate::provider::stream::error_chain(&e)))?;
    let body = CopilotError::checked(response).await?;
    let raw: Value = serde_json::from_str(&body)
        .map_err(|_| CopilotError::Invalid("Invalid Copilot token response".into()))?;
    let (Some(token), Some(expires_at)) = (raw["token"].as_str(), raw["expires_at"].as_f64())
    else {
        return Err(CopilotError::Invalid(
            "Invalid Copilot token response fields".into(),
        ));
    };
    let mut extra = serde_json::Map::new();
    if let Some(domain) = enterprise {
        extra.insert("enterpriseUrl".into(), json!(domain));
    }
    Ok(Tokens {
        access: token.to_string(),
        refresh: github_token.to_string(),
        expires: (expires_at * 1000.0) as i64 - EXPIRY_MARGIN_MS,
        extra,
    })
}

#[cfg(test)]
#[path = "github_copilot_tests.rs"]
mod tests;
