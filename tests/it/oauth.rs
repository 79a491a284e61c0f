//! Claude Pro/Max logins: a login stored in `auth.json` (by pi or TypeScript pi 1.6) is used as
//! 1.6 uses it — a bearer token, Claude Code's identity, betas and tool names — refreshed
//! before it expires, once, under the lock both programs take, with a refused refresh telling
//! the user to sign in again; and `pi auth login anthropic` signs in through a loopback
//! callback or a pasted code, against a mock authorization server.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::common::ts_pi::TsPi;
use crate::common::{write_json, MockModel, TestAgent, Turn};

const MODEL: &str = "anthropic/claude-sonnet-4-5";

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A token endpoint that rotates refresh tokens as Anthropic's does: each refresh token works
/// once, and the answer carries the next. It counts the grants it was sent. Its clock is a
/// quarter of a century slow (its `Date` header): a token's life is `expires_in` from the
/// moment it arrives, by the local clock, so a skewed server changes nothing.
struct TokenServer {
    server: MockServer,
    grants: Arc<Mutex<Vec<Value>>>,
}

impl TokenServer {
    async fn start(first_refresh: &str) -> TokenServer {
        let server = MockServer::start().await;
        let grants = Arc::new(Mutex::new(Vec::new()));
        let valid = Arc::new(Mutex::new(first_refresh.to_string()));
        let issued = Arc::new(AtomicUsize::new(0));
        let (g, v) = (grants.clone(), valid.clone());
        Mock::given(method("POST"))
            .and(path("/v1/oauth/token"))
            .respond_with(move |req: &Request| {
                let grant: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
                g.lock().unwrap().push(grant.clone());
                let n = issued.fetch_add(1, Ordering::SeqCst) + 1;
                let ok = |refresh: String| {
                    ResponseTemplate::new(200)
                        .insert_header("date", "Sat, 01 Jan 2000 00:00:00 GMT")
                        .set_body_json(json!({
                        "access_token": format!("sk-ant-oat01-access-{n}"),
                        "refresh_token": refresh, "expires_in": 28800}))
                };
                match grant["grant_type"].as_str() {
                    Some("refresh_token") => {
                        let mut current = v.lock().unwrap();
                        if grant["refresh_token"].as_str() != Some(current.as_str()) {
                            return ResponseTemplate::new(400)
                                .set_body_json(json!({"error": "invalid_grant",
                                    "error_description": "Refresh token not found or invalid"}));
                        }
                        *current = format!("refresh-{n}");
                        ok(current.clone())
                    }
                    Some("authorization_code") if grant["code"] == "the-code" => {
                        ok(format!("refresh-{n}"))
                    }
                    _ => {
                        ResponseTemplate::new(400).set_body_json(json!({"error": "invalid_grant"}))
                    }
                }
            })
            .mount(&server)
            .await;
        TokenServer { server, grants }
    }

    fn url(&self) -> String {
        format!("{}/v1/oauth/token", self.server.uri())
    }

    fn grants(&self) -> Vec<Value> {
        self.grants.lock().unwrap().clone()
    }
}

/// An agent whose `anthropic` provider is the mock, with a stored login expiring at `expires`.
fn agent_with_login(mock: &MockModel, tokens: &TokenServer, expires: i64) -> TestAgent {
    let mut agent = TestAgent::new();
    agent.write_models(&json!({"providers": {"anthropic": {"baseUrl": mock.uri()}}}));
    write_json(
        &agent.agent_dir.join("auth.json"),
        &json!({"anthropic": {"type": "oauth", "refresh": "refresh-0",
            "access": "sk-ant-oat01-stored", "expires": expires}}),
    );
    agent.env("PI_OAUTH_ANTHROPIC_TOKEN_URL", &tokens.url());
    agent
}

fn auth(agent: &TestAgent) -> Value {
    let text = std::fs::read_to_string(agent.agent_dir.join("auth.json")).expect("auth.json");
    serde_json::from_str(&text).expect("auth.json parses")
}

