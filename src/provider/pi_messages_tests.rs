//! Tests of the pi-messages API: payloads, streamed events and messages compared with what
//! pi 1.6.0 sends and makes of the same conversations (`fixtures/providers/pi_messages_cases.json`,
//! recorded by `tests/ts-pi/pi-messages-fixtures.mjs`), failures in 1.6's words, and the
//! endpoint over HTTP.

use serde_json::Value;

use super::*;
use crate::provider::fixture_case::event;
use crate::provider::stream::test_support::*;

const CASES: &str = include_str!("../../fixtures/providers/pi_messages_cases.json");

fn cases() -> Vec<Value> {
    crate::provider::fixture_case::all(CASES)
}

fn request(case: &Value) -> Request {
    crate::provider::fixture_case::request(case, PI_MESSAGES_API, "radius")
}

/// 1.6's events, without the fields 1.6 passes on from the wire's events whole (pi's carry
/// pi's fields; the signature is in the message).
fn recorded_events(case: &Value) -> Vec<Value> {
    let mut events = crate::provider::fixture_case::recorded_events(case);
    for e in &mut events {
        if let Some(o) = e.as_object_mut() {
            o.remove("id");
            o.remove("toolName");
            o.remove("contentSignature");
        }
    }
    events
}

#[test]
fn payloads_are_pi_1_6s() {
    for case in cases() {
        let name = case["name"].as_str().unwrap();
        let req = request(&case);
        assert_eq!(build_body(&req), case["request"]["body"], "{name}");
        assert_eq!(
            join_url(req.model.base_url.trim_end_matches('/'), "messages"),
            case["request"]["url"].as_str().unwrap(),
            "{name}"
        );
    }
}

#[test]
fn streams_parse_to_pi_1_6s_events_and_messages_in_any_chunking() {
    for case in cases().into_iter().filter(|c| c["status"] == 200) {
        let name = case["name"].as_str().unwrap();
        let req = request(&case);
        let want = &case["message"];
        for chunk in [1, 7, 100_000] {
            let (ctx, mut rx) = context();
            let r = parse_in_chunks(
                case["stream"].as_str().unwrap().as_bytes(),
                chunk,
                PiMessagesParser::new(&req.model, ctx.deltas.clone()),
            );
            let deltas = drain(&mut rx);
            if want["stopReason"] == "error" {
                let err = r.expect_err(name).to_string();
                assert_eq!(err, want["errorMessage"].as_str().unwrap(), "{name}");
                continue;
            }
            let events: Vec<Value> = deltas.iter().map(event).collect();
            assert_eq!(
                events,
                recorded_events(&case),
                "{name} in chunks of {chunk}"
            );
            let mut got = serde_json::to_value(r.unwrap()).unwrap();
            let mut want = want.clone();
            for v in [&mut got, &mut want] {
                let o = v.as_object_mut().unwrap();
                for k in ["role", "timestamp", "durationMs"] {
                    o.remove(k);
                }
            }
            assert_eq!(got, want, "{name} in chunks of {chunk}");
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
            retry_after_ms: Some(3),
        });
        assert_eq!(
            e.to_string(),
            case["message"]["errorMessage"].as_str().unwrap(),
            "{name}"
        );
        assert!(e.is_retryable() && e.retry_after_ms() == Some(3), "{name}");
    }
}

#[tokio::test]
async fn over_http_the_key_is_a_bearer_and_a_missing_key_is_named() {
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let server = MockServer::start().await;
    let case = cases().remove(0);
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("authorization", "Bearer k"))
        .and(header("accept", "text/event-stream"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            case["stream"].as_str().unwrap().to_string(),
            "text/event-stream",
        ))
        .mount(&server)
        .await;
    let mut req = request(&case);
    req.model.base_url = format!("{}/v1/", server.uri());
    let provider = PiMessages::new(crate::provider::http::client());
    let (ctx, _rx) = context();
    let msg = provider.stream(&req, &ctx).await.unwrap();
    assert_eq!(msg.stop_reason, StopReason::ToolUse);
    assert_eq!(msg.text(), "Hello");
    assert_eq!(msg.usage.total_tokens, 17);
    req.api_key = None;
    let err = provider.stream(&req, &ctx).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "No API key provided for provider \"radius\""
    );
}
