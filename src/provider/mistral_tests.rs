//! Tests of the Mistral API: bodies, streamed events and messages compared with what pi 1.6.0
//! sends and makes of the same conversations (`fixtures/providers/mistral_cases.json`,
//! recorded by `tests/ts-pi/mistral-fixtures.mjs`), then the thinking fields, the output
//! budget and the error wording one by one, and the endpoint over HTTP.

use serde_json::{json, Value};

use super::*;
use crate::delta::AssistantDelta;
use crate::message::StopReason;
use crate::provider::fixture_case::{event, recorded_events};
use crate::provider::mistral_body;
use crate::provider::mistral_events::MistralParser;
use crate::provider::stream::test_support::*;
use crate::provider::ToolSpec;
use crate::session::compaction::overflow::is_context_overflow_error;

const CASES: &str = include_str!("../../fixtures/providers/mistral_cases.json");

fn cases() -> Vec<Value> {
    crate::provider::fixture_case::all(CASES)
}

fn case(name: &str) -> Value {
    crate::provider::fixture_case::named(CASES, name)
}

fn request(case: &Value) -> Request {
    crate::provider::fixture_case::request(case, MISTRAL_API, "mistral")
}

#[test]
fn bodies_and_urls_are_pi_1_6s() {
    for case in cases() {
        let req = request(&case);
        let name = case["name"].as_str().unwrap();
        assert_eq!(
            stream_url(&req.model),
            case["request"]["url"].as_str().unwrap(),
            "{name}"
        );
        // Compared as text: the key order is 1.6's too.
        assert_eq!(
            build_body(&req).to_string(),
            case["request"]["body"].to_string(),
            "{name}"
        );
        assert_eq!(
            case["request"]["headers"],
            json!({"accept": "text/event-stream", "authorization": "Bearer k",
                "content-type": "application/json"}),
            "{name}: the headers this client sends too"
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
        MistralParser::new(m, ctx.deltas.clone()),
    );
    (r, drain(&mut rx))
}

/// A message as JSON, without what differs by run (times) or is not this parser's (the
/// agent words failures).
fn comparable(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        for k in ["role", "timestamp", "durationMs", "errorMessage"] {
            o.remove(k);
        }
        if let Some(cost) = o.get_mut("usage").and_then(|u| u.get_mut("cost")) {
            if let Some(c) = cost.as_object_mut() {
                c.remove("totalFromProvider");
            }
        }
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
            if want["stopReason"] == "error" {
                let err = r.expect_err(name).to_string();
                assert_eq!(err, want["errorMessage"].as_str().unwrap(), "{name}");
                // 1.6 ends its open blocks before it fails; the agent's error ends the turn.
                let events_1_6 = recorded_events(&case);
                assert_eq!(events, events_1_6, "{name} in chunks of {chunk}");
                continue;
            }
            let msg = r.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_well_formed(&deltas, msg.content.len());
            assert_eq!(
                events,
                recorded_events(&case),
                "{name} in chunks of {chunk}"
            );
            let got = comparable(serde_json::to_value(&msg).unwrap());
            assert_eq!(got, comparable(want.clone()), "{name} in chunks of {chunk}");
        }
    }
}

#[test]
fn failures_are_worded_and_retried_as_in_1_6() {
    for case in cases().into_iter().filter(|c| c["status"] != 200) {
        let name = case["name"].as_str().unwrap();
        let status = case["status"].as_u64().unwrap() as u16;
        let body = case["errorBody"].as_str().unwrap();
        // 1.6's recording had no status text (a `Response` made in process).
        assert_eq!(
            error_message(status, body, None),
            case["message"]["errorMessage"].as_str().unwrap(),
            "{name}"
        );
    }
    let e = worded(ProviderError::Http {
        status: 429,
        message: String::new(),
        retry_after_ms: Some(7),
    });
    assert_eq!(e.to_string(), "Mistral API error (429): Too Many Requests");
    assert!(e.is_retryable());
    assert_eq!(e.retry_after_ms(), Some(7));
    let overflow = worded(ProviderError::Http {
        status: 400,
        message: case("overflow")["errorBody"].as_str().unwrap().into(),
        retry_after_ms: None,
    });
    assert!(!overflow.is_retryable());
    assert!(
        is_context_overflow_error(&overflow.to_string()),
        "{overflow}"
    );
    let long = error_message(500, &"é".repeat(4010), None);
    assert!(long.ends_with("... [truncated 10 chars]"), "{long}");
    assert!(matches!(
        worded(ProviderError::Aborted),
        ProviderError::Aborted
    ));
}

#[test]
fn an_error_finish_is_retried_and_other_failures_are_not() {
    let m = request(&case("server error finish")).model;
    let err = parse(
        &m,
        case("server error finish")["stream"].as_str().unwrap(),
        9,
    )
    .0
    .unwrap_err();
    assert!(err.is_retryable(), "{err}");
    let err = parse(&m, case("no finish")["stream"].as_str().unwrap(), 9)
        .0
        .unwrap_err();
    assert!(err.is_retryable(), "1.6 retries what ended without: {err}");
    for name in ["unknown finish", "an event without choices"] {
        let err = parse(&m, case(name)["stream"].as_str().unwrap(), 9)
            .0
            .unwrap_err();
        assert!(!err.is_retryable(), "{name}: {err}");
    }
}

