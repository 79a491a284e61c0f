//! Signing in: pi 1.6's authorization-code flow with PKCE. The browser is sent to the
//! provider's authorization page and back to a loopback server pi listens on; on a machine
//! whose browser cannot reach that server (over SSH), the user pastes the redirect URL or the
//! code instead, and whichever comes first wins. The code is exchanged for tokens, which are
//! stored as 1.6 stores them.

use std::io::Read as _;

use base64::Engine as _;
use sha2::Digest as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use super::flow::{Interaction, Prompt};
use super::{Client, OAuthError, StateKind};

/// A PKCE verifier and its S256 challenge.
#[derive(Debug, Clone)]
pub struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn random<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// The `state` a sign-in sends with its authorization request and expects back, as `client`
/// makes it.
pub fn new_state(client: &Client, pkce: &Pkce) -> std::io::Result<String> {
    Ok(match client.state {
        StateKind::Verifier => pkce.verifier.clone(),
        StateKind::Random => random::<16>()?.iter().map(|b| format!("{b:02x}")).collect(),
    })
}

impl Pkce {
    /// 32 random bytes as the verifier (base64url), as 1.6 makes it.
    pub fn new() -> std::io::Result<Pkce> {
        let verifier = b64url(&random::<32>()?);
        let challenge = b64url(&sha2::Sha256::digest(verifier.as_bytes()));
        Ok(Pkce {
            verifier,
            challenge,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("cannot make a PKCE verifier: {0}")]
    Random(#[source] std::io::Error),
    #[error("OAuth state mismatch: the code belongs to another sign-in")]
    StateMismatch,
    #[error("missing authorization code")]
    NoCode,
    #[error("{name} authorization failed: {detail}")]
    Denied { name: &'static str, detail: String },
    #[error("the authorization URL {url} is not a URL: {detail}")]
    BadUrl { url: String, detail: String },
    #[error("Login cancelled.")]
    Cancelled,
    #[error(transparent)]
    Token(#[from] OAuthError),
    #[error(transparent)]
    Device(#[from] super::device::DeviceError),
    /// The provider answered in a way the sign-in cannot go on from (1.6's message).
    #[error("{0}")]
    Provider(String),
}

/// The loopback server the browser comes back to.
pub struct Callback {
    listener: TcpListener,
    pub redirect_uri: String,
    path: String,
}

/// What the loopback server answers one request to its path with, and whether that ends the
/// wait (`done`).
pub struct CallbackPage<T> {
    pub status: u16,
    pub page: String,
    pub done: Option<T>,
}

impl<T> CallbackPage<T> {
    /// An error page; the server goes on waiting.
    pub fn refuse(page: impl Into<String>) -> CallbackPage<T> {
        CallbackPage {
            status: 400,
            page: page.into(),
            done: None,
        }
    }
}

/// Where callback servers listen: `PI_OAUTH_CALLBACK_HOST`, else 127.0.0.1 (1.6's default).
pub fn callback_host() -> String {
    std::env::var("PI_OAUTH_CALLBACK_HOST")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "127.0.0.1".into())
}

impl Callback {
    /// Listens on `port` of `host` (0: any free one) for requests to `path`.
    pub async fn listen(host: &str, port: u16, path: String) -> std::io::Result<Callback> {
        let listener = TcpListener::bind((host, port)).await?;
        let port = listener.local_addr()?.port();
        Ok(Callback {
            listener,
            redirect_uri: format!("http://localhost:{port}{path}"),
            path,
        })
    }

    /// Listens on `client`'s port (on [`callback_host`]), or, where the client allows it, on
    /// any free port when that one is taken; `None` when neither works (then only pasting
    /// does).
    pub async fn bind(client: &'static Client) -> Option<Callback> {
        let host = callback_host();
        let path = client.callback_path.to_string();
        match Callback::listen(&host, client.callback_port, path.clone()).await {
            Ok(c) => Some(c),
            Err(_) if client.callback_fallback => Callback::listen(&host, 0, path).await.ok(),
            Err(_) => None,
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.listener.local_addr().map_or(0, |a| a.port())
    }

    /// The code of the first request to the callback path with the right `state` (any, when
    /// the client sends none); other requests are answered with an error page and waited past.
    pub async fn code(
        &self,
        name: &'static str,
        state: Option<&str>,
    ) -> Result<String, LoginError> {
        self.serve(|url| {
            let query = |k: &str| {
                url.query_pairs()
                    .find(|(key, _)| key == k)
                    .map(|(_, v)| v.into_owned())
            };
            if state.is_some_and(|s| query("state").as_deref() != Some(s)) {
                return CallbackPage::refuse("State mismatch.");
            }
            match (query("error"), query("code")) {
                (Some(e), _) => {
                    let detail = query("error_description").unwrap_or(e);
                    CallbackPage {
                        status: 400,
                        page: format!("{name} authorization failed."),
                        done: Some(Err(LoginError::Denied { name, detail })),
                    }
                }
                (None, Some(code)) => CallbackPage {
                    status: 200,
                    page: format!("Signed in to {name}. You may now close this page."),
                    done: Some(Ok(code)),
                },
                _ => CallbackPage::refuse("Missing authorization code."),
            }
        })
        .await
    }

    /// Answers each request to the callback path as `judge` says until it says one ends the
    /// wait; requests elsewhere get a 404.
    pub async fn serve<T>(&self, mut judge: impl FnMut(&reqwest::Url) -> CallbackPage<T>) -> T {
        loop {
            let Ok((mut conn, _)) = self.listener.accept().await else {
                continue;
            };
            let mut buf = vec![0u8; 8192];
            let n = conn.read(&mut buf).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]);
            let target = head
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("GET "))
                .and_then(|l| l.split(' ').next())
                .unwrap_or_default();
            let url = reqwest::Url::parse(&format!("http://localhost{target}")).ok();
            let reply = match url.as_ref() {
                Some(u) if u.path() == self.path => judge(u),
                _ => CallbackPage {
                    status: 404,
                    page: "Callback route not found.".into(),
                    done: None,
                },
            };
            let html = format!(
                "<!doctype html><meta charset=\"utf-8\"><title>pi</title><p>{}</p>",
                reply.page
            );
            let response = format!(
                "HTTP/1.1 {} {}\r\ncontent-type: text/html; charset=utf-8\r\n\
                 cache-control: no-store\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{html}",
                reply.status,
                if reply.status == 200 { "OK" } else { "Error" },
                html.len()
            );
            let _ = conn.write_all(response.as_bytes()).await;
            let _ = conn.shutdown().await;
            if let Some(done) = reply.done {
                return done;
            }
        }
    }
}

/// The authorization page's URL for `client`, sending the browser back to `redirect_uri` with
/// `state`.
pub fn authorize_url(
    client: &'static Client,
    pkce: &Pkce,
    state: &str,
    redirect_uri: &str,
) -> Result<String, LoginError> {
    let base = client.authorize_url();
    let mut url = reqwest::Url::parse(&base).map_err(|e| LoginError::BadUrl {
        url: base.clone(),
        detail: e.to_string(),
    })?;
    let mut query = url.query_pairs_mut();
    query
        .append_pair("client_id", client.client_id)
        .append_pair("response_type", "code")
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("scope", client.scopes)
        .append_pair("code_challenge", &pkce.challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", state);
    for (key, value) in client.authorize_params {
        query.append_pair(key, value);
    }
    drop(query);
    Ok(url.to_string())
}

/// `(code, state)` from what a user pasted: the redirect URL, `code#state`, a query string,
/// or the bare code (as 1.6 reads it).
pub fn parse_pasted(input: &str) -> (Option<String>, Option<String>) {
    let value = input.trim();
    if value.is_empty() {
        return (None, None);
    }
    if let Ok(url) = reqwest::Url::parse(value) {
        let get = |k: &str| {
            url.query_pairs()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.into_owned())
        };
        return (get("code"), get("state"));
    }
    if let Some((code, state)) = value.split_once('#') {
        return (Some(code.to_string()), Some(state.to_string()));
    }
    if value.contains("code=") {
        let pairs: Vec<(String, String)> = reqwest::Url::parse(&format!("http://x/?{value}"))
            .map(|u| u.query_pairs().into_owned().collect())
            .unwrap_or_default();
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        return (get("code"), get("state"));
    }
    (Some(value.to_string()), None)
}

/// How a browser login came back.
#[derive(Debug)]
pub enum Answer {
    /// The code the loopback server received.
    Callback(String),
    /// What the user pasted instead.
    Pasted(String),
}

/// Waits for the browser's return to `callback` or for the user to paste (`prompt`),
/// whichever comes first; the other is dropped (1.6's `waitForCallbackOrManualInput`).
pub async fn callback_or_pasted(
    ui: &dyn Interaction,
    callback: Option<&Callback>,
    name: &'static str,
    state: Option<&str>,
    prompt: Prompt,
) -> Result<Answer, LoginError> {
    let pasted = async {
        ui.prompt(prompt)
            .await
            .filter(|l| !l.trim().is_empty())
            .map(Answer::Pasted)
            .ok_or(LoginError::Cancelled)
    };
    match callback {
        Some(cb) => tokio::select! {
            code = cb.code(name, state) => code.map(Answer::Callback),
            line = pasted => line,
        },
        None => pasted.await,
    }
}

/// The code and state from a pasted line; the state, when given, must be this sign-in's
/// (`expected`), which stands in for it when not given.
pub fn pasted_code(line: &str, expected: &str) -> Result<(String, String), LoginError> {
    let (code, state) = parse_pasted(line);
    if state.as_ref().is_some_and(|s| s != expected) {
        return Err(LoginError::StateMismatch);
    }
    let code = code.ok_or(LoginError::NoCode)?;
    Ok((code, state.unwrap_or_else(|| expected.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_input_in_every_form_1_6_reads() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            parse_pasted("http://localhost:53692/callback?code=abc&state=xyz"),
            (s("abc"), s("xyz"))
        );
        assert_eq!(parse_pasted("abc#xyz"), (s("abc"), s("xyz")));
        assert_eq!(parse_pasted("code=abc&state=xyz"), (s("abc"), s("xyz")));
        assert_eq!(parse_pasted(" abc \n"), (s("abc"), None));
        assert_eq!(parse_pasted("  "), (None, None));
    }

    #[test]
    fn the_challenge_is_the_verifiers_s256() {
        let p = Pkce::new().unwrap();
        assert_eq!(p.verifier.len(), 43);
        assert_eq!(
            p.challenge,
            b64url(&sha2::Sha256::digest(p.verifier.as_bytes()))
        );
        assert_ne!(Pkce::new().unwrap().verifier, p.verifier);
    }
}