#[tokio::test]
async fn a_stored_claude_login_is_sent_as_claude_code_sends_it() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("Bash", json!({"command": "echo from-the-tool"}))]),
        Turn::text("done"),
    ])
    .await;
    let tokens = TokenServer::start("refresh-0").await;
    let mut agent = agent_with_login(&mock, &tokens, now_ms() + 3_600_000);
    // A stored login owns its provider: the environment's key is not used for it.
    agent.env("ANTHROPIC_API_KEY", "sk-ant-api-should-not-be-sent");
    let out = agent.run(&["--model", MODEL, "-p", "run it"]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "done\n");
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2, "{out}");
    let h = &reqs[0].headers;
    assert_eq!(h["authorization"], "Bearer sk-ant-oat01-stored");
    assert!(!h.contains_key("x-api-key"), "{h:?}");
    assert!(
        h["anthropic-beta"].starts_with("claude-code-20250219,oauth-2025-04-20"),
        "{h:?}"
    );
    assert_eq!(h["x-app"], "cli");
    assert!(h["user-agent"].starts_with("claude-cli/"), "{h:?}");
    let body = &reqs[0].body;
    assert_eq!(
        body["system"][0]["text"],
        "You are Claude Code, Anthropic's official CLI for Claude."
    );
    assert!(
        body["system"][1]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("pi"),
        "pi's own prompt follows: {body:#}"
    );
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(tools, ["Read", "Bash", "Edit", "Write"]);
    // The model's `Bash` ran pi's bash, and is replayed under Claude Code's name.
    let second = reqs[1].body.to_string();
    assert!(second.contains("from-the-tool"), "{second}");
    assert!(second.contains(r#""name":"Bash""#), "{second}");
    assert!(tokens.grants().is_empty(), "a fresh token is not refreshed");
}

#[tokio::test]
async fn an_expiring_login_is_refreshed_once_stored_and_read_by_pi_1_6() {
    let mock = MockModel::start(vec![Turn::text("one"), Turn::text("two")]).await;
    let tokens = TokenServer::start("refresh-0").await;
    let agent = agent_with_login(&mock, &tokens, now_ms() + 60_000);
    let mut stored = auth(&agent);
    stored["anthropic"]["accountId"] = json!("kept");
    write_json(&agent.agent_dir.join("auth.json"), &stored);

    let out = agent.run(&["--model", MODEL, "-p", "hi"]).await;
    out.assert_ok();
    let reqs = mock.requests();
    assert_eq!(
        reqs[0].headers["authorization"],
        "Bearer sk-ant-oat01-access-1"
    );
    let grants = tokens.grants();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0]["grant_type"], "refresh_token");
    assert_eq!(grants[0]["refresh_token"], "refresh-0");
    assert_eq!(
        grants[0]["client_id"],
        "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
    );
    let entry = &auth(&agent)["anthropic"];
    assert_eq!(entry["access"], "sk-ant-oat01-access-1");
    assert_eq!(entry["refresh"], "refresh-1");
    assert_eq!(
        entry["accountId"], "kept",
        "fields pi does not know survive"
    );
    let expires = entry["expires"].as_i64().unwrap();
    let expected = now_ms() + 8 * 3_600_000 - 5 * 60_000;
    assert!(
        (expected - 60_000..=expected).contains(&expires),
        "8 h less the 5 min margin, by the local clock whatever the server's: {expires} vs {expected}"
    );

    // The next run uses the stored token without refreshing.
    agent
        .run(&["--model", MODEL, "-p", "again"])
        .await
        .assert_ok();
    assert_eq!(tokens.grants().len(), 1);

    let Some(ts) = TsPi::find_v1_6() else { return };
    let check = ts
        .run(
            &agent,
            &["auth", "check", "--provider", "anthropic", "--json"],
        )
        .await;
    check.assert_ok();
    let v: Value = serde_json::from_str(check.stdout.trim()).expect("json");
    assert_eq!(v["status"], "ready", "{check}");
}

#[tokio::test]
async fn two_pis_refreshing_the_same_login_at_once_lose_no_token() {
    let mock = MockModel::start(vec![Turn::text("a"), Turn::text("b"), Turn::text("c")]).await;
    let tokens = TokenServer::start("refresh-0").await;
    let agent = agent_with_login(&mock, &tokens, now_ms() - 1_000);
    let run = || agent.run(&["--model", MODEL, "-p", "hi"]);
    let (a, b, c) = tokio::join!(run(), run(), run());
    for out in [&a, &b, &c] {
        out.assert_ok();
    }
    // A rotated refresh token works once: a second refresh with the old one would have failed.
    assert_eq!(tokens.grants().len(), 1, "{:#?}", tokens.grants());
    assert_eq!(auth(&agent)["anthropic"]["refresh"], "refresh-1");
    assert!(!agent.agent_dir.join("auth.json.lock").exists());
}

