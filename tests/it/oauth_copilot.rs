//! GitHub Copilot logins end to end, against a mock of GitHub (the device login and the
//! Copilot token exchange) and of the account's Copilot endpoint (its model list and
//! policies on the mock model server, whose chat APIs serve the prompts): `pi auth login
//! github-copilot` stores 1.6's entry, prompts on every API Copilot's models use carry the
//! Copilot token and headers (never the GitHub token), an expired token is exchanged again, a
//! revoked GitHub token says to sign in again, and no token reaches hooks, logs or sessions.
//!
//! pi 1.6's own code runs against the same mocks where it is installed (requests to GitHub
//! and to the endpoint the token names redirected by `tests/ts-pi/copilot-redirect.mjs`): its
//! login and exchange (`tests/ts-pi/copilot-login.mjs`) send what pi sends and store what pi
//! stores, and its CLI reads the entry pi wrote and sends the same Copilot headers.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Value};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::common::hooks::{record_file, run_pi, scripted};
use crate::common::ts_pi::TsPi;
use crate::common::{write_json, MockModel, Output, TestAgent, Turn};

/// The GitHub token the device login hands out: it goes to GitHub alone.
const GITHUB_TOKEN: &str = "gho_github-token-LEAK";

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The `n`th Copilot token: it names the account's endpoint, `https://api.copilot.test`.
fn copilot_token(n: usize) -> String {
    format!(
        "tid=copilot-{n}-LEAK;exp=1;sku=copilot_for_individuals;proxy-ep=proxy.copilot.test;8kp=1"
    )
}

/// A request one of the mocks received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
    body: String,
    at: Instant,
}

fn seen(req: &Request) -> Seen {
    Seen {
        method: req.method.to_string(),
        path: req.url.path().to_string(),
        headers: req
            .headers
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
            .collect(),
        body: String::from_utf8_lossy(&req.body).into_owned(),
        at: Instant::now(),
    }
}

/// GitHub as far as a Copilot login talks to it: the device code, an access token after one
/// pending poll, and Copilot tokens for the GitHub token (401 once it is revoked).
struct GitHub {
    server: MockServer,
    seen: Arc<Mutex<Vec<Seen>>>,
    polls: Arc<AtomicUsize>,
    revoked: Arc<AtomicBool>,
    /// The Copilot tokens issued so far, and when each expires (seconds).
    issued: Arc<Mutex<Vec<i64>>>,
}

