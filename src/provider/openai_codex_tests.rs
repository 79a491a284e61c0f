//! Tests of the Codex API: bodies, headers, streamed events and messages compared with what
//! pi 1.6.0 sends and makes of the same conversations (`fixtures/providers/codex_cases.json`,
//! recorded by `tests/ts-pi/responses-fixtures.mjs codex`), the failures in 1.6's words, and the
//! endpoint over HTTP with the account taken from the token.

use serde_json::{json, Value};

use super::*;
use crate::delta::AssistantDelta;
use crate::message::StopReason;
use crate::provider::fixture_case::{event, recorded_events};
use crate::provider::stream::test_support::*;
use crate::session::compaction::overflow::is_context_overflow_error;

const CASES: &str = include_str!("../../fixtures/providers/codex_cases.json");

fn cases() -> Vec<Value> {
    crate::provider::fixture_case::all(CASES)
}

fn case(name: &str) -> Value {
    crate::provider::fixture_case::named(CASES, name)
}

fn request(case: &Value) -> Request {
    crate::provider::fixture_case::request(case, CODEX_API, "openai-codex")
}

#[test]
fn bodies_urls_and_accounts_are_pi_1_6s() {
    for case in cases() {
        let req = request(&case);
        let name = case["name"].as_str().unwrap();
        let sent = &case["request"];
        assert_eq!(
            stream_url(&req.model),
            sent["url"].as_str().unwrap(),
            "{name}"
        );
        // Compared as text: the key order is 1.6's too.
        assert_eq!(
            build_body(&req).to_string(),
            sent["body"].to_string(),
            "{name}"
        );
        assert_eq!(
            account_id(req.api_key.as_deref().unwrap()).as_deref(),
            sent["headers"]["chatgpt-account-id"].as_str(),
            "{name}"
        );
    }
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
        ResponsesParser::codex(m, ctx.deltas.clone()),
    );
    (r, drain(&mut rx))
}

/// A message as JSON, without what differs by run or is not the parser's (the agent words
/// failures, the provider adds the level it asked for).
fn comparable(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        for k in [
            "role",
            "timestamp",
            "durationMs",
            "errorMessage",
            "providerThinkingLevel",
        ] {
            o.remove(k);
        }
    }
    if let Some(c) = v.pointer_mut("/usage/cost").and_then(Value::as_object_mut) {
        c.remove("totalFromProvider");
    }
    v
}

#[test]
fn streams_parse_to_pi_1_6s_events_and_messages_in_any_chunking() {
    for case in cases().into_iter().filter(|c| c["status"] == 200) {
        let name = case["name"].as_str().unwrap();
        let req = request(&case);
        let want = &case["message"];
        for chunk in [1, 7, 64, 100_000] {
            let (r, deltas) = parse(&req.model, case["stream"].as_str().unwrap(), chunk);
            let events: Vec<Value> = deltas.iter().map(event).collect();
            assert_eq!(
                events,
                recorded_events(&case),
                "{name} in chunks of {chunk}"
            );
            if want["stopReason"] == "error" {
                let err = r.expect_err(name).to_string();
                assert_eq!(err, want["errorMessage"].as_str().unwrap(), "{name}");
                continue;
            }
            let msg = r.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_well_formed(&deltas, msg.content.len());
            let got = comparable(serde_json::to_value(&msg).unwrap());
            assert_eq!(got, comparable(want.clone()), "{name} in chunks of {chunk}");
        }
    }
}

#[test]
fn http_failures_are_worded_as_in_1_6() {
    for case in cases().into_iter().filter(|c| c["status"] != 200) {
        let name = case["name"].as_str().unwrap();
        let e = worded(ProviderError::Http {
            status: case["status"].as_u64().unwrap() as u16,
            message: case["errorBody"].as_str().unwrap().into(),
            retry_after_ms: None,
        });
        assert_eq!(
            e.to_string(),
            case["message"]["errorMessage"].as_str().unwrap(),
            "{name}"
        );
    }
    let limit = worded(ProviderError::Http {
        status: 429,
        message: case("usage limit")["errorBody"].as_str().unwrap().into(),
        retry_after_ms: None,
    });
    assert!(!limit.is_retryable(), "a usage limit lasts for hours");
    let resets = (crate::oauth::now_ms() / 1000 + 30 * 60) as f64;
    let soon = worded(ProviderError::Http {
        status: 429,
        message: json!({"error": {"type": "usage_limit_reached", "resets_at": resets}}).to_string(),
        retry_after_ms: None,
    });
    assert_eq!(
        soon.to_string(),
        "You have hit your ChatGPT usage limit. Try again in ~30 min."
    );
    let overflow = worded(ProviderError::Http {
        status: 400,
        message: case("overflow")["errorBody"].as_str().unwrap().into(),
        retry_after_ms: None,
    });
    assert!(
        is_context_overflow_error(&overflow.to_string()),
        "{overflow}"
    );
    let busy = worded(ProviderError::Http {
        status: 502,
        message: "Bad gateway".into(),
        retry_after_ms: Some(5),
    });
    assert!(busy.is_retryable() && busy.retry_after_ms() == Some(5));
    let m = request(&case("an error event")).model;
    let err = parse(&m, case("an error event")["stream"].as_str().unwrap(), 9)
        .0
        .unwrap_err();
    assert!(err.is_retryable(), "a server error in the stream: {err}");
}

