//! The hook fault matrix (SPEC 11): a `tool_call` gate hook that misbehaves in every way the
//! protocol anticipates. For each fault the run goes on to the model's final answer, the gated
//! `bash` call never runs (it would create a marker file), the user is told which hook failed
//! and how (`hook_error` in JSON mode, stderr in print mode), and no process of the hook's
//! group outlives `pi`.

use std::os::unix::process::CommandExt;

use serde_json::{json, Value};

use crate::common::hooks::{
    assert_hook_gone, bash_then_final, decisions, final_text, hook_errors, run_faux, run_json,
    scripted, use_hooks,
};
use crate::common::{only_tool_end, Output, TestAgent};

const MARKER: &str = "gated-ran";

/// The `guard` gate on bash, behaving as `on_tool_call` on its `tool_call` event; `tweak`
/// may adjust the settings entry.
fn guard(agent: &TestAgent, on_tool_call: Value, tweak: impl FnOnce(&mut Value)) -> Value {
    let mut entry = scripted(
        agent,
        "guard",
        json!({"subscriptions": [{"event": "tool_call", "tools": ["bash"]}],
               "on": {"tool_call": on_tool_call}}),
    );
    tweak(&mut entry);
    entry
}

async fn run_gated(agent: &TestAgent, entry: Value) -> (Output, Vec<Value>) {
    use_hooks(agent, vec![entry]);
    run_json(agent, bash_then_final(&format!("touch {MARKER}")), &[]).await
}

/// The run finished normally, the gated call did not run and the model got the fail-closed
/// result, the user got a `hook_error` of `kind` naming the hook, and no process is left.
#[track_caller]
fn assert_failed_closed(agent: &TestAgent, out: &Output, events: &[Value], kind: &str) {
    out.assert_ok();
    assert_eq!(final_text(events), "final text", "{out}");
    assert!(
        !agent.cwd.join(MARKER).exists(),
        "the gated call ran although its gate failed\n{out}"
    );
    let end = only_tool_end(out);
    assert!(end.is_error, "{out}");
    assert!(
        end.text.starts_with("Blocked: hook guard failed (")
            && end
                .text
                .ends_with("and its policy fails closed, so bash did not run."),
        "unexpected result for the gated call: {:?}",
        end.text
    );
    let errors = hook_errors(events);
    assert!(
        errors
            .iter()
            .any(|e| e["hook"] == "guard" && e["event"] == "tool_call" && e["kind"] == kind),
        "expected a hook_error of kind {kind} for guard on tool_call, got {errors:?}"
    );
    let d = decisions(events, "tool_call");
    assert_eq!(d.len(), 1, "{out}");
    assert_eq!(d[0]["outcome"], "block");
    assert_eq!(d[0]["answers"][0]["hook"], "guard");
    assert_eq!(d[0]["answers"][0]["outcome"], "error");
    assert_hook_gone(agent, "guard");
}

/// A short reply deadline for hooks that hang.
const HANG_TIMEOUT_MS: u64 = 300;

async fn fault_fails_closed(fault: &str, kind: &str) {
    let agent = TestAgent::new();
    let entry = guard(&agent, json!({"fault": fault}), |e| {
        e["timeout_ms"] = json!(HANG_TIMEOUT_MS)
    });
    let (out, events) = run_gated(&agent, entry).await;
    assert_failed_closed(&agent, &out, &events, kind);
}

#[tokio::test]
async fn gate_hook_crashing_mid_request_fails_closed() {
    fault_fails_closed("crash", "crashed").await;
}

#[tokio::test]
async fn gate_hook_hanging_past_its_deadline_fails_closed() {
    fault_fails_closed("hang", "timeout").await;
}

#[tokio::test]
async fn gate_hook_writing_garbage_on_stdout_fails_closed() {
    fault_fails_closed("garbage", "framing").await;
}

#[tokio::test]
async fn gate_hook_sending_an_oversized_frame_length_fails_closed() {
    fault_fails_closed("oversized", "framing").await;
}

#[tokio::test]
async fn gate_hook_sending_an_invalid_json_frame_fails_closed() {
    fault_fails_closed("bad_json", "framing").await;
}

#[tokio::test]
async fn gate_hook_closing_stdout_while_alive_fails_closed() {
    fault_fails_closed("close_stdout", "crashed").await;
}

