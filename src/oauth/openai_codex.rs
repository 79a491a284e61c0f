//! OpenAI (ChatGPT Plus/Pro), as pi 1.6 signs in to it (provider `openai-codex`): a choice of
//! the browser login (PKCE, back to `localhost:1455`, the port OpenAI registered for the Codex
//! CLI, or the redirect URL pasted when that port is taken) or the device-code login for
//! headless machines (a code entered at `auth.openai.com/codex/device`, then an authorization
//! code fetched by polling); codes exchanged and tokens refreshed at `auth.openai.com` with
//! form grants. Every token carries the ChatGPT account it is for, in its JWT claims; 1.6
//! stores that as the entry's `accountId`, and a token without it is refused.
//!
//! Tests point the endpoints elsewhere with `PI_OAUTH_OPENAI_CODEX_{AUTHORIZE,TOKEN}_URL` (as
//! every client's) and `PI_OAUTH_OPENAI_CODEX_DEVICE_USERCODE_URL` /
//! `PI_OAUTH_OPENAI_CODEX_DEVICE_TOKEN_URL` for the device login's two.

use std::time::Duration;

use async_trait::async_trait;
use base64::Engine as _;
use serde_json::{json, Value};

use super::device::{self, Poll, Schedule};
use super::flow::{AuthEvent, Choice, Interaction, OAuthFlow, Prompt};
use super::login::{self, Callback, LoginError, Pkce};
use super::{request_tokens, Client, GrantEncoding, OAuthError, StateKind, Tokens};

pub static CLIENT: Client = Client {
    provider: "openai-codex",
    name: "OpenAI (ChatGPT Plus/Pro)",
    client_id: "app_EMoamEEZ73f0CkXaXp7hrann",
    authorize_url: "https://auth.openai.com/oauth/authorize",
    token_url: "https://auth.openai.com/oauth/token",
    scopes: "openid profile email offline_access",
    callback_port: 1455,
    callback_path: "/auth/callback",
    callback_fallback: false,
    authorize_params: &[
        ("id_token_add_organizations", "true"),
        ("codex_cli_simplified_flow", "true"),
        ("originator", "pi"),
    ],
    state: StateKind::Random,
    grant: GrantEncoding::Form,
    expiry_margin: Duration::ZERO,
};

const REDIRECT_URI: &str = "http://localhost:1455/auth/callback";
const DEVICE_USER_CODE_URL: &str = "https://auth.openai.com/api/accounts/deviceauth/usercode";
const DEVICE_TOKEN_URL: &str = "https://auth.openai.com/api/accounts/deviceauth/token";
/// Shown, not requested: where the user enters the code.
const DEVICE_VERIFICATION_URI: &str = "https://auth.openai.com/codex/device";
const DEVICE_REDIRECT_URI: &str = "https://auth.openai.com/deviceauth/callback";
/// 1.6 gives up on a device code after this, whatever the server says.
const DEVICE_CODE_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// The JWT claim holding the ChatGPT account.
const JWT_CLAIM: &str = "https://api.openai.com/auth";
/// How 1.6 names the provider on the callback page.
const CALLBACK_NAME: &str = "OpenAI";
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub struct OpenAiCodex;

#[async_trait]
impl OAuthFlow for OpenAiCodex {
    fn provider(&self) -> &'static str {
        CLIENT.provider
    }

    fn name(&self) -> &'static str {
        CLIENT.name
    }

    async fn login(&self, ui: &dyn Interaction) -> Result<Tokens, LoginError> {
        let method = ui
            .prompt(Prompt::Select {
                message: "Select OpenAI Codex login method:".into(),
                options: vec![
                    Choice {
                        id: "browser",
                        label: "Browser login (default)",
                        description: None,
                    },
                    Choice {
                        id: "device_code",
                        label: "Device code login (headless)",
                        description: None,
                    },
                ],
            })
            .await
            .ok_or(LoginError::Cancelled)?;
        match method.as_str() {
            "device_code" => device_code(ui).await,
            "browser" => browser(ui).await,
            other => Err(LoginError::Provider(format!(
                "Unknown OpenAI Codex login method: {other}"
            ))),
        }
    }

    async fn refresh(&self, http: &reqwest::Client, tokens: &Tokens) -> Result<Tokens, OAuthError> {
        let grant = json!({
            "grant_type": "refresh_token",
            "refresh_token": tokens.refresh,
            "client_id": CLIENT.client_id,
        });
        with_account_id(request_tokens(http, &CLIENT, grant).await?).map_err(|detail| {
            OAuthError::Failed {
                name: CLIENT.name,
                url: CLIENT.token_url(),
                detail,
            }
        })
    }
}

