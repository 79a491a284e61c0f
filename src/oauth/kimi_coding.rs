//! Kimi Code (subscription), as pi 1.6 signs in to it: a device-code login (RFC 8628) at
//! `auth.kimi.com` with form requests and JSON answers, and tokens refreshed there — retried
//! after 1, 2 and 4 seconds when the server is busy or unreachable, given up at once when it
//! says the login is dead. The access token goes to `api.kimi.com/coding` as a bearer token.
//!
//! 1.6's own host override (`KIMI_CODE_OAUTH_HOST`, then `KIMI_OAUTH_HOST`) points both
//! endpoints elsewhere, for pi as for 1.6.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::device::{self, Poll, Schedule};
use super::flow::{AuthEvent, Interaction, OAuthFlow};
use super::login::LoginError;
use super::post::{self, trusted_http_url, Reply};
use super::{now_ms, OAuthError, Tokens};

const PROVIDER: &str = "kimi-coding";
const CLIENT_ID: &str = "17e5f671-d194-4dfb-9706-5516cb48c098";
const DEFAULT_HOST: &str = "https://auth.kimi.com";
const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
const DEFAULT_INTERVAL: Duration = Duration::from_secs(5);
const DEFAULT_CODE_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// Refresh attempts after the first, each after twice the wait of the one before.
const REFRESH_RETRIES: u32 = 3;
const FIRST_RETRY_AFTER: Duration = Duration::from_secs(1);
/// Fields of an answer never repeated in a message: they are secrets.
const SECRET_FIELDS: &[&str] = &["access_token", "refresh_token", "device_code", "id_token"];

#[derive(Debug)]
pub struct KimiCoding;

#[async_trait]
impl OAuthFlow for KimiCoding {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn name(&self) -> &'static str {
        "Kimi Code (subscription)"
    }

    fn login_label(&self) -> Option<&'static str> {
        Some("Sign in with Kimi Code")
    }

    async fn login(&self, ui: &dyn Interaction) -> Result<Tokens, LoginError> {
        let http = crate::provider::http::client();
        let host = oauth_host();
        let device = start_device_authorization(&http, &host).await?;
        ui.notify(AuthEvent::DeviceCode {
            user_code: device.user_code.clone(),
            verification_uri: device.verification_uri.clone(),
            open_browser: true,
        });
        let schedule = Schedule {
            interval: Some(device.interval),
            expires_in: Some(device.expires_in),
            wait_before_first_poll: true,
        };
        let url = format!("{host}/api/oauth/token");
        Ok(device::poll_device_code(schedule, || poll(&http, &url, &device.device_code)).await?)
    }

    async fn refresh(&self, http: &reqwest::Client, tokens: &Tokens) -> Result<Tokens, OAuthError> {
        refresh_at(http, &oauth_host(), &tokens.refresh, FIRST_RETRY_AFTER).await
    }
}

/// Where Kimi's OAuth endpoints are: 1.6's override, else `auth.kimi.com`.
fn oauth_host() -> String {
    let set = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let host = set("KIMI_CODE_OAUTH_HOST")
        .or_else(|| set("KIMI_OAUTH_HOST"))
        .unwrap_or_else(|| DEFAULT_HOST.to_string());
    host.trim_end_matches('/').to_string()
}

/// The answer as 1.6 quotes it in its messages (`JSON.stringify`), its secrets blanked:
/// a message reaches the terminal and the session, a token must not.
fn quoted(reply: &Reply) -> String {
    let mut json = reply.json.clone().unwrap_or(Value::Null);
    if let Some(object) = json.as_object_mut() {
        for field in SECRET_FIELDS {
            if let Some(v) = object.get_mut(*field) {
                *v = Value::String("[redacted]".into());
            }
        }
    }
    json.to_string()
}

/// `": <text>"`, or nothing for an empty body.
fn colon_text(reply: &Reply) -> String {
    if reply.text.is_empty() {
        String::new()
    } else {
        format!(": {}", reply.text)
    }
}

struct DeviceAuthorization {
    device_code: String,
    user_code: String,
    verification_uri: String,
    interval: Duration,
    expires_in: Duration,
}