#[tokio::test]
async fn two_pis_and_pi_1_6_refreshing_the_same_login_at_once_lose_no_token() {
    let Some(ts) = TsPi::find_v1_6() else { return };
    let turns = (0..3).map(|i| Turn::text(&format!("r{i}"))).collect();
    let mock = MockModel::start(turns).await;
    let tokens = TokenServer::start("refresh-0").await;
    let mut agent = agent_with_login(&mock, &tokens, now_ms() - 1_000);
    let redirect =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ts-pi/token-url-redirect.mjs");
    agent.env("NODE_OPTIONS", &format!("--import={}", redirect.display()));
    let args = ["--model", MODEL, "-p", "hi"];
    let (a, b, theirs) = tokio::join!(agent.run(&args), agent.run(&args), ts.run(&agent, &args));
    for out in [&a, &b, &theirs] {
        out.assert_ok();
    }
    // Whoever came first refreshed; the others found the rotated tokens under the lock.
    assert_eq!(tokens.grants().len(), 1, "{:#?}", tokens.grants());
    assert_eq!(auth(&agent)["anthropic"]["refresh"], "refresh-1");
    for req in mock.requests() {
        assert_eq!(req.headers["authorization"], "Bearer sk-ant-oat01-access-1");
    }
}

#[tokio::test]
async fn a_refused_refresh_says_to_sign_in_again_and_keeps_the_file() {
    let mock = MockModel::start(vec![Turn::text("never")]).await;
    let tokens = TokenServer::start("a-different-refresh-token").await;
    let agent = agent_with_login(&mock, &tokens, now_ms() - 1_000);
    let before = std::fs::read(agent.agent_dir.join("auth.json")).unwrap();
    let out = agent.run(&["--model", MODEL, "-p", "hi"]).await;
    assert_ne!(out.code, Some(0), "{out}");
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("pi auth login anthropic"), "{out}");
    assert!(all.contains("Refresh token not found or invalid"), "{out}");
    assert!(mock.requests().is_empty(), "no request without a token");
    assert_eq!(
        std::fs::read(agent.agent_dir.join("auth.json")).unwrap(),
        before
    );
}

type Lines = tokio::io::Lines<BufReader<tokio::process::ChildStdout>>;

/// A `pi auth login <provider>` in progress.
pub(crate) struct Login {
    child: tokio::process::Child,
    pub(crate) url: reqwest::Url,
    pub(crate) stdin: tokio::process::ChildStdin,
    stdout: Lines,
    /// What it printed before the URL, and the URL's line.
    pub(crate) before: String,
}

impl Login {
    /// The next line it prints (kept in `before` too).
    pub(crate) async fn next_line(&mut self) -> String {
        let line =
            tokio::time::timeout(std::time::Duration::from_secs(30), self.stdout.next_line())
                .await
                .expect("pi prints on")
                .expect("read stdout")
                .expect("stdout ended");
        self.before.push_str(&line);
        self.before.push('\n');
        line
    }

    /// Waits for the exit; `(exit code, all it printed on stdout and stderr)`.
    pub(crate) async fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin);
        let mut rest = std::mem::take(&mut self.before);
        while let Ok(Some(line)) = self.stdout.next_line().await {
            rest.push_str(&line);
            rest.push('\n');
        }
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut rest).await;
        }
        let status = tokio::time::timeout(crate::common::RUN_TIMEOUT, self.child.wait())
            .await
            .expect("pi finishes")
            .expect("wait");
        (status.code(), rest)
    }
}

/// `pi auth login anthropic` started with a pipe for stdin, once it has printed its URL.
async fn start_login(agent: &TestAgent) -> Login {
    start_login_with(agent, &[]).await
}

/// `pi auth login anthropic <extra…>`, as [`start_login`].
async fn start_login_with(agent: &TestAgent, extra: &[&str]) -> Login {
    start_provider_login(agent, "anthropic", extra).await
}

