//! ChatGPT Plus/Pro logins (`openai-codex`), against a mock of auth.openai.com: the browser
//! login by a pasted redirect (the only way when port 1455 is taken) or the loopback callback,
//! the device-code login polled until the code is entered, the entry stored in pi 1.6's shape
//! with the token's ChatGPT account, and a refresh sent as a form grant; TypeScript pi 1.6
//! reads what pi wrote.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt as _;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::common::ts_pi::TsPi;
use crate::common::{write_json, TestAgent};
use crate::oauth::{browser_get, query, start_provider_login};

const CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
const ACCOUNT: &str = "acct-test-1";
const EXPIRES_IN: i64 = 864_000;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A fake access token: a JWT whose claims name `account` (none when `None`).
fn jwt(n: usize, account: Option<&str>) -> String {
    let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
    let mut claims = json!({"sub": format!("user-{n}")});
    if let Some(a) = account {
        claims["https://api.openai.com/auth"] = json!({"chatgpt_account_id": a});
    }
    format!(
        "{}.{}.signature-{n}",
        b64(br#"{"alg":"RS256","typ":"JWT"}"#),
        b64(claims.to_string().as_bytes())
    )
}

/// A grant the token endpoint received: its content type and its form fields.
#[derive(Debug, Clone)]
struct Grant {
    content_type: String,
    fields: Value,
}

/// auth.openai.com as far as pi talks to it: the token endpoint (form grants, rotating
/// refresh tokens) and the device login's two endpoints, the code entered after two polls.
struct OpenAi {
    server: MockServer,
    grants: Arc<Mutex<Vec<Grant>>>,
    polls: Arc<Mutex<Vec<Value>>>,
}

impl OpenAi {
    async fn start(account: Option<&'static str>) -> OpenAi {
        let server = MockServer::start().await;
        let grants = Arc::new(Mutex::new(Vec::new()));
        let issued = Arc::new(AtomicUsize::new(0));
        let g = grants.clone();
        Mock::given(method("POST"))
            .and(path("/oauth/token"))
            .respond_with(move |req: &Request| {
                let fields: serde_json::Map<String, Value> = form_urlencoded::parse(&req.body)
                    .map(|(k, v)| (k.into_owned(), json!(v)))
                    .collect();
                let fields = Value::Object(fields);
                let content_type = req
                    .headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                g.lock().unwrap().push(Grant {
                    content_type,
                    fields: fields.clone(),
                });
                let n = issued.fetch_add(1, Ordering::SeqCst) + 1;
                let known = match fields["grant_type"].as_str() {
                    Some("refresh_token") => fields["refresh_token"] == "refresh-0",
                    Some("authorization_code") => {
                        fields["code"] == "the-code"
                            || (fields["code"] == "device-auth-code"
                                && fields["code_verifier"] == "device-verifier")
                    }
                    _ => false,
                };
                if !known {
                    return ResponseTemplate::new(400)
                        .set_body_json(json!({"error": "invalid_grant"}));
                }
                ResponseTemplate::new(200).set_body_json(json!({
                    "access_token": jwt(n, account),
                    "refresh_token": format!("refresh-{n}"),
                    "id_token": "unused",
                    "expires_in": EXPIRES_IN}))
            })
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/api/accounts/deviceauth/usercode"))
            .respond_with(|req: &Request| {
                let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
                if body["client_id"] != CLIENT_ID {
                    return ResponseTemplate::new(400);
                }
                // A string, as OpenAI sends it; 0 is below 1.6's one-second minimum.
                ResponseTemplate::new(200).set_body_json(json!({
                    "device_auth_id": "device-auth-1", "user_code": "ABCD-1234", "interval": "0"}))
            })
            .mount(&server)
            .await;
        let polls = Arc::new(Mutex::new(Vec::new()));
        let p = polls.clone();
        Mock::given(method("POST"))
            .and(path("/api/accounts/deviceauth/token"))
            .respond_with(move |req: &Request| {
                let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
                let mut polls = p.lock().unwrap();
                polls.push(body);
                match polls.len() {
                    // Not entered yet, in both of OpenAI's ways of saying so.
                    1 => ResponseTemplate::new(403),
                    2 => ResponseTemplate::new(400).set_body_json(
                        json!({"error": {"code": "deviceauth_authorization_pending"}}),
                    ),
                    _ => ResponseTemplate::new(200).set_body_json(json!({
                        "authorization_code": "device-auth-code",
                        "code_verifier": "device-verifier"})),
                }
            })
            .mount(&server)
            .await;
        OpenAi {
            server,
            grants,
            polls,
        }
    }

    fn grants(&self) -> Vec<Grant> {
        self.grants.lock().unwrap().clone()
    }

    fn polls(&self) -> Vec<Value> {
        self.polls.lock().unwrap().clone()
    }

    /// An agent whose `openai-codex` login endpoints are this server.
    fn agent(&self) -> TestAgent {
        let mut agent = TestAgent::new();
        let uri = self.server.uri();
        agent.env(
            "PI_OAUTH_OPENAI_CODEX_TOKEN_URL",
            &format!("{uri}/oauth/token"),
        );
        agent.env(
            "PI_OAUTH_OPENAI_CODEX_AUTHORIZE_URL",
            "https://auth.test/oauth/authorize",
        );
        agent.env(
            "PI_OAUTH_OPENAI_CODEX_DEVICE_USERCODE_URL",
            &format!("{uri}/api/accounts/deviceauth/usercode"),
        );
        agent.env(
            "PI_OAUTH_OPENAI_CODEX_DEVICE_TOKEN_URL",
            &format!("{uri}/api/accounts/deviceauth/token"),
        );
        agent
    }
}

fn auth(agent: &TestAgent) -> Value {
    let text = std::fs::read_to_string(agent.agent_dir.join("auth.json")).expect("auth.json");
    serde_json::from_str(&text).expect("auth.json parses")
}

/// The stored entry is 1.6's: these fields and no others, the account from the token, and
/// the lifetime as the server gave it (no margin taken off).
fn assert_1_6_entry(entry: &Value, n: usize) {
    let mut keys: Vec<&str> = entry
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["access", "accountId", "expires", "refresh", "type"],
        "{entry}"
    );
    assert_eq!(entry["type"], "oauth");
    assert_eq!(entry["access"], jwt(n, Some(ACCOUNT)));
    assert_eq!(entry["refresh"], format!("refresh-{n}"));
    assert_eq!(entry["accountId"], ACCOUNT);
    let expires = entry["expires"].as_i64().unwrap();
    let expected = now_ms() + EXPIRES_IN * 1000;
    assert!(
        (expected - 60_000..=expected).contains(&expires),
        "{expires} vs {expected}"
    );
}

