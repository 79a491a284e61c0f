//! xAI (Grok/X subscription), as pi 1.6 signs in to it: a device-code login (RFC 8628) at
//! `auth.x.ai`, the code entered on xAI's page while pi polls, then tokens refreshed with form
//! grants. A token is stored five minutes short of its life, so it is renewed before it can
//! die mid-request; the access token is the request's key.
//!
//! `PI_OAUTH_XAI_DEVICE_CODE_URL` and `PI_OAUTH_XAI_TOKEN_URL` point the two endpoints
//! elsewhere.

use std::time::Duration;

use async_trait::async_trait;

use super::device::{self, Poll, Schedule};
use super::flow::{AuthEvent, Interaction, OAuthFlow};
use super::login::LoginError;
use super::post::{self, Reply};
use super::{now_ms, OAuthError, Tokens};

const PROVIDER: &str = "xai";
const CLIENT_ID: &str = "b1a00492-073a-47ea-816f-4c329264a828";
const SCOPE: &str = "openid profile email offline_access grok-cli:access api:access";
const DEVICE_CODE_URL: &str = "https://auth.x.ai/oauth2/device/code";
const TOKEN_URL: &str = "https://auth.x.ai/oauth2/token";
const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
/// Taken off a token's life when it is stored.
const REFRESH_SKEW_MS: i64 = 5 * 60 * 1000;
/// A token's life when the server names none.
const DEFAULT_LIFETIME_SECS: f64 = 3600.0;

#[derive(Debug)]
pub struct Xai;

#[async_trait]
impl OAuthFlow for Xai {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn name(&self) -> &'static str {
        "xAI (Grok/X subscription)"
    }

    fn login_label(&self) -> Option<&'static str> {
        Some("Sign in with SuperGrok or X Premium")
    }

    async fn login(&self, ui: &dyn Interaction) -> Result<Tokens, LoginError> {
        let http = crate::provider::http::client();
        let device = request_device_code(&http).await?;
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
        let url = super::endpoint(PROVIDER, "TOKEN_URL", TOKEN_URL);
        Ok(device::poll_device_code(schedule, || poll(&http, &url, &device.device_code)).await?)
    }

    async fn refresh(&self, http: &reqwest::Client, tokens: &Tokens) -> Result<Tokens, OAuthError> {
        let url = super::endpoint(PROVIDER, "TOKEN_URL", TOKEN_URL);
        refresh_at(http, &url, tokens).await
    }
}

/// Renews `tokens` at the token endpoint `url`.
async fn refresh_at(
    http: &reqwest::Client,
    url: &str,
    tokens: &Tokens,
) -> Result<Tokens, OAuthError> {
    let fields = [
        ("grant_type", "refresh_token"),
        ("client_id", CLIENT_ID),
        ("refresh_token", tokens.refresh.as_str()),
    ];
    let said = |message: String, again: bool| OAuthError::Said {
        message,
        again: again.then(|| Xai.sign_in_again()),
    };
    let reply = send(post::form(http, url, &fields))
        .await
        .map_err(|m| said(m, false))?;
    if !reply.ok() {
        let refused = matches!(reply.status, 400 | 401 | 403);
        return Err(said(failure("token refresh", &reply), refused));
    }
    tokens_from(&reply, Some(&tokens.refresh)).map_err(|m| said(m, false))
}

/// What the device authorization hands out.
#[derive(Debug)]
struct DeviceCode {
    device_code: String,
    user_code: String,
    /// The page to enter the code on (with the code filled in, when xAI gives that one).
    verification_uri: String,
    interval: Option<Duration>,
    expires_in: Duration,
}

/// Posts a form as 1.6's xAI login does: an answer that is not JSON is an error of its own.
async fn send(request: reqwest::RequestBuilder) -> Result<Reply, String> {
    let reply = post::send(request).await.map_err(|e| e.to_string())?;
    if reply.json.is_none() {
        return Err(format!(
            "xAI OAuth returned invalid JSON (HTTP {})",
            reply.status
        ));
    }
    Ok(reply)
}

/// 1.6's message for a refused request: the action, the status, and what the server said.
fn failure(action: &str, reply: &Reply) -> String {
    let parts: Vec<&str> = [reply.string("error"), reply.string("error_description")]
        .into_iter()
        .flatten()
        .collect();
    let detail = if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join(": "))
    };
    format!("xAI OAuth {action} failed (HTTP {}){detail}", reply.status)
}

