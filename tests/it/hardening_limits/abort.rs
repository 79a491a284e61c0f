//! Item 5: an abort or a signal ends every wait on a hook at once (the hook gets `cancel`),
//! pi exits with 130/143 promptly, a second signal forces the exit without leaving a process
//! behind, and no deadline a hook asks for — `session_shutdown`, a tool's run — is honoured
//! past the host's caps.

use std::time::Instant;

use nix::sys::signal::Signal;
use serde_json::{json, Value};

use super::*;

/// A gate that never answers (its deadline is 60 s); `signal` arrives while pi waits on it.
async fn signal_while_a_gate_hangs(signal: Signal, code: i32) {
    let agent = TestAgent::new();
    let asked = agent.tmp.join("gate-asked");
    let mut gate = scripted(
        &agent,
        "gate",
        json!({"subscriptions": gate_on_bash(),
               "on": {"tool_call": {"touch": path_str(&asked), "fault": "hang"}}}),
    );
    gate["timeout_ms"] = json!(60_000);
    use_hooks(&agent, vec![gate]);
    let pi = Running::start(&agent, bash_then_final("touch tool-ran"), &["-p", "go"]);
    wait_for_file(&asked, "the gate never got the tool call");
    let signalled = Instant::now();
    pi.signal(signal);
    let (out, _) = pi.finish().await;
    let took = signalled.elapsed();
    out.assert_code(code);
    assert!(
        took < PROMPT,
        "pi waited {took:?} for a hanging gate after {signal}\n{out}"
    );
    let id = only_request_id(&agent, "gate", "tool_call");
    assert!(
        cancels(&agent, "gate").contains(&id),
        "the gate never got `cancel` for its tool_call {id}: {:?}\n{out}",
        recorded(&agent, "gate")
    );
    assert!(
        !agent.cwd.join("tool-ran").exists(),
        "the gated tool ran\n{out}"
    );
    assert!(!out.stdout.contains("final text"), "{out}");
    assert_hook_gone(&agent, "gate");
}

#[tokio::test]
async fn sigterm_while_a_gate_hangs_cancels_it_and_exits_143_at_once() {
    signal_while_a_gate_hangs(Signal::SIGTERM, 143).await;
}

#[tokio::test]
async fn sigint_while_a_gate_hangs_cancels_it_and_exits_130_at_once() {
    signal_while_a_gate_hangs(Signal::SIGINT, 130).await;
}

/// `agent.abort` from a hook while pi waits on another hook's `tool_result` reply: the chain
/// ends at once, the waiting hook gets `cancel`, and the run ends aborted. The result is
/// withheld (the hook that never answered may have had to redact it); the first hook's
/// answer is still reported.
#[tokio::test]
async fn abort_during_a_chain_request_withholds_the_result_and_cancels_the_request() {
    let agent = TestAgent::new();
    let tool_result = json!([{"event": "tool_result"}]);
    let first = scripted(
        &agent,
        "first",
        json!({"subscriptions": tool_result, "on": {"tool_result": {"append": "[first]"}}}),
    );
    let mut stopper = scripted(
        &agent,
        "stopper",
        json!({"subscriptions": tool_result,
               "on": {"tool_result": {"call": {"method": "agent.abort"}, "fault": "hang"}}}),
    );
    stopper["timeout_ms"] = json!(60_000);
    use_hooks(&agent, vec![first, stopper]);
    let started = Instant::now();
    let out = run_pi(
        &agent,
        &[
            agent.faux_args(bash_then_final("echo hello")),
            vec![
                "--mode".into(),
                "json".into(),
                "--hook-events".into(),
                "go".into(),
            ],
        ]
        .concat(),
    )
    .await;
    let took = started.elapsed();
    assert!(
        took < PROMPT,
        "the chain waited {took:?} after the abort\n{out}"
    );
    out.assert_code(1);
    assert!(out.stderr.contains("aborted"), "{out}");
    let end = only_tool_end(&out);
    assert!(
        !end.text.contains("hello") && end.text.contains("output withheld"),
        "output a hook never saw was let through: {:?}\n{out}",
        end.text
    );
    let events = out.events();
    let chain = decisions(&events, "tool_result");
    assert_eq!(chain.len(), 1, "{out}");
    assert_eq!(chain[0]["answers"][0]["outcome"], "patch", "{out}");
    assert_eq!(chain[0]["answers"][1]["hook"], "stopper", "{out}");
    assert!(
        chain[0]["answers"][1]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("aborted")),
        "{out}"
    );
    let id = only_request_id(&agent, "stopper", "tool_result");
    assert!(
        cancels(&agent, "stopper").contains(&id),
        "the waiting hook never got `cancel` for request {id}\n{out}"
    );
    assert_ne!(final_text(&events), "final text", "{out}");
    for h in ["first", "stopper"] {
        assert_hook_gone(&agent, h);
    }
}