#[test]
fn thinking_fields_follow_the_map_or_prompt_mode() {
    let mut m = model(MISTRAL_API, "https://api.mistral.ai");
    m.reasoning = true;
    m.thinking_level_map = thinking_map::parse(Some(&json!({"off": "none", "minimal": null,
        "low": null, "medium": null, "high": "high", "xhigh": null, "max": null})));
    fn f(m: &Model, l: ThinkingLevel) -> ThinkingFields<'_> {
        thinking_fields(m, l)
    }
    assert_eq!(f(&m, ThinkingLevel::Off).reasoning_effort, Some("none"));
    assert_eq!(f(&m, ThinkingLevel::Low).reasoning_effort, Some("high"));
    assert_eq!(f(&m, ThinkingLevel::Max).reasoning_effort, Some("high"));
    // A level the map offers without naming it is asked for as `high`.
    m.thinking_level_map = thinking_map::parse(Some(&json!({"off": null, "low": "low"})));
    assert_eq!(f(&m, ThinkingLevel::Medium).reasoning_effort, Some("high"));
    assert_eq!(f(&m, ThinkingLevel::Off), ThinkingFields::default());
    m.thinking_level_map.clear();
    assert_eq!(f(&m, ThinkingLevel::Minimal).prompt_mode, Some("reasoning"));
    assert_eq!(f(&m, ThinkingLevel::Off), ThinkingFields::default());
    m.reasoning = false;
    assert_eq!(f(&m, ThinkingLevel::High), ThinkingFields::default());
}

#[test]
fn the_output_budget_leaves_room_for_the_input() {
    let mut req = request(&case("text-only devstral"));
    req.model.context_window = 0;
    assert_eq!(build_body(&req)["max_tokens"], req.model.max_tokens);
    // A small window keeps only the fixed margin, and at least one token.
    req.model.context_window = 10;
    assert_eq!(build_body(&req)["max_tokens"], 1);
    req.model.context_window = 1_000_000;
    req.model.max_tokens = 5000;
    assert_eq!(build_body(&req)["max_tokens"], 5000);
}

#[test]
fn a_tool_that_requires_strict_sampling_fails_unless_the_model_is_marked_strict() {
    let mut req = request(&case("large 4 at high"));
    let mut tools: Vec<ToolSpec> = req.tools.to_vec();
    tools[0].constrained_sampling = Some(json!({"type": "json_schema", "strict": "require"}));
    req.tools = tools.into();
    let replayed = mistral_body::replayed(&req);
    let err = mistral_body::body(&req, &replayed).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Tool \"read\" requires JSON-schema constrained sampling, but strict tools are unsupported."
    );
    req.model.compat = json!({"supportsStrictMode": true});
    let body = build_body(&req);
    assert_eq!(body["tools"][0]["function"]["strict"], true);
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["additionalProperties"],
        false
    );
    assert_eq!(body["tools"][1]["function"]["strict"], false);
}

#[test]
fn the_endpoint_keeps_the_base_path() {
    let mut m = model(MISTRAL_API, "https://proxy.example/mistral/");
    assert_eq!(
        stream_url(&m),
        "https://proxy.example/mistral/v1/chat/completions"
    );
    m.base_url = "https://api.mistral.ai?x=1".into();
    assert_eq!(stream_url(&m), "https://api.mistral.ai/v1/chat/completions");
}

#[tokio::test]
async fn over_http_the_key_is_a_bearer_and_errors_keep_their_words() {
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let server = MockServer::start().await;
    let case = case("glm at max");
    Mock::given(method("POST"))
        .and(path("/base/v1/chat/completions"))
        .and(header("authorization", "Bearer k"))
        .and(header("accept", "text/event-stream"))
        .and(header("x-affinity", "session-1"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            case["stream"].as_str().unwrap().to_string(),
            "text/event-stream",
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_raw(
            r#"{"object":"error","message":"Service unavailable","type":"internal_server_error"}"#,
            "application/json",
        ))
        .mount(&server)
        .await;
    let mut req = request(&case);
    req.model.base_url = format!("{}/base/", server.uri());
    // The session keys the prompt cache and keeps to one replica, as 1.6 sends it.
    req.session_id = Some("session-1".into());
    let provider = MistralConversations::new(crate::provider::http::client());
    let (ctx, _rx) = context();
    let msg = provider.stream(&req, &ctx).await.unwrap();
    let sent: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert_eq!(sent["prompt_cache_key"], "session-1");
    assert_eq!(msg.stop_reason, StopReason::Length);
    assert_eq!(msg.text(), "cut");
    assert_eq!(msg.usage.cache_read, 2);
    let err = provider.stream(&req, &ctx).await.unwrap_err();
    assert!(err.is_retryable());
    assert_eq!(
        err.to_string(),
        r#"Mistral API error (503): {"object":"error","message":"Service unavailable","type":"internal_server_error"}"#
    );
    req.api_key = None;
    let err = provider.stream(&req, &ctx).await.unwrap_err();
    assert_eq!(err.to_string(), "No API key for provider: mistral");
}
