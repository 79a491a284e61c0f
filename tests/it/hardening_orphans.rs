//! Issue 8, items 3 and 7: a pin pins what runs (the verified file is the one executed), and
//! nothing pi starts outlives it, even after `kill -9` of pi (the watchdog).
//!
//! The orphan tests use `fixtures/hooks/it/orphans.py`, a hook that starts a `setsid` sleeper,
//! a double-forked sleeper and a SIGTERM-ignoring sleeper and records their pids, next to bash
//! tool commands that do the same. Commands report readiness through FIFOs the test holds open
//! read-write, so the test awaits them instead of polling files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::sys::stat::Mode;
use nix::unistd::Pid;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;

use crate::common::hooks::{fixture, recorded_pids, run_faux, use_hooks};
use crate::common::{path_str, process_gone, wait_until, TestAgent};

/// How long the kernel and the watchdog get to clear everything away.
const CLEANUP: Duration = Duration::from_secs(10);

/// A settings entry for the orphan-leaving hook, recording to `pidfile` and `starts`.
fn orphans_hook(pidfile: &Path, starts: &Path, linger: bool) -> Value {
    json!({
        "command": format!("python3 {}", fixture("orphans.py")),
        "name": "orphans",
        "config": {"pidfile": path_str(pidfile), "starts": path_str(starts), "linger": linger},
        "start_timeout_ms": 10000,
    })
}

/// Makes a FIFO at `path` and opens it read-write: reads wait for data instead of seeing
/// end-of-file while no writer is there, and data written stays until someone reads it.
fn fifo_receiver(path: &Path) -> BufReader<pipe::Receiver> {
    nix::unistd::mkfifo(path, Mode::from_bits_truncate(0o600)).expect("mkfifo");
    let rx = pipe::OpenOptions::new()
        .read_write(true)
        .open_receiver(path)
        .expect("open fifo");
    BufReader::new(rx)
}

fn fifo_sender(path: &Path) -> pipe::Sender {
    nix::unistd::mkfifo(path, Mode::from_bits_truncate(0o600)).expect("mkfifo");
    pipe::OpenOptions::new()
        .read_write(true)
        .open_sender(path)
        .expect("open fifo")
}

/// The next line written to the FIFO, as numbers.
async fn read_pids(rx: &mut BufReader<pipe::Receiver>, what: &str) -> Vec<i32> {
    let mut line = String::new();
    match tokio::time::timeout(Duration::from_secs(30), rx.read_line(&mut line)).await {
        Ok(Ok(n)) if n > 0 => {}
        other => panic!("{what} never reported its pids: {other:?}"),
    }
    line.split_whitespace()
        .map(|w| w.parse().expect("a pid"))
        .collect()
}

/// The watchdog of `pi`: its child named `pi-watchdog`.
fn watchdog_of(pi: i32) -> Option<i32> {
    let dir = std::fs::read_dir("/proc").ok()?;
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .find(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<i32>().ok());
            stat.contains("(pi-watchdog)") && ppid == Some(pi)
        })
}

fn survivors(pids: &[i32]) -> Vec<i32> {
    pids.iter().copied().filter(|p| !process_gone(*p)).collect()
}

/// Every pid in `pids` is gone within [`CLEANUP`]; survivors are killed, then reported.
#[track_caller]
fn assert_all_gone(pids: &[i32], when: &str) {
    assert!(!pids.is_empty());
    let gone = wait_until(CLEANUP, || survivors(pids).is_empty());
    let left = survivors(pids);
    for p in &left {
        let _ = kill(Pid::from_raw(*p), Signal::SIGKILL);
    }
    assert!(gone, "processes survived {when}: {left:?} of {pids:?}");
}

fn hook_pids(pidfile: &Path) -> Vec<i32> {
    recorded_pids(pidfile).into_iter().map(|p| p.0).collect()
}

fn lines(path: &PathBuf) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .count()
}

/// Item 7: a hook's `setsid`, double-forked and SIGTERM-ignoring descendants and a running
/// bash tool's `sleep`s (one in a new session) are all gone after `kill -9` of pi.
#[tokio::test]
async fn nothing_pi_started_survives_kill_9_of_pi() {
    let agent = TestAgent::new();
    let pidfile = agent.tmp.join("orphans.pids");
    let starts = agent.tmp.join("orphans.starts");
    use_hooks(&agent, vec![orphans_hook(&pidfile, &starts, true)]);
    let mut ready = fifo_receiver(&agent.cwd.join("ready.fifo"));
    let command = "sleep 300 & a=$!; setsid sleep 300 & b=$!; echo \"$$ $a $b\" > ready.fifo; wait";
    let mut args = agent.faux_args(json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]},
        "unreachable"
    ]));
    args.extend(["-p".to_string(), "go".to_string()]);
    let mut child = agent.command(&args).spawn().expect("spawn pi");
    let pi = child.id().expect("pid") as i32;
    let mut pids = read_pids(&mut ready, "the bash tool").await;
    let from_hook = hook_pids(&pidfile);
    assert_eq!(from_hook.len(), 4, "the hook and its three sleepers");
    pids.extend(from_hook);
    assert!(
        survivors(&pids).len() == pids.len(),
        "all running: {pids:?}"
    );

    kill(Pid::from_raw(pi), Signal::SIGKILL).expect("kill -9 pi");
    let _ = child.wait().await;
    assert_all_gone(&pids, "kill -9 of pi");
}

