//! The `bash` tool: runs a command through `bash -c` in the working directory and returns its
//! merged stdout/stderr, tail-truncated to 2000 lines / 50 KB as pi does.
//!
//! Output is accumulated with bounded memory: once it exceeds the limits everything is streamed
//! to a spill file (kept, so the model can read it later) and only a rolling tail stays in
//! memory. Process-group handling lives in [`super::process`].

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{json, Value};

use super::details::{push_notice, showing_lines, truncation_json};
use super::process::{self, Ending, OutputSink, RunOptions, ShellCommand};
use super::shell_env::ShellEnvironment;
use super::truncate::{
    format_size, full_text_file, truncate_tail, Limits, TruncatedBy, Truncation,
};
use super::{Tool, ToolContext, ToolError, ToolOutput};
use crate::message::Content;

/// Minimum spacing of streamed partial results.
pub const UPDATE_THROTTLE: Duration = Duration::from_millis(100);

/// The bash tool. `shell_path` and `command_prefix` come from the `shellPath` and
/// `shellCommandPrefix` settings, `environment` from `shellEnvironment` and the credential
/// variables pi knows.
#[derive(Debug, Clone, Default)]
pub struct BashTool {
    pub shell_path: Option<PathBuf>,
    pub command_prefix: Option<String>,
    pub environment: Arc<ShellEnvironment>,
}

impl BashTool {
    pub fn new(
        shell_path: Option<PathBuf>,
        command_prefix: Option<String>,
        environment: ShellEnvironment,
    ) -> Self {
        BashTool {
            shell_path,
            command_prefix,
            environment: Arc::new(environment),
        }
    }
}

/// Where the full output of a long run went.
struct Spill {
    path: PathBuf,
    file: Option<BufWriter<File>>,
}

/// Streaming output with bounded memory (pi's `OutputAccumulator`): exact totals, a rolling
/// tail for display, and a spill file holding everything once the output is too big to show.
pub struct OutputAccumulator {
    limits: Limits,
    /// Everything so far, only until the spill file exists.
    pending: Vec<u8>,
    /// The last 1–2 × `rolling` bytes; enough to tail-truncate exactly.
    tail: Vec<u8>,
    rolling: usize,
    tail_at_line_start: bool,
    total_bytes: usize,
    completed_lines: usize,
    current_line_bytes: usize,
    last_complete_line_bytes: usize,
    spill: Option<Spill>,
    spill_failed: bool,
}

/// What the output looks like right now.
#[derive(Debug, Clone)]
pub struct OutputSnapshot {
    pub content: String,
    pub truncation: Truncation,
    pub full_output_path: Option<PathBuf>,
    /// Size of the last line, for the "line is N" note of an over-long last line.
    pub last_line_bytes: usize,
}

impl Default for OutputAccumulator {
    fn default() -> Self {
        Self::new(Limits::default())
    }
}

impl OutputAccumulator {
    pub fn new(limits: Limits) -> Self {
        OutputAccumulator {
            limits,
            pending: Vec::new(),
            tail: Vec::new(),
            rolling: limits.max_bytes.saturating_mul(2).max(1),
            tail_at_line_start: true,
            total_bytes: 0,
            completed_lines: 0,
            current_line_bytes: 0,
            last_complete_line_bytes: 0,
            spill: None,
            spill_failed: false,
        }
    }

    fn total_lines(&self) -> usize {
        self.completed_lines + usize::from(self.current_line_bytes > 0)
    }

    fn over_limits(&self) -> bool {
        self.total_bytes > self.limits.max_bytes || self.total_lines() > self.limits.max_lines
    }

    pub fn append(&mut self, chunk: &[u8]) {
        self.total_bytes += chunk.len();
        for &b in chunk {
            if b == b'\n' {
                self.completed_lines += 1;
                self.last_complete_line_bytes = self.current_line_bytes;
                self.current_line_bytes = 0;
            } else {
                self.current_line_bytes += 1;
            }
        }
        self.tail.extend_from_slice(chunk);
        if self.tail.len() > self.rolling * 2 {
            self.trim_tail();
        }
        if self.spill.is_some() || self.over_limits() {
            self.ensure_spill();
            self.write_spill(chunk);
        } else {
            self.pending.extend_from_slice(chunk);
        }
    }

