//! The model and prompt host calls through the real `pi` binary and a real hook (the scripted
//! test hook): `model.get`/`model.set`, `thinking.get`/`thinking.set`, the `model_select` and
//! `thinking_level_select` events they cause, `hello.model` and `prompt.get`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::common::hooks::{
    fixture, recorded, recorded_events, run_faux, run_json, run_pi, scripted, use_hooks,
};
use crate::common::{path_str, TestAgent};
use crate::sessions::only_session_file;

/// A second model of the offline `faux` provider (so runs stay scripted), with reasoning.
fn thinker_models(agent: &TestAgent) {
    agent.write_models(&json!({"providers": {"faux": {
        "models": [{"id": "deep", "name": "Deep Thought", "reasoning": true,
                    "contextWindow": 64000, "maxTokens": 8000}]
    }}}));
}

fn call(method: &str, params: Value) -> Value {
    json!({"method": method, "params": params})
}

/// The results of the hook's calls, by call id (the scripted hook numbers its calls from 1,
/// in the order it sends them).
fn results(agent: &TestAgent, hook: &str) -> BTreeMap<u64, Value> {
    recorded(agent, hook)
        .into_iter()
        .filter(|m| m["type"] == "result")
        .map(|m| (m["id"].as_u64().expect("result id"), m))
        .collect()
}

fn session_entries(agent: &TestAgent, kind: &str) -> Vec<Value> {
    std::fs::read_to_string(only_session_file(agent))
        .expect("session file")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("session line is JSON"))
        .filter(|e| e["type"] == kind)
        .collect()
}