/// `pi auth login <provider> <extra…>`, once it has printed the first URL (the sign-in page
/// or the device-code page).
pub(crate) async fn start_provider_login(
    agent: &TestAgent,
    provider: &str,
    extra: &[&str],
) -> Login {
    let mut args = vec!["auth", "login", provider];
    args.extend_from_slice(extra);
    let mut cmd = agent.command(&args);
    cmd.stdin(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn pi");
    let stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut before = String::new();
    let url = loop {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("pi prints the URL")
            .expect("read stdout")
            .expect("stdout ended before the URL");
        before.push_str(&line);
        before.push('\n');
        if let Some(start) = line.find("http") {
            let url = line[start..].split_whitespace().next().unwrap_or_default();
            break reqwest::Url::parse(url).expect("a URL");
        }
    };
    Login {
        child,
        url,
        stdin,
        stdout: lines,
        before,
    }
}

/// What a browser coming back to `url` (plain http) gets: `(status, body)`.
pub(crate) async fn browser_get(url: &str) -> (u16, String) {
    let url = reqwest::Url::parse(url).expect("url");
    let addr = format!("127.0.0.1:{}", url.port().expect("port"));
    let mut conn = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let target = format!("{}?{}", url.path(), url.query().unwrap_or_default());
    let request = format!("GET {target} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n");
    conn.write_all(request.as_bytes()).await.expect("send");
    let mut reply = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut conn, &mut reply)
        .await
        .expect("read");
    let status = reply
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, reply)
}

pub(crate) fn query(url: &reqwest::Url, key: &str) -> String {
    url.query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

fn login_agent(tokens: &TokenServer) -> TestAgent {
    let mut agent = TestAgent::new();
    agent.env("PI_OAUTH_ANTHROPIC_TOKEN_URL", &tokens.url());
    agent.env(
        "PI_OAUTH_ANTHROPIC_AUTHORIZE_URL",
        "https://auth.test/oauth/authorize",
    );
    agent
}

#[tokio::test]
async fn signing_in_through_the_loopback_callback_stores_1_6s_entry() {
    let tokens = TokenServer::start("unused").await;
    let agent = login_agent(&tokens);
    let login = start_login(&agent).await;
    let url = login.url.clone();
    assert_eq!(url.host_str(), Some("auth.test"));
    assert_eq!(
        query(&url, "client_id"),
        "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
    );
    assert_eq!(query(&url, "code_challenge_method"), "S256");
    let redirect = query(&url, "redirect_uri");
    let state = query(&url, "state");
    assert!(redirect.starts_with("http://localhost:"), "{redirect}");

    // A request with another state is turned away; the real one completes the sign-in.
    let (status, _) = browser_get(&format!("{redirect}?code=the-code&state=forged")).await;
    assert_eq!(status, 400);
    let (status, page) = browser_get(&format!("{redirect}?code=the-code&state={state}")).await;
    assert_eq!(status, 200);
    assert!(page.contains("Signed in"), "{page}");
    let (code, stderr) = login.finish().await;
    assert_eq!(code, Some(0), "{stderr}");
    let grant = &tokens.grants()[0];
    assert_eq!(grant["grant_type"], "authorization_code");
    assert_eq!(grant["redirect_uri"], redirect);
    // The verifier pi sends is the one the challenge was made from.
    use base64::Engine as _;
    use sha2::Digest as _;
    let verifier = grant["code_verifier"].as_str().unwrap();
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()));
    assert_eq!(challenge, query(&url, "code_challenge"));
    let entry = &auth(&agent)["anthropic"];
    assert_eq!(entry["type"], "oauth");
    assert_eq!(entry["access"], "sk-ant-oat01-access-1");
    assert_eq!(entry["refresh"], "refresh-1");
    assert!(entry["expires"].as_i64().unwrap() > now_ms());
}

#[tokio::test]
async fn a_pasted_code_signs_in_and_a_foreign_one_is_refused() {
    let tokens = TokenServer::start("unused").await;
    let agent = login_agent(&tokens);
    let mut login = start_login(&agent).await;
    login
        .stdin
        .write_all(b"the-code#not-this-sign-ins-state\n")
        .await
        .unwrap();
    let (code, stderr) = login.finish().await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("state mismatch"), "{stderr}");
    assert!(
        !agent.agent_dir.join("auth.json").exists(),
        "nothing stored"
    );
    assert!(tokens.grants().is_empty());

    let mut login = start_login(&agent).await;
    let state = query(&login.url, "state");
    login
        .stdin
        .write_all(format!("the-code#{state}\n").as_bytes())
        .await
        .unwrap();
    let (code, stderr) = login.finish().await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(auth(&agent)["anthropic"]["refresh"], "refresh-1");
}

