//! Shared support for the integration tests: the mock model server ([`mock`]), a hermetic
//! [`TestAgent`] that runs the real `pi` binary, and small helpers to read JSON-mode output,
//! provider request bodies and process state.

#![allow(dead_code)]

pub mod hooks;
pub mod mcp;
pub mod mock;
pub mod mock_bedrock;
pub mod mock_google;
pub mod mock_mistral;
mod mock_responses;
pub mod pty;
pub mod rpc;
pub mod ts_pi;
pub mod wire;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::io::AsyncWriteExt;

pub use mock::{MockModel, MockUsage, Turn};

/// Upper bound for one `pi` run; a run that takes longer is killed and the test fails.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(90);

/// A hermetic environment for running `pi`: its own agent dir (`PI_CODING_AGENT_DIR`), `HOME`,
/// `TMPDIR` and project directory (the working directory), and an environment with nothing
/// inherited but `PATH` — so no real API keys, settings or sessions can leak in or out.
pub struct TestAgent {
    _root: TempDir,
    pub agent_dir: PathBuf,
    pub home: PathBuf,
    pub tmp: PathBuf,
    pub cwd: PathBuf,
    env: Vec<(String, String)>,
    scripts: AtomicUsize,
}

impl TestAgent {
    pub fn new() -> TestAgent {
        let root = tempfile::Builder::new()
            .prefix("pi-it-")
            .tempdir()
            .expect("temp dir");
        let base = root.path().canonicalize().expect("canonical temp dir");
        let [agent_dir, home, tmp, cwd] = ["agent", "home", "tmp", "project"].map(|d| base.join(d));
        for d in [&agent_dir, &home, &tmp, &cwd] {
            std::fs::create_dir_all(d).expect("create dir");
        }
        TestAgent {
            _root: root,
            agent_dir,
            home,
            tmp,
            cwd,
            env: Vec::new(),
            scripts: AtomicUsize::new(0),
        }
    }

    /// A test agent whose models.json points at `mock` (providers `mock` and `mock-anthropic`).
    pub fn with_mock(mock: &MockModel) -> TestAgent {
        let agent = TestAgent::new();
        agent.write_models(&mock.models_json());
        agent
    }

    pub fn write_models(&self, models: &Value) {
        write_json(&self.agent_dir.join("models.json"), models);
    }

    pub fn write_settings(&self, settings: &Value) {
        write_json(&self.agent_dir.join("settings.json"), settings);
    }

    /// Make retries immediate (settings `retry.baseDelayMs: 1`).
    pub fn fast_retries(&self) {
        self.write_settings(
            &json!({"retry": {"enabled": true, "maxRetries": 3, "baseDelayMs": 1}}),
        );
    }

    /// The extra environment variables set with [`TestAgent::env`].
    pub fn extra_env(&self) -> &[(String, String)] {
        &self.env
    }

    /// Set an extra environment variable for every run.
    pub fn env(&mut self, key: &str, value: &str) {
        self.env.push((key.to_string(), value.to_string()));
    }

    /// Write a file in the project directory (parents created); returns its absolute path.
    pub fn write_file(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.cwd.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create parent");
        }
        std::fs::write(&p, contents).expect("write file");
        p
    }

    pub fn read_file(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.cwd.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }

    pub fn read_string(&self, rel: &str) -> String {
        String::from_utf8(self.read_file(rel)).expect("utf-8")
    }

    /// Write a faux script `{"steps": steps}` outside the project; returns its path.
    pub fn faux_script(&self, steps: Value) -> PathBuf {
        let n = self.scripts.fetch_add(1, Ordering::SeqCst);
        let p = self
            .agent_dir
            .parent()
            .expect("root")
            .join(format!("faux-{n}.json"));
        write_json(&p, &json!({ "steps": steps }));
        p
    }

    /// `--provider faux --faux-script <script of steps>`.
    pub fn faux_args(&self, steps: Value) -> Vec<String> {
        let script = self.faux_script(steps);
        vec![
            "--provider".into(),
            "faux".into(),
            "--faux-script".into(),
            path_str(&script),
        ]
    }

    /// A configured (not yet spawned) `pi` command in this environment, in its own process
    /// group, with stdin null and stdout/stderr piped.
    pub fn command<S: AsRef<str>>(&self, args: &[S]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_pi"));
        cmd.args(args.iter().map(|a| a.as_ref()))
            .current_dir(&self.cwd)
            .env_clear()
            .env(
                "PATH",
                std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
            )
            .env("HOME", &self.home)
            .env("TMPDIR", &self.tmp)
            .env("PI_CODING_AGENT_DIR", &self.agent_dir)
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        cmd
    }

    pub async fn run<S: AsRef<str>>(&self, args: &[S]) -> Output {
        self.run_with_stdin(args, None).await
    }

    /// Run `pi` with `args`, feeding `stdin` (then EOF) if given; bounded by [`RUN_TIMEOUT`].
    pub async fn run_with_stdin<S: AsRef<str>>(&self, args: &[S], stdin: Option<&str>) -> Output {
        let mut cmd = self.command(args);
        if stdin.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn().expect("spawn pi");
        let pid = child.id().expect("pid") as i32;
        if let Some(input) = stdin {
            let mut pipe = child.stdin.take().expect("stdin pipe");
            // A pi that exits without reading its input (a usage error) closes the pipe
            // first; what it said is the test's to judge.
            if let Err(e) = pipe.write_all(input.as_bytes()).await {
                assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
            }
            drop(pipe);
        }
        match tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output()).await {
            Ok(out) => Output::from(out.expect("wait for pi")),
            Err(_) => {
                kill_group(pid);
                panic!(
                    "pi {:?} did not finish within {RUN_TIMEOUT:?}",
                    args.iter().map(|a| a.as_ref()).collect::<Vec<_>>()
                );
            }
        }
    }

    /// Run with a faux script of `steps` followed by `args`.
    pub async fn run_faux<S: AsRef<str>>(&self, steps: Value, args: &[S]) -> Output {
        let mut all = self.faux_args(steps);
        all.extend(args.iter().map(|a| a.as_ref().to_string()));
        self.run(&all).await
    }

    /// Run a faux JSON-mode session in which the model makes `calls` (one turn, in order),
    /// then answers "done". Extra CLI args (e.g. `--tools`) go in `args`. pi's own `hook_*`
    /// events are on (`--hook-events`): the tests read the hooks' decisions.
    pub async fn run_tools(&self, calls: Value, args: &[&str]) -> Output {
        let steps = json!([{ "toolCalls": calls }, { "text": "done" }]);
        let mut all: Vec<&str> = vec!["--mode", "json", "--hook-events"];
        all.extend_from_slice(args);
        all.push("use the tools");
        self.run_faux(steps, &all).await
    }
}