    fn trim_tail(&mut self) {
        let mut start = self.tail.len() - self.rolling;
        // Never start inside a UTF-8 sequence, or decoding would invent a replacement char.
        while start < self.tail.len() && (self.tail[start] & 0xC0) == 0x80 {
            start += 1;
        }
        self.tail_at_line_start = self.tail[start - 1] == b'\n';
        self.tail.drain(..start);
    }

    fn ensure_spill(&mut self) {
        if self.spill.is_some() || self.spill_failed {
            return;
        }
        let created = full_text_file("pi-bash-", ".log");
        match created {
            Ok((file, path)) => {
                let mut spill = Spill {
                    path,
                    file: Some(BufWriter::new(file)),
                };
                let pending = std::mem::take(&mut self.pending);
                write_to(&mut spill, &pending);
                self.spill = Some(spill);
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot create bash spill file; full output is lost");
                self.spill_failed = true;
                self.pending = Vec::new();
            }
        }
    }

    fn write_spill(&mut self, chunk: &[u8]) {
        if let Some(spill) = &mut self.spill {
            write_to(spill, chunk);
        }
    }

    /// Flush the spill file; the accumulator stays readable.
    pub fn finish(&mut self) {
        if let Some(spill) = &mut self.spill {
            if let Some(mut f) = spill.file.take() {
                if let Err(e) = f.flush() {
                    tracing::warn!(path = %spill.path.display(), error = %e, "cannot flush bash spill file");
                }
            }
        }
    }

    pub fn snapshot(&mut self) -> OutputSnapshot {
        let total_lines = self.total_lines();
        let last_line_bytes = if self.current_line_bytes > 0 {
            self.current_line_bytes
        } else {
            self.last_complete_line_bytes
        };
        if !self.over_limits() {
            // Below the limits the tail has never been trimmed: it is the whole output.
            let content = String::from_utf8_lossy(&self.tail).into_owned();
            return OutputSnapshot {
                truncation: Truncation {
                    truncated: false,
                    truncated_by: None,
                    total_lines,
                    total_bytes: self.total_bytes,
                    output_lines: total_lines,
                    output_bytes: content.len(),
                    last_line_partial: false,
                    first_line_exceeds_limit: false,
                    content: content.clone(),
                },
                content,
                full_output_path: None,
                last_line_bytes,
            };
        }
        self.ensure_spill();
        let mut bytes: &[u8] = &self.tail;
        if !self.tail_at_line_start {
            // The first line was cut by trimming; drop it unless it is the only one.
            if let Some(nl) = bytes.iter().position(|&b| b == b'\n') {
                bytes = &bytes[nl + 1..];
            }
        }
        // A trailing newline ends the last line; it does not start an empty one.
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let text = String::from_utf8_lossy(bytes);
        let mut t = truncate_tail(&text, self.limits);
        t.truncated = true;
        if t.truncated_by.is_none() {
            t.truncated_by = Some(if self.total_bytes > self.limits.max_bytes {
                TruncatedBy::Bytes
            } else {
                TruncatedBy::Lines
            });
        }
        t.total_lines = total_lines;
        t.total_bytes = self.total_bytes;
        OutputSnapshot {
            content: t.content.clone(),
            truncation: t,
            full_output_path: self.spill.as_ref().map(|s| s.path.clone()),
            last_line_bytes,
        }
    }
}

fn write_to(spill: &mut Spill, bytes: &[u8]) {
    if let Some(f) = &mut spill.file {
        if let Err(e) = f.write_all(bytes) {
            tracing::warn!(path = %spill.path.display(), error = %e, "cannot write bash spill file");
            spill.file = None;
        }
    }
}

impl OutputSnapshot {
    /// The text for the model: output (or `empty`), plus pi's truncation note.
    pub fn render(&self, empty: &str) -> String {
        let mut text = if self.content.is_empty() {
            empty.to_string()
        } else {
            self.content.clone()
        };
        let t = &self.truncation;
        if t.truncated {
            let path = self
                .full_output_path
                .as_ref()
                .map_or_else(|| "(unavailable)".to_string(), |p| p.display().to_string());
            let end = t.total_lines;
            let start = (end + 1).saturating_sub(t.output_lines);
            let shown = if t.last_line_partial {
                format!(
                    "Showing last {} of line {end} (line is {})",
                    format_size(t.output_bytes),
                    format_size(self.last_line_bytes),
                )
            } else {
                let by_bytes = t.truncated_by != Some(TruncatedBy::Lines);
                showing_lines(start, end, end, by_bytes)
            };
            push_notice(&mut text, &format!("{shown}. Full output: {path}"));
        }
        text
    }

