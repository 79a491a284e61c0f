//! Issue 8, items 3 and 7: a pin pins what runs (the verified file is the one executed), and
//! nothing pi starts outlives it, even after `kill -9` of pi (the watchdog).
//!
//! The orphan tests use `fixtures/hooks/it/orphans.py`, a hook that starts a `setsid` sleeper,
//! a double-forked sleeper and a SIGTERM-ignoring sleeper and records their pids, next to bash
//! tool commands that do the same. Commands report readiness through FIFOs the test holds open
//! read-write, so the test awaits them instead of polling files.
//!
//! The pin tests run managed hooks (policy file placed with `PI_MANAGED_SETTINGS`, as in
//! `managed.rs`); `fixtures/hooks/it/pinned.py` is a gate that records what it sees as its own
//! path when it runs from its verified descriptor.

use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::sys::stat::Mode;
use nix::unistd::Pid;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;

use crate::common::hooks::{
    bash_then_final, final_text, fixture, hook_errors, recorded_pids, run_faux, run_json, sample,
    use_hooks,
};
use crate::common::{only_tool_end, path_str, process_gone, wait_until, Output, TestAgent};

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

/// The first watchdog is a forked copy of pi, not an exec: it must still hold nothing of pi's
/// but its own end of the socket — no copy of pi's output pipes (a reader of pi's output
/// would wait for the watchdog too), no working directory a user may want to unmount — and
/// lead its own process group, as the exec'd one does.
#[tokio::test]
async fn the_forked_watchdog_holds_none_of_pis_descriptors() {
    let agent = TestAgent::new();
    let mut ready = fifo_receiver(&agent.cwd.join("ready.fifo"));
    let mut ack = fifo_sender(&agent.cwd.join("ack.fifo"));
    let command = "echo \"$$\" > ready.fifo; head -n 1 ack.fifo > /dev/null";
    let mut args = agent.faux_args(json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": command}, "id": "call-1"}]},
        "done"
    ]));
    args.extend(["-p".to_string(), "go".to_string()]);
    let child = agent.command(&args).spawn().expect("spawn pi");
    let pi = child.id().expect("pid") as i32;
    read_pids(&mut ready, "the bash command").await;
    let watchdog = watchdog_of(pi).expect("pi has a watchdog");

    let link = |pid: i32, fd: &str| std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok();
    let pis_outputs = [link(pi, "1"), link(pi, "2")];
    let held_now = || -> Vec<PathBuf> {
        std::fs::read_dir(format!("/proc/{watchdog}/fd"))
            .expect("the watchdog's descriptors")
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .collect()
    };
    // The watchdog closes its copies of the command's pipe ends once `spawn` has returned,
    // which on a loaded machine can be just after the command has started writing: what is
    // asserted is what it holds once it has settled, not that instant.
    let settled = |held: &[PathBuf]| {
        held.iter().all(|p| {
            let p = p.to_string_lossy();
            p == "/dev/null" || p.starts_with("socket:") || p.starts_with("anon_inode:")
        })
    };
    wait_until(Duration::from_secs(5), || settled(&held_now()));
    let held = held_now();
    for out in pis_outputs.iter().flatten() {
        assert!(
            !held.contains(out),
            "the watchdog holds pi's {out:?}: {held:?}"
        );
    }
    let pipes_or_files: Vec<_> = held
        .iter()
        .filter(|p| {
            p.to_string_lossy() != "/dev/null" && !p.to_string_lossy().starts_with("socket:")
        })
        .filter(|p| !p.to_string_lossy().starts_with("anon_inode:"))
        .collect();
    assert!(
        pipes_or_files.is_empty(),
        "the watchdog holds {pipes_or_files:?}"
    );
    assert_eq!(
        std::fs::read_link(format!("/proc/{watchdog}/cwd")).expect("cwd"),
        PathBuf::from("/")
    );
    let stat = std::fs::read_to_string(format!("/proc/{watchdog}/stat")).expect("stat");
    let pgrp = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(2)?.parse::<i32>().ok());
    assert_eq!(pgrp, Some(watchdog), "the watchdog leads its own group");

    ack.write_all(b"go on\n").await.expect("ack");
    let out = match tokio::time::timeout(Duration::from_secs(30), child.wait_with_output()).await {
        Ok(out) => crate::common::Output::from(out.expect("wait for pi")),
        Err(_) => panic!("pi did not finish"),
    };
    out.assert_ok();
}

/// Item 7 keeps spawn errors precise: a hook file that cannot be executed is refused with its
/// path and the reason, diagnosed from the error the watchdog's exec passes back to pi.
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
        out.stderr.contains(&path_str(&hook))
            && out.stderr.contains("is not executable (mode 0644)"),
        "{out}"
    );
}

