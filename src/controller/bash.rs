//! The user's own shell command (pi's `!cmd`, RPC `bash`): first the `user_bash` hooks (the
//! first that answers with a result ran it; one that fails, or an abort while one decides,
//! means the command does not run), otherwise `<shell> -c` in the project directory with the
//! model's filtered shell environment, its output streamed as `bash_execution_update` events
//! and kept with bounded memory as the `bash` tool keeps it. The result is stored as a
//! `bashExecution` message that reaches the model with the next prompt (unless
//! `excludeFromContext`); one that finishes during a run is stored when the run settles, so
//! it never lands inside a turn.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{lock, BashOutcome, BashRequest, ControllerError, Core, SessionController};
use crate::agent::events::AgentEvent;
use crate::hooks::protocol::UserBashResult;
use crate::message::now_ms;
use crate::session::AgentMessage;
use crate::tools::bash::OutputAccumulator;
use crate::tools::process::{self, Ending, OutputSink, RunOptions, ShellCommand};
use crate::tools::shell_env::ShellEnvironment;

/// How the user's commands run: `shellPath`, `shellCommandPrefix` and the environment policy.
pub(crate) struct UserShell {
    pub shell_path: Option<PathBuf>,
    pub command_prefix: Option<String>,
    pub environment: Arc<ShellEnvironment>,
}

/// Clears the running command's token however the command ends.
struct Running<'a>(&'a Core);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        *lock(&self.0.bash) = None;
    }
}

/// Streams output as `bash_execution_update {id, delta}` while the accumulator keeps what the
/// result shows.
struct Stream<'a> {
    acc: OutputAccumulator,
    core: &'a Core,
    id: Option<String>,
    /// The start of a UTF-8 character split across reads.
    carry: Vec<u8>,
}

impl OutputSink for Stream<'_> {
    fn data(&mut self, chunk: &[u8]) {
        self.acc.append(chunk);
        let delta = take_utf8(&mut self.carry, chunk);
        if !delta.is_empty() {
            self.core.emit(AgentEvent::BashExecutionUpdate {
                id: self.id.clone(),
                delta,
            });
        }
    }
}

/// The complete UTF-8 text of `carry` + `chunk`; an incomplete character at the end waits in
/// `carry` for the next chunk (bytes that can never be UTF-8 are replaced).
fn take_utf8(carry: &mut Vec<u8>, chunk: &[u8]) -> String {
    carry.extend_from_slice(chunk);
    let complete = match std::str::from_utf8(carry) {
        Ok(_) => carry.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => carry.len(),
    };
    let text = String::from_utf8_lossy(&carry[..complete]).into_owned();
    carry.drain(..complete);
    text
}

/// pi's `BashExecutionMessage`.
fn execution_message(req: &BashRequest, out: &BashOutcome) -> AgentMessage {
    let mut m = json!({
        "role": "bashExecution",
        "command": req.command,
        "output": out.output,
        "exitCode": out.exit_code,
        "cancelled": out.cancelled,
        "truncated": out.truncated,
    });
    if let Some(p) = &out.full_output_path {
        m["fullOutputPath"] = json!(p);
    }
    m["timestamp"] = json!(now_ms());
    if req.exclude_from_context {
        m["excludeFromContext"] = json!(true);
    }
    AgentMessage::Raw(m)
}

impl Core {
    async fn bash(&self, req: BashRequest) -> Result<BashOutcome, ControllerError> {
        let token = {
            let mut running = lock(&self.bash);
            if running.is_some() {
                return Err(ControllerError::BashBusy);
            }
            let t = CancellationToken::new();
            *running = Some(t.clone());
            t
        };
        let _running = Running(self);
        let place = self.place();
        let cwd = place.cwd.display().to_string();
        let payload = json!({
            "command": req.command,
            "exclude_from_context": req.exclude_from_context,
            "cwd": cwd,
        });
        let runner = self.runner();
        let decided = tokio::select! {
            d = runner.user_bash(payload) => d,
            _ = token.cancelled() => Err("the command was aborted before it ran".to_string()),
        };
        let outcome = match decided.map_err(ControllerError::BashRefused)? {
            Some((result, hook)) => {
                let r: UserBashResult = serde_json::from_value(result).map_err(|e| {
                    ControllerError::BashRefused(format!(
                        "hook {hook} answered user_bash with a result of the wrong shape: {e}"
                    ))
                })?;
                BashOutcome {
                    output: r.output,
                    exit_code: r.exit_code,
                    cancelled: r.cancelled,
                    truncated: r.truncated,
                    full_output_path: None,
                }
            }
            None => self.run_shell(&req, &token).await?,
        };
        self.record_bash(execution_message(&req, &outcome));
        Ok(outcome)
    }

