//! Spawning one hook process, with none of the protocol: the minimal environment (SPEC 4.5),
//! pinned files, its own process group, piped stdio and the stderr drain. Signalling and
//! stopping its group (SPEC 4.6) is the process module's (`crate::watchdog`), as for every
//! process pi starts.
//!
//! Why each piece is here:
//! - The environment is built from a whitelist plus what the hook's settings entry names, so
//!   provider API keys and other secrets in `pi`'s environment never reach a hook by accident.
//! - Each hook leads a new process group so the host can signal it *and everything it spawned*
//!   (`killpg`), and so a terminal Ctrl-C does not reach hooks behind the host's back.
//! - Hooks are started by `pi`'s watchdog (`crate::watchdog`), so nothing a hook starts, not
//!   even a `setsid` or double-forked grandchild, outlives `pi`.
//! - stderr is the hook's log. It is read continuously in its own task (a full stderr pipe would
//!   freeze the hook mid-request), with bounded line length and a per-second line budget so a
//!   flooding hook costs little, and the last lines are kept so errors can quote them.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::task::JoinHandle;

use super::managed_env;
pub use super::rate_limit::RateLimit;
use super::spec::{HookSource, HookSpec, PinError, Verified, PROGRAM_FD, SCRIPT_FD};
use crate::watchdog::{Child, Command, ProcessGroup, Stdio};

/// Parent environment variables every hook gets (when set in the parent). Managed hooks get a
/// fixed environment instead (`managed_env`).
pub const BASE_ENV: &[&str] = &["PATH", "HOME", "USER", "LANG", "TERM", "TMPDIR", "SHELL"];

/// The `PI_*` values the host sets for a hook.
#[derive(Debug, Clone)]
pub struct HookVars<'a> {
    pub hook_name: &'a str,
    pub project_dir: &'a Path,
    pub session_id: Option<&'a str>,
    /// The highest protocol version the host offers.
    pub protocol_version: u32,
    /// `HOME` for a managed hook whose entry sets none: the directory pi created for managed
    /// hooks (`managed_env::ManagedHome`).
    pub managed_home: Option<&'a Path>,
}

/// The complete environment of a hook, in precedence order (later entries win):
///
/// - a hook of any other source: the base whitelist, then the `env_passthrough` names copied
///   from the parent;
/// - a managed hook: the system `PATH`, its own `HOME`, `LANG`/`TERM`/`USER`,
///   `PYTHONNOUSERSITE=1`, then the `env_passthrough` names except language-runtime variables
///   and `PATH`/`HOME` (`managed_env`) — nothing else of the user's;
///
/// then the entry's own `env`, then the host's `PI_*` variables (which a settings entry cannot
/// fake). `parent` looks a name up in the parent environment; it is a parameter so tests need
/// not mutate the process environment.
pub fn hook_environment(
    spec: &HookSpec,
    vars: &HookVars<'_>,
    parent: &dyn Fn(&str) -> Option<OsString>,
) -> Vec<(OsString, OsString)> {
    let mut env = granted_environment(spec, vars.managed_home, parent);
    let mut set = |k: OsString, v: OsString| {
        env.retain(|(old, _)| *old != k);
        env.push((k, v));
    };
    set("PI_HOOK_NAME".into(), vars.hook_name.into());
    set(
        "PI_PROJECT_DIR".into(),
        vars.project_dir.as_os_str().to_owned(),
    );
    // Absent (not empty) when there is no session yet, e.g. during `project_trust`.
    if let Some(id) = vars.session_id {
        set("PI_SESSION_ID".into(), id.into());
    }
    set(
        "PI_PROTOCOL_VERSION".into(),
        vars.protocol_version.to_string().into(),
    );
    env
}

