//! The subscription logins beyond Claude's and Codex's, each against a mock of its provider's
//! OAuth endpoints (`PI_OAUTH_<PROVIDER>_*_URL`, or the provider's own override where 1.6 has
//! one): `pi auth login <provider>` signing in as 1.6 does (device codes polled, callbacks
//! and pasted redirects), the `auth.json` entry exactly as 1.6 writes it, the stored login
//! sent as the request's key and renewed when it expires, a refused renewal telling the user
//! to sign in again, and TypeScript pi 1.6 reading what pi wrote.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::common::ts_pi::TsPi;
use crate::common::{write_json, MockModel, TestAgent, Turn};

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// One request an OAuth mock received.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) content_type: String,
    pub(crate) authorization: String,
    /// A form's fields as a JSON object of strings (in their order), else the JSON body.
    pub(crate) body: Value,
    pub(crate) at: Instant,
}

/// A provider's OAuth endpoints: each path answers as the test scripts it, by the request and
/// how many came to that path before; every request is recorded.
pub(crate) struct OAuthMock {
    pub(crate) server: MockServer,
    seen: Arc<Mutex<Vec<(String, Seen)>>>,
}

impl OAuthMock {
    pub(crate) async fn start() -> OAuthMock {
        OAuthMock {
            server: MockServer::start().await,
            seen: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Answers POSTs (GETs too) to `at` with `reply(body, n)`, `n` counting from 0.
    pub(crate) async fn on<F>(&self, verb: &str, at: &str, reply: F)
    where
        F: Fn(&Value, usize) -> ResponseTemplate + Send + Sync + 'static,
    {
        let seen = self.seen.clone();
        let name = at.to_string();
        Mock::given(method(verb))
            .and(path(at))
            .respond_with(move |req: &Request| {
                let header = |h: &str| {
                    req.headers
                        .get(h)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_string()
                };
                let content_type = header("content-type");
                let body = if content_type.starts_with("application/x-www-form-urlencoded") {
                    let fields: serde_json::Map<String, Value> = form_urlencoded::parse(&req.body)
                        .map(|(k, v)| (k.into_owned(), json!(v)))
                        .collect();
                    Value::Object(fields)
                } else {
                    serde_json::from_slice(&req.body).unwrap_or(Value::Null)
                };
                let mut all = seen.lock().unwrap();
                let n = all.iter().filter(|(p, _)| *p == name).count();
                all.push((
                    name.clone(),
                    Seen {
                        content_type,
                        authorization: header("authorization"),
                        body: body.clone(),
                        at: Instant::now(),
                    },
                ));
                drop(all);
                reply(&body, n)
            })
            .mount(&self.server)
            .await;
    }

    pub(crate) fn url(&self, at: &str) -> String {
        format!("{}{at}", self.server.uri())
    }

    /// The requests to `at`, in order.
    pub(crate) fn seen(&self, at: &str) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == at)
            .map(|(_, s)| s.clone())
            .collect()
    }
}

