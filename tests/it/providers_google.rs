//! The Gemini API (`google-generative-ai`) end to end against the mock server's
//! `streamGenerateContent` stream: the URL, key header and body, thinking with its signature
//! carried to the next turn, parallel function calls and their responses, an image in a tool
//! result, usage, retries, a client error, overflow compaction, and one scripted session giving
//! the same transcript through chat completions and Gemini.

use serde_json::{json, Value};

use crate::common::mock_google::{CALL_SIGNATURE, THOUGHT_SIGNATURE, THOUGHT_TOKENS};
use crate::common::wire;
use crate::common::{of_type, MockModel, MockUsage, TestAgent, Turn};
use crate::providers_responses::{transcript, two_tool_turns, TINY_PNG};

const MODEL_ID: &str = "gemini-3-flash-preview";
const GEMINI: &str = "mock-google/gemini-3-flash-preview";

/// models.json with the mock's providers plus `mock-google`: a Gemini 3 model (reasoning,
/// images) on the same server.
fn models(mock: &MockModel) -> Value {
    let mut m = mock.models_json();
    m["providers"]["mock-google"] = json!({"baseUrl": format!("{}/v1beta", mock.uri()),
        "api": "google-generative-ai", "apiKey": "test-key",
        "models": [{"id": MODEL_ID, "reasoning": true, "input": ["text", "image"]}]});
    m
}

fn agent_for(mock: &MockModel) -> TestAgent {
    let agent = TestAgent::new();
    agent.write_models(&models(mock));
    agent
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
async fn gemini_text_goes_to_stream_generate_content_with_the_key_and_prompt() {
    let mock = MockModel::start(vec![Turn::text("Hello from Gemini.")]).await;
    let agent = agent_for(&mock);
    let out = agent
        .run(&["--model", GEMINI, "--thinking", "off", "-p", "hi"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "Hello from Gemini.\n");

    let req = &mock.requests()[0];
    assert_eq!(
        req.path,
        format!("/v1beta/models/{MODEL_ID}:streamGenerateContent")
    );
    assert_eq!(req.query, "alt=sse");
    assert_eq!(
        req.headers.get("x-goog-api-key").map(String::as_str),
        Some("test-key")
    );
    assert!(
        !req.headers.contains_key("authorization"),
        "{:?}",
        req.headers
    );
    let body = &req.body;
    assert!(wire::system_text(body).contains("pi"), "{body:#}");
    assert_eq!(body["systemInstruction"]["role"], "user");
    assert_eq!(
        body["contents"][0],
        json!({"parts": [{"text": "hi"}], "role": "user"})
    );
    assert_eq!(wire::tool_names(body), ["bash", "edit", "read", "write"]);
    // Gemini 3 samples pi's built-in tools strictly: closed schemas, validated calling.
    let bash = wire::tool_schema(body, "bash").expect("bash declared");
    assert_eq!(bash["additionalProperties"], false, "{bash:#}");
    assert_eq!(
        body["toolConfig"]["functionCallingConfig"]["mode"],
        "VALIDATED"
    );
    assert_eq!(
        body["generationConfig"]["thinkingConfig"],
        json!({"thinkingBudget": 0}),
        "thinking off on a model that can switch it off"
    );
}

#[tokio::test]
async fn gemini_thoughts_are_thinking_and_their_signature_goes_back() {
    let mock = MockModel::start(vec![
        Turn::reasoned("weighing the options", "First answer."),
        Turn::text("Second answer."),
    ])
    .await;
    let agent = agent_for(&mock);
    let args = ["--model", GEMINI, "--thinking", "high", "--mode", "json"];
    let out = agent.run(&[&args[..], &["one", "two"]].concat()).await;
    out.assert_ok();

    let bodies = mock.bodies();
    assert_eq!(bodies.len(), 2, "{out}");
    assert_eq!(
        bodies[0]["generationConfig"]["thinkingConfig"],
        json!({"includeThoughts": true, "thinkingLevel": "HIGH"})
    );
    let model_turn = bodies[1]["contents"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["role"] == "model"))
        .expect("the first answer replayed");
    assert_eq!(
        model_turn["parts"][0],
        json!({"text": "weighing the options", "thought": true,
            "thoughtSignature": THOUGHT_SIGNATURE}),
        "{model_turn:#}"
    );
    assert_eq!(model_turn["parts"][1], json!({"text": "First answer."}));

    let events = out.events();
    let first = assistant_end(&events, 0);
    let content = &first["message"]["content"];
    assert_eq!(content[0]["type"], "thinking", "{content:#}");
    assert_eq!(content[0]["thinking"], "weighing the options");
    assert_eq!(content[0]["thinkingSignature"], THOUGHT_SIGNATURE);
    assert_eq!(content[1]["text"], "First answer.");
    assert_eq!(first["message"]["usage"]["reasoning"], THOUGHT_TOKENS);
    assert_eq!(first["message"]["stopReason"], "stop");
    assert_eq!(first["message"]["rawStopReason"], "STOP");
    let thinking_deltas = of_type(&events, "message_update")
        .into_iter()
        .filter(|e| e["assistantMessageEvent"]["type"] == "thinking_delta")
        .count();
    assert!(thinking_deltas >= 2, "the thoughts stream: {out}");
}

#[tokio::test]
async fn gemini_parallel_calls_and_their_responses_go_back_in_one_turn_each() {
    let mock = MockModel::start(two_tool_turns()).await;
    let agent = agent_for(&mock);
    agent.write_file("notes.txt", "the notes say pineapple\n");
    let out = agent
        .run(&["--model", GEMINI, "--mode", "json", "run the tools"])
        .await;
    out.assert_ok();

    let events = out.events();
    let calls = assistant_end(&events, 0)["message"]["content"].clone();
    assert_eq!(calls[0]["thoughtSignature"], CALL_SIGNATURE, "{calls:#}");
    let ids: Vec<&str> = calls
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(
        ids[0].starts_with("bash_") && ids[1].starts_with("read_"),
        "{ids:?}"
    );
    assert_eq!(
        assistant_end(&events, 0)["message"]["stopReason"],
        "toolUse"
    );

    let second = &mock.bodies()[1];
    let sent = wire::assistant_tool_calls(second);
    let named: Vec<_> = sent.iter().map(|c| (c.0.as_str(), c.1.as_str())).collect();
    assert_eq!(named, [(ids[0], "bash"), (ids[1], "read")]);
    assert_eq!(sent[0].2, json!({"command": "echo hi"}));
    let contents = second["contents"].as_array().unwrap();
    let model_turn = contents.iter().find(|c| c["role"] == "model").unwrap();
    assert_eq!(model_turn["parts"][0]["thoughtSignature"], CALL_SIGNATURE);
    assert!(model_turn["parts"][1].get("thoughtSignature").is_none());
    let responses: Vec<&Value> = contents
        .iter()
        .filter(|c| c["parts"][0].get("functionResponse").is_some())
        .collect();
    assert_eq!(
        responses.len(),
        1,
        "one user turn for the batch: {second:#}"
    );
    let results = wire::tool_results(second);
    assert_eq!(results.len(), 2, "{second:#}");
    assert_eq!(results[0].0, ids[0]);
    assert!(results[0].1.contains("hi"), "{:?}", results[0].1);
    assert_eq!(results[1].0, ids[1]);
    assert!(results[1].1.contains("pineapple"), "{:?}", results[1].1);
}

#[tokio::test]
async fn gemini_tool_result_images_go_inside_the_function_response() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("read", json!({"path": "dot.png"}))]),
        Turn::text("a dot"),
    ])
    .await;
    let agent = agent_for(&mock);
    agent.write_file("dot.png", TINY_PNG);
    let out = agent.run(&["--model", GEMINI, "-p", "look"]).await;
    out.assert_ok();
    let second = &mock.bodies()[1];
    let response = second["contents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .find_map(|p| p.get("functionResponse").cloned())
        .expect("the read's response");
    let image = &response["parts"][0]["inlineData"];
    assert_eq!(image["mimeType"], "image/png", "{response:#}");
    assert!(image["data"].as_str().is_some_and(|d| !d.is_empty()));
}

