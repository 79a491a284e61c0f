//! Issue 8, items 5 and 6: abort and signals end waits on hooks at once, deadlines hooks ask
//! for are capped, and a hook cannot exhaust pi's memory (in-flight calls, nesting, logs).
//! Issue 24, items 4, 5 and 7: a file lock a hook holds cannot outlast an abort or a signal,
//! what a hook registers or appends is bounded in size, and tool names cannot squat on the
//! built-ins or MCP's namespace.
//!
//! Every test runs the real `pi` against real hook processes: the scripted test hook, or
//! `fixtures/hooks/it/limits.py` for floods and recursion. Time bounds are generous "did not
//! wait for the hook" checks (seconds against the hook's 60 s deadline), never performance
//! targets. `abort` holds item 5 (abort, signals, capped deadlines), `memory` item 6 (call and
//! log floods, nesting); of issue 24, `file_lock` holds item 4, `sizes` item 5 (registration
//! and entry floods, streamed replay) and `names` item 7; this module the helpers they share.

mod abort;
mod file_lock;
mod memory;
mod names;
mod sizes;

use std::path::Path;
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use crate::common::hooks::{
    assert_hook_gone, bash_then_final, decisions, final_text, fixture, pidfile, record_file,
    recorded, recorded_events, run_pi, scripted, use_hooks, HOOK_RUN_TIMEOUT,
};
use crate::common::{
    kill_group, only_tool_end, path_str, tool_ends, wait_until, Output, TestAgent,
};

/// "Did not wait for the hook": far below the 60 s the hanging hooks below are allowed.
const PROMPT: Duration = Duration::from_secs(10);
/// Peak resident memory pi may reach under a flood (a normal run needs about 40 MB).
const MEMORY_BOUND_KB: u64 = 150 * 1024;
/// The documented budget of `log` frames recorded per second and hook.
const LOGS_PER_SEC: usize = 200;

/// A settings entry running `fixtures/hooks/it/limits.py` as `name` with `config`.
fn limits_hook(agent: &TestAgent, name: &str, config: Value) -> Value {
    let mut config = config;
    config["pidfile"] = json!(path_str(&pidfile(agent, name)));
    config["record"] = json!(path_str(&record_file(agent, name)));
    json!({
        "command": format!("python3 {}", fixture("limits.py")),
        "name": name,
        "config": config,
        "timeout_ms": 3000,
        "start_timeout_ms": 5000,
    })
}

fn gate_on_bash() -> Value {
    json!([{"event": "tool_call", "tools": ["bash"]}])
}

/// A `pi` process started in the background, for tests that signal it or watch its memory.
struct Running {
    child: tokio::process::Child,
    pid: i32,
    stdout: tokio::task::JoinHandle<Vec<u8>>,
    stderr: tokio::task::JoinHandle<Vec<u8>>,
}

impl Running {
    fn start(agent: &TestAgent, steps: Value, args: &[&str]) -> Running {
        let mut all = agent.faux_args(steps);
        all.extend(args.iter().map(|a| a.to_string()));
        Running::spawn(agent, all)
    }

    /// `pi ARGS` in the agent's environment (no faux script).
    fn spawn(agent: &TestAgent, args: Vec<String>) -> Running {
        use tokio::io::AsyncReadExt;
        let mut child = agent.command(&args).spawn().expect("spawn pi");
        let pid = child.id().expect("pid") as i32;
        let mut out = child.stdout.take().expect("stdout");
        let mut err = child.stderr.take().expect("stderr");
        // Read both pipes all along: a flood must never block pi on a full pipe of ours.
        let stdout = tokio::spawn(async move {
            let mut b = Vec::new();
            let _ = out.read_to_end(&mut b).await;
            b
        });
        let stderr = tokio::spawn(async move {
            let mut b = Vec::new();
            let _ = err.read_to_end(&mut b).await;
            b
        });
        Running {
            child,
            pid,
            stdout,
            stderr,
        }
    }

    fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.pid), signal).expect("signal pi");
    }

    /// Waits for `pi` to exit (killing it and failing the test if it hangs past
    /// [`HOOK_RUN_TIMEOUT`]); returns what it wrote and its peak resident memory in kB (the
    /// largest `VmHWM` seen while it ran).
    async fn finish(self) -> (Output, u64) {
        self.finish_within(HOOK_RUN_TIMEOUT).await
    }

    /// [`finish`](Self::finish) for a run that may legitimately take up to `limit`.
    async fn finish_within(mut self, limit: Duration) -> (Output, u64) {
        let deadline = tokio::time::Instant::now() + limit;
        let mut peak = 0;
        let status = loop {
            peak = peak.max(peak_rss_kb(self.pid).unwrap_or(0));
            // `VmHWM` only grows and vanishes at exit, so it is sampled until then: there is
            // nothing to await for it.
            tokio::select! {
                s = self.child.wait() => break s.expect("wait for pi"),
                _ = tokio::time::sleep(Duration::from_millis(10)) => {}
            }
            if tokio::time::Instant::now() > deadline {
                kill_group(self.pid);
                let _ = self.child.wait().await;
                let out = self.output(None).await;
                panic!("pi hung: still running after {limit:?} (killed)\n{out}");
            }
        };
        (self.output(Some(status)).await, peak)
    }

    async fn output(self, status: Option<std::process::ExitStatus>) -> Output {
        use std::os::unix::process::ExitStatusExt;
        Output::from(std::process::Output {
            status: status.unwrap_or_else(|| std::process::ExitStatus::from_raw(9)),
            stdout: self.stdout.await.unwrap_or_default(),
            stderr: self.stderr.await.unwrap_or_default(),
        })
    }
}

/// `VmHWM` (peak resident set size, kB) of a running process.
fn peak_rss_kb(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[track_caller]
fn wait_for_file(path: &Path, what: &str) {
    assert!(wait_until(HOOK_RUN_TIMEOUT, || path.exists()), "{what}");
}

/// The ids of the `cancel` messages the recorded hook `name` received.
fn cancels(agent: &TestAgent, name: &str) -> Vec<u64> {
    recorded(agent, name)
        .iter()
        .filter(|m| m["type"] == "cancel")
        .filter_map(|m| m["id"].as_u64())
        .collect()
}

/// The id of the only `name` event (with an id) the recorded hook `hook` received.
#[track_caller]
fn only_request_id(agent: &TestAgent, hook: &str, event: &str) -> u64 {
    let events = recorded_events(agent, hook, event);
    assert_eq!(events.len(), 1, "{hook} got {events:?}");
    events[0]["id"].as_u64().expect("request id")
}
