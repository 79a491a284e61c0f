//! Radius, as pi 1.6 signs in to it: the gateway (`radius.pi.dev`) is its own OAuth server.
//! The user picks the browser sign-in — the authorization page discovered from the gateway's
//! `/v1/oauth`, PKCE back to `127.0.0.1:1456` — or a device code for signing in from another
//! device; either way the gateway's `/v1/oauth/token` issues the tokens (form grants), stored
//! a minute short of their life with the scope granted. The access token is the key.
//!
//! `PI_OAUTH_RADIUS_GATEWAY_URL` points the gateway elsewhere.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::device::{self, Poll, Schedule};
use super::flow::{AuthEvent, Choice, Interaction, OAuthFlow, Prompt};
use super::login::{Callback, LoginError, Pkce};
use super::post::{self, trusted_http_url, Reply};
use super::{now_ms, OAuthError, Tokens};

const PROVIDER: &str = "radius";
const NAME: &str = "Radius";
const DEFAULT_GATEWAY: &str = "https://radius.pi.dev";
const CALLBACK_HOST: &str = "127.0.0.1";
const CALLBACK_PORT: u16 = 1456;
const CALLBACK_PATH: &str = "/oauth/callback";
const REDIRECT_URI: &str = "http://127.0.0.1:1456/oauth/callback";
const CLIENT_ID: &str = "pi-gateway";
const SCOPE: &str = "gateway offline_access";
const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
const TOKEN_EXPIRY_SKEW_MS: i64 = 60_000;
const BROWSER: &str = "browser";
const DEVICE_CODE: &str = "device-code";

#[derive(Debug)]
pub struct Radius;

#[async_trait]
impl OAuthFlow for Radius {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn is_subscription(&self) -> bool {
        false
    }

    async fn login(&self, ui: &dyn Interaction) -> Result<Tokens, LoginError> {
        let method = ui
            .prompt(Prompt::Select {
                message: format!("Sign in to {NAME}:"),
                options: vec![
                    Choice {
                        id: BROWSER,
                        label: "Sign in with browser (recommended)",
                        description: None,
                    },
                    Choice {
                        id: DEVICE_CODE,
                        label: "Sign in with device code (when signing in from another device)",
                        description: None,
                    },
                ],
            })
            .await
            .ok_or(LoginError::Cancelled)?;
        let http = crate::provider::http::client();
        let gateway = gateway();
        match method.as_str() {
            DEVICE_CODE => with_device_code(&http, &gateway, ui).await,
            BROWSER => {
                let page = discover(&http, &gateway).await?;
                with_browser(&http, &gateway, &page, ui).await
            }
            other => Err(LoginError::Provider(format!(
                "Unknown {NAME} sign-in method: {other}"
            ))),
        }
    }

    async fn refresh(&self, http: &reqwest::Client, tokens: &Tokens) -> Result<Tokens, OAuthError> {
        let fields = [
            ("grant_type", "refresh_token"),
            ("client_id", CLIENT_ID),
            ("refresh_token", tokens.refresh.as_str()),
        ];
        match request_tokens(http, &gateway(), &fields, Some(&tokens.refresh)).await {
            Ok(t) => Ok(t),
            Err(TokenError::Network(message)) => Err(OAuthError::Said {
                message,
                again: None,
            }),
            Err(TokenError::Refused(e)) => Err(OAuthError::Said {
                again: matches!(e.status, 400 | 401 | 403).then(|| self.sign_in_again()),
                message: e.message,
            }),
        }
    }
}

/// The gateway: `https://` when no scheme is given, without trailing slashes (1.6's
/// `normalizeRadiusGatewayUrl`).
fn gateway() -> String {
    normalize(&super::endpoint(PROVIDER, "GATEWAY_URL", DEFAULT_GATEWAY))
}

fn normalize(value: &str) -> String {
    let lower = value.to_ascii_lowercase();
    let with_scheme = if lower.starts_with("http://") || lower.starts_with("https://") {
        value.to_string()
    } else {
        format!("https://{value}")
    };
    with_scheme.trim_end_matches('/').to_string()
}