pub(crate) fn ok(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

pub(crate) fn status(code: u16, body: Value) -> ResponseTemplate {
    ResponseTemplate::new(code).set_body_json(body)
}

pub(crate) fn auth(agent: &TestAgent) -> Value {
    let text = std::fs::read_to_string(agent.agent_dir.join("auth.json")).expect("auth.json");
    serde_json::from_str(&text).expect("auth.json parses")
}

/// `entry`'s fields, sorted.
pub(crate) fn keys(entry: &Value) -> Vec<String> {
    let mut k: Vec<String> = entry
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    k.sort_unstable();
    k
}

/// `expires` is `lifetime_ms` from now (less a minute's slack for the run itself).
pub(crate) fn assert_expires_in(entry: &Value, lifetime_ms: i64) {
    let expires = entry["expires"].as_i64().expect("expires is a number");
    let expected = now_ms() + lifetime_ms;
    assert!(
        (expected - 60_000..=expected).contains(&expires),
        "{expires} vs {expected} ({entry})"
    );
}

/// An agent whose built-in `provider` talks to `mock`'s `/v1`, with `entry` stored for it.
pub(crate) fn agent_with_entry(mock: &MockModel, provider: &str, entry: Value) -> TestAgent {
    let agent = TestAgent::new();
    agent
        .write_models(&json!({"providers": {provider: {"baseUrl": format!("{}/v1", mock.uri())}}}));
    write_json(
        &agent.agent_dir.join("auth.json"),
        &json!({ provider: entry }),
    );
    agent
}

/// `auth check` by TypeScript pi 1.6 finds `provider`'s login, as pi wrote it, ready.
pub(crate) async fn assert_1_6_reads(agent: &TestAgent, provider: &str) {
    let Some(ts) = TsPi::find_v1_6() else { return };
    let before = auth(agent);
    let check = ts
        .run(agent, &["auth", "check", "--provider", provider, "--json"])
        .await;
    check.assert_ok();
    let v: Value = serde_json::from_str(check.stdout.trim()).expect("json");
    assert_eq!(v["status"], "ready", "{check}");
    assert_eq!(v["authType"], "oauth", "{check}");
    assert_eq!(auth(agent), before, "1.6 left the entry as pi wrote it");
}

/// The bytes of every session file under the agent dir, to look for tokens in.
pub(crate) fn sessions_text(agent: &TestAgent) -> String {
    fn walk(dir: &std::path::Path, out: &mut String) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    let mut out = String::new();
    walk(&agent.agent_dir.join("sessions"), &mut out);
    out
}

// ---- xAI ----

const XAI_CLIENT: &str = "b1a00492-073a-47ea-816f-4c329264a828";
const XAI_MODEL: &str = "xai/grok-4.7";

/// auth.x.ai: a device code whose page carries the code, entered after one pending poll;
/// refresh tokens `xai-refresh-0` renewed without rotation, anything else refused.
async fn xai_mock() -> OAuthMock {
    let mock = OAuthMock::start().await;
    mock.on("POST", "/oauth2/device/code", |_, _| {
        ok(
            json!({"device_code": "xai-device-1", "user_code": "XAI-7QPK",
            "verification_uri": "https://accounts.x.test/device",
            "verification_uri_complete": "https://accounts.x.test/device?user_code=XAI-7QPK",
            "expires_in": 600, "interval": 1}),
        )
    })
    .await;
    mock.on("POST", "/oauth2/token", |body, n| {
        match body["grant_type"].as_str() {
            Some("urn:ietf:params:oauth:grant-type:device_code") if n == 0 => {
                status(400, json!({"error": "authorization_pending"}))
            }
            Some("urn:ietf:params:oauth:grant-type:device_code") => ok(json!({
                "access_token": "xai-access-1", "refresh_token": "xai-refresh-1",
                "expires_in": 21600, "token_type": "Bearer"})),
            Some("refresh_token") if body["refresh_token"] == "xai-refresh-0" => {
                // Not rotated: 1.6 keeps the refresh token it has.
                ok(json!({"access_token": "xai-access-2", "expires_in": 3600}))
            }
            _ => status(
                400,
                json!({"error": "invalid_grant", "error_description": "Refresh token revoked"}),
            ),
        }
    })
    .await;
    mock
}

fn xai_env(agent: &mut TestAgent, mock: &OAuthMock) {
    agent.env(
        "PI_OAUTH_XAI_DEVICE_CODE_URL",
        &mock.url("/oauth2/device/code"),
    );
    agent.env("PI_OAUTH_XAI_TOKEN_URL", &mock.url("/oauth2/token"));
}

#[tokio::test]
async fn xai_signs_in_with_a_device_code_and_stores_1_6s_entry() {
    let mock = xai_mock().await;
    let mut agent = TestAgent::new();
    xai_env(&mut agent, &mock);
    let started = Instant::now();
    let out = agent
        .run_with_stdin(&["auth", "login", "xai", "--no-browser"], Some(""))
        .await;
    out.assert_ok();
    let path = agent.agent_dir.join("auth.json");
    assert_eq!(
        out.stdout,
        format!(
            "Open https://accounts.x.test/device?user_code=XAI-7QPK and enter code: XAI-7QPK\n\
             Waiting for authentication...\n\
             Logged in to xAI. Credentials saved to {}\n",
            path.display()
        )
    );
    let asked = mock.seen("/oauth2/device/code");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].content_type, "application/x-www-form-urlencoded");
    assert_eq!(
        asked[0].body,
        json!({"client_id": XAI_CLIENT,
            "scope": "openid profile email offline_access grok-cli:access api:access",
            "referrer": "pi"})
    );
    let polls = mock.seen("/oauth2/token");
    assert_eq!(polls.len(), 2, "one pending, then the tokens");
    for p in &polls {
        assert_eq!(
            p.body,
            json!({"grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                "client_id": XAI_CLIENT, "device_code": "xai-device-1"})
        );
    }
    // 1.6 waits one interval before the first poll, and one between polls.
    assert!(polls[0].at - asked[0].at >= std::time::Duration::from_millis(950));
    assert!(polls[1].at - polls[0].at >= std::time::Duration::from_millis(950));
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let entry = &auth(&agent)["xai"];
    assert_eq!(keys(entry), ["access", "expires", "refresh", "type"]);
    assert_eq!(entry["type"], "oauth");
    assert_eq!(entry["access"], "xai-access-1");
    assert_eq!(entry["refresh"], "xai-refresh-1");
    // Six hours, less 1.6's five-minute skew.
    assert_expires_in(entry, 21_600_000 - 300_000);
    assert_1_6_reads(&agent, "xai").await;
}

#[tokio::test]
async fn an_expired_xai_login_is_renewed_sent_as_the_key_and_kept_from_the_session() {
    let model = MockModel::start(vec![Turn::text("grok says hi")]).await;
    let mock = xai_mock().await;
    let mut agent = agent_with_entry(
        &model,
        "xai",
        json!({"type": "oauth", "access": "xai-access-0", "refresh": "xai-refresh-0",
            "expires": now_ms() - 1_000}),
    );
    xai_env(&mut agent, &mock);
    agent.env("XAI_API_KEY", "xai-env-key-not-sent");
    let out = agent.run(&["--model", XAI_MODEL, "-p", "hi"]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "grok says hi\n");
    let reqs = model.requests();
    assert_eq!(reqs.len(), 1, "{out}");
    assert_eq!(reqs[0].path, "/v1/responses");
    assert_eq!(reqs[0].headers["authorization"], "Bearer xai-access-2");
    let grants = mock.seen("/oauth2/token");
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].content_type, "application/x-www-form-urlencoded");
    assert_eq!(
        grants[0].body,
        json!({"grant_type": "refresh_token", "client_id": XAI_CLIENT,
            "refresh_token": "xai-refresh-0"})
    );
    let entry = &auth(&agent)["xai"];
    assert_eq!(keys(entry), ["access", "expires", "refresh", "type"]);
    assert_eq!(entry["access"], "xai-access-2");
    assert_eq!(entry["refresh"], "xai-refresh-0", "not rotated, so kept");
    assert_expires_in(entry, 3_600_000 - 300_000);
    let seen = format!("{}{}{}", out.stdout, out.stderr, sessions_text(&agent));
    for token in ["xai-access-0", "xai-access-2", "xai-refresh-0"] {
        assert!(!seen.contains(token), "{token} leaked");
    }
    assert_1_6_reads(&agent, "xai").await;
}

#[tokio::test]
async fn a_refused_xai_renewal_says_to_sign_in_again_in_one_line() {
    let model = MockModel::start(vec![Turn::text("never")]).await;
    let mock = xai_mock().await;
    let mut agent = agent_with_entry(
        &model,
        "xai",
        json!({"type": "oauth", "access": "xai-access-0", "refresh": "xai-refresh-revoked",
            "expires": now_ms() - 1_000}),
    );
    xai_env(&mut agent, &mock);
    let before = std::fs::read(agent.agent_dir.join("auth.json")).unwrap();
    let out = agent.run(&["--model", XAI_MODEL, "-p", "hi"]).await;
    assert_ne!(out.code, Some(0), "{out}");
    let said: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("xAI OAuth token refresh failed"))
        .collect();
    assert_eq!(
        said.len(),
        1,
        "one line says what happened and what to do: {out}"
    );
    assert!(
        said[0].contains(
            "xAI OAuth token refresh failed (HTTP 400): invalid_grant: Refresh token revoked; \
             sign in again with `pi auth login xai`"
        ),
        "{out}"
    );
    assert!(model.requests().is_empty(), "no request without a token");
    assert_eq!(
        std::fs::read(agent.agent_dir.join("auth.json")).unwrap(),
        before
    );
}

