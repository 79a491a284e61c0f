//! Starting and stopping one stdio MCP server process. The server runs like every process pi
//! starts: forked by pi's watchdog (so nothing of it outlives pi, even after `kill -9`), in a
//! process group of its own (so stopping it reaches whatever it spawned — `npx` starts `node`),
//! with the bash tool's filtered environment (no API key pi holds leaks to it) plus exactly the
//! variables its `env` names. Its stderr is its log: drained line by line into `mcp.log` so a
//! chatty server never blocks on a full pipe.
//!
//! Stopping follows the MCP specification's order: close stdin, give it a moment to exit, then
//! SIGTERM the group, then SIGKILL it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::unix::pipe;
use tokio::task::JoinHandle;

use super::log::McpLog;
use crate::watchdog::{self, Child, Command, ProcessGroup, Stdio, Stopped};

/// How long a server gets after stdin closes, and again after SIGTERM.
const GRACE: Duration = Duration::from_secs(2);

/// What to start, every value resolved.
#[derive(Debug, Clone)]
pub struct StdioLaunch {
    pub command: String,
    pub args: Vec<String>,
    /// The complete environment.
    pub env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    pub cwd: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("command {command:?} not found{}", searched.as_ref().map(|p| format!(" (searched PATH {p})")).unwrap_or_default())]
    NotFound {
        command: String,
        searched: Option<String>,
    },
    #[error("working directory {} does not exist", .0.display())]
    NoCwd(PathBuf),
    #[error("cannot start {command:?}: {source}")]
    Start {
        command: String,
        #[source]
        source: std::io::Error,
    },
}

/// A running server process.
pub struct StdioProcess {
    child: Child,
    group: ProcessGroup,
    stderr: Option<JoinHandle<()>>,
}

/// The server's pipes: what it writes (stdout) and where pi writes (stdin).
pub type Pipes = (pipe::Receiver, pipe::Sender);

/// The program `command` names: a path (relative to the server's cwd) or a name on the
/// server's own `PATH`.
fn resolve(launch: &StdioLaunch) -> Result<PathBuf, SpawnError> {
    let not_found = |searched| SpawnError::NotFound {
        command: launch.command.clone(),
        searched,
    };
    if launch.command.contains('/') {
        let p = launch.cwd.join(&launch.command);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(not_found(None))
        };
    }
    let path = launch
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());
    let shown = path.as_ref().map(|p| p.to_string_lossy().into_owned());
    which::which_in(&launch.command, path, &launch.cwd).map_err(|_| not_found(shown))
}

pub async fn spawn(
    launch: &StdioLaunch,
    server: &str,
    log: &McpLog,
) -> Result<(StdioProcess, Pipes), SpawnError> {
    if !launch.cwd.is_dir() {
        return Err(SpawnError::NoCwd(launch.cwd.clone()));
    }
    let program = resolve(launch)?;
    let mut child = Command::new(&program)
        .arg0(&launch.command)
        .args(&launch.args)
        .envs(launch.env.iter().cloned())
        .current_dir(&launch.cwd)
        .new_process_group()
        .stdin(Stdio::Piped)
        .stdout(Stdio::Piped)
        .stderr(Stdio::Piped)
        .spawn()
        .await
        .map_err(|source| SpawnError::Start {
            command: launch.command.clone(),
            source,
        })?;
    let (Some(group), Some(stdout), Some(stdin)) =
        (child.group(), child.stdout.take(), child.stdin.take())
    else {
        return Err(SpawnError::Start {
            command: launch.command.clone(),
            source: std::io::Error::other("its pipes or process group were not created"),
        });
    };
    let stderr = child.stderr.take().map(|e| {
        let log = log.clone();
        let server = server.to_string();
        tokio::spawn(async move {
            let mut lines = BufReader::new(e).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                log.line(&server, &format!("stderr: {line}"));
            }
        })
    });
    log.line(
        server,
        &format!("started {} (pid {})", program.display(), group.id()),
    );
    Ok((
        StdioProcess {
            child,
            group,
            stderr,
        },
        (stdout, stdin),
    ))
}

impl StdioProcess {
    pub fn pid(&self) -> Pid {
        self.group.id()
    }

    /// Whether the server process has exited.
    pub fn exited(&self) -> bool {
        self.child.try_wait().is_some()
    }

    /// Stop the server; stdin must already be closed (the transport dropped). Returns how it
    /// ended, for the log.
    pub async fn stop(mut self) -> String {
        let how = match watchdog::stop(&mut self.child, self.group, GRACE).await {
            Stopped::Exited => "exited after stdin closed",
            Stopped::Terminated => "stopped by SIGTERM",
            Stopped::Killed => "killed by SIGKILL",
        };
        if let Some(t) = self.stderr.take() {
            t.abort();
        }
        how.to_string()
    }
}

impl Drop for StdioProcess {
    fn drop(&mut self) {
        if let Some(t) = self.stderr.take() {
            t.abort();
        }
        // `Child`'s own drop SIGKILLs the group if it still runs.
    }
}

/// The directory a server runs in: its `cwd` (relative to the project) or the project.
pub fn server_cwd(project: &Path, cwd: Option<&str>) -> PathBuf {
    match cwd {
        Some(c) => project.join(c),
        None => project.to_path_buf(),
    }
}
