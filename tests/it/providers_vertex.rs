//! Vertex AI (`google-vertex`) end to end through the binary, against the mock server's
//! Vertex routes and its OAuth token endpoint (`/token`, which the credentials files name as
//! their `token_uri`; `GOOGLE_VERTEX_BASE_URL` sends the model requests to the mock as it sends
//! the SDK's): a service account's signed assertion exchanged once for a token every request
//! then carries, gcloud's `authorized_user` file refreshed with its quota project, express
//! mode's key, thinking, tool calls and usage, a 429 retried, a refused token naming the file,
//! an abort mid-stream, the credentials never shown to hooks, logs or sessions, and
//! `--list-models` deciding as pi 1.6 does when Vertex counts as configured. The service
//! account's RSA key is made for the run and signs for an account that exists nowhere.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::hooks::{record_file, recorded_events, scripted, use_hooks};
use crate::common::mock::MOCK_ACCESS_TOKEN;
use crate::common::mock_google::{CALL_SIGNATURE, THOUGHT_SIGNATURE, THOUGHT_TOKENS};
use crate::common::ts_pi::TsPi;
use crate::common::{of_type, path_str, wait_until, MockModel, MockUsage, TestAgent, Turn};
use crate::providers_responses::two_tool_turns;

const MODEL: &str = "google-vertex/gemini-3-flash-preview";
const PROJECT: &str = "my-project";
const LOCATION: &str = "us-central1";
const EMAIL: &str = "pi-test@sa-project.iam.gserviceaccount.com";
const REFRESH_TOKEN: &str = "1//refresh-token-SECRET";
const CLIENT_SECRET: &str = "client-secret-SECRET";

fn rsa_key() -> &'static rsa::PrivateKey {
    static KEY: OnceLock<rsa::PrivateKey> = OnceLock::new();
    KEY.get_or_init(|| {
        use rsa::Generate;
        rsa::PrivateKey::generate()
    })
}

fn key_pem() -> String {
    use rsa::pkcs8::EncodePrivateKey;
    rsa_key()
        .to_pkcs8_pem(rsa::pkcs8::LineEnding::LF)
        .expect("PEM")
        .to_string()
}

/// A service account key file for the run's key, outside the project.
fn service_account(agent: &TestAgent, token_uri: &str) -> PathBuf {
    let p = agent.home.join("keys").join("service-account.json");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let file = json!({"type": "service_account", "project_id": "sa-project",
        "private_key_id": "kid-1", "private_key": key_pem(), "client_email": EMAIL,
        "client_id": "123", "token_uri": token_uri});
    std::fs::write(&p, file.to_string()).unwrap();
    p
}

/// gcloud's `application_default_credentials.json` with a user login, at its well-known path.
fn gcloud_login(agent: &TestAgent, token_uri: &str) -> PathBuf {
    let p = agent
        .home
        .join(".config/gcloud/application_default_credentials.json");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let file = json!({"type": "authorized_user", "client_id": "cid.apps.googleusercontent.com",
        "client_secret": CLIENT_SECRET, "refresh_token": REFRESH_TOKEN,
        "quota_project_id": "quota-project", "token_uri": token_uri});
    std::fs::write(&p, file.to_string()).unwrap();
    p
}

/// An agent signing in with a service account, its model requests sent to `base`.
fn sa_agent(mock: &MockModel, base: &str) -> (TestAgent, PathBuf) {
    let mut agent = TestAgent::new();
    let sa = service_account(&agent, &format!("{}/token", mock.uri()));
    agent.env("GOOGLE_VERTEX_BASE_URL", base);
    agent.env("GOOGLE_APPLICATION_CREDENTIALS", &path_str(&sa));
    agent.env("GOOGLE_CLOUD_PROJECT", PROJECT);
    agent.env("GOOGLE_CLOUD_LOCATION", LOCATION);
    (agent, sa)
}

fn stream_path(project: &str, location: &str, model: &str) -> String {
    format!(
        "/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent"
    )
}

/// A form body's pairs, decoded.
fn form(body: &Value) -> Vec<(String, String)> {
    let text = body.as_str().expect("a form body");
    let decode = |s: &str| {
        let s = s.replace('+', " ");
        let mut out = Vec::new();
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    };
    text.split('&')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (decode(k), decode(v))
        })
        .collect()
}

