//! Messages hooks put into the conversation, through the real binary, a real hook (the
//! messenger fixture) and the mock model: `message.send` stores an extension's own message
//! (`role: "custom"`, a `custom_message` entry) that the model receives as a user message, and
//! `deliver_as` / `trigger_turn` decide when; `message.send_user` is a real user message.

use serde_json::{json, Value};

use crate::common::hooks::{fixture, record_file, run_pi};
use crate::common::{blocks_text, of_type, MockModel, Output, TestAgent, Turn};

/// The messenger hook with `on` rules, recording to its record file.
pub fn messenger(agent: &TestAgent, on: Value) {
    messengers(agent, &[("messenger", on)]);
}

/// Several messenger hooks, in this load order, each recording under its name.
pub fn messengers(agent: &TestAgent, hooks: &[(&str, Value)]) {
    let entries: Vec<Value> = hooks
        .iter()
        .map(|(name, on)| {
            json!({
                "command": format!("python3 {}", fixture("messenger.py")),
                "name": name,
                "timeout_ms": 20000,
                "config": {"record": record_file(agent, name), "on": on},
            })
        })
        .collect();
    agent.write_settings(&json!({ "hooks": entries }));
}

/// What the messenger recorded: its events and the answers to its calls.
fn recorded(agent: &TestAgent) -> Vec<Value> {
    recorded_by(agent, "messenger")
}

/// What the messenger named `name` recorded.
pub fn recorded_by(agent: &TestAgent, name: &str) -> Vec<Value> {
    std::fs::read_to_string(record_file(agent, name))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn call_results(agent: &TestAgent, method: &str) -> Vec<Value> {
    recorded(agent)
        .into_iter()
        .filter(|l| l["call"] == method)
        .map(|l| {
            if l["error"].is_null() {
                l["result"].clone()
            } else {
                l["error"].clone()
            }
        })
        .collect()
}

/// The role and text of each message of the `n`-th request the model got (OpenAI shape).
pub fn request_messages(mock: &MockModel, n: usize) -> Vec<(String, String)> {
    let bodies = mock.bodies();
    let body = bodies
        .get(n)
        .unwrap_or_else(|| panic!("no request {n}: {bodies:?}"));
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                other => blocks_text(other),
            };
            (m["role"].as_str().unwrap_or("").to_string(), text)
        })
        .collect()
}

pub fn session_entries(agent: &TestAgent) -> Vec<Value> {
    let dir = agent.agent_dir.join("sessions");
    let mut files = Vec::new();
    for d in std::fs::read_dir(&dir).unwrap().flatten() {
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            files.push(f.path());
        }
    }
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub async fn json_run(agent: &TestAgent, prompts: &[&str]) -> (Output, Vec<Value>) {
    let mut args = vec![
        "--model",
        "mock/mock-model",
        "--mode",
        "json",
        "--hook-events",
    ];
    args.extend_from_slice(prompts);
    let out = run_pi(agent, &args).await;
    out.assert_ok();
    let events = out.events();
    (out, events)
}

#[tokio::test]
async fn message_send_stores_the_hooks_own_message_which_the_model_reads_as_a_user_message() {
    let mock = MockModel::start(vec![Turn::text("noted")]).await;
    let agent = TestAgent::with_mock(&mock);
    messenger(&agent, json!({}));
    // Sent while idle without asking for a turn: it joins the context at once.
    let send = r#"/op message.send {"custom_type": "lint", "content": "3 lint errors remain", "details": {"errors": 3}}"#;
    let (out, events) = json_run(&agent, &[send, "go on"]).await;

    assert_eq!(
        call_results(&agent, "message.send"),
        [json!({"delivered": "appended"})]
    );
    let custom: Vec<&Value> = of_type(&events, "message_end")
        .into_iter()
        .filter(|e| e["message"]["role"] == "custom")
        .collect();
    assert_eq!(custom.len(), 1, "{out}");
    assert_eq!(custom[0]["message"]["customType"], "lint");
    assert_eq!(custom[0]["message"]["details"], json!({"errors": 3}));
    assert_eq!(custom[0]["message"]["display"], true);

    // The model got it as a user message, before the prompt that followed it.
    assert_eq!(
        request_messages(&mock, 0)
            .into_iter()
            .filter(|(role, _)| role == "user")
            .map(|(_, t)| t)
            .collect::<Vec<_>>(),
        ["3 lint errors remain", "go on"]
    );
    // Stored as pi stores it: a custom_message entry, not a user message.
    let entries = session_entries(&agent);
    let stored: Vec<&Value> = entries
        .iter()
        .filter(|e| e["type"] == "custom_message")
        .collect();
    assert_eq!(stored.len(), 1, "{entries:?}");
    assert_eq!(stored[0]["customType"], "lint");
    assert_eq!(stored[0]["content"], "3 lint errors remain");
    assert!(!entries
        .iter()
        .any(|e| e["message"]["role"] == "user" && e.to_string().contains("lint errors")));
}

