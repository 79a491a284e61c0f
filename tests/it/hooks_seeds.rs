//! Where pi's extension host follows the seeds' semantics rather than its earlier guesses,
//! through the real `pi` binary and real hook processes (the scripted test hook): which
//! events a call that never ran reaches, the order of the provider request hooks, the real
//! `input.source`, and which hooks that cannot start stop pi.

use serde_json::{json, Value};

use crate::common::hooks::{
    assert_hook_gone, bash_then_final, final_text, fixture, hook_errors, recorded, recorded_events,
    run_json, run_pi, scripted, use_hooks,
};
use crate::common::{blocks_text, of_type, tool_ends, MockModel, TestAgent, Turn};

fn ids(events: &[Value], field: &str) -> Vec<String> {
    events
        .iter()
        .map(|e| e["payload"][field].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn tool_result_hooks_do_not_see_blocked_unknown_or_invalid_calls() {
    let agent = TestAgent::new();
    let all = json!(["*"]);
    use_hooks(
        &agent,
        vec![
            scripted(
                &agent,
                "gate",
                json!({"subscriptions": [{"event": "tool_call", "tools": ["bash"]}],
                // The gate sees only calls that passed validation: the blocked one, then the
                // one that runs.
                "on": {"tool_call": [{"reply": {"block": true, "reason": "not this one"}},
                                     {"reply": {}}]}}),
            ),
            scripted(
                &agent,
                "observer",
                json!({"subscriptions": [{"event": "tool_result", "tools": all},
                                         {"event": "tool_execution_end", "tools": all}]}),
            ),
        ],
    );
    let steps = json!([
        {"toolCalls": [
            {"name": "bash", "arguments": {"command": "touch blocked-ran"}, "id": "blocked"},
            {"name": "no_such_tool", "arguments": {}, "id": "unknown"},
            {"name": "bash", "arguments": {"command": 42}, "id": "invalid"},
            {"name": "bash", "arguments": {"command": "echo ran"}, "id": "ran"}
        ]},
        "final text"
    ]);
    let (out, events) = run_json(&agent, steps, &[]).await;
    out.assert_ok();
    assert!(!agent.cwd.join("blocked-ran").exists(), "{out}");

    let ends = tool_ends(&events);
    let errors: Vec<(&str, bool)> = ends.iter().map(|e| (e.id.as_str(), e.is_error)).collect();
    for (id, is_error) in [
        ("blocked", true),
        ("unknown", true),
        ("invalid", true),
        ("ran", false),
    ] {
        assert!(errors.contains(&(id, is_error)), "{id}: {errors:?}\n{out}");
    }
    assert_eq!(
        ids(
            &recorded_events(&agent, "observer", "tool_result"),
            "tool_call_id"
        ),
        ["ran"],
        "only the call that ran goes through tool_result\n{out}"
    );
    let mut seen = ids(
        &recorded_events(&agent, "observer", "tool_execution_end"),
        "tool_call_id",
    );
    seen.sort();
    assert_eq!(seen, ["blocked", "invalid", "ran", "unknown"], "{out}");
    for h in ["gate", "observer"] {
        assert_hook_gone(&agent, h);
    }
}

#[tokio::test]
async fn before_provider_headers_runs_before_before_provider_request() {
    let mock = MockModel::start(vec![Turn::text("one"), Turn::text("two")]).await;
    let agent = TestAgent::with_mock(&mock);
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "order",
            json!({"subscriptions": [{"event": "before_provider_request"},
                                     {"event": "before_provider_headers"}],
                   "on": {"before_provider_headers": {"reply": {"headers": {"x-seen": "1"}}},
                          "before_provider_request": {"reply": {}}}}),
        )],
    );
    for model in ["mock/mock-model", "mock-anthropic/mock-claude"] {
        run_pi(&agent, &["--model", model, "-p", "hi"])
            .await
            .assert_ok();
    }
    let order: Vec<String> = recorded(&agent, "order")
        .iter()
        .filter(|m| m["type"] == "event")
        .filter_map(|m| m["name"].as_str())
        .filter(|n| n.starts_with("before_provider_"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        order,
        [
            "before_provider_headers",
            "before_provider_request",
            "before_provider_headers",
            "before_provider_request"
        ]
    );
    // Both replies were applied to the requests the server got.
    for r in mock.requests() {
        assert_eq!(r.headers["x-seen"], "1");
    }
    assert_eq!(mock.requests().len(), 2);
    assert_hook_gone(&agent, "order");
}

/// The `source` of every `input` event the scripted hook `name` was asked, in order.
fn input_sources(agent: &TestAgent, name: &str) -> Vec<String> {
    ids(&recorded_events(agent, name, "input"), "source")
}