fn assistant_end(events: &[Value], nth: usize) -> Value {
    of_type(events, "message_end")
        .into_iter()
        .filter(|e| e["message"]["role"] == "assistant")
        .nth(nth)
        .cloned()
        .expect("an assistant message_end")
}

#[tokio::test]
async fn a_service_account_token_is_exchanged_once_and_every_request_carries_it() {
    let mock = MockModel::start(vec![Turn::text("one"), Turn::text("two")]).await;
    let (agent, _sa) = sa_agent(&mock, &mock.uri());
    let out = agent
        .run(&["--model", MODEL, "-p", "first", "second"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "two\n");

    let tokens = mock.token_requests();
    assert_eq!(tokens.len(), 1, "the token is kept for the second request");
    let t = &tokens[0];
    assert_eq!(
        t.headers["content-type"],
        "application/x-www-form-urlencoded"
    );
    let pairs = form(&t.body);
    assert_eq!(
        pairs[0],
        (
            "grant_type".into(),
            "urn:ietf:params:oauth:grant-type:jwt-bearer".into()
        )
    );
    assert_eq!(pairs[1].0, "assertion");
    let parts: Vec<&str> = pairs[1].1.split('.').collect();
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let json = |p: &str| serde_json::from_slice::<Value>(&b64.decode(p).unwrap()).unwrap();
    assert_eq!(json(parts[0]), json!({"alg": "RS256"}));
    let claims = json(parts[1]);
    assert_eq!(claims["iss"], EMAIL);
    assert_eq!(
        claims["scope"],
        "https://www.googleapis.com/auth/cloud-platform"
    );
    assert_eq!(claims["aud"], format!("{}/token", mock.uri()));
    assert_eq!(
        claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
        3600
    );
    rsa_key()
        .to_public_key()
        .pkcs1v15_verify::<rsa::sha2::Sha256>(
            format!("{}.{}", parts[0], parts[1]).as_bytes(),
            &b64.decode(parts[2]).unwrap(),
        )
        .expect("signed with the service account's key");

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    for req in &requests {
        assert_eq!(
            req.path,
            stream_path(PROJECT, LOCATION, "gemini-3-flash-preview")
        );
        assert_eq!(req.query, "alt=sse");
        assert_eq!(
            req.headers["authorization"],
            format!("Bearer {MOCK_ACCESS_TOKEN}")
        );
        assert!(
            !req.headers.contains_key("x-goog-api-key"),
            "{:?}",
            req.headers
        );
        assert!(!req.headers.contains_key("x-goog-user-project"));
    }
    let body = &requests[0].body;
    assert_eq!(
        body["contents"][0],
        json!({"parts": [{"text": "first"}], "role": "user"})
    );
    assert_eq!(body["systemInstruction"]["role"], "user");
    assert_eq!(body["generationConfig"]["maxOutputTokens"], 65536);
}

#[tokio::test]
async fn gclouds_user_login_refreshes_and_names_its_quota_project() {
    let mock = MockModel::start(vec![Turn::text("as the user")]).await;
    let mut agent = TestAgent::new();
    gcloud_login(&agent, &format!("{}/token", mock.uri()));
    agent.env("GOOGLE_VERTEX_BASE_URL", &mock.uri());
    agent.env("GCLOUD_PROJECT", "gcloud-project");
    agent.env("GOOGLE_CLOUD_LOCATION", "global");
    let out = agent
        .run(&["--model", "google-vertex/gemini-2.5-flash", "-p", "hi"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "as the user\n");
    let tokens = mock.token_requests();
    assert_eq!(tokens.len(), 1);
    let want: Vec<(String, String)> = [
        ("refresh_token", REFRESH_TOKEN),
        ("client_id", "cid.apps.googleusercontent.com"),
        ("client_secret", CLIENT_SECRET),
        ("grant_type", "refresh_token"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(form(&tokens[0].body), want);
    let req = &mock.requests()[0];
    assert_eq!(
        req.path,
        stream_path("gcloud-project", "global", "gemini-2.5-flash")
    );
    assert_eq!(
        req.headers["authorization"],
        format!("Bearer {MOCK_ACCESS_TOKEN}")
    );
    assert_eq!(req.headers["x-goog-user-project"], "quota-project");
}

#[tokio::test]
async fn a_google_cloud_api_key_goes_to_express_mode_without_a_token() {
    let mock = MockModel::start(vec![Turn::text("express")]).await;
    let mut agent = TestAgent::new();
    agent.env("GOOGLE_VERTEX_BASE_URL", &mock.uri());
    agent.env("GOOGLE_CLOUD_API_KEY", "vertex-key");
    // A project and location do not matter to a key.
    agent.env("GOOGLE_CLOUD_PROJECT", PROJECT);
    let out = agent
        .run(&["--model", "google-vertex/gemini-2.5-flash", "-p", "hi"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "express\n");
    assert!(mock.token_requests().is_empty());
    let req = &mock.requests()[0];
    assert_eq!(
        req.path,
        "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    );
    assert_eq!(req.headers["x-goog-api-key"], "vertex-key");
    assert!(!req.headers.contains_key("authorization"));
}

#[tokio::test]
async fn thoughts_come_back_as_thinking_with_usage_and_their_signature_goes_back() {
    let mock = MockModel::start(vec![
        Turn::reasoned("weighing the options", "First answer."),
        Turn::text("Second answer."),
    ])
    .await;
    mock.set_usage(MockUsage {
        input: 20,
        output: 9,
        cache_read: 30,
        cache_write: 0,
    });
    let (agent, _sa) = sa_agent(&mock, &mock.uri());
    let out = agent
        .run(&[
            "--model",
            MODEL,
            "--thinking",
            "high",
            "--mode",
            "json",
            "one",
            "two",
        ])
        .await;
    out.assert_ok();
    let bodies = mock.bodies();
    assert_eq!(
        bodies[0]["generationConfig"]["thinkingConfig"],
        json!({"includeThoughts": true, "thinkingLevel": "HIGH"})
    );
    let model_turn = bodies[1]["contents"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["role"] == "model"))
        .cloned()
        .expect("the first answer replayed");
    assert_eq!(
        model_turn["parts"][0],
        json!({"text": "weighing the options", "thought": true,
            "thoughtSignature": THOUGHT_SIGNATURE})
    );
    let events = out.events();
    let first = assistant_end(&events, 0);
    let m = &first["message"];
    assert_eq!(m["api"], "google-vertex");
    assert_eq!(m["provider"], "google-vertex");
    assert_eq!(m["content"][0]["thinking"], "weighing the options");
    assert_eq!(m["content"][0]["thinkingSignature"], THOUGHT_SIGNATURE);
    assert_eq!(m["content"][1]["text"], "First answer.");
    let usage = &m["usage"];
    assert_eq!(usage["input"], 20, "{usage:#}");
    assert_eq!(usage["cacheRead"], 30);
    assert_eq!(usage["output"], 9);
    assert_eq!(usage["reasoning"], THOUGHT_TOKENS);
    assert_eq!(usage["totalTokens"], 59);
    // Priced at the catalog's Vertex rates.
    assert!(usage["cost"]["total"].as_f64().unwrap() > 0.0, "{usage:#}");
    assert_eq!(m["stopReason"], "stop");
}

#[tokio::test]
async fn parallel_tool_calls_go_back_with_their_ids_in_vertexs_key_order() {
    let mock = MockModel::start(two_tool_turns()).await;
    let (agent, _sa) = sa_agent(&mock, &mock.uri());
    agent.write_file("notes.txt", "the notes say pineapple\n");
    let out = agent
        .run(&["--model", MODEL, "--mode", "json", "run the tools"])
        .await;
    out.assert_ok();
    let events = out.events();
    let first = assistant_end(&events, 0);
    assert_eq!(first["message"]["stopReason"], "toolUse");
    let calls = first["message"]["content"].as_array().unwrap().clone();
    assert_eq!(calls[0]["thoughtSignature"], CALL_SIGNATURE);
    let ids: Vec<String> = calls
        .iter()
        .filter_map(|c| c["id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(ids.len(), 2);

    let second = &mock.bodies()[1];
    let contents = second["contents"].as_array().unwrap();
    let model_turn = contents.iter().find(|c| c["role"] == "model").unwrap();
    let call = &model_turn["parts"][0]["functionCall"];
    // As the SDK passes 1.6's object to Vertex AI: name, args, id.
    let keys: Vec<&str> = call
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["name", "args", "id"], "{call}");
    assert_eq!(call["id"], ids[0].as_str());
    assert_eq!(model_turn["parts"][0]["thoughtSignature"], CALL_SIGNATURE);
    let responses: Vec<&Value> = contents
        .iter()
        .flat_map(|c| c["parts"].as_array().unwrap().iter())
        .filter_map(|p| p.get("functionResponse"))
        .collect();
    assert_eq!(responses.len(), 2);
    let keys: Vec<&str> = responses[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["id", "name", "response"], "{}", responses[0]);
    assert_eq!(responses[1]["id"], ids[1].as_str());
    assert!(
        responses[1]["response"]["output"]
            .as_str()
            .is_some_and(|o| o.contains("pineapple")),
        "{}",
        responses[1]
    );
}

#[tokio::test]
async fn a_rate_limit_is_retried_with_the_kept_token() {
    let mock = MockModel::start(vec![
        Turn::status(429, "Quota exceeded for aiplatform.googleapis.com."),
        Turn::text("after the retry"),
    ])
    .await;
    let (agent, _sa) = sa_agent(&mock, &mock.uri());
    agent.fast_retries();
    let out = agent.run(&["--model", MODEL, "--mode", "json", "hi"]).await;
    out.assert_ok();
    let events = out.events();
    let starts = of_type(&events, "auto_retry_start");
    assert_eq!(starts.len(), 1, "{out}");
    assert!(
        starts[0]["errorMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("{\"error\":{\"code\":429")),
        "the error body, as 1.6's SDK words it: {out}"
    );
    assert_eq!(mock.requests().len(), 2);
    assert_eq!(mock.token_requests().len(), 1);
    assert_eq!(
        assistant_end(&events, 0)["message"]["content"][0]["text"],
        "after the retry"
    );
}

#[tokio::test]
async fn a_refused_token_ends_the_run_naming_the_credentials_file() {
    let mock = MockModel::start(vec![Turn::text("never")]).await;
    mock.set_token_answer(
        400,
        json!({"error": "invalid_grant", "error_description": "Invalid JWT Signature."}),
    );
    let (agent, sa) = sa_agent(&mock, &mock.uri());
    agent.fast_retries();
    let out = agent.run(&["--model", MODEL, "-p", "hi"]).await;
    out.assert_code(1);
    assert!(out.stderr.contains(&path_str(&sa)), "{out}");
    assert!(out.stderr.contains(EMAIL), "{out}");
    // 1.6's words (google-auth-library's) end it.
    assert!(
        out.stderr.contains("invalid_grant: Invalid JWT Signature."),
        "{out}"
    );
    assert!(
        mock.requests().is_empty(),
        "no model request without a token"
    );
    assert_eq!(mock.token_requests().len(), 1, "a refusal is not retried");
}

#[tokio::test]
async fn without_credentials_pi_says_what_vertex_needs() {
    let mock = MockModel::start(vec![]).await;
    let mut agent = TestAgent::new();
    let out = agent
        .run(&["--model", "google-vertex/gemini-2.5-flash", "-p", "hi"])
        .await;
    out.assert_code(1);
    for needed in [
        "GOOGLE_CLOUD_API_KEY",
        "Application Default Credentials",
        "application_default_credentials.json does not exist",
        "GOOGLE_CLOUD_LOCATION is not set",
    ] {
        assert!(out.stderr.contains(needed), "{needed}: {out}");
    }
    // A login and a project, but no location: that is what it says is missing.
    gcloud_login(&agent, &format!("{}/token", mock.uri()));
    agent.env("GOOGLE_CLOUD_PROJECT", PROJECT);
    let out = agent
        .run(&["--model", "google-vertex/gemini-2.5-flash", "-p", "hi"])
        .await;
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("(here: GOOGLE_CLOUD_LOCATION is not set)"),
        "{out}"
    );
    assert!(mock.token_requests().is_empty());
}

/// A Vertex endpoint that sends the first chunk of its answer and then nothing, holding the
/// connection open; it notes when pi closes it.
struct StallingServer {
    uri: String,
    closed: Arc<AtomicBool>,
}

async fn stalling_server() -> StallingServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://{}", listener.local_addr().unwrap());
    let closed = Arc::new(AtomicBool::new(false));
    let flag = closed.clone();
    tokio::spawn(async move {
        let Ok((mut sock, _)) = listener.accept().await else {
            return;
        };
        // The request head and body: read until the JSON body has arrived.
        let mut seen = Vec::new();
        let mut buf = [0u8; 8192];
        while !String::from_utf8_lossy(&seen).contains("\"contents\"") {
            match sock.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        let chunk = json!({"candidates": [{"content": {"role": "model",
            "parts": [{"text": "partial answer"}]}}]});
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
        if sock
            .write_all(format!("{head}data: {chunk}\r\n\r\n").as_bytes())
            .await
            .is_err()
        {
            return;
        }
        // Nothing more, until pi hangs up (bounded: the test gives up long before).
        let _ = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        })
        .await;
        flag.store(true, Ordering::SeqCst);
    });
    StallingServer { uri, closed }
}

#[tokio::test]
async fn an_abort_mid_stream_ends_the_turn_aborted_and_hangs_up() {
    let mock = MockModel::start(vec![]).await;
    let stalling = stalling_server().await;
    let (agent, _sa) = sa_agent(&mock, &stalling.uri);
    let mut r = agent.rpc(&["--model", MODEL]);
    r.request(json!({"id": "p", "type": "prompt", "message": "go"}))
        .await;
    r.until(|e| {
        e["type"] == "message_update" && e["assistantMessageEvent"]["type"] == "text_delta"
    })
    .await;
    r.send(json!({"id": "a", "type": "abort"})).await;
    // The streamed part is closed first (an error `message_end` clients discard), then the
    // turn ends aborted.
    let end = r
        .until(|e| e["type"] == "message_end" && e["message"]["stopReason"] == "aborted")
        .await;
    assert_eq!(
        end["message"]["errorMessage"], "Request was aborted",
        "{end}"
    );
    r.until(|e| e["type"] == "agent_settled").await;
    assert!(
        wait_until(Duration::from_secs(10), || stalling
            .closed
            .load(Ordering::SeqCst)),
        "pi closed the stalled stream"
    );
    assert_eq!(mock.token_requests().len(), 1);
    assert_eq!(r.close().await, Some(0));
}

/// Every file under `dir`, as text.
fn all_text_under(dir: &Path) -> String {
    let mut out = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                out.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
    }
    out
}

#[tokio::test]
async fn the_token_and_the_keys_never_reach_hooks_logs_or_sessions() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("bash", json!({"command": "echo hi"}))]),
        Turn::text("done"),
        Turn::text("as the user"),
    ])
    .await;
    let (mut agent, _sa) = sa_agent(&mock, &mock.uri());
    let watch = scripted(
        &agent,
        "watch",
        json!({"subscriptions": [{"event": "before_provider_headers"},
            {"event": "before_provider_request"}, {"event": "after_provider_response"},
            {"event": "message_end"}, {"event": "tool_result"}, {"event": "turn_end"}]}),
    );
    use_hooks(&agent, vec![watch]);
    let out = agent
        .run(&[
            "--model",
            MODEL,
            "--verbose",
            "--mode",
            "json",
            "--hook-events",
            "run it",
        ])
        .await;
    out.assert_ok();
    let shown = recorded_events(&agent, "watch", "before_provider_headers");
    assert_eq!(shown.len(), 2);
    for h in &shown {
        assert_eq!(
            h["payload"]["headers"]["authorization"], "[redacted]",
            "{h}"
        );
    }
    // The user login too: its refresh token and client secret.
    gcloud_login(&agent, &format!("{}/token", mock.uri()));
    agent.env("GOOGLE_APPLICATION_CREDENTIALS", "");
    let user = agent
        .run(&["--model", MODEL, "--verbose", "--mode", "json", "again"])
        .await;
    user.assert_ok();
    assert_eq!(mock.token_requests().len(), 2);

    let pem = key_pem();
    let key_lines: Vec<&str> = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let seen = [
        out.stdout.clone(),
        out.stderr.clone(),
        user.stdout.clone(),
        user.stderr.clone(),
        std::fs::read_to_string(record_file(&agent, "watch")).unwrap_or_default(),
        all_text_under(&agent.agent_dir),
    ]
    .join("\n");
    assert!(seen.contains("run it"), "the record is there to search");
    for secret in [
        MOCK_ACCESS_TOKEN,
        "PRIVATE KEY",
        REFRESH_TOKEN,
        CLIENT_SECRET,
        // The signed assertion's header, base64url of {"alg":"RS256"}.
        "eyJhbGciOiJSUzI1NiJ9",
    ]
    .iter()
    .chain(key_lines.iter().take(3))
    {
        assert!(!seen.contains(secret), "{secret} leaked");
    }
}