/// What a `pi` run produced.
pub struct Output {
    pub status: ExitStatus,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<std::process::Output> for Output {
    fn from(o: std::process::Output) -> Output {
        Output {
            status: o.status,
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

impl Output {
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Output {
        assert_eq!(self.code, Some(code), "unexpected exit status\n{self}");
        self
    }

    #[track_caller]
    pub fn assert_ok(&self) -> &Output {
        self.assert_code(0)
    }

    /// stdout as JSON lines; panics (showing the line) if any line is not a JSON object.
    #[track_caller]
    pub fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| match serde_json::from_str::<Value>(l) {
                Ok(v) if v.is_object() => v,
                _ => panic!("stdout line is not a JSON object: {l:?}\n{self}"),
            })
            .collect()
    }
}

/// Events of one `type`.
pub fn of_type<'a>(events: &'a [Value], ty: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == ty).collect()
}

/// A finished tool execution, from a `tool_execution_end` event.
#[derive(Debug, Clone)]
pub struct ToolEnd {
    pub id: String,
    pub name: String,
    pub text: String,
    pub is_error: bool,
    pub details: Value,
}

/// Every `tool_execution_end` of the model's own calls, in emission order: a hook's nested
/// `tools.execute` reports its events too, but adds no tool-result message, and is left out.
pub fn tool_ends(events: &[Value]) -> Vec<ToolEnd> {
    let results: Vec<&Value> = of_type(events, "message_end")
        .into_iter()
        .filter(|e| e["message"]["role"] == "toolResult")
        .map(|e| &e["message"]["toolCallId"])
        .collect();
    of_type(events, "tool_execution_end")
        .into_iter()
        .filter(|e| results.contains(&&e["toolCallId"]))
        .map(|e| ToolEnd {
            id: e["toolCallId"].as_str().unwrap_or_default().to_string(),
            name: e["toolName"].as_str().unwrap_or_default().to_string(),
            text: blocks_text(&e["result"]["content"]),
            is_error: e["isError"].as_bool().unwrap_or(false),
            details: e["result"]["details"].clone(),
        })
        .collect()
}

/// The single tool result of a run, with a helpful panic otherwise.
#[track_caller]
pub fn only_tool_end(out: &Output) -> ToolEnd {
    let ends = tool_ends(&out.events());
    assert_eq!(ends.len(), 1, "expected exactly one tool result\n{out}");
    ends[0].clone()
}

/// Concatenated `text` of pi content blocks (or the string itself).
pub fn blocks_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

pub fn write_json(p: &Path, v: &Value) {
    std::fs::write(p, serde_json::to_vec_pretty(v).expect("json")).expect("write json");
}

pub fn path_str(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_string()
}

/// Kill a whole process group (cleanup after a hung run).
pub fn kill_group(pgid: i32) {
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// True once `pid` no longer runs (gone, or a zombie waiting to be reaped).
pub fn process_gone(pid: i32) -> bool {
    if nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err() {
        return true;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state field follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
            .unwrap_or(false),
        Err(_) => true,
    }
}

/// Poll `cond` until it holds or `limit` passes (last resort where nothing can be awaited).
pub fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if cond() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Read a pid written by a shell command (`echo $! > file`), waiting for the file to appear.
#[track_caller]
pub fn read_pid(path: &Path) -> i32 {
    let mut pid = None;
    let found = wait_until(Duration::from_secs(30), || {
        pid = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok());
        pid.is_some()
    });
    assert!(found, "pid file {} never appeared", path.display());
    pid.unwrap_or_default()
}