/// Item 7 on a normal exit: what a hook and a bash command left running in the background
/// (in a new session, double-forked, deaf to SIGTERM) ends with pi too.
#[tokio::test]
async fn background_escapees_of_hooks_and_bash_end_with_pi() {
    let agent = TestAgent::new();
    let pidfile = agent.tmp.join("orphans.pids");
    let starts = agent.tmp.join("orphans.starts");
    use_hooks(&agent, vec![orphans_hook(&pidfile, &starts, false)]);
    let command = "setsid sleep 300 & echo $! > escaped.pid";
    let out = run_faux(
        &agent,
        json!([
            {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]},
            "done"
        ]),
        &["-p", "go"],
    )
    .await;
    out.assert_ok();
    let mut pids = hook_pids(&pidfile);
    assert_eq!(pids.len(), 4, "the hook and its three sleepers\n{out}");
    pids.push(
        agent
            .read_string("escaped.pid")
            .trim()
            .parse()
            .expect("pid"),
    );
    assert_all_gone(&pids, "pi's exit");
}

/// Item 7: when the watchdog itself is killed while pi runs, pi kills what it leaves behind
/// at once (the hook's escaped descendants, the bash tool's tree), starts a new watchdog,
/// restarts the hook and keeps running tools.
#[tokio::test]
async fn a_killed_watchdog_leaves_no_orphan_and_pi_keeps_working() {
    let agent = TestAgent::new();
    let pidfile = agent.tmp.join("orphans.pids");
    let starts = agent.tmp.join("orphans.starts");
    use_hooks(&agent, vec![orphans_hook(&pidfile, &starts, false)]);
    let mut ready = fifo_receiver(&agent.cwd.join("ready.fifo"));
    let mut ack = fifo_sender(&agent.cwd.join("ack.fifo"));
    let first = "setsid sleep 300 & echo \"$$ $!\" > ready.fifo; sleep 300";
    let second = "head -n 1 ack.fifo > after.txt";
    let mut args = agent.faux_args(json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": first}, "id": "call-1"}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": second}, "id": "call-2"}]},
        "done"
    ]));
    args.extend(["-p".to_string(), "go".to_string()]);
    let mut child = agent.command(&args).spawn().expect("spawn pi");
    let pi = child.id().expect("pid") as i32;
    let mut pids = read_pids(&mut ready, "the first bash command").await;
    pids.extend(hook_pids(&pidfile));
    assert_eq!(pids.len(), 6, "bash, its sleeper, the hook and its three");
    let watchdog = watchdog_of(pi).expect("pi has a watchdog");

    kill(Pid::from_raw(watchdog), Signal::SIGKILL).expect("kill the watchdog");
    // pi is still running: the second command waits for `ack`.
    assert_all_gone(&pids, "the watchdog's death while pi runs");
    assert!(child.try_wait().expect("try_wait").is_none(), "pi ended");
    assert!(
        wait_until(CLEANUP, || lines(&starts) >= 2),
        "the hook was not restarted"
    );
    let replacement = watchdog_of(pi).expect("pi started a new watchdog");
    assert_ne!(replacement, watchdog);

    ack.write_all(b"second command ran\n").await.expect("ack");
    let out = match tokio::time::timeout(Duration::from_secs(30), child.wait_with_output()).await {
        Ok(out) => crate::common::Output::from(out.expect("wait for pi")),
        Err(_) => panic!("pi did not finish after the second command was released"),
    };
    out.assert_ok();
    assert_eq!(agent.read_string("after.txt"), "second command ran\n");
    assert_all_gone(&hook_pids(&pidfile), "pi's exit");
}

/// Item 7 keeps spawn errors precise: a hook file that cannot be executed is refused with its
/// path and the operating system's reason, which the watchdog's exec passes back to pi.
#[tokio::test]
async fn a_hook_that_cannot_be_executed_is_reported_with_path_and_reason() {
    let agent = TestAgent::new();
    let hook = agent.write_file("not-executable", "#!/bin/sh\nexit 0\n");
    let out = run_faux(
        &agent,
        json!(["unreachable"]),
        &["--hook", &path_str(&hook), "-p", "go"],
    )
    .await;
    out.assert_code(1);
    assert!(
        out.stderr.contains(&path_str(&hook)) && out.stderr.contains("Permission denied"),
        "{out}"
    );
}