#[tokio::test]
async fn gemini_usage_counts_cached_and_thought_tokens_as_1_6_does() {
    let mock = MockModel::start(vec![Turn::reasoned("hm", "counted")]).await;
    mock.set_usage(MockUsage {
        input: 20,
        output: 9,
        cache_read: 30,
        cache_write: 0,
    });
    let agent = agent_for(&mock);
    let out = agent
        .run(&["--model", GEMINI, "--mode", "json", "count"])
        .await;
    out.assert_ok();
    let end = assistant_end(&out.events(), 0);
    let usage = &end["message"]["usage"];
    assert_eq!(usage["input"], 20, "{usage:#}");
    assert_eq!(usage["cacheRead"], 30);
    assert_eq!(usage["output"], 9, "candidates and thoughts");
    assert_eq!(usage["reasoning"], THOUGHT_TOKENS);
    assert_eq!(usage["totalTokens"], 59);
    assert_eq!(end["message"]["responseId"], "resp-gemini");
}

#[tokio::test]
async fn gemini_rate_limits_retry_and_client_errors_do_not() {
    let mock = MockModel::start(vec![
        Turn::status(429, "Resource has been exhausted (e.g. check quota)."),
        Turn::text("after the retry"),
        Turn::status(400, "Invalid JSON payload received."),
    ])
    .await;
    let agent = agent_for(&mock);
    agent.fast_retries();
    let out = agent
        .run(&["--model", GEMINI, "--mode", "json", "hi"])
        .await;
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
    let out = agent.run(&["--model", GEMINI, "-p", "again"]).await;
    out.assert_code(1);
    assert!(
        out.stderr.contains("Invalid JSON payload received."),
        "{out}"
    );
    assert_eq!(mock.requests().len(), 3, "a 400 is not retried");
}

#[tokio::test]
async fn gemini_context_overflow_compacts_and_retries() {
    let mock = MockModel::start(vec![
        Turn::text("A1"),
        Turn::status(
            400,
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        ),
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
    let out = agent.run(&["--model", GEMINI, "-p", &q1, &q2]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "answer after the retry\n", "{out}");
    let retry = wire::conversation(&mock.bodies()[3]);
    assert!(retry.contains("OVERFLOW SUMMARY"), "{retry}");
    assert!(retry.contains("second question"), "{retry}");
    assert!(!retry.contains("first question"), "{retry}");
}

#[tokio::test]
async fn one_session_through_completions_and_gemini_reads_the_same() {
    let mut seen = Vec::new();
    for model in ["mock/mock-model", GEMINI] {
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
