//! Logins a hook brings with `provider.register`'s `oauth` block: an authorization-code
//! sign-in with PKCE (loopback callback or the redirect pasted, like every login pi has) to
//! the hook's own authorization server, whose tokens stay with pi — stored in `auth.json`
//! under the hook's provider, sent only to that provider's server, never to the hook.
//!
//! Two rules keep one login from serving another's server. A block is accepted only for a
//! provider the hook defines under a new name (`config::hook_providers` checks it), so a hook
//! cannot sign in under the name of the user's Anthropic or ChatGPT login and overwrite it.
//! And the tokens remember the token endpoint that issued them (`tokenUrl` in their entry):
//! a later block naming another endpoint, from this hook or another taking the name, is not
//! given them, so a refresh token never travels to a server that did not issue it.
//!
//! pi's clients are `'static` data; a hook's are made at run time, so each distinct block is
//! made once and kept for the process's life ([`intern`]): a hook re-registering the same
//! block (every `/reload`) gets the same client back, and no block is ever freed while a
//! token source might still hold it.

use std::sync::Mutex;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::flow::{AuthEvent, Interaction, OAuthFlow, Prompt};
use super::login::{self, Callback, LoginError, Pkce};
use super::{request_tokens, Client, GrantEncoding, OAuthError, StateKind, Tokens};

/// Where a hook's tokens record the endpoint that issued them.
const ISSUER_KEY: &str = "tokenUrl";

/// What is wrong with an `oauth` block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookOAuthError {
    #[error("`oauth` must be an object with authorizeUrl, tokenUrl and clientId")]
    NotAnObject,
    #[error("`oauth.{0}` is missing or not a non-empty string")]
    Missing(&'static str),
    #[error("`oauth.{field}`: {detail}")]
    Invalid { field: &'static str, detail: String },
    #[error("`oauth` has a field pi does not know: {0}")]
    Unknown(String),
}

/// One `oauth` block, checked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Spec {
    provider: String,
    hook: String,
    name: String,
    authorize_url: String,
    token_url: String,
    client_id: String,
    scopes: String,
    callback_port: Option<u16>,
    callback_path: String,
}

const FIELDS: &[&str] = &[
    "name",
    "authorizeUrl",
    "tokenUrl",
    "clientId",
    "scopes",
    "callbackPort",
    "callbackPath",
];

impl Spec {
    fn parse(provider: &str, hook: &str, block: &Value) -> Result<Spec, HookOAuthError> {
        let map = block.as_object().ok_or(HookOAuthError::NotAnObject)?;
        if let Some(k) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(HookOAuthError::Unknown(k.clone()));
        }
        let text = |field: &'static str| {
            map.get(field)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let required = |field: &'static str| text(field).ok_or(HookOAuthError::Missing(field));
        let scopes = match map.get("scopes") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.trim().to_string(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or(HookOAuthError::Invalid {
                    field: "scopes",
                    detail: "a list of scopes must hold strings only".into(),
                })?
                .join(" "),
            Some(_) => {
                return Err(HookOAuthError::Invalid {
                    field: "scopes",
                    detail: "must be a string or a list of strings".into(),
                })
            }
        };
        let callback_port = match map.get("callbackPort") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .and_then(|p| u16::try_from(p).ok())
                    .filter(|p| *p > 0)
                    .ok_or(HookOAuthError::Invalid {
                        field: "callbackPort",
                        detail: "must be a port number (1–65535)".into(),
                    })?,
            ),
        };
        let callback_path = text("callbackPath").unwrap_or_else(|| "/callback".into());
        if !callback_path.starts_with('/') {
            return Err(HookOAuthError::Invalid {
                field: "callbackPath",
                detail: "must start with /".into(),
            });
        }
        let spec = Spec {
            provider: provider.to_string(),
            hook: hook.to_string(),
            name: text("name").unwrap_or_else(|| provider.to_string()),
            authorize_url: required("authorizeUrl")?,
            token_url: required("tokenUrl")?,
            client_id: required("clientId")?,
            scopes,
            callback_port,
            callback_path,
        };
        check_endpoint("authorizeUrl", &spec.authorize_url)?;
        check_endpoint("tokenUrl", &spec.token_url)?;
        Ok(spec)
    }
}