async fn start_device_authorization(
    http: &reqwest::Client,
    host: &str,
) -> Result<DeviceAuthorization, LoginError> {
    let url = format!("{host}/api/oauth/device_authorization");
    let reply = post::send(post::form(http, &url, &[("client_id", CLIENT_ID)]))
        .await
        .map_err(|e| LoginError::Provider(e.to_string()))?;
    if !reply.ok() {
        return Err(LoginError::Provider(format!(
            "Kimi Code device authorization failed with status {}{}",
            reply.status,
            colon_text(&reply)
        )));
    }
    let field = |f: &str| reply.field(f).as_str().map(str::to_string);
    // 1.6 wants both pages, and shows the one with the code filled in.
    let complete = trusted_http_url(reply.field("verification_uri_complete"));
    let page = trusted_http_url(reply.field("verification_uri"));
    match (field("device_code"), field("user_code"), page, complete) {
        (Some(device_code), Some(user_code), Some(_), Some(verification_uri)) => {
            Ok(DeviceAuthorization {
                device_code,
                user_code,
                verification_uri,
                interval: reply
                    .positive("interval")
                    .map_or(DEFAULT_INTERVAL, Duration::from_secs_f64),
                expires_in: reply
                    .positive("expires_in")
                    .map_or(DEFAULT_CODE_LIFETIME, Duration::from_secs_f64),
            })
        }
        _ => Err(LoginError::Provider(format!(
            "Invalid Kimi Code device authorization response: {}",
            quoted(&reply)
        ))),
    }
}

/// The tokens of a token answer, or 1.6's message for one that lacks them.
fn parse_tokens(reply: &Reply, operation: &str) -> Result<Tokens, String> {
    match (
        reply.string("access_token"),
        reply.string("refresh_token"),
        reply.positive("expires_in"),
    ) {
        (Some(access), Some(refresh), Some(expires_in)) => Ok(Tokens {
            access: access.to_string(),
            refresh: refresh.to_string(),
            expires: now_ms() + (expires_in * 1000.0) as i64,
            extra: serde_json::Map::new(),
        }),
        _ => Err(format!(
            "Kimi Code token {operation} response missing fields: {}",
            quoted(reply)
        )),
    }
}

async fn poll(http: &reqwest::Client, url: &str, device_code: &str) -> Poll<Tokens> {
    let fields = [
        ("client_id", CLIENT_ID),
        ("device_code", device_code),
        ("grant_type", DEVICE_CODE_GRANT),
    ];
    let reply = match post::send(post::form(http, url, &fields)).await {
        Ok(r) => r,
        Err(e) => return Poll::Failed(e.to_string()),
    };
    if reply.status >= 500 {
        return Poll::Failed(format!(
            "Kimi Code device token request failed with status {}{}",
            reply.status,
            colon_text(&reply)
        ));
    }
    if reply.ok() && reply.field("access_token").is_string() {
        return match parse_tokens(&reply, "poll") {
            Ok(t) => Poll::Complete(t),
            Err(message) => Poll::Failed(message),
        };
    }
    let description = reply
        .field("error_description")
        .as_str()
        .map_or_else(String::new, |d| format!(": {d}"));
    match reply.field("error").as_str() {
        Some("authorization_pending") => Poll::Pending,
        Some("slow_down") => Poll::SlowDown {
            interval: reply.positive("interval").map(Duration::from_secs_f64),
        },
        Some("expired_token") => {
            Poll::Failed("Kimi Code device authorization expired. Please restart login.".into())
        }
        Some("access_denied") => Poll::Failed("Kimi Code login was denied.".into()),
        error => Poll::Failed(format!(
            "Kimi Code device token request failed (status {}){}",
            reply.status,
            error.map_or_else(String::new, |e| format!(": {e}{description}"))
        )),
    }
}

