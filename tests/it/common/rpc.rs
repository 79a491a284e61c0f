//! A JSONL client of a program in RPC mode — TypeScript pi 1.6 (`ts_pi`) or our `pi` — so the
//! same scripted conversation drives both and their transcripts can be compared step by step.
//! [`TestAgent::rpc`] starts ours in the agent's hermetic environment.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

use super::{kill_group, TestAgent};

/// How long one RPC exchange may take before the test fails with the transcript so far.
pub const RPC_TIMEOUT: Duration = Duration::from_secs(30);

impl TestAgent {
    /// Our `pi --mode rpc` with `args`, in this agent's environment.
    pub fn rpc<S: AsRef<str>>(&self, args: &[S]) -> RpcProcess {
        let mut cmd = self.command(args);
        cmd.arg("--mode").arg("rpc").stdin(Stdio::piped());
        RpcProcess::spawn(cmd)
    }
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
    /// Everything the program wrote to stderr so far (for failure messages).
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    pub transcript: Vec<Step>,
}

impl RpcProcess {
    /// Spawn `cmd` (stdin and stdout must be piped, in its own process group).
    pub fn spawn(mut cmd: tokio::process::Command) -> RpcProcess {
        let mut child = cmd.spawn().expect("spawn the RPC program");
        let pid = child.id().expect("pid") as i32;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout piped");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        // Drained, so a chatty program never blocks on a full pipe.
        if let Some(err) = child.stderr.take() {
            let sink = stderr.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(err).lines();
                while let Ok(Some(l)) = lines.next_line().await {
                    let mut s = sink.lock().unwrap_or_else(|p| p.into_inner());
                    s.push_str(&l);
                    s.push('\n');
                }
            });
        }
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
            stderr,
            transcript: Vec::new(),
        }
    }

    /// The program's pid (and process group).
    pub fn pid(&self) -> i32 {
        self.pid
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

    /// The next stdout record if one comes within `limit`; `None` after `limit` of silence
    /// or at EOF (for draining what a program still says after a step).
    pub async fn next_within(&mut self, limit: Duration) -> Option<Value> {
        match tokio::time::timeout(limit, self.lines.recv()).await {
            Ok(Some(v)) => {
                self.transcript.push(Step::Out(v.clone()));
                Some(v)
            }
            _ => None,
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

    /// Everything the program wrote, stdout records and stderr, as one text (for leak checks).
    pub fn output(&self) -> String {
        let records: Vec<String> = self
            .transcript
            .iter()
            .filter(|s| matches!(s, Step::Out(_)))
            .map(|s| s.to_json().to_string())
            .collect();
        let stderr = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        format!("{}\n{stderr}", records.join("\n"))
    }

    /// The last steps, abridged, for failure messages.
    pub fn tail(&self) -> String {
        let from = self.transcript.len().saturating_sub(20);
        let steps = self.transcript[from..]
            .iter()
            .map(|s| {
                let line = s.to_json().to_string();
                line.chars().take(300).collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n");
        let stderr = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        let from = stderr.len().saturating_sub(2000);
        let stderr = stderr.get(from..).unwrap_or("");
        format!("{steps}\nstderr:\n{stderr}")
    }
}

impl Drop for RpcProcess {
    fn drop(&mut self) {
        // Tools the program started (a `sleep` in a bash call) live in its process group.
        kill_group(self.pid);
    }
}
