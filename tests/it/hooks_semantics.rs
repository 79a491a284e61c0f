//! How several hooks' answers combine, through the real `pi` binary and real hook processes
//! (the scripted test hook, configured per test through `settings.json` `hooks` entries):
//! the `tool_call` gate (load order, accumulated patches, first block wins, patches validated
//! again), the `tool_result` and `input` chains (a failing hook is skipped, `handled`
//! short-circuits), and the `turn_end` / `agent_before_settle` boundaries.

use serde_json::{json, Value};

use crate::common::hooks::{
    assert_hook_gone, bash_then_final, decisions, final_text, hook_errors, model_calls,
    recorded_events, run_faux, run_json, scripted, use_hooks,
};
use crate::common::{of_type, only_tool_end, TestAgent};

fn gate_sub() -> Value {
    json!([{"event": "tool_call", "tools": ["bash"]}])
}

fn hooks_of(decision: &Value) -> Vec<String> {
    decision["answers"]
        .as_array()
        .expect("answers")
        .iter()
        .map(|a| a["hook"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn gate_asks_hooks_in_load_order_and_each_sees_earlier_patches() {
    let agent = TestAgent::new();
    // Names sort differently from the load order, so a sorted dispatch would show.
    use_hooks(
        &agent,
        vec![
            scripted(
                &agent,
                "zeta",
                json!({"subscriptions": gate_sub(),
                "on": {"tool_call": {"reply": {"patch": {"command": "echo zeta > zeta.txt"}}}}}),
            ),
            scripted(
                &agent,
                "alpha",
                json!({"subscriptions": gate_sub(),
                "on": {"tool_call": {"reply": {"patch": {"timeout": 30}}}}}),
            ),
            scripted(&agent, "mid", json!({"subscriptions": gate_sub()})),
        ],
    );
    let (out, events) = run_json(&agent, bash_then_final("touch original-ran"), &[]).await;
    out.assert_ok();

    // The patched command ran, the model's did not.
    assert!(!agent.cwd.join("original-ran").exists(), "{out}");
    assert_eq!(agent.read_string("zeta.txt").trim(), "zeta");

    // alpha saw zeta's patch; mid saw both.
    let alpha = recorded_events(&agent, "alpha", "tool_call");
    assert_eq!(alpha.len(), 1);
    assert_eq!(
        alpha[0]["payload"]["input"],
        json!({"command": "echo zeta > zeta.txt"})
    );
    let mid = recorded_events(&agent, "mid", "tool_call");
    assert_eq!(
        mid[0]["payload"]["input"],
        json!({"command": "echo zeta > zeta.txt", "timeout": 30})
    );

    let d = decisions(&events, "tool_call");
    assert_eq!(d.len(), 1, "{out}");
    assert_eq!(hooks_of(d[0]), ["zeta", "alpha", "mid"]);
    assert_eq!(d[0]["answers"][0]["outcome"], "patch");
    assert_eq!(
        d[0]["answers"][0]["patch"],
        json!({"command": "echo zeta > zeta.txt"})
    );
    assert_eq!(d[0]["answers"][1]["patch"], json!({"timeout": 30}));
    assert_eq!(d[0]["answers"][2]["outcome"], "allow");
    assert_eq!(d[0]["outcome"], "patched", "{}", d[0]);
    assert_eq!(final_text(&events), "final text");
    for h in ["zeta", "alpha", "mid"] {
        assert_hook_gone(&agent, h);
    }
}

#[tokio::test]
async fn first_gate_block_wins_and_later_hooks_are_not_asked() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![
            scripted(&agent, "first", json!({"subscriptions": gate_sub()})),
            scripted(
                &agent,
                "blocker",
                json!({"subscriptions": gate_sub(),
                "on": {"tool_call": {"reply": {"block": true, "reason": "not today"}}}}),
            ),
            scripted(
                &agent,
                "after",
                json!({"subscriptions": gate_sub(),
                "on": {"tool_call": {"reply": {"block": true, "reason": "after wins?"}}}}),
            ),
        ],
    );
    let (out, events) = run_json(&agent, bash_then_final("touch gated-ran"), &[]).await;
    out.assert_ok();

    assert!(
        !agent.cwd.join("gated-ran").exists(),
        "the blocked call ran\n{out}"
    );
    let end = only_tool_end(&out);
    assert!(end.is_error);
    // The model reads the hook's own reason; the decision names the hook.
    assert_eq!(end.text, "not today");
    assert!(
        recorded_events(&agent, "after", "tool_call").is_empty(),
        "a hook after the blocker was asked"
    );
    assert_eq!(recorded_events(&agent, "first", "tool_call").len(), 1);

    let d = decisions(&events, "tool_call");
    assert_eq!(hooks_of(d[0]), ["first", "blocker"]);
    assert_eq!(d[0]["outcome"], "block");
    assert_eq!(d[0]["reason"], "Blocked by hook blocker: not today");
    assert_eq!(d[0]["answers"][1]["reason"], "not today");
    assert_eq!(final_text(&events), "final text");
    for h in ["first", "blocker", "after"] {
        assert_hook_gone(&agent, h);
    }
}

#[tokio::test]
async fn valid_gate_patch_changes_what_bash_runs() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "rewriter",
            json!({"subscriptions": gate_sub(),
            "on": {"tool_call": {"reply": {"patch": {"command": "echo patched"}}}}}),
        )],
    );
    let (out, events) = run_json(&agent, bash_then_final("touch original-ran"), &[]).await;
    out.assert_ok();
    let end = only_tool_end(&out);
    assert!(!end.is_error, "{out}");
    assert_eq!(end.text.trim(), "patched");
    assert!(!agent.cwd.join("original-ran").exists());
    let d = decisions(&events, "tool_call");
    assert_eq!(d[0]["answers"][0]["hook"], "rewriter");
    assert_eq!(d[0]["answers"][0]["outcome"], "patch");
    assert_eq!(
        d[0]["answers"][0]["patch"],
        json!({"command": "echo patched"})
    );
    // The tool reports what it really ran.
    let start = of_type(&events, "tool_execution_start")[0];
    assert_eq!(start["args"]["command"], "touch original-ran");
    assert_hook_gone(&agent, "rewriter");
}

