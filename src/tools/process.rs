//! Running a shell command as its own process group and tearing the whole tree down.
//!
//! Commands the model runs routinely start children of their own (`npm test`, `cargo build`,
//! `sleep 30 & wait`). Killing only the shell would leave those running and holding our pipes,
//! so every command gets a fresh process group and abort/timeout send SIGKILL to the group.
//! A grandchild that escaped the group (setsid, double fork) can still hold the pipes open,
//! which is why reading after the shell has ended is bounded by a grace period instead of
//! waiting for end-of-file. The shell is started through `pi`'s watchdog, so even such an
//! escapee does not outlive `pi`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::watchdog::{self, KillOnDrop, Stdio};

/// How long output may still arrive once the shell has exited or been killed. Data already in
/// the pipes arrives at once; this only bounds waiting on descendants that outlived the shell.
pub const DRAIN_GRACE: Duration = Duration::from_millis(250);

const READ_CHUNK: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("Failed to start {shell}: {source}")]
    Spawn {
        shell: String,
        #[source]
        source: std::io::Error,
    },
    #[error("Failed to create the output pipe: {0}")]
    Pipe(#[source] std::io::Error),
    #[error("Failed to wait for the shell: {0}")]
    Wait(#[source] std::io::Error),
}

/// How a command run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The shell exited by itself; `None` when a signal ended it (no exit code).
    Exited(Option<i32>),
    TimedOut,
    Aborted,
}

/// Receives output as it arrives (stdout and stderr interleaved as written). A sink that
/// throttles its progress reports says when it holds output it has not reported yet
/// ([`OutputSink::flush_at`]), and is called back then ([`OutputSink::flush`]): the run keeps
/// a timer only while there is something to flush, not a periodic tick for every command (a
/// new timer sooner than any other wakes the runtime's driver, a system call or two per
/// command).
pub trait OutputSink {
    fn data(&mut self, chunk: &[u8]);
    /// When output held back should be reported; `None` while nothing is held back.
    fn flush_at(&self) -> Option<std::time::Instant> {
        None
    }
    fn flush(&mut self) {}
}

/// What to run: `<shell> -c <command>` in `cwd`, with exactly the environment `env` (nothing
/// of pi's own is inherited; see [`super::shell_env`]).
pub struct ShellCommand<'a> {
    pub shell: &'a Path,
    pub command: &'a str,
    pub cwd: &'a Path,
    pub env: &'a [(OsString, OsString)],
}

pub struct RunOptions<'a> {
    pub timeout: Option<Duration>,
    pub cancel: &'a CancellationToken,
}

/// The shell used when no `shellPath` is configured: bash, as pi does, else `sh`. Looked up
/// once per process: every `bash` call needs it.
pub fn default_shell() -> PathBuf {
    static SHELL: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    SHELL
        .get_or_init(|| {
            let bin_bash = Path::new("/bin/bash");
            if bin_bash.exists() {
                return bin_bash.to_path_buf();
            }
            which::which("bash").unwrap_or_else(|_| PathBuf::from("sh"))
        })
        .clone()
}

/// The shell's merged output, read on the runtime's reactor: a read never blocks, so an escaped
/// grandchild holding the pipe open costs nothing once the drain grace is over (dropping the
/// reader closes pi's end). `None` once end-of-file or an error was seen.
struct Output {
    pipe: Option<tokio::net::unix::pipe::Receiver>,
    buf: Vec<u8>,
}

impl Output {
    fn new(reader: std::io::PipeReader) -> std::io::Result<Output> {
        Ok(Output {
            pipe: Some(watchdog::pipe_receiver(std::os::fd::OwnedFd::from(reader))?),
            // Read into spare capacity: zeroing 64 KiB for every command was more than the
            // rest of reading a short command's output.
            buf: Vec::with_capacity(READ_CHUNK),
        })
    }

    fn open(&self) -> bool {
        self.pipe.is_some()
    }

    /// The next chunk, or `None` at end-of-file. Cancel safe: a read either completes or
    /// consumes nothing.
    async fn next(&mut self) -> Option<&[u8]> {
        let pipe = self.pipe.as_mut()?;
        self.buf.clear();
        match pipe.read_buf(&mut self.buf).await {
            Ok(n) if n > 0 => Some(&self.buf[..n]),
            _ => {
                self.pipe = None;
                None
            }
        }
    }
}

/// Starts the shell in a process group of its own, its stdout and stderr both `writer`, and
/// reads `out` into `sink` meanwhile. The guard SIGKILLs the whole group on abort or timeout,
/// and also when the run is dropped half-way (the agent loop gave up on the call), so no
/// command outlives the future that ran it.
async fn start(
    cmd: &ShellCommand<'_>,
    writer: std::io::PipeWriter,
    out: &mut Output,
    sink: &mut (dyn OutputSink + Send),
) -> Result<(watchdog::Child, KillOnDrop), ProcessError> {
    let writer_for_stderr = writer.try_clone().map_err(ProcessError::Pipe)?;
    // The command's copies of the write end are closed once the shell started, so end-of-file
    // depends on the shell and its descendants alone.
    let spawn = watchdog::Command::new(cmd.shell)
        .args(["-c", cmd.command])
        .current_dir(cmd.cwd)
        .envs(cmd.env.iter().cloned())
        .stdin(Stdio::Null)
        .stdout(Stdio::Fd(writer.into()))
        .stderr(Stdio::Fd(writer_for_stderr.into()))
        .new_process_group()
        .spawn();
    tokio::pin!(spawn);
    // The shell may write (and even end) before the watchdog's answer with its pid arrives:
    // its output is read meanwhile, not after.
    let spawned = loop {
        tokio::select! {
            biased;
            r = &mut spawn => break r,
            chunk = out.next(), if out.open() => if let Some(c) = chunk {
                sink.data(c);
            },
        }
    };
    let failed = |source| ProcessError::Spawn {
        shell: cmd.shell.display().to_string(),
        source,
    };
    let child = spawned.map_err(failed)?;
    let group = child.group().ok_or_else(|| {
        failed(std::io::Error::other(
            "the shell was not started in a process group",
        ))
    })?;
    Ok((child, group.kill_on_drop()))
}

