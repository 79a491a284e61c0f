//! Amazon Bedrock (`bedrock-converse-stream`) end to end against the mock runtime
//! (`common/mock_bedrock.rs`): the catalog's `amazon-bedrock` provider made usable by AWS
//! credentials in the environment, its requests signed with SigV4 (or sent with a bearer
//! token), the body, reasoning with its signature carried back, parallel tool uses answered
//! in one user turn, an image in a tool result, usage, a throttled request retried and a
//! validation error surfaced, context overflow compacted, an abort mid-stream, and no secret
//! in the logs, in what hooks see or in the model's shell; and one session giving the same transcript
//! through chat completions and Bedrock.

use serde_json::{json, Value};
use sha2::Digest;

use crate::common::hooks::{record_file, run_pi, scripted, use_hooks};
use crate::common::mock_bedrock::{event, exception, stream, text, MockBedrock, Reply, SIGNATURE};
use crate::common::{of_type, TestAgent};

const MODEL_ID: &str = "global.anthropic.claude-sonnet-4-6";
const MODEL: &str = "amazon-bedrock/global.anthropic.claude-sonnet-4-6";
const ACCESS_KEY: &str = "AKIDMOCK";
/// Every secret ends in `-LEAK`, so "nothing leaked" is one search.
const SECRET_KEY: &str = "secret-key-LEAK";
const SESSION_TOKEN: &str = "session-token-LEAK";
const BEARER: &str = "bearer-token-LEAK";

/// The catalog's provider pointed at the mock; AWS keys in the environment unless `bearer`.
fn agent_for(mock: &MockBedrock, bearer: bool) -> TestAgent {
    let mut agent = TestAgent::new();
    agent.write_models(&json!({"providers": {"amazon-bedrock": {"baseUrl": mock.uri()}}}));
    if bearer {
        agent.env("AWS_BEARER_TOKEN_BEDROCK", BEARER);
    } else {
        agent.env("AWS_ACCESS_KEY_ID", ACCESS_KEY);
        agent.env("AWS_SECRET_ACCESS_KEY", SECRET_KEY);
        agent.env("AWS_SESSION_TOKEN", SESSION_TOKEN);
    }
    agent.env("AWS_REGION", "us-west-2");
    agent
}

fn assistant_ends(events: &[Value]) -> Vec<Value> {
    of_type(events, "message_end")
        .into_iter()
        .filter(|e| e["message"]["role"] == "assistant")
        .cloned()
        .collect()
}