#[tokio::test]
async fn gate_patch_that_breaks_the_schema_blocks_the_call_naming_the_hook() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "breaker",
            json!({"subscriptions": gate_sub(),
            "on": {"tool_call": {"reply": {"patch": {"command": 42}}}}}),
        )],
    );
    let (out, events) = run_json(&agent, bash_then_final("touch original-ran"), &[]).await;
    out.assert_ok();
    assert!(!agent.cwd.join("original-ran").exists(), "{out}");
    let end = only_tool_end(&out);
    assert!(end.is_error);
    assert!(
        end.text
            .starts_with("Blocked: arguments patched by hook breaker are invalid: "),
        "{}",
        end.text
    );
    let d = decisions(&events, "tool_call");
    assert_eq!(d[0]["answers"][0]["patch"], json!({"command": 42}));
    assert_eq!(d[0]["outcome"], "block");
    assert!(
        d[0]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("breaker"),
        "{}",
        d[0]
    );
    assert_eq!(final_text(&events), "final text");
    assert_hook_gone(&agent, "breaker");
}

#[tokio::test]
async fn crashing_tool_result_hook_is_skipped_and_the_chain_keeps_earlier_changes() {
    let agent = TestAgent::new();
    let sub = json!([{"event": "tool_result", "tools": ["bash"]}]);
    use_hooks(
        &agent,
        vec![
            scripted(
                &agent,
                "annotate-a",
                json!({"subscriptions": sub,
                "on": {"tool_result": {"append": "[seen by a]"}}}),
            ),
            scripted(
                &agent,
                "crasher",
                json!({"subscriptions": sub,
                "on": {"tool_result": {"fault": "crash"}}}),
            ),
            scripted(
                &agent,
                "annotate-c",
                json!({"subscriptions": sub,
                "on": {"tool_result": {"append": "[seen by c]"}}}),
            ),
        ],
    );
    let (out, events) = run_json(&agent, bash_then_final("echo tool-output"), &[]).await;
    out.assert_ok();

    let end = only_tool_end(&out);
    assert!(!end.is_error, "{out}");
    assert_eq!(
        end.text
            .lines()
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>(),
        ["tool-output", "[seen by a]", "[seen by c]"],
        "{out}"
    );
    // c received a's change: the accumulated value, not the original.
    let c = recorded_events(&agent, "annotate-c", "tool_result");
    assert_eq!(c[0]["payload"]["content"].as_array().map(Vec::len), Some(2));

    let errors = hook_errors(&events);
    assert!(
        errors.iter().any(|e| e["hook"] == "crasher"
            && e["event"] == "tool_result"
            && e["kind"] == "crashed"),
        "no hook_error for the crashing hook\n{out}"
    );
    let d = decisions(&events, "tool_result");
    assert_eq!(hooks_of(d[0]), ["annotate-a", "crasher", "annotate-c"]);
    assert_eq!(d[0]["answers"][1]["outcome"], "error");
    assert_eq!(final_text(&events), "final text");
    for h in ["annotate-a", "crasher", "annotate-c"] {
        assert_hook_gone(&agent, h);
    }
}