async fn browser(ui: &dyn Interaction) -> Result<Tokens, LoginError> {
    let pkce = Pkce::new().map_err(LoginError::Random)?;
    let state = login::new_state(&CLIENT, &pkce).map_err(LoginError::Random)?;
    // Only 1455 is registered: when the Codex CLI (or anything) holds it there is no
    // callback, and the user pastes where the browser ended up.
    let callback = Callback::bind(&CLIENT).await;
    ui.notify(AuthEvent::AuthUrl {
        url: login::authorize_url(&CLIENT, &pkce, &state, REDIRECT_URI)?,
        instructions: Some("A browser window should open. Complete login to finish.".into()),
    });
    let answer = login::callback_or_pasted(
        ui,
        callback.as_ref(),
        CALLBACK_NAME,
        Some(&state),
        Prompt::ManualCode {
            message: "Complete login in your browser, or paste the authorization code / \
                      redirect URL here:"
                .into(),
            placeholder: Some(REDIRECT_URI.into()),
        },
    )
    .await?;
    let code = match answer {
        login::Answer::Callback(code) => code,
        login::Answer::Pasted(line) => login::pasted_code(&line, &state)?.0,
    };
    exchange(&code, &pkce.verifier, REDIRECT_URI).await
}

/// What the device login's first request hands out.
struct DeviceAuth {
    id: String,
    user_code: String,
    interval: Duration,
}

async fn device_code(ui: &dyn Interaction) -> Result<Tokens, LoginError> {
    let http = crate::provider::http::client();
    let device = start_device_auth(&http).await?;
    ui.notify(AuthEvent::DeviceCode {
        user_code: device.user_code.clone(),
        verification_uri: DEVICE_VERIFICATION_URI.into(),
        open_browser: true,
    });
    let schedule = Schedule {
        interval: Some(device.interval),
        expires_in: Some(DEVICE_CODE_TIMEOUT),
        wait_before_first_poll: false,
    };
    let url = CLIENT.endpoint("DEVICE_TOKEN_URL", DEVICE_TOKEN_URL);
    let (code, verifier) =
        device::poll_device_code(schedule, || poll_device_auth(&http, &url, &device)).await?;
    exchange(&code, &verifier, DEVICE_REDIRECT_URI).await
}

async fn start_device_auth(http: &reqwest::Client) -> Result<DeviceAuth, LoginError> {
    let url = CLIENT.endpoint("DEVICE_USERCODE_URL", DEVICE_USER_CODE_URL);
    let failed = |e: reqwest::Error| {
        LoginError::Provider(format!("OpenAI Codex device code request failed: {e}"))
    };
    let response = http
        .post(&url)
        .json(&json!({"client_id": CLIENT.client_id}))
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(failed)?;
    let status = response.status();
    if status.as_u16() == 404 {
        return Err(LoginError::Provider(
            "OpenAI Codex device code login is not enabled for this server. Use browser login \
             or verify the server URL."
                .into(),
        ));
    }
    let text = response.text().await.map_err(failed)?;
    if !status.is_success() {
        let body = if text.is_empty() {
            String::new()
        } else {
            format!(": {text}")
        };
        return Err(LoginError::Provider(format!(
            "OpenAI Codex device code request failed with status {}{body}",
            status.as_u16()
        )));
    }
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    // 1.6 takes the interval as a number or a numeric string.
    let interval = body["interval"].as_f64().or_else(|| {
        body["interval"]
            .as_str()
            .and_then(|s| s.trim().parse::<f64>().ok())
    });
    match (
        body["device_auth_id"].as_str().filter(|s| !s.is_empty()),
        body["user_code"].as_str().filter(|s| !s.is_empty()),
        interval.filter(|i| i.is_finite() && *i >= 0.0),
    ) {
        (Some(id), Some(user_code), Some(interval)) => Ok(DeviceAuth {
            id: id.to_string(),
            user_code: user_code.to_string(),
            interval: Duration::from_secs_f64(interval),
        }),
        // The body is not repeated: it holds the device's secret id.
        _ => Err(LoginError::Provider(
            "Invalid OpenAI Codex device code response".into(),
        )),
    }
}

