//! The system prompt and the raw stream from hooks, through the real `pi` binary, real hooks
//! (the scripted test hook) and the mock model server: `prompt.get`'s named sections,
//! `before_agent_start`'s `system_prompt_options`, `context_with_system` and
//! `provider_stream_event`; and `provider.register` / `provider.unregister` at start-up.

use serde_json::{json, Value};

use crate::common::hooks::{hook_errors, recorded, recorded_events, run_pi, scripted, use_hooks};
use crate::common::mock::{MockModel, Turn};
use crate::common::TestAgent;

fn call(method: &str, params: Value) -> Value {
    json!({"method": method, "params": params})
}

fn results(agent: &TestAgent, hook: &str) -> Vec<Value> {
    recorded(agent, hook)
        .into_iter()
        .filter(|m| m["type"] == "result")
        .collect()
}

fn section_names(sections: &Value) -> Vec<String> {
    sections
        .as_object()
        .expect("sections is an object")
        .keys()
        .cloned()
        .collect()
}

#[tokio::test]
async fn hooks_edit_prompt_sections_own_the_transcript_and_watch_the_raw_stream() {
    let mock = MockModel::start(vec![Turn::text("Bonjour.")]).await;
    let agent = TestAgent::with_mock(&mock);
    let rewritten = json!([
        {"role": "system", "content": "SYSTEM FROM THE HOOK"},
        {"role": "user", "content": "hello (rewritten)", "timestamp": 0}
    ]);
    use_hooks(
        &agent,
        vec![
            // Edits sections by name: one replaced, one added, one removed.
            scripted(
                &agent,
                "editor",
                json!({
                    "subscriptions": [{"event": "input"}, {"event": "before_agent_start"}],
                    "on": {
                        "input": {"call": call("prompt.get", json!({}))},
                        "before_agent_start": {"reply": {"system_prompt_options": {"sections": {
                            "identity": "You are a careful reviewer.",
                            "house_rules": "Never push to main.",
                            "custom_tools": null,
                        }}}},
                    },
                }),
            ),
            // Sees the edited prompt, owns the transcript and watches the stream.
            scripted(
                &agent,
                "owner",
                json!({
                    "subscriptions": [{"event": "before_agent_start"},
                                      {"event": "context_with_system"},
                                      {"event": "provider_stream_event"}],
                    "on": {"context_with_system": {"reply": {"messages": rewritten}}},
                }),
            ),
            // Drops the system message: refused, and the owner's transcript is kept.
            scripted(
                &agent,
                "dropper",
                json!({
                    "subscriptions": [{"event": "context_with_system"}],
                    "on": {"context_with_system": {"reply": {"messages": [
                        {"role": "user", "content": "no system", "timestamp": 0}]}}},
                }),
            ),
        ],
    );
    let out = run_pi(
        &agent,
        &["--model", "mock/mock-model", "--mode", "json", "hello"],
    )
    .await;
    out.assert_ok();
    let events = out.events();

    // prompt.get: the prompt and its named sections, which make it.
    let got = &results(&agent, "editor")[0]["value"];
    let names = section_names(&got["sections"]);
    assert_eq!(
        names,
        ["identity", "tools", "custom_tools", "guidelines", "cwd"],
        "{got:#?}"
    );
    let joined: Vec<&str> = got["sections"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(got["system_prompt"], joined.join("\n\n"));

    // The next hook sees the edits, in place and at the end.
    let start = &recorded_events(&agent, "owner", "before_agent_start")[0]["payload"];
    let sections = &start["system_prompt_options"]["sections"];
    assert_eq!(
        section_names(sections),
        ["identity", "tools", "guidelines", "cwd", "house_rules"],
        "{start:#?}"
    );
    let prompt = start["system_prompt"].as_str().unwrap();
    assert!(prompt.starts_with("You are a careful reviewer.\n\nAvailable tools:"));
    assert!(prompt.ends_with("\n\nNever push to main."), "{prompt}");
    assert!(!prompt.contains("In addition to the tools above"));

    // context_with_system: the run's prompt first, then the conversation.
    let transcript = &recorded_events(&agent, "owner", "context_with_system")[0]["payload"];
    let messages = transcript["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[0]["content"], prompt);
    assert_eq!(messages[1]["role"], "user");
    assert_eq!(crate::common::blocks_text(&messages[1]["content"]), "hello");

    // What the model got is the owner's transcript, as it was returned.
    let body = &mock.bodies()[0];
    let sent = body["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 2, "{body:#?}");
    assert_eq!(sent[0]["content"], "SYSTEM FROM THE HOOK");
    assert_eq!(sent[1]["content"], "hello (rewritten)");

    // The dropper's reply was refused, naming why.
    let errors = hook_errors(&events);
    assert!(
        errors.iter().any(|e| e.to_string().contains("dropper")
            && e.to_string()
                .contains("first message must be the system message")),
        "{errors:#?}"
    );

    // The raw stream, event by event, before pi parsed it.
    let raw = recorded_events(&agent, "owner", "provider_stream_event");
    assert!(raw.len() >= 2, "{raw:#?}");
    let p = &raw[0]["payload"];
    assert_eq!(
        (&p["api"], &p["provider"], &p["model"]),
        (
            &json!("openai-completions"),
            &json!("mock"),
            &json!("mock-model")
        )
    );
    let text: String = raw
        .iter()
        .filter_map(|e| e["payload"]["data"]["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "Bonjour.");
    assert!(raw.iter().all(|e| e.get("id").is_none()), "notifications");
    // Nobody else subscribed, nobody else was sent them.
    assert!(recorded_events(&agent, "editor", "provider_stream_event").is_empty());
}
