//! The OpenAI Responses API (`openai-responses`) and Azure's (`azure-openai-responses`) end to
//! end against the mock server's `/v1/responses` stream: tool calls and their outputs as input
//! items, reasoning summaries as thinking with the encrypted item carried to the next turn,
//! usage, images in tool results, retries, overflow compaction, Azure's endpoint and key, and
//! one scripted session giving the same transcript through chat completions and Responses.

use serde_json::{json, Value};

use crate::common::wire;
use crate::common::{of_type, MockModel, MockUsage, TestAgent, Turn};
use crate::sessions::session_files;

const RESPONSES: &str = "mock-responses/mock-gpt";

/// models.json with the mock's two providers plus `mock-responses` (reasoning, images) and
/// `mock-azure` (model `gpt-az`) on the same server.
fn models(mock: &MockModel) -> Value {
    let mut m = mock.models_json();
    let base = format!("{}/v1", mock.uri());
    m["providers"]["mock-responses"] = json!({"baseUrl": base, "api": "openai-responses",
        "apiKey": "test-key", "models": [{"id": "mock-gpt", "reasoning": true,
            "input": ["text", "image"]}]});
    m["providers"]["mock-azure"] = json!({"baseUrl": base, "api": "azure-openai-responses",
        "apiKey": "azure-key", "models": [{"id": "gpt-az"}]});
    m
}

fn agent_for(mock: &MockModel) -> TestAgent {
    let agent = TestAgent::new();
    agent.write_models(&models(mock));
    agent
}

pub(crate) fn two_tool_turns() -> Vec<Turn> {
    vec![
        Turn::tools(&[
            ("bash", json!({"command": "echo hi"})),
            ("read", json!({"path": "notes.txt"})),
        ]),
        Turn::text("All done."),
    ]
}

