//! Signals during a run: SIGTERM and SIGINT end `pi` with pi's exit codes (143 / 130) after
//! killing the running bash process tree, so nothing outlives it.

use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::json;

use crate::common::{kill_group, process_gone, read_pid, wait_until, TestAgent, RUN_TIMEOUT};

/// Start a print run whose bash tool runs a long `sleep` (pids written to files), wait until
/// the command is running, send `signal` to `pi`, and return (exit code, bash pid, sleep pid).
async fn interrupt_long_bash(signal: Signal) -> (Option<i32>, i32, i32, String) {
    let agent = TestAgent::new();
    let command =
        "echo $$ > bash.pid; sleep 60 & echo $! > sleep.tmp && mv sleep.tmp sleep.pid; wait";
    let mut args = agent.faux_args(json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]},
        "should not be reached"
    ]));
    args.extend(["-p".to_string(), "start a long command".to_string()]);
    let child = agent.command(&args).spawn().expect("spawn pi");
    let pi = child.id().expect("pid") as i32;

    let sleep_pid = read_pid(&agent.cwd.join("sleep.pid"));
    let bash_pid = read_pid(&agent.cwd.join("bash.pid"));
    kill(Pid::from_raw(pi), signal).expect("signal pi");

    let status = match tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output()).await {
        Ok(out) => out.expect("wait"),
        Err(_) => {
            kill_group(pi);
            panic!("pi did not exit after {signal}");
        }
    };
    let stderr = String::from_utf8_lossy(&status.stderr).into_owned();
    (status.status.code(), bash_pid, sleep_pid, stderr)
}

#[tokio::test]
async fn sigterm_exits_143_and_kills_running_bash_tree() {
    let (code, bash, sleep, stderr) = interrupt_long_bash(Signal::SIGTERM).await;
    assert_eq!(code, Some(143), "stderr: {stderr}");
    assert!(
        wait_until(Duration::from_secs(5), || process_gone(bash)),
        "bash {bash} survived SIGTERM"
    );
    assert!(
        wait_until(Duration::from_secs(5), || process_gone(sleep)),
        "sleep {sleep} survived SIGTERM"
    );
}

#[tokio::test]
async fn sigint_exits_130_and_kills_running_bash_tree() {
    let (code, bash, sleep, stderr) = interrupt_long_bash(Signal::SIGINT).await;
    assert_eq!(code, Some(130), "stderr: {stderr}");
    assert!(
        wait_until(Duration::from_secs(5), || process_gone(bash)),
        "bash {bash} survived SIGINT"
    );
    assert!(
        wait_until(Duration::from_secs(5), || process_gone(sleep)),
        "sleep {sleep} survived SIGINT"
    );
}

/// SPEC §4.6: no hook outlives `pi` — even when `pi` is killed with SIGKILL, so no shutdown
/// code runs, the kernel takes its hooks down with it.
#[tokio::test]
async fn hooks_die_with_pi_even_when_it_is_killed_outright() {
    use crate::common::hooks::{pidfile, recorded_pids, scripted, use_hooks};
    let agent = TestAgent::new();
    let started = agent.cwd.join("gate-asked");
    let hook = scripted(
        &agent,
        "stuck",
        // `linger`: it ignores stdin EOF and SIGTERM, so only the kernel's kill can end it.
        json!({"subscriptions": [{"event": "tool_call"}], "linger": true, "ignore_term": true,
               "on": {"tool_call": {"touch": started.display().to_string(), "fault": "hang"}}}),
    );
    let mut hook = hook;
    hook["timeout_ms"] = json!(60_000);
    use_hooks(&agent, vec![hook]);
    let mut args = agent.faux_args(json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": "true"}}]},
        "unreachable"
    ]));
    args.extend(["-p".to_string(), "go".to_string()]);
    let mut child = agent.command(&args).spawn().expect("spawn pi");
    let pi = child.id().expect("pid") as i32;
    assert!(
        wait_until(Duration::from_secs(20), || started.exists()),
        "the hook never got the tool_call"
    );
    let pids = recorded_pids(&pidfile(&agent, "stuck"));
    assert!(!pids.is_empty());
    kill(Pid::from_raw(pi), Signal::SIGKILL).expect("kill -9 pi");
    let _ = child.wait().await;
    for (pid, _) in &pids {
        let gone = wait_until(Duration::from_secs(5), || process_gone(*pid));
        if !gone {
            kill_group(*pid);
        }
        assert!(gone, "hook process {pid} outlived a SIGKILLed pi");
    }
}

/// A `tool_result` hook (a redactor, say) that the abort keeps from answering must not let the
/// raw output through: the result reaches the session as withheld, not as the tool printed it.
/// (Before, the chain ended with the value built so far: the unredacted output.)
#[tokio::test]
async fn output_a_tool_result_hook_never_saw_is_withheld_when_the_run_is_aborted() {
    use crate::common::hooks::{scripted, use_hooks};
    let agent = TestAgent::new();
    let asked = agent.cwd.join("redactor-asked");
    let hook = scripted(
        &agent,
        "redactor",
        json!({"subscriptions": [{"event": "tool_result", "tools": ["bash"]}],
               "on": {"tool_result": {"touch": asked.display().to_string(), "fault": "hang"}}}),
    );
    let mut hook = hook;
    hook["timeout_ms"] = json!(60_000);
    use_hooks(&agent, vec![hook]);
    let mut args = agent.faux_args(json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo SECRET-TOKEN-$((4700 + 11))"}}]},
        "unreachable"
    ]));
    args.extend(["-p".to_string(), "go".to_string()]);
    let mut child = agent.command(&args).spawn().expect("spawn pi");
    let pi = child.id().expect("pid") as i32;
    assert!(
        wait_until(Duration::from_secs(20), || asked.exists()),
        "the redactor never got the tool_result"
    );
    kill(Pid::from_raw(pi), Signal::SIGINT).expect("SIGINT pi");
    let status = tokio::time::timeout(RUN_TIMEOUT, child.wait())
        .await
        .expect("pi did not exit after SIGINT")
        .expect("wait for pi");
    assert_eq!(status.code(), Some(130));
    let file = crate::sessions::only_session_file(&agent);
    let saved = std::fs::read_to_string(&file).expect("read the session");
    assert!(
        !saved.contains("SECRET-TOKEN-4711"),
        "raw output saved:\n{saved}"
    );
    assert!(saved.contains("output withheld"), "{saved}");
}
