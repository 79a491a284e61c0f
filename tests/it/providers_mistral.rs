//! The Mistral API (`mistral-conversations`) end to end: the catalog's `mistral` provider,
//! its key from `MISTRAL_API_KEY`, pointed at the mock server's chat completions stream. The
//! URL, bearer key and body, thinking by `reasoning_effort` and carried to the next turn,
//! parallel tool calls and their results, images (and their placeholders for a text-only
//! model), usage, a 429 retried and a 400 surfaced, overflow compaction, an abort mid-stream,
//! one scripted session giving the same transcript through chat completions and Mistral, and
//! the key kept out of hooks and logs.

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::hooks::{record_file, recorded_events, run_pi, scripted};
use crate::common::wire;
use crate::common::{of_type, MockModel, MockUsage, TestAgent, Turn};
use crate::providers_responses::{transcript, two_tool_turns, TINY_PNG};

/// Every key planted ends in `-LEAK`, so "nothing leaked" is one search.
const KEY: &str = "mistral-key-LEAK";
const DEVSTRAL: &str = "mistral/devstral-medium-latest";
const LARGE: &str = "mistral/mistral-large-4";
const MAGISTRAL: &str = "mistral/magistral-medium-latest";

/// models.json with the mock's providers, and the built-in `mistral` provider pointed at the
/// mock (its catalog models kept).
fn models(mock: &MockModel) -> Value {
    let mut m = mock.models_json();
    m["providers"]["mistral"] = json!({"baseUrl": format!("{}/mistral", mock.uri())});
    m
}

fn agent_for(mock: &MockModel) -> TestAgent {
    let mut agent = TestAgent::new();
    agent.env("MISTRAL_API_KEY", KEY);
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
async fn mistral_text_goes_to_chat_completions_with_the_bearer_key_and_prompt() {
    let mock = MockModel::start(vec![Turn::text("Hello from Mistral.")]).await;
    let agent = agent_for(&mock);
    let out = agent.run(&["--model", DEVSTRAL, "-p", "hi"]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "Hello from Mistral.\n");

    let req = &mock.requests()[0];
    assert_eq!(req.path, "/mistral/v1/chat/completions");
    assert_eq!(
        req.headers.get("authorization").map(String::as_str),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(req.headers["accept"], "text/event-stream");
    let body = &req.body;
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "model",
            "stream",
            "messages",
            "tools",
            "max_tokens",
            "prompt_cache_key"
        ],
        "{body:#}"
    );
    assert_eq!(body["model"], "devstral-medium-latest");
    assert_eq!(body["messages"][0]["role"], "system");
    assert!(wire::system_text(body).contains("pi"), "{body:#}");
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    );
    assert_eq!(wire::tool_names(body), ["bash", "edit", "read", "write"]);
    assert_eq!(body["tools"][0]["function"]["strict"], false);
    // The window is the model's whole maxTokens: the output budget leaves room for the input.
    let max = body["max_tokens"].as_u64().unwrap();
    assert!(max < 262_144 - 4096 && max > 200_000, "{max}");
}

#[tokio::test]
async fn mistral_thinking_is_a_reasoning_effort_and_goes_back_as_thinking_chunks() {
    let mock = MockModel::start(vec![
        Turn::reasoned("weighing the options", "First answer."),
        Turn::text("Second answer."),
        Turn::text("Unthinking."),
    ])
    .await;
    let agent = agent_for(&mock);
    let args = ["--model", LARGE, "--thinking", "high", "--mode", "json"];
    let out = agent.run(&[&args[..], &["one", "two"]].concat()).await;
    out.assert_ok();

    let bodies = mock.bodies();
    assert_eq!(bodies.len(), 2, "{out}");
    assert_eq!(bodies[0]["reasoning_effort"], "high");
    assert!(bodies[0].get("prompt_mode").is_none());
    let replayed = bodies[1]["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "assistant"))
        .expect("the first answer replayed")
        .clone();
    assert_eq!(
        replayed,
        json!({"role": "assistant", "prefix": false, "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "weighing the options"}]},
            {"type": "text", "text": "First answer."}]})
    );

    let events = out.events();
    let first = assistant_end(&events, 0);
    let content = &first["message"]["content"];
    assert_eq!(content[0]["type"], "thinking", "{content:#}");
    assert_eq!(content[0]["thinking"], "weighing the options");
    assert_eq!(content[1]["text"], "First answer.");
    assert_eq!(first["message"]["stopReason"], "stop");
    assert_eq!(first["message"]["rawStopReason"], "stop");
    let thinking_deltas = of_type(&events, "message_update")
        .into_iter()
        .filter(|e| e["assistantMessageEvent"]["type"] == "thinking_delta")
        .count();
    assert!(thinking_deltas >= 2, "the thinking streams: {out}");

    // Magistral's map names `none` for thinking off.
    let out = agent
        .run(&["--model", MAGISTRAL, "--thinking", "off", "-p", "three"])
        .await;
    out.assert_ok();
    assert_eq!(mock.bodies()[2]["reasoning_effort"], "none");
}