#[tokio::test]
async fn responses_tool_round_trip_sends_calls_and_outputs_as_items() {
    let mock = MockModel::start(two_tool_turns()).await;
    let agent = agent_for(&mock);
    agent.write_file("notes.txt", "the notes say pineapple\n");
    let out = agent
        .run(&["--model", RESPONSES, "-p", "run the tools"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "All done.\n");

    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2, "{out}");
    assert!(reqs.iter().all(|r| r.path == "/v1/responses"));
    assert_eq!(
        reqs[0].headers.get("authorization").map(String::as_str),
        Some("Bearer test-key")
    );
    let first = &reqs[0].body;
    assert_eq!(first["model"], "mock-gpt");
    assert_eq!(first["stream"], true);
    assert_eq!(first["store"], false);
    assert_eq!(wire::tool_names(first), ["bash", "edit", "read", "write"]);
    let bash = wire::tool_schema(first, "bash").expect("bash declared as a function");
    assert_eq!(bash["type"], "object");
    assert!(bash["properties"]["command"].is_object(), "{bash:#}");

    let second = &reqs[1].body;
    let calls = wire::assistant_tool_calls(second);
    let named: Vec<_> = calls.iter().map(|c| (c.0.as_str(), c.1.as_str())).collect();
    assert_eq!(named, [("call_1", "bash"), ("call_2", "read")]);
    assert_eq!(calls[0].2, json!({"command": "echo hi"}));
    let items = wire::messages(second);
    let item_ids: Vec<_> = items
        .iter()
        .filter(|i| i["type"] == "function_call")
        .map(|i| i["id"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        item_ids,
        ["fc_1", "fc_2"],
        "the model's own item ids go back"
    );
    let results = wire::tool_results(second);
    assert_eq!(results.len(), 2, "{second:#}");
    assert_eq!(results[0].0, "call_1");
    assert!(results[0].1.contains("hi"), "{:?}", results[0].1);
    assert_eq!(results[1].0, "call_2");
    assert!(results[1].1.contains("pineapple"), "{:?}", results[1].1);
}

#[tokio::test]
async fn responses_reasoning_is_thinking_and_its_encrypted_item_goes_back() {
    let mock = MockModel::start(vec![
        Turn::reasoned("weighing the options", "First answer."),
        Turn::text("Second answer."),
    ])
    .await;
    let agent = agent_for(&mock);
    let args = ["--model", RESPONSES, "--thinking", "high", "--mode", "json"];
    let out = agent.run(&[&args[..], &["one", "two"]].concat()).await;
    out.assert_ok();

    let bodies = mock.bodies();
    assert_eq!(bodies.len(), 2, "{out}");
    assert_eq!(
        bodies[0]["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert!(
        bodies[0]["include"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("reasoning.encrypted_content"))),
        "{:#}",
        bodies[0]
    );
    let carried: Vec<_> = wire::messages(&bodies[1])
        .into_iter()
        .filter(|i| i["type"] == "reasoning")
        .collect();
    assert_eq!(carried.len(), 1, "{:#}", bodies[1]);
    assert_eq!(carried[0]["encrypted_content"], "enc-0");
    assert_eq!(carried[0]["id"], "rs_0");

    let events = out.events();
    let ends: Vec<_> = of_type(&events, "message_end")
        .into_iter()
        .filter(|e| e["message"]["role"] == "assistant")
        .collect();
    let content = &ends[0]["message"]["content"];
    assert_eq!(content[0]["type"], "thinking", "{content:#}");
    assert_eq!(content[0]["thinking"], "weighing the options");
    assert_eq!(content[1]["text"], "First answer.");
    assert_eq!(ends[0]["message"]["usage"]["reasoning"], 3);
    let thinking_deltas = of_type(&events, "message_update")
        .into_iter()
        .filter(|e| e["assistantMessageEvent"]["type"] == "thinking_delta")
        .count();
    assert!(thinking_deltas >= 2, "the summary streams: {out}");
}

#[tokio::test]
async fn responses_usage_separates_cached_input() {
    let mock = MockModel::start(vec![Turn::text("counted")]).await;
    mock.set_usage(MockUsage {
        input: 20,
        output: 9,
        cache_read: 30,
        cache_write: 0,
    });
    let agent = agent_for(&mock);
    let out = agent
        .run(&["--model", RESPONSES, "--mode", "json", "count"])
        .await;
    out.assert_ok();
    let events = out.events();
    let end = of_type(&events, "message_end")
        .into_iter()
        .rfind(|e| e["message"]["role"] == "assistant")
        .expect("assistant message_end");
    let usage = &end["message"]["usage"];
    assert_eq!(usage["input"], 20, "{usage:#}");
    assert_eq!(usage["cacheRead"], 30);
    assert_eq!(usage["output"], 9);
    assert_eq!(usage["totalTokens"], 59);
    assert_eq!(end["message"]["responseId"], "resp_mock");
}

#[tokio::test]
async fn responses_tool_result_images_go_as_input_images() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("read", json!({"path": "dot.png"}))]),
        Turn::text("a dot"),
    ])
    .await;
    let agent = agent_for(&mock);
    agent.write_file("dot.png", TINY_PNG);
    let out = agent.run(&["--model", RESPONSES, "-p", "look"]).await;
    out.assert_ok();
    let second = &mock.bodies()[1];
    let output = wire::messages(second)
        .into_iter()
        .find(|i| i["type"] == "function_call_output")
        .expect("the read's output");
    let parts = output["output"].as_array().expect("parts for an image");
    let image = parts
        .iter()
        .find(|p| p["type"] == "input_image")
        .expect("an input_image part");
    assert!(
        image["image_url"]
            .as_str()
            .is_some_and(|u| u.starts_with("data:image/png;base64,")),
        "{image:#}"
    );
}

#[tokio::test]
async fn responses_server_errors_retry_and_client_errors_do_not() {
    let mock = MockModel::start(vec![
        Turn::status(500, "responses overloaded"),
        Turn::text("after the retry"),
        Turn::status(400, "invalid responses request: bad item"),
    ])
    .await;
    let agent = agent_for(&mock);
    agent.fast_retries();
    let out = agent
        .run(&["--model", RESPONSES, "--mode", "json", "hi"])
        .await;
    out.assert_ok();
    let events = out.events();
    let starts = of_type(&events, "auto_retry_start");
    assert_eq!(starts.len(), 1, "{out}");
    assert!(
        starts[0]["errorMessage"]
            .as_str()
            .is_some_and(|m| m.contains("responses overloaded")),
        "{out}"
    );
    let out = agent.run(&["--model", RESPONSES, "-p", "again"]).await;
    out.assert_code(1);
    assert!(
        out.stderr.contains("invalid responses request: bad item"),
        "{out}"
    );
    assert_eq!(mock.requests().len(), 3, "a 400 is not retried");
}