#[tokio::test]
async fn failing_input_hook_is_skipped_and_transforms_accumulate() {
    let agent = TestAgent::new();
    let sub = json!([{"event": "input"}]);
    use_hooks(
        &agent,
        vec![
            scripted(
                &agent,
                "plus-a",
                json!({"subscriptions": sub, "on": {"input": {"append": " +a"}}}),
            ),
            scripted(
                &agent,
                "refuser",
                json!({"subscriptions": sub, "on": {"input": {"error": "no thanks"}}}),
            ),
            scripted(
                &agent,
                "plus-c",
                json!({"subscriptions": sub, "on": {"input": {"append": " +c"}}}),
            ),
        ],
    );
    let (out, events) = run_json(&agent, json!(["final text"]), &[]).await;
    out.assert_ok();

    let user = of_type(&events, "message_end")
        .into_iter()
        .find(|e| e["message"]["role"] == "user")
        .expect("user message");
    assert_eq!(user["message"]["content"][0]["text"], "go +a +c", "{out}");
    assert_eq!(
        recorded_events(&agent, "plus-c", "input")[0]["payload"]["text"],
        "go +a"
    );
    assert!(
        hook_errors(&events).iter().any(|e| e["hook"] == "refuser"
            && e["event"] == "input"
            && e["kind"] == "error_reply"
            && e["message"]
                .as_str()
                .unwrap_or_default()
                .contains("no thanks")),
        "{out}"
    );
    assert_eq!(final_text(&events), "final text");
    for h in ["plus-a", "refuser", "plus-c"] {
        assert_hook_gone(&agent, h);
    }
}

#[tokio::test]
async fn input_handled_by_a_hook_makes_no_model_call_and_later_hooks_are_not_asked() {
    let agent = TestAgent::new();
    let sub = json!([{"event": "input"}]);
    use_hooks(
        &agent,
        vec![
            scripted(
                &agent,
                "handler",
                json!({"subscriptions": sub,
                "on": {"input": {"reply": {"action": "handled"}}}}),
            ),
            scripted(&agent, "later", json!({"subscriptions": sub})),
        ],
    );
    // No faux steps at all: a model call would fail the run.
    let (out, events) = run_json(&agent, json!([]), &[]).await;
    out.assert_ok();
    assert_eq!(model_calls(&events), 0, "{out}");
    assert!(of_type(&events, "turn_start").is_empty(), "{out}");
    assert!(recorded_events(&agent, "later", "input").is_empty());
    let d = decisions(&events, "input");
    assert_eq!(d[0]["outcome"], "handled", "{out}");

    // Print mode too: nothing printed, exit 0.
    let out = run_faux(&agent, json!([]), &["-p", "go"]).await;
    out.assert_ok();
    assert!(out.stdout.trim().is_empty(), "{out}");
    for h in ["handler", "later"] {
        assert_hook_gone(&agent, h);
    }
}