#[tokio::test]
async fn input_source_names_the_front_end_or_the_hook_that_sent_the_message() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![
            scripted(
                &agent,
                "observer",
                json!({"subscriptions": [{"event": "input"}],
                       "on": {"input": {"append": " +seen"}}}),
            ),
            // Its `/op METHOD JSON` command makes a host call and waits for the answer.
            json!({"command": format!("python3 {}", fixture("session_ops.py")),
                   "name": "sender", "timeout_ms": 20000}),
        ],
    );

    run_pi(
        &agent,
        &[
            &agent.faux_args(json!(["ok"]))[..],
            &["-p".into(), "hi".into()],
        ]
        .concat(),
    )
    .await
    .assert_ok();
    assert_eq!(input_sources(&agent, "observer"), ["print"]);

    // JSON mode counts as print; a user message a hook sends is `extension`, goes through
    // the same chain, and (sent while idle) starts a run with the message the chain made.
    let send = r#"/op message.send_user {"content": "from the hook"}"#;
    let args = [
        &agent.faux_args(json!(["first", "second"]))[..],
        &["--mode".into(), "json".into(), send.into(), "go".into()],
    ]
    .concat();
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    assert_eq!(
        input_sources(&agent, "observer"),
        ["print", "extension", "print"],
        "{out}"
    );
    let users: Vec<String> = of_type(&out.events(), "message_end")
        .into_iter()
        .filter(|e| e["message"]["role"] == "user")
        .map(|e| blocks_text(&e["message"]["content"]))
        .collect();
    assert_eq!(users, ["from the hook +seen", "go +seen"], "{out}");

    let mut rpc = agent.rpc(&agent.faux_args(json!(["ok"])));
    rpc.request(json!({"id": "p1", "type": "prompt", "message": "hi"}))
        .await;
    rpc.event("agent_settled").await;
    assert_eq!(rpc.close().await, Some(0), "{}", rpc.tail());
    assert_eq!(
        input_sources(&agent, "observer").last().map(String::as_str),
        Some("rpc")
    );

    let mut pi = agent.pty_faux(json!(["typed answer"]), 100, 30);
    pi.type_text("hi");
    pi.wait_editor("hi");
    pi.enter();
    pi.wait_transcript("typed answer");
    pi.quit();
    assert_eq!(
        input_sources(&agent, "observer").last().map(String::as_str),
        Some("interactive")
    );
    assert_hook_gone(&agent, "observer");
}

#[tokio::test]
async fn a_settings_hook_that_cannot_start_is_reported_the_rest_load_and_its_gates_fail_closed() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![
            scripted(&agent, "broken", json!({"start": "crash"})),
            scripted(
                &agent,
                "worker",
                json!({"subscriptions": [{"event": "input"}]}),
            ),
        ],
    );
    let (out, events) = run_json(&agent, bash_then_final("touch gated-ran"), &[]).await;
    out.assert_ok();
    let errors = hook_errors(&events);
    assert!(
        errors
            .iter()
            .any(|e| e["hook"] == "broken" && e["event"] == "process" && e["kind"] == "start_failed"),
        "no hook_error (kind start_failed, snake_case like every kind) for the hook that did not start\n{out}"
    );
    assert!(
        out.stderr.contains("Warning: hook broken ")
            && out.stderr.contains("boom: cannot load my policy file"),
        "no line on stderr names the hook and why\n{out}"
    );
    // The rest loaded: the other hook was asked.
    assert_eq!(input_sources(&agent, "worker"), ["print"], "{out}");
    // Its gates fail closed: it never said which calls it gates, so none runs.
    assert!(!agent.cwd.join("gated-ran").exists(), "{out}");
    let end = &tool_ends(&events)[0];
    assert!(end.is_error);
    assert!(
        end.text
            .starts_with("Blocked: hook broken failed (it did not start: ")
            && end
                .text
                .ends_with("its policy fails closed, so bash did not run."),
        "{}",
        end.text
    );
    assert_eq!(final_text(&events), "final text");

    let listed = run_pi(&agent, &["hooks"]).await;
    assert!(
        listed.stdout.contains("failed to start") && listed.stdout.contains("worker"),
        "{listed}"
    );
    for h in ["broken", "worker"] {
        assert_hook_gone(&agent, h);
    }
}

#[tokio::test]
async fn a_hook_named_on_the_command_line_that_cannot_start_still_stops_pi() {
    let agent = TestAgent::new();
    let hook = agent.write_file(
        "crash-hook.sh",
        "#!/bin/sh\necho 'cli hook: no config' >&2\nexit 1\n",
    );
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let hook = hook.display().to_string();
    let args = [
        &agent.faux_args(bash_then_final("touch cli-ran"))[..],
        &["--hook".into(), hook, "-p".into(), "go".into()],
    ]
    .concat();
    let out = run_pi(&agent, &args).await;
    out.assert_code(1);
    assert!(out.stdout.is_empty(), "{out}");
    assert!(out.stderr.contains("crash-hook"), "{out}");
    assert!(!agent.cwd.join("cli-ran").exists());
}
