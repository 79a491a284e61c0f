//! OpenAI (ChatGPT subscription), as pi 1.6 signs in to it (provider `openai`, "Sign in with
//! ChatGPT"): a public client registered anew at every login — the authorization request
//! names this installation (`urn:uuid:` of settings.json's `deviceId`) and the callback
//! brings back the client id OpenAI issued, which the code exchange and every refresh must
//! use. The browser comes back to `127.0.0.1:1455` (the redirect OpenAI registered; another
//! login holding the port is an error, not a fallback) or the user pastes where it ended up.
//! The token, granted `chatgpt.tokens.use.direct`, goes to `api.openai.com` as the key.
//!
//! `PI_OAUTH_OPENAI_{AUTHORIZE,TOKEN}_URL` point the endpoints elsewhere.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::flow::{AuthEvent, Interaction, OAuthFlow, Prompt};
use super::login::{self, Callback, CallbackPage, LoginError, Pkce};
use super::post;
use super::{now_ms, OAuthError, Tokens};

const PROVIDER: &str = "openai";
/// The client every login registers anew; the callback names the one issued.
const DYNAMIC_CLIENT_ID: &str = "dynamic_agent_client";
const AGENT_NAME_HINT: &str = "Pi";
const AUTHORIZE_URL: &str = "https://auth.openai.com/api/accounts/authorize";
const TOKEN_URL: &str = "https://auth.openai.com/api/accounts/oauth/token";
const RESOURCE: &str = "https://api.openai.com/v1";
const CALLBACK_PORT: u16 = 1455;
const CALLBACK_PATH: &str = "/auth/callback";
const REDIRECT_URI: &str = "http://127.0.0.1:1455/auth/callback";
const DIRECT_TOKEN_SCOPE: &str = "chatgpt.tokens.use.direct";
const SCOPE: &str = "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct";
/// Taken off a token's life when it is stored, so no request starts with a dying token.
const EXPIRY_MARGIN: Duration = Duration::from_secs(3 * 60);

#[derive(Debug)]
pub struct OpenAiChatGpt;

#[async_trait]
impl OAuthFlow for OpenAiChatGpt {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn name(&self) -> &'static str {
        "OpenAI (ChatGPT subscription)"
    }

    fn login_label(&self) -> Option<&'static str> {
        Some("Sign in with ChatGPT")
    }

    async fn login(&self, ui: &dyn Interaction) -> Result<Tokens, LoginError> {
        let host_id = agent_host_id(ui.device_id().as_deref()).map_err(LoginError::Provider)?;
        let pkce = Pkce::new().map_err(LoginError::Random)?;
        let state = random_value().map_err(LoginError::Random)?;
        let nonce = random_value().map_err(LoginError::Random)?;
        let callback = listen().await?;
        ui.notify(AuthEvent::AuthUrl {
            url: authorize_url(&host_id, &pkce, &state, &nonce)?,
            instructions: Some(
                "Complete sign-in in your browser. If the callback does not complete, paste the \
                 final redirect URL here."
                    .into(),
            ),
        });
        let pasted = async {
            let line = ui
                .prompt(Prompt::ManualCode {
                    message: "Complete login in your browser, or paste the final redirect URL \
                              here:"
                        .into(),
                    placeholder: Some(REDIRECT_URI.into()),
                })
                .await
                .ok_or(LoginError::Cancelled)?;
            from_pasted(&line, &state).map_err(LoginError::Provider)
        };
        let (code, client_id) = tokio::select! {
            answer = callback.serve(|url| judge(url, &state)) => answer,
            answer = pasted => answer,
        }?;
        ui.notify(AuthEvent::Progress {
            message: "Exchanging authorization code for tokens...".into(),
        });
        let fields = [
            ("grant_type", "authorization_code"),
            ("client_id", client_id.as_str()),
            ("code", code.as_str()),
            ("code_verifier", pkce.verifier.as_str()),
            ("redirect_uri", REDIRECT_URI),
            ("resource", RESOURCE),
        ];
        let http = crate::provider::http::client();
        let url = super::endpoint(PROVIDER, "TOKEN_URL", TOKEN_URL);
        let token = request_token(&http, &url, &fields)
            .await
            .map_err(|(message, _)| LoginError::Provider(message))?;
        // pi reads nothing from the ID token; its presence is part of the answer's contract.
        if token["id_token"]
            .as_str()
            .is_none_or(|t| t.trim().is_empty())
        {
            return Err(LoginError::Provider(
                "OpenAI OAuth token response did not contain an ID token".into(),
            ));
        }
        credential(&token, &client_id).map_err(LoginError::Provider)
    }

    async fn refresh(&self, http: &reqwest::Client, tokens: &Tokens) -> Result<Tokens, OAuthError> {
        let url = super::endpoint(PROVIDER, "TOKEN_URL", TOKEN_URL);
        refresh_at(http, &url, tokens).await
    }
}