fn assert_form_grant(grant: &Grant, fields: &[(&str, &str)]) {
    assert_eq!(grant.content_type, "application/x-www-form-urlencoded");
    for (k, v) in fields {
        assert_eq!(grant.fields[k], *v, "{k} in {:?}", grant.fields);
    }
}

#[tokio::test]
async fn the_browser_login_takes_a_pasted_redirect_when_1455_is_taken_or_the_callback() {
    let _port = crate::oauth_more::PORT_1455.lock().await;
    let openai = OpenAi::start(Some(ACCOUNT)).await;
    let agent = openai.agent();
    // Whoever holds 1455 (this test, or a Codex CLI on the machine), pi cannot listen there.
    let held = tokio::net::TcpListener::bind(("127.0.0.1", 1455))
        .await
        .ok();

    let mut login = start_provider_login(&agent, "openai-codex", &[]).await;
    let url = login.url.clone();
    assert_eq!(url.host_str(), Some("auth.test"));
    for (k, v) in [
        ("client_id", CLIENT_ID),
        ("response_type", "code"),
        ("redirect_uri", "http://localhost:1455/auth/callback"),
        ("scope", "openid profile email offline_access"),
        ("code_challenge_method", "S256"),
        ("id_token_add_organizations", "true"),
        ("codex_cli_simplified_flow", "true"),
        ("originator", "pi"),
    ] {
        assert_eq!(query(&url, k), v, "{k} in {url}");
    }
    assert_eq!(query(&url, "state").len(), 32, "16 random bytes in hex");
    login
        .stdin
        .write_all(b"http://localhost:1455/auth/callback?code=the-code&state=forged\n")
        .await
        .unwrap();
    let (code, printed) = login.finish().await;
    assert_eq!(code, Some(1), "{printed}");
    assert!(printed.contains("state mismatch"), "{printed}");
    assert!(
        !agent.agent_dir.join("auth.json").exists(),
        "nothing stored"
    );
    assert!(openai.grants().is_empty());

    let mut login = start_provider_login(&agent, "openai-codex", &[]).await;
    let state = query(&login.url, "state");
    let challenge = query(&login.url, "code_challenge");
    let pasted = format!("http://localhost:1455/auth/callback?code=the-code&state={state}\n");
    login.stdin.write_all(pasted.as_bytes()).await.unwrap();
    let (code, printed) = login.finish().await;
    assert_eq!(code, Some(0), "{printed}");
    assert!(
        printed.contains(
            "A browser window should open. Complete login to finish.\n\
             To use \"Device code login (headless)\" instead, run \"pi auth login openai-codex \
             --no-browser\""
        ),
        "{printed}"
    );
    assert!(printed.contains("Logged in to OpenAI Codex"), "{printed}");
    let grant = &openai.grants()[0];
    assert_form_grant(
        grant,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", CLIENT_ID),
            ("code", "the-code"),
            ("redirect_uri", "http://localhost:1455/auth/callback"),
        ],
    );
    use sha2::Digest as _;
    let verifier = grant.fields["code_verifier"].as_str().unwrap();
    let made = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()));
    assert_eq!(made, challenge);
    assert_1_6_entry(&auth(&agent)["openai-codex"], 1);

    // With 1455 free, the browser coming back there signs in.
    if held.is_none() {
        return;
    }
    drop(held);
    let login = start_provider_login(&agent, "openai-codex", &[]).await;
    let state = query(&login.url, "state");
    let redirect = "http://localhost:1455/auth/callback";
    let (status, _) = browser_get(&format!("{redirect}?code=the-code&state=forged")).await;
    assert_eq!(status, 400);
    let (status, page) = browser_get(&format!("{redirect}?code=the-code&state={state}")).await;
    assert_eq!(status, 200);
    assert!(page.contains("Signed in to OpenAI"), "{page}");
    let (code, printed) = login.finish().await;
    assert_eq!(code, Some(0), "{printed}");
    assert_1_6_entry(&auth(&agent)["openai-codex"], 2);
}