// ---- OpenRouter ----

const OPENROUTER_MODEL: &str = "openrouter/moonshotai/kimi-k2.7-code";

/// openrouter.ai's key endpoint: code `or-code` becomes a key, any other is refused.
async fn openrouter_mock() -> OAuthMock {
    let mock = OAuthMock::start().await;
    mock.on("POST", "/api/v1/auth/keys", |body, _| {
        if body["code"] == "or-code" {
            ok(json!({"key": "sk-or-v1-login-key", "user_id": "user-1"}))
        } else {
            status(
                403,
                json!({"error": {"message": "Invalid code", "code": 403}}),
            )
        }
    })
    .await;
    mock
}

fn openrouter_agent(mock: &OAuthMock) -> TestAgent {
    let mut agent = TestAgent::new();
    agent.env(
        "PI_OAUTH_OPENROUTER_TOKEN_URL",
        &mock.url("/api/v1/auth/keys"),
    );
    agent.env(
        "PI_OAUTH_OPENROUTER_AUTHORIZE_URL",
        "https://openrouter.test/auth",
    );
    agent
}

/// The key stored as 1.6 stores it: an access token that never expires, nothing to refresh.
fn assert_openrouter_entry(agent: &TestAgent) {
    assert_eq!(
        auth(agent)["openrouter"],
        json!({"type": "oauth", "access": "sk-or-v1-login-key", "refresh": "",
            "expires": 9_007_199_254_740_991_i64})
    );
}

#[tokio::test]
async fn openrouter_signs_in_through_a_callback_on_a_random_path_for_a_key() {
    use crate::oauth::{browser_get, query, start_provider_login};
    let mock = openrouter_mock().await;
    let agent = openrouter_agent(&mock);
    let mut login = start_provider_login(&agent, "openrouter", &["--no-browser"]).await;
    let redirect = login.url.to_string();
    assert!(
        login
            .before
            .starts_with("Listening for OpenRouter OAuth callback on http://127.0.0.1:"),
        "{}",
        login.before
    );
    let path = login.url.path().to_string();
    let id = path
        .strip_prefix("/oauth/callback/")
        .expect("the callback path");
    assert!(uuid::Uuid::parse_str(id).is_ok(), "a random id: {path}");
    assert_eq!(login.next_line().await, "Open this URL to sign in:");
    let page = reqwest::Url::parse(login.next_line().await.trim()).expect("the sign-in URL");
    assert_eq!(
        (page.host_str(), page.path()),
        (Some("openrouter.test"), "/auth")
    );
    let names: Vec<String> = page.query_pairs().map(|(k, _)| k.into_owned()).collect();
    assert_eq!(
        names,
        ["callback_url", "code_challenge", "code_challenge_method"]
    );
    assert_eq!(query(&page, "callback_url"), redirect);
    assert_eq!(query(&page, "code_challenge_method"), "S256");

    // Another path on the port is not the callback; the right one completes the sign-in.
    let port = login.url.port().unwrap();
    let (code, _) = browser_get(&format!(
        "http://127.0.0.1:{port}/oauth/callback?code=or-code"
    ))
    .await;
    assert_eq!(code, 404);
    let (code, page_text) = browser_get(&format!("{redirect}?code=or-code")).await;
    assert_eq!(code, 200);
    assert!(
        page_text.contains("Signed in to OpenRouter. You may now close this page."),
        "{page_text}"
    );
    let (exit, printed) = login.finish().await;
    assert_eq!(exit, Some(0), "{printed}");
    assert!(printed.contains("Logged in to OpenRouter."), "{printed}");
    let sent = mock.seen("/api/v1/auth/keys");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].content_type, "application/json");
    let verifier = sent[0].body["code_verifier"].as_str().unwrap().to_string();
    assert_eq!(
        sent[0].body,
        json!({"code": "or-code", "code_verifier": verifier, "code_challenge_method": "S256"})
    );
    use base64::Engine as _;
    use sha2::Digest as _;
    let made = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()));
    assert_eq!(made, query(&page, "code_challenge"));
    assert_openrouter_entry(&agent);
}

#[tokio::test]
async fn openrouter_takes_a_pasted_redirect_and_says_why_a_code_is_refused() {
    use tokio::io::AsyncWriteExt as _;
    let mock = openrouter_mock().await;
    let agent = openrouter_agent(&mock);
    let mut login =
        crate::oauth::start_provider_login(&agent, "openrouter", &["--no-browser"]).await;
    let pasted = format!("{}?code=stale-code\n", login.url);
    login.stdin.write_all(pasted.as_bytes()).await.unwrap();
    let (exit, printed) = login.finish().await;
    assert_eq!(exit, Some(1), "{printed}");
    assert!(
        printed.contains(
            "Failed to log in to OpenRouter: OpenRouter OAuth key exchange failed (HTTP 403): \
             Invalid code"
        ),
        "{printed}"
    );
    assert!(!agent.agent_dir.join("auth.json").exists());

    let mut login =
        crate::oauth::start_provider_login(&agent, "openrouter", &["--no-browser"]).await;
    let pasted = format!("{}?code=or-code\n", login.url);
    login.stdin.write_all(pasted.as_bytes()).await.unwrap();
    let (exit, printed) = login.finish().await;
    assert_eq!(exit, Some(0), "{printed}");
    assert!(
        printed.contains("Exchanging authorization code for an API key..."),
        "{printed}"
    );
    assert_openrouter_entry(&agent);
    assert_1_6_reads(&agent, "openrouter").await;
}

#[tokio::test]
async fn a_stored_openrouter_key_is_sent_as_it_is_and_never_renewed() {
    let model = MockModel::start(vec![Turn::text("routed")]).await;
    let mock = openrouter_mock().await;
    let mut agent = agent_with_entry(
        &model,
        "openrouter",
        json!({"type": "oauth", "access": "sk-or-v1-login-key", "refresh": "",
            "expires": 9_007_199_254_740_991_i64}),
    );
    agent.env(
        "PI_OAUTH_OPENROUTER_TOKEN_URL",
        &mock.url("/api/v1/auth/keys"),
    );
    let out = agent.run(&["--model", OPENROUTER_MODEL, "-p", "hi"]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "routed\n");
    let reqs = model.requests();
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(
        reqs[0].headers["authorization"],
        "Bearer sk-or-v1-login-key"
    );
    assert!(mock.seen("/api/v1/auth/keys").is_empty());
    assert_openrouter_entry(&agent);
}

