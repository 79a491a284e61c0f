//! Tests of Vertex AI: URLs, credentials and bodies compared with what pi 1.6.0 sends for the
//! same conversations and credentials, and parsed streams with what it makes of them
//! (`fixtures/providers/google_vertex_cases.json`, recorded by
//! `tests/ts-pi/google-vertex-fixtures.mjs`); then the token exchanges of
//! [`super::gcp_auth`] against a mock token endpoint: the service account's signed assertion
//! (checked with the key's public half, its header and claims 1.6's), the user credentials'
//! refresh, the cache, and the words of a refusal.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{json, Value};

use super::*;
use crate::delta::AssistantDelta;
use crate::message::StopReason;
use crate::provider::gcp_auth::{self, GOOGLE_TOKEN_URL};
use crate::provider::stream::test_support::*;
use crate::provider::{thinking_map, ThinkingLevel};
use crate::test_support::{rsa_key, service_account_json};

const CASES: &str = include_str!("../../fixtures/providers/google_vertex_cases.json");

fn cases() -> Vec<Value> {
    crate::provider::fixture_case::all(CASES)
}

fn case(name: &str) -> Value {
    crate::provider::fixture_case::named(CASES, name)
}

/// The case's model, conversation, tools, key and credential variables as a request (the
/// credentials files stand as their placeholders: nothing here reads them).
fn request(case: &Value) -> Request {
    let spec = &case["model"];
    let mut m = model(GOOGLE_VERTEX_API, spec["baseUrl"].as_str().unwrap());
    m.id = spec["id"].as_str().unwrap().into();
    m.provider = "google-vertex".into();
    m.reasoning = spec["reasoning"].as_bool().unwrap();
    m.max_tokens = spec["maxTokens"].as_u64().unwrap();
    m.cost = serde_json::from_value(spec["cost"].clone()).unwrap();
    m.thinking_level_map = thinking_map::parse(Some(&spec["thinkingLevelMap"]));
    m.auth.env = serde_json::from_value::<BTreeMap<String, String>>(case["env"].clone()).unwrap();
    Request {
        model: m,
        api_key: case["apiKey"].as_str().map(str::to_string),
        system_prompt: "sys".into(),
        messages: crate::provider::fixture_case::messages(case),
        tools: crate::provider::fixture_case::tools(case).into(),
        thinking: ThinkingLevel::parse(case["thinking"].as_str().unwrap()).unwrap(),
        session_id: None,
    }
}

/// `GOOGLE_VERTEX_BASE_URL` as the case's process had it.
fn env_base(case: &Value) -> Option<String> {
    case["processEnv"]["GOOGLE_VERTEX_BASE_URL"]
        .as_str()
        .map(str::to_string)
}

#[test]
fn urls_credentials_and_bodies_are_pi_1_6s() {
    for case in cases() {
        let name = case["name"].as_str().unwrap();
        let req = request(&case);
        let sent = &case["request"];
        let target = target(&req);
        if sent.is_null() && case["tokenRequests"].as_array().unwrap().is_empty() {
            // 1.6 failed before anything went out: the project or location is missing.
            let err = target.expect_err(name).to_string();
            assert_eq!(err, case["message"]["errorMessage"], "{name}");
            continue;
        }
        let target = target.unwrap_or_else(|e| panic!("{name}: {e}"));
        // The credential goes where 1.6 put it.
        match (&target, sent["key"].as_str()) {
            (Target::Key(k), Some(sent_key)) => assert_eq!(*k, sent_key, "{name}"),
            (Target::Adc { .. }, None) => {
                let tokens = case["tokenRequests"].as_array().unwrap();
                assert_eq!(tokens.len(), 1, "{name}: one token exchange");
                if !sent.is_null() {
                    assert_eq!(sent["authorization"], "Bearer ya29.access", "{name}");
                }
            }
            other => panic!("{name}: {other:?}"),
        }
        if sent.is_null() {
            continue;
        }
        assert_eq!(
            stream_url_with(&req.model, &target, env_base(&case)).unwrap(),
            sent["url"].as_str().unwrap(),
            "{name}"
        );
        // Compared as text: the key order is 1.6's too.
        assert_eq!(
            crate::provider::google::build_body(&req).to_string(),
            sent["body"].to_string(),
            "{name}"
        );
    }
}