/// One poll of the device login: the authorization code and its verifier once the user has
/// entered the code. 403 and 404 mean not yet, as in 1.6.
async fn poll_device_auth(
    http: &reqwest::Client,
    url: &str,
    device: &DeviceAuth,
) -> Poll<(String, String)> {
    let sent = http
        .post(url)
        .json(&json!({"device_auth_id": device.id, "user_code": device.user_code}))
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await;
    let response = match sent {
        Ok(r) => r,
        Err(e) => return Poll::Failed(format!("OpenAI Codex device auth request failed: {e}")),
    };
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    if status.is_success() {
        return match (
            body["authorization_code"]
                .as_str()
                .filter(|s| !s.is_empty()),
            body["code_verifier"].as_str().filter(|s| !s.is_empty()),
        ) {
            (Some(code), Some(verifier)) => Poll::Complete((code.into(), verifier.into())),
            _ => Poll::Failed("Invalid OpenAI Codex device auth token response".into()),
        };
    }
    if matches!(status.as_u16(), 403 | 404) {
        return Poll::Pending;
    }
    let error = &body["error"];
    match error["code"].as_str().or(error.as_str()) {
        Some("deviceauth_authorization_pending") => Poll::Pending,
        Some("slow_down") => Poll::SlowDown { interval: None },
        _ => {
            let body = if text.is_empty() {
                String::new()
            } else {
                format!(": {text}")
            };
            Poll::Failed(format!(
                "OpenAI Codex device auth failed with status {}{body}",
                status.as_u16()
            ))
        }
    }
}

async fn exchange(code: &str, verifier: &str, redirect_uri: &str) -> Result<Tokens, LoginError> {
    let grant = json!({
        "grant_type": "authorization_code",
        "client_id": CLIENT.client_id,
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": redirect_uri,
    });
    let tokens = request_tokens(&crate::provider::http::client(), &CLIENT, grant).await?;
    with_account_id(tokens).map_err(LoginError::Provider)
}

/// `tokens` with the `accountId` their access token is for, as 1.6 stores it.
fn with_account_id(mut tokens: Tokens) -> Result<Tokens, String> {
    let id = account_id(&tokens.access)
        .ok_or_else(|| "Failed to extract accountId from token".to_string())?;
    tokens.extra.insert("accountId".into(), json!(id));
    Ok(tokens)
}

/// The ChatGPT account in an access token's claims; the token is read, not verified (it is
/// the server's to check).
fn account_id(access: &str) -> Option<String> {
    let mut parts = access.split('.');
    let (Some(_), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    // Either base64 alphabet, padded or not.
    let payload: String = payload
        .trim_end_matches('=')
        .chars()
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            c => c,
        })
        .collect();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims[JWT_CLAIM]["chatgpt_account_id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &Value) -> String {
        let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
        format!(
            "{}.{}.sig",
            b64(br#"{"alg":"RS256"}"#),
            b64(claims.to_string().as_bytes())
        )
    }

    #[test]
    fn the_account_comes_from_the_tokens_claim() {
        let token = jwt(&json!({JWT_CLAIM: {"chatgpt_account_id": "acct-1"}, "sub": "u"}));
        assert_eq!(account_id(&token).as_deref(), Some("acct-1"));
        assert_eq!(account_id(&jwt(&json!({"sub": "u"}))), None);
        assert_eq!(
            account_id(&jwt(&json!({JWT_CLAIM: {"chatgpt_account_id": ""}}))),
            None
        );
        assert_eq!(account_id("not-a-jwt"), None);
        assert_eq!(account_id("a.!!!.c"), None);
    }

    #[test]
    fn tokens_without_an_account_are_refused_in_1_6s_words() {
        let tokens = Tokens {
            access: jwt(&json!({"sub": "u"})),
            refresh: "r".into(),
            expires: 0,
            extra: serde_json::Map::new(),
        };
        let err = with_account_id(tokens).unwrap_err();
        assert_eq!(err, "Failed to extract accountId from token");
    }

    #[test]
    fn the_authorization_url_is_1_6s() {
        let pkce = Pkce::new().unwrap();
        let state = login::new_state(&CLIENT, &pkce).unwrap();
        assert_eq!(state.len(), 32);
        assert!(state.chars().all(|c| c.is_ascii_hexdigit()), "{state}");
        assert_ne!(state, pkce.verifier);
        let url = login::authorize_url(&CLIENT, &pkce, &state, REDIRECT_URI).unwrap();
        let url = reqwest::Url::parse(&url).unwrap();
        let q: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
        assert_eq!(url.host_str(), Some("auth.openai.com"));
        assert_eq!(q["redirect_uri"], REDIRECT_URI);
        assert_eq!(q["scope"], "openid profile email offline_access");
        assert_eq!(q["state"], state);
        assert_eq!(q["id_token_add_organizations"], "true");
        assert_eq!(q["codex_cli_simplified_flow"], "true");
        assert_eq!(q["originator"], "pi");
        assert!(!q.contains_key("code"), "Anthropic's code=true is not sent");
    }
}