// ---- Kimi Code ----

const KIMI_CLIENT: &str = "17e5f671-d194-4dfb-9706-5516cb48c098";
const KIMI_MODEL: &str = "kimi-coding/kimi-for-coding";

/// auth.kimi.com: a device code entered after one slow_down; refresh tokens rotate, and
/// `kimi-refresh-revoked` is refused.
async fn kimi_mock() -> OAuthMock {
    let mock = OAuthMock::start().await;
    mock.on("POST", "/api/oauth/device_authorization", |_, _| {
        ok(
            json!({"device_code": "kimi-device-1", "user_code": "KIMI-42",
            "verification_uri": "https://www.kimi.test/device",
            "verification_uri_complete": "https://www.kimi.test/device?user_code=KIMI-42",
            "expires_in": 600, "interval": 1}),
        )
    })
    .await;
    mock.on("POST", "/api/oauth/token", |body, n| {
        match body["grant_type"].as_str() {
            Some("urn:ietf:params:oauth:grant-type:device_code") if n == 0 => {
                status(400, json!({"error": "slow_down", "interval": 1}))
            }
            Some("urn:ietf:params:oauth:grant-type:device_code") => ok(json!({
                "access_token": "kimi-access-1", "refresh_token": "kimi-refresh-1",
                "expires_in": 900, "token_type": "Bearer", "scope": "kimi-code"})),
            Some("refresh_token") if body["refresh_token"] != "kimi-refresh-revoked" => {
                ok(json!({"access_token": format!("kimi-access-{}", n + 1),
                    "refresh_token": format!("kimi-refresh-{}", n + 1), "expires_in": 900}))
            }
            _ => status(
                401,
                json!({"error": "invalid_grant", "error_description": "The refresh token is invalid."}),
            ),
        }
    })
    .await;
    mock
}

#[tokio::test]
async fn kimi_signs_in_with_a_device_code_and_1_6_renews_what_pi_wrote() {
    let mock = kimi_mock().await;
    let mut agent = TestAgent::new();
    agent.env("KIMI_CODE_OAUTH_HOST", &format!("{}/", mock.server.uri()));
    let out = agent
        .run_with_stdin(&["auth", "login", "kimi-coding", "--no-browser"], Some(""))
        .await;
    out.assert_ok();
    let path = agent.agent_dir.join("auth.json");
    assert_eq!(
        out.stdout,
        format!(
            "Open https://www.kimi.test/device?user_code=KIMI-42 and enter code: KIMI-42\n\
             Waiting for authentication...\n\
             Logged in to Kimi For Coding. Credentials saved to {}\n",
            path.display()
        )
    );
    let asked = mock.seen("/api/oauth/device_authorization");
    assert_eq!(asked[0].content_type, "application/x-www-form-urlencoded");
    assert_eq!(asked[0].body, json!({"client_id": KIMI_CLIENT}));
    let polls = mock.seen("/api/oauth/token");
    assert_eq!(polls.len(), 2, "slow_down, then the tokens");
    assert_eq!(
        polls[0].body,
        json!({"client_id": KIMI_CLIENT, "device_code": "kimi-device-1",
            "grant_type": "urn:ietf:params:oauth:grant-type:device_code"})
    );
    // The server's own interval after slow_down, not five seconds more.
    let gap = polls[1].at - polls[0].at;
    assert!(gap >= std::time::Duration::from_millis(950), "{gap:?}");
    assert!(gap < std::time::Duration::from_secs(4), "{gap:?}");
    let entry = auth(&agent)["kimi-coding"].clone();
    assert_eq!(keys(&entry), ["access", "expires", "refresh", "type"]);
    assert_eq!(entry["access"], "kimi-access-1");
    assert_eq!(entry["refresh"], "kimi-refresh-1");
    assert_expires_in(&entry, 900_000);

    // pi 1.6 renews the login pi wrote, against the same host, and pi uses what 1.6 wrote.
    let Some(ts) = TsPi::find_v1_6() else { return };
    let mut stored = auth(&agent);
    stored["kimi-coding"]["expires"] = json!(now_ms() - 1_000);
    write_json(&path, &stored);
    let printed = ts
        .run(
            &agent,
            // Its default half hour is more than Kimi's tokens live.
            &[
                "auth",
                "print-bearer-token",
                "--provider",
                "kimi-coding",
                "--min-expiry",
                "10m",
            ],
        )
        .await;
    printed.assert_ok();
    assert_eq!(printed.stdout.trim(), "kimi-access-3");
    let grants = mock.seen("/api/oauth/token");
    assert_eq!(grants.len(), 3);
    assert_eq!(
        grants[2].body,
        json!({"client_id": KIMI_CLIENT, "grant_type": "refresh_token",
            "refresh_token": "kimi-refresh-1"})
    );
    let model = MockModel::start(vec![Turn::text("kimi here")]).await;
    agent.write_models(
        &json!({"providers": {"kimi-coding": {"baseUrl": format!("{}/v1", model.uri())}}}),
    );
    let out = agent.run(&["--model", KIMI_MODEL, "-p", "hi"]).await;
    out.assert_ok();
    let reqs = model.requests();
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].headers["authorization"], "Bearer kimi-access-3");
    assert_eq!(
        mock.seen("/api/oauth/token").len(),
        3,
        "1.6's renewal is used as it is"
    );
}