/// The gateway's endpoint at the absolute `path` (1.6's `new URL(path, gateway)`).
fn at(gateway: &str, path: &str) -> Result<String, String> {
    reqwest::Url::parse(gateway)
        .and_then(|g| g.join(path))
        .map(|u| u.to_string())
        .map_err(|e| format!("{gateway} is not a URL: {e}"))
}

/// A refusal from the gateway: its status, and 1.6's message with the OAuth error in it.
#[derive(Debug)]
struct Refusal {
    status: u16,
    oauth_error: Option<String>,
    message: String,
}

enum TokenError {
    /// No answer (1.6 lets the request's own error through).
    Network(String),
    Refused(Refusal),
}

/// 1.6's `readOAuthResponseError`: the OAuth error and description of a refused request.
fn refusal(reply: &Reply, message: &str) -> Refusal {
    let (error, description) = match &reply.json {
        Some(j) => (
            j["error"].as_str().map(str::to_string),
            j["error_description"].as_str().map(str::to_string),
        ),
        None if !reply.text.is_empty() => (None, Some(reply.text.clone())),
        None => (None, None),
    };
    let detail = match (&error, description) {
        (Some(e), Some(d)) => format!("{e}: {d}"),
        (Some(e), None) => e.clone(),
        (None, Some(d)) if !d.is_empty() => d,
        _ => reply.status.to_string(),
    };
    Refusal {
        status: reply.status,
        oauth_error: error,
        message: format!("{message}: {detail}"),
    }
}

/// The authorization page the gateway names.
async fn discover(http: &reqwest::Client, gateway: &str) -> Result<String, LoginError> {
    let url = at(gateway, "/v1/oauth").map_err(LoginError::Provider)?;
    let request = http.get(&url).header("accept", "application/json");
    let reply = post::send(request)
        .await
        .map_err(|e| LoginError::Provider(e.to_string()))?;
    if !reply.ok() {
        return Err(LoginError::Provider(format!(
            "Could not load Radius OAuth config from {gateway}: {} {}",
            reply.status, reply.text
        )));
    }
    trusted_http_url(reply.field("authorizationEndpoint"))
        .ok_or_else(|| LoginError::Provider(format!("Invalid Radius OAuth config from {gateway}")))
}

/// Asks the gateway's token endpoint for tokens; `previous` stands in for a refresh token
/// the answer does not carry.
async fn request_tokens(
    http: &reqwest::Client,
    gateway: &str,
    fields: &[(&str, &str)],
    previous: Option<&str>,
) -> Result<Tokens, TokenError> {
    let url = at(gateway, "/v1/oauth/token").map_err(TokenError::Network)?;
    let reply = post::send(post::form(http, &url, fields))
        .await
        .map_err(|e| TokenError::Network(e.to_string()))?;
    let failed = "Radius OAuth token request failed";
    if !reply.ok() {
        return Err(TokenError::Refused(refusal(&reply, failed)));
    }
    let (Some(access), Some(expires_in)) = (
        reply.field("access_token").as_str(),
        reply.field("expires_in").as_f64(),
    ) else {
        return Err(TokenError::Network(format!(
            "{failed}: the answer has no access_token or expires_in"
        )));
    };
    let refresh = reply
        .field("refresh_token")
        .as_str()
        .or(previous)
        .unwrap_or_default();
    let mut extra = serde_json::Map::new();
    if !reply.field("scope").is_null() {
        extra.insert("scope".into(), reply.field("scope").clone());
    }
    Ok(Tokens {
        access: access.to_string(),
        refresh: refresh.to_string(),
        expires: now_ms() + (expires_in * 1000.0) as i64 - TOKEN_EXPIRY_SKEW_MS,
        extra,
    })
}