#[tokio::test]
async fn no_browser_takes_the_device_code_login_and_polls_until_the_code_is_entered() {
    let openai = OpenAi::start(Some(ACCOUNT)).await;
    let agent = openai.agent();
    let login = start_provider_login(&agent, "openai-codex", &["--no-browser"]).await;
    assert_eq!(
        login.before,
        "Select OpenAI Codex login method: Device code login (headless)\n\
         Open https://auth.openai.com/codex/device and enter code: ABCD-1234\n"
    );
    let started = std::time::Instant::now();
    let (code, printed) = login.finish().await;
    assert_eq!(code, Some(0), "{printed}");
    assert!(
        printed.contains("Waiting for authentication..."),
        "{printed}"
    );
    let polls = openai.polls();
    assert_eq!(polls.len(), 3, "two pending, then the code: {polls:?}");
    for p in &polls {
        assert_eq!(
            *p,
            json!({"device_auth_id": "device-auth-1", "user_code": "ABCD-1234"})
        );
    }
    // The server's 0 s is 1.6's minimum of one second between polls.
    assert!(started.elapsed() >= std::time::Duration::from_millis(1900));
    let grants = openai.grants();
    assert_eq!(grants.len(), 1);
    assert_form_grant(
        &grants[0],
        &[
            ("grant_type", "authorization_code"),
            ("client_id", CLIENT_ID),
            ("code", "device-auth-code"),
            ("code_verifier", "device-verifier"),
            (
                "redirect_uri",
                "https://auth.openai.com/deviceauth/callback",
            ),
        ],
    );
    assert_1_6_entry(&auth(&agent)["openai-codex"], 1);
}

