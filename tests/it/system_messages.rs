//! A model whose models.json `compat` says `supportsMidConvoSystemMessages` gets the
//! transcript's system messages where they are, as pi 1.6 sends them: the prompt the session
//! first declared leads, and a change later in the conversation is an update in place; other
//! models keep one leading prompt (the default). pi 1.6 run on the same session file sends the
//! same shape.

use serde_json::{json, Value};

use crate::common::ts_pi::TsPi;
use crate::common::wire;
use crate::common::{MockModel, TestAgent, Turn};
use crate::sessions::only_session_file;

const MODEL: &str = "mock/mock-model";

/// The mock's models with `compat` on its chat-completions model.
fn models(mock: &MockModel, compat: Value) -> Value {
    let mut m = mock.models_json();
    m["providers"]["mock"]["models"][0]["compat"] = compat;
    m
}

/// Each message of a chat-completions body as `role: text`, the first line of the text only.
fn shape(body: &Value) -> Vec<String> {
    wire::messages(body)
        .iter()
        .map(|m| {
            let text = wire::content_text(&m["content"]);
            let first = text.lines().next().unwrap_or("").to_string();
            format!("{}: {first}", m["role"].as_str().unwrap_or(""))
        })
        .collect()
}

/// A session's first run with the default tools, then `-c --tools read` with `program`:
/// returns the second request.
async fn resumed_narrowed(agent: &TestAgent, mock: &MockModel, ts: Option<&TsPi>) -> Value {
    let second = ["--model", MODEL, "-c", "--tools", "read", "-p", "second"];
    match ts {
        Some(ts) => ts.run(agent, &second).await,
        None => agent.run(&second).await,
    }
    .assert_ok();
    mock.bodies().last().cloned().expect("a request")
}

#[tokio::test]
async fn a_change_later_in_the_conversation_is_sent_where_it_is() {
    let mock = MockModel::start(vec![
        Turn::text("one"),
        Turn::text("two"),
        Turn::text("three"),
    ])
    .await;
    let agent = TestAgent::new();
    agent.write_models(&models(
        &mock,
        json!({"supportsMidConvoSystemMessages": true}),
    ));
    agent
        .run(&["--model", MODEL, "-p", "first"])
        .await
        .assert_ok();
    let first = mock.bodies()[0].clone();
    let before = std::fs::read_to_string(only_session_file(&agent)).unwrap();

    let ours = resumed_narrowed(&agent, &mock, None).await;
    assert_eq!(mock.bodies().len(), 2);
    let shaped = shape(&ours);
    assert_eq!(shaped.len(), 5, "{shaped:#?}");
    assert_eq!(shaped[1..3], ["user: first", "assistant: one"]);
    assert_eq!(shaped[4], "user: second");
    assert!(
        shaped[3].starts_with("system: Updated system prompt section \""),
        "the change is an update in place: {shaped:#?}"
    );
    // The prompt the session declared first still leads, as it was sent then.
    assert_eq!(wire::messages(&ours)[0], wire::messages(&first)[0]);
    assert_eq!(wire::tool_names(&ours), ["read"]);

    // pi 1.6 resumes the same file the same way.
    let Some(ts) = TsPi::find_v1_6() else { return };
    std::fs::write(only_session_file(&agent), &before).unwrap();
    let theirs = resumed_narrowed(&agent, &mock, Some(&ts)).await;
    assert_eq!(mock.bodies().len(), 3, "pi 1.6 made its request");
    let their_shape = shape(&theirs);
    assert_eq!(
        their_shape
            .iter()
            .map(|s| s.split(':').next().unwrap())
            .collect::<Vec<_>>(),
        ["system", "user", "assistant", "system", "user"],
        "{their_shape:#?}"
    );
    assert_eq!(wire::messages(&theirs)[0], wire::messages(&first)[0]);
    assert!(their_shape[3].starts_with("system: Updated system prompt section \""));
    assert_eq!(wire::tool_names(&theirs), ["read"]);
}

#[tokio::test]
async fn without_the_flag_the_prompt_is_one_leading_message() {
    let mock = MockModel::start(vec![Turn::text("one"), Turn::text("two")]).await;
    let agent = TestAgent::new();
    agent.write_models(&models(&mock, json!({})));
    agent
        .run(&["--model", MODEL, "-p", "first"])
        .await
        .assert_ok();
    let ours = resumed_narrowed(&agent, &mock, None).await;
    let shaped = shape(&ours);
    assert_eq!(shaped.len(), 4, "{shaped:#?}");
    assert!(shaped[0].starts_with("system: "));
    assert!(
        !wire::system_text(&ours).contains("- bash:"),
        "the prompt now"
    );
}

/// A Claude model that takes tool changes in the conversation keeps its tool list as the
/// session first declared it (and the placeholder), and a narrowing is an update withdrawing
/// the tools, sent after the last message; the requests carry the inline-tools beta.
#[tokio::test]
async fn anthropic_withdraws_tools_in_the_conversation() {
    let mock = MockModel::start(vec![Turn::text("one"), Turn::text("two")]).await;
    let agent = TestAgent::new();
    let mut m = mock.models_json();
    m["providers"]["mock-anthropic"]["models"][0]["compat"] =
        json!({"supportsMidConvoSystemMessages": true, "supportsMidConvoToolChanges": true});
    agent.write_models(&m);
    let claude = "mock-anthropic/mock-claude";
    agent
        .run(&["--model", claude, "-p", "first"])
        .await
        .assert_ok();
    agent
        .run(&["--model", claude, "-c", "--tools", "read", "-p", "second"])
        .await
        .assert_ok();
    let requests = mock.requests();
    let last = requests.last().unwrap();
    let body = &last.body;
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "read",
            "bash",
            "edit",
            "write",
            "__pi_deferred_placeholder__"
        ]
    );
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "system"]);
    let removed: Vec<&str> = messages[3]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_removal")
        .map(|b| b["tool"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(removed, ["bash", "edit", "write"]);
    assert!(
        last.headers["anthropic-beta"].contains("inline-tools-2026-09-15"),
        "{:?}",
        last.headers
    );
    // As in 1.6, the first request already declares its tools the native way.
    assert!(requests[0].headers["anthropic-beta"].contains("inline-tools-2026-09-15"));
}