#[tokio::test]
async fn no_browser_takes_the_copy_code_login_in_1_6s_words() {
    let tokens = TokenServer::start("unused").await;
    let agent = login_agent(&tokens);
    let mut login = start_login_with(&agent, &["--no-browser"]).await;
    assert!(
        login
            .before
            .starts_with("Select Anthropic login method: Copy code login (headless)\nOpen this URL to sign in:\n"),
        "{}",
        login.before
    );
    let redirect = query(&login.url, "redirect_uri");
    assert_eq!(redirect, "https://platform.claude.com/oauth/code/callback");
    let state = query(&login.url, "state");
    login
        .stdin
        .write_all(format!("the-code#{state}\n").as_bytes())
        .await
        .unwrap();
    let (code, printed) = login.finish().await;
    assert_eq!(code, Some(0), "{printed}");
    assert!(
        printed.contains("Complete login in your browser, then copy the code Anthropic shows"),
        "{printed}"
    );
    assert!(
        printed.contains("Exchanging authorization code for tokens..."),
        "{printed}"
    );
    assert!(printed.contains("Logged in to Anthropic"), "{printed}");
    assert_eq!(tokens.grants()[0]["redirect_uri"], redirect);
    assert_eq!(auth(&agent)["anthropic"]["refresh"], "refresh-1");
}

#[tokio::test]
async fn the_browser_login_names_the_headless_one_as_1_6_does() {
    let tokens = TokenServer::start("unused").await;
    let agent = login_agent(&tokens);
    let login = start_login(&agent).await;
    let (code, printed) = login.finish().await;
    assert_eq!(code, Some(1), "nothing pasted: {printed}");
    assert!(
        printed.contains(
            "To use \"Copy code login (headless)\" instead, run \"pi auth login anthropic --no-browser\""
        ),
        "{printed}"
    );
    assert!(printed.contains("Login cancelled."), "{printed}");
}