impl GitHub {
    async fn start() -> GitHub {
        let server = MockServer::start().await;
        let github = GitHub {
            server,
            seen: Arc::default(),
            polls: Arc::default(),
            revoked: Arc::default(),
            issued: Arc::default(),
        };
        let (log, polls, revoked, issued) = (
            github.seen.clone(),
            github.polls.clone(),
            github.revoked.clone(),
            github.issued.clone(),
        );
        Mock::given(wiremock::matchers::any())
            .respond_with(move |req: &Request| {
                log.lock().unwrap().push(seen(req));
                match (req.method.as_str(), req.url.path()) {
                    ("POST", "/login/device/code") => ResponseTemplate::new(200).set_body_json(
                        json!({"device_code": "device-1", "user_code": "ABCD-1234",
                        "verification_uri": "https://github.com/login/device",
                        "expires_in": 899, "interval": 0}),
                    ),
                    ("POST", "/login/oauth/access_token") => {
                        if polls.fetch_add(1, Ordering::SeqCst) == 0 {
                            return ResponseTemplate::new(200)
                                .set_body_json(json!({"error": "authorization_pending",
                                    "error_description": "not yet"}));
                        }
                        ResponseTemplate::new(200).set_body_json(json!({
                            "access_token": GITHUB_TOKEN, "token_type": "bearer",
                            "scope": "read:user"}))
                    }
                    ("GET", "/copilot_internal/v2/token") => {
                        let auth = req
                            .headers
                            .get("authorization")
                            .and_then(|v| v.to_str().ok());
                        if auth != Some(&format!("Bearer {GITHUB_TOKEN}"))
                            || revoked.load(Ordering::SeqCst)
                        {
                            return ResponseTemplate::new(401).set_body_json(json!({
                                "message": "Bad credentials",
                                "documentation_url": "https://docs.github.com/rest"}));
                        }
                        let mut issued = issued.lock().unwrap();
                        let expires_at = now_ms() / 1000 + 1800;
                        issued.push(expires_at);
                        ResponseTemplate::new(200).set_body_json(json!({
                            "token": copilot_token(issued.len()), "expires_at": expires_at,
                            "refresh_in": 1500}))
                    }
                    _ => ResponseTemplate::new(404),
                }
            })
            .mount(&github.server)
            .await;
        github
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Forgets what was asked, for another client's turn.
    fn forget(&self) {
        self.seen.lock().unwrap().clear();
        self.polls.store(0, Ordering::SeqCst);
    }

    fn expires_at(&self, n: usize) -> i64 {
        self.issued.lock().unwrap()[n - 1]
    }
}

/// The account's model list on the mock model server: three models its picker shows (one
/// whose policy is not set yet), one disabled, one outside the picker.
async fn mount_copilot_api(mock: &MockModel) {
    let models = json!({"data": [
        {"id": "gpt-6.1-sol", "model_picker_enabled": true, "policy": {"state": "enabled"}},
        {"id": "claude-sonnet-5", "model_picker_enabled": true,
            "policy": {"state": "unconfigured"}},
        {"id": "gemini-3.8-flash", "model_picker_enabled": true},
        {"id": "grok-4.7", "model_picker_enabled": true, "policy": {"state": "disabled"}},
        {"id": "claude-opus-5", "model_picker_enabled": false,
            "policy": {"state": "unconfigured"}},
    ]});
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(models))
        .mount(mock.server())
        .await;
    Mock::given(method("POST"))
        .and(path_regex(r"^/v1/models/[^/]+/policy$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"state": "enabled"})))
        .mount(mock.server())
        .await;
}

/// The models the account offers, as the mock lists them.
const AVAILABLE: [&str; 3] = ["gpt-6.1-sol", "claude-sonnet-5", "gemini-3.8-flash"];

/// What the mock model server received besides chat requests (`/v1/models…`).
async fn api_requests(mock: &MockModel) -> Vec<Seen> {
    let all = mock.server().received_requests().await.unwrap_or_default();
    all.iter()
        .filter(|r| r.url.path().starts_with("/v1/models"))
        .map(seen)
        .collect()
}

/// An agent whose Copilot endpoints are the mocks'.
fn agent_for(github: &GitHub, mock: &MockModel) -> TestAgent {
    let mut agent = TestAgent::new();
    let gh = github.server.uri();
    for (what, url) in [
        ("DEVICE_CODE_URL", format!("{gh}/login/device/code")),
        ("ACCESS_TOKEN_URL", format!("{gh}/login/oauth/access_token")),
        (
            "COPILOT_TOKEN_URL",
            format!("{gh}/copilot_internal/v2/token"),
        ),
        ("API_URL", format!("{}/v1", mock.uri())),
    ] {
        agent.env(&format!("PI_OAUTH_GITHUB_COPILOT_{what}"), &url);
    }
    // pi 1.6 reaches the same servers by their real names.
    let redirects = json!([
        ["https://github.com/", format!("{gh}/")],
        ["https://api.github.com/", format!("{gh}/")],
        // Copilot's chat APIs have no version prefix, its Messages API has `/v1`.
        [
            "https://api.copilot.test/v1/",
            format!("{}/v1/", mock.uri())
        ],
        ["https://api.copilot.test/", format!("{}/v1/", mock.uri())],
    ]);
    agent.env("PI_TEST_REDIRECTS", &redirects.to_string());
    let redirect = ts_pi_dir().join("copilot-redirect.mjs");
    agent.env("NODE_OPTIONS", &format!("--import={}", redirect.display()));
    agent
}

fn ts_pi_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ts-pi")
}

fn auth(agent: &TestAgent) -> Value {
    let text = std::fs::read_to_string(agent.agent_dir.join("auth.json")).expect("auth.json");
    serde_json::from_str(&text).expect("auth.json parses")
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

/// A stored login whose token `n` expires at `expires`, offering `available`.
fn store_login(agent: &TestAgent, n: usize, expires: i64, available: &[&str]) {
    write_json(
        &agent.agent_dir.join("auth.json"),
        &json!({"github-copilot": {"type": "oauth", "refresh": GITHUB_TOKEN,
            "access": copilot_token(n), "expires": expires, "availableModelIds": available}}),
    );
}

/// Runs pi 1.6's own Copilot login code (`login`, or `refresh` of `entry`) in `agent`'s
/// environment; the credential it returns.
async fn run_1_6(ts: &TsPi, agent: &TestAgent, args: &[&str]) -> Value {
    let mut cmd = tokio::process::Command::new(ts.node());
    cmd.arg(ts_pi_dir().join("copilot-login.mjs"))
        .args(args)
        .current_dir(ts_pi_dir())
        .env_clear()
        .env("HOME", &agent.home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(agent.extra_env().iter().map(|(k, v)| (k, v)))
        .kill_on_drop(true);
    let out = tokio::time::timeout(crate::common::RUN_TIMEOUT, cmd.output())
        .await
        .expect("1.6 finishes")
        .expect("node runs");
    let out = Output::from(out);
    out.assert_ok();
    serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// What a client sent GitHub or the Copilot endpoint, without what its HTTP stack adds.
fn shape(requests: &[Seen]) -> Vec<(String, String, String, BTreeMap<String, String>)> {
    const SENT: [&str; 10] = [
        "accept",
        "authorization",
        "content-type",
        "user-agent",
        "editor-version",
        "editor-plugin-version",
        "copilot-integration-id",
        "x-github-api-version",
        "openai-intent",
        "x-interaction-type",
    ];
    requests
        .iter()
        .map(|r| {
            let headers = r
                .headers
                .iter()
                .filter(|(k, _)| SENT.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            (r.method.clone(), r.path.clone(), r.body.clone(), headers)
        })
        .collect()
}

#[tokio::test]
async fn signing_in_stores_1_6s_entry_as_1_6s_own_login_does() {
    let github = GitHub::start().await;
    let mock = MockModel::start(vec![]).await;
    mount_copilot_api(&mock).await;
    let agent = agent_for(&github, &mock);
    // A blank answer to the Enterprise question: github.com.
    let out = agent
        .run_with_stdin(
            &["auth", "login", "github-copilot", "--no-browser"],
            Some("\n"),
        )
        .await;
    out.assert_ok();
    assert_eq!(
        out.stdout,
        format!(
            "Open https://github.com/login/device and enter code: ABCD-1234\n\
             Waiting for authentication...\nEnabling models...\n\
             Logged in to GitHub Copilot. Credentials saved to {}\n",
            agent.agent_dir.join("auth.json").display()
        )
    );
    let entry = auth(&agent)["github-copilot"].clone();
    assert_eq!(
        keys(&entry),
        ["type", "refresh", "access", "expires", "availableModelIds"]
    );
    assert_eq!(entry["type"], "oauth");
    assert_eq!(
        entry["refresh"], GITHUB_TOKEN,
        "the GitHub token is the refresh"
    );
    assert_eq!(entry["access"], copilot_token(1));
    assert_eq!(
        entry["expires"],
        github.expires_at(1) * 1000 - 5 * 60 * 1000
    );
    assert_eq!(entry["availableModelIds"], json!(AVAILABLE));

    let asked = github.seen();
    let paths: Vec<&str> = asked.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/login/device/code",
            "/login/oauth/access_token",
            "/login/oauth/access_token",
            "/copilot_internal/v2/token"
        ]
    );
    assert!(
        asked[1].at - asked[0].at >= std::time::Duration::from_millis(900),
        "GitHub's one-interval wait before the first poll (the minimum second)"
    );
    assert_eq!(
        asked[1].body,
        "client_id=Iv1.b507a08c87ecfe98&device_code=device-1\
         &grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code"
    );
    let api = api_requests(&mock).await;
    let api_paths: Vec<&str> = api.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        api_paths,
        ["/v1/models", "/v1/models/claude-sonnet-5/policy"]
    );
    assert_eq!(api[1].body, r#"{"state":"enabled"}"#);
    for r in &api {
        assert_eq!(
            r.headers["authorization"],
            format!("Bearer {}", copilot_token(1))
        );
    }
    // pi lists what the account offers.
    let listed = agent.run(&["--list-models", "github-copilot"]).await;
    listed.assert_ok();
    let ids = listed_ids(&listed);
    assert_eq!(ids, ["claude-sonnet-5", "gemini-3.8-flash", "gpt-6.1-sol"]);

    let Some(ts) = TsPi::find_v1_6() else { return };
    github.forget();
    mock.server().reset().await;
    mount_copilot_api(&mock).await;
    let theirs = run_1_6(&ts, &agent, &["login"]).await;
    assert_eq!(keys(&theirs), keys(&entry), "{theirs}");
    assert_eq!(theirs["refresh"], entry["refresh"]);
    assert_eq!(theirs["access"], copilot_token(2));
    assert_eq!(
        theirs["expires"],
        github.expires_at(2) * 1000 - 5 * 60 * 1000
    );
    assert_eq!(theirs["availableModelIds"], entry["availableModelIds"]);
    assert_eq!(
        shape(&github.seen()),
        shape(&asked),
        "pi asks GitHub as 1.6 does"
    );
    let mut api_theirs = api_requests(&mock).await;
    // The tokens differ by their number only.
    for r in &mut api_theirs {
        let token = format!("Bearer {}", copilot_token(1));
        r.headers.insert("authorization".into(), token);
    }
    assert_eq!(shape(&api_theirs), shape(&api));
    // 1.6 lists the same models from the entry pi wrote.
    let listed = ts.run(&agent, &["--list-models", "github-copilot"]).await;
    listed.assert_ok();
    assert_eq!(listed_ids(&listed), ids, "{listed}");
}

/// The model column of a `--list-models` table.
fn listed_ids(out: &Output) -> Vec<String> {
    let table = if out.stdout.trim().is_empty() {
        &out.stderr
    } else {
        &out.stdout
    };
    table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect()
}

/// The Copilot headers of a model request, whichever client sent it.
fn copilot_headers(h: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    const COPILOT: [&str; 9] = [
        "authorization",
        "user-agent",
        "editor-version",
        "editor-plugin-version",
        "copilot-integration-id",
        "x-initiator",
        "openai-intent",
        "copilot-vision-request",
        "x-api-key",
    ];
    h.iter()
        .filter(|(k, _)| COPILOT.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[tokio::test]
async fn prompts_go_to_the_accounts_endpoint_with_the_copilot_token_on_every_api() {
    let github = GitHub::start().await;
    let ts = TsPi::find_v1_6();
    for (model, wire_path) in [
        ("claude-sonnet-5", "/v1/messages"),
        ("gemini-3.8-flash", "/v1/chat/completions"),
        ("gpt-6.1-sol", "/v1/responses"),
    ] {
        let turns = || {
            vec![
                Turn::tools(&[("bash", json!({"command": "echo from-the-tool"}))]),
                Turn::text("done"),
            ]
        };
        let mock = MockModel::start(turns()).await;
        let agent = agent_for(&github, &mock);
        store_login(&agent, 7, now_ms() + 3_600_000, &AVAILABLE);
        let id = format!("github-copilot/{model}");
        let out = agent.run(&["--model", &id, "-p", "run it"]).await;
        out.assert_ok();
        assert_eq!(out.stdout, "done\n", "{model}");
        let ours = mock.requests();
        assert_eq!(ours.len(), 2, "{model}: {out}");
        for (r, initiator) in ours.iter().zip(["user", "agent"]) {
            assert_eq!(r.path, wire_path, "{model}");
            let h = &r.headers;
            assert_eq!(h["authorization"], format!("Bearer {}", copilot_token(7)));
            assert_eq!(h["x-initiator"], initiator, "{model}");
            assert_eq!(h["openai-intent"], "conversation-edits");
            assert_eq!(h["user-agent"], "GitHubCopilotChat/0.35.0");
            assert_eq!(h["editor-version"], "vscode/1.107.0");
            assert_eq!(h["editor-plugin-version"], "copilot-chat/0.35.0");
            assert_eq!(h["copilot-integration-id"], "vscode-chat");
            assert!(!h.contains_key("copilot-vision-request"), "{h:?}");
            let all = format!("{h:?}{}", r.body);
            assert!(
                !all.contains("gho_"),
                "the GitHub token went to the model: {all}"
            );
        }
        assert!(ours[1].body.to_string().contains("from-the-tool"));
        assert!(github.seen().is_empty(), "a fresh token is not exchanged");

        let Some(ts) = &ts else { continue };
        let mock = MockModel::start(turns()).await;
        let agent_1_6 = agent_for(&github, &mock);
        std::fs::copy(
            agent.agent_dir.join("auth.json"),
            agent_1_6.agent_dir.join("auth.json"),
        )
        .expect("copy auth.json");
        let theirs = ts.run(&agent_1_6, &["--model", &id, "-p", "run it"]).await;
        theirs.assert_ok();
        let theirs = mock.requests();
        assert_eq!(theirs.len(), 2, "{model}");
        for (a, b) in ours.iter().zip(&theirs) {
            assert_eq!(b.path, a.path, "{model}");
            assert_eq!(
                copilot_headers(&a.headers),
                copilot_headers(&b.headers),
                "{model}: pi's Copilot headers are 1.6's"
            );
        }
    }
}

#[tokio::test]
async fn the_tokens_never_reach_hooks_logs_or_sessions() {
    let github = GitHub::start().await;
    let mock = MockModel::start(vec![
        Turn::tools(&[("bash", json!({"command": "env; echo done-with-env"}))]),
        Turn::text("kept"),
    ])
    .await;
    let agent = agent_for(&github, &mock);
    store_login(&agent, 3, now_ms() - 1_000, &AVAILABLE);
    mount_copilot_api(&mock).await;
    let watch = scripted(
        &agent,
        "watch",
        json!({"subscriptions": [{"event": "before_provider_headers"},
            {"event": "before_provider_request"}, {"event": "tool_call"}],
            "on": {"before_provider_headers": {"reply": {}},
                "before_provider_request": {"reply": {}}}}),
    );
    agent.write_settings(&json!({"hooks": [watch], "retry": {"enabled": false}}));
    let out = run_pi(
        &agent,
        &[
            "--model",
            "github-copilot/gemini-3.8-flash",
            "--verbose",
            "-p",
            "hi",
        ],
    )
    .await;
    out.assert_ok();
    let reqs = mock.requests();
    assert_eq!(
        reqs[0].headers["authorization"],
        format!("Bearer {}", copilot_token(1))
    );
    let tool_output = reqs[1].body.to_string();
    assert!(tool_output.contains("done-with-env"), "{tool_output}");
    assert!(
        !tool_output.contains("LEAK"),
        "a token reached the bash tool"
    );
    let record = std::fs::read_to_string(record_file(&agent, "watch")).expect("record");
    assert!(record.contains("before_provider_headers"), "{record}");
    assert!(!record.contains("LEAK"), "a token reached a hook: {record}");
    assert!(
        !out.stderr.contains("LEAK"),
        "a token reached the log: {out}"
    );
    assert!(!out.stdout.contains("LEAK"), "{out}");
    for f in crate::sessions::session_files(&agent) {
        let text = std::fs::read_to_string(f).expect("session");
        assert!(!text.contains("LEAK"), "a token reached the session");
    }
}

#[tokio::test]
async fn an_expired_token_is_exchanged_again_and_a_revoked_login_says_sign_in_again() {
    let github = GitHub::start().await;
    let mock = MockModel::start(vec![Turn::text("renewed")]).await;
    mount_copilot_api(&mock).await;
    let agent = agent_for(&github, &mock);
    store_login(&agent, 0, now_ms() - 1_000, &["gpt-6.1-sol"]);
    let expired = auth(&agent)["github-copilot"].clone();
    let out = agent
        .run(&["--model", "github-copilot/claude-sonnet-5", "-p", "hi"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "renewed\n");
    let asked = github.seen();
    assert_eq!(asked.len(), 1, "one exchange: {asked:?}");
    assert_eq!(asked[0].path, "/copilot_internal/v2/token");
    assert_eq!(
        asked[0].headers["authorization"],
        format!("Bearer {GITHUB_TOKEN}")
    );
    let api = api_requests(&mock).await;
    let api_paths: Vec<&str> = api.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        api_paths,
        ["/v1/models"],
        "no policy is changed on an exchange"
    );
    assert_eq!(
        mock.requests()[0].headers["authorization"],
        format!("Bearer {}", copilot_token(1))
    );
    let entry = auth(&agent)["github-copilot"].clone();
    assert_eq!(
        entry,
        json!({"type": "oauth", "refresh": GITHUB_TOKEN, "access": copilot_token(1),
            "expires": github.expires_at(1) * 1000 - 5 * 60 * 1000,
            "availableModelIds": AVAILABLE})
    );
    assert_eq!(keys(&entry), keys(&expired));

    if let Some(ts) = TsPi::find_v1_6() {
        github.forget();
        let theirs = run_1_6(&ts, &agent, &["refresh", &expired.to_string()]).await;
        assert_eq!(keys(&theirs), keys(&entry), "{theirs}");
        assert_eq!(theirs["availableModelIds"], entry["availableModelIds"]);
        assert_eq!(theirs["refresh"], GITHUB_TOKEN);
        assert_eq!(
            shape(&github.seen()),
            shape(&asked),
            "1.6 exchanges as pi does"
        );
    }

    // GitHub no longer takes the GitHub token: the user must sign in again.
    github.revoked.store(true, Ordering::SeqCst);
    store_login(&agent, 0, now_ms() - 1_000, &["gpt-6.1-sol"]);
    let before = std::fs::read(agent.agent_dir.join("auth.json")).unwrap();
    let served = mock.requests().len();
    let out = agent
        .run(&["--model", "github-copilot/claude-sonnet-5", "-p", "hi"])
        .await;
    assert_ne!(out.code, Some(0), "{out}");
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("sign in again with `pi auth login github-copilot`"),
        "{out}"
    );
    assert!(all.contains("401 Unauthorized"), "{out}");
    assert!(!all.contains("LEAK"), "no token in the message: {out}");
    assert_eq!(mock.requests().len(), served, "no request without a token");
    assert_eq!(
        std::fs::read(agent.agent_dir.join("auth.json")).unwrap(),
        before
    );
}
