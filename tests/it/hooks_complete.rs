//! `model.complete` through the real binary and a Python hook built on
//! `sample-hooks/pi_hook.py`: a hook's tool asks pi for a model request; the request reaches the
//! provider with the user's key and the hook's system prompt, the text streams back as
//! `call_progress`, the assistant message is the answer, its usage is a `usage` entry of the
//! session — and nothing the hook receives, from `hello` on, carries the key.

use serde_json::{json, Value};

use crate::common::hooks::repo;
use crate::common::{of_type, path_str, MockModel, TestAgent, Turn};

/// The provider's key: it must reach the provider and never the hook.
const KEY: &str = "LEAK-model-complete-key-7c1e";

const ASKER: &str = r#"
FRAMES = []
_handle = hook._handle
def recording(msg):
    FRAMES.append(msg)
    return _handle(msg)
hook._handle = recording

@hook.tool("ask", "Ask the model a side question")
def ask(args, ctx):
    deltas = []
    message = hook.complete({
        "system_prompt": "Answer in two words.",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "What is six times seven?"}]}],
    }, on_event=deltas.append, timeout=20)
    try:
        hook.complete({"model": {"provider": "mock", "id": "no-such-model"},
                       "messages": [{"role": "user", "content": "x"}]}, timeout=20)
        unknown = "answered"
    except HostError as e:
        unknown = e.code
    with open(hook.config["log"], "w") as f:
        json.dump({"message": message, "deltas": deltas, "unknown": unknown, "frames": FRAMES}, f)
    return "".join(b.get("text", "") for b in message["content"])
"#;

fn hook_entry(agent: &TestAgent) -> Value {
    let path = agent.tmp.join("asker.py");
    let samples = path_str(&repo().join("sample-hooks"));
    let text = format!(
        "import json, sys\nsys.dont_write_bytecode = True\nsys.path.insert(0, {samples:?})\n\
         from pi_hook import Hook, HostError\nhook = Hook(\"asker\")\n{ASKER}\nhook.run()\n"
    );
    std::fs::write(&path, text).expect("write hook");
    let log = path_str(&agent.tmp.join("asker.json"));
    json!({"command": format!("python3 {}", path_str(&path)), "name": "asker",
           "config": {"log": log}, "timeout_ms": 20000, "start_timeout_ms": 10000})
}

#[tokio::test]
async fn a_hook_runs_a_model_request_with_pis_key_streamed_and_counted_without_seeing_the_key() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("ask", json!({}))]),
        Turn::text("Forty-two."),
        Turn::text("The side answer was Forty-two."),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let mut models = mock.models_json();
    models["providers"]["mock"]["apiKey"] = json!(KEY);
    agent.write_models(&models);
    agent.write_settings(&json!({ "hooks": [hook_entry(&agent)] }));
    let out = agent
        .run(&["--model", "mock/mock-model", "--mode", "json", "-p", "go"])
        .await;
    out.assert_ok();

    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "the hook's request is the second");
    let side = &requests[1];
    assert!(
        side.headers
            .get("authorization")
            .is_some_and(|a| a.contains(KEY)),
        "the provider gets the user's key: {:?}",
        side.headers
    );
    let body = side.body.to_string();
    assert!(body.contains("Answer in two words."), "{body}");
    assert!(body.contains("What is six times seven?"), "{body}");
    assert_eq!(
        side.body["tools"],
        Value::Null,
        "no tools asked for: {body}"
    );

    let log = std::fs::read_to_string(agent.tmp.join("asker.json")).expect("the hook logged");
    assert!(!log.contains(KEY), "the key reached the hook: {log}");
    let log: Value = serde_json::from_str(&log).expect("json");
    let text: String = log["message"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert_eq!(text, "Forty-two.", "{log:#}");
    assert_eq!(log["message"]["stopReason"], "stop");
    let streamed: String = log["deltas"]
        .as_array()
        .expect("deltas")
        .iter()
        .filter(|d| d["type"] == "text_delta")
        .filter_map(|d| d["delta"].as_str())
        .collect();
    assert_eq!(streamed, "Forty-two.", "{log:#}");
    assert_eq!(log["unknown"], "not_found");

    // The tool's answer reached the model; the request's usage is the session's.
    let events = out.events();
    let ends = of_type(&events, "tool_execution_end");
    assert!(ends[0].to_string().contains("Forty-two."), "{:?}", ends);
    let file = crate::sessions::session_files(&agent)
        .into_iter()
        .next()
        .expect("a session file");
    let usage: Vec<Value> = std::fs::read_to_string(file)
        .expect("session")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "usage")
        .collect();
    assert_eq!(usage.len(), 1, "{usage:?}");
    assert_eq!(usage[0]["kind"], "model_complete");
    assert_eq!(usage[0]["note"], "asker");
    assert_eq!(usage[0]["model"], "mock-model");
    assert!(
        usage[0]["usage"]["output"].as_u64().is_some(),
        "{}",
        usage[0]
    );
}

const WITHDRAWER: &str = r#"
import threading, time

@hook.tool("ask", "Ask a model that never answers, then give up")
def ask(args, ctx):
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    started = time.time()
    try:
        hook.complete({"model": {"provider": "stall", "id": "slow"},
                       "messages": [{"role": "user", "content": "hello?"}]},
                      timeout=20, cancel=cancel)
        outcome = "answered"
    except HostError as e:
        outcome = e.code
    return "%s after %.1fs" % (outcome, time.time() - started)
"#;

/// A model server that accepts connections and never answers.
async fn stalling_server() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    (format!("http://{addr}/v1"), task)
}

#[tokio::test]
async fn a_hook_withdraws_its_model_request_and_is_answered_cancelled_at_once() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("ask", json!({}))]),
        Turn::text("gave up"),
    ])
    .await;
    let (stall, server) = stalling_server().await;
    let agent = TestAgent::with_mock(&mock);
    let mut models = mock.models_json();
    models["providers"]["stall"] = json!({"baseUrl": stall, "api": "openai-completions",
        "apiKey": "k", "models": [{"id": "slow"}]});
    agent.write_models(&models);
    let path = agent.tmp.join("withdrawer.py");
    let samples = path_str(&repo().join("sample-hooks"));
    std::fs::write(
        &path,
        format!(
            "import json, sys\nsys.dont_write_bytecode = True\nsys.path.insert(0, {samples:?})\n\
             from pi_hook import Hook, HostError\nhook = Hook(\"withdrawer\")\n{WITHDRAWER}\n\
             hook.run()\n"
        ),
    )
    .expect("write hook");
    agent.write_settings(
        &json!({ "hooks": [{"command": format!("python3 {}", path_str(&path)),
        "name": "withdrawer", "timeout_ms": 20000, "start_timeout_ms": 10000}] }),
    );
    let out = agent
        .run(&["--model", "mock/mock-model", "--mode", "json", "-p", "go"])
        .await;
    server.abort();
    out.assert_ok();
    let events = out.events();
    let ends = of_type(&events, "tool_execution_end");
    let said = ends[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(said.starts_with("cancelled after 0."), "{said}");
}