#[tokio::test]
async fn an_expired_kimi_login_is_renewed_by_pi_and_a_dead_one_says_to_sign_in_again() {
    let model = MockModel::start(vec![Turn::text("renewed")]).await;
    let mock = kimi_mock().await;
    let mut agent = agent_with_entry(
        &model,
        "kimi-coding",
        json!({"type": "oauth", "access": "kimi-access-0", "refresh": "kimi-refresh-0",
            "expires": now_ms() + 60_000}),
    );
    agent.env("KIMI_OAUTH_HOST", &mock.server.uri());
    let out = agent.run(&["--model", KIMI_MODEL, "-p", "hi"]).await;
    out.assert_ok();
    assert_eq!(
        model.requests()[0].headers["authorization"],
        "Bearer kimi-access-1",
        "a minute left is inside the five-minute window"
    );
    let entry = &auth(&agent)["kimi-coding"];
    assert_eq!(
        (&entry["access"], &entry["refresh"]),
        (&json!("kimi-access-1"), &json!("kimi-refresh-1"))
    );
    assert_expires_in(entry, 900_000);

    let mut stored = auth(&agent);
    stored["kimi-coding"]["refresh"] = json!("kimi-refresh-revoked");
    stored["kimi-coding"]["expires"] = json!(now_ms() - 1_000);
    write_json(&agent.agent_dir.join("auth.json"), &stored);
    let out = agent.run(&["--model", KIMI_MODEL, "-p", "hi"]).await;
    assert_ne!(out.code, Some(0), "{out}");
    assert_eq!(
        out.stderr.trim(),
        "Error: Kimi Code token refresh unauthorized (status 401): The refresh token is \
         invalid.; sign in again with `pi auth login kimi-coding`"
    );
    assert_eq!(model.requests().len(), 1, "no request without a token");
    assert_eq!(auth(&agent), stored, "the file is left as it was");
}

// ---- Meta ----

const META_CLIENT: &str = "1031625952748946";
const META_MODEL: &str = "meta/muse-spark-1.3";

/// auth.meta.com and the key-mint endpoint: the code entered after one pending poll gives
/// identity token `meta-identity-1`; each mint with it is a new key, any other identity is
/// refused as 1.6 expects a dead session to be.
async fn meta_mock() -> OAuthMock {
    let mock = OAuthMock::start().await;
    mock.on("POST", "/oidc/device/authorization/", |_, _| {
        ok(
            json!({"device_code": "meta-device-1", "user_code": "META-99",
            "verification_uri": "https://www.meta.test/device", "expires_in": 300,
            "interval": 1}),
        )
    })
    .await;
    mock.on("POST", "/oidc/device/token/", |_, n| {
        if n == 0 {
            status(400, json!({"error": "authorization_pending"}))
        } else {
            ok(json!({"access_token": "meta-identity-1", "token_type": "Bearer"}))
        }
    })
    .await;
    let minted = Arc::new(Mutex::new(0));
    mock.on("POST", "/muse-code/key", move |_, _| {
        let mut n = minted.lock().unwrap();
        *n += 1;
        ok(json!({"api_key": format!("LLM|meta-key-{n}")}))
    })
    .await;
    mock
}

fn meta_env(agent: &mut TestAgent, mock: &OAuthMock) {
    agent.env(
        "PI_OAUTH_META_DEVICE_AUTHORIZATION_URL",
        &mock.url("/oidc/device/authorization/"),
    );
    agent.env(
        "PI_OAUTH_META_DEVICE_TOKEN_URL",
        &mock.url("/oidc/device/token/"),
    );
    agent.env("PI_OAUTH_META_API_KEY_URL", &mock.url("/muse-code/key"));
}

#[tokio::test]
async fn meta_signs_in_with_a_device_code_and_mints_a_model_api_key() {
    let mock = meta_mock().await;
    let mut agent = TestAgent::new();
    meta_env(&mut agent, &mock);
    let out = agent
        .run_with_stdin(&["auth", "login", "meta", "--no-browser"], Some(""))
        .await;
    out.assert_ok();
    let path = agent.agent_dir.join("auth.json");
    assert_eq!(
        out.stdout,
        format!(
            "Open https://www.meta.test/device and enter code: META-99\n\
             Waiting for authentication...\n\
             Enabling Meta Model API access...\n\
             Logged in to Meta. Credentials saved to {}\n",
            path.display()
        )
    );
    assert_eq!(
        mock.seen("/oidc/device/authorization/")[0].body,
        json!({"client_id": META_CLIENT})
    );
    let polls = mock.seen("/oidc/device/token/");
    assert_eq!(polls.len(), 2);
    assert_eq!(
        polls[0].body,
        json!({"grant_type": "urn:ietf:params:oauth:grant-type:device_code",
            "device_code": "meta-device-1", "client_id": META_CLIENT})
    );
    let mints = mock.seen("/muse-code/key");
    assert_eq!(mints.len(), 1);
    assert_eq!(mints[0].authorization, "Bearer meta-identity-1");
    assert_eq!(mints[0].content_type, "application/json");
    assert_eq!(mints[0].body, json!({}));
    let entry = &auth(&agent)["meta"];
    assert_eq!(keys(entry), ["access", "expires", "refresh", "type"]);
    assert_eq!(entry["access"], "LLM|meta-key-1");
    assert_eq!(
        entry["refresh"], "meta-identity-1",
        "the identity token mints the next key"
    );
    assert_expires_in(entry, 24 * 3_600_000);
    assert_1_6_reads(&agent, "meta").await;
}

#[tokio::test]
async fn an_expired_meta_key_is_minted_anew_and_a_dead_session_says_to_sign_in_again() {
    let model = MockModel::start(vec![Turn::text("muse")]).await;
    let mock = meta_mock().await;
    mock.on("POST", "/muse-code/dead", |_, _| {
        status(401, json!({"detail": "Session is no longer valid"}))
    })
    .await;
    let mut agent = agent_with_entry(
        &model,
        "meta",
        json!({"type": "oauth", "refresh": "meta-identity-1", "access": "LLM|meta-key-0",
            "expires": now_ms() - 1_000}),
    );
    meta_env(&mut agent, &mock);
    let out = agent.run(&["--model", META_MODEL, "-p", "hi"]).await;
    out.assert_ok();
    assert_eq!(model.requests()[0].path, "/v1/responses");
    assert_eq!(
        model.requests()[0].headers["authorization"],
        "Bearer LLM|meta-key-1"
    );
    assert_eq!(
        mock.seen("/muse-code/key")[0].authorization,
        "Bearer meta-identity-1"
    );
    let entry = &auth(&agent)["meta"];
    assert_eq!(entry["access"], "LLM|meta-key-1");
    assert_eq!(entry["refresh"], "meta-identity-1");
    assert_expires_in(entry, 24 * 3_600_000);

    let mut stored = auth(&agent);
    stored["meta"]["expires"] = json!(now_ms() - 1_000);
    write_json(&agent.agent_dir.join("auth.json"), &stored);
    agent.env("PI_OAUTH_META_API_KEY_URL", &mock.url("/muse-code/dead"));
    let out = agent.run(&["--model", META_MODEL, "-p", "hi"]).await;
    assert_ne!(out.code, Some(0), "{out}");
    assert_eq!(
        out.stderr.trim(),
        "Error: Meta session expired (status 401). Run `/login meta` to sign in again.: \
         Session is no longer valid"
    );
    assert_eq!(auth(&agent), stored, "the file is left as it was");
}

