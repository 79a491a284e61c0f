//! OpenRouter, as pi 1.6 signs in to it: PKCE with the browser sent back to a loopback server
//! on a free port (or the redirect URL pasted, when the browser is elsewhere), and the code
//! exchanged for an API key. The key is OpenRouter's to revoke and never expires, so the
//! login stores it as an access token that lives forever and has nothing to refresh with.
//!
//! OpenRouter sends no `state`: the callback's path carries a random id instead, so a stray
//! request cannot complete the sign-in. `PI_OAUTH_OPENROUTER_{AUTHORIZE,TOKEN}_URL` point the
//! two endpoints elsewhere.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::flow::{AuthEvent, Interaction, OAuthFlow, Prompt};
use super::login::{self, Callback, LoginError, Pkce};
use super::post;
use super::{OAuthError, Tokens};

const PROVIDER: &str = "openrouter";
/// How 1.6 names OpenRouter on the callback page and in its messages.
const CALLBACK_NAME: &str = "OpenRouter";
const AUTHORIZE_URL: &str = "https://openrouter.ai/auth";
const TOKEN_URL: &str = "https://openrouter.ai/api/v1/auth/keys";
/// The whole sign-in, browser or paste, ends after this.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// What 1.6 stores as the key's expiry: JavaScript's `Number.MAX_SAFE_INTEGER`.
pub const NEVER_EXPIRES: i64 = 9_007_199_254_740_991;

#[derive(Debug)]
pub struct OpenRouter;

#[async_trait]
impl OAuthFlow for OpenRouter {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn name(&self) -> &'static str {
        "OpenRouter OAuth"
    }

    fn login_label(&self) -> Option<&'static str> {
        Some("Sign in with OpenRouter")
    }

    fn is_subscription(&self) -> bool {
        false
    }

    async fn login(&self, ui: &dyn Interaction) -> Result<Tokens, LoginError> {
        tokio::time::timeout(LOGIN_TIMEOUT, sign_in(ui))
            .await
            .unwrap_or_else(|_| {
                Err(LoginError::Provider(format!(
                    "{CALLBACK_NAME} sign-in timed out"
                )))
            })
    }

    /// The key does not expire: there is nothing to renew.
    async fn refresh(&self, _: &reqwest::Client, tokens: &Tokens) -> Result<Tokens, OAuthError> {
        Ok(tokens.clone())
    }
}

async fn sign_in(ui: &dyn Interaction) -> Result<Tokens, LoginError> {
    let pkce = Pkce::new().map_err(LoginError::Random)?;
    let host = login::callback_host();
    let path = format!("/oauth/callback/{}", uuid::Uuid::new_v4());
    let callback = Callback::listen(&host, 0, path.clone())
        .await
        .map_err(|e| LoginError::Provider(e.to_string()))?;
    let shown_host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    let redirect_uri = format!("http://{shown_host}:{}{path}", callback.port());
    let url = authorize_url(&pkce, &redirect_uri)?;
    ui.notify(AuthEvent::Progress {
        message: format!("Listening for OpenRouter OAuth callback on {redirect_uri}"),
    });
    ui.notify(AuthEvent::AuthUrl {
        url,
        instructions: Some(
            "Complete sign-in in your browser. If the browser is on another machine, paste the \
             final redirect URL here."
                .into(),
        ),
    });
    let answer = login::callback_or_pasted(
        ui,
        Some(&callback),
        CALLBACK_NAME,
        None,
        Prompt::ManualCode {
            message: "Complete sign-in in your browser, or paste the authorization code / \
                      redirect URL here:"
                .into(),
            placeholder: Some(redirect_uri.clone()),
        },
    )
    .await?;
    let code = match answer {
        login::Answer::Callback(code) => code,
        login::Answer::Pasted(line) => {
            let code = pasted_code(&line)
                .ok_or_else(|| LoginError::Provider("Missing authorization code".into()))?;
            ui.notify(AuthEvent::Progress {
                message: "Exchanging authorization code for an API key...".into(),
            });
            code
        }
    };
    let url = super::endpoint(PROVIDER, "TOKEN_URL", TOKEN_URL);
    exchange(
        &crate::provider::http::client(),
        &url,
        &code,
        &pkce.verifier,
    )
    .await
    .map_err(LoginError::Provider)
}

/// OpenRouter's authorization page: its query is these three alone, in 1.6's order.
fn authorize_url(pkce: &Pkce, redirect_uri: &str) -> Result<String, LoginError> {
    let base = super::endpoint(PROVIDER, "AUTHORIZE_URL", AUTHORIZE_URL);
    let mut url = reqwest::Url::parse(&base).map_err(|e| LoginError::BadUrl {
        url: base.clone(),
        detail: e.to_string(),
    })?;
    url.set_query(None);
    url.query_pairs_mut()
        .append_pair("callback_url", redirect_uri)
        .append_pair("code_challenge", &pkce.challenge)
        .append_pair("code_challenge_method", "S256");
    Ok(url.to_string())
}