/// Two signals: the second ends pi at once — and even then no hook process is left, not the
/// hook (which ignores SIGTERM and stdin EOF) nor the grandchild it started in its group.
#[tokio::test]
async fn a_second_signal_forces_exit_and_still_kills_every_hook_process() {
    let agent = TestAgent::new();
    let asked = agent.tmp.join("gate-asked");
    let mut gate = scripted(
        &agent,
        "gate",
        json!({"subscriptions": gate_on_bash(), "linger": true, "ignore_term": true,
               "on": {"tool_call": {"spawn": true, "touch": path_str(&asked), "fault": "hang"}}}),
    );
    gate["timeout_ms"] = json!(60_000);
    use_hooks(&agent, vec![gate]);
    let pi = Running::start(&agent, bash_then_final("touch tool-ran"), &["-p", "go"]);
    wait_for_file(&asked, "the gate never got the tool call");
    let signalled = Instant::now();
    // Two different signals, so neither can be merged into the other.
    pi.signal(Signal::SIGTERM);
    pi.signal(Signal::SIGINT);
    let (out, _) = pi.finish().await;
    assert!(signalled.elapsed() < PROMPT, "{out}");
    assert!(
        matches!(out.code, Some(130 | 143)),
        "unexpected exit status\n{out}"
    );
    assert!(!agent.cwd.join("tool-ran").exists(), "{out}");
    assert_hook_gone(&agent, "gate");
}

/// SIGTERM while a hook's `/command` hangs: the command is cancelled and pi exits at once.
#[tokio::test]
async fn sigterm_while_a_hook_command_hangs_cancels_it_and_exits_143() {
    let agent = TestAgent::new();
    let asked = agent.tmp.join("command-asked");
    let mut hook = scripted(
        &agent,
        "cmds",
        json!({"commands": [{"name": "slow", "description": "Never ends."}],
               "command": {"slow": {"touch": path_str(&asked), "fault": "hang"}}}),
    );
    hook["timeout_ms"] = json!(60_000);
    use_hooks(&agent, vec![hook]);
    let pi = Running::start(&agent, json!(["unused"]), &["-p", "/slow now"]);
    wait_for_file(&asked, "the hook never got the command");
    let signalled = Instant::now();
    pi.signal(Signal::SIGTERM);
    let (out, _) = pi.finish().await;
    out.assert_code(143);
    assert!(signalled.elapsed() < PROMPT, "{out}");
    let id = recorded(&agent, "cmds")
        .iter()
        .find(|m| m["type"] == "command")
        .and_then(|m| m["id"].as_u64())
        .expect("the command was recorded");
    assert!(cancels(&agent, "cmds").contains(&id), "{out}");
    assert_hook_gone(&agent, "cmds");
}

/// A `session_shutdown` subscriber that asks for 60 s and never answers delays a normal exit
/// by at most the shutdown grace, and is cancelled.
#[tokio::test]
async fn a_hanging_session_shutdown_cannot_delay_exit_past_the_grace() {
    let agent = TestAgent::new();
    let mut hook = scripted(
        &agent,
        "lingering",
        json!({"subscriptions": [{"event": "session_shutdown", "deadline_ms": 60_000}],
               "on": {"session_shutdown": {"fault": "hang"}}}),
    );
    hook["timeout_ms"] = json!(60_000);
    use_hooks(&agent, vec![hook]);
    let started = Instant::now();
    let out = run_pi(
        &agent,
        &[
            agent.faux_args(json!(["final text"])),
            vec!["-p".into(), "go".into()],
        ]
        .concat(),
    )
    .await;
    out.assert_ok();
    assert!(out.stdout.contains("final text"), "{out}");
    assert!(started.elapsed() < PROMPT, "{out}");
    let id = only_request_id(&agent, "lingering", "session_shutdown");
    assert!(cancels(&agent, "lingering").contains(&id), "{out}");
    assert_hook_gone(&agent, "lingering");
}

/// A hook tool that never answers is cancelled when the host's cap on tool execution passes
/// (lowered here through `PI_HOOK_TOOL_TIMEOUT_MS`), and the tool's `deadline_ms` says so.
#[tokio::test]
async fn a_hook_tool_that_never_answers_is_cancelled_at_the_tool_cap() {
    let mut agent = TestAgent::new();
    agent.env("PI_HOOK_TOOL_TIMEOUT_MS", "1500");
    let cancelled = agent.tmp.join("tool-cancelled");
    let tool = json!({"name": "slow", "description": "Never finishes.",
                      "parameters": {"type": "object"}});
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "toolbox",
            json!({"tools": [tool],
                   "tool": {"slow": {"on_cancel_touch": path_str(&cancelled)}}}),
        )],
    );
    let steps = json!([
        {"toolCalls": [{"name": "slow", "arguments": {}, "id": "call-slow"}]},
        "final text"
    ]);
    let out = run_pi(
        &agent,
        &[
            agent.faux_args(steps),
            vec![
                "--mode".into(),
                "json".into(),
                "--hook-events".into(),
                "go".into(),
            ],
        ]
        .concat(),
    )
    .await;
    out.assert_ok();
    let end = only_tool_end(&out);
    assert!(end.is_error, "{out}");
    assert!(
        end.text.contains("toolbox") && end.text.contains("1500 ms"),
        "the error should name the hook and the cap: {:?}",
        end.text
    );
    assert_eq!(final_text(&out.events()), "final text", "{out}");
    let executes: Vec<Value> = recorded(&agent, "toolbox")
        .into_iter()
        .filter(|m| m["type"] == "tool_execute")
        .collect();
    assert_eq!(executes.len(), 1, "{out}");
    assert_eq!(executes[0]["deadline_ms"], 1500, "{out}");
    assert!(
        wait_until(Duration::from_secs(5), || cancelled.exists()),
        "the tool never got `cancel`\n{out}"
    );
    assert_hook_gone(&agent, "toolbox");
}
