//! Real wire formats against the mock model server: OpenAI chat completions and Anthropic
//! messages, tool-call round trips, declared tool schemas, auth, retries and HTTP errors.

use serde_json::json;

use crate::common::wire::{self, tool_names};
use crate::common::{of_type, MockModel, TestAgent, Turn};

const OPENAI: &str = "mock/mock-model";
const ANTHROPIC: &str = "mock-anthropic/mock-claude";

/// The model asks for `bash echo hi` and a `read` in one turn, then answers.
fn two_tool_turns() -> Vec<Turn> {
    vec![
        Turn::tools(&[
            ("bash", json!({"command": "echo hi"})),
            ("read", json!({"path": "notes.txt"})),
        ]),
        Turn::text("All done."),
    ]
}

#[tokio::test]
async fn openai_tool_round_trip_sends_both_results_in_source_order() {
    let mock = MockModel::start(two_tool_turns()).await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_file("notes.txt", "the notes say pineapple\n");

    let out = agent.run(&["--model", OPENAI, "-p", "run the tools"]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "All done.\n");

    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2, "{out}");
    assert!(reqs.iter().all(|r| r.path == "/v1/chat/completions"));
    assert_eq!(
        reqs[0].headers.get("authorization").map(String::as_str),
        Some("Bearer test-key")
    );
    assert_eq!(reqs[0].body["model"], "mock-model");
    assert_eq!(reqs[0].body["stream"], true);

    let second = &reqs[1].body;
    let calls = wire::assistant_tool_calls(second);
    let call_ids: Vec<_> = calls.iter().map(|c| (c.0.as_str(), c.1.as_str())).collect();
    assert_eq!(call_ids, [("call_1", "bash"), ("call_2", "read")]);
    assert_eq!(calls[0].2, json!({"command": "echo hi"}));

    let results = wire::tool_results(second);
    assert_eq!(results.len(), 2, "{second:#}");
    assert_eq!(results[0].0, "call_1");
    assert!(
        results[0].1.contains("hi"),
        "bash result: {:?}",
        results[0].1
    );
    assert_eq!(results[1].0, "call_2");
    assert!(
        results[1].1.contains("pineapple"),
        "read result: {:?}",
        results[1].1
    );
    // The assistant message with the calls comes right before the results.
    let roles: Vec<_> = wire::messages(second)
        .iter()
        .map(|m| m["role"].as_str().unwrap_or("").to_string())
        .collect();
    let tail: Vec<_> = roles
        .iter()
        .rev()
        .take(3)
        .rev()
        .map(String::as_str)
        .collect();
    assert_eq!(tail, ["assistant", "tool", "tool"]);
}