/// The `google-vertex` lines of `--list-models`.
fn vertex_lines(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter(|l| l.starts_with("google-vertex "))
        .map(str::to_string)
        .collect()
}

/// One setting of `--list-models`: its name, the environment (`SA` stands for a service
/// account file), auth.json, whether gcloud's file is written, and whether Vertex is listed.
type ListCase = (
    &'static str,
    Vec<(&'static str, &'static str)>,
    Option<Value>,
    bool,
    bool,
);

#[tokio::test]
async fn list_models_counts_vertex_as_configured_when_1_6_does() {
    let Some(ts) = TsPi::find_v1_6() else { return };
    let cases: Vec<ListCase> = vec![
        ("nothing", vec![], None, false, false),
        (
            "a key",
            vec![("GOOGLE_CLOUD_API_KEY", "k")],
            None,
            false,
            true,
        ),
        (
            "a service account, project and location",
            vec![
                ("GOOGLE_CLOUD_PROJECT", "p"),
                ("GOOGLE_CLOUD_LOCATION", "l"),
                ("GOOGLE_APPLICATION_CREDENTIALS", "SA"),
            ],
            None,
            false,
            true,
        ),
        (
            "no location",
            vec![
                ("GOOGLE_CLOUD_PROJECT", "p"),
                ("GOOGLE_APPLICATION_CREDENTIALS", "SA"),
            ],
            None,
            false,
            false,
        ),
        (
            "a credentials file that is not there",
            vec![
                ("GOOGLE_CLOUD_PROJECT", "p"),
                ("GOOGLE_CLOUD_LOCATION", "l"),
                ("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent.json"),
            ],
            None,
            true,
            false,
        ),
        (
            "gcloud's login and GCLOUD_PROJECT",
            vec![("GCLOUD_PROJECT", "p"), ("GOOGLE_CLOUD_LOCATION", "l")],
            None,
            true,
            true,
        ),
        (
            "a blank location",
            vec![("GCLOUD_PROJECT", "p"), ("GOOGLE_CLOUD_LOCATION", " ")],
            None,
            true,
            false,
        ),
        (
            "stored variables",
            vec![],
            Some(
                json!({"google-vertex": {"type": "api_key", "env": {"GOOGLE_CLOUD_PROJECT": "p",
                "GOOGLE_CLOUD_LOCATION": "l", "GOOGLE_APPLICATION_CREDENTIALS": "SA"}}}),
            ),
            false,
            true,
        ),
        (
            "stored variables and the location from the environment",
            vec![("GOOGLE_CLOUD_LOCATION", "l")],
            Some(
                json!({"google-vertex": {"type": "api_key", "env": {"GOOGLE_CLOUD_PROJECT": "p",
                "GOOGLE_APPLICATION_CREDENTIALS": "SA"}}}),
            ),
            false,
            true,
        ),
        (
            "a stored key",
            vec![],
            Some(json!({"google-vertex": {"type": "api_key", "key": "k"}})),
            false,
            true,
        ),
    ];
    for (name, env, auth, gcloud, listed) in cases {
        let mut agent = TestAgent::new();
        let sa = path_str(&service_account(&agent, "http://127.0.0.1:9/token"));
        for (k, v) in env {
            agent.env(k, if v == "SA" { &sa } else { v });
        }
        if let Some(mut auth) = auth {
            if let Some(vars) = auth["google-vertex"]["env"].as_object_mut() {
                for v in vars.values_mut() {
                    if v == "SA" {
                        *v = json!(sa);
                    }
                }
            }
            std::fs::write(agent.agent_dir.join("auth.json"), auth.to_string()).unwrap();
        }
        if gcloud {
            gcloud_login(&agent, "http://127.0.0.1:9/token");
        }
        let ours = agent.run(&["--list-models"]).await;
        let theirs = ts.run(&agent, &["--list-models"]).await;
        let (ours, theirs) = (vertex_lines(&ours.stdout), vertex_lines(&theirs.stdout));
        assert_eq!(ours, theirs, "{name}: ours, then 1.6's");
        assert_eq!(!ours.is_empty(), listed, "{name}");
    }
}
