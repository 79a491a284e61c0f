//! Meta (Muse subscription), as pi 1.6 signs in to it: a device-code login (RFC 8628) at
//! `auth.meta.com` yields an identity token, which Meta does not accept for inference; it is
//! exchanged at the Muse Code key-mint endpoint for a Model API key that lives about a day.
//! 1.6 stores the identity token as the login's refresh token and the key as its access
//! token, so renewing the login is minting a new key — until Meta refuses the identity token
//! (it is not renewable), and only signing in again helps.
//!
//! `PI_OAUTH_META_DEVICE_AUTHORIZATION_URL`, `PI_OAUTH_META_DEVICE_TOKEN_URL` and
//! `PI_OAUTH_META_API_KEY_URL` point the three endpoints elsewhere.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::device::{self, Poll, Schedule};
use super::flow::{AuthEvent, Interaction, OAuthFlow};
use super::login::LoginError;
use super::post::{self, trusted_http_url, Reply};
use super::{now_ms, OAuthError, Tokens};

const PROVIDER: &str = "meta";
/// Muse Code CLI's client.
const CLIENT_ID: &str = "1031625952748946";
const DEVICE_AUTHORIZATION_URL: &str = "https://auth.meta.com/oidc/device/authorization/";
const DEVICE_TOKEN_URL: &str = "https://auth.meta.com/oidc/device/token/";
const API_KEY_MINT_URL: &str = "https://api.meta.ai/muse-code/key";
const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
const API_KEY_LIFETIME_MS: i64 = 24 * 60 * 60 * 1000;

#[derive(Debug)]
pub struct Meta;

#[async_trait]
impl OAuthFlow for Meta {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn name(&self) -> &'static str {
        "Meta (Muse subscription)"
    }

    fn login_label(&self) -> Option<&'static str> {
        Some("Sign in with Meta")
    }

    async fn login(&self, ui: &dyn Interaction) -> Result<Tokens, LoginError> {
        let http = crate::provider::http::client();
        let device = start_device_authorization(&http).await?;
        ui.notify(AuthEvent::DeviceCode {
            user_code: device.user_code.clone(),
            verification_uri: device.verification_uri.clone(),
            open_browser: true,
        });
        let schedule = Schedule {
            interval: device.interval,
            expires_in: device.expires_in,
            wait_before_first_poll: true,
        };
        let url = super::endpoint(PROVIDER, "DEVICE_TOKEN_URL", DEVICE_TOKEN_URL);
        let identity =
            device::poll_device_code(schedule, || poll(&http, &url, &device.device_code)).await?;
        ui.notify(AuthEvent::Progress {
            message: "Enabling Meta Model API access...".into(),
        });
        let url = super::endpoint(PROVIDER, "API_KEY_URL", API_KEY_MINT_URL);
        Ok(mint_api_key(&http, &url, &identity).await?)
    }

    /// Mints a new key with the identity token the login stored as its refresh token.
    async fn refresh(&self, http: &reqwest::Client, tokens: &Tokens) -> Result<Tokens, OAuthError> {
        let url = super::endpoint(PROVIDER, "API_KEY_URL", API_KEY_MINT_URL);
        mint_api_key(http, &url, &tokens.refresh).await
    }
}

/// `": <what the server said>"` from the first field 1.6 looks in, or nothing.
fn error_detail(reply: &Reply) -> String {
    ["error_description", "detail", "message", "error"]
        .iter()
        .find_map(|k| {
            reply
                .field(k)
                .as_str()
                .map(str::trim)
                .filter(|v| !v.is_empty())
        })
        .map_or_else(String::new, |v| format!(": {v}"))
}

struct DeviceAuthorization {
    device_code: String,
    user_code: String,
    verification_uri: String,
    interval: Option<Duration>,
    expires_in: Option<Duration>,
}

async fn start_device_authorization(
    http: &reqwest::Client,
) -> Result<DeviceAuthorization, LoginError> {
    let url = super::endpoint(
        PROVIDER,
        "DEVICE_AUTHORIZATION_URL",
        DEVICE_AUTHORIZATION_URL,
    );
    let reply = post::send(post::form(http, &url, &[("client_id", CLIENT_ID)]))
        .await
        .map_err(|e| LoginError::Provider(e.to_string()))?;
    if !reply.ok() {
        return Err(LoginError::Provider(format!(
            "Meta device authorization failed with status {}{}",
            reply.status,
            error_detail(&reply)
        )));
    }
    let page = trusted_http_url(reply.field("verification_uri_complete"))
        .or_else(|| trusted_http_url(reply.field("verification_uri")));
    match (reply.string("device_code"), reply.string("user_code"), page) {
        (Some(device_code), Some(user_code), Some(verification_uri)) => Ok(DeviceAuthorization {
            device_code: device_code.to_string(),
            user_code: user_code.to_string(),
            verification_uri,
            interval: reply.positive("interval").map(Duration::from_secs_f64),
            expires_in: reply.positive("expires_in").map(Duration::from_secs_f64),
        }),
        _ => Err(LoginError::Provider(format!(
            "Invalid Meta device authorization response: {}",
            redacted(&reply)
        ))),
    }
}