/// Writes `policy` as the managed settings (outside the project) and points pi at it.
fn managed(agent: &mut TestAgent, policy: Value) {
    let path = root(agent).join("managed-settings.json");
    std::fs::write(&path, policy.to_string()).expect("write policy");
    agent.env("PI_MANAGED_SETTINGS", &path_str(&path));
}

/// Outside the project and the agent directory.
fn root(agent: &TestAgent) -> PathBuf {
    agent.agent_dir.parent().expect("root").to_path_buf()
}

fn sha256_hex(path: &Path) -> String {
    let bytes = std::fs::read(path).expect("read for hashing");
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn write_executable(path: &Path, contents: &[u8]) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, contents).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Whether `pi` holds `path` open right now.
fn holds_open(pi: i32, path: &Path) -> bool {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pi}/fd")) else {
        return false;
    };
    dir.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .any(|target| target == path)
}

/// One attempt at the race of item 3: start pi with a managed hook pinned to `pinned-hook`,
/// stop pi while it holds that file open (it opens it to verify the pin), rename another file
/// over the path, let pi go on. `None` when pi was never caught holding the file (it was too
/// quick for this attempt); otherwise which of the two files ran, as the hook's marker says.
async fn swap_between_check_and_exec() -> Option<String> {
    let mut agent = TestAgent::new();
    let root = root(&agent);
    let marker = root.join("ran");
    let hook = root.join("pinned-hook");
    let body = |who: &str| {
        format!(
            "#!/bin/sh\necho {who} >> '{}'\nexec python3 '{}'\n",
            path_str(&marker),
            fixture("pinned.py")
        )
    };
    // Never executed (the `exec` comes first) but hashed: the check takes a while, a window
    // the test can reliably catch pi in.
    let mut original = body("original").into_bytes();
    while original.len() < 4 << 20 {
        original.extend_from_slice(b"# padding that makes the pin check take a while\n");
    }
    write_executable(&hook, &original);
    let replacement = root.join("replacement");
    write_executable(&replacement, body("replacement").as_bytes());
    let record = root.join("record.jsonl");
    managed(
        &mut agent,
        json!({"hooks": [{
            "command": path_str(&hook), "name": "pinned", "sha256": sha256_hex(&hook),
            "config": {"record": path_str(&record)}}]}),
    );
    let mut args = agent.faux_args(bash_then_final("touch bash-ran"));
    args.extend(["--mode", "json", "--hook-events", "go"].map(String::from));
    let mut child = agent.command(&args).spawn().expect("spawn pi");
    let pi = child.id().expect("pid") as i32;
    let mut caught = false;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < deadline && child.try_wait().ok().flatten().is_none() {
        if holds_open(pi, &hook) {
            kill(Pid::from_raw(pi), Signal::SIGSTOP).expect("stop pi");
            // Still open once stopped: pi is between opening the file and starting the hook.
            caught = holds_open(pi, &hook);
            if caught {
                std::fs::rename(&replacement, &hook).expect("swap the pinned file");
            }
            kill(Pid::from_raw(pi), Signal::SIGCONT).expect("continue pi");
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let out = match tokio::time::timeout(Duration::from_secs(60), child.wait_with_output()).await {
        Ok(out) => Output::from(out.expect("wait for pi")),
        Err(_) => panic!("pi hung"),
    };
    out.assert_ok();
    assert!(!agent.cwd.join("bash-ran").exists(), "bash ran\n{out}");
    caught.then(|| std::fs::read_to_string(&marker).unwrap_or_default())
}

/// Item 3: a pinned file swapped for another between pi's check and its exec never runs: the
/// hook runs from the descriptor that was hashed. (Old code hashed the path, then executed the
/// path again, and ran the replacement.)
#[tokio::test]
async fn a_pinned_hook_swapped_between_check_and_exec_never_runs() {
    for _ in 0..5 {
        // Nothing ran: pi was caught holding the file for another look before its pin check,
        // which then saw the replacement and refused it. Safe, but not the window under test.
        if let Some(ran) = swap_between_check_and_exec()
            .await
            .filter(|r| !r.is_empty())
        {
            assert_eq!(ran, "original\n", "the swapped-in file ran");
            return;
        }
    }
    panic!("pi was never caught between its pin check and its exec in 5 runs");
}

/// A managed interpreter entry (`python3 pinned.py`) with `sha256` for the script and
/// `interpreter_sha256` for the interpreter, and what it records.
fn interpreter_entry(agent: &mut TestAgent, script_pin: &str, interpreter_pin: &str) -> PathBuf {
    let record = root(agent).join("record.jsonl");
    let python = which_python();
    managed(
        agent,
        json!({"hooks": [{
            "command": format!("{} {}", path_str(&python), fixture("pinned.py")),
            "name": "pinned",
            "sha256": script_pin,
            "interpreter_sha256": interpreter_pin,
            "config": {"record": path_str(&record)}}]}),
    );
    record
}

/// The real Python binary (not a wrapper such as a pyenv shim, which is a script: run from its
/// descriptor, a wrapper script no longer knows its own name).
fn which_python() -> PathBuf {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, sys; print(os.path.realpath(sys.executable))",
        ])
        .output()
        .expect("python3 on PATH");
    PathBuf::from(String::from_utf8(out.stdout).expect("utf-8").trim())
}

