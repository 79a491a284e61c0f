//! Self-checks of the test harness, so a broken mock shows up here and not as a confusing
//! provider failure: the mock plays its turns in order over both wire formats and records
//! each request.

use serde_json::{json, Value};

use crate::common::{MockModel, TestAgent, Turn};

async fn post(url: String, body: Value) -> (u16, String) {
    let resp = pi::provider::http::client()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("post");
    (resp.status().as_u16(), resp.text().await.expect("body"))
}

fn sse_data(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).expect("SSE data is JSON"))
        .collect()
}

#[tokio::test]
async fn mock_model_plays_turns_in_order_and_records_requests() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("bash", json!({"command": "echo hi"}))]),
        Turn::text("héllo wörld"),
        Turn::status(503, "busy"),
    ])
    .await;
    let (status, body) = post(
        format!("{}/v1/chat/completions", mock.uri()),
        json!({"n": 1}),
    )
    .await;
    assert_eq!(status, 200);
    assert!(body.ends_with("data: [DONE]\n\n"));
    let chunks = sse_data(&body);
    let args: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap(),
        json!({"command": "echo hi"})
    );
    assert!(chunks
        .iter()
        .any(|c| c["choices"][0]["finish_reason"] == "tool_calls"));

    let (status, body) = post(format!("{}/v1/messages", mock.uri()), json!({"n": 2})).await;
    assert_eq!(status, 200);
    let events = sse_data(&body);
    let text: String = events
        .iter()
        .filter_map(|e| e["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "héllo wörld");
    assert_eq!(events.last().unwrap()["type"], "message_stop");

    let (status, body) = post(format!("{}/v1/chat/completions", mock.uri()), json!({})).await;
    assert_eq!(status, 503);
    assert!(body.contains("busy"));
    let (status, _) = post(format!("{}/v1/chat/completions", mock.uri()), json!({})).await;
    assert_eq!(status, 418, "an empty queue is a non-retryable error");

    let reqs = mock.requests();
    assert_eq!(reqs.len(), 4);
    assert_eq!(
        (reqs[0].body["n"].clone(), reqs[1].path.as_str()),
        (json!(1), "/v1/messages")
    );
}

#[tokio::test]
async fn test_agent_is_hermetic() {
    let agent = TestAgent::new();
    let std = agent.command(&["--version"]);
    let cmd = std.as_std();
    let envs: Vec<String> = cmd
        .get_envs()
        .filter(|(_, v)| v.is_some())
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    assert!(!envs.iter().any(|k| k.ends_with("_API_KEY")));
    assert_eq!(cmd.get_current_dir(), Some(agent.cwd.as_path()));
    assert!(agent.cwd.starts_with(agent.home.parent().unwrap()));
}
