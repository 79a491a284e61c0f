//! pi 1.6's request bodies for a conversation whose prompt and tools change along the way
//! (`fixtures/providers/system_messages_cases.json`, recorded by
//! `tests/ts-pi/system-messages-fixtures.mjs`): each API with the system messages in place
//! (`compat.supportsMidConvoSystemMessages`) and collapsed into one leading prompt.

use serde_json::Value;

use crate::message::system;
use crate::provider::{fixture_case, transcript, Request};

const CASES: &str = include_str!("../../fixtures/providers/system_messages_cases.json");

/// The request the agent makes of a case: the transcript with its system messages, and the
/// prompt and tools they replay to.
fn request(case: &Value) -> Request {
    let api = case["api"].as_str().unwrap();
    let provider = case["provider"].as_str().unwrap();
    let mut req = fixture_case::request(case, api, provider);
    let now = system::current(req.messages.iter().map(|m| m.as_ref())).unwrap();
    req.system_prompt = now.text();
    req.tools = now
        .tools_added
        .unwrap_or_default()
        .iter()
        .map(transcript::spec)
        .collect();
    req
}

fn body_of(req: &Request) -> Value {
    match req.model.api.as_str() {
        "openai-completions" => crate::provider::openai::build_body(req),
        "anthropic-messages" => crate::provider::anthropic::build_body(req),
        "openai-responses" => crate::provider::openai_responses::build_body(req),
        "openai-codex-responses" => crate::provider::openai_codex::build_body(req),
        "mistral-conversations" => crate::provider::mistral::build_body(req),
        "pi-messages" => crate::provider::pi_messages::build_body(req),
        other => panic!("no body for {other}"),
    }
}

#[test]
fn bodies_are_pi_1_6s() {
    for case in fixture_case::all(CASES) {
        let name = case["name"].as_str().unwrap();
        let req = request(&case);
        let want = &case["request"]["body"];
        if req.model.api == "anthropic-messages" {
            let login = req
                .api_key
                .as_deref()
                .is_some_and(|k| k.contains("sk-ant-oat"));
            let native = crate::provider::anthropic_system::native_tool_changes(&req);
            let betas = crate::provider::anthropic_params::betas(&req, login, native).join(",");
            assert_eq!(
                Some(betas.as_str()).filter(|b| !b.is_empty()),
                case["request"]["beta"].as_str(),
                "{name}"
            );
        }
        // Compared as text: the key order is 1.6's too.
        assert_eq!(body_of(&req).to_string(), want.to_string(), "{name}");
    }
}

/// A hook that replaced the prompt takes the system messages out of the request (the agent
/// does): the in-place API then sends the request's prompt and tools as one leading prompt.
#[test]
fn a_request_without_system_messages_is_collapsed_whatever_the_model_takes() {
    let case = fixture_case::named(CASES, "completions, in place");
    let mut req = request(&case);
    req.system_prompt = "forced".into();
    req.messages
        .retain(|m| !matches!(m.as_ref(), crate::message::Message::System(_)));
    let body = body_of(&req);
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(body["messages"][0]["content"], "forced");
}