#[tokio::test]
async fn a_hook_reads_and_sets_the_model_and_thinking_level_as_model_and_rpc_do() {
    let agent = TestAgent::new();
    thinker_models(&agent);
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "chooser",
            json!({
                "subscriptions": [{"event": "session_start"}, {"event": "input"},
                                  {"event": "before_agent_start"},
                                  {"event": "turn_end"}, {"event": "model_select"},
                                  {"event": "thinking_level_select"}],
                "on": {
                    // Calls 1-3: on faux-1, which has no thinking levels above `off`.
                    "session_start": {"call": [
                        call("model.get", json!({})),
                        call("thinking.get", json!({})),
                    ]},
                    "input": {"call": call("thinking.set", json!({"level": "high"}))},
                    // Calls 4-6: one model pi knows, one it does not, one without a key.
                    "before_agent_start": {"call": [
                        call("model.set", json!({"provider": "faux", "id": "deep"})),
                        call("model.set", json!({"provider": "faux", "id": "shallow"})),
                        call("model.set", json!({"provider": "anthropic", "id": "claude-opus-4-8"})),
                    ]},
                    // Calls 7-8: on deep, `max` is more than it offers.
                    "turn_end": {"call": [
                        call("thinking.set", json!({"level": "max"})),
                        call("model.get", json!({})),
                    ]},
                },
            }),
        )],
    );
    let (out, _) = run_json(&agent, json!(["done"]), &[]).await;
    out.assert_ok();

    // `hello` already said which model pi starts with, in `model.get`'s shape.
    let hello = &recorded(&agent, "chooser")[0];
    assert_eq!(hello["type"], "hello");
    assert_eq!(hello["model"]["id"], "faux-1", "{hello:#?}");
    assert_eq!(hello["model"]["api"], "faux");

    let r = results(&agent, "chooser");
    let faux = &r[&1]["value"];
    assert_eq!(faux["provider"], "faux", "{out}\n{r:#?}");
    assert_eq!(faux["id"], "faux-1");
    assert_eq!(faux["api"], "faux");
    assert_eq!(faux["reasoning"], false);
    assert_eq!(faux["context_window"], 128000);
    assert!(faux.get("api_key").is_none() && faux.get("headers").is_none());
    assert_eq!(r[&2]["value"], json!({"level": "off"}));
    assert_eq!(
        r[&3]["value"],
        json!({"level": "off"}),
        "clamped to faux-1's only level"
    );

    let deep = &r[&4]["value"];
    assert_eq!(deep["provider"], "faux", "{r:#?}");
    assert_eq!(deep["id"], "deep");
    assert_eq!(deep["name"], "Deep Thought");
    assert_eq!(deep["reasoning"], true);
    assert_eq!(deep["context_window"], 64000);
    assert_eq!(r[&5]["error"]["code"], "not_found", "{r:#?}");
    assert!(r[&5]["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("faux/shallow"));
    assert_eq!(r[&6]["error"]["code"], "failed", "{r:#?}");
    assert_eq!(
        r[&7]["value"],
        json!({"level": "high"}),
        "max clamped on deep"
    );
    assert_eq!(r[&8]["value"]["id"], "deep");

    // Recorded as `/model` and `set_thinking_level` record them, so a resume continues there.
    let changes = session_entries(&agent, "model_change");
    let last = changes.last().expect("model_change entries");
    assert_eq!(
        (&last["provider"], &last["modelId"]),
        (&json!("faux"), &json!("deep"))
    );
    let levels = session_entries(&agent, "thinking_level_change");
    assert_eq!(levels.last().expect("levels")["thinkingLevel"], "high");

    // Announced once each: the failed sets change nothing and say nothing.
    let selects = recorded_events(&agent, "chooser", "model_select");
    assert_eq!(selects.len(), 1, "{selects:#?}");
    let p = &selects[0]["payload"];
    assert_eq!(p["source"], "set");
    assert_eq!(p["model"]["id"], "deep");
    assert_eq!(p["model"]["provider"], "faux");
    assert_eq!(p["previous_model"]["id"], "faux-1");
    assert!(
        selects[0].get("id").is_none(),
        "a notify event is not a request"
    );
    let thinking = recorded_events(&agent, "chooser", "thinking_level_select");
    assert_eq!(thinking.len(), 1, "{thinking:#?}");
    assert_eq!(
        thinking[0]["payload"],
        json!({"level": "high", "previous_level": "off"})
    );
}

#[tokio::test]
async fn resuming_a_session_restores_its_model_and_level_and_tells_hooks() {
    let agent = TestAgent::new();
    thinker_models(&agent);
    // A session on deep at `high`, then a new one on faux-1 at `off` that switches back to it.
    run_faux(
        &agent,
        json!(["first"]),
        &["--model", "deep", "--thinking", "high", "-p", "hi"],
    )
    .await
    .assert_ok();
    let first = only_session_file(&agent);
    let first_lines = std::fs::read_to_string(&first).expect("first session");
    use_hooks(
        &agent,
        vec![
            json!({"command": format!("python3 {}", fixture("session_ops.py")),
                   "name": "session-ops", "timeout_ms": 20000}),
            scripted(
                &agent,
                "watcher",
                json!({"subscriptions": [{"event": "model_select"},
                                         {"event": "thinking_level_select"},
                                         {"event": "session_start"}],
                       "on": {"session_start": {"call": call("model.get", json!({}))}}}),
            ),
        ],
    );
    let switch = format!(
        "/op session.switch {}",
        json!({"session_file": first.display().to_string()})
    );
    let out = run_faux(&agent, json!([]), &["-p", &switch]).await;
    out.assert_ok();
    assert!(out.stdout.contains("\"cancelled\": false"), "{out}");

    let selects = recorded_events(&agent, "watcher", "model_select");
    assert_eq!(selects.len(), 1, "{out}\n{selects:#?}");
    let p = &selects[0]["payload"];
    assert_eq!(p["source"], "restore");
    assert_eq!(
        (&p["model"]["provider"], &p["model"]["id"]),
        (&json!("faux"), &json!("deep"))
    );
    assert_eq!(p["previous_model"]["id"], "faux-1");
    let levels = recorded_events(&agent, "watcher", "thinking_level_select");
    assert_eq!(
        levels.last().expect("a level event")["payload"],
        json!({"level": "high", "previous_level": "off"})
    );
    // The new generation's `session_start` already sees the restored model.
    let answers: Vec<Value> = recorded(&agent, "watcher")
        .into_iter()
        .filter(|m| m["type"] == "result")
        .collect();
    assert_eq!(
        answers.len(),
        2,
        "one model.get per generation: {answers:#?}"
    );
    assert_eq!(answers[0]["value"]["id"], "faux-1");
    assert_eq!(answers[1]["value"]["id"], "deep");
    // Restoring writes nothing: the session already says which model and level it uses.
    let after = std::fs::read_to_string(&first).expect("first session");
    assert_eq!(
        after.lines().filter(|l| l.contains("model_change")).count(),
        first_lines
            .lines()
            .filter(|l| l.contains("model_change"))
            .count()
    );
    assert_eq!(
        after
            .lines()
            .filter(|l| l.contains("thinking_level_change"))
            .count(),
        first_lines
            .lines()
            .filter(|l| l.contains("thinking_level_change"))
            .count()
    );
}

#[tokio::test]
async fn hello_names_the_model_once_the_settings_that_choose_it_apply() {
    let agent = TestAgent::new();
    thinker_models(&agent);
    // The project chooses deep; whether its settings apply is only known once it is trusted.
    let project_hook = scripted(&agent, "project", json!({}));
    agent.write_file(
        ".pi/settings.json",
        serde_json::to_string(&json!({"defaultProvider": "faux", "defaultModel": "deep",
                                      "hooks": [project_hook]}))
        .expect("settings JSON"),
    );
    use_hooks(&agent, vec![scripted(&agent, "user", json!({}))]);
    // No `--provider`: the settings choose.
    let script = agent.faux_script(json!(["ok"]));
    let out = run_pi(
        &agent,
        &["--faux-script", &path_str(&script), "-a", "-p", "hi"],
    )
    .await;
    out.assert_ok();

    let user_hello = &recorded(&agent, "user")[0];
    assert_eq!(user_hello["type"], "hello");
    assert!(
        user_hello.get("model").is_none(),
        "before trust the model is not known: {user_hello:#?}"
    );
    let project_hello = &recorded(&agent, "project")[0];
    assert_eq!(
        project_hello["model"]["id"], "deep",
        "{out}\n{project_hello:#?}"
    );
    assert_eq!(project_hello["model"]["reasoning"], true);
}

#[tokio::test]
async fn a_hook_reads_the_system_prompt_pi_built() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "reader",
            json!({"subscriptions": [{"event": "before_agent_start"}],
                   "on": {"before_agent_start": {"call": call("prompt.get", json!({}))}}}),
        )],
    );
    let out = run_faux(
        &agent,
        json!(["ok"]),
        &[
            "--append-system-prompt",
            "Always answer in haiku.",
            "-p",
            "hi",
        ],
    )
    .await;
    out.assert_ok();
    let r = results(&agent, "reader");
    let prompt = r[&1]["value"]["system_prompt"]
        .as_str()
        .unwrap_or_else(|| panic!("no system prompt: {r:#?}"));
    assert!(prompt.contains("Always answer in haiku."), "{prompt}");
    // The tool section is part of it: the default tools are named.
    assert!(
        prompt.contains("read") && prompt.contains("bash"),
        "{prompt}"
    );
}