/// Renews `tokens` at the token endpoint `url`, for the client the login was issued.
async fn refresh_at(
    http: &reqwest::Client,
    url: &str,
    tokens: &Tokens,
) -> Result<Tokens, OAuthError> {
    let said = |message: String, again: bool| OAuthError::Said {
        message,
        again: again.then(|| OpenAiChatGpt.sign_in_again()),
    };
    let Some(client_id) = tokens
        .extra
        .get("clientId")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
    else {
        return Err(said(
            "Stored OpenAI OAuth credential does not contain an issued client ID; reconnect \
             ChatGPT"
                .into(),
            true,
        ));
    };
    let fields = [
        ("grant_type", "refresh_token"),
        ("client_id", client_id),
        ("refresh_token", tokens.refresh.as_str()),
        ("resource", RESOURCE),
    ];
    let token = request_token(http, url, &fields)
        .await
        .map_err(|(m, refused)| said(m, refused))?;
    credential(&token, client_id).map_err(|m| said(m, false))
}

/// 32 random bytes, base64url (the state and the nonce).
fn random_value() -> std::io::Result<String> {
    // A PKCE verifier is exactly that.
    Pkce::new().map(|p| p.verifier)
}

/// The installation as OpenAI knows it: `urn:uuid:` and the device id, lower-cased.
fn agent_host_id(device_id: Option<&str>) -> Result<String, String> {
    match device_id.and_then(|d| uuid::Uuid::try_parse(d).ok().map(|_| d)) {
        Some(id) if id.len() == 36 => Ok(format!("urn:uuid:{}", id.to_ascii_lowercase())),
        _ => Err("Sign in with ChatGPT requires a device ID (UUID) for this installation".into()),
    }
}

async fn listen() -> Result<Callback, LoginError> {
    let host = login::callback_host();
    Callback::listen(&host, CALLBACK_PORT, CALLBACK_PATH.into())
        .await
        .map_err(|e| {
            // Another login (or the Codex CLI) would get the browser's callback and refuse it.
            LoginError::Provider(if e.kind() == std::io::ErrorKind::AddrInUse {
                "Port 1455 is in use, probably by an unfinished login in another pi session or \
                 by the Codex CLI. Cancel that login and try again."
                    .into()
            } else {
                e.to_string()
            })
        })
}

fn authorize_url(
    host_id: &str,
    pkce: &Pkce,
    state: &str,
    nonce: &str,
) -> Result<String, LoginError> {
    let base = super::endpoint(PROVIDER, "AUTHORIZE_URL", AUTHORIZE_URL);
    let mut url = reqwest::Url::parse(&base).map_err(|e| LoginError::BadUrl {
        url: base.clone(),
        detail: e.to_string(),
    })?;
    url.set_query(None);
    url.query_pairs_mut()
        .append_pair("client_id", DYNAMIC_CLIENT_ID)
        .append_pair("agent_name_hint", AGENT_NAME_HINT)
        .append_pair("ext_agent_host_id", host_id)
        .append_pair("response_type", "code")
        .append_pair("redirect_uri", REDIRECT_URI)
        .append_pair("resource", RESOURCE)
        .append_pair("scope", SCOPE)
        .append_pair("state", state)
        .append_pair("code_challenge", &pkce.challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("nonce", nonce);
    Ok(url.to_string())
}

/// The code and the issued client id a callback URL carries, checked as 1.6 checks them.
fn from_callback(url: &reqwest::Url, state: &str) -> Result<(String, String), String> {
    let get = |k: &str| {
        url.query_pairs()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.into_owned())
            .filter(|v| !v.is_empty())
    };
    let code = get("code").ok_or("Missing authorization code")?;
    let given = get("state").ok_or("Missing OAuth state")?;
    if given != state {
        return Err("OAuth state mismatch".into());
    }
    let client_id = get("client_id")
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .ok_or("OpenAI OAuth registration callback did not contain an issued client ID")?;
    Ok((code, client_id))
}