fn invalid(field: &str) -> String {
    format!("Invalid xAI OAuth response field: {field}")
}

/// The verification page, only as an https URL: it is opened in the browser.
fn verification_uri(raw: &str) -> Result<String, String> {
    match reqwest::Url::parse(raw) {
        Ok(url) if url.scheme() == "https" => Ok(url.to_string()),
        _ => Err("Untrusted verification URI in xAI OAuth response".into()),
    }
}

async fn request_device_code(http: &reqwest::Client) -> Result<DeviceCode, LoginError> {
    let url = super::endpoint(PROVIDER, "DEVICE_CODE_URL", DEVICE_CODE_URL);
    let fields = [
        ("client_id", CLIENT_ID),
        ("scope", SCOPE),
        ("referrer", "pi"),
    ];
    let reply = send(post::form(http, &url, &fields))
        .await
        .map_err(LoginError::Provider)?;
    if !reply.ok() {
        return Err(LoginError::Provider(failure(
            "device authorization",
            &reply,
        )));
    }
    parse_device_code(&reply).map_err(LoginError::Provider)
}

fn parse_device_code(reply: &Reply) -> Result<DeviceCode, String> {
    let required = |f: &str| {
        reply
            .string(f)
            .map(str::to_string)
            .ok_or_else(|| invalid(f))
    };
    let complete = reply
        .string("verification_uri_complete")
        .map(verification_uri)
        .transpose()?;
    let device_code = required("device_code")?;
    let user_code = required("user_code")?;
    let uri = verification_uri(&required("verification_uri")?)?;
    let expires_in = reply
        .positive("expires_in")
        .ok_or_else(|| invalid("expires_in"))?;
    Ok(DeviceCode {
        device_code,
        user_code,
        verification_uri: complete.unwrap_or(uri),
        // RFC 8628 allows 0; the poller's default stands in for it, as in 1.6.
        interval: reply.positive("interval").map(Duration::from_secs_f64),
        expires_in: Duration::from_secs_f64(expires_in),
    })
}

/// The tokens of a token answer; `previous` is kept when a refresh does not rotate it.
fn tokens_from(reply: &Reply, previous: Option<&str>) -> Result<Tokens, String> {
    let access = reply
        .string("access_token")
        .ok_or_else(|| invalid("access_token"))?;
    let refresh = match (!reply.has("refresh_token"), previous) {
        (true, Some(p)) if !p.is_empty() => p.to_string(),
        _ => reply
            .string("refresh_token")
            .ok_or_else(|| invalid("refresh_token"))?
            .to_string(),
    };
    let lifetime = if !reply.has("expires_in") {
        DEFAULT_LIFETIME_SECS
    } else {
        reply
            .positive("expires_in")
            .ok_or_else(|| invalid("expires_in"))?
    };
    Ok(Tokens {
        access: access.to_string(),
        refresh,
        expires: now_ms() + (lifetime * 1000.0) as i64 - REFRESH_SKEW_MS,
        extra: serde_json::Map::new(),
    })
}

