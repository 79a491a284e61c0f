//! Which model a session the run moves to starts with, run as one script against pi 1.6.0
//! and ours: `new_session` returns to the model the command line chose; `switch_session`
//! keeps a `--model` given on the command line, and applies the session's own model only
//! when none was given.

use serde_json::json;

use crate::common::ts_pi::TsPi;
use crate::common::{MockModel, TestAgent, Turn};
use crate::rpc_reference::scenarios::Program;

/// The model `get_state` reports after each step: a session made under another model (set
/// with `set_model`), then `new_session`, then `switch_session` back to the first session.
/// `named`: the command line names the model; otherwise the settings' default is the same.
async fn models_after_each_step(program: &Program<'_>, named: bool) -> Vec<String> {
    let mock = MockModel::start(vec![Turn::text("first answer")]).await;
    let agent = TestAgent::with_mock(&mock);
    let args: &[&str] = if named {
        &["--provider", "mock", "--model", "mock-model"]
    } else {
        agent.write_settings(&json!({"defaultProvider": "mock", "defaultModel": "mock-model"}));
        &[]
    };
    let mut r = program.rpc(&agent, args);
    let mut seen = Vec::new();
    let model = |state: &serde_json::Value| {
        format!(
            "{}/{}",
            state["data"]["model"]["provider"].as_str().unwrap_or("?"),
            state["data"]["model"]["id"].as_str().unwrap_or("?")
        )
    };
    r.request(json!({"id": "set", "type": "set_model", "provider": "mock-anthropic", "modelId": "mock-claude"}))
        .await;
    r.request(json!({"id": "one", "type": "prompt", "message": "one"}))
        .await;
    r.event("agent_settled").await;
    let first = r.request(json!({"id": "s1", "type": "get_state"})).await;
    seen.push(model(&first));
    let file = first["data"]["sessionFile"].clone();
    r.request(json!({"id": "new", "type": "new_session"})).await;
    seen.push(model(
        &r.request(json!({"id": "s2", "type": "get_state"})).await,
    ));
    let switched = r
        .request(json!({"id": "switch", "type": "switch_session", "sessionPath": file}))
        .await;
    assert_eq!(switched["success"], true, "{switched}");
    seen.push(model(
        &r.request(json!({"id": "s3", "type": "get_state"})).await,
    ));
    assert_eq!(r.close().await, Some(0), "{}", r.tail());
    seen
}

#[tokio::test]
async fn new_session_returns_to_the_command_lines_model_and_switch_keeps_a_named_one() {
    let named = [
        "mock-anthropic/mock-claude",
        "mock/mock-model",
        "mock/mock-model",
    ];
    let unnamed = [
        "mock-anthropic/mock-claude",
        "mock/mock-model",
        "mock-anthropic/mock-claude",
    ];
    if let Some(ts) = TsPi::find_v1_6() {
        let ts = Program::Ts(&ts);
        assert_eq!(models_after_each_step(&ts, true).await, named, "pi 1.6");
        assert_eq!(models_after_each_step(&ts, false).await, unnamed, "pi 1.6");
    }
    assert_eq!(models_after_each_step(&Program::Ours, true).await, named);
    assert_eq!(models_after_each_step(&Program::Ours, false).await, unnamed);
}