#[test]
fn keys_that_mean_no_key_and_model_paths() {
    assert_eq!(api_key(Some(" k ")), Some("k"));
    for none in [
        None,
        Some(""),
        Some("  "),
        Some(CREDENTIALS_MARKER),
        Some("<key>"),
    ] {
        assert_eq!(api_key(none), None, "{none:?}");
    }
    assert_eq!(api_key(Some("<>")), Some("<>"));
    assert_eq!(api_key(Some("<a>b>")), Some("<a>b>"));
    assert_eq!(
        model_path("gemini-x").unwrap(),
        "publishers/google/models/gemini-x"
    );
    assert_eq!(
        model_path("meta/llama/x").unwrap(),
        "publishers/meta/models/llama"
    );
    for kept in [
        "publishers/a/models/b",
        "projects/p/locations/l/endpoints/e",
        "models/t",
    ] {
        assert_eq!(model_path(kept).unwrap(), kept);
    }
    for bad in ["a..b", "a?b", "a&b"] {
        assert_eq!(
            model_path(bad).unwrap_err().to_string(),
            "invalid model parameter"
        );
    }
    assert!(includes_api_version("http://h/p/v1beta1/"));
    assert!(includes_api_version("http://h/v2"));
    assert!(!includes_api_version("http://h/v1x/proxy"));
    assert!(includes_api_version("not a url/v1/x"));
}

fn parse(
    m: &Model,
    stream: &str,
    chunk: usize,
) -> (Result<AssistantMessage, ProviderError>, Vec<AssistantDelta>) {
    let (ctx, mut rx) = context();
    let r = parse_in_chunks(
        stream.as_bytes(),
        chunk,
        GoogleParser::new(m, ctx.deltas.clone()),
    );
    (r, drain(&mut rx))
}

/// A message as JSON with generated tool call ids (`name_<ms>_<n>`) made comparable.
fn comparable(mut v: Value) -> Value {
    for block in v["content"].as_array_mut().into_iter().flatten() {
        let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
            continue;
        };
        let generated = id.strip_prefix(&format!("{name}_")).is_some_and(|rest| {
            let mut it = rest.split('_');
            it.clone().count() == 2 && it.all(|n| n.parse::<u64>().is_ok())
        });
        if generated {
            block["id"] = json!(format!("{name}_<generated>"));
        }
    }
    if let Some(o) = v.as_object_mut() {
        for k in ["role", "timestamp", "durationMs", "errorMessage"] {
            o.remove(k);
        }
    }
    v
}

#[test]
fn streams_parse_to_pi_1_6s_messages_in_any_chunking() {
    for case in cases() {
        let name = case["name"].as_str().unwrap();
        let want = &case["message"];
        if case["request"].is_null() {
            continue;
        }
        let req = request(&case);
        for chunk in [1, 7, 64, 100_000] {
            let (r, deltas) = parse(&req.model, case["stream"].as_str().unwrap(), chunk);
            if want["stopReason"] == "error" {
                let err = r.expect_err(name).to_string();
                let said = want["errorMessage"].as_str().unwrap();
                assert!(err.contains(said), "{name}: {err} / {said}");
                continue;
            }
            let msg = r.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_well_formed(&deltas, msg.content.len());
            let got = comparable(serde_json::to_value(&msg).unwrap());
            assert_eq!(got, comparable(want.clone()), "{name} in chunks of {chunk}");
        }
    }
}

// --- Token exchanges ---------------------------------------------------------------------

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn form_pairs(body: &[u8]) -> Vec<(String, String)> {
    let decode = |s: &str| {
        let s = s.replace('+', " ");
        let mut out = Vec::new();
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    };
    String::from_utf8(body.to_vec())
        .unwrap()
        .split('&')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (decode(k), decode(v))
        })
        .collect()
}

fn b64json(part: &str) -> Value {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// A Vertex model whose credentials file is `file` (written in `dir`).
fn adc_model(dir: &tempfile::TempDir, file: &str) -> Model {
    let p = dir.path().join("credentials.json");
    std::fs::write(&p, file).unwrap();
    let mut m = model(
        GOOGLE_VERTEX_API,
        "https://{location}-aiplatform.googleapis.com",
    );
    m.auth.env.insert(
        "GOOGLE_APPLICATION_CREDENTIALS".into(),
        p.display().to_string(),
    );
    m
}

async fn token_server(answer: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(answer)
        .mount(&server)
        .await;
    server
}

fn granted(expires_in: u64) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(
        json!({"access_token": "ya29.mock", "expires_in": expires_in, "token_type": "Bearer"}),
    )
}