#[tokio::test]
async fn rpc_model_changes_reach_hooks_with_their_source() {
    let agent = TestAgent::new();
    // Cycling goes through the models with credentials (never faux's): two local ones that
    // are never called.
    agent.write_models(&json!({"providers": {
        "faux": {"models": [{"id": "deep", "reasoning": true}]},
        "local": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
                  "apiKey": "unused", "models": [{"id": "alpha"}, {"id": "beta"}]}
    }}));
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "watcher",
            json!({"subscriptions": [{"event": "model_select"},
                                     {"event": "thinking_level_select"}]}),
        )],
    );
    let mut pi = agent.rpc(&agent.faux_args(json!([])));
    let cycled = pi.request(json!({"id": "1", "type": "cycle_model"})).await;
    assert_eq!(cycled["success"], true, "{cycled}");
    assert_eq!(cycled["data"]["model"]["id"], "alpha", "{cycled}");
    let set = pi
        .request(json!({"id": "2", "type": "set_model", "provider": "faux", "modelId": "deep"}))
        .await;
    assert_eq!(set["success"], true, "{set}");
    // Choosing the model already in use is no change: nothing is announced.
    let again = pi
        .request(json!({"id": "4", "type": "set_model", "provider": "faux", "modelId": "deep"}))
        .await;
    assert_eq!(again["success"], true, "{again}");
    let level = pi
        .request(json!({"id": "3", "type": "set_thinking_level", "level": "medium"}))
        .await;
    assert_eq!(level["success"], true, "{level}");
    assert_eq!(pi.close().await, Some(0), "{}", pi.tail());

    let selects = recorded_events(&agent, "watcher", "model_select");
    let seen: Vec<(Value, Value, Value)> = selects
        .iter()
        .map(|e| {
            let p = &e["payload"];
            (
                p["source"].clone(),
                p["previous_model"]["id"].clone(),
                p["model"]["id"].clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (json!("cycle"), json!("faux-1"), json!("alpha")),
            (json!("set"), json!("alpha"), json!("deep")),
        ],
        "{selects:#?}"
    );
    let levels = recorded_events(&agent, "watcher", "thinking_level_select");
    assert_eq!(
        levels.last().expect("a level event")["payload"],
        json!({"level": "medium", "previous_level": "off"})
    );
}
