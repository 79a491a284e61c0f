//! pi 1.6.0's Messages requests for one conversation across the models and settings that
//! shape them (`fixtures/providers/anthropic_cases.json`, recorded by
//! `tests/ts-pi/anthropic-fixtures.mjs`): the body byte for byte, the betas, the URL.

use serde_json::Value;

use super::anthropic::{build_body, is_subscription_token};
use super::anthropic_params::betas;
use super::anthropic_system::native_tool_changes;
use super::{fixture_case, Request};

const CASES: &str = include_str!("../../fixtures/providers/anthropic_cases.json");

fn request(case: &Value) -> Request {
    let provider = case["provider"].as_str().unwrap();
    let mut req = fixture_case::request(case, "anthropic-messages", provider);
    req.session_id = case["sessionId"].as_str().map(str::to_string);
    req
}

#[test]
fn bodies_are_pi_1_6s() {
    for case in fixture_case::all(CASES) {
        let name = case["name"].as_str().unwrap();
        let req = request(&case);
        // Compared as text: the key order is 1.6's too.
        assert_eq!(
            build_body(&req).to_string(),
            case["request"]["body"].to_string(),
            "{name}"
        );
    }
}

#[test]
fn betas_are_pi_1_6s() {
    for case in fixture_case::all(CASES) {
        let name = case["name"].as_str().unwrap();
        let req = request(&case);
        let login = is_subscription_token(req.api_key.as_deref().unwrap());
        let got = betas(&req, login, native_tool_changes(&req)).join(",");
        let want = case["request"]["headers"]["anthropic-beta"]
            .as_str()
            .unwrap_or("");
        assert_eq!(got, want, "{name}");
    }
}

/// What reaches the server: the beta endpoint, and 1.6's headers with their values (the
/// client's own `user-agent` aside, where the request is not presenting itself as Claude
/// Code). The effort the reply was asked for is the one it is recorded with.
#[tokio::test]
async fn requests_on_the_wire_are_pi_1_6s() {
    use wiremock::matchers::{method, path, query_param};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::anthropic::AnthropicMessages;
    use super::stream::test_support::context;
    use super::Provider;

    const STREAM: &str = include_str!("../../fixtures/providers/anthropic_tool_call.sse");
    for case in fixture_case::all(CASES) {
        let name = case["name"].as_str().unwrap();
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .and(query_param("beta", "true"))
            .respond_with(
                ResponseTemplate::new(200).set_body_raw(STREAM.as_bytes(), "text/event-stream"),
            )
            .mount(&server)
            .await;
        let mut req = request(&case);
        req.model.base_url = server.uri();
        let (ctx, _rx) = context();
        let message = AnthropicMessages::new(super::http::client())
            .stream(&req, &ctx)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let sent = &server.received_requests().await.unwrap()[0];
        for (k, v) in case["request"]["headers"].as_object().unwrap() {
            let got = sent.headers.get(k.as_str()).map(|h| h.to_str().unwrap());
            assert_eq!(got, v.as_str(), "{name}: {k}");
        }
        let marked = case["request"]["body"]["messages"]
            .as_array()
            .unwrap()
            .last()
            .and_then(|m| m.pointer("/output_config/effort"))
            .and_then(Value::as_str);
        assert_eq!(message.provider_thinking_level.as_deref(), marked, "{name}");
    }
}