/// An endpoint tokens may go to: https, or http to this machine (a local gateway, a test).
fn check_endpoint(field: &'static str, url: &str) -> Result<(), HookOAuthError> {
    let invalid = |detail: String| HookOAuthError::Invalid { field, detail };
    let parsed = reqwest::Url::parse(url).map_err(|e| invalid(format!("{url}: {e}")))?;
    let local = matches!(
        parsed.host_str(),
        Some("localhost" | "127.0.0.1" | "[::1]" | "::1")
    );
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if local => Ok(()),
        _ => Err(invalid(format!(
            "{url}: must be https (http only to localhost)"
        ))),
    }
}

/// A hook's login: its client, made once per distinct block.
#[derive(Debug)]
pub struct HookOAuth {
    client: &'static Client,
    /// The name /login shows: the block's, with the hook it comes from, so a hook cannot pass
    /// its login off as one of pi's.
    label: &'static str,
    spec: Spec,
}

/// Interned logins are the same login exactly when they are the same object.
impl PartialEq for HookOAuth {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

static INTERNED: Mutex<Vec<&'static HookOAuth>> = Mutex::new(Vec::new());

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// The login `block` describes for `provider` of hook `hook`; the same object for the same
/// block.
pub fn intern(
    provider: &str,
    hook: &str,
    block: &Value,
) -> Result<&'static HookOAuth, HookOAuthError> {
    let spec = Spec::parse(provider, hook, block)?;
    let mut interned = INTERNED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = interned.iter().find(|f| f.spec == spec) {
        return Ok(found);
    }
    let client: &'static Client = Box::leak(Box::new(Client {
        provider: leak(&spec.provider),
        name: leak(&spec.name),
        client_id: leak(&spec.client_id),
        authorize_url: leak(&spec.authorize_url),
        token_url: leak(&spec.token_url),
        scopes: leak(&spec.scopes),
        callback_port: spec.callback_port.unwrap_or(0),
        callback_path: leak(&spec.callback_path),
        // A port the block names is the redirect its server registered; none named, any.
        callback_fallback: spec.callback_port.is_none(),
        authorize_params: &[],
        state: StateKind::Random,
        grant: GrantEncoding::Form,
        expiry_margin: std::time::Duration::ZERO,
    }));
    let label = leak(&format!("{} (from hook {})", spec.name, spec.hook));
    let flow: &'static HookOAuth = Box::leak(Box::new(HookOAuth {
        client,
        label,
        spec,
    }));
    interned.push(flow);
    Ok(flow)
}

impl HookOAuth {
    /// Whether `tokens` were issued by this login's token endpoint.
    pub fn issued(&self, tokens: &Tokens) -> bool {
        tokens.extra.get(ISSUER_KEY).and_then(Value::as_str) == Some(self.spec.token_url.as_str())
    }

    /// The hook the login comes from.
    pub fn hook(&self) -> &str {
        &self.spec.hook
    }

    fn redirect_uri(&self, callback: Option<&Callback>) -> String {
        callback.map_or_else(
            || {
                format!(
                    "http://localhost:{}{}",
                    self.client.callback_port, self.client.callback_path
                )
            },
            |c| c.redirect_uri.clone(),
        )
    }

    fn mark(&self, mut tokens: Tokens) -> Tokens {
        tokens
            .extra
            .insert(ISSUER_KEY.into(), json!(self.spec.token_url));
        tokens
    }
}