// ---- OpenAI (ChatGPT subscription) ----

/// Port 1455 is OpenAI's registered callback for both ChatGPT logins; the tests that sign in
/// there take turns.
pub(crate) static PORT_1455: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const CHATGPT_REDIRECT: &str = "http://127.0.0.1:1455/auth/callback";
const CHATGPT_SCOPE: &str =
    "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct";
const DEVICE_ID: &str = "6F9619FF-8B86-D011-B42D-00C04FC964FF";
const OPENAI_MODEL: &str = "openai/gpt-6.2-sol";

/// auth.openai.com's token endpoint for Sign in with ChatGPT: code `chatgpt-code` for client
/// `app_issued_1`, and refresh tokens `chatgpt-refresh-*` rotated; anything else refused.
async fn chatgpt_mock() -> OAuthMock {
    let mock = OAuthMock::start().await;
    mock.on("POST", "/api/accounts/oauth/token", |body, n| {
        let issued = body["client_id"] == "app_issued_1";
        let known = match body["grant_type"].as_str() {
            Some("authorization_code") => body["code"] == "chatgpt-code",
            Some("refresh_token") => body["refresh_token"]
                .as_str()
                .is_some_and(|r| r.starts_with("chatgpt-refresh-")),
            _ => false,
        };
        if !(issued && known) {
            return status(400, json!({"error": "invalid_grant"}));
        }
        ok(json!({"access_token": format!("chatgpt-access-{}", n + 1),
            "refresh_token": format!("chatgpt-refresh-{}", n + 1), "id_token": "id-token",
            "scope": CHATGPT_SCOPE, "token_type": "Bearer", "expires_in": 3600}))
    })
    .await;
    mock
}

fn chatgpt_agent(mock: &OAuthMock) -> TestAgent {
    let mut agent = TestAgent::new();
    agent.env(
        "PI_OAUTH_OPENAI_TOKEN_URL",
        &mock.url("/api/accounts/oauth/token"),
    );
    agent.env(
        "PI_OAUTH_OPENAI_AUTHORIZE_URL",
        "https://auth.test/api/accounts/authorize",
    );
    agent
}

fn assert_chatgpt_entry(agent: &TestAgent, n: usize) {
    let entry = &auth(agent)["openai"];
    assert_eq!(
        keys(entry),
        ["access", "clientId", "expires", "refresh", "scopes", "type"]
    );
    assert_eq!(entry["type"], "oauth");
    assert_eq!(entry["access"], format!("chatgpt-access-{n}"));
    assert_eq!(entry["refresh"], format!("chatgpt-refresh-{n}"));
    assert_eq!(entry["clientId"], "app_issued_1");
    assert_eq!(
        entry["scopes"],
        json!([
            "openid",
            "profile",
            "email",
            "offline_access",
            "resource.invoke",
            "chatgpt.tokens.use.direct"
        ])
    );
    // An hour, less 1.6's three-minute margin.
    assert_expires_in(entry, 3_600_000 - 180_000);
}

#[tokio::test]
async fn chatgpt_registers_this_installation_and_signs_in_through_the_callback() {
    use crate::oauth::{browser_get, query, start_provider_login};
    let _port = PORT_1455.lock().await;
    let mock = chatgpt_mock().await;
    let agent = chatgpt_agent(&mock);
    agent.write_settings(&json!({"deviceId": DEVICE_ID, "theme": "dark"}));
    let login = start_provider_login(&agent, "openai", &["--no-browser"]).await;
    assert_eq!(
        login.before.lines().next(),
        Some("Open this URL to sign in:")
    );
    let url = login.url.clone();
    assert_eq!(
        (url.host_str(), url.path()),
        (Some("auth.test"), "/api/accounts/authorize")
    );
    let names: Vec<String> = url.query_pairs().map(|(k, _)| k.into_owned()).collect();
    assert_eq!(
        names,
        [
            "client_id",
            "agent_name_hint",
            "ext_agent_host_id",
            "response_type",
            "redirect_uri",
            "resource",
            "scope",
            "state",
            "code_challenge",
            "code_challenge_method",
            "nonce"
        ]
    );
    for (k, v) in [
        ("client_id", "dynamic_agent_client"),
        ("agent_name_hint", "Pi"),
        (
            "ext_agent_host_id",
            "urn:uuid:6f9619ff-8b86-d011-b42d-00c04fc964ff",
        ),
        ("response_type", "code"),
        ("redirect_uri", CHATGPT_REDIRECT),
        ("resource", "https://api.openai.com/v1"),
        ("scope", CHATGPT_SCOPE),
        ("code_challenge_method", "S256"),
    ] {
        assert_eq!(query(&url, k), v, "{k}");
    }
    let state = query(&url, "state");
    assert_eq!(state.len(), 43, "32 random bytes, base64url");
    assert_ne!(query(&url, "nonce"), state);

    // A return without the issued client is turned away; the full one signs in.
    let back = format!("{CHATGPT_REDIRECT}?code=chatgpt-code&state={state}");
    let (code, page) = browser_get(&back).await;
    assert_eq!(code, 400);
    assert!(
        page.contains("OpenAI OAuth registration callback did not contain an issued client ID"),
        "{page}"
    );
    let (code, page) = browser_get(&format!("{back}&client_id=app_issued_1")).await;
    assert_eq!(code, 200);
    assert!(
        page.contains("ChatGPT authentication completed. You can close this window."),
        "{page}"
    );
    let (exit, printed) = login.finish().await;
    assert_eq!(exit, Some(0), "{printed}");
    assert!(
        printed.contains(
            "Complete sign-in in your browser. If the callback does not complete, paste the \
             final redirect URL here.\n"
        ),
        "{printed}"
    );
    assert!(
        printed.contains("Exchanging authorization code for tokens..."),
        "{printed}"
    );
    assert!(printed.contains("Logged in to OpenAI."), "{printed}");
    let grants = mock.seen("/api/accounts/oauth/token");
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].content_type, "application/x-www-form-urlencoded");
    let verifier = grants[0].body["code_verifier"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        grants[0].body,
        json!({"grant_type": "authorization_code", "client_id": "app_issued_1",
            "code": "chatgpt-code", "code_verifier": verifier, "redirect_uri": CHATGPT_REDIRECT,
            "resource": "https://api.openai.com/v1"})
    );
    assert_chatgpt_entry(&agent, 1);
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(agent.agent_dir.join("settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(settings, json!({"deviceId": DEVICE_ID, "theme": "dark"}));
    assert_1_6_reads(&agent, "openai").await;
}

#[tokio::test]
async fn chatgpt_makes_a_device_id_takes_a_pasted_redirect_and_wants_port_1455() {
    use tokio::io::AsyncWriteExt as _;
    let _port = PORT_1455.lock().await;
    let mock = chatgpt_mock().await;
    let agent = chatgpt_agent(&mock);
    let mut login = crate::oauth::start_provider_login(&agent, "openai", &["--no-browser"]).await;
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(agent.agent_dir.join("settings.json")).expect("settings.json"),
    )
    .unwrap();
    let id = settings["deviceId"].as_str().expect("a device id was made");
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
    let host_id = crate::oauth::query(&login.url, "ext_agent_host_id");
    assert_eq!(host_id, format!("urn:uuid:{id}"));
    let state = crate::oauth::query(&login.url, "state");
    let pasted =
        format!("{CHATGPT_REDIRECT}?code=chatgpt-code&state={state}&client_id=app_issued_1\n");
    login.stdin.write_all(pasted.as_bytes()).await.unwrap();
    let (exit, printed) = login.finish().await;
    assert_eq!(exit, Some(0), "{printed}");
    assert_chatgpt_entry(&agent, 1);

    // Whoever holds 1455 would get the browser's return: 1.6 stops rather than wait for it.
    let Ok(_held) = tokio::net::TcpListener::bind(("127.0.0.1", 1455)).await else {
        return;
    };
    let out = agent
        .run_with_stdin(&["auth", "login", "openai", "--no-browser"], Some(""))
        .await;
    out.assert_code(1);
    assert_eq!(
        out.stderr.trim(),
        "Failed to log in to OpenAI: Port 1455 is in use, probably by an unfinished login in \
         another pi session or by the Codex CLI. Cancel that login and try again."
    );
}