#[tokio::test]
async fn responses_context_overflow_compacts_and_retries() {
    let mock = MockModel::start(vec![
        Turn::text("A1"),
        Turn::status(400, "Your input exceeds the context window of this model."),
        Turn::text("OVERFLOW SUMMARY"),
        Turn::text("answer after the retry"),
    ])
    .await;
    let agent = agent_for(&mock);
    agent.write_settings(
        &json!({"compaction": {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20}}),
    );
    let q1 = format!("first question {}", "alpha ".repeat(30));
    let q2 = format!("second question {}", "beta ".repeat(30));
    let out = agent.run(&["--model", RESPONSES, "-p", &q1, &q2]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "answer after the retry\n", "{out}");
    let retry = wire::conversation(&mock.bodies()[3]);
    assert!(retry.contains("OVERFLOW SUMMARY"), "{retry}");
    assert!(retry.contains("second question"), "{retry}");
    assert!(!retry.contains("first question"), "{retry}");
}

#[tokio::test]
async fn azure_responses_use_the_deployment_version_and_api_key() {
    let mock = MockModel::start(vec![Turn::text("from azure")]).await;
    let mut agent = agent_for(&mock);
    agent.env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-az=team-deploy");
    agent.env("AZURE_OPENAI_API_VERSION", "2025-04-01-preview");
    let out = agent
        .run(&["--model", "mock-azure/gpt-az", "-p", "hi"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "from azure\n");
    let req = &mock.requests()[0];
    assert_eq!(req.path, "/v1/responses");
    assert_eq!(req.query, "api-version=2025-04-01-preview");
    assert_eq!(
        req.headers.get("api-key").map(String::as_str),
        Some("azure-key")
    );
    assert!(
        !req.headers.contains_key("authorization"),
        "{:?}",
        req.headers
    );
    assert_eq!(req.body["model"], "team-deploy");
}

/// What a user reads back from a session (the system message, the prompt, the calls, their
/// results, the answer): each message's role and its content, without ids, signatures,
/// usage, timings or which API carried it.
pub(crate) fn transcript(agent: &TestAgent) -> Vec<Value> {
    let files = session_files(agent);
    let text = std::fs::read_to_string(&files[0]).expect("session file");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "message")
        .map(|e| {
            let m = &e["message"];
            let content: Vec<Value> = match &m["content"] {
                Value::String(s) => vec![json!({"type": "text", "text": s})],
                c => c.as_array().cloned().unwrap_or_default(),
            }
            .into_iter()
            .map(|mut b| {
                if let Some(o) = b.as_object_mut() {
                    o.remove("id");
                    o.remove("textSignature");
                    o.remove("thoughtSignature");
                }
                b
            })
            .collect();
            json!({"role": m["role"], "content": content, "toolName": m["toolName"],
                "isError": m["isError"], "stopReason": m["stopReason"]})
        })
        .collect()
}

#[tokio::test]
async fn one_session_through_completions_and_responses_reads_the_same() {
    let mut seen = Vec::new();
    for model in ["mock/mock-model", RESPONSES] {
        let mock = MockModel::start(two_tool_turns()).await;
        let agent = agent_for(&mock);
        agent.write_file("notes.txt", "the notes say pineapple\n");
        agent
            .run(&["--model", model, "-p", "run the tools"])
            .await
            .assert_ok();
        seen.push(transcript(&agent));
    }
    assert_eq!(seen[0].len(), 6, "{:#?}", seen[0]);
    assert_eq!(seen[0], seen[1]);
}

/// A 1×1 PNG.
pub(crate) const TINY_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];