/// What the browser's return to the loopback server gets, and whether it ends the wait.
fn judge(url: &reqwest::Url, state: &str) -> CallbackPage<Result<(String, String), LoginError>> {
    if let Some((_, error)) = url.query_pairs().find(|(k, _)| k == "error") {
        return CallbackPage {
            status: 400,
            page: "ChatGPT was not connected.".into(),
            done: Some(Err(LoginError::Provider(format!(
                "ChatGPT authorization failed: {error}"
            )))),
        };
    }
    match from_callback(url, state) {
        Ok(result) => CallbackPage {
            status: 200,
            page: "ChatGPT authentication completed. You can close this window.".into(),
            done: Some(Ok(result)),
        },
        Err(message) => CallbackPage::refuse(message),
    }
}

/// The pasted redirect URL, which must be the registered one, read as the callback is.
fn from_pasted(input: &str, state: &str) -> Result<(String, String), String> {
    let url = reqwest::Url::parse(input.trim())
        .map_err(|_| "Paste the full callback URL from the browser".to_string())?;
    let expected = reqwest::Url::parse(REDIRECT_URI).map_err(|e| e.to_string())?;
    if url.origin() != expected.origin() || url.path() != expected.path() {
        return Err(format!(
            "The pasted callback URL must start with {REDIRECT_URI}"
        ));
    }
    if let Some((_, error)) = url.query_pairs().find(|(k, _)| k == "error") {
        return Err(format!("ChatGPT authorization failed: {error}"));
    }
    from_callback(&url, state)
}

