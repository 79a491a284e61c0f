//! Support for the extension-host tests (`hooks_*.rs`): settings entries for the scripted test
//! hook (`fixtures/hooks/it/scripted.py`), the files it records to, JSON-stream helpers for
//! hook events, and the check that no process of a hook's group outlives `pi`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::{blocks_text, of_type, path_str, wait_until, Output, TestAgent};

/// The repository root (fixtures, sample hooks, target/).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Absolute path of a sample hook (`sample-hooks/NAME`).
pub fn sample(name: &str) -> String {
    path_str(&repo().join("sample-hooks").join(name))
}

/// Absolute path of a test hook (`fixtures/hooks/it/NAME`).
pub fn fixture(name: &str) -> String {
    path_str(&repo().join("fixtures/hooks/it").join(name))
}

/// Where the scripted hook named `name` appends "PID PGID" lines.
pub fn pidfile(agent: &TestAgent, name: &str) -> PathBuf {
    agent.tmp.join(format!("hook-{name}.pids"))
}

/// Where the scripted hook named `name` records every message it received (JSON lines).
pub fn record_file(agent: &TestAgent, name: &str) -> PathBuf {
    agent.tmp.join(format!("hook-{name}.jsonl"))
}

/// A settings entry running the scripted hook as `name`, with `config` plus its pid and record
/// files, and deadlines short enough to keep the suite fast yet safe on a loaded machine (3 s
/// per reply, 5 s to start; tests of hanging hooks shorten `timeout_ms` further).
pub fn scripted(agent: &TestAgent, name: &str, config: Value) -> Value {
    let mut config = config;
    config["pidfile"] = json!(path_str(&pidfile(agent, name)));
    config["record"] = json!(path_str(&record_file(agent, name)));
    json!({
        "command": format!("python3 {}", fixture("scripted.py")),
        "name": name,
        "config": config,
        "timeout_ms": 3000,
        "start_timeout_ms": 5000,
    })
}

/// Write `{"hooks": entries}` as the user settings.
pub fn use_hooks(agent: &TestAgent, entries: Vec<Value>) {
    agent.write_settings(&json!({ "hooks": entries }));
}

/// Every message the scripted hook `name` received (the `hello` first).
pub fn recorded(agent: &TestAgent, name: &str) -> Vec<Value> {
    std::fs::read_to_string(record_file(agent, name))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("recorded line is JSON"))
        .collect()
}

/// The `event` messages named `event` that the scripted hook `name` received.
pub fn recorded_events(agent: &TestAgent, name: &str, event: &str) -> Vec<Value> {
    recorded(agent, name)
        .into_iter()
        .filter(|m| m["type"] == "event" && m["name"] == event)
        .collect()
}

/// Pids (and their groups) a hook wrote to its pid file, one "PID PGID" line per process.
pub fn recorded_pids(path: &Path) -> Vec<(i32, i32)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace().map(|x| x.parse::<i32>().ok());
            Some((w.next()??, w.next()??))
        })
        .collect()
}

/// Live (not zombie) processes whose process group is `pgid`.
pub fn live_group_members(pgid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let Some((_, rest)) = stat.rsplit_once(')') else {
                return false;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            // state ppid pgrp …
            f.len() > 2 && !matches!(f[0], "Z" | "X") && f[2].parse::<i32>().ok() == Some(pgid)
        })
        .collect()
}

/// After `pi` exited: every process the hook recorded in `pidfile` is gone (or a zombie) and
/// nothing else runs in any of their process groups. At least one pid must be recorded.
#[track_caller]
pub fn assert_no_processes_left(pidfile: &Path) {
    let pids = recorded_pids(pidfile);
    assert!(
        !pids.is_empty(),
        "the hook never recorded its pid in {}",
        pidfile.display()
    );
    let groups: BTreeSet<i32> = pids.iter().map(|p| p.1).collect();
    let mut left = Vec::new();
    // pi has exited; a SIGKILLed process may need a moment to be torn down by the kernel.
    let gone = wait_until(Duration::from_secs(3), || {
        left = pids
            .iter()
            .map(|p| p.0)
            .filter(|p| !super::process_gone(*p))
            .chain(groups.iter().flat_map(|g| live_group_members(*g)))
            .collect();
        left.is_empty()
    });
    if !gone {
        for p in &left {
            super::kill_group(*p);
        }
    }
    assert!(
        gone,
        "hook processes outlived pi: {left:?} (recorded {pids:?})"
    );
}

/// [`assert_no_processes_left`] for the scripted hook `name`, then
/// [`assert_no_hook_processes`].
#[track_caller]
pub fn assert_hook_gone(agent: &TestAgent, name: &str) {
    assert_no_processes_left(&pidfile(agent, name));
    assert_no_hook_processes(agent);
}