#[tokio::test]
async fn anthropic_tool_round_trip_sends_results_in_one_user_message() {
    let mock = MockModel::start(two_tool_turns()).await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_file("notes.txt", "the notes say pineapple\n");

    let out = agent
        .run(&["--model", ANTHROPIC, "-p", "run the tools"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "All done.\n");

    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2, "{out}");
    assert!(reqs.iter().all(|r| r.path == "/v1/messages"));
    assert_eq!(
        reqs[0].headers.get("x-api-key").map(String::as_str),
        Some("test-key")
    );
    assert!(reqs[0].headers.contains_key("anthropic-version"));
    assert_eq!(reqs[0].body["model"], "mock-claude");
    assert!(reqs[0].body["max_tokens"].as_u64().unwrap_or(0) > 0);

    let second = &reqs[1].body;
    let msgs = wire::messages(second);
    let last = msgs.last().expect("messages");
    assert_eq!(last["role"], "user");
    let blocks = last["content"].as_array().expect("content blocks");
    let ids: Vec<_> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["tool_use_id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids, ["toolu_1", "toolu_2"], "{last:#}");
    let results = wire::tool_results(second);
    assert!(results[0].1.contains("hi"));
    assert!(results[1].1.contains("pineapple"));
    let uses: Vec<_> = msgs[msgs.len() - 2]["content"]
        .as_array()
        .expect("assistant blocks")
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(uses, ["bash", "read"]);
}

async fn declared_tools(args: &[&str]) -> Vec<String> {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let mut all = vec!["--model", OPENAI];
    all.extend_from_slice(args);
    all.extend(["-p", "hi"]);
    agent.run(&all).await.assert_ok();
    tool_names(&mock.bodies()[0])
}

#[tokio::test]
async fn default_request_declares_read_bash_edit_write_only() {
    assert_eq!(declared_tools(&[]).await, ["bash", "edit", "read", "write"]);
}

#[tokio::test]
async fn tools_flag_replaces_declared_tool_list() {
    assert_eq!(
        declared_tools(&["--tools", "read,grep"]).await,
        ["grep", "read"]
    );
}

#[tokio::test]
async fn exclude_tools_flag_removes_a_tool() {
    assert_eq!(
        declared_tools(&["-xt", "bash"]).await,
        ["edit", "read", "write"]
    );
}

#[tokio::test]
async fn no_tools_flag_declares_no_tools() {
    assert!(declared_tools(&["--no-tools"]).await.is_empty());
}

#[tokio::test]
async fn no_builtin_tools_flag_declares_no_builtins() {
    assert!(declared_tools(&["-nbt"]).await.is_empty());
}

/// Parallel tools may finish in any order; the model still gets results in call order.
#[tokio::test]
async fn parallel_tool_results_reach_the_model_in_call_order() {
    let mock = MockModel::start(vec![
        Turn::tools(&[
            ("bash", json!({"command": "sleep 0.3; echo slow-one"})),
            ("bash", json!({"command": "echo fast-two"})),
        ]),
        Turn::text("ok"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    agent
        .run(&["--model", OPENAI, "-p", "go"])
        .await
        .assert_ok();
    let results = wire::tool_results(&mock.bodies()[1]);
    let got: Vec<_> = results
        .iter()
        .map(|(id, text)| (id.as_str(), text.trim()))
        .collect();
    assert_eq!(got, [("call_1", "slow-one"), ("call_2", "fast-two")]);
}

#[tokio::test]
async fn tool_schemas_describe_their_parameters() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    agent
        .run(&["--model", ANTHROPIC, "-p", "hi"])
        .await
        .assert_ok();
    let body = &mock.bodies()[0];
    let bash = wire::tool_schema(body, "bash").expect("bash schema");
    assert_eq!(bash["type"], "object");
    assert!(bash["properties"]["command"].is_object(), "{bash:#}");
    assert!(bash["required"]
        .as_array()
        .is_some_and(|r| r.contains(&json!("command"))));
    let edit = wire::tool_schema(body, "edit").expect("edit schema");
    assert!(edit["properties"]["edits"].is_object(), "{edit:#}");
}

#[tokio::test]
async fn api_key_flag_overrides_models_json_key() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    agent
        .run(&[
            "--provider",
            "mock",
            "--model",
            "mock-model",
            "--api-key",
            "override-key",
            "-p",
            "hi",
        ])
        .await
        .assert_ok();
    let auth = mock.requests()[0].headers.get("authorization").cloned();
    assert_eq!(auth.as_deref(), Some("Bearer override-key"));
}

#[tokio::test]
async fn server_errors_are_retried_and_reported_as_events() {
    let mock = MockModel::start(vec![
        Turn::status(500, "mock overload one"),
        Turn::status(500, "mock overload two"),
        Turn::text("third time lucky"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    agent.fast_retries();
    let out = agent
        .run(&["--model", OPENAI, "--mode", "json", "hi"])
        .await;
    out.assert_ok();
    assert_eq!(mock.requests().len(), 3);
    let events = out.events();
    let starts = of_type(&events, "auto_retry_start");
    assert_eq!(starts.len(), 2, "{out}");
    assert_eq!(starts[0]["attempt"], 1);
    assert_eq!(starts[1]["attempt"], 2);
    assert!(starts[0]["maxAttempts"].as_u64().unwrap_or(0) >= 2);
    assert!(starts[0]["errorMessage"]
        .as_str()
        .is_some_and(|m| !m.is_empty()));
    let ends = of_type(&events, "auto_retry_end");
    assert_eq!(
        ends.last().map(|e| e["success"].clone()),
        Some(json!(true)),
        "{out}"
    );
    let end = of_type(&events, "agent_end");
    let last = end[0]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last["content"][0]["text"], "third time lucky");
}

#[tokio::test]
async fn client_error_fails_without_retry_and_shows_message() {
    let mock = MockModel::start(vec![
        Turn::status(400, "invalid mock request: bad field"),
        Turn::text("never"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    agent.fast_retries();
    let out = agent.run(&["--model", OPENAI, "-p", "hi"]).await;
    out.assert_code(1);
    assert!(
        out.stderr.contains("invalid mock request: bad field"),
        "{out}"
    );
    assert_eq!(out.stdout, "");
    assert_eq!(mock.requests().len(), 1, "a 400 must not be retried");
}

#[tokio::test]
async fn unknown_model_fails_with_clear_message() {
    let mock = MockModel::start(vec![]).await;
    let agent = TestAgent::with_mock(&mock);
    for pattern in ["no-such-model-anywhere", "no-such-provider/mock-model"] {
        let out = agent.run(&["--model", pattern, "-p", "hi"]).await;
        out.assert_code(1);
        assert!(
            out.stderr
                .contains(pattern.split('/').next().unwrap_or(pattern)),
            "{out}"
        );
        assert_eq!(out.stdout, "");
    }
    assert!(mock.requests().is_empty());
}

/// As pi: an id the catalogue lacks, for a provider that exists, is sent as a custom model id
/// with a warning (new models work before models.json lists them).
#[tokio::test]
async fn unlisted_model_id_for_known_provider_is_used_with_warning() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let out = agent
        .run(&["--model", "mock/brand-new-model", "-p", "hi"])
        .await;
    out.assert_ok();
    assert!(
        out.stderr.contains("brand-new-model") && out.stderr.contains("not found"),
        "{out}"
    );
    assert_eq!(mock.bodies()[0]["model"], "brand-new-model");
}