#[tokio::test]
async fn a_service_account_signs_1_6s_assertion_and_the_token_is_kept() {
    let server = token_server(granted(3599)).await;
    let token_uri = format!("{}/token", server.uri());
    let dir = tempfile::tempdir().unwrap();
    let m = adc_model(&dir, &service_account_json(&token_uri));
    let client = crate::provider::http::client();
    let cancel = tokio_util::sync::CancellationToken::new();
    let t = gcp_auth::access_token(&client, &m, &cancel).await.unwrap();
    assert_eq!(t.token, "ya29.mock");
    assert_eq!(t.quota_project, None);
    // Kept: the second request asks nobody.
    let again = gcp_auth::access_token(&client, &m, &cancel).await.unwrap();
    assert_eq!(again.token, "ya29.mock");
    let received = server.received_requests().await.unwrap();
    assert_eq!(received.len(), 1, "one exchange for two requests");

    let req = &received[0];
    assert_eq!(
        req.headers.get("content-type").unwrap(),
        "application/x-www-form-urlencoded"
    );
    let pairs = form_pairs(&req.body);
    let recorded = &case("gemini 2.5 flash at medium")["tokenRequests"][0];
    assert_eq!(pairs[0].0, "grant_type");
    assert_eq!(pairs[0].1, recorded["params"]["grant_type"]);
    assert_eq!(pairs[1].0, "assertion");
    let jwt = &pairs[1].1;
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3);
    // Header and claims as 1.6 signs them (its audience is the fixed Google endpoint, which
    // a real key file names as its token_uri; ours names the mock).
    let want = &recorded["params"]["assertion"];
    assert_eq!(b64json(parts[0]), want["header"]);
    let claims = b64json(parts[1]);
    let keys: Vec<&str> = claims
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["iss", "scope", "aud", "exp", "iat"]);
    assert_eq!(claims["iss"], want["claims"]["iss"]);
    assert_eq!(claims["scope"], want["claims"]["scope"]);
    assert_eq!(want["claims"]["aud"], GOOGLE_TOKEN_URL);
    assert_eq!(claims["aud"], token_uri.as_str());
    assert_eq!(
        claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
        want["claims"]["lifetime"].as_u64().unwrap()
    );
    let signature = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(parts[2])
        .unwrap();
    rsa_key()
        .to_public_key()
        .pkcs1v15_verify::<rsa::sha2::Sha256>(
            format!("{}.{}", parts[0], parts[1]).as_bytes(),
            &signature,
        )
        .expect("the signature verifies with the key's public half");
}

#[tokio::test]
async fn user_credentials_refresh_as_1_6_does_and_name_their_quota_project() {
    // A token about to expire is not kept: each request refreshes.
    let server = token_server(granted(200)).await;
    let dir = tempfile::tempdir().unwrap();
    let file = json!({"type": "authorized_user", "client_id": "cid.apps.googleusercontent.com",
        "client_secret": "csecret", "refresh_token": "1//refresh",
        "quota_project_id": "quota-project", "token_uri": format!("{}/token", server.uri())});
    let m = adc_model(&dir, &file.to_string());
    let client = crate::provider::http::client();
    let cancel = tokio_util::sync::CancellationToken::new();
    for _ in 0..2 {
        let t = gcp_auth::access_token(&client, &m, &cancel).await.unwrap();
        assert_eq!(t.token, "ya29.mock");
        assert_eq!(t.quota_project.as_deref(), Some("quota-project"));
    }
    let received = server.received_requests().await.unwrap();
    assert_eq!(received.len(), 2);
    let recorded = &case("authorized user")["tokenRequests"][0]["params"];
    let want: Vec<(String, String)> = recorded
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    assert_eq!(form_pairs(&received[0].body), want);
    assert_eq!(
        case("authorized user")["request"]["userProject"],
        "quota-project"
    );
}