#[async_trait]
impl OAuthFlow for HookOAuth {
    fn provider(&self) -> &'static str {
        self.client.provider
    }

    fn name(&self) -> &'static str {
        self.label
    }

    async fn login(&self, ui: &dyn Interaction) -> Result<Tokens, LoginError> {
        let client = self.client;
        let pkce = Pkce::new().map_err(LoginError::Random)?;
        let state = login::new_state(client, &pkce).map_err(LoginError::Random)?;
        let callback = Callback::bind(client).await;
        let redirect_uri = self.redirect_uri(callback.as_ref());
        ui.notify(AuthEvent::AuthUrl {
            url: login::authorize_url(client, &pkce, &state, &redirect_uri)?,
            instructions: Some(
                "Complete login in your browser. If the browser is on another machine, paste \
                 the final redirect URL here."
                    .into(),
            ),
        });
        let answer = login::callback_or_pasted(
            ui,
            callback.as_ref(),
            client.name,
            Some(&state),
            Prompt::ManualCode {
                message: "Complete login in your browser, or paste the authorization code / \
                          redirect URL here:"
                    .into(),
                placeholder: Some(redirect_uri.clone()),
            },
        )
        .await?;
        let code = match answer {
            login::Answer::Callback(code) => code,
            login::Answer::Pasted(line) => login::pasted_code(&line, &state)?.0,
        };
        ui.notify(AuthEvent::Progress {
            message: "Exchanging authorization code for tokens...".into(),
        });
        let grant = json!({
            "grant_type": "authorization_code",
            "client_id": client.client_id,
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": pkce.verifier,
        });
        let tokens = request_tokens(&crate::provider::http::client(), client, grant).await?;
        Ok(self.mark(tokens))
    }

    async fn refresh(&self, http: &reqwest::Client, tokens: &Tokens) -> Result<Tokens, OAuthError> {
        let grant = json!({
            "grant_type": "refresh_token",
            "client_id": self.client.client_id,
            "refresh_token": tokens.refresh,
        });
        Ok(self.mark(request_tokens(http, self.client, grant).await?))
    }

    fn sign_in_again(&self) -> String {
        format!("sign in again with /login {}", self.client.provider)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block() -> Value {
        json!({"name": "Acme", "authorizeUrl": "https://auth.acme.test/authorize",
               "tokenUrl": "https://auth.acme.test/token", "clientId": "pi",
               "scopes": ["openid", "offline_access"]})
    }

    #[test]
    fn the_same_block_is_the_same_login_and_another_is_another() {
        let a = intern("acme", "h", &block()).unwrap();
        assert!(std::ptr::eq(a, intern("acme", "h", &block()).unwrap()));
        let mut other = block();
        other["tokenUrl"] = json!("https://elsewhere.test/token");
        let b = intern("acme", "h", &other).unwrap();
        assert!(!std::ptr::eq(a, b));
        assert_eq!(a.client.scopes, "openid offline_access");
        assert_eq!(a.name(), "Acme (from hook h)");
        assert_eq!(a.client.callback_port, 0);
    }

    #[test]
    fn tokens_serve_only_the_endpoint_that_issued_them() {
        let a = intern("acme2", "h", &block()).unwrap();
        let mut other = block();
        other["tokenUrl"] = json!("https://evil.test/token");
        let b = intern("acme2", "h", &other).unwrap();
        let tokens = a.mark(Tokens {
            access: "a".into(),
            refresh: "r".into(),
            expires: 0,
            extra: Default::default(),
        });
        assert!(a.issued(&tokens));
        assert!(!b.issued(&tokens));
        let mut foreign = tokens.clone();
        foreign.extra.clear();
        assert!(!a.issued(&foreign), "a login stored without an issuer");
    }

    #[test]
    fn bad_blocks_say_what_is_wrong() {
        let with = |k: &str, v: Value| {
            let mut b = block();
            b[k] = v;
            intern("acme3", "h", &b).unwrap_err().to_string()
        };
        assert!(with("tokenUrl", json!("http://auth.acme.test/token")).contains("must be https"));
        assert!(with("authorizeUrl", json!("not a url")).contains("authorizeUrl"));
        assert!(with("clientId", json!("")).contains("clientId"));
        assert!(with("callbackPort", json!(70000)).contains("callbackPort"));
        assert!(with("callbackPath", json!("cb")).contains("start with /"));
        assert!(with("scopes", json!(3)).contains("scopes"));
        assert!(with("clientSecret", json!("s")).contains("clientSecret"));
        assert_eq!(
            intern("acme3", "h", &json!("x")).unwrap_err(),
            HookOAuthError::NotAnObject
        );
        let mut local = block();
        local["tokenUrl"] = json!("http://127.0.0.1:9/token");
        assert!(intern("acme3", "h", &local).is_ok());
    }
}
