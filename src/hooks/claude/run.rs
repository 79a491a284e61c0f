//! Running one Claude Code hook process: started through pi's watchdog in a process group of
//! its own, its JSON written to stdin, stdout and stderr read (each capped), and at the
//! timeout — or when the request is dropped (an abort) — the whole group SIGKILLed, so
//! nothing a hook started keeps running. A descendant that still holds the output pipes after
//! the hook itself exited is given [`DRAIN_GRACE`] and then killed with the group.
//!
//! Before it starts, [`run_spec`] substitutes pi's own variables in an exec-form command (no
//! shell expands them there) and looks for the script an interpreter is told to run
//! ([`preflight`]): `python3 /missing.py` exits 2 — which Claude Code reads as "block" — and
//! `node /missing.js` exits 1 — "allow" — so neither exit says the hook could not run. After
//! it, [`strict_failure`] makes an unexpected exit a failure where the hook asks for it.

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::config::{ClaudeSpec, Program, StrictExit};
use super::output::{Ending, Failure, Ran};
use super::preflight;
use crate::watchdog::{self, Stdio};

/// Runs `spec`'s command with `env` (`own`: pi's variables for it); `Err` when it cannot run
/// (its script is missing), before anything is started.
pub async fn run_spec(
    spec: &ClaudeSpec,
    cwd: &Path,
    env: Vec<(OsString, OsString)>,
    own: &[(String, String)],
    stdin: &[u8],
    timeout: Duration,
) -> Result<Ran, Failure> {
    let program = match &spec.program {
        Program::Exec { program, args } => Program::Exec {
            program: preflight::substitute(program, own),
            args: args.iter().map(|a| preflight::substitute(a, own)).collect(),
        },
        shell => shell.clone(),
    };
    if let Some(message) = preflight::missing_script(&program, cwd, &env) {
        return Err(Failure {
            kind: "not_found",
            message,
        });
    }
    Ok(run(&program, cwd, env, stdin, timeout).await)
}

/// An exit other than 0 and 2 (and the ones that are failures anyway) of a hook whose
/// `strict_exit` makes it a failure.
pub fn strict_failure(strict: Option<&StrictExit>, ran: &Ran) -> Option<Failure> {
    const KEEP: usize = 2000;
    let strict = strict?;
    let code = match ran.ending {
        Ending::Exited(c) if !matches!(c, 0 | 2 | 126 | 127 | 129..=159) => c,
        _ => return None,
    };
    let err = ran.stderr.trim();
    let err = match err.char_indices().rev().nth(KEEP) {
        // The end of a traceback says what went wrong.
        Some((i, _)) => format!("…{}", &err[i..]),
        None => err.to_string(),
    };
    let said = if err.is_empty() {
        String::new()
    } else {
        format!(": {err}")
    };
    Some(Failure {
        kind: "unexpected_exit",
        message: format!("exited with code {code}{said}; {}", strict.because()),
    })
}

/// Most of each stream that is kept; the rest is read and dropped so the hook never blocks.
pub const OUTPUT_CAP: usize = 1024 * 1024;

/// How long output may still arrive once the hook exited (from descendants holding the pipes).
pub const DRAIN_GRACE: Duration = Duration::from_millis(250);

fn micros(t: Instant) -> u64 {
    t.elapsed().as_micros().min(u128::from(u64::MAX)) as u64
}

/// Reads a stream to its end (or until dropped), keeping at most [`OUTPUT_CAP`] bytes.
async fn read_capped(pipe: Option<tokio::net::unix::pipe::Receiver>, into: &mut Vec<u8>) {
    let Some(mut pipe) = pipe else { return };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let room = OUTPUT_CAP.saturating_sub(into.len());
                into.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

/// Runs `program` in `cwd` with exactly `env`, `stdin` as its input, for at most `timeout`.
pub async fn run(
    program: &Program,
    cwd: &Path,
    env: Vec<(OsString, OsString)>,
    stdin: &[u8],
    timeout: Duration,
) -> Ran {
    let t0 = Instant::now();
    let cmd = match program {
        Program::Shell { shell, command } => watchdog::Command::new(shell).args(["-c", command]),
        Program::Exec { program, args } => watchdog::Command::new(program).args(args),
    };
    let spawned = cmd
        .current_dir(cwd)
        .envs(env)
        .stdin(Stdio::Piped)
        .stdout(Stdio::Piped)
        .stderr(Stdio::Piped)
        .new_process_group()
        .spawn()
        .await;
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            return Ran {
                ending: Ending::SpawnFailed(e.to_string()),
                stdout: String::new(),
                stderr: String::new(),
                spawn_us: micros(t0),
                total_us: micros(t0),
            }
        }
    };
    let spawn_us = micros(t0);
    let group = child.group();
    let mut input = child.stdin.take();
    let stdout_pipe = child.stdout.take();
    let stderr_pipe = child.stderr.take();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let work = async {
        let reads = async {
            tokio::join!(
                read_capped(stdout_pipe, &mut out),
                read_capped(stderr_pipe, &mut err)
            )
        };
        tokio::pin!(reads);
        let write = async {
            if let Some(w) = input.as_mut() {
                // A hook that does not read its input closes the pipe: not an error.
                let _ = w.write_all(stdin).await;
            }
            drop(input.take());
        };
        let waiting = async { tokio::join!(write, child.wait()).1 };
        tokio::pin!(waiting);
        let mut read_all = false;
        let status = loop {
            tokio::select! {
                s = &mut waiting => break s,
                _ = &mut reads, if !read_all => read_all = true,
            }
        };
        if !read_all && tokio::time::timeout(DRAIN_GRACE, &mut reads).await.is_err() {
            // The hook is gone but something it started holds its pipes: that group goes
            // too (it exists while a member does, so its id is still the hook's).
            if let Some(group) = group {
                group.signal(Signal::SIGKILL);
            }
            let _ = tokio::time::timeout(DRAIN_GRACE, &mut reads).await;
        }
        status
    };
    let ending = match tokio::time::timeout(timeout, work).await {
        Ok(Ok(status)) => ending_of(status),
        Ok(Err(e)) => Ending::SpawnFailed(format!("cannot wait for it: {e}")),
        Err(_) => {
            child.start_kill();
            Ending::TimedOut(timeout)
        }
    };
    // Dropping the child kills its group if it is still running.
    drop(child);
    Ran {
        ending,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
        spawn_us,
        total_us: micros(t0),
    }
}

fn ending_of(status: std::process::ExitStatus) -> Ending {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => Ending::Exited(c),
        (None, Some(s)) => Ending::Signaled(s),
        (None, None) => Ending::Exited(-1),
    }
}