fn token_error(e: TokenError) -> LoginError {
    match e {
        TokenError::Network(m) => LoginError::Provider(m),
        TokenError::Refused(r) => LoginError::Provider(r.message),
    }
}

async fn with_browser(
    http: &reqwest::Client,
    gateway: &str,
    page: &str,
    ui: &dyn Interaction,
) -> Result<Tokens, LoginError> {
    let pkce = Pkce::new().map_err(LoginError::Random)?;
    let state = uuid::Uuid::new_v4().to_string();
    let mut url = reqwest::Url::parse(page).map_err(|e| LoginError::BadUrl {
        url: page.to_string(),
        detail: e.to_string(),
    })?;
    url.set_query(None);
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", CLIENT_ID)
        .append_pair("redirect_uri", REDIRECT_URI)
        .append_pair("scope", SCOPE)
        .append_pair("code_challenge", &pkce.challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("handoff", "url")
        .append_pair("state", &state);
    let callback = Callback::listen(CALLBACK_HOST, CALLBACK_PORT, CALLBACK_PATH.into())
        .await
        .map_err(|e| LoginError::Provider(e.to_string()))?;
    ui.notify(AuthEvent::Progress {
        message: format!("Listening for OAuth callback on {REDIRECT_URI}"),
    });
    ui.notify(AuthEvent::AuthUrl {
        url: url.to_string(),
        instructions: Some("Continue in your browser.".into()),
    });
    // No pasting: the gateway hands the browser back to this machine.
    let code = callback.code(NAME, Some(&state)).await?;
    let fields = [
        ("grant_type", "authorization_code"),
        ("client_id", CLIENT_ID),
        ("redirect_uri", REDIRECT_URI),
        ("code", code.as_str()),
        ("code_verifier", pkce.verifier.as_str()),
    ];
    request_tokens(http, gateway, &fields, None)
        .await
        .map_err(token_error)
}

/// What the device authorization hands out.
struct DeviceAuthorization {
    device_code: String,
    user_code: String,
    verification_uri: String,
    expires_in: f64,
    interval: Option<f64>,
}

async fn start_device_authorization(
    http: &reqwest::Client,
    gateway: &str,
) -> Result<DeviceAuthorization, LoginError> {
    let url = at(gateway, "/v1/oauth/device").map_err(LoginError::Provider)?;
    let fields = [("client_id", CLIENT_ID), ("scope", SCOPE)];
    let reply = post::send(post::form(http, &url, &fields))
        .await
        .map_err(|e| LoginError::Provider(e.to_string()))?;
    if !reply.ok() {
        let r = refusal(&reply, "Radius OAuth device authorization failed");
        return Err(LoginError::Provider(r.message));
    }
    let (Some(device_code), Some(user_code), Some(uri), Some(expires_in)) = (
        reply.string("device_code"),
        reply.string("user_code"),
        reply.string("verification_uri"),
        reply.field("expires_in").as_f64().filter(|n| *n != 0.0),
    ) else {
        return Err(LoginError::Provider(
            "Radius OAuth device authorization response is missing required fields".into(),
        ));
    };
    let verification_uri = trusted_http_url(&Value::String(uri.to_string())).ok_or_else(|| {
        LoginError::Provider(
            "Untrusted verification_uri in Radius OAuth device authorization response".into(),
        )
    })?;
    Ok(DeviceAuthorization {
        device_code: device_code.to_string(),
        user_code: user_code.to_string(),
        verification_uri,
        expires_in,
        interval: reply.field("interval").as_f64(),
    })
}

async fn with_device_code(
    http: &reqwest::Client,
    gateway: &str,
    ui: &dyn Interaction,
) -> Result<Tokens, LoginError> {
    let device = start_device_authorization(http, gateway).await?;
    ui.notify(AuthEvent::DeviceCode {
        user_code: device.user_code.clone(),
        verification_uri: device.verification_uri.clone(),
        open_browser: true,
    });
    let secs = |s: f64| Duration::try_from_secs_f64(s).ok();
    let schedule = Schedule {
        interval: device.interval.and_then(secs),
        expires_in: secs(device.expires_in),
        wait_before_first_poll: false,
    };
    let poll = || async {
        let fields = [
            ("grant_type", DEVICE_CODE_GRANT),
            ("client_id", CLIENT_ID),
            ("device_code", device.device_code.as_str()),
        ];
        match request_tokens(http, gateway, &fields, None).await {
            Ok(tokens) => Poll::Complete(tokens),
            Err(TokenError::Network(m)) => Poll::Failed(m),
            Err(TokenError::Refused(r)) => match r.oauth_error.as_deref() {
                Some("authorization_pending") => Poll::Pending,
                Some("slow_down") => Poll::SlowDown { interval: None },
                Some("expired_token") => Poll::Failed("Device authorization expired.".into()),
                Some("access_denied") => Poll::Failed("Device authorization was denied.".into()),
                _ => Poll::Failed(r.message),
            },
        }
    };
    Ok(device::poll_device_code(schedule, poll).await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reply(status: u16, text: &str) -> Reply {
        Reply {
            status,
            text: text.into(),
            json: serde_json::from_str(text).ok(),
        }
    }

    #[test]
    fn a_gateway_is_normalized_as_1_6_normalizes_it() {
        assert_eq!(
            normalize("radius.example.com//"),
            "https://radius.example.com"
        );
        assert_eq!(normalize("HTTP://localhost:8080/"), "HTTP://localhost:8080");
        assert_eq!(
            at("https://radius.pi.dev", "/v1/oauth/token").unwrap(),
            "https://radius.pi.dev/v1/oauth/token"
        );
        assert_eq!(
            at("http://127.0.0.1:9/base", "/v1/oauth").unwrap(),
            "http://127.0.0.1:9/v1/oauth",
            "an absolute path, as 1.6's `new URL` takes it"
        );
    }

    #[test]
    fn refusals_carry_the_oauth_error_in_1_6s_words() {
        let r = refusal(
            &reply(
                400,
                r#"{"error":"authorization_pending","error_description":"wait"}"#,
            ),
            "Radius OAuth token request failed",
        );
        assert_eq!(r.oauth_error.as_deref(), Some("authorization_pending"));
        assert_eq!(
            r.message,
            "Radius OAuth token request failed: authorization_pending: wait"
        );
        let r = refusal(
            &reply(502, "Bad gateway"),
            "Radius OAuth token request failed",
        );
        assert_eq!(r.message, "Radius OAuth token request failed: Bad gateway");
        let r = refusal(&reply(500, ""), "Radius OAuth device authorization failed");
        assert_eq!(r.message, "Radius OAuth device authorization failed: 500");
        assert_eq!(refusal(&reply(400, r#"{"x":1}"#), "m").message, "m: 400");
    }

    #[tokio::test]
    async fn tokens_are_stored_a_minute_short_with_their_scope() {
        use wiremock::matchers::{body_string, method, path};
        use wiremock::{Mock, MockServer, ResponseTemplate};
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/oauth/token"))
            .and(body_string(
                "grant_type=refresh_token&client_id=pi-gateway&refresh_token=r0",
            ))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!({"access_token": "a1",
                "expires_in": 3600, "scope": "gateway offline_access"})),
            )
            .mount(&server)
            .await;
        let http = crate::provider::http::client();
        let fields = [
            ("grant_type", "refresh_token"),
            ("client_id", CLIENT_ID),
            ("refresh_token", "r0"),
        ];
        let Ok(t) = request_tokens(&http, &server.uri(), &fields, Some("r0")).await else {
            panic!("refreshed");
        };
        assert_eq!((t.access.as_str(), t.refresh.as_str()), ("a1", "r0"));
        assert_eq!(t.extra["scope"], "gateway offline_access");
        let expected = now_ms() + 3_600_000 - 60_000;
        assert!((expected - 5_000..=expected).contains(&t.expires));
    }
}