#[tokio::test]
async fn bedrock_text_is_signed_with_sigv4_from_the_environment() {
    let mock = MockBedrock::start(vec![text("Hello from Bedrock.")]).await;
    let agent = agent_for(&mock, false);
    let out = agent
        .run(&["--model", MODEL, "--thinking", "off", "-p", "hi"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "Hello from Bedrock.\n");

    let req = &mock.requests()[0];
    assert_eq!(req.path, format!("/model/{MODEL_ID}/converse-stream"));
    let auth = &req.headers["authorization"];
    let scope = format!("Credential={ACCESS_KEY}/");
    assert!(
        auth.starts_with("AWS4-HMAC-SHA256 ") && auth.contains(&scope),
        "{auth}"
    );
    assert!(auth.contains("/us-west-2/bedrock/aws4_request"), "{auth}");
    assert!(
        auth.contains(
            "SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token"
        ),
        "{auth}"
    );
    assert_eq!(req.headers["x-amz-security-token"], SESSION_TOKEN);
    let digest = format!("{:x}", sha2::Sha256::digest(req.raw_body.as_bytes()));
    assert_eq!(
        req.headers["x-amz-content-sha256"], digest,
        "the body as sent is the body signed"
    );

    let body = &req.body;
    assert!(
        body["system"][0]["text"].as_str().unwrap().contains("pi"),
        "{body:#}"
    );
    assert_eq!(
        body["system"][1],
        json!({"cachePoint": {"type": "default"}})
    );
    assert_eq!(
        body["messages"][0],
        json!({"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]})
    );
    let tools: Vec<&str> = body["toolConfig"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["toolSpec"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read", "bash", "edit", "write"]);
    assert!(
        body.get("additionalModelRequestFields").is_none(),
        "thinking off: {body:#}"
    );
    assert_eq!(body["inferenceConfig"]["maxTokens"], 128000);
}

#[tokio::test]
async fn bedrock_reasoning_streams_and_its_signature_goes_back() {
    let mock = MockBedrock::start(vec![
        Reply::Frames(stream(Some("weighing it"), Some("First answer."), &[])),
        text("Second answer."),
    ])
    .await;
    let agent = agent_for(&mock, false);
    let out = agent
        .run(&[
            "--model",
            MODEL,
            "--thinking",
            "high",
            "--mode",
            "json",
            "one",
            "two",
        ])
        .await;
    out.assert_ok();
    let reqs = mock.requests();
    assert_eq!(
        reqs[0].body["additionalModelRequestFields"],
        json!({"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "high"}})
    );
    let turn = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .cloned()
        .unwrap();
    assert_eq!(
        turn["content"][0],
        json!({"reasoningContent": {"reasoningText": {"text": "weighing it", "signature": SIGNATURE}}})
    );
    assert_eq!(turn["content"][1], json!({"text": "First answer."}));

    let events = out.events();
    let first = &assistant_ends(&events)[0]["message"];
    assert_eq!(
        first["content"][0]["thinkingSignature"], SIGNATURE,
        "{first:#}"
    );
    assert_eq!(first["stopReason"], "stop");
    assert_eq!(first["rawStopReason"], "end_turn");
    let usage = &first["usage"];
    assert_eq!(
        (
            usage["input"].as_u64(),
            usage["output"].as_u64(),
            usage["cacheRead"].as_u64()
        ),
        (Some(21), Some(8), Some(30)),
        "{usage:#}"
    );
    assert_eq!(usage["totalTokens"], 59);
    let deltas = of_type(&events, "message_update")
        .into_iter()
        .filter(|e| e["assistantMessageEvent"]["type"] == "thinking_delta")
        .count();
    assert!(deltas >= 2, "{out}");
}

#[tokio::test]
async fn bedrock_parallel_tool_uses_are_answered_in_one_user_turn_with_images() {
    let calls = [
        ("bash", json!({"command": "echo hi"})),
        ("read", json!({"path": "dot.png"})),
    ];
    let mock = MockBedrock::start(vec![
        Reply::Frames(stream(None, None, &calls)),
        text("done"),
    ])
    .await;
    let agent = agent_for(&mock, false);
    agent.write_file("dot.png", crate::providers_responses::TINY_PNG);
    let out = agent
        .run(&["--model", MODEL, "--mode", "json", "run them"])
        .await;
    out.assert_ok();
    let events = out.events();
    let first = &assistant_ends(&events)[0]["message"];
    assert_eq!(first["stopReason"], "toolUse");
    assert_eq!(
        first["content"][0]["arguments"],
        json!({"command": "echo hi"}),
        "streamed input parsed"
    );

    let second = &mock.requests()[1].body;
    let messages = second["messages"].as_array().unwrap();
    let results: Vec<&Value> = messages
        .iter()
        .filter(|m| m["content"][0].get("toolResult").is_some())
        .collect();
    assert_eq!(results.len(), 1, "one user turn for the batch: {second:#}");
    let content = results[0]["content"].as_array().unwrap();
    assert_eq!(content[0]["toolResult"]["toolUseId"], "tooluse_mock0");
    assert!(content[0]["toolResult"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("hi"));
    assert_eq!(content[1]["toolResult"]["toolUseId"], "tooluse_mock1");
    assert_eq!(content[1]["toolResult"]["status"], "success");
    let image = content[1]["toolResult"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|c| c.get("image"))
        .cloned()
        .expect("the image");
    assert_eq!(image["format"], "png");
    assert!(image["source"]["bytes"]
        .as_str()
        .is_some_and(|b| !b.is_empty()));
}

#[tokio::test]
async fn bedrock_throttling_is_retried_and_validation_errors_are_not() {
    let mock = MockBedrock::start(vec![
        Reply::Status(
            429,
            "ThrottlingException",
            "Too many requests, please wait before trying again.".into(),
        ),
        text("after the retry"),
        Reply::Status(
            400,
            "ValidationException",
            "The model returned an error.".into(),
        ),
    ])
    .await;
    let agent = agent_for(&mock, false);
    agent.fast_retries();
    let out = agent.run(&["--model", MODEL, "--mode", "json", "hi"]).await;
    out.assert_ok();
    let starts = of_type(&out.events(), "auto_retry_start")
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(starts.len(), 1, "{out}");
    assert_eq!(
        starts[0]["errorMessage"],
        "Throttling error: Too many requests, please wait before trying again."
    );
    let out = agent.run(&["--model", MODEL, "-p", "again"]).await;
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("Validation error: The model returned an error."),
        "{out}"
    );
    assert_eq!(mock.requests().len(), 3, "a 400 is not retried");
}

#[tokio::test]
async fn bedrock_errors_in_the_stream_end_the_turn_in_1_6s_words() {
    let mut frames = event("messageStart", json!({"role": "assistant"}));
    frames.extend(exception(
        "modelStreamErrorException",
        "Model stream broke.",
    ));
    let mock = MockBedrock::start(vec![Reply::Frames(frames)]).await;
    let agent = agent_for(&mock, false);
    let out = agent.run(&["--model", MODEL, "-p", "hi"]).await;
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("Model stream error: Model stream broke."),
        "{out}"
    );
}

#[tokio::test]
async fn bedrock_context_overflow_compacts_and_retries() {
    let mock = MockBedrock::start(vec![
        text("A1"),
        Reply::Status(
            400,
            "ValidationException",
            "Input is too long for requested model.".into(),
        ),
        text("OVERFLOW SUMMARY"),
        text("answer after the retry"),
    ])
    .await;
    let agent = agent_for(&mock, false);
    agent.write_settings(
        &json!({"compaction": {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20}}),
    );
    let q1 = format!("first question {}", "alpha ".repeat(30));
    let q2 = format!("second question {}", "beta ".repeat(30));
    let out = agent.run(&["--model", MODEL, "-p", &q1, &q2]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "answer after the retry\n", "{out}");
    let retry = mock.requests()[3].raw_body.clone();
    assert!(retry.contains("OVERFLOW SUMMARY"), "{retry}");
    assert!(retry.contains("second question"), "{retry}");
    assert!(!retry.contains("first question"), "{retry}");
}

#[tokio::test]
async fn bedrock_abort_mid_stream_ends_the_message_aborted() {
    let mut half = event("messageStart", json!({"role": "assistant"}));
    half.extend(event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "partial"}}),
    ));
    let mock = MockBedrock::start(vec![Reply::Stall(half), text("after the abort")]).await;
    let agent = agent_for(&mock, false);
    let mut r = agent.rpc(&["--model", MODEL]);
    r.request(json!({"id": "p", "type": "prompt", "message": "go"}))
        .await;
    r.until(|e| {
        e["type"] == "message_update" && e["assistantMessageEvent"]["type"] == "text_delta"
    })
    .await;
    r.send(json!({"id": "a", "type": "abort"})).await;
    let mut ends = Vec::new();
    loop {
        let e = r.next().await;
        if e["type"] == "message_end" && e["message"]["role"] == "assistant" {
            ends.push(e["message"].clone());
        }
        if e["type"] == "agent_settled" {
            break;
        }
    }
    assert_eq!(ends.last().unwrap()["stopReason"], "aborted", "{ends:#?}");
    // The next prompt goes through on a fresh request.
    r.request(json!({"id": "q", "type": "prompt", "message": "again"}))
        .await;
    let end = r
        .until(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .await;
    assert_eq!(
        end["message"]["content"][0]["text"], "after the abort",
        "{end}"
    );
    assert_eq!(r.close().await, Some(0));
}

#[tokio::test]
async fn bedrock_bearer_token_is_sent_as_authorization_without_signing() {
    let mock = MockBedrock::start(vec![text("one"), text("two")]).await;
    let agent = agent_for(&mock, true);
    agent.run(&["--model", MODEL, "-p", "hi"]).await.assert_ok();
    // A stored key (1.6's bearer-token login) is the bearer too.
    std::fs::write(
        agent.agent_dir.join("auth.json"),
        json!({"amazon-bedrock": {"type": "api_key", "key": "stored-bearer-LEAK"}}).to_string(),
    )
    .unwrap();
    agent.run(&["--model", MODEL, "-p", "hi"]).await.assert_ok();
    let reqs = mock.requests();
    assert_eq!(reqs[0].headers["authorization"], format!("Bearer {BEARER}"));
    assert!(
        !reqs[0].headers.contains_key("x-amz-date"),
        "{:?}",
        reqs[0].headers
    );
    assert_eq!(
        reqs[1].headers["authorization"],
        "Bearer stored-bearer-LEAK"
    );
}

#[tokio::test]
async fn bedrock_is_listed_only_with_aws_credentials() {
    let mock = MockBedrock::start(vec![]).await;
    let bare = TestAgent::new();
    let out = bare.run(&["--list-models", "claude-sonnet-4-6"]).await;
    assert!(!out.stdout.contains("amazon-bedrock"), "{out}");
    let agent = agent_for(&mock, false);
    let out = agent.run(&["--list-models", "claude-sonnet-4-6"]).await;
    assert!(out.stdout.contains("amazon-bedrock"), "{out}");
    let mut profile = TestAgent::new();
    profile.env("AWS_PROFILE", "work");
    let out = profile.run(&["--list-models", "claude-sonnet-4-6"]).await;
    assert!(out.stdout.contains("amazon-bedrock"), "{out}");
}

#[tokio::test]
async fn bedrock_profile_keys_come_from_the_shared_credentials_file() {
    let mock = MockBedrock::start(vec![text("from the profile")]).await;
    let mut agent = TestAgent::new();
    agent.write_models(&json!({"providers": {"amazon-bedrock": {"baseUrl": mock.uri()}}}));
    let creds = agent.tmp.join("aws-credentials");
    std::fs::write(
        &creds,
        format!("[work]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = {SECRET_KEY}\n"),
    )
    .unwrap();
    agent.env("AWS_PROFILE", "work");
    agent.env("AWS_SHARED_CREDENTIALS_FILE", creds.to_str().unwrap());
    agent.env("AWS_REGION", "eu-west-1");
    agent.run(&["--model", MODEL, "-p", "hi"]).await.assert_ok();
    let auth = &mock.requests()[0].headers["authorization"];
    assert!(
        auth.contains("Credential=AKIDPROFILE/") && auth.contains("/eu-west-1/bedrock/"),
        "{auth}"
    );
}

#[tokio::test]
async fn bedrock_secrets_never_reach_logs_or_hooks() {
    let mock = MockBedrock::start(vec![text("one"), text("two")]).await;
    for bearer in [false, true] {
        let agent = agent_for(&mock, bearer);
        let events = [
            "before_provider_headers",
            "before_provider_request",
            "after_provider_response",
            "message_end",
        ];
        let subscriptions: Vec<Value> = events.iter().map(|e| json!({"event": e})).collect();
        use_hooks(
            &agent,
            vec![scripted(
                &agent,
                "watch",
                json!({"subscriptions": subscriptions}),
            )],
        );
        let out = run_pi(&agent, &["--model", MODEL, "--verbose", "-p", "hi"]).await;
        out.assert_ok();
        let record = std::fs::read_to_string(record_file(&agent, "watch")).expect("the hook ran");
        assert!(record.contains("before_provider_headers"), "{record}");
        for (name, text) in [
            ("the hook", &record),
            ("stderr", &out.stderr),
            ("stdout", &out.stdout),
        ] {
            assert!(!text.contains("LEAK"), "a secret reached {name}: {text}");
        }
    }
    // Nor the model's shell.
    let agent = agent_for(&mock, false);
    let out = agent
        .run_tools(
            json!([{"name": "bash", "arguments": {"command": "env"}}]),
            &[],
        )
        .await;
    out.assert_ok();
    let shell = crate::common::only_tool_end(&out).text;
    assert!(shell.contains("AWS_REGION=us-west-2"), "{shell}");
    assert!(!shell.contains("LEAK"), "{shell}");
}

#[tokio::test]
async fn one_session_through_completions_and_bedrock_reads_the_same() {
    use crate::common::{MockModel, Turn};
    use crate::providers_responses::{transcript, two_tool_turns};
    let mut seen = Vec::new();
    let mock = MockModel::start(two_tool_turns()).await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_file("notes.txt", "the notes say pineapple\n");
    agent
        .run(&["--model", "mock/mock-model", "-p", "run the tools"])
        .await
        .assert_ok();
    seen.push(transcript(&agent));
    let calls = two_tool_turns()
        .into_iter()
        .find_map(|t| match t {
            Turn::ToolCalls { calls, .. } => Some(calls),
            _ => None,
        })
        .expect("the tool turn");
    let calls: Vec<(&str, Value)> = calls.iter().map(|(n, a)| (n.as_str(), a.clone())).collect();
    let bedrock = MockBedrock::start(vec![
        Reply::Frames(stream(None, None, &calls)),
        text("All done."),
    ])
    .await;
    let agent = agent_for(&bedrock, false);
    agent.write_file("notes.txt", "the notes say pineapple\n");
    agent
        .run(&["--model", MODEL, "-p", "run the tools"])
        .await
        .assert_ok();
    seen.push(transcript(&agent));
    assert_eq!(seen[0].len(), 6, "{:#?}", seen[0]);
    assert_eq!(seen[0], seen[1]);
}