/// The code in what the user pasted: the redirect URL's `code`, a query string's, or the
/// whole line (1.6's `parseAuthorizationInput`; no `code#state` form, OpenRouter has none).
fn pasted_code(input: &str) -> Option<String> {
    let value = input.trim();
    if value.is_empty() {
        return None;
    }
    let code_of = |url: reqwest::Url| {
        url.query_pairs()
            .find(|(k, _)| k == "code")
            .map(|(_, v)| v.into_owned())
    };
    if let Ok(url) = reqwest::Url::parse(value) {
        return code_of(url);
    }
    if value.contains("code=") {
        let query = value.strip_prefix('?').unwrap_or(value);
        return reqwest::Url::parse(&format!("http://x/?{query}"))
            .ok()
            .and_then(code_of);
    }
    Some(value.to_string())
}

/// What OpenRouter said went wrong, from the first of the fields 1.6 looks in.
fn error_detail(body: &Value) -> Option<&str> {
    body["error_description"]
        .as_str()
        .or(body["message"].as_str())
        .or(body["error"].as_str())
        .or(body["error"]["message"].as_str())
}

/// Exchanges `code` at `url` for the key, stored as 1.6 stores it.
async fn exchange(
    http: &reqwest::Client,
    url: &str,
    code: &str,
    verifier: &str,
) -> Result<Tokens, String> {
    let request = http
        .post(url)
        .header("accept", "application/json")
        .json(&json!({"code": code, "code_verifier": verifier, "code_challenge_method": "S256"}));
    let reply = post::send(request).await.map_err(|e| {
        if e.is_timeout() {
            "OpenRouter OAuth token exchange timed out".to_string()
        } else {
            e.to_string()
        }
    })?;
    let body = reply
        .json
        .clone()
        .filter(Value::is_object)
        .unwrap_or(json!({}));
    if !reply.ok() {
        let detail = error_detail(&body).map_or_else(String::new, |d| format!(": {d}"));
        return Err(format!(
            "OpenRouter OAuth key exchange failed (HTTP {}){detail}",
            reply.status
        ));
    }
    if reply.json.is_none() {
        return Err("OpenRouter OAuth returned invalid JSON".into());
    }
    let key = body["key"]
        .as_str()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| "OpenRouter OAuth response carries no \"key\"".to_string())?;
    Ok(Tokens {
        access: key.to_string(),
        refresh: String::new(),
        expires: NEVER_EXPIRES,
        extra: serde_json::Map::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pasted_code_is_read_as_1_6_reads_it() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            pasted_code("http://127.0.0.1:4000/oauth/callback/x?code=abc"),
            s("abc")
        );
        assert_eq!(pasted_code("http://127.0.0.1:4000/oauth/callback/x"), None);
        assert_eq!(pasted_code("code=abc&other=1"), s("abc"));
        assert_eq!(pasted_code("?code=abc"), s("abc"));
        assert_eq!(pasted_code(" abc#def \n"), s("abc#def"));
        assert_eq!(pasted_code("   "), None);
    }

    #[test]
    fn the_authorization_url_carries_the_callback_and_the_challenge_only() {
        let pkce = Pkce::new().unwrap();
        let url = authorize_url(&pkce, "http://127.0.0.1:5000/oauth/callback/id").unwrap();
        assert_eq!(
            url,
            format!(
                "https://openrouter.ai/auth?callback_url=http%3A%2F%2F127.0.0.1%3A5000%2Foauth\
                 %2Fcallback%2Fid&code_challenge={}&code_challenge_method=S256",
                pkce.challenge
            )
        );
    }

    #[tokio::test]
    async fn the_code_becomes_a_key_that_never_expires_and_failures_say_why() {
        use wiremock::matchers::{body_json, method};
        use wiremock::{Mock, MockServer, ResponseTemplate};
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(body_json(json!({"code": "c1", "code_verifier": "v",
                "code_challenge_method": "S256"})))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"key": "sk-or-v1-k", "user_id": "u"})),
            )
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(403)
                    .set_body_json(json!({"error": {"message": "Invalid code", "code": 403}})),
            )
            .mount(&server)
            .await;
        let http = crate::provider::http::client();
        let t = exchange(&http, &server.uri(), "c1", "v").await.unwrap();
        assert_eq!(t.access, "sk-or-v1-k");
        assert_eq!(t.refresh, "");
        assert_eq!(t.expires, NEVER_EXPIRES);
        assert!(!t.expires_soon(super::super::now_ms()));
        let err = exchange(&http, &server.uri(), "c2", "v").await.unwrap_err();
        assert_eq!(
            err,
            "OpenRouter OAuth key exchange failed (HTTP 403): Invalid code"
        );
    }
}