/// Run a shell command to its end, streaming merged output into `sink`.
///
/// On abort or timeout the whole process group is killed and reaped. Background processes
/// that a successful command leaves behind are not killed then (pi leaves them running too),
/// and their output is no longer read after [`DRAIN_GRACE`]; they end with `pi`, whose
/// watchdog kills everything it started.
pub async fn run_shell(
    cmd: ShellCommand<'_>,
    opts: RunOptions<'_>,
    sink: &mut (dyn OutputSink + Send),
) -> Result<Ending, ProcessError> {
    if opts.cancel.is_cancelled() {
        return Ok(Ending::Aborted);
    }
    // stdout and stderr share one pipe, as `2>&1` would: only a single pipe keeps the true
    // interleaving of the two streams; reading two pipes concurrently cannot recover it.
    let (reader, writer) = std::io::pipe().map_err(ProcessError::Pipe)?;
    let mut out = Output::new(reader).map_err(ProcessError::Pipe)?;
    let (mut child, mut killer) = start(&cmd, writer, &mut out, sink).await?;

    let timeout = async {
        match opts.timeout {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(timeout);
    let flush = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(flush);
    let mut flush_armed: Option<std::time::Instant> = None;

    let mut status: Option<ExitStatus> = None;
    let mut forced: Option<Ending> = None;
    while status.is_none() && forced.is_none() {
        let due = sink.flush_at();
        if due != flush_armed {
            if let Some(at) = due {
                flush.as_mut().reset(Instant::from_std(at));
            }
            flush_armed = due;
        }
        tokio::select! {
            chunk = out.next(), if out.open() => if let Some(c) = chunk {
                sink.data(c);
            },
            s = child.wait() => status = Some(s.map_err(ProcessError::Wait)?),
            _ = opts.cancel.cancelled() => forced = Some(Ending::Aborted),
            _ = &mut timeout => forced = Some(Ending::TimedOut),
            _ = &mut flush, if flush_armed.is_some() => {
                flush_armed = None;
                sink.flush();
            }
        }
    }

    if forced.is_some() {
        killer.kill();
        // SIGKILL cannot be ignored, so this returns promptly.
        status = Some(child.wait().await.map_err(ProcessError::Wait)?);
    }
    killer.disarm();

    let drain_until = Instant::now() + DRAIN_GRACE;
    while out.open() {
        tokio::select! {
            chunk = out.next(), if out.open() => if let Some(c) = chunk {
                sink.data(c);
            },
            _ = tokio::time::sleep_until(drain_until) => break,
        }
    }

    Ok(match forced {
        Some(end) => end,
        None => Ending::Exited(status.and_then(|s| s.code())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::signal::Signal;
    use nix::unistd::Pid;

    #[derive(Default)]
    struct Collect(Vec<u8>);
    impl OutputSink for Collect {
        fn data(&mut self, chunk: &[u8]) {
            self.0.extend_from_slice(chunk);
        }
    }

    async fn run(command: &str, timeout: Option<Duration>) -> (Ending, String) {
        let shell = default_shell();
        let cwd = std::env::temp_dir();
        let cancel = CancellationToken::new();
        let mut sink = Collect::default();
        let end = run_shell(
            ShellCommand {
                shell: &shell,
                command,
                cwd: &cwd,
                env: &[
                    ("PATH".into(), "/usr/bin:/bin".into()),
                    ("PI_TEST_VAR".into(), "xyz".into()),
                ],
            },
            RunOptions {
                timeout,
                cancel: &cancel,
            },
            &mut sink,
        )
        .await
        .unwrap();
        (end, String::from_utf8_lossy(&sink.0).into_owned())
    }

    #[tokio::test]
    async fn merges_stdout_and_stderr_and_passes_exactly_the_env() {
        // The test process's own HOME is not passed on, so the shell has none.
        let (end, out) = run(
            "echo one; echo two >&2; echo $PI_TEST_VAR ${HOME-nohome} $PATH; exit 3",
            None,
        )
        .await;
        assert_eq!(end, Ending::Exited(Some(3)));
        assert_eq!(out, "one\ntwo\nxyz nohome /usr/bin:/bin\n");
    }

    #[tokio::test]
    async fn background_child_holding_pipe_does_not_block_return() {
        let started = std::time::Instant::now();
        // setsid puts the sleeper outside our group: only the drain bound lets us return.
        let (end, out) = run("setsid sleep 5 & echo pid=$!", None).await;
        assert_eq!(end, Ending::Exited(Some(0)));
        assert!(started.elapsed() < Duration::from_secs(2));
        let pid: i32 = out.trim().trim_start_matches("pid=").parse().unwrap();
        let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
}
