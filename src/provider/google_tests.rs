//! Tests of the Gemini API: bodies and parsed streams compared with what pi 1.6.0 sends and
//! makes of the same conversations (`fixtures/providers/google_cases.json`, recorded by
//! `tests/ts-pi/google-fixtures.mjs`), then the model-family rules, the thinking
//! configuration and the error wording one by one.

use serde_json::{json, Value};

use super::*;
use crate::delta::AssistantDelta;
use crate::message::StopReason;
use crate::provider::google_body::{self, const_as_enum};
use crate::provider::google_events::GoogleParser;
use crate::provider::stream::test_support::*;
use crate::provider::ToolSpec;
use crate::session::compaction::overflow::is_context_overflow_error;

const CASES: &str = include_str!("../../fixtures/providers/google_cases.json");

fn cases() -> Vec<Value> {
    crate::provider::fixture_case::all(CASES)
}

fn gemini(id: &str) -> Model {
    let mut m = model(
        GOOGLE_API,
        "https://generativelanguage.googleapis.com/v1beta",
    );
    m.id = id.into();
    m.provider = "google".into();
    m.reasoning = true;
    m
}

/// The case's model, conversation and tools as a request.
fn request(case: &Value) -> Request {
    let spec = &case["model"];
    let mut m = gemini(spec["id"].as_str().unwrap());
    m.base_url = spec["baseUrl"].as_str().unwrap().into();
    m.reasoning = spec["reasoning"].as_bool().unwrap();
    m.max_tokens = spec["maxTokens"].as_u64().unwrap();
    m.cost = serde_json::from_value(spec["cost"].clone()).unwrap();
    m.thinking_level_map = thinking_map::parse(Some(&spec["thinkingLevelMap"]));
    Request {
        model: m,
        api_key: Some("k".into()),
        system_prompt: "sys".into(),
        messages: crate::provider::fixture_case::messages(case),
        tools: crate::provider::fixture_case::tools(case).into(),
        thinking: ThinkingLevel::parse(case["thinking"].as_str().unwrap()).unwrap(),
        session_id: None,
    }
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
        let req = request(&case);
        let want = &case["message"];
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

#[test]
fn several_calls_in_one_chunk_each_start_fill_and_end() {
    let case = &cases()[0];
    let (r, deltas) = parse(&request(case).model, case["stream"].as_str().unwrap(), 9);
    let msg = r.unwrap();
    let calls = msg.tool_calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[1].id, "given-id");
    assert_ne!(calls[2].id, "given-id", "a repeated id is replaced");
    assert_ne!(calls[0].id, calls[2].id);
    assert_eq!(calls[0].thought_signature.as_deref(), Some("Y2FsbA=="));
    let args: Vec<&str> = deltas
        .iter()
        .filter_map(|d| match d {
            AssistantDelta::ToolCallDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(args, [r#"{"path":"x"}"#, r#"{"command":"ls"}"#, "{}"]);
}

#[test]
fn an_error_object_in_the_stream_fails_the_call_retryably_when_transient() {
    let m = gemini("gemini-2.5-flash");
    let busy = "data: {\"error\":{\"code\":503,\"message\":\"overloaded\",\"status\":\"UNAVAILABLE\"}}\n\n";
    let err = parse(&m, busy, 5).0.unwrap_err();
    assert!(err.is_retryable());
    assert!(
        err.to_string()
            .starts_with("got status: UNAVAILABLE. {\"error\""),
        "{err}"
    );
    let bad =
        "data: {\"error\":{\"code\":400,\"message\":\"no\",\"status\":\"INVALID_ARGUMENT\"}}\n\n";
    assert!(!parse(&m, bad, 5).0.unwrap_err().is_retryable());
    let odd = "data: {\"candidates\":[{\"finishReason\":\"NEW_REASON\"}]}\n\n";
    assert_eq!(
        parse(&m, odd, 5).0.unwrap_err().to_string(),
        "Unhandled stop reason: NEW_REASON"
    );
}

#[test]
fn http_failures_are_worded_as_the_sdk_words_them() {
    let overflow = ProviderError::Http {
        status: 400,
        message: "{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}\n".into(),
        retry_after_ms: None,
    };
    let e = worded(overflow);
    assert_eq!(
        e.to_string(),
        r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#
    );
    assert!(is_context_overflow_error(&e.to_string()));
    assert!(!e.is_retryable());
    let limited = worded(ProviderError::Http {
        status: 429,
        message: "slow down".into(),
        retry_after_ms: Some(5),
    });
    assert_eq!(
        limited.to_string(),
        r#"{"error":{"message":"slow down","code":429,"status":"Too Many Requests"}}"#
    );
    assert!(limited.is_retryable());
    assert_eq!(limited.retry_after_ms(), Some(5));
    let other = worded(ProviderError::Aborted);
    assert!(matches!(other, ProviderError::Aborted));
}

#[test]
fn model_families_as_1_6_tells_them() {
    for (id, level, ids, strict) in [
        ("gemini-2.5-pro", false, false, false),
        ("gemini-3-flash-preview", true, true, true),
        ("gemini-3.1-pro-preview", true, true, true),
        ("gemini-3-pro-image", true, true, true),
        ("gemini-3-nano", false, true, true),
        ("gemini-4-argon", true, true, true),
        ("gemini-flash-latest", true, false, false),
        ("gemma-4-31b-it", true, false, false),
        ("gemma4-e2b", true, false, false),
        ("claude-sonnet-4", false, true, false),
        ("gemini-live-3-x", false, true, true),
    ] {
        assert_eq!(uses_thinking_level(id), level, "{id} level");
        assert_eq!(requires_tool_call_id(id), ids, "{id} ids");
        assert_eq!(supports_strict_tools(id), strict, "{id} strict");
    }
    assert!(!multimodal_function_response("gemini-2.5-flash"));
    assert!(multimodal_function_response("gemini-3-flash-preview"));
    assert!(multimodal_function_response("claude-sonnet-4"));
}

#[test]
fn thinking_configs_by_level_budget_and_map() {
    let cfg = |id: &str, level| thinking_config(&gemini(id), level).unwrap();
    let budget = |b| ThinkingConfig {
        include_thoughts: Some(true),
        thinking_level: None,
        thinking_budget: Some(b),
    };
    assert_eq!(
        cfg("gemini-2.5-pro", ThinkingLevel::Minimal),
        Some(budget(128))
    );
    assert_eq!(
        cfg("gemini-2.5-flash-lite", ThinkingLevel::Minimal),
        Some(budget(512))
    );
    assert_eq!(
        cfg("gemini-2.5-flash", ThinkingLevel::High),
        Some(budget(24576))
    );
    assert_eq!(
        cfg("gemini-2.0-flash", ThinkingLevel::Low),
        Some(budget(-1))
    );
    let mut plain = gemini("gemini-2.5-flash");
    plain.reasoning = false;
    assert_eq!(thinking_config(&plain, ThinkingLevel::High).unwrap(), None);
    // A level model that can switch thinking off sends a zero budget.
    assert_eq!(
        cfg("gemini-3-flash-preview", ThinkingLevel::Off),
        Some(ThinkingConfig {
            include_thoughts: None,
            thinking_level: None,
            thinking_budget: Some(0),
        })
    );
    // A map naming a level Gemini does not have fails as 1.6 does.
    let mut neon = gemini("gemini-4-neon");
    neon.thinking_level_map = thinking_map::parse(Some(&json!({"xhigh": "xhigh"})));
    let err = thinking_config(&neon, ThinkingLevel::Xhigh).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Unsupported Google thinking level mapping for google/gemini-4-neon: xhigh -> xhigh"
    );
}

#[test]
fn consts_become_enums_only_where_they_are_schemas() {
    let schema = json!({"type": "object", "properties": {
            "const": {"type": "string", "const": "a"},
            "n": {"const": 2, "description": "d"},
            "b": {"const": true},
            "e": {"const": "x", "enum": ["y"]}},
        "default": {"const": "literal"},
        "anyOf": [{"const": "v"}]});
    assert_eq!(
        const_as_enum(schema, false),
        json!({"type": "object", "properties": {
                "const": {"type": "string", "enum": ["a"]},
                "n": {"description": "d", "enum": [2]},
                "b": {"const": true},
                "e": {"const": "x", "enum": ["y"]}},
            "default": {"const": "literal"},
            "anyOf": [{"enum": ["v"]}]})
    );
}

#[test]
fn a_tool_that_requires_strict_sampling_fails_on_a_model_without_it() {
    let mut req = request(&cases()[3]);
    let mut tools: Vec<ToolSpec> = req.tools.to_vec();
    tools[0].constrained_sampling = Some(json!({"type": "json_schema", "strict": "require"}));
    req.tools = tools.into();
    let replayed = google_body::replayed(&req);
    let err = google_body::body(&req, &replayed).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Tool \"read\" requires JSON-schema constrained sampling, but strict tools are unsupported."
    );
}

#[test]
fn only_the_model_that_made_them_gets_signatures_back() {
    let mut req = request(&cases()[0]);
    req.model.id = "gemini-3.1-pro-preview".into();
    let body = build_body(&req);
    let text = body.to_string();
    assert!(!text.contains("thoughtSignature"), "{text}");
    assert!(!text.contains("\"thought\":true"), "{text}");
}

#[tokio::test]
async fn over_http_the_key_goes_in_x_goog_api_key_and_errors_keep_their_words() {
    use wiremock::matchers::{header, method, path, query_param};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let server = MockServer::start().await;
    let case = &cases()[7];
    Mock::given(method("POST"))
        .and(path(
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        ))
        .and(query_param("alt", "sse"))
        .and(header("x-goog-api-key", "k"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            case["stream"].as_str().unwrap().to_string(),
            "text/event-stream",
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_raw(
            r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#,
            "application/json",
        ))
        .mount(&server)
        .await;
    let mut req = request(case);
    req.model.base_url = format!("{}/v1beta/", server.uri());
    let provider = GoogleGenerativeAi::new(crate::provider::http::client());
    let (ctx, _rx) = context();
    let msg = provider.stream(&req, &ctx).await.unwrap();
    assert_eq!(msg.stop_reason, StopReason::Length);
    assert_eq!(msg.text(), "cut");
    let err = provider.stream(&req, &ctx).await.unwrap_err();
    assert!(err.is_retryable());
    assert_eq!(
        err.to_string(),
        r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#
    );
    req.api_key = None;
    let err = provider.stream(&req, &ctx).await.unwrap_err();
    assert_eq!(err.to_string(), "No API key for provider: google");
}