    /// `{truncation, fullOutputPath}` when truncated, as pi's `BashToolDetails`.
    pub fn details(&self, limits: Limits) -> Option<Value> {
        if !self.truncation.truncated {
            return None;
        }
        let mut d = json!({ "truncation": truncation_json(&self.truncation, limits) });
        if let Some(p) = &self.full_output_path {
            d["fullOutputPath"] = Value::from(p.display().to_string());
        }
        Some(d)
    }
}

/// Feeds the accumulator and sends throttled partial results.
struct Streamer<'a> {
    acc: OutputAccumulator,
    ctx: &'a ToolContext,
    dirty: bool,
    last_emit: Option<Instant>,
}

impl Streamer<'_> {
    fn emit(&mut self) {
        self.dirty = false;
        self.last_emit = Some(Instant::now());
        let snap = self.acc.snapshot();
        self.ctx.send_update(ToolOutput {
            content: vec![Content::text(snap.content.clone())],
            // pi sends `{}` while nothing is truncated (its undefined fields vanish in JSON).
            details: Some(
                snap.details(Limits::default())
                    .unwrap_or_else(|| Value::Object(Default::default())),
            ),
            ..Default::default()
        });
    }

    fn due(&self) -> bool {
        self.last_emit
            .is_none_or(|t| t.elapsed() >= UPDATE_THROTTLE)
    }
}

impl OutputSink for Streamer<'_> {
    fn data(&mut self, chunk: &[u8]) {
        self.acc.append(chunk);
        if self.ctx.updates.is_some() {
            self.dirty = true;
            if self.due() {
                self.emit();
            }
        }
    }

    /// Output that arrived within [`UPDATE_THROTTLE`] of the last update goes out when that
    /// time is up.
    fn flush_at(&self) -> Option<Instant> {
        self.dirty
            .then(|| self.last_emit.map(|t| t + UPDATE_THROTTLE))
            .flatten()
    }

    fn flush(&mut self) {
        if self.dirty {
            self.emit();
        }
    }
}

/// `1` for whole seconds, `1.5` otherwise, as JavaScript prints numbers.
fn format_seconds(s: f64) -> String {
    if s.fract() == 0.0 && s.abs() < 1e15 {
        format!("{}", s as i64)
    } else {
        format!("{s}")
    }
}

fn status_after(text: &str, status: &str) -> String {
    if text.is_empty() {
        status.to_string()
    } else {
        format!("{text}\n\n{status}")
    }
}

#[async_trait]
impl Tool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        "Execute a bash command in the current working directory. Returns stdout and stderr. \
         Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, \
         full output is saved to a temp file. Optionally provide a timeout in seconds."
    }

    fn constrained_sampling(&self) -> Option<Value> {
        Some(super::builtin_constrained_sampling())
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["command"],
            "properties": {
                "command": {"type": "string", "description": "Shell command to execute"},
                "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"}
            }
        })
    }

    fn prompt_snippet(&self) -> Option<String> {
        Some("Execute bash commands (ls, grep, find, etc.)".to_string())
    }

    fn prompt_guidelines(&self) -> Vec<String> {
        vec![
            "You can inspect PI_* environment variables for current model and session details."
                .into(),
        ]
    }

    async fn execute(
        &self,
        _call_id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::Failed("command must be a string".into()))?;
        // pi only arms the timer for a positive timeout; absurdly large values mean "none".
        let timeout_secs = args
            .get("timeout")
            .and_then(Value::as_f64)
            .filter(|t| t.is_finite() && *t > 0.0);
        let timeout = timeout_secs.and_then(|t| Duration::try_from_secs_f64(t).ok());
        let command = match self.command_prefix.as_deref() {
            Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
            _ => command.to_string(),
        };
        if !ctx.cwd.is_dir() {
            return Err(ToolError::Failed(format!(
                "Working directory does not exist: {}\nCannot execute bash commands.",
                ctx.cwd.display()
            )));
        }
        let shell = self
            .shell_path
            .clone()
            .unwrap_or_else(process::default_shell);

        let env = self.environment.for_process(&ctx.env);

        ctx.send_update(ToolOutput::default());
        let mut streamer = Streamer {
            acc: OutputAccumulator::default(),
            ctx,
            dirty: false,
            last_emit: None,
        };
        let began = Instant::now();
        let ending = process::run_shell(
            ShellCommand {
                shell: &shell,
                command: &command,
                cwd: &ctx.cwd,
                env: &env,
            },
            RunOptions {
                timeout,
                cancel: &ctx.cancel,
            },
            &mut streamer,
        )
        .await
        .map_err(|e| ToolError::Failed(e.to_string()))?;
        if streamer.dirty {
            streamer.emit();
        }
        let mut acc = streamer.acc;
        acc.finish();
        outcome(ending, &acc.snapshot(), timeout_secs, began.elapsed())
    }
}