/// What a hook's settings entry grants it of pi's environment: [`hook_environment`] without
/// the host's `PI_*` values.
fn granted_environment(
    spec: &HookSpec,
    managed_home: Option<&Path>,
    parent: &dyn Fn(&str) -> Option<OsString>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    let mut set = |k: OsString, v: OsString| {
        env.retain(|(old, _)| *old != k);
        env.push((k, v));
    };
    let passed = |name: &str| {
        spec.source != HookSource::Managed || managed_env::passthrough_refusal(name).is_none()
    };
    if spec.source == HookSource::Managed {
        set("PATH".into(), managed_env::SYSTEM_PATH.into());
        if let Some(home) = managed_home {
            set("HOME".into(), home.as_os_str().to_owned());
        }
        for name in managed_env::MANAGED_BASE_ENV {
            if let Some(v) = parent(name) {
                set((*name).into(), v);
            }
        }
        // Python must not import the user's site directory, whatever HOME says.
        set("PYTHONNOUSERSITE".into(), "1".into());
    } else {
        for name in BASE_ENV {
            if let Some(v) = parent(name) {
                set((*name).into(), v);
            }
        }
    }
    for name in spec.env_passthrough.iter().filter(|n| passed(n)) {
        if let Some(v) = parent(name) {
            set(name.into(), v);
        }
    }
    for (k, v) in &spec.env {
        set(k.into(), v.into());
    }
    env
}

/// The environment a hook's registrations (`provider.register`, `mcp.register`) resolve their
/// `$VAR`s in: exactly what its entry grants it, so a hook obtains through pi nothing it could
/// not read itself. Values that are not UTF-8 are left out (a header or key must be text).
pub fn granted_env(spec: &HookSpec) -> crate::config::ForeignEnv {
    let vars = granted_environment(spec, None, &|k| std::env::var_os(k));
    crate::config::ForeignEnv::hook(
        &spec.name,
        vars.into_iter()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
    )
}

/// Limits of the stderr drain.
#[derive(Debug, Clone, Copy)]
pub struct StderrLimits {
    /// Longer lines are cut (the rest of the line is discarded, not buffered).
    pub max_line: usize,
    /// Lines recorded per second; the rest are counted and summarised.
    pub lines_per_sec: u32,
    /// Lines kept for error messages.
    pub tail: usize,
}