#[tokio::test]
async fn a_server_without_device_login_and_a_token_without_an_account_say_so() {
    let _port = crate::oauth_more::PORT_1455.lock().await;
    let bare = MockServer::start().await;
    let openai = OpenAi::start(None).await;
    let mut agent = openai.agent();
    agent.env(
        "PI_OAUTH_OPENAI_CODEX_DEVICE_USERCODE_URL",
        &format!("{}/api/accounts/deviceauth/usercode", bare.uri()),
    );
    let out = agent
        .run(&["auth", "login", "openai-codex", "--no-browser"])
        .await;
    out.assert_code(1);
    assert!(
        out.stderr.contains(
            "Failed to log in to OpenAI Codex: OpenAI Codex device code login is not enabled for \
             this server. Use browser login or verify the server URL."
        ),
        "{out}"
    );

    let mut login = start_provider_login(&openai.agent(), "openai-codex", &[]).await;
    let state = query(&login.url, "state");
    let pasted = format!("the-code#{state}\n");
    login.stdin.write_all(pasted.as_bytes()).await.unwrap();
    let (code, printed) = login.finish().await;
    assert_eq!(code, Some(1), "{printed}");
    assert!(
        printed.contains("Failed to extract accountId from token"),
        "{printed}"
    );
    assert!(!printed.contains("signature-"), "no token in the message");
}

#[tokio::test]
async fn a_stored_chatgpt_login_is_refreshed_with_a_form_grant_and_read_by_pi_1_6() {
    let openai = OpenAi::start(Some(ACCOUNT)).await;
    let agent = openai.agent();
    write_json(
        &agent.agent_dir.join("auth.json"),
        &json!({"openai-codex": {"type": "oauth", "access": jwt(0, Some(ACCOUNT)),
            "refresh": "refresh-0", "expires": now_ms() - 1_000, "accountId": ACCOUNT}}),
    );
    // Expired: printing it for another program renews it first.
    let out = agent
        .run(&["auth", "print-bearer-token", "--provider", "openai-codex"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout.trim(), jwt(1, Some(ACCOUNT)));
    let grants = openai.grants();
    assert_eq!(grants.len(), 1);
    assert_form_grant(
        &grants[0],
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", "refresh-0"),
            ("client_id", CLIENT_ID),
        ],
    );
    let body_keys: Vec<&str> = grants[0]
        .fields
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(body_keys, ["grant_type", "refresh_token", "client_id"]);
    let stored = auth(&agent);
    assert_1_6_entry(&stored["openai-codex"], 1);

    // pi does not speak ChatGPT's API yet, but checks the login as 1.6 does.
    let out = agent
        .run(&["auth", "check", "--provider", "openai-codex", "--json"])
        .await;
    out.assert_ok();
    assert_eq!(
        out.stdout.trim(),
        r#"{"status":"ready","provider":"openai-codex","authType":"oauth"}"#
    );

    let Some(ts) = TsPi::find_v1_6() else { return };
    // 1.6 reads the entry pi wrote and finds it ready without refreshing it.
    let check = ts
        .run(
            &agent,
            &["auth", "check", "--provider", "openai-codex", "--json"],
        )
        .await;
    check.assert_ok();
    let v: Value = serde_json::from_str(check.stdout.trim()).expect("json");
    assert_eq!(v["status"], "ready", "{check}");
    assert_eq!(v["authType"], "oauth", "{check}");
    assert_eq!(openai.grants().len(), 1, "nothing refreshed");
    assert_eq!(auth(&agent), stored, "1.6 left the entry as pi wrote it");
}
