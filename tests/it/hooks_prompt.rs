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
                            "rules": "- Review only; change nothing.",
                            "house_rules": "Never push to main.",
                            "docs": null,
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
        &[
            "--model",
            "mock/mock-model",
            "--mode",
            "json",
            "--hook-events",
            "hello",
        ],
    )
    .await;
    out.assert_ok();
    let events = out.events();

    // prompt.get: the prompt and its named sections (their content), which make it: the
    // preamble as it is, each other section in tags named after it, as pi 1.6 renders them.
    let got = &results(&agent, "editor")[0]["value"];
    let names = section_names(&got["sections"]);
    assert_eq!(
        names,
        ["preamble", "tools", "rules", "docs", "cwd"],
        "{got:#?}"
    );
    let joined: Vec<String> = got["sections"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, v)| match (name.as_str(), v.as_str().unwrap()) {
            ("preamble", text) => text.to_string(),
            (name, text) => format!("<{name}>\n{text}\n</{name}>"),
        })
        .collect();
    assert_eq!(got["system_prompt"], joined.join("\n\n"));
    assert_eq!(got["sections"]["cwd"], crate::common::path_str(&agent.cwd));

    // The next hook sees the edits, in place and at the end.
    let start = &recorded_events(&agent, "owner", "before_agent_start")[0]["payload"];
    let sections = &start["system_prompt_options"]["sections"];
    assert_eq!(
        section_names(sections),
        ["preamble", "tools", "rules", "cwd", "house_rules"],
        "{start:#?}"
    );
    let prompt = start["system_prompt"].as_str().unwrap();
    assert!(prompt.starts_with("You are a coding assistant running inside pi"));
    assert!(
        prompt.contains("</tools>\n\n<rules>\n- Review only; change nothing.\n</rules>\n\n<cwd>"),
        "{prompt}"
    );
    assert!(
        prompt.ends_with("</cwd>\n\n<house_rules>\nNever push to main.\n</house_rules>"),
        "{prompt}"
    );
    assert!(!prompt.contains("<docs>"), "{prompt}");

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

/// pi 1.6 refuses a section named `preamble` or not `^[a-z][a-z0-9_-]*$`; so do we, naming
/// the section, and the prompt the model gets is pi's own.
#[tokio::test]
async fn a_section_edit_with_a_name_pi_refuses_is_a_wrong_shape_and_changes_nothing() {
    for bad in ["preamble", "House Rules"] {
        let mock = MockModel::start(vec![Turn::text("ok")]).await;
        let agent = TestAgent::with_mock(&mock);
        use_hooks(
            &agent,
            vec![scripted(
                &agent,
                "editor",
                json!({
                    "subscriptions": [{"event": "before_agent_start"}],
                    "on": {"before_agent_start": {"reply": {"system_prompt_options": {"sections": {
                        "house_rules": "Never push to main.",
                        bad: "You are a pirate.",
                    }}}}},
                }),
            )],
        );
        let out = run_pi(
            &agent,
            &[
                "--model",
                "mock/mock-model",
                "--mode",
                "json",
                "--hook-events",
                "hello",
            ],
        )
        .await;
        out.assert_ok();
        let events = out.events();
        let messages: Vec<&str> = hook_errors(&events)
            .into_iter()
            .filter(|e| e["kind"] == "bad_reply")
            .filter_map(|e| e["message"].as_str())
            .collect();
        let named = [format!("{bad:?}"), format!("`{bad}`")];
        assert!(
            messages
                .iter()
                .any(|m| m.contains("section") && named.iter().any(|n| m.contains(n.as_str()))),
            "{bad}: {messages:#?}"
        );
        let sent = crate::common::wire::system_text(&mock.bodies()[0]);
        assert!(
            sent.starts_with("You are a coding assistant running inside pi"),
            "{sent}"
        );
        assert!(
            !sent.contains("pirate") && !sent.contains("Never push"),
            "{sent}"
        );
    }
}