impl Default for StderrLimits {
    fn default() -> Self {
        StderrLimits {
            max_line: 4096,
            lines_per_sec: 200,
            tail: 50,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// A pinned file does not match its pin (or cannot be verified): nothing was started.
    #[error(transparent)]
    Pin(#[from] PinError),
    #[error("cannot start {}: {source}", program.display())]
    Spawn {
        program: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Not reachable with piped stdio and a new group; kept so spawning never panics.
    #[error("started {} but could not take its {what}", program.display())]
    Incomplete {
        program: PathBuf,
        what: &'static str,
    },
}

/// The writing end of a hook's stdin.
pub type HookStdin = tokio::net::unix::pipe::Sender;
/// The reading end of a hook's stdout (and stderr).
pub type HookStdout = tokio::net::unix::pipe::Receiver;

/// A running hook process: the leader, its group and its pipes.
pub struct HookProcess {
    pub child: Child,
    pub pgid: ProcessGroup,
    pub stdin: HookStdin,
    pub stdout: HookStdout,
    pub stderr: StderrDrain,
}

/// Starts a hook: `spec.program` with `spec.args`, working directory `cwd`, exactly `env`, in a
/// new process group, stdio piped, killed if the handle is dropped. `log_name` labels its
/// stderr lines. In the `pi` binary the process is started by the watchdog, so nothing it
/// starts in turn outlives `pi`.
///
/// A pinned hook is verified first, every time (off the async threads: files may be large),
/// and then started from exactly the files verified: see [`spawn_verified`].
pub async fn spawn(
    spec: &HookSpec,
    cwd: &Path,
    env: &[(OsString, OsString)],
    log_name: &str,
    limits: StderrLimits,
) -> Result<HookProcess, SpawnError> {
    let verified = if spec.is_pinned() {
        let (owned, dir) = (spec.clone(), cwd.to_path_buf());
        tokio::task::spawn_blocking(move || owned.verify(&dir))
            .await
            .unwrap_or_else(|e| {
                Err(PinError::Unreadable {
                    field: "sha256",
                    path: spec.program.clone(),
                    message: format!("the check did not complete: {e}"),
                })
            })?
    } else {
        Verified::default()
    };
    spawn_verified(spec, verified, cwd, env, log_name, limits).await
}

/// [`spawn`] with the pinned files already opened and verified: a verified file is installed
/// in the child at its fixed descriptor number and run through it (`/proc/self/fd/N`), so what
/// runs is what was hashed, whatever happened to its path since. `argv[0]` stays the
/// configured program path.
pub async fn spawn_verified(
    spec: &HookSpec,
    verified: Verified,
    cwd: &Path,
    env: &[(OsString, OsString)],
    log_name: &str,
    limits: StderrLimits,
) -> Result<HookProcess, SpawnError> {
    let mut args: Vec<OsString> = spec.args.iter().map(OsString::from).collect();
    let mut cmd = match verified.program {
        Some(file) => Command::new(format!("/proc/self/fd/{PROGRAM_FD}"))
            .arg0(&spec.program)
            .fd(PROGRAM_FD, file.into()),
        None => Command::new(&spec.program),
    };
    if let Some((i, file)) = verified.script {
        if let Some(arg) = args.get_mut(i) {
            *arg = format!("/proc/self/fd/{SCRIPT_FD}").into();
        }
        cmd = cmd.fd(SCRIPT_FD, file.into());
    }
    // A second line of defence: should the watchdog be killed, its hooks die with it (without
    // a watchdog: with the spawning runtime thread, which lives as long as pi).
    let spawned = cmd
        .die_with_parent()
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().cloned())
        .stdin(Stdio::Piped)
        .stdout(Stdio::Piped)
        .stderr(Stdio::Piped)
        .new_process_group()
        .spawn()
        .await;
    let mut child = spawned.map_err(|source| SpawnError::Spawn {
        program: spec.program.clone(),
        source,
    })?;
    let incomplete = |what| SpawnError::Incomplete {
        program: spec.program.clone(),
        what,
    };
    let pgid = child.group().ok_or_else(|| incomplete("process group"))?;
    let stdin = child.stdin.take().ok_or_else(|| incomplete("stdin"))?;
    let stdout = child.stdout.take().ok_or_else(|| incomplete("stdout"))?;
    let stderr = child.stderr.take().ok_or_else(|| incomplete("stderr"))?;
    Ok(HookProcess {
        child,
        pgid,
        stdin,
        stdout,
        stderr: StderrDrain::start(stderr, log_name.to_string(), limits),
    })
}

/// The last stderr lines of a hook, shared between the drain task and error reporting.
#[derive(Debug, Clone, Default)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    cap: usize,
}

impl StderrTail {
    fn new(cap: usize) -> Self {
        StderrTail {
            lines: Arc::new(Mutex::new(VecDeque::with_capacity(cap))),
            cap,
        }
    }

    fn push(&self, line: String) {
        // A poisoned lock only means a panic elsewhere mid-push; the lines are still usable.
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() >= self.cap.max(1) {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The last `n` lines, oldest first.
    pub fn last(&self, n: usize) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        lines
            .iter()
            .skip(lines.len().saturating_sub(n))
            .cloned()
            .collect()
    }
}

/// The task draining one process's stderr.
pub struct StderrDrain {
    pub tail: StderrTail,
    task: Option<JoinHandle<()>>,
}

impl StderrDrain {
    fn start(stderr: HookStdout, name: String, limits: StderrLimits) -> Self {
        let tail = StderrTail::new(limits.tail);
        let task = tokio::spawn(drain(stderr, name, limits, tail.clone()));
        StderrDrain {
            tail,
            task: Some(task),
        }
    }

    /// Waits (at most `within`) for the drain to reach EOF, so an error message can quote the
    /// hook's very last lines. Bounded because a grandchild may hold stderr open forever.
    pub async fn settle(&mut self, within: Duration) {
        if let Some(task) = self.task.as_mut() {
            if tokio::time::timeout(within, task).await.is_ok() {
                self.task = None;
            }
        }
    }
}

impl Drop for StderrDrain {
    fn drop(&mut self) {
        // The pipe closes when every holder is dead; if a stray grandchild keeps it open, do not
        // leave a task behind.
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

fn record(name: &str, tail: &StderrTail, line: String) {
    tracing::info!(target: "pi::hooks::stderr", hook = %name, "{line}");
    tail.push(line);
}

fn dropped_line(k: u64) -> String {
    format!("… {k} lines dropped")
}

async fn drain(stderr: HookStdout, name: String, limits: StderrLimits, tail: StderrTail) {
    let mut reader = BufReader::with_capacity(16 * 1024, stderr);
    let mut rate = RateLimit::new(limits.lines_per_sec, Instant::now());
    let mut line: Vec<u8> = Vec::new();
    let mut cut = false;
    let mut emit = |line: &mut Vec<u8>, cut: &mut bool| {
        let (admit, summary) = rate.admit(Instant::now());
        if let Some(k) = summary {
            record(&name, &tail, dropped_line(k));
        }
        if admit {
            let mut text = String::from_utf8_lossy(line).into_owned();
            if text.ends_with('\r') {
                text.pop();
            }
            if *cut {
                text.push_str(" …");
            }
            record(&name, &tail, text);
        }
        line.clear();
        *cut = false;
    };
    loop {
        let buf = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(buf) => buf,
        };
        // Work on what is buffered without copying more than `max_line` bytes of any line.
        let (chunk, newline) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let room = limits.max_line.saturating_sub(line.len());
        if chunk.len() > room {
            line.extend_from_slice(&chunk[..room]);
            cut = true;
        } else {
            line.extend_from_slice(chunk);
        }
        let used = chunk.len() + usize::from(newline);
        reader.consume(used);
        if newline {
            emit(&mut line, &mut cut);
        }
    }
    if !line.is_empty() {
        emit(&mut line, &mut cut);
    }
    let dropped = rate.take_dropped();
    if dropped > 0 {
        record(&name, &tail, dropped_line(dropped));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::spec::HookSource;
    use crate::watchdog::{describe_status, kill_group};
    use std::collections::HashMap;
    use tokio::io::AsyncReadExt;

    fn group_alive(group: ProcessGroup) -> bool {
        group.alive()
    }

    fn spec_for(program: &str, args: &[&str]) -> HookSpec {
        let program = which::which(program).unwrap_or_else(|_| PathBuf::from(program));
        let mut spec = HookSpec::new("t", program, HookSource::Cli);
        spec.args = args.iter().map(|s| s.to_string()).collect();
        spec
    }

    fn vars(dir: &Path) -> HookVars<'_> {
        HookVars {
            hook_name: "policy",
            project_dir: dir,
            session_id: Some("s-1"),
            protocol_version: 1,
            managed_home: None,
        }
    }

    #[test]
    fn environment_is_a_whitelist_plus_what_the_entry_names() {
        let parent: HashMap<&str, &str> = [
            ("PATH", "/bin"),
            ("HOME", "/home/u"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("GITHUB_TOKEN", "ghp"),
            ("PI_HOOK_NAME", "spoofed"),
        ]
        .into_iter()
        .collect();
        let lookup = |k: &str| parent.get(k).map(OsString::from);
        let mut spec = spec_for("true", &[]);
        spec.env = vec![
            ("MODE".into(), "strict".into()),
            ("PATH".into(), "/x".into()),
        ];
        spec.env_passthrough = vec!["GITHUB_TOKEN".into(), "UNSET_VAR".into()];
        let env = hook_environment(&spec, &vars(Path::new("/proj")), &lookup);
        let map: HashMap<String, String> = env
            .into_iter()
            .map(|(k, v)| (k.into_string().unwrap(), v.into_string().unwrap()))
            .collect();
        assert_eq!(map.get("PATH").map(String::as_str), Some("/x"));
        assert_eq!(map.get("HOME").map(String::as_str), Some("/home/u"));
        assert_eq!(map.get("GITHUB_TOKEN").map(String::as_str), Some("ghp"));
        assert_eq!(map.get("MODE").map(String::as_str), Some("strict"));
        assert_eq!(map.get("PI_HOOK_NAME").map(String::as_str), Some("policy"));
        assert_eq!(map.get("PI_PROJECT_DIR").map(String::as_str), Some("/proj"));
        assert_eq!(map.get("PI_SESSION_ID").map(String::as_str), Some("s-1"));
        assert_eq!(
            map.get("PI_PROTOCOL_VERSION").map(String::as_str),
            Some("1")
        );
        assert!(!map.contains_key("OPENAI_API_KEY"));
        assert!(!map.contains_key("ANTHROPIC_API_KEY"));
        assert!(!map.contains_key("UNSET_VAR"));
        assert_eq!(map.len(), 8);
    }

    #[test]
    fn registrations_resolve_in_what_the_entry_grants_without_the_hosts_variables() {
        let mut spec = spec_for("h", &[]);
        spec.env_passthrough = vec!["PATH".into()];
        spec.env = vec![("OWN".into(), "o".into())];
        let env = granted_env(&spec);
        assert_eq!(env.resolve("$OWN").unwrap(), "o");
        assert!(env.check("$PATH").is_ok());
        assert!(env.check("$PI_HOOK_NAME").is_err());
        assert!(env.check("$CARGO_PKG_NAME").is_err(), "not granted");
    }

    #[tokio::test]
    async fn spawned_process_sees_exactly_that_environment() {
        let dir = tempfile::tempdir().unwrap();
        let parent = |k: &str| match k {
            "PATH" => std::env::var_os("PATH"),
            "OPENAI_API_KEY" => Some("sk-leak".into()),
            _ => None,
        };
        let spec = spec_for("env", &[]);
        let env = hook_environment(&spec, &vars(dir.path()), &parent);
        let mut p = spawn(&spec, dir.path(), &env, "t", StderrLimits::default())
            .await
            .unwrap();
        let mut out = String::new();
        p.stdout.read_to_string(&mut out).await.unwrap();
        assert!(p.child.wait().await.unwrap().success());
        assert!(out.contains("PI_HOOK_NAME=policy"), "{out}");
        assert!(!out.contains("OPENAI_API_KEY"), "{out}");
        let names: Vec<&str> = out.lines().filter_map(|l| l.split('=').next()).collect();
        assert_eq!(names.len(), 5, "{out}"); // PATH + 4 PI_* vars
    }

    #[tokio::test]
    async fn spawn_failure_names_the_program() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec_for("/nonexistent/hook-binary", &[]);
        let Err(e) = spawn(&spec, dir.path(), &[], "t", StderrLimits::default()).await else {
            panic!("spawned a missing program")
        };
        let msg = e.to_string();
        assert!(msg.contains("/nonexistent/hook-binary"), "{msg}");
        assert!(matches!(e, SpawnError::Spawn { .. }));
    }

    #[tokio::test]
    async fn stderr_is_drained_rate_limited_and_cut() {
        let dir = tempfile::tempdir().unwrap();
        // 3000 lines, one of them 10 kB long, as fast as the shell can.
        let script = "i=0; while [ $i -lt 3000 ]; do echo line $i >&2; i=$((i+1)); done; \
                      head -c 10000 /dev/zero | tr '\\0' x >&2; echo >&2; echo last >&2";
        let spec = spec_for("sh", &["-c", script]);
        let env = hook_environment(&spec, &vars(dir.path()), &|k| std::env::var_os(k));
        let limits = StderrLimits {
            max_line: 100,
            lines_per_sec: 50,
            tail: 5,
        };
        let mut p = spawn(&spec, dir.path(), &env, "t", limits).await.unwrap();
        assert!(p.child.wait().await.unwrap().success());
        p.stderr.settle(Duration::from_secs(10)).await;
        let tail = p.stderr.tail.last(10);
        assert!(tail.len() <= 5, "{tail:?}");
        assert!(tail.iter().any(|l| l.contains("lines dropped")), "{tail:?}");
        assert!(tail.iter().all(|l| l.len() <= 110), "{tail:?}");
    }

    async fn output_of(
        spec: &HookSpec,
        verified: crate::hooks::spec::Verified,
        dir: &Path,
    ) -> String {
        let env = hook_environment(spec, &vars(dir), &|k| std::env::var_os(k));
        let mut p = spawn_verified(spec, verified, dir, &env, "t", StderrLimits::default())
            .await
            .unwrap();
        let mut out = String::new();
        p.stdout.read_to_string(&mut out).await.unwrap();
        assert!(p.child.wait().await.unwrap().success(), "{out}");
        out
    }

    /// Item 3: the program that runs is the file that was verified, even when its path is
    /// swapped between the check and the exec (here a symlink to a system binary, re-pointed).
    #[tokio::test]
    async fn a_pinned_program_runs_from_the_verified_file_whatever_its_path_says_now() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("policy");
        let echo = which::which("echo").unwrap();
        std::os::unix::fs::symlink(&echo, &link).unwrap();
        let mut spec = HookSpec::new("h", link.clone(), HookSource::Managed);
        spec.args = vec!["verified echo ran".into()];
        spec.sha256 = Some(crate::hooks::spec::sha256_file(&echo).unwrap());
        let verified = spec.verify(dir.path()).unwrap();
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(which::which("true").unwrap(), &link).unwrap();
        assert_eq!(
            output_of(&spec, verified, dir.path()).await,
            "verified echo ran\n"
        );
        // A fresh start checks the path again and refuses what is there now.
        let env = hook_environment(&spec, &vars(dir.path()), &|k| std::env::var_os(k));
        let e = spawn(&spec, dir.path(), &env, "t", StderrLimits::default()).await;
        assert!(matches!(e, Err(SpawnError::Pin(PinError::Mismatch { .. }))));
    }

    /// Item 3 for an interpreter entry: the interpreter reads the verified script through
    /// `/proc/self/fd/4`, not the file that replaced it.
    #[tokio::test]
    async fn a_pinned_script_is_read_from_the_verified_file_after_a_swap() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("hook.sh");
        std::fs::write(&script, "echo original \"$0\" \"$1\"\n").unwrap();
        let sh = which::which("sh").unwrap();
        let mut spec = HookSpec::new("h", sh.clone(), HookSource::Managed);
        spec.args = vec!["hook.sh".into(), "arg".into()];
        spec.sha256 = Some(crate::hooks::spec::sha256_file(&script).unwrap());
        spec.interpreter_sha256 = Some(crate::hooks::spec::sha256_file(&sh).unwrap());
        let verified = spec.verify(dir.path()).unwrap();
        let swap = dir.path().join("swap.sh");
        std::fs::write(&swap, "echo replacement\n").unwrap();
        std::fs::rename(&swap, &script).unwrap();
        assert_eq!(
            output_of(&spec, verified, dir.path()).await,
            "original /proc/self/fd/4 arg\n"
        );
    }

    #[tokio::test]
    async fn killing_the_group_reaches_grandchildren() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec_for("sh", &["-c", "sleep 60 & sleep 60 & wait"]);
        let env = hook_environment(&spec, &vars(dir.path()), &|k| std::env::var_os(k));
        let mut p = spawn(&spec, dir.path(), &env, "t", StderrLimits::default())
            .await
            .unwrap();
        assert!(group_alive(p.pgid));
        let status = kill_group(&mut p.child, p.pgid).await;
        assert!(status.is_some_and(|s| describe_status(&s).contains("SIGKILL")));
        assert!(!group_alive(p.pgid));
    }
}