async fn poll(http: &reqwest::Client, url: &str, device_code: &str) -> Poll<Tokens> {
    let fields = [
        ("grant_type", DEVICE_CODE_GRANT),
        ("client_id", CLIENT_ID),
        ("device_code", device_code),
    ];
    let reply = match send(post::form(http, url, &fields)).await {
        Ok(r) => r,
        Err(message) => return Poll::Failed(message),
    };
    if reply.ok() {
        return match tokens_from(&reply, None) {
            Ok(tokens) => Poll::Complete(tokens),
            Err(message) => Poll::Failed(message),
        };
    }
    match reply.field("error").as_str() {
        Some("authorization_pending") => Poll::Pending,
        Some("slow_down") => Poll::SlowDown {
            interval: reply.positive("interval").map(Duration::from_secs_f64),
        },
        Some("access_denied" | "authorization_denied") => {
            Poll::Failed("xAI device authorization was denied".into())
        }
        Some("expired_token") => Poll::Failed("xAI device code expired".into()),
        _ => Poll::Failed(failure("device token polling", &reply)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reply(status: u16, body: serde_json::Value) -> Reply {
        Reply {
            status,
            text: body.to_string(),
            json: Some(body),
        }
    }

    #[test]
    fn the_device_code_prefers_the_complete_page_and_refuses_other_schemes() {
        let body = json!({"device_code": "d", "user_code": "U-1", "expires_in": 600,
            "verification_uri": "https://accounts.x.ai/device",
            "verification_uri_complete": "https://accounts.x.ai/device?code=U-1", "interval": 0});
        let d = parse_device_code(&reply(200, body.clone())).unwrap();
        assert_eq!(d.verification_uri, "https://accounts.x.ai/device?code=U-1");
        assert_eq!(d.interval, None, "0 is the poller's default");
        assert_eq!(d.expires_in, Duration::from_secs(600));
        let mut bad = body.clone();
        bad["verification_uri_complete"] = json!("http://accounts.x.ai/device");
        assert_eq!(
            parse_device_code(&reply(200, bad)).unwrap_err(),
            "Untrusted verification URI in xAI OAuth response"
        );
        let mut missing = body;
        missing["expires_in"] = json!(0);
        assert_eq!(
            parse_device_code(&reply(200, missing)).unwrap_err(),
            "Invalid xAI OAuth response field: expires_in"
        );
    }

    #[test]
    fn a_token_lives_five_minutes_short_and_an_unrotated_refresh_is_kept() {
        let t = tokens_from(&reply(200, json!({"access_token": "a"})), Some("r0")).unwrap();
        assert_eq!(t.refresh, "r0");
        let expected = now_ms() + 3_600_000 - 300_000;
        assert!(
            (expected - 5_000..=expected).contains(&t.expires),
            "{}",
            t.expires
        );
        let err = tokens_from(&reply(200, json!({"access_token": "a"})), None).unwrap_err();
        assert_eq!(err, "Invalid xAI OAuth response field: refresh_token");
        let t = tokens_from(
            &reply(
                200,
                json!({"access_token": "a", "refresh_token": "r1", "expires_in": 60}),
            ),
            Some("r0"),
        )
        .unwrap();
        assert_eq!(t.refresh, "r1");
    }

    #[test]
    fn failures_are_worded_as_1_6_words_them() {
        let r = reply(
            400,
            json!({"error": "invalid_grant", "error_description": "expired"}),
        );
        assert_eq!(
            failure("token refresh", &r),
            "xAI OAuth token refresh failed (HTTP 400): invalid_grant: expired"
        );
        assert_eq!(
            failure("device authorization", &reply(500, json!({}))),
            "xAI OAuth device authorization failed (HTTP 500)"
        );
    }

    #[tokio::test]
    async fn a_refresh_is_a_form_grant_and_a_refusal_says_to_sign_in_again() {
        use wiremock::matchers::{body_string, header, method};
        use wiremock::{Mock, MockServer, ResponseTemplate};
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(header("content-type", "application/x-www-form-urlencoded"))
            .and(body_string(format!(
                "grant_type=refresh_token&client_id={CLIENT_ID}&refresh_token=r0"
            )))
            .respond_with(ResponseTemplate::new(200).set_body_json(
                json!({"access_token": "a1", "refresh_token": "r1", "expires_in": 7200}),
            ))
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(400).set_body_json(
                json!({"error": "invalid_grant", "error_description": "Token revoked"}),
            ))
            .mount(&server)
            .await;
        let http = crate::provider::http::client();
        let tokens = |refresh: &str| Tokens {
            access: "a0".into(),
            refresh: refresh.into(),
            expires: 0,
            extra: serde_json::Map::new(),
        };
        let renewed = refresh_at(&http, &server.uri(), &tokens("r0"))
            .await
            .unwrap();
        assert_eq!(
            (renewed.access.as_str(), renewed.refresh.as_str()),
            ("a1", "r1")
        );
        let expected = now_ms() + 7_200_000 - 300_000;
        assert!((expected - 5_000..=expected).contains(&renewed.expires));
        let err = refresh_at(&http, &server.uri(), &tokens("gone"))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "xAI OAuth token refresh failed (HTTP 400): invalid_grant: Token revoked; \
             sign in again with `pi auth login xai`"
        );
    }
}