#[tokio::test]
async fn mistral_parallel_calls_keep_their_ids_and_results_follow_them() {
    let mock = MockModel::start(two_tool_turns()).await;
    let agent = agent_for(&mock);
    agent.write_file("notes.txt", "the notes say pineapple\n");
    let out = agent
        .run(&["--model", LARGE, "--mode", "json", "run the tools"])
        .await;
    out.assert_ok();

    let events = out.events();
    let first = assistant_end(&events, 0);
    assert_eq!(first["message"]["stopReason"], "toolUse");
    let ids: Vec<&str> = first["message"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(ids, ["mc0000001", "mc0000002"]);

    let second = &mock.bodies()[1];
    let sent = wire::assistant_tool_calls(second);
    let named: Vec<_> = sent.iter().map(|c| (c.0.as_str(), c.1.as_str())).collect();
    assert_eq!(named, [("mc0000001", "bash"), ("mc0000002", "read")]);
    assert_eq!(sent[0].2, json!({"command": "echo hi"}));
    let assistant = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(assistant["tool_calls"][1]["index"], 0, "1.6 writes index 0");
    let tools: Vec<&Value> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(tools.len(), 2, "{second:#}");
    assert_eq!(tools[0]["name"], "bash");
    let results = wire::tool_results(second);
    assert_eq!(results[0].0, "mc0000001");
    assert!(results[0].1.contains("hi"), "{:?}", results[0].1);
    assert_eq!(results[1].0, "mc0000002");
    assert!(results[1].1.contains("pineapple"), "{:?}", results[1].1);
}

#[tokio::test]
async fn mistral_tool_result_images_are_sent_or_named_for_a_text_only_model() {
    let turns = || {
        vec![
            Turn::tools(&[("read", json!({"path": "dot.png"}))]),
            Turn::text("a dot"),
        ]
    };
    for (model, image) in [(LARGE, true), (DEVSTRAL, false)] {
        let mock = MockModel::start(turns()).await;
        let agent = agent_for(&mock);
        agent.write_file("dot.png", TINY_PNG);
        let out = agent.run(&["--model", model, "-p", "look"]).await;
        out.assert_ok();
        let second = &mock.bodies()[1];
        let tool = second["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .expect("the read's result")
            .clone();
        let parts = tool["content"].as_array().unwrap();
        if image {
            let url = parts[1]["image_url"].as_str().unwrap_or_default();
            assert!(url.starts_with("data:image/png;base64,"), "{tool:#}");
        } else {
            assert_eq!(parts.len(), 1, "{tool:#}");
            let text = parts[0]["text"].as_str().unwrap_or_default();
            assert!(
                text.contains("(tool image omitted: model does not support images)"),
                "{tool:#}"
            );
        }
    }
}

#[tokio::test]
async fn mistral_usage_counts_cached_prompt_tokens_as_1_6_does() {
    let mock = MockModel::start(vec![Turn::text("counted")]).await;
    mock.set_usage(MockUsage {
        input: 20,
        output: 9,
        cache_read: 30,
        cache_write: 0,
    });
    let agent = agent_for(&mock);
    let out = agent
        .run(&["--model", LARGE, "--mode", "json", "count"])
        .await;
    out.assert_ok();
    let end = assistant_end(&out.events(), 0);
    let usage = &end["message"]["usage"];
    assert_eq!(usage["input"], 20, "{usage:#}");
    assert_eq!(usage["cacheRead"], 30);
    assert_eq!(usage["output"], 9);
    assert_eq!(usage["totalTokens"], 59);
    // Mistral Large 4's catalog rates: 0.7 in, 2.1 out, 0.07 cached ($/Mtok).
    let total = usage["cost"]["total"].as_f64().unwrap();
    assert!(
        (total - (20.0 * 0.7 + 9.0 * 2.1 + 30.0 * 0.07) / 1e6).abs() < 1e-12,
        "{usage:#}"
    );
    assert_eq!(end["message"]["responseId"], "cmpl-mistral");
}

#[tokio::test]
async fn mistral_rate_limits_retry_and_client_errors_do_not() {
    let mock = MockModel::start(vec![
        Turn::status(429, "Requests rate limit exceeded"),
        Turn::text("after the retry"),
        Turn::status(400, "Invalid model: nope"),
    ])
    .await;
    let agent = agent_for(&mock);
    agent.fast_retries();
    let out = agent.run(&["--model", LARGE, "--mode", "json", "hi"]).await;
    out.assert_ok();
    let events = out.events();
    let starts = of_type(&events, "auto_retry_start");
    assert_eq!(starts.len(), 1, "{out}");
    assert!(
        starts[0]["errorMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("Mistral API error (429): {\"object\":\"error\"")),
        "the status and error body, as 1.6 words them: {out}"
    );
    let out = agent.run(&["--model", LARGE, "-p", "again"]).await;
    out.assert_code(1);
    assert!(
        out.stderr.contains(
            "Mistral API error (400): {\"object\":\"error\",\"message\":\"Invalid model: nope\""
        ),
        "{out}"
    );
    assert_eq!(mock.requests().len(), 3, "a 400 is not retried");
}

#[tokio::test]
async fn mistral_context_overflow_compacts_and_retries() {
    let mock = MockModel::start(vec![
        Turn::text("A1"),
        Turn::status(
            400,
            "Prompt contains 300000 tokens and 0 draft tokens, too large for model with 262144 maximum context length",
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
    let out = agent.run(&["--model", DEVSTRAL, "-p", &q1, &q2]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "answer after the retry\n", "{out}");
    let retry = wire::conversation(&mock.bodies()[3]);
    assert!(retry.contains("OVERFLOW SUMMARY"), "{retry}");
    assert!(retry.contains("second question"), "{retry}");
    assert!(!retry.contains("first question"), "{retry}");
}

/// A server that answers one request with the head of a Mistral stream (one text piece) and
/// then sends nothing more, keeping the connection open until the test ends.
async fn stalling_server() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else {
            return;
        };
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        let piece = json!({"id": "cmpl-stall", "choices": [{"index": 0,
            "delta": {"content": "Hel"}, "finish_reason": null}]});
        let head =
            format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {piece}\n\n");
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        // Read (and drop) whatever comes until the client goes away.
        while let Ok(n) = socket.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    });
    (format!("http://{addr}"), task)
}

#[tokio::test]
async fn mistral_abort_mid_stream_ends_the_reply_as_aborted() {
    let (uri, server) = stalling_server().await;
    let mut agent = TestAgent::new();
    agent.env("MISTRAL_API_KEY", KEY);
    agent.write_models(&json!({"providers": {"mistral": {"baseUrl": uri}}}));
    let mut rpc = agent.rpc(&["--model", LARGE, "--no-session"]);
    rpc.send(json!({"id": "p", "type": "prompt", "message": "hi"}))
        .await;
    rpc.until(|v| {
        v["type"] == "message_update" && v["assistantMessageEvent"]["type"] == "text_delta"
    })
    .await;
    rpc.send(json!({"id": "a", "type": "abort"})).await;
    // The streamed partial is closed first (the agent's own `message_end`); the turn ends on
    // the aborted reply.
    let end = rpc.event("turn_end").await;
    assert_eq!(end["message"]["stopReason"], "aborted", "{end:#}");
    assert_eq!(end["message"]["errorMessage"], "Request was aborted");
    rpc.event("agent_end").await;
    let aborted = rpc.response(&json!("a")).await;
    assert_eq!(aborted["success"], true, "{aborted}");
    rpc.close().await;
    server.abort();
}

#[tokio::test]
async fn one_session_through_completions_and_mistral_reads_the_same() {
    let mut seen = Vec::new();
    for model in ["mock/mock-model", LARGE] {
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

#[tokio::test]
async fn the_mistral_key_reaches_the_server_but_never_hooks_or_logs() {
    let mock = MockModel::start(vec![Turn::text("kept")]).await;
    let agent = agent_for(&mock);
    let watch = scripted(
        &agent,
        "watch",
        json!({"subscriptions": [{"event": "before_provider_headers"},
            {"event": "before_provider_request"}],
            "on": {"before_provider_headers": {"reply": {}}, "before_provider_request": {"reply": {}}}}),
    );
    let mut settings = json!({"hooks": [watch]});
    settings["retry"] = json!({"enabled": false});
    agent.write_settings(&settings);
    let out = run_pi(&agent, &["--model", LARGE, "--verbose", "-p", "hi"]).await;
    out.assert_ok();
    let shown = recorded_events(&agent, "watch", "before_provider_headers");
    assert_eq!(shown.len(), 1);
    assert_eq!(
        shown[0]["payload"]["headers"]["authorization"], "[redacted]",
        "{:#}",
        shown[0]
    );
    assert_eq!(
        recorded_events(&agent, "watch", "before_provider_request").len(),
        1
    );
    let record = std::fs::read_to_string(record_file(&agent, "watch")).expect("record");
    assert!(!record.contains("LEAK"), "the key reached a hook: {record}");
    assert!(
        !out.stderr.contains("LEAK"),
        "the key reached the log: {out}"
    );
    assert!(!out.stdout.contains("LEAK"), "{out}");
    assert_eq!(
        mock.requests()[0].headers["authorization"],
        format!("Bearer {KEY}")
    );
}