#[tokio::test]
async fn an_expired_chatgpt_login_is_renewed_for_its_client_and_a_refusal_says_to_sign_in_again() {
    let model = MockModel::start(vec![Turn::text("chatgpt")]).await;
    let mock = chatgpt_mock().await;
    let mut agent = agent_with_entry(
        &model,
        "openai",
        json!({"type": "oauth", "access": "chatgpt-access-0", "refresh": "chatgpt-refresh-0",
            "expires": now_ms() - 1_000, "clientId": "app_issued_1",
            "scopes": ["chatgpt.tokens.use.direct"]}),
    );
    agent.env(
        "PI_OAUTH_OPENAI_TOKEN_URL",
        &mock.url("/api/accounts/oauth/token"),
    );
    agent.env("OPENAI_API_KEY", "sk-env-key-not-sent");
    let out = agent.run(&["--model", OPENAI_MODEL, "-p", "hi"]).await;
    out.assert_ok();
    assert_eq!(model.requests()[0].path, "/v1/responses");
    assert_eq!(
        model.requests()[0].headers["authorization"],
        "Bearer chatgpt-access-1"
    );
    let grants = mock.seen("/api/accounts/oauth/token");
    assert_eq!(
        grants[0].body,
        json!({"grant_type": "refresh_token", "client_id": "app_issued_1",
            "refresh_token": "chatgpt-refresh-0", "resource": "https://api.openai.com/v1"})
    );
    assert_chatgpt_entry(&agent, 1);
    assert_1_6_reads(&agent, "openai").await;

    let mut stored = auth(&agent);
    stored["openai"]["refresh"] = json!("revoked");
    stored["openai"]["expires"] = json!(now_ms() - 1_000);
    write_json(&agent.agent_dir.join("auth.json"), &stored);
    let out = agent.run(&["--model", OPENAI_MODEL, "-p", "hi"]).await;
    assert_ne!(out.code, Some(0), "{out}");
    assert_eq!(
        out.stderr.trim(),
        "Error: OpenAI OAuth token request failed (400): {\"error\":\"invalid_grant\"}; sign in \
         again with `pi auth login openai`"
    );
    assert_eq!(auth(&agent), stored);
}

// ---- Radius ----

/// A Radius gateway: its OAuth config, device codes entered after one pending poll, code
/// `radius-code` exchanged, and refresh tokens `radius-refresh-*` rotated.
async fn radius_mock() -> OAuthMock {
    let mock = OAuthMock::start().await;
    mock.on("GET", "/v1/oauth", |_, _| {
        ok(json!({"authorizationEndpoint": "https://radius.test/oauth/authorize?stale=1"}))
    })
    .await;
    mock.on("POST", "/v1/oauth/device", |_, _| {
        ok(
            json!({"device_code": "radius-device-1", "user_code": "RAD-1234",
            "verification_uri": "https://radius.test/device", "expires_in": 300,
            "interval": 1}),
        )
    })
    .await;
    mock.on("POST", "/v1/oauth/token", |body, n| {
        let good = match body["grant_type"].as_str() {
            Some("authorization_code") => body["code"] == "radius-code",
            Some("urn:ietf:params:oauth:grant-type:device_code") if n == 0 => {
                return status(
                    400,
                    json!({"error": "authorization_pending", "error_description": "Not yet"}),
                )
            }
            Some("urn:ietf:params:oauth:grant-type:device_code") => true,
            Some("refresh_token") => body["refresh_token"]
                .as_str()
                .is_some_and(|r| r.starts_with("radius-refresh-")),
            _ => false,
        };
        if !good {
            return status(
                400,
                json!({"error": "invalid_grant", "error_description": "Unknown refresh token"}),
            );
        }
        ok(json!({"access_token": format!("radius-access-{}", n + 1),
            "refresh_token": format!("radius-refresh-{}", n + 1), "token_type": "Bearer",
            "expires_in": 7200, "scope": "gateway offline_access"}))
    })
    .await;
    mock
}