#[tokio::test]
async fn gate_hook_dying_while_a_grandchild_holds_its_pipes_fails_closed() {
    let agent = TestAgent::new();
    let (out, events) = run_gated(
        &agent,
        guard(&agent, json!({"fault": "grandchild"}), |_| {}),
    )
    .await;
    let pids = crate::common::hooks::recorded_pids(&crate::common::hooks::pidfile(&agent, "guard"));
    assert!(
        pids.len() >= 2,
        "the grandchild's pid was not recorded: {pids:?}"
    );
    assert_failed_closed(&agent, &out, &events, "crashed");
}

#[tokio::test]
async fn gate_reply_with_a_wrong_shape_fails_closed_and_names_the_field() {
    let agent = TestAgent::new();
    let (out, events) = run_gated(
        &agent,
        guard(&agent, json!({"fault": "wrong_shape"}), |_| {}),
    )
    .await;
    assert_failed_closed(&agent, &out, &events, "bad_reply");
    let e = hook_errors(&events)
        .into_iter()
        .find(|e| e["kind"] == "bad_reply")
        .expect("bad_reply");
    assert!(
        e["message"].as_str().unwrap_or_default().contains("blok"),
        "the message should name the unknown field: {e}"
    );
}

#[tokio::test]
async fn gate_hook_flooding_stderr_is_drained_and_its_error_reply_fails_closed() {
    let agent = TestAgent::new();
    // A generous deadline: the reply arrives only if the host keeps draining ~20 MB of stderr.
    let entry = guard(&agent, json!({"fault": "flood"}), |e| {
        e["timeout_ms"] = json!(30000)
    });
    let (out, events) = run_gated(&agent, entry).await;
    assert_failed_closed(&agent, &out, &events, "error_reply");
    let end = only_tool_end(&out);
    assert!(
        end.text.contains("flooded stderr, then failed"),
        "{}",
        end.text
    );
    // The flood is not copied to pi's own stderr.
    assert!(
        out.stderr.len() < 1_000_000,
        "stderr: {} bytes",
        out.stderr.len()
    );
}

#[tokio::test]
async fn gate_hook_ignoring_sigterm_is_killed_when_pi_exits() {
    let agent = TestAgent::new();
    let entry = guard(&agent, json!({"fault": "hang"}), |e| {
        e["timeout_ms"] = json!(HANG_TIMEOUT_MS);
        e["config"]["ignore_term"] = json!(true);
        e["config"]["linger"] = json!(true);
    });
    let (out, events) = run_gated(&agent, entry).await;
    assert_failed_closed(&agent, &out, &events, "timeout");
}

#[tokio::test]
async fn gate_reply_to_an_unknown_id_is_dropped_and_the_real_reply_counts() {
    let agent = TestAgent::new();
    // The stray reply says "block"; the real one (empty) allows the call.
    let (out, events) = run_gated(
        &agent,
        guard(&agent, json!({"fault": "unknown_id"}), |_| {}),
    )
    .await;
    out.assert_ok();
    assert!(
        agent.cwd.join(MARKER).exists(),
        "the allowed call did not run\n{out}"
    );
    let end = only_tool_end(&out);
    assert!(!end.is_error, "{out}");
    let d = decisions(&events, "tool_call");
    assert_eq!(d[0]["outcome"], "allow", "{out}");
    assert!(
        !hook_errors(&events)
            .iter()
            .any(|e| e["event"] == "tool_call"),
        "{out}"
    );
    assert_eq!(final_text(&events), "final text");
    assert_hook_gone(&agent, "guard");
}

#[tokio::test]
async fn gate_hook_failure_is_named_on_stderr_in_print_mode() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![guard(&agent, json!({"fault": "crash"}), |_| {})],
    );
    let out = run_faux(
        &agent,
        bash_then_final(&format!("touch {MARKER}")),
        &["-p", "go"],
    )
    .await;
    out.assert_ok();
    assert_eq!(out.stdout, "final text\n", "{out}");
    assert!(!agent.cwd.join(MARKER).exists(), "{out}");
    assert!(
        out.stderr.contains("hook guard") && out.stderr.contains("crashed"),
        "stderr does not say which hook failed and how\n{out}"
    );
    assert_hook_gone(&agent, "guard");
}