/// Live processes whose environment has `PI_PROJECT_DIR=<this agent's project>`: every hook
/// process of this test (the host sets it for each hook) and whatever they spawned.
pub fn hook_processes(agent: &TestAgent) -> Vec<i32> {
    let needle = format!("PI_PROJECT_DIR={}\0", path_str(&agent.cwd));
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.windows(needle.len()).any(|w| w == needle.as_bytes()))
                .unwrap_or(false)
                && !super::process_gone(*pid)
        })
        .collect()
}

/// After `pi` exited: no hook process of this test (found by its environment, so this also
/// covers hooks that do not record their pid, such as the samples) is still running.
#[track_caller]
pub fn assert_no_hook_processes(agent: &TestAgent) {
    let mut left = Vec::new();
    let gone = wait_until(Duration::from_secs(3), || {
        left = hook_processes(agent);
        left.is_empty()
    });
    for p in &left {
        super::kill_group(*p);
    }
    assert!(gone, "hook processes outlived pi: {left:?}");
}

/// `hook_decision` events for `event`.
pub fn decisions<'a>(events: &'a [Value], event: &str) -> Vec<&'a Value> {
    of_type(events, "hook_decision")
        .into_iter()
        .filter(|d| d["event"] == event)
        .collect()
}

/// `hook_error` events.
pub fn hook_errors(events: &[Value]) -> Vec<&Value> {
    of_type(events, "hook_error")
}

/// Text of the last assistant message in the JSON stream.
pub fn final_text(events: &[Value]) -> String {
    of_type(events, "message_end")
        .into_iter()
        .rfind(|e| e["message"]["role"] == "assistant")
        .map(|e| blocks_text(&e["message"]["content"]))
        .unwrap_or_default()
}

/// Number of model calls (assistant messages) in the JSON stream.
pub fn model_calls(events: &[Value]) -> usize {
    of_type(events, "message_end")
        .into_iter()
        .filter(|e| e["message"]["role"] == "assistant")
        .count()
}

/// Upper bound for one hook-test run (each takes well under a second when `pi` works); a run
/// that takes longer has hung, typically while shutting down.
pub const HOOK_RUN_TIMEOUT: Duration = Duration::from_secs(30);

/// Run `pi` with `args` (stdin null), bounded by [`HOOK_RUN_TIMEOUT`]; a hung run is killed
/// and the test fails showing what `pi` had written so far.
pub async fn run_pi<S: AsRef<str>>(agent: &TestAgent, args: &[S]) -> Output {
    use tokio::io::AsyncReadExt;
    let mut child = agent.command(args).spawn().expect("spawn pi");
    let pid = child.id().expect("pid") as i32;
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_task = tokio::spawn(async move {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b).await;
        b
    });
    let err_task = tokio::spawn(async move {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b).await;
        b
    });
    let waited = tokio::time::timeout(HOOK_RUN_TIMEOUT, child.wait()).await;
    if waited.is_err() {
        super::kill_group(pid);
        let _ = child.wait().await;
    }
    let output = Output::from(std::process::Output {
        status: match &waited {
            Ok(s) => *s.as_ref().expect("wait for pi"),
            Err(_) => child
                .try_wait()
                .ok()
                .flatten()
                .expect("killed pi was reaped"),
        },
        stdout: out_task.await.unwrap_or_default(),
        stderr: err_task.await.unwrap_or_default(),
    });
    if waited.is_err() {
        panic!(
            "pi {:?} hung: still running after {HOOK_RUN_TIMEOUT:?} (killed)\n{output}",
            args.iter().map(|a| a.as_ref()).collect::<Vec<_>>()
        );
    }
    output
}

/// [`run_pi`] with a faux script of `steps` followed by `args`.
pub async fn run_faux(agent: &TestAgent, steps: Value, args: &[&str]) -> Output {
    let mut all = agent.faux_args(steps);
    all.extend(args.iter().map(|a| a.to_string()));
    run_pi(agent, &all).await
}

/// Run `pi --mode json --hook-events` (pi's own `hook_*` events too) with a faux script of
/// `steps` and `extra` args, prompt "go".
pub async fn run_json(agent: &TestAgent, steps: Value, extra: &[&str]) -> (Output, Vec<Value>) {
    let mut args: Vec<&str> = vec!["--mode", "json", "--hook-events"];
    args.extend_from_slice(extra);
    args.push("go");
    let out = run_faux(agent, steps, &args).await;
    let events = if out.code == Some(0) {
        out.events()
    } else {
        Vec::new()
    };
    (out, events)
}

/// A faux script: one turn calling `bash` with `command` (id `call-1`), then "final text".
pub fn bash_then_final(command: &str) -> Value {
    json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": command}, "id": "call-1"}]},
        "final text"
    ])
}