fn radius_agent(mock: &OAuthMock) -> TestAgent {
    let mut agent = TestAgent::new();
    agent.env(
        "PI_OAUTH_RADIUS_GATEWAY_URL",
        &format!("{}/", mock.server.uri()),
    );
    agent
}

fn assert_radius_entry(agent: &TestAgent, n: usize) {
    let entry = &auth(agent)["radius"];
    assert_eq!(
        keys(entry),
        ["access", "expires", "refresh", "scope", "type"]
    );
    assert_eq!(entry["type"], "oauth");
    assert_eq!(entry["access"], format!("radius-access-{n}"));
    assert_eq!(entry["refresh"], format!("radius-refresh-{n}"));
    assert_eq!(entry["scope"], "gateway offline_access");
    assert_expires_in(entry, 7_200_000 - 60_000);
}

#[tokio::test]
async fn radius_signs_in_through_the_page_its_gateway_names_and_port_1456() {
    use crate::oauth::{browser_get, query, start_provider_login};
    let mock = radius_mock().await;
    let agent = radius_agent(&mock);
    let mut login = start_provider_login(&agent, "radius", &[]).await;
    assert_eq!(
        login.before,
        "Listening for OAuth callback on http://127.0.0.1:1456/oauth/callback\n"
    );
    assert_eq!(login.next_line().await, "Open this URL to sign in:");
    let page = reqwest::Url::parse(login.next_line().await.trim()).expect("the sign-in URL");
    assert_eq!(login.next_line().await, "Continue in your browser.");
    assert_eq!(
        login.next_line().await,
        "To use \"Sign in with device code (when signing in from another device)\" instead, \
         run \"pi auth login radius --no-browser\""
    );
    assert_eq!(
        (page.host_str(), page.path()),
        (Some("radius.test"), "/oauth/authorize")
    );
    let names: Vec<String> = page.query_pairs().map(|(k, _)| k.into_owned()).collect();
    assert_eq!(
        names,
        [
            "response_type",
            "client_id",
            "redirect_uri",
            "scope",
            "code_challenge",
            "code_challenge_method",
            "handoff",
            "state"
        ]
    );
    for (k, v) in [
        ("response_type", "code"),
        ("client_id", "pi-gateway"),
        ("redirect_uri", "http://127.0.0.1:1456/oauth/callback"),
        ("scope", "gateway offline_access"),
        ("code_challenge_method", "S256"),
        ("handoff", "url"),
    ] {
        assert_eq!(query(&page, k), v, "{k}");
    }
    let state = query(&page, "state");
    assert!(uuid::Uuid::parse_str(&state).is_ok(), "{state}");
    let back = "http://127.0.0.1:1456/oauth/callback?code=radius-code";
    let (code, _) = browser_get(&format!("{back}&state=forged")).await;
    assert_eq!(code, 400);
    let (code, text) = browser_get(&format!("{back}&state={state}")).await;
    assert_eq!(code, 200);
    assert!(text.contains("Signed in to Radius"), "{text}");
    let (exit, printed) = login.finish().await;
    assert_eq!(exit, Some(0), "{printed}");
    assert!(printed.contains("Logged in to Radius."), "{printed}");
    let grant = &mock.seen("/v1/oauth/token")[0];
    assert_eq!(grant.content_type, "application/x-www-form-urlencoded");
    let verifier = grant.body["code_verifier"].as_str().unwrap().to_string();
    assert_eq!(
        grant.body,
        json!({"grant_type": "authorization_code", "client_id": "pi-gateway",
            "redirect_uri": "http://127.0.0.1:1456/oauth/callback", "code": "radius-code",
            "code_verifier": verifier})
    );
    assert_radius_entry(&agent, 1);
}

#[tokio::test]
async fn radius_signs_in_with_a_device_code_and_renews_through_its_gateway() {
    let mock = radius_mock().await;
    let agent = radius_agent(&mock);
    let out = agent
        .run_with_stdin(&["auth", "login", "radius", "--no-browser"], Some(""))
        .await;
    out.assert_ok();
    assert_eq!(
        out.stdout,
        format!(
            "Sign in to Radius: Sign in with device code (when signing in from another device)\n\
             Open https://radius.test/device and enter code: RAD-1234\n\
             Waiting for authentication...\n\
             Logged in to Radius. Credentials saved to {}\n",
            agent.agent_dir.join("auth.json").display()
        )
    );
    assert!(
        mock.seen("/v1/oauth").is_empty(),
        "no discovery for a device code"
    );
    let asked = mock.seen("/v1/oauth/device");
    assert_eq!(
        asked[0].body,
        json!({"client_id": "pi-gateway", "scope": "gateway offline_access"})
    );
    let polls = mock.seen("/v1/oauth/token");
    assert_eq!(polls.len(), 2);
    assert_eq!(
        polls[0].body,
        json!({"grant_type": "urn:ietf:params:oauth:grant-type:device_code",
            "client_id": "pi-gateway", "device_code": "radius-device-1"})
    );
    // Radius is polled at once, unlike the others.
    assert!(polls[0].at - asked[0].at < std::time::Duration::from_millis(900));
    assert_radius_entry(&agent, 2);
    assert_1_6_reads(&agent, "radius").await;

    // Expired: printing the token for another program renews it at the gateway.
    let mut stored = auth(&agent);
    stored["radius"]["expires"] = json!(now_ms() - 1_000);
    write_json(&agent.agent_dir.join("auth.json"), &stored);
    let out = agent
        .run(&[
            "auth",
            "print-bearer-token",
            "--provider",
            "radius",
            "--min-expiry",
            "10m",
        ])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "radius-access-3\n");
    assert_eq!(
        mock.seen("/v1/oauth/token")[2].body,
        json!({"grant_type": "refresh_token", "client_id": "pi-gateway",
            "refresh_token": "radius-refresh-2"})
    );
    assert_radius_entry(&agent, 3);

    let mut stored = auth(&agent);
    stored["radius"]["refresh"] = json!("revoked");
    stored["radius"]["expires"] = json!(now_ms() - 1_000);
    write_json(&agent.agent_dir.join("auth.json"), &stored);
    let out = agent
        .run(&["auth", "print-bearer-token", "--provider", "radius"])
        .await;
    out.assert_code(1);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr.trim(),
        "Error: Radius OAuth token request failed: invalid_grant: Unknown refresh token; sign \
         in again with `pi auth login radius`"
    );
    assert_eq!(auth(&agent), stored);
}