#[tokio::test]
async fn next_turn_waits_for_the_next_run_and_trigger_turn_starts_one() {
    let mock = MockModel::start(vec![Turn::text("started by the hook"), Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    messenger(&agent, json!({"before_agent_start": {"times": 0}}));
    let later = r#"/op message.send {"custom_type": "ctx", "content": "held for later", "deliver_as": "next_turn"}"#;
    let now = r#"/op message.send {"custom_type": "kick", "content": "review the diff", "trigger_turn": true}"#;
    let (out, _) = json_run(&agent, &[later, now, "the user's prompt"]).await;

    assert_eq!(
        call_results(&agent, "message.send"),
        [
            json!({"delivered": "next_turn"}),
            json!({"delivered": "started"})
        ],
        "{out}"
    );
    // The triggered run went through before_agent_start with the message as its prompt.
    let starts: Vec<Value> = recorded(&agent)
        .into_iter()
        .filter(|l| l["event"] == "before_agent_start")
        .map(|l| l["payload"]["prompt"].clone())
        .collect();
    assert_eq!(
        starts,
        [json!("review the diff"), json!("the user's prompt")]
    );
    let users = |n| -> Vec<String> {
        request_messages(&mock, n)
            .into_iter()
            .filter(|(role, _)| role == "user")
            .map(|(_, t)| t)
            .collect()
    };
    // Held (no run, nothing stored) until a run started: it follows that run's starting
    // message, once.
    assert_eq!(users(0), ["review the diff", "held for later"]);
    assert_eq!(
        users(1),
        ["review the diff", "held for later", "the user's prompt"]
    );
    assert_eq!(mock.requests().len(), 2, "{out}");
}

#[tokio::test]
async fn during_a_run_steer_joins_after_the_batch_follow_up_when_it_would_stop_and_no_trigger_waits_for_the_turn_end(
) {
    let mock = MockModel::start(vec![
        Turn::tools(&[("bash", json!({"command": "echo hi"}))]),
        Turn::text("after the tool"),
        Turn::text("after the follow-up"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let send = |content: &str, extra: Value| {
        let mut params = json!({"custom_type": "note", "content": content});
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"method": "message.send", "params": params})
    };
    messenger(
        &agent,
        json!({"tool_call": {"calls": [
            send("later, please", json!({"deliver_as": "follow_up"})),
            send("steer now", json!({})),
            send("just so you know", json!({"trigger_turn": false})),
        ]}}),
    );
    let (out, events) = json_run(&agent, &["run it"]).await;
    assert_eq!(
        call_results(&agent, "message.send"),
        [
            json!({"delivered": "follow_up"}),
            json!({"delivered": "steer"}),
            json!({"delivered": "deferred"}),
        ],
        "{out}"
    );
    let tail = |n| -> Vec<(String, String)> {
        let m = request_messages(&mock, n);
        m[m.len().saturating_sub(3)..].to_vec()
    };
    // Held until the turn ended, then steering: after the tool result, never before it.
    assert_eq!(
        tail(1),
        [
            ("tool".to_string(), "hi\n".to_string()),
            ("user".to_string(), "just so you know".to_string()),
            ("user".to_string(), "steer now".to_string()),
        ]
    );
    // The follow-up only when the model would have stopped.
    assert_eq!(
        request_messages(&mock, 2).last().unwrap(),
        &("user".to_string(), "later, please".to_string())
    );
    assert_eq!(mock.requests().len(), 3, "{out}");
    let roles: Vec<String> = of_type(&events, "message_end")
        .into_iter()
        .map(|e| e["message"]["role"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "toolResult",
            "custom",
            "custom",
            "assistant",
            "custom",
            "assistant"
        ],
        "{out}"
    );
}

#[tokio::test]
async fn message_send_user_is_a_user_message_that_needs_deliver_as_during_a_run() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("bash", json!({"command": "true"}))]),
        Turn::text("done"),
        Turn::text("queued one answered"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    messenger(
        &agent,
        json!({"tool_call": {"calls": [
            {"method": "message.send_user", "params": {"content": "no way to deliver"}},
            {"method": "message.send_user", "params": {"content": "/skill:x literal", "deliver_as": "follow_up"}},
        ]}}),
    );
    let (out, events) = json_run(&agent, &["start"]).await;
    let results = call_results(&agent, "message.send_user");
    assert_eq!(results[0]["code"], "busy", "{out}");
    assert_eq!(results[1], json!({"disposition": "queued"}));
    // A real user message, taken literally.
    let users: Vec<String> = of_type(&events, "message_end")
        .into_iter()
        .filter(|e| e["message"]["role"] == "user")
        .map(|e| blocks_text(&e["message"]["content"]))
        .collect();
    assert_eq!(users, ["start", "/skill:x literal"], "{out}");
    assert!(!out.stdout.contains("no way to deliver\""), "{out}");
}