#[tokio::test]
async fn the_login_request_is_pi_1_6s() {
    let Some(ts) = TsPi::find_v1_6() else { return };
    let turns = || {
        vec![
            Turn::tools(&[("Bash", json!({"command": "echo from-the-tool"}))]),
            Turn::text("done"),
        ]
    };
    let tokens = TokenServer::start("refresh-0").await;
    let (ours, theirs) = (
        MockModel::start(turns()).await,
        MockModel::start(turns()).await,
    );
    let our_agent = agent_with_login(&ours, &tokens, now_ms() + 3_600_000);
    let their_agent = agent_with_login(&theirs, &tokens, now_ms() + 3_600_000);
    // Both think at the default level (`medium`), so the interleaved-thinking beta is sent.
    let args = ["--model", MODEL, "-p", "run it"];
    our_agent.run(&args).await.assert_ok();
    ts.run(&their_agent, &args).await.assert_ok();
    let (ours, theirs) = (ours.requests(), theirs.requests());
    assert_eq!(ours.len(), theirs.len());
    for (o, t) in ours.iter().zip(&theirs) {
        for h in [
            "authorization",
            "anthropic-beta",
            "anthropic-version",
            "user-agent",
            "x-app",
            "anthropic-dangerous-direct-browser-access",
        ] {
            assert_eq!(o.headers.get(h), t.headers.get(h), "header {h}");
        }
        assert_eq!(o.body["system"][0], t.body["system"][0]);
        let names = |b: &Value| -> Vec<String> {
            b["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["name"].as_str().map(String::from))
                .collect()
        };
        assert_eq!(names(&o.body), names(&t.body));
        let tool_uses = |b: &Value| -> Vec<Value> {
            b["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                .filter(|c| c["type"] == "tool_use")
                .map(|c| c["name"].clone())
                .collect()
        };
        assert_eq!(tool_uses(&o.body), tool_uses(&t.body));
    }
}

#[tokio::test]
async fn a_printed_bearer_token_has_the_life_asked_for_renewed_under_the_lock() {
    let mock = MockModel::start(vec![]).await;
    let tokens = TokenServer::start("refresh-0").await;
    // Twenty minutes left: enough for `--min-expiry 10m` and for a check, not for the
    // default half hour of print-bearer-token.
    let agent = agent_with_login(&mock, &tokens, now_ms() + 20 * 60_000);
    let print = ["auth", "print-bearer-token", "--provider", "anthropic"];
    let out = agent
        .run(&[&print[..], &["--min-expiry", "10m"]].concat())
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "sk-ant-oat01-stored\n");
    let out = agent
        .run(&["auth", "check", "--provider", "anthropic", "--credentials"])
        .await;
    assert_eq!(out.stdout, "sk-ant-oat01-stored\n", "{out}");
    assert!(tokens.grants().is_empty(), "nothing asked for more life");

    let out = agent.run(&print).await;
    out.assert_ok();
    assert_eq!(out.stdout, "sk-ant-oat01-access-1\n");
    assert_eq!(tokens.grants().len(), 1);
    assert_eq!(auth(&agent)["anthropic"]["refresh"], "refresh-1", "stored");

    // Past its expiry, --no-refresh still prints what is stored and asks for nothing.
    let mut stored = auth(&agent);
    stored["anthropic"]["expires"] = json!(now_ms() - 1_000);
    write_json(&agent.agent_dir.join("auth.json"), &stored);
    let out = agent
        .run(&[
            "auth",
            "check",
            "--provider",
            "anthropic",
            "--credentials",
            "--no-refresh",
        ])
        .await;
    assert_eq!(out.stdout, "sk-ant-oat01-access-1\n", "{out}");
    assert_eq!(tokens.grants().len(), 1);
}

#[tokio::test]
async fn a_refused_renewal_while_printing_says_why_and_prints_nothing() {
    let mock = MockModel::start(vec![]).await;
    let tokens = TokenServer::start("a-different-refresh-token").await;
    let agent = agent_with_login(&mock, &tokens, now_ms() - 1_000);
    let out = agent
        .run(&["auth", "print-bearer-token", "--provider", "anthropic"])
        .await;
    out.assert_code(1);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("pi auth login anthropic"),
        "{}",
        out.stderr
    );
    let out = agent
        .run(&["auth", "check", "--provider", "anthropic", "--json"])
        .await;
    out.assert_code(2);
    assert!(out.stdout.contains(r#""status":"invalid""#), "{out}");
}

#[tokio::test]
async fn a_logins_tokens_reach_neither_hooks_nor_the_shell_nor_the_session() {
    use crate::common::hooks::{record_file, recorded_events, scripted, use_hooks};
    let mock = MockModel::start(vec![
        Turn::tools(&[("Bash", json!({"command": "env"}))]),
        Turn::text("done"),
    ])
    .await;
    let tokens = TokenServer::start("refresh-0").await;
    // Expired: the run refreshes it, so both the stored and the renewed token are in play.
    let agent = agent_with_login(&mock, &tokens, now_ms() - 1_000);
    let watch = scripted(
        &agent,
        "watch",
        json!({"subscriptions": [{"event": "before_provider_headers"}, {"event": "tool_result"}],
               "on": {"before_provider_headers": {"reply": {}}}}),
    );
    use_hooks(&agent, vec![watch]);
    let out = agent.run(&["--model", MODEL, "-p", "hi"]).await;
    out.assert_ok();
    assert_eq!(tokens.grants().len(), 1, "the login was renewed");
    assert_eq!(
        mock.requests()[0].headers["authorization"],
        "Bearer sk-ant-oat01-access-1"
    );

    let shown = recorded_events(&agent, "watch", "before_provider_headers");
    assert_eq!(shown.len(), 2, "{shown:?}");
    for e in &shown {
        assert_eq!(
            e["payload"]["headers"]["authorization"], "[redacted]",
            "{e}"
        );
    }
    let mut seen = std::fs::read_to_string(record_file(&agent, "watch")).expect("record");
    seen.push_str(&out.stdout);
    seen.push_str(&out.stderr);
    for f in walk(&agent.agent_dir.join("sessions")) {
        seen.push_str(&std::fs::read_to_string(f).unwrap_or_default());
    }
    assert!(
        seen.contains("PATH="),
        "the shell's env reached the transcript"
    );
    for token in [
        "sk-ant-oat01-stored",
        "sk-ant-oat01-access-1",
        "refresh-0",
        "refresh-1",
    ] {
        assert!(!seen.contains(token), "{token} leaked");
    }
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| {
            let p = e.path();
            if p.is_dir() {
                walk(&p)
            } else {
                vec![p]
            }
        })
        .collect()
}