#[tokio::test]
async fn a_hook_registers_a_provider_before_the_model_is_chosen_and_keeps_no_key() {
    let mock = MockModel::start(vec![Turn::text("From the team model.")]).await;
    // No models.json: the provider exists only because the hook registers it.
    let mut agent = TestAgent::new();
    agent.env("TEAM_KEY", "sk-team-secret");
    agent.env("TEAM_TAG", "tag-from-env");
    let team = json!({"name": "team", "baseUrl": format!("{}/v1", mock.uri()),
                      "api": "openai-completions", "apiKey": "$TEAM_KEY",
                      "headers": {"x-team": "$TEAM_TAG", "x-plain": "visible"},
                      "models": [{"id": "team-model", "name": "Team Model", "contextWindow": 32000}]});
    let mut registrar = scripted(
        &agent,
        "registrar",
        json!({
            // Before `register`, as an extension's factory calls registerProvider.
            "early_calls": [
                call("provider.register", team),
                call("provider.register", json!({"name": "broken", "api": "openai-completions",
                                                  "models": [{"id": "x"}]})),
                call("provider.register", json!({"name": "spare", "baseUrl": "http://127.0.0.1:9",
                                                  "api": "openai-completions", "models": [{"id": "s"}]})),
                call("provider.unregister", json!({"name": "spare"})),
            ],
            "subscriptions": [{"event": "input"}, {"event": "before_provider_headers"}],
            "on": {"input": {"call": [
                call("provider.register", json!({"name": "late", "baseUrl": "http://127.0.0.1:9",
                                                  "api": "openai-completions", "models": [{"id": "l"}]})),
                call("model.get", json!({})),
            ]}},
        }),
    );
    // The hook's `$VAR`s resolve in its own environment: the user grants it these two.
    registrar["env_passthrough"] = json!(["TEAM_KEY", "TEAM_TAG"]);
    use_hooks(&agent, vec![registrar]);
    let out = run_pi(
        &agent,
        &[
            "--model",
            "team/team-model",
            "--mode",
            "json",
            "--hook-events",
            "hello",
        ],
    )
    .await;
    out.assert_ok();

    let r = results(&agent, "registrar");
    assert_eq!(r.len(), 6, "{r:#?}");
    assert_eq!(
        r[0]["value"],
        json!({"name": "team", "models": ["team-model"]}),
        "the answer names the models and echoes no key: {r:#?}"
    );
    assert_eq!(r[1]["error"]["code"], "invalid_params");
    assert!(
        r[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("baseUrl"),
        "checked as a models.json entry: {r:#?}"
    );
    assert_eq!(r[3]["value"], json!({}), "spare unregistered");
    // Once the model is chosen, a registration goes to the running registry.
    assert_eq!(
        r[4]["value"],
        json!({"name": "late", "models": ["l"]}),
        "{r:#?}"
    );
    let model = &r[5]["value"];
    assert_eq!(
        (&model["provider"], &model["id"]),
        (&json!("team"), &json!("team-model"))
    );
    assert_eq!(model["context_window"], 32000);
    assert!(model.get("headers").is_none() && model.get("api_key").is_none());

    // The request went to the hook's provider, with the key and headers pi resolved.
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 1, "{out}");
    assert_eq!(reqs[0].body["model"], "team-model");
    let h = &reqs[0].headers;
    assert_eq!(
        h.get("authorization").map(String::as_str),
        Some("Bearer sk-team-secret")
    );
    assert_eq!(h.get("x-team").map(String::as_str), Some("tag-from-env"));
    assert_eq!(h.get("x-plain").map(String::as_str), Some("visible"));

    // Hooks see those credentials redacted, like models.json's.
    let shown = &recorded_events(&agent, "registrar", "before_provider_headers")[0]["payload"];
    assert_eq!(
        shown["headers"]["authorization"], "[redacted]",
        "{shown:#?}"
    );
    assert_eq!(shown["headers"]["x-team"], "[redacted]");
    assert_eq!(shown["headers"]["x-plain"], "visible");
    let all = serde_json::to_string(&recorded(&agent, "registrar")).unwrap();
    assert!(!all.contains("sk-team-secret") && !all.contains("tag-from-env"));

    // An unregistered provider is not there to choose.
    let out = run_pi(
        &agent,
        &[
            "--model",
            "spare/s",
            "--mode",
            "json",
            "--hook-events",
            "hello",
        ],
    )
    .await;
    assert_ne!(out.code, Some(0), "{out}");
}

/// The seeds' rule: a provider a hook registers while pi runs serves the next request, and
/// is listed without a restart.
#[tokio::test]
async fn a_provider_registered_after_start_up_serves_the_next_request() {
    let mock = MockModel::start(vec![Turn::text("first"), Turn::text("from late")]).await;
    let agent = TestAgent::new();
    agent.write_models(&mock.models_json());
    let registrar = scripted(
        &agent,
        "registrar",
        json!({
            "subscriptions": [{"event": "input"}],
            "on": {"input": {"call": [
                call("provider.register", json!({"name": "late",
                    "baseUrl": format!("{}/v1", mock.uri()), "api": "openai-completions",
                    "apiKey": "late-key", "models": [{"id": "l"}]})),
            ]}},
        }),
    );
    use_hooks(&agent, vec![registrar]);
    let mut rpc = agent.rpc(&["--model", "mock/mock-model"]);
    let before = rpc
        .request(json!({"id": "m0", "type": "get_available_models"}))
        .await;
    assert!(!before.to_string().contains("\"late\""), "{before}");
    rpc.send(json!({"id": "p1", "type": "prompt", "message": "hi"}))
        .await;
    rpc.event("agent_end").await;
    let after = rpc
        .request(json!({"id": "m1", "type": "get_available_models"}))
        .await;
    assert!(after.to_string().contains("\"late\""), "{after}");
    let set = rpc
        .request(json!({"id": "s", "type": "set_model", "provider": "late", "modelId": "l"}))
        .await;
    assert_eq!(set["success"], true, "{set}");
    rpc.send(json!({"id": "p2", "type": "prompt", "message": "again"}))
        .await;
    rpc.event("agent_end").await;
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[1].body["model"], "l");
    assert_eq!(reqs[1].headers["authorization"], "Bearer late-key");
    assert_eq!(rpc.close().await, Some(0));
}