/// The tool result of a run whose one bash call was refused because the required hook could
/// not start; the user was told why.
#[track_caller]
fn refusal(out: &Output, events: &[Value]) -> String {
    out.assert_ok();
    let end = only_tool_end(out);
    assert!(
        end.text
            .starts_with("Blocked: policy degraded: managed hook pinned is not running: "),
        "{out}"
    );
    assert!(
        hook_errors(events)
            .iter()
            .any(|e| e["kind"] == "policy_degraded"
                && e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("mismatch for "))),
        "{out}"
    );
    end.text
}

/// Item 3 for interpreter entries: `sha256` pins the script (which runs from its verified
/// descriptor, `/proc/self/fd/4`, yet resolves to its real path and directory), and
/// `interpreter_sha256` pins the interpreter; a mismatch of either refuses the hook and says
/// which file.
#[tokio::test]
async fn an_interpreter_entry_pins_its_script_and_its_interpreter() {
    let script = PathBuf::from(fixture("pinned.py"));
    let python = which_python();
    let (script_pin, python_pin) = (sha256_hex(&script), sha256_hex(&python));
    let wrong = "0".repeat(64);

    let mut agent = TestAgent::new();
    let record = interpreter_entry(&mut agent, &script_pin, &python_pin);
    let (out, events) = run_json(&agent, bash_then_final("touch bash-ran"), &[]).await;
    out.assert_ok();
    assert_eq!(only_tool_end(&out).text, "pinned says no", "{out}");
    assert_eq!(final_text(&events), "final text");
    let seen: Value = serde_json::from_str(
        std::fs::read_to_string(&record)
            .expect("the hook recorded what it saw")
            .trim(),
    )
    .expect("JSON");
    assert_eq!(seen["file"], "/proc/self/fd/4", "{seen}");
    assert_eq!(seen["argv0"], "/proc/self/fd/4", "{seen}");
    let real = script.canonicalize().expect("canonical");
    assert_eq!(seen["realpath"], path_str(&real), "{seen}");
    assert_eq!(
        seen["path0"],
        path_str(real.parent().expect("dir")),
        "{seen}"
    );

    let mut agent = TestAgent::new();
    interpreter_entry(&mut agent, &wrong, &python_pin);
    let (out, events) = run_json(&agent, bash_then_final("touch bash-ran"), &[]).await;
    let text = refusal(&out, &events);
    assert!(
        text.contains(&format!("sha256 mismatch for {}", path_str(&script)))
            && !text.contains("interpreter_sha256")
            && text.contains(&script_pin),
        "{text}"
    );
    assert!(!agent.cwd.join("bash-ran").exists());

    let mut agent = TestAgent::new();
    let record = interpreter_entry(&mut agent, &script_pin, &wrong);
    let (out, events) = run_json(&agent, bash_then_final("touch bash-ran"), &[]).await;
    let text = refusal(&out, &events);
    assert!(
        text.contains(&format!(
            "interpreter_sha256 mismatch for {}",
            path_str(&python)
        )) && text.contains(&python_pin),
        "{text}"
    );
    assert!(!record.exists(), "the hook ran");
    assert!(!agent.cwd.join("bash-ran").exists());
}

/// Item 3: a pinned Python script started directly (`#!`) runs from its verified descriptor
/// and still imports its sibling module (`policy.py` imports `pi_hook`): CPython puts the
/// script's real directory first on `sys.path`.
#[tokio::test]
async fn a_pinned_sample_policy_still_imports_its_sibling_module() {
    let mut agent = TestAgent::new();
    let policy = PathBuf::from(sample("policy.py"));
    managed(
        &mut agent,
        json!({"hooks": [{
            "command": path_str(&policy), "name": "policy", "sha256": sha256_hex(&policy),
            "config": {"extra_patterns": ["forbidden-by-config"]}}]}),
    );
    let (out, _) = run_json(&agent, bash_then_final("touch forbidden-by-config"), &[]).await;
    out.assert_ok();
    let end = only_tool_end(&out);
    assert!(
        end.text.starts_with("Blocked by policy rule "),
        "the pinned policy did not run: {}",
        end.text
    );
    assert!(!agent.cwd.join("forbidden-by-config").exists());
}

/// Item 7's control channel carries a spawn request in several messages when it is large: a
/// bash command of 100 kB (a long heredoc, say) reaches the shell whole.
#[tokio::test]
async fn a_bash_command_larger_than_one_control_message_runs_whole() {
    let agent = TestAgent::new();
    let payload = "x".repeat(100_000);
    let command = format!("printf '%s' '{payload}' > big.txt");
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
    assert_eq!(agent.read_string("big.txt"), payload);
}
