//! The boundary events (`turn_end`, `agent_before_settle`) through the real binary, real hooks
//! (the messenger fixture) and the mock model: a later hook's reply replaces an earlier
//! proposal, both boundaries fire when a turn failed, entries other than messages land in the
//! session (all or none), and `agent_settled` follows a failed run too.

use serde_json::{json, Value};

use crate::common::hooks::{hook_errors, run_pi};
use crate::common::{of_type, MockModel, TestAgent, Turn};
use crate::hooks_messages::{
    json_run, messenger, messengers, recorded_by, request_messages, session_entries,
};

fn events_seen(agent: &TestAgent, hook: &str, event: &str) -> Vec<Value> {
    recorded_by(agent, hook)
        .into_iter()
        .filter(|l| l["event"] == event)
        .map(|l| l["payload"].clone())
        .collect()
}

#[tokio::test]
async fn a_later_boundary_hook_replaces_an_earlier_proposal() {
    let lint = json!({"agent_before_settle": {"reply": {
        "messages": [{"custom_type": "lint", "content": "fix the lint errors"}],
        "continue": true}}});
    let veto = json!({"agent_before_settle": {"reply": {"entries": [], "continue": false}}});

    // Alone, the first hook's proposal holds: its message is added and the run goes on.
    let mock = MockModel::start(vec![Turn::text("done"), Turn::text("lint fixed")]).await;
    let agent = TestAgent::with_mock(&mock);
    messenger(&agent, lint.clone());
    let (out, _) = json_run(&agent, &["work"]).await;
    assert_eq!(mock.requests().len(), 2, "{out}");
    assert_eq!(
        request_messages(&mock, 1).last().unwrap(),
        &("user".to_string(), "fix the lint errors".to_string())
    );

    // A later hook sees that proposal and overrules it: nothing added, the run settles.
    let mock = MockModel::start(vec![Turn::text("done"), Turn::text("unexpected")]).await;
    let agent = TestAgent::with_mock(&mock);
    messengers(&agent, &[("lint", lint), ("veto", veto)]);
    let (out, events) = json_run(&agent, &["work"]).await;
    assert_eq!(mock.requests().len(), 1, "{out}");
    let seen = events_seen(&agent, "veto", "agent_before_settle");
    assert_eq!(seen[0]["proposal"]["continue"], true);
    assert_eq!(seen[0]["proposal"]["entries"][0]["type"], "custom_message");
    assert_eq!(seen[0]["outcome"], "completed");
    assert!(!session_entries(&agent)
        .iter()
        .any(|e| e["type"] == "custom_message"));
    assert_eq!(of_type(&events, "agent_settled").len(), 1, "{out}");
}

#[tokio::test]
async fn turn_end_fires_after_a_failed_turn_before_the_streams_turn_end_and_the_run_still_settles()
{
    let mock = MockModel::start(vec![Turn::status(400, "bad request")]).await;
    let agent = TestAgent::with_mock(&mock);
    messenger(
        &agent,
        json!({"turn_end": {"reply": {"messages": [{"custom_type": "note", "content": "the call failed"}]}},
               "agent_before_settle": {},
               "agent_settled": {}}),
    );
    let out = run_pi(
        &agent,
        &[
            "--model",
            "mock/mock-model",
            "--mode",
            "json",
            "--hook-events",
            "go",
        ],
    )
    .await;
    let events = out.events();
    let turn_ends = events_seen(&agent, "messenger", "turn_end");
    assert_eq!(turn_ends.len(), 1, "{out}");
    assert_eq!(turn_ends[0]["outcome"], "error");
    // The hooks' boundary comes first: its message is in before the stream's turn_end.
    let kinds: Vec<String> = events
        .iter()
        .filter(|e| {
            e["type"] == "turn_end"
                || (e["type"] == "message_end" && e["message"]["role"] == "custom")
        })
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["message_end", "turn_end"], "{out}");
    // The run failed, yet it is the last actionable boundary's and it settles.
    assert_eq!(
        events_seen(&agent, "messenger", "agent_before_settle")[0]["outcome"],
        "error"
    );
    assert_eq!(of_type(&events, "agent_settled").len(), 1, "{out}");
    assert_eq!(events_seen(&agent, "messenger", "agent_settled").len(), 1);
}

#[tokio::test]
async fn boundary_entries_land_in_the_session_all_or_none() {
    let mock = MockModel::start(vec![
        Turn::text("first answer"),
        Turn::text("second answer"),
        Turn::tools(&[("bash", json!({"command": "true"}))]),
        Turn::text("third answer"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    json_run(&agent, &["a very long first question"]).await;
    let first_user = session_entries(&agent)
        .into_iter()
        .find(|e| e["message"]["role"] == "user")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();

    // One bad target spoils the whole proposal: nothing is added, and it is reported.
    messenger(
        &agent,
        json!({"turn_end": {"reply": {"entries": [
            {"type": "custom", "custom_type": "checkpoint", "data": {"n": 1}},
            {"type": "context_edit", "target_id": "no-such-entry", "replacement": "x"}]}}}),
    );
    let (out, events) = json_run(&agent, &["-c", "next"]).await;
    let errors = hook_errors(&events);
    assert!(
        errors.iter().any(|e| e["hook"] == "<boundary>"
            && e["message"].as_str().unwrap().contains("no-such-entry")),
        "{out}"
    );
    assert!(!session_entries(&agent)
        .iter()
        .any(|e| e["type"] == "custom" || e["type"] == "context_edit"));

    // Valid entries are stored, and an edit changes what the model is sent from then on.
    messenger(
        &agent,
        json!({"turn_end": {"reply": {"entries": [
            {"type": "custom", "custom_type": "checkpoint", "data": {"n": 2}},
            {"type": "context_edit", "target_id": first_user, "replacement": "(question elided)"}]}}}),
    );
    let (out, _) = json_run(&agent, &["-c", "and then"]).await;
    let entries = session_entries(&agent);
    let custom: Vec<&Value> = entries.iter().filter(|e| e["type"] == "custom").collect();
    assert_eq!(custom.len(), 1, "{out}");
    assert_eq!(custom[0]["data"], json!({"n": 2}));
    assert!(entries
        .iter()
        .any(|e| e["type"] == "context_edit" && e["targetId"] == first_user));
    // The third run's tool turn ended with the edit; its next call sent the edited question.
    let last = mock.requests().len() - 1;
    let users: Vec<String> = request_messages(&mock, last)
        .into_iter()
        .filter(|(r, _)| r == "user")
        .map(|(_, t)| t)
        .collect();
    assert_eq!(users[0], "(question elided)", "{out}");
}