#[tokio::test]
async fn a_refused_token_says_which_file_and_keeps_1_6s_words() {
    let refused = case("a refused token");
    let server = token_server(
        ResponseTemplate::new(400).set_body_json(refused["tokenAnswer"]["body"].clone()),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let m = adc_model(
        &dir,
        &service_account_json(&format!("{}/token", server.uri())),
    );
    let client = crate::provider::http::client();
    let cancel = tokio_util::sync::CancellationToken::new();
    let err = gcp_auth::access_token(&client, &m, &cancel)
        .await
        .unwrap_err();
    assert!(!err.is_retryable());
    let said = err.to_string();
    let file = dir.path().join("credentials.json");
    assert!(said.contains(&file.display().to_string()), "{said}");
    assert!(
        said.contains("pi-test@sa-project.iam.gserviceaccount.com"),
        "{said}"
    );
    assert!(
        said.ends_with(refused["message"]["errorMessage"].as_str().unwrap()),
        "{said}"
    );
    assert!(
        !said.contains("PRIVATE KEY") && !said.contains("eyJ"),
        "{said}"
    );

    // An endpoint that is down is retried.
    let busy = token_server(ResponseTemplate::new(503)).await;
    let m = adc_model(
        &dir,
        &service_account_json(&format!("{}/token", busy.uri())),
    );
    let err = gcp_auth::access_token(&client, &m, &cancel)
        .await
        .unwrap_err();
    assert!(err.is_retryable(), "{err}");
}

#[tokio::test]
async fn unusable_credentials_files_say_what_is_wrong() {
    let client = crate::provider::http::client();
    let cancel = tokio_util::sync::CancellationToken::new();
    let dir = tempfile::tempdir().unwrap();
    let said = |m: Model| {
        let client = client.clone();
        let cancel = cancel.clone();
        async move {
            gcp_auth::access_token(&client, &m, &cancel)
                .await
                .unwrap_err()
                .to_string()
        }
    };
    let mut gone = model(GOOGLE_VERTEX_API, "");
    gone.auth.env.insert(
        "GOOGLE_APPLICATION_CREDENTIALS".into(),
        "/nonexistent/sa.json".into(),
    );
    let e = said(gone).await;
    assert!(
        e.contains("/nonexistent/sa.json") && e.contains("does not exist"),
        "{e}"
    );
    let e = said(adc_model(
        &dir,
        r#"{"type": "service_account", "client_email": "a@b"}"#,
    ))
    .await;
    assert!(e.contains("does not contain a private_key field"), "{e}");
    let e = said(adc_model(
        &dir,
        r#"{"type": "service_account", "client_email": "a@b", "private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}"#,
    ))
    .await;
    assert!(
        e.contains("private_key") && e.contains("cannot be used"),
        "{e}"
    );
    assert!(!e.contains("AAAA"), "the key is never quoted: {e}");
    let e = said(adc_model(&dir, r#"{"type": "external_account"}"#)).await;
    assert!(e.contains("\"external_account\""), "{e}");
    let e = said(adc_model(&dir, "{not json")).await;
    assert!(e.contains("not valid JSON"), "{e}");
}

#[tokio::test]
async fn over_http_the_token_goes_in_authorization_and_the_key_in_x_goog_api_key() {
    use wiremock::matchers::{header, query_param};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(granted(3599))
        .mount(&server)
        .await;
    let plain = case("custom base URL");
    Mock::given(method("POST"))
        .and(path(
            "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent",
        ))
        .and(query_param("alt", "sse"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            plain["stream"].as_str().unwrap().to_string(),
            "text/event-stream",
        ))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut req = request(&plain);
    req.model.base_url = server.uri();
    let sa = dir.path().join("sa.json");
    std::fs::write(
        &sa,
        service_account_json(&format!("{}/token", server.uri())),
    )
    .unwrap();
    req.model.auth.env.insert(
        "GOOGLE_APPLICATION_CREDENTIALS".into(),
        sa.display().to_string(),
    );
    let provider = GoogleVertex::new(crate::provider::http::client());
    let (ctx, _rx) = context();
    let msg = provider.stream(&req, &ctx).await.unwrap();
    assert_eq!(msg.stop_reason, StopReason::Stop);
    assert_eq!(msg.text(), "fine");
    assert_eq!(msg.api, "google-vertex");
    let model_req = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.url.path() != "/token")
        .unwrap();
    assert_eq!(
        model_req.headers.get("authorization").unwrap(),
        "Bearer ya29.mock"
    );
    assert!(model_req.headers.get("x-goog-api-key").is_none());

    Mock::given(method("POST"))
        .and(header("x-goog-api-key", "vertex-key"))
        .respond_with(ResponseTemplate::new(429).set_body_raw(
            r#"{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED"}}"#,
            "application/json",
        ))
        .with_priority(1)
        .mount(&server)
        .await;
    req.api_key = Some("vertex-key".into());
    let err = provider.stream(&req, &ctx).await.unwrap_err();
    assert!(err.is_retryable());
    assert_eq!(
        err.to_string(),
        r#"{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED"}}"#
    );
}
