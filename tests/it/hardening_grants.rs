//! Issue 24, items 1 and 6: keys do not leave through what a hook or a project registers, and
//! the model's shell loses every variable pi's own configuration reads as a credential.
//!
//! Written as an attacker would: a hook (the scripted test hook) or a trusted project's files
//! try to point a provider or an MCP server at a server the attacker controls, to have pi
//! expand its own environment into what it sends there, or to make pi run a command. Every
//! secret the user has ends in `-LEAK`, so "nothing leaked" is one search over everything the
//! attacker's server received, the hook was sent and the model's tools printed.
//!
//! `providers` holds `provider.register`, `mcp` holds `mcp.register`, `project` a trusted
//! project's `.pi/mcp.json` and hooks, `shell` item 6.

mod mcp;
mod project;
mod providers;
mod shell;

use serde_json::{json, Value};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::hooks::{recorded, scripted};
use crate::common::mock::MockModel;
use crate::common::TestAgent;

/// What marks a secret of the user's.
const LEAK: &str = "LEAK";

fn call(method: &str, params: Value) -> Value {
    json!({"method": method, "params": params})
}

/// The results of the host calls the scripted hook `name` made, by call id (from 1).
fn results(agent: &TestAgent, name: &str) -> Vec<Value> {
    recorded(agent, name)
        .into_iter()
        .filter(|m| m["type"] == "result")
        .collect()
}

/// The result of the call with id `id` the hook `name` made.
#[track_caller]
fn result(agent: &TestAgent, name: &str, id: u64) -> Value {
    results(agent, name)
        .into_iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no result for call {id} of {name}"))
}

/// Asserts the call `id` of hook `name` was refused as `invalid_params` with a message that
/// contains every one of `words`.
#[track_caller]
fn assert_refused(agent: &TestAgent, name: &str, id: u64, words: &[&str]) {
    let r = result(agent, name, id);
    assert_eq!(
        r["error"]["code"], "invalid_params",
        "call {id} of {name} was not refused: {r:#}"
    );
    let message = r["error"]["message"].as_str().unwrap_or_default();
    for w in words {
        assert!(
            message.contains(w),
            "the refusal of call {id} does not say {w:?}: {message}"
        );
    }
}

/// A scripted hook `name` that sends `early` calls before `register` (as an extension's
/// factory calls `registerProvider`), configured further by `config`.
fn registrar(agent: &TestAgent, name: &str, early: Vec<Value>, config: Value) -> Value {
    let mut config = config;
    config["early_calls"] = Value::Array(early);
    scripted(agent, name, config)
}

fn write_auth(agent: &TestAgent, auth: Value) {
    crate::common::write_json(&agent.agent_dir.join("auth.json"), &auth);
}

#[track_caller]
fn assert_no_leak(what: &str, text: &str) {
    assert!(
        !text.contains(LEAK),
        "a secret of the user's reached {what}:\n{text}"
    );
}

/// Everything a mock model server was sent: paths, headers and bodies.
fn seen_by_model(mock: &MockModel) -> String {
    mock.requests()
        .iter()
        .map(|r| format!("{} {:?} {}\n", r.path, r.headers, r.body))
        .collect()
}

/// A server that answers every request 404 and records everything it was sent: an
/// attacker's endpoint that is no MCP server.
struct Tap(MockServer);

impl Tap {
    async fn start() -> Tap {
        let server = MockServer::start().await;
        Mock::given(wiremock::matchers::any())
            .respond_with(ResponseTemplate::new(404))
            .mount(&server)
            .await;
        Tap(server)
    }

    fn uri(&self) -> String {
        self.0.uri()
    }

    /// Every request so far: method, path, headers and body.
    async fn seen(&self) -> String {
        self.0
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .map(|r| {
                let headers: Vec<String> = r
                    .headers
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", v.to_str().unwrap_or("?")))
                    .collect();
                format!(
                    "{} {} {headers:?} {}\n",
                    r.method,
                    r.url.path(),
                    String::from_utf8_lossy(&r.body)
                )
            })
            .collect()
    }
}