/// A settings hook that cannot start does not stop pi (the seeds load the rest); it never
/// said what it gates, so its fail-closed policy refuses every tool call.
#[track_caller]
fn assert_start_failure_fails_closed(agent: &TestAgent, out: &Output, events: &[Value]) {
    assert_failed_closed(agent, out, events, "not_running");
    assert!(
        hook_errors(events)
            .iter()
            .any(|e| e["hook"] == "guard" && e["event"] == "process"),
        "the start failure itself was not reported\n{out}"
    );
    assert!(out.stderr.contains("guard"), "{out}");
}

#[tokio::test]
async fn settings_hook_crashing_at_start_is_reported_and_its_gate_fails_closed() {
    let agent = TestAgent::new();
    let entry = guard(&agent, json!({}), |e| e["config"]["start"] = json!("crash"));
    let (out, events) = run_gated(&agent, entry).await;
    assert_start_failure_fails_closed(&agent, &out, &events);
    assert!(
        out.stderr.contains("boom: cannot load my policy file"),
        "the hook's last stderr should be shown\n{out}"
    );
}

#[tokio::test]
async fn settings_hook_never_registering_is_killed_after_its_start_deadline_and_fails_closed() {
    let agent = TestAgent::new();
    let entry = guard(&agent, json!({}), |e| {
        e["config"]["start"] = json!("no_register");
        // Long enough for Python to start and record its pid on a loaded machine, so the
        // test can check the hook was killed; far below the 5 s default it overrides.
        e["start_timeout_ms"] = json!(2500);
    });
    let (out, events) = run_gated(&agent, entry).await;
    assert_start_failure_fails_closed(&agent, &out, &events);
}

#[tokio::test]
async fn fail_open_hook_crashing_at_start_lets_the_run_continue() {
    let agent = TestAgent::new();
    let entry = guard(&agent, json!({}), |e| {
        e["config"]["start"] = json!("crash");
        e["fail"] = json!("open");
    });
    use_hooks(&agent, vec![entry]);
    let out = run_faux(
        &agent,
        bash_then_final(&format!("touch {MARKER}")),
        &["-p", "go"],
    )
    .await;
    out.assert_ok();
    assert_eq!(out.stdout, "final text\n", "{out}");
    assert!(
        out.stderr.contains("guard"),
        "the failure must still be reported\n{out}"
    );
    // Its policy is fail-open: the call it could not judge goes ahead.
    assert!(agent.cwd.join(MARKER).exists(), "{out}");
    assert_hook_gone(&agent, "guard");
}

/// The leftover-process checks used above really see a leftover process (found by its
/// process group, and by the `PI_PROJECT_DIR` the host gives every hook).
#[tokio::test]
async fn leftover_hook_process_checks_detect_a_live_process() {
    use crate::common::hooks::{hook_processes, live_group_members};
    let agent = TestAgent::new();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .env("PI_PROJECT_DIR", &agent.cwd)
        .process_group(0)
        .spawn()
        .expect("spawn sleep");
    let pid = child.id() as i32;
    let seen_in_group = live_group_members(pid).contains(&pid);
    let seen_by_env = hook_processes(&agent).contains(&pid);
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen_in_group, "a live process of the group was not found");
    assert!(
        seen_by_env,
        "a live process with the hook environment was not found"
    );
    assert!(!live_group_members(pid).contains(&pid));
}

#[tokio::test]
async fn fail_open_gate_hook_crashing_mid_request_lets_the_call_run_and_reports_it() {
    let agent = TestAgent::new();
    let entry = guard(&agent, json!({"fault": "crash"}), |e| {
        e["fail"] = json!("open")
    });
    let (out, events) = run_gated(&agent, entry).await;
    out.assert_ok();
    assert!(
        agent.cwd.join(MARKER).exists(),
        "a fail-open gate blocked the call\n{out}"
    );
    assert!(!only_tool_end(&out).is_error, "{out}");
    assert!(
        hook_errors(&events)
            .iter()
            .any(|e| e["hook"] == "guard" && e["event"] == "tool_call" && e["kind"] == "crashed"),
        "{out}"
    );
    assert_eq!(final_text(&events), "final text");
    assert_hook_gone(&agent, "guard");
}