/// Renews the login at `host` with `refresh`, as 1.6 does: a busy or unreachable server is
/// tried again after `first_wait`, then twice as long each time.
async fn refresh_at(
    http: &reqwest::Client,
    host: &str,
    refresh: &str,
    first_wait: Duration,
) -> Result<Tokens, OAuthError> {
    let said = |message: String, dead: bool| OAuthError::Said {
        message,
        again: dead.then(|| KimiCoding.sign_in_again()),
    };
    let url = format!("{host}/api/oauth/token");
    let fields = [
        ("client_id", CLIENT_ID),
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh),
    ];
    let mut last = "Kimi Code token refresh failed".to_string();
    for attempt in 0..=REFRESH_RETRIES {
        if attempt > 0 {
            tokio::time::sleep(first_wait * 2u32.pow(attempt - 1)).await;
        }
        let reply = match post::send(post::form(http, &url, &fields)).await {
            Ok(r) => r,
            Err(e) => {
                last = e.to_string();
                continue;
            }
        };
        if reply.ok() {
            return parse_tokens(&reply, "refresh").map_err(|m| said(m, false));
        }
        if matches!(reply.status, 401 | 403) || reply.field("error") == "invalid_grant" {
            let description = reply
                .field("error_description")
                .as_str()
                .map_or_else(String::new, |d| format!(": {d}"));
            return Err(said(
                format!(
                    "Kimi Code token refresh unauthorized (status {}){description}",
                    reply.status
                ),
                true,
            ));
        }
        let busy = reply.status == 429 || reply.status >= 500;
        if busy && attempt < REFRESH_RETRIES {
            last = format!(
                "Kimi Code token refresh failed with status {}",
                reply.status
            );
            continue;
        }
        return Err(said(
            format!(
                "Kimi Code token refresh failed with status {}: {}",
                reply.status,
                quoted(&reply)
            ),
            false,
        ));
    }
    Err(said(last, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wiremock::matchers::{body_string_contains, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn reply(status: u16, body: Value) -> Reply {
        Reply {
            status,
            text: body.to_string(),
            json: Some(body),
        }
    }

    #[test]
    fn a_token_answer_missing_a_field_is_quoted_without_its_secrets() {
        let r = reply(200, json!({"access_token": "at-secret", "expires_in": 900}));
        let err = parse_tokens(&r, "refresh").unwrap_err();
        assert_eq!(
            err,
            r#"Kimi Code token refresh response missing fields: {"access_token":"[redacted]","expires_in":900}"#
        );
        let t = parse_tokens(
            &reply(
                200,
                json!({"access_token": "a", "refresh_token": "r", "expires_in": 900}),
            ),
            "poll",
        )
        .unwrap();
        let expected = now_ms() + 900_000;
        assert!(
            (expected - 5_000..=expected).contains(&t.expires),
            "no skew"
        );
    }

    #[tokio::test]
    async fn a_busy_server_is_asked_again_and_a_dead_login_is_not() {
        let server = MockServer::start().await;
        let http = crate::provider::http::client();
        Mock::given(method("POST"))
            .and(path("/api/oauth/token"))
            .and(body_string_contains("refresh_token=busy"))
            .respond_with(ResponseTemplate::new(503))
            .up_to_n_times(2)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(body_string_contains("refresh_token=busy"))
            .respond_with(ResponseTemplate::new(200).set_body_json(
                json!({"access_token": "a2", "refresh_token": "r2", "expires_in": 900}),
            ))
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(body_string_contains("refresh_token=dead"))
            .respond_with(ResponseTemplate::new(401).set_body_json(
                json!({"error": "invalid_grant", "error_description": "token revoked"}),
            ))
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(body_string_contains("refresh_token=down"))
            .respond_with(ResponseTemplate::new(500).set_body_string("oops"))
            .mount(&server)
            .await;
        let wait = Duration::from_millis(1);
        let t = refresh_at(&http, &server.uri(), "busy", wait)
            .await
            .unwrap();
        assert_eq!((t.access.as_str(), t.refresh.as_str()), ("a2", "r2"));
        let err = refresh_at(&http, &server.uri(), "dead", wait)
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Kimi Code token refresh unauthorized (status 401): token revoked; sign in again \
             with `pi auth login kimi-coding`"
        );
        let err = refresh_at(&http, &server.uri(), "down", wait)
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Kimi Code token refresh failed with status 500: null"
        );
        let sent = server.received_requests().await.unwrap();
        let count = |needle: &str| {
            sent.iter()
                .filter(|r| String::from_utf8_lossy(&r.body).contains(needle))
                .count()
        };
        assert_eq!(
            (count("busy"), count("dead"), count("down")),
            (3, 1, 4),
            "three tries, one, and the first and three retries"
        );
        let body = String::from_utf8_lossy(&sent[0].body).to_string();
        assert_eq!(
            body,
            format!("client_id={CLIENT_ID}&grant_type=refresh_token&refresh_token=busy")
        );
    }
}