#[test]
fn the_level_is_asked_for_as_1_6_resolves_it() {
    let sol = request(&case("sol at high, mid-conversation effort")).model;
    fn e(m: &Model, l: ThinkingLevel) -> Efforts<'_> {
        Efforts::of(m, l)
    }
    assert_eq!(
        e(&sol, ThinkingLevel::High),
        Efforts {
            request: Some("medium"),
            update: Some("high")
        }
    );
    // Off maps to no reasoning field at all on a model whose map says `off: null`.
    assert_eq!(
        e(&sol, ThinkingLevel::Off),
        Efforts {
            request: None,
            update: None
        }
    );
    let luna = request(&case("5.6 luna off")).model;
    assert_eq!(e(&luna, ThinkingLevel::Off).request, Some("none"));
    assert_eq!(e(&luna, ThinkingLevel::Minimal).request, Some("low"));
    let mut plain = luna.clone();
    plain.reasoning = false;
    assert_eq!(e(&plain, ThinkingLevel::High).request, None);
}

#[test]
fn the_endpoint_and_the_account_come_from_the_base_and_the_token() {
    let mut m = model(CODEX_API, "");
    assert_eq!(
        stream_url(&m),
        "https://chatgpt.com/backend-api/codex/responses"
    );
    m.base_url = "http://proxy/x/codex/".into();
    assert_eq!(stream_url(&m), "http://proxy/x/codex/responses");
    m.base_url = "http://proxy/codex/responses".into();
    assert_eq!(stream_url(&m), "http://proxy/codex/responses");
    assert_eq!(account_id("not-a-jwt"), None);
    assert_eq!(account_id("a.b.c.d"), None);
    let no_claim = format!(
        "h.{}.s",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"sub":"u"}"#)
    );
    assert_eq!(account_id(&no_claim), None);
}

#[tokio::test]
async fn over_http_the_token_and_its_account_go_with_codexs_headers() {
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let server = MockServer::start().await;
    let case = case("sol at high, mid-conversation effort");
    let token = case["token"].as_str().unwrap().to_string();
    Mock::given(method("POST"))
        .and(path("/backend-api/codex/responses"))
        .and(header("authorization", format!("Bearer {token}").as_str()))
        .and(header("chatgpt-account-id", "acct_123"))
        .and(header("openai-beta", "responses=experimental"))
        .and(header("originator", "pi"))
        .and(header("accept", "text/event-stream"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            case["stream"].as_str().unwrap().to_string(),
            "text/event-stream",
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).set_body_raw(
            r#"{"error":{"type":"usage_limit_reached","plan_type":"PRO"}}"#,
            "application/json",
        ))
        .mount(&server)
        .await;
    let mut req = request(&case);
    req.model.base_url = format!("{}/backend-api", server.uri());
    let provider = OpenAiCodex::new(crate::provider::http::client());
    let (ctx, _rx) = context();
    let msg = provider.stream(&req, &ctx).await.unwrap();
    assert_eq!(msg.stop_reason, StopReason::ToolUse);
    assert_eq!(msg.text(), "Hello");
    assert_eq!(msg.provider_thinking_level.as_deref(), Some("high"));
    let sent: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert_eq!(sent, case["request"]["body"]);
    let err = provider.stream(&req, &ctx).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "You have hit your ChatGPT usage limit (pro plan)."
    );
    req.api_key = Some("sk-not-a-login".into());
    let err = provider.stream(&req, &ctx).await.unwrap_err();
    assert_eq!(err.to_string(), "Failed to extract accountId from token");
    req.api_key = None;
    let err = provider.stream(&req, &ctx).await.unwrap_err();
    assert_eq!(err.to_string(), "No API key for provider: openai-codex");
}
