//! Prompt-cache warming through the real binary (RPC mode) and the mock model server: after a
//! run, the last request goes out again with a one-token cap before its cache entry expires
//! (`promptCache.short` in models.json sets the lifetime, so these tests use a lifetime just
//! over pi's ten-second margin and wait for the refresh itself, never for a clock); the
//! refresh's usage is a `usage` entry that counts toward `get_session_stats`; hooks' replies to
//! `cache_warming_decision` override pi's decision, the last one winning; a new prompt replaces
//! the request being kept warm.

use serde_json::{json, Value};

use crate::common::hooks::{recorded_events, scripted};
use crate::common::rpc::RpcProcess;
use crate::common::ts_pi::TsPi;
use crate::common::{wire, MockModel, MockUsage, TestAgent, Turn};
use crate::sessions::only_session_file;

const MODEL: &str = "mock/mock-model";

/// The mock provider with a prompt cache of `short` seconds and prices at which keeping a
/// 100k-token prompt warm pays even between runs (cheap reads, dear writes) when `pays`, and
/// free otherwise (pi then has nothing to price and would stop).
fn models(mock: &MockModel, short: f64, pays: bool) -> Value {
    let cost = if pays {
        json!({"input": 1, "output": 1, "cacheRead": 0.1, "cacheWrite": 10})
    } else {
        json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0})
    };
    json!({"providers": {"mock": {
        "baseUrl": format!("{}/v1", mock.uri()), "api": "openai-completions", "apiKey": "test-key",
        "models": [{"id": "mock-model", "promptCache": {"short": short}, "cost": cost}]
    }}})
}

async fn agent_for(mock: &MockModel, short: f64, pays: bool, settings: Value) -> TestAgent {
    let agent = TestAgent::new();
    agent.write_models(&models(mock, short, pays));
    agent.write_settings(&settings);
    mock.set_usage(MockUsage {
        input: 100_000,
        output: 5,
        cache_read: 0,
        cache_write: 0,
    });
    agent
}

async fn prompt(rpc: &mut RpcProcess, id: &str, text: &str) {
    let r = rpc
        .request(json!({"id": id, "type": "prompt", "message": text}))
        .await;
    assert_eq!(r["success"], true, "{r}");
    rpc.event("agent_settled").await;
}

/// The conversation of a request body, as `role: text` lines.
fn conversation(body: &Value) -> Vec<String> {
    wire::messages(body)
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            format!(
                "{}: {}",
                m["role"].as_str().unwrap_or_default(),
                wire::content_text(&m["content"])
            )
        })
        .collect()
}

fn usage_entries(agent: &TestAgent) -> Vec<Value> {
    std::fs::read_to_string(only_session_file(agent))
        .expect("session file")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("session line"))
        .filter(|e| e["type"] == "usage")
        .collect()
}

#[tokio::test]
async fn a_settled_run_is_kept_warm_with_a_one_token_replay_whose_usage_counts() {
    let mock = MockModel::start(vec![Turn::text("hi there"), Turn::text("")]).await;
    // No `cacheWarming` setting: pi's default (`idle`) warms between runs.
    let agent = agent_for(&mock, 10.2, true, json!({})).await;
    let mut rpc = agent.rpc(&["--model", MODEL, "--hook-events"]);
    prompt(&mut rpc, "p", "hello").await;
    let appended = rpc.event("entry_appended").await;
    let entry = &appended["entry"];
    assert_eq!(entry["type"], "usage", "{appended}");
    assert_eq!(entry["kind"], "cache_warm");
    assert_eq!(entry["provider"], "mock");
    assert_eq!(entry["model"], "mock-model");
    assert_eq!(entry["usage"]["input"], 100_000);
    assert!(entry.get("note").is_none(), "pi's own decision: {entry}");

    let bodies = mock.bodies();
    assert!(bodies.len() >= 2, "{bodies:?}");
    assert_eq!(conversation(&bodies[1]), conversation(&bodies[0]));
    assert_eq!(conversation(&bodies[0]), ["user: hello"]);
    assert_eq!(bodies[1]["max_completion_tokens"], 1, "{}", bodies[1]);
    assert_eq!(bodies[1]["tools"], bodies[0]["tools"]);
    assert_eq!(
        mock.requests()[1].headers["authorization"],
        "Bearer test-key"
    );

    // The refresh is not a message, but its tokens and dollars count.
    let stats = rpc
        .request(json!({"id": "s", "type": "get_session_stats"}))
        .await;
    let data = &stats["data"];
    assert_eq!(data["assistantMessages"], 1, "{stats}");
    // The system message, the prompt and the answer.
    assert_eq!(data["totalMessages"], 3, "{stats}");
    assert_eq!(data["tokens"]["input"], 200_000, "{stats}");
    let cost = data["cost"].as_f64().unwrap();
    assert!((cost - 2.0 * 0.100005).abs() < 1e-9, "{stats}");
    rpc.close().await;

    let entries = usage_entries(&agent);
    assert!(
        !entries.is_empty(),
        "the usage entry is in the session file"
    );
    assert_eq!(entries[0]["kind"], "cache_warm");
    assert_eq!(&entries[0], entry);
}