#[tokio::test]
async fn turn_end_continue_from_a_hook_runs_one_more_model_turn() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![
            scripted(
                &agent,
                "quiet",
                json!({"subscriptions": [{"event": "turn_end"}]}),
            ),
            scripted(
                &agent,
                "nudger",
                json!({"subscriptions": [{"event": "turn_end"}],
                "on": {"turn_end": [
                    {"reply": {"continue": true, "messages": [
                        {"custom_type": "nudge", "content": "keep going", "display": true}]}},
                    {"reply": {}}
                ]}}),
            ),
        ],
    );
    let (out, events) = run_json(&agent, json!(["first answer", "second answer"]), &[]).await;
    out.assert_ok();
    assert_eq!(model_calls(&events), 2, "{out}");
    assert_eq!(final_text(&events), "second answer");
    let seen = recorded_events(&agent, "nudger", "turn_end");
    assert_eq!(seen.len(), 2, "one turn_end per turn");
    // The later hook saw the proposal so far (nothing from "quiet").
    assert_eq!(seen[0]["payload"]["proposal"]["continue"], false);

    // Without the nudge the run stops after one turn.
    let plain = TestAgent::new();
    let (out, events) = run_json(&plain, json!(["first answer", "second answer"]), &[]).await;
    out.assert_ok();
    assert_eq!(model_calls(&events), 1);
    for h in ["quiet", "nudger"] {
        assert_hook_gone(&agent, h);
    }
}

#[tokio::test]
async fn agent_before_settle_continue_from_a_hook_runs_one_more_model_turn() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "settler",
            json!({"subscriptions": [{"event": "agent_before_settle"}],
            "on": {"agent_before_settle": [
                {"reply": {"continue": true, "messages": [
                    {"custom_type": "lint", "content": "2 lint errors remain", "display": true}]}},
                {"reply": {}}
            ]}}),
        )],
    );
    let (out, events) = run_json(&agent, json!(["first answer", "second answer"]), &[]).await;
    out.assert_ok();
    assert_eq!(model_calls(&events), 2, "{out}");
    assert_eq!(final_text(&events), "second answer");
    assert_eq!(
        recorded_events(&agent, "settler", "agent_before_settle").len(),
        2
    );
    assert_hook_gone(&agent, "settler");
}

#[tokio::test]
async fn shadow_mode_gate_reports_would_block_and_would_patch_without_applying_them() {
    let agent = TestAgent::new();
    let mut blocker = scripted(
        &agent,
        "shadow-block",
        json!({"subscriptions": gate_sub(),
        "on": {"tool_call": {"reply": {"block": true, "reason": "new rule"}}}}),
    );
    blocker["mode"] = json!("shadow");
    let mut patcher = scripted(
        &agent,
        "shadow-patch",
        json!({"subscriptions": gate_sub(),
        "on": {"tool_call": {"reply": {"patch": {"command": "echo shadow > shadow-ran"}}}}}),
    );
    patcher["mode"] = json!("shadow");
    let watcher = scripted(&agent, "watcher", json!({"subscriptions": gate_sub()}));
    use_hooks(&agent, vec![patcher, blocker, watcher]);
    let (out, events) = run_json(&agent, bash_then_final("touch original-ran"), &[]).await;
    out.assert_ok();
    assert!(
        agent.cwd.join("original-ran").exists(),
        "a shadow hook changed the call\n{out}"
    );
    assert!(!agent.cwd.join("shadow-ran").exists());
    // A later hook does not see a shadow patch.
    assert_eq!(
        recorded_events(&agent, "watcher", "tool_call")[0]["payload"]["input"],
        json!({"command": "touch original-ran"})
    );
    let d = decisions(&events, "tool_call");
    assert_eq!(d[0]["answers"][0]["outcome"], "would_patch", "{}", d[0]);
    assert_eq!(d[0]["answers"][1]["outcome"], "would_block", "{}", d[0]);
    assert_eq!(d[0]["answers"][1]["reason"], "new rule");
    assert_eq!(d[0]["outcome"], "allow", "{}", d[0]);
    for h in ["shadow-block", "shadow-patch", "watcher"] {
        assert_hook_gone(&agent, h);
    }
}