/// What the model gets once the shell is gone: the output with pi's status line under it,
/// as a failure unless the command exited 0 (or a signal ended the shell, as pi has it), and
/// pi 1.6's `structuredContent` for a command that exited.
fn outcome(
    ending: Ending,
    snap: &OutputSnapshot,
    timeout_secs: Option<f64>,
    wall: std::time::Duration,
) -> Result<ToolOutput, ToolError> {
    let details = snap.details(Limits::default());
    // A thrown failure (timeout, abort): pi 1.6's error result has `details: {}`.
    let failed = |text: String| {
        ToolError::FailedWithOutput(Box::new(ToolOutput {
            content: vec![Content::text(text)],
            details: Some(details.clone().unwrap_or_else(|| json!({}))),
            ..Default::default()
        }))
    };
    match ending {
        Ending::Exited(code) => {
            let text = snap.render("(no output)");
            let structured_content =
                code.map(|c| super::bash_structured::structured(snap, c, wall));
            match code {
                Some(c) if c != 0 => Err(ToolError::FailedWithOutput(Box::new(ToolOutput {
                    content: vec![Content::text(status_after(
                        &text,
                        &format!("Command exited with code {c}"),
                    ))],
                    details: details.clone(),
                    structured_content,
                    ..Default::default()
                }))),
                // No code means a signal ended the shell; pi reports that as success.
                _ => Ok(ToolOutput {
                    content: vec![Content::text(text)],
                    details: details.clone(),
                    structured_content,
                    ..Default::default()
                }),
            }
        }
        Ending::TimedOut => {
            let secs = timeout_secs.map(format_seconds).unwrap_or_default();
            Err(failed(status_after(
                &snap.render(""),
                &format!("Command timed out after {secs} seconds"),
            )))
        }
        // Said even without output, as pi 1.6 does.
        Ending::Aborted => Err(failed(status_after(&snap.render(""), "Command aborted"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::text_of;
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    use std::path::Path;
    use tokio::sync::mpsc;

    fn spill_prefix_matches(path: &Path) -> bool {
        path.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("pi-bash-") && n.ends_with(".log"))
    }

    fn ctx() -> ToolContext {
        ToolContext::new(std::env::temp_dir())
    }

    async fn run(ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        BashTool::default().execute("id", args, ctx).await
    }

    fn error_text(e: ToolError) -> String {
        match e {
            ToolError::FailedWithOutput(o) => text_of(&o.content),
            other => panic!("expected FailedWithOutput, got {other:?}"),
        }
    }

    fn pids_in(text: &str) -> Vec<Pid> {
        text.split_whitespace()
            .filter_map(|w| w.strip_prefix("pid="))
            .map(|p| Pid::from_raw(p.parse().unwrap()))
            .collect()
    }

    /// Dead or a zombie: reaping orphans is init's job, and init here may never do it.
    fn dead(pid: Pid) -> bool {
        if kill(pid, None).is_err() {
            return true;
        }
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit_once(')').is_some_and(|(_, rest)| {
                    matches!(rest.trim_start().chars().next(), Some('Z' | 'X'))
                })
            })
            .unwrap_or(true)
    }

    /// SIGKILL is delivered asynchronously; allow the kernel a moment to finish the job.
    async fn gone(pid: Pid) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(1);
        while !dead(pid) {
            if std::time::Instant::now() > deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        true
    }

    #[tokio::test]
    async fn returns_output() {
        let out = run(&ctx(), json!({"command": "echo hello"})).await.unwrap();
        assert_eq!(text_of(&out.content), "hello\n");
        assert_eq!(out.details, None);
    }

    #[tokio::test]
    async fn empty_output_says_no_output() {
        let out = run(&ctx(), json!({"command": "true"})).await.unwrap();
        assert_eq!(text_of(&out.content), "(no output)");
    }

    #[tokio::test]
    async fn nonzero_exit_is_an_error_with_output() {
        let e = run(&ctx(), json!({"command": "echo oops >&2; exit 7"}))
            .await
            .unwrap_err();
        assert_eq!(error_text(e), "oops\n\n\nCommand exited with code 7");
        let e = run(&ctx(), json!({"command": "exit 2"})).await.unwrap_err();
        assert_eq!(error_text(e), "(no output)\n\nCommand exited with code 2");
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_tree() {
        let started = std::time::Instant::now();
        let e = run(
            &ctx(),
            json!({"command": "sleep 30 & echo pid=$!; sleep 30 & echo pid=$!; wait", "timeout": 0.5}),
        )
        .await
        .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2));
        let text = error_text(e);
        assert!(
            text.ends_with("\n\nCommand timed out after 0.5 seconds"),
            "{text}"
        );
        let pids = pids_in(&text);
        assert_eq!(pids.len(), 2);
        for pid in pids {
            assert!(gone(pid).await, "sleep {pid} survived the timeout");
        }
    }

    #[tokio::test]
    async fn abort_kills_the_whole_tree_and_keeps_output() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut c = ctx();
        c.updates = Some(tx);
        let cancel = c.cancel.clone();
        let task = tokio::spawn(async move {
            run(
                &c,
                json!({"command": "sleep 30 & echo pid=$!; sleep 30 & echo pid=$!; wait"}),
            )
            .await
        });
        // Abort once both pids have been streamed.
        loop {
            let update = rx.recv().await.unwrap();
            if pids_in(&text_of(&update.content)).len() == 2 {
                break;
            }
        }
        cancel.cancel();
        let text = error_text(task.await.unwrap().unwrap_err());
        assert!(text.ends_with("\n\nCommand aborted"), "{text}");
        for pid in pids_in(&text) {
            assert!(gone(pid).await, "sleep {pid} survived the abort");
        }
    }

    /// Waits for a partial result that contains `text`.
    async fn update_with(rx: &mut mpsc::UnboundedReceiver<ToolOutput>, text: &str) {
        loop {
            let update = tokio::time::timeout(Duration::from_secs(20), rx.recv())
                .await
                .expect("no update came")
                .expect("the tool ended first");
            if text_of(&update.content).contains(text) {
                return;
            }
        }
    }

    /// Output that arrives within the throttle window after an update is held back, and goes
    /// out on its own once the window is over, while the command still runs.
    #[tokio::test]
    async fn held_back_output_is_sent_when_the_throttle_window_ends() {
        let dir = tempfile::tempdir().unwrap();
        let (go, done) = (dir.path().join("go"), dir.path().join("done"));
        for f in [&go, &done] {
            nix::unistd::mkfifo(f, nix::sys::stat::Mode::S_IRWXU).unwrap();
        }
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut c = ctx();
        c.updates = Some(tx);
        let command = format!(
            "echo first; read x < '{}'; echo second; read y < '{}'",
            go.display(),
            done.display()
        );
        let task = tokio::spawn(async move { run(&c, json!({ "command": command })).await });
        update_with(&mut rx, "first").await;
        // "second" follows at once, inside the window: only the flush can deliver it before
        // the command ends, which it does not do until it is told to.
        std::fs::write(&go, "\n").unwrap();
        update_with(&mut rx, "second").await;
        std::fs::write(&done, "\n").unwrap();
        let out = task.await.unwrap().unwrap();
        assert_eq!(text_of(&out.content), "first\nsecond\n");
    }

    #[tokio::test]
    async fn abort_before_any_output_says_command_aborted() {
        let c = ctx();
        c.cancel.cancel();
        let e = run(&c, json!({"command": "sleep 30"})).await.unwrap_err();
        let ToolError::FailedWithOutput(out) = e else {
            panic!("{e:?}")
        };
        assert_eq!(text_of(&out.content), "Command aborted");
        assert_eq!(out.details, Some(json!({})));
    }

    #[tokio::test]
    async fn huge_output_is_tail_truncated_and_spilled() {
        let out = run(&ctx(), json!({"command": "seq 100000"})).await.unwrap();
        let text = text_of(&out.content);
        let details = out.details.unwrap();
        let path = PathBuf::from(details["fullOutputPath"].as_str().unwrap());
        assert!(spill_prefix_matches(&path));
        assert!(text.starts_with("98001\n"), "{}", &text[..20]);
        assert!(text.contains("\n100000\n\n[Showing lines 98001-100000 of 100000. Full output: "));
        assert!(text.ends_with(&format!("Full output: {}]", path.display())));
        assert_eq!(details["truncation"]["truncatedBy"], "lines");
        let full = std::fs::read_to_string(&path).unwrap();
        assert_eq!(full.lines().count(), 100_000);
        assert_eq!(full.lines().last(), Some("100000"));
        let _ = std::fs::remove_file(path);
    }

    #[tokio::test]
    async fn byte_truncation_says_limit() {
        // 1000 lines of 100 bytes: under the line limit, over 50KB.
        let out = run(
            &ctx(),
            json!({"command": "for i in $(seq 1000); do printf '%099d\\n' $i; done"}),
        )
        .await
        .unwrap();
        let text = text_of(&out.content);
        assert!(text.contains("[Showing lines 489-1000 of 1000 (50.0KB limit). Full output: "));
        let path = out.details.unwrap()["fullOutputPath"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 100_000);
        let _ = std::fs::remove_file(path);
    }

    #[tokio::test]
    async fn single_huge_line_shows_its_end() {
        let out = run(
            &ctx(),
            json!({"command": "head -c 70000 /dev/zero | tr '\\0' x"}),
        )
        .await
        .unwrap();
        let text = text_of(&out.content);
        assert!(
            text.contains("[Showing last 50.0KB of line 1 (line is 68.4KB). Full output: "),
            "{}",
            &text[text.len() - 200..]
        );
        let path = out.details.unwrap()["fullOutputPath"]
            .as_str()
            .unwrap()
            .to_string();
        let _ = std::fs::remove_file(path);
    }

    #[tokio::test]
    async fn env_and_prefix_reach_the_command() {
        let mut c = ctx();
        c.env.push(("PI_SESSION_ID".into(), "s1".into()));
        let tool = BashTool::new(None, Some("X=prefixed".into()), Default::default());
        let out = tool
            .execute(
                "id",
                json!({"command": "echo $X $PI_SESSION_ID $PI_CODING_AGENT"}),
                &c,
            )
            .await
            .unwrap();
        assert_eq!(text_of(&out.content), "prefixed s1 true\n");
    }

    #[tokio::test]
    async fn the_shell_gets_the_policy_environment_only() {
        let policy = crate::tools::shell_env::ShellEnvPolicy::from_setting(
            &json!({"inherit": "none", "set": {"A": "1"}}),
        )
        .unwrap();
        let tool = BashTool::new(None, None, ShellEnvironment::new(policy, []));
        let out = tool
            .execute(
                "id",
                json!({"command": "echo ${HOME-nohome} $A $PI_CODING_AGENT"}),
                &ctx(),
            )
            .await
            .unwrap();
        assert_eq!(text_of(&out.content), "nohome 1 true\n");
    }

    #[tokio::test]
    async fn missing_cwd_is_reported() {
        let c = ToolContext::new(PathBuf::from("/definitely/not/here"));
        let e = run(&c, json!({"command": "true"})).await.unwrap_err();
        assert!(e
            .to_string()
            .starts_with("Working directory does not exist"));
    }

    #[test]
    fn accumulator_keeps_memory_bounded() {
        let mut acc = OutputAccumulator::default();
        let line = [b'y'; 99].iter().chain(b"\n").copied().collect::<Vec<u8>>();
        for _ in 0..20_000 {
            acc.append(&line);
        }
        assert!(acc.tail.len() <= 4 * DEFAULT_ROLLING_CHECK);
        assert!(acc.pending.is_empty());
        let snap = acc.snapshot();
        assert_eq!(snap.truncation.total_lines, 20_000);
        assert!(snap.truncation.output_bytes <= 50 * 1024);
        if let Some(p) = snap.full_output_path {
            let _ = std::fs::remove_file(p);
        }
    }

    const DEFAULT_ROLLING_CHECK: usize = 50 * 1024;
}