/// The answer as 1.6 quotes it, without the device code (a secret until it expires).
fn redacted(reply: &Reply) -> String {
    let mut json = reply.json.clone().unwrap_or(Value::Null);
    if let Some(code) = json.get_mut("device_code") {
        *code = Value::String("[redacted]".into());
    }
    json.to_string()
}

/// One poll of the device login: the identity token once the user has signed in.
async fn poll(http: &reqwest::Client, url: &str, device_code: &str) -> Poll<String> {
    let fields = [
        ("grant_type", DEVICE_CODE_GRANT),
        ("device_code", device_code),
        ("client_id", CLIENT_ID),
    ];
    let reply = match post::send(post::form(http, url, &fields)).await {
        Ok(r) => r,
        Err(e) => return Poll::Failed(e.to_string()),
    };
    if let Some(token) = reply.string("access_token").filter(|_| reply.ok()) {
        return Poll::Complete(token.to_string());
    }
    match reply.field("error").as_str() {
        Some("authorization_pending") => Poll::Pending,
        Some("slow_down") => Poll::SlowDown {
            interval: reply.positive("interval").map(Duration::from_secs_f64),
        },
        Some("access_denied") => Poll::Failed("Meta login was denied.".into()),
        Some("expired_token") => {
            Poll::Failed("Meta device authorization expired. Please restart login.".into())
        }
        _ => Poll::Failed(format!(
            "Meta device token request failed with status {}{}",
            reply.status,
            error_detail(&reply)
        )),
    }
}

/// Exchanges the identity token for a Model API key, stored as 1.6 stores it.
async fn mint_api_key(
    http: &reqwest::Client,
    url: &str,
    identity: &str,
) -> Result<Tokens, OAuthError> {
    let said = |message: String| OAuthError::Said {
        message,
        again: None,
    };
    let request = http
        .post(url)
        .header("accept", "application/json")
        .header("authorization", format!("Bearer {identity}"))
        .header("content-type", "application/json")
        .header("x-api-version", "1.0.0")
        .body("{}");
    let reply = post::send(request).await.map_err(|e| said(e.to_string()))?;
    if matches!(reply.status, 401 | 403) {
        // Meta's words already say how to sign in again.
        return Err(said(format!(
            "Meta session expired (status {}). Run `/login meta` to sign in again.{}",
            reply.status,
            error_detail(&reply)
        )));
    }
    if !reply.ok() {
        return Err(said(format!(
            "Meta API key mint failed with status {}{}",
            reply.status,
            error_detail(&reply)
        )));
    }
    let Some(key) = reply.string("api_key") else {
        let setup = trusted_http_url(reply.field("action_url"))
            .map_or_else(String::new, |u| format!(" Complete setup at {u}"));
        return Err(said(format!("Meta did not issue an API key.{setup}")));
    };
    Ok(Tokens {
        access: key.to_string(),
        refresh: identity.to_string(),
        expires: now_ms() + API_KEY_LIFETIME_MS,
        extra: serde_json::Map::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wiremock::matchers::{body_string, header, method};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    #[test]
    fn details_come_from_the_first_field_that_says_something() {
        let reply = |body: Value| Reply {
            status: 400,
            text: String::new(),
            json: Some(body),
        };
        assert_eq!(
            error_detail(&reply(
                json!({"error_description": " ", "detail": " Bad code ",
                "error": "x"})
            )),
            ": Bad code"
        );
        assert_eq!(error_detail(&reply(json!({"error": 5}))), "");
    }

    #[tokio::test]
    async fn renewing_mints_a_key_for_a_day_and_a_dead_identity_says_to_sign_in_again() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(header("authorization", "Bearer identity-1"))
            .and(header("x-api-version", "1.0.0"))
            .and(header("content-type", "application/json"))
            .and(body_string("{}"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"api_key": "LLM|key-1"})))
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(header("authorization", "Bearer no-plan"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"action_url": "https://www.meta.test/setup"})),
            )
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(401)
                    .set_body_json(json!({"detail": "Invalid identity token"})),
            )
            .mount(&server)
            .await;
        let http = crate::provider::http::client();
        let t = mint_api_key(&http, &server.uri(), "identity-1")
            .await
            .unwrap();
        assert_eq!(
            (t.access.as_str(), t.refresh.as_str()),
            ("LLM|key-1", "identity-1")
        );
        let expected = now_ms() + API_KEY_LIFETIME_MS;
        assert!((expected - 5_000..=expected).contains(&t.expires));
        let err = mint_api_key(&http, &server.uri(), "no-plan")
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Meta did not issue an API key. Complete setup at https://www.meta.test/setup"
        );
        let err = mint_api_key(&http, &server.uri(), "expired")
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Meta session expired (status 401). Run `/login meta` to sign in again.: Invalid \
             identity token"
        );
    }
}