/// Two hooks answer `cache_warming_decision`: the later one's answer wins each time, `stop`
/// sends nothing, and `warm` overrides pi's own `stop` (a free model has nothing to save).
#[tokio::test]
async fn the_last_hook_to_answer_decides_and_stop_sends_nothing() {
    let mock = MockModel::start(vec![Turn::text("one"), Turn::text("two"), Turn::text("")]).await;
    let sub = json!([{"event": "cache_warming_decision"}]);
    let agent = agent_for(&mock, 10.2, false, json!({})).await;
    let first = scripted(
        &agent,
        "first",
        json!({"subscriptions": sub, "on": {
        "cache_warming_decision": [{"reply": {"action": "warm"}}, {"reply": {"action": "stop"}}]}}),
    );
    let second = scripted(
        &agent,
        "second",
        json!({"subscriptions": sub, "on": {
        "cache_warming_decision": [{"reply": {"action": "stop"}}, {"reply": {"action": "warm"}}]}}),
    );
    agent.write_settings(&json!({"hooks": [first, second]}));
    let mut rpc = agent.rpc(&["--model", MODEL, "--hook-events"]);

    prompt(&mut rpc, "p1", "first question").await;
    let decided = rpc
        .until(|v| v["type"] == "hook_decision" && v["event"] == "cache_warming_decision")
        .await;
    assert_eq!(decided["outcome"], "stop", "{decided}");
    let outcomes: Vec<&Value> = decided["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["outcome"])
        .collect();
    assert_eq!(outcomes, [&json!("warm"), &json!("stop")]);

    prompt(&mut rpc, "p2", "second question").await;
    let decided = rpc
        .until(|v| v["type"] == "hook_decision" && v["event"] == "cache_warming_decision")
        .await;
    assert_eq!(decided["outcome"], "warm", "{decided}");
    let appended = rpc.event("entry_appended").await;
    assert_eq!(
        appended["entry"]["note"], "extension override",
        "{appended}"
    );
    rpc.close().await;

    // pi's own view of the refresh, as the hooks saw it: nothing to price, so `stop`.
    let asked = recorded_events(&agent, "first", "cache_warming_decision");
    assert_eq!(asked.len(), 2);
    let payload = &asked[0]["payload"];
    assert_eq!(payload["action"], "stop", "{payload}");
    assert_eq!(payload["continuation_probability"], 0.15);
    assert_eq!(payload["warm_cost"], 0.0);
    assert_eq!(payload["miss_cost"], 0.0);

    // Later refreshes of the second run may follow; the first three requests tell the story.
    let bodies = mock.bodies();
    let lines: Vec<Vec<String>> = bodies.iter().take(3).map(conversation).collect();
    assert_eq!(
        lines,
        [
            vec!["user: first question".to_string()],
            vec![
                "user: first question".into(),
                "assistant: one".into(),
                "user: second question".into()
            ],
            vec![
                "user: first question".into(),
                "assistant: one".into(),
                "user: second question".into()
            ],
        ],
        "the first run's refresh was stopped; the second's was sent"
    );
}

/// A prompt that comes while a refresh is pending replaces what is kept warm: the refresh
/// that follows repeats the new request, and the old one never goes out.
#[tokio::test]
async fn a_new_prompt_replaces_the_pending_refresh() {
    let mock = MockModel::start(vec![Turn::text("one"), Turn::text("two"), Turn::text("")]).await;
    // A two-second wait before the refresh: ample time to send the second prompt.
    let agent = agent_for(&mock, 12.0, true, json!({})).await;
    let mut rpc = agent.rpc(&["--model", MODEL, "--hook-events"]);
    prompt(&mut rpc, "p1", "first").await;
    prompt(&mut rpc, "p2", "second").await;
    rpc.event("entry_appended").await;
    rpc.close().await;
    let bodies = mock.bodies();
    assert!(bodies.len() >= 3, "{bodies:?}");
    assert_eq!(conversation(&bodies[2]), conversation(&bodies[1]));
    assert_eq!(conversation(&bodies[2]).last().unwrap(), "user: second");
    assert_eq!(bodies[2]["max_completion_tokens"], 1);
}

/// A session holding a cache refresh's `usage` entry resumes with its whole history in ours
/// and in the TypeScript pi (0.73.1, which does not know the entry type, and 1.6), each
/// chaining its exchange on.
#[tokio::test]
async fn a_session_with_a_cache_warm_entry_resumes_in_every_pi() {
    let mock = MockModel::start(vec![
        Turn::text("one"),
        Turn::text(""),
        Turn::text("ours again"),
        Turn::text("ts answer"),
        Turn::text("ts 1.6 answer"),
    ])
    .await;
    let agent = agent_for(&mock, 10.2, true, json!({"cacheWarming": "idle"})).await;
    let mut rpc = agent.rpc(&["--model", MODEL, "--hook-events"]);
    prompt(&mut rpc, "p", "first").await;
    rpc.event("entry_appended").await;
    rpc.close().await;
    let file = only_session_file(&agent);
    let session = file.to_str().unwrap().to_string();
    let last_history = || conversation(mock.bodies().last().unwrap());

    // Ours, in print mode (which exits before any refresh).
    agent
        .run(&["--model", MODEL, "--session", &session, "-p", "next"])
        .await
        .assert_ok();
    let mut expected = vec!["user: first", "assistant: one", "user: next"];
    assert_eq!(last_history(), expected);
    expected.push("assistant: ours again");

    for (ts, answer) in [
        (TsPi::find(), "ts answer"),
        (TsPi::find_v1_6(), "ts 1.6 answer"),
    ] {
        let Some(ts) = ts else { continue };
        let out = ts
            .run(&agent, &["--session", &session, "-p", "again"])
            .await;
        out.assert_ok();
        assert_eq!(out.stdout.trim_end(), answer, "{out}");
        expected.push("user: again");
        assert_eq!(last_history(), expected, "{answer}");
        expected.push(if answer == "ts answer" {
            "assistant: ts answer"
        } else {
            "assistant: ts 1.6 answer"
        });
    }
    let usage = usage_entries(&agent);
    assert_eq!(usage.len(), 1, "the entry survived every resume");
}