    async fn run_shell(
        &self,
        req: &BashRequest,
        token: &CancellationToken,
    ) -> Result<BashOutcome, ControllerError> {
        let env = self.env();
        let shell = env
            .shell
            .shell_path
            .clone()
            .unwrap_or_else(process::default_shell);
        let command = match env.shell.command_prefix.as_deref() {
            Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{}", req.command),
            _ => req.command.clone(),
        };
        let vars = env
            .shell
            .environment
            .for_process(&self.handle.config().tool_env());
        let mut stream = Stream {
            acc: OutputAccumulator::default(),
            core: self,
            id: req.id.clone(),
            carry: Vec::new(),
        };
        let ending = process::run_shell(
            ShellCommand {
                shell: &shell,
                command: &command,
                cwd: &self.place().cwd,
                env: &vars,
            },
            RunOptions {
                timeout: None,
                cancel: token,
            },
            &mut stream,
        )
        .await?;
        let rest = String::from_utf8_lossy(&stream.carry).into_owned();
        if !rest.is_empty() {
            self.emit(AgentEvent::BashExecutionUpdate {
                id: req.id.clone(),
                delta: rest,
            });
        }
        let mut acc = stream.acc;
        acc.finish();
        let snap = acc.snapshot();
        let (exit_code, cancelled) = match ending {
            Ending::Exited(code) => (code, false),
            Ending::Aborted | Ending::TimedOut => (None, true),
        };
        Ok(BashOutcome {
            output: snap.content.clone(),
            exit_code,
            cancelled,
            truncated: snap.truncation.truncated,
            full_output_path: snap.full_output_path.map(|p| p.display().to_string()),
        })
    }

    /// Into the session and the agent's context now, or when the run in progress settles.
    fn record_bash(&self, message: AgentMessage) {
        let status = lock(&self.status);
        if status.streaming {
            lock(&self.pending_bash).push(message);
            return;
        }
        self.append_bash(message);
    }

    fn append_bash(&self, message: AgentMessage) {
        let llm = crate::session::context::to_llm(&message);
        let _ = self.session.record(|s| s.append_message(message));
        if let Some(m) = llm {
            self.handle.push(m);
        }
    }

    /// After a run: the user's commands that finished during it.
    pub(super) fn flush_pending_bash(&self) {
        let pending = std::mem::take(&mut *lock(&self.pending_bash));
        for m in pending {
            self.append_bash(m);
        }
    }
}

impl SessionController {
    /// Run the user's shell command (RPC `bash`); see the module comment.
    pub async fn bash(&self, req: BashRequest) -> Result<BashOutcome, ControllerError> {
        self.core.bash(req).await
    }

    /// Abort the running user shell command (its process group is killed); `false` when none
    /// runs.
    pub fn abort_bash(&self) -> bool {
        match lock(&self.core.bash).as_ref() {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_split_across_reads_is_sent_whole() {
        let mut carry = Vec::new();
        let bytes = "aé✓".as_bytes();
        let (a, b) = bytes.split_at(2); // inside 'é'
        assert_eq!(take_utf8(&mut carry, a), "a");
        assert_eq!(carry.len(), 1);
        assert_eq!(take_utf8(&mut carry, b), "é✓");
        assert!(carry.is_empty());
        assert_eq!(take_utf8(&mut carry, b"\xff!"), "\u{fffd}!");
    }

    #[test]
    fn the_stored_message_is_pis_bash_execution() {
        let req = BashRequest {
            command: "ls".into(),
            exclude_from_context: true,
            id: None,
        };
        let out = BashOutcome {
            output: "a\n".into(),
            exit_code: Some(0),
            cancelled: false,
            truncated: false,
            full_output_path: None,
        };
        let AgentMessage::Raw(v) = execution_message(&req, &out) else {
            panic!("raw")
        };
        assert_eq!(v["role"], "bashExecution");
        assert_eq!(v["exitCode"], 0);
        assert_eq!(v["excludeFromContext"], true);
        assert!(v.get("fullOutputPath").is_none());
    }
}