/// A token request; the answer's object, or 1.6's message and whether the server refused
/// the grant (the login is over then).
async fn request_token(
    http: &reqwest::Client,
    url: &str,
    fields: &[(&str, &str)],
) -> Result<Value, (String, bool)> {
    let reply = post::send(post::form(http, url, fields))
        .await
        .map_err(|e| (e.to_string(), false))?;
    if !reply.ok() {
        let body = if reply.text.is_empty() {
            reqwest::StatusCode::from_u16(reply.status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or_default()
                .to_string()
        } else {
            reply.text.clone()
        };
        return Err((
            format!(
                "OpenAI OAuth token request failed ({}): {body}",
                reply.status
            ),
            matches!(reply.status, 400 | 401 | 403),
        ));
    }
    reply.json.filter(Value::is_object).ok_or_else(|| {
        (
            "OpenAI OAuth token response must be an object".into(),
            false,
        )
    })
}

/// The entry 1.6 stores from a token answer: the tokens, the issued client and the scopes.
fn credential(token: &Value, client_id: &str) -> Result<Tokens, String> {
    let string = |field: &str| {
        token[field]
            .as_str()
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| format!("OpenAI OAuth token response has invalid {field}"))
    };
    let access = string("access_token")?;
    let refresh = string("refresh_token")?;
    let scope = string("scope")?;
    let expires_in = token["expires_in"]
        .as_f64()
        .filter(|n| n.is_finite() && *n > 0.0)
        .ok_or("OpenAI OAuth token response has invalid expires_in")?;
    let scopes: Vec<&str> = scope.split_whitespace().collect();
    if !scopes.contains(&DIRECT_TOKEN_SCOPE) {
        return Err(format!(
            "OpenAI OAuth grant did not include {DIRECT_TOKEN_SCOPE}"
        ));
    }
    let mut extra = serde_json::Map::new();
    extra.insert("clientId".into(), json!(client_id));
    extra.insert("scopes".into(), json!(scopes));
    Ok(Tokens {
        access: access.to_string(),
        refresh: refresh.to_string(),
        expires: now_ms() + (expires_in * 1000.0) as i64 - EXPIRY_MARGIN.as_millis() as i64,
        extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_installation_must_have_a_uuid() {
        assert_eq!(
            agent_host_id(Some("6F9619FF-8B86-D011-B42D-00C04FC964FF")).unwrap(),
            "urn:uuid:6f9619ff-8b86-d011-b42d-00c04fc964ff"
        );
        let refused = "Sign in with ChatGPT requires a device ID (UUID) for this installation";
        assert_eq!(agent_host_id(None).unwrap_err(), refused);
        assert_eq!(agent_host_id(Some("not-a-uuid")).unwrap_err(), refused);
        assert_eq!(
            agent_host_id(Some("6f9619ff8b86d011b42d00c04fc964ff")).unwrap_err(),
            refused,
            "1.6 wants the dashed form"
        );
    }

    #[test]
    fn a_callback_needs_its_code_state_and_issued_client() {
        let url = |q: &str| reqwest::Url::parse(&format!("{REDIRECT_URI}?{q}")).unwrap();
        assert_eq!(
            from_callback(&url("code=c&state=s&client_id=%20app_1%20"), "s").unwrap(),
            ("c".into(), "app_1".into())
        );
        assert_eq!(
            from_callback(&url("state=s"), "s").unwrap_err(),
            "Missing authorization code"
        );
        assert_eq!(
            from_callback(&url("code=c"), "s").unwrap_err(),
            "Missing OAuth state"
        );
        assert_eq!(
            from_callback(&url("code=c&state=x"), "s").unwrap_err(),
            "OAuth state mismatch"
        );
        assert_eq!(
            from_callback(&url("code=c&state=s"), "s").unwrap_err(),
            "OpenAI OAuth registration callback did not contain an issued client ID"
        );
        assert_eq!(
            from_pasted(
                "http://localhost:1455/auth/callback?code=c&state=s&client_id=a",
                "s"
            )
            .unwrap_err(),
            "The pasted callback URL must start with http://127.0.0.1:1455/auth/callback"
        );
        assert_eq!(
            from_pasted("c#s", "s").unwrap_err(),
            "Paste the full callback URL from the browser"
        );
        assert_eq!(
            from_pasted(&format!("{REDIRECT_URI}?error=access_denied"), "s").unwrap_err(),
            "ChatGPT authorization failed: access_denied"
        );
    }

    #[test]
    fn the_entry_keeps_the_client_and_scopes_and_needs_the_direct_scope() {
        let token = json!({"access_token": "at", "refresh_token": "rt", "expires_in": 3600,
            "scope": "openid  chatgpt.tokens.use.direct resource.invoke"});
        let t = credential(&token, "app_1").unwrap();
        assert_eq!(t.extra["clientId"], "app_1");
        assert_eq!(
            t.extra["scopes"],
            json!(["openid", "chatgpt.tokens.use.direct", "resource.invoke"])
        );
        let expected = now_ms() + 3_600_000 - 180_000;
        assert!((expected - 5_000..=expected).contains(&t.expires));
        let mut narrow = token.clone();
        narrow["scope"] = json!("openid");
        assert_eq!(
            credential(&narrow, "app_1").unwrap_err(),
            "OpenAI OAuth grant did not include chatgpt.tokens.use.direct"
        );
        let mut bad = token;
        bad["expires_in"] = json!("3600");
        assert_eq!(
            credential(&bad, "app_1").unwrap_err(),
            "OpenAI OAuth token response has invalid expires_in"
        );
    }

    #[tokio::test]
    async fn a_refresh_goes_to_the_issued_client_and_a_refusal_says_to_sign_in_again() {
        use wiremock::matchers::{body_string, method};
        use wiremock::{Mock, MockServer, ResponseTemplate};
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(body_string(
                "grant_type=refresh_token&client_id=app_1&refresh_token=r0&resource=\
                 https%3A%2F%2Fapi.openai.com%2Fv1",
            ))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!({"access_token": "a1",
                "refresh_token": "r1", "expires_in": 600, "scope": DIRECT_TOKEN_SCOPE})),
            )
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(400).set_body_string(r#"{"error":"invalid_grant"}"#),
            )
            .mount(&server)
            .await;
        let http = crate::provider::http::client();
        let mut tokens = Tokens {
            access: "a0".into(),
            refresh: "r0".into(),
            expires: 0,
            extra: serde_json::Map::new(),
        };
        let err = refresh_at(&http, &server.uri(), &tokens).await.unwrap_err();
        assert!(
            err.to_string().starts_with(
                "Stored OpenAI OAuth credential does not contain an issued client ID; reconnect \
                 ChatGPT; sign in again with `pi auth login openai`"
            ),
            "{err}"
        );
        tokens.extra.insert("clientId".into(), json!("app_1"));
        let renewed = refresh_at(&http, &server.uri(), &tokens).await.unwrap();
        assert_eq!(renewed.access, "a1");
        assert_eq!(renewed.extra["scopes"], json!([DIRECT_TOKEN_SCOPE]));
        tokens.refresh = "gone".into();
        let err = refresh_at(&http, &server.uri(), &tokens).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"OpenAI OAuth token request failed (400): {"error":"invalid_grant"}; sign in again with `pi auth login openai`"#
        );
    }
}
