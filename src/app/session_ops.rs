//! Session operations that need the whole run: tree navigation (with an optional summary of
//! the abandoned branch), fork and clone, each behind its cancelable `session_before_*`
//! event and followed by its notification. Compaction lives beside it in
//! [`super::compact`]. Hooks reach these through host calls; later modes (interactive `/tree`,
//! `/fork`, RPC) call the same methods.
//!
//! After every operation the session's context is the truth: the agent's messages are
//! replaced with it, so the next prompt continues from the new position.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::compact::{Compactor, Reason};
use crate::agent::events::AgentEvent;
use crate::agent::AgentHandle;
use crate::hooks::calls::{SessionControl, SessionOp};
use crate::hooks::protocol::CallError;
use crate::hooks::runner::Runner;
use crate::session::{root, ForkPosition, NewSession, Session, SessionError, SharedSession};

pub struct SessionOps {
    pub session: Arc<SharedSession>,
    pub runner: Arc<Runner>,
    pub agent: AgentHandle,
    pub events: mpsc::UnboundedSender<AgentEvent>,
    pub compactor: Compactor,
    /// Operations never overlap: each one reads the session, asks hooks, then writes.
    pub busy: tokio::sync::Mutex<()>,
}

/// Why an operation did not happen, for the caller to show.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("no session file {}", .0.display())]
    NoSuchFile(PathBuf),
    #[error("{0}")]
    Failed(String),
}

impl From<OpError> for CallError {
    fn from(e: OpError) -> CallError {
        let code = match &e {
            OpError::Session(SessionError::EntryNotFound(_)) | OpError::NoSuchFile(_) => {
                "not_found"
            }
            // The params name something the call refuses: not a session, a session this pi
            // cannot read, or a place outside the session directory.
            OpError::Session(
                SessionError::NotAUserMessage(_)
                | SessionError::NotASession { .. }
                | SessionError::UnsupportedVersion { .. }
                | SessionError::OutsideSessionDir { .. },
            ) => "invalid_params",
            OpError::Session(SessionError::NoSessionDir) => "unavailable",
            _ => "failed",
        };
        CallError {
            code: code.into(),
            message: e.to_string(),
        }
    }
}

impl SessionOps {
    /// Start the agent over from the session's current context.
    pub fn reload_agent(&self) {
        let messages = self.session.lock().context().llm_messages();
        self.agent.replace_messages(messages);
    }

    /// `/tree`: move to `entry_id`, optionally leaving a summary of the branch left behind.
    /// `session_before_tree` may cancel, supply the summary, or change the instructions and
    /// the label; `session_tree` reports the move.
    pub async fn navigate(
        &self,
        entry_id: &str,
        summarize: bool,
        custom_instructions: Option<String>,
        label: Option<String>,
    ) -> Result<Value, OpError> {
        let _busy = self.busy.lock().await;
        let (old_leaf, common, abandoned) = {
            let s = self.session.lock();
            if s.entry(entry_id).is_none() {
                return Err(SessionError::EntryNotFound(entry_id.into()).into());
            }
            let old_leaf = s.leaf_id().map(str::to_string);
            let target_path: Vec<String> = s
                .branch(Some(entry_id))
                .iter()
                .map(|e| e.id.clone())
                .collect();
            let current = s.branch(None);
            let common = current
                .iter()
                .rev()
                .find(|e| target_path.contains(&e.id))
                .map(|e| e.id.clone());
            // The abandoned part: from the old leaf back to (not including) the common ancestor.
            let abandoned: Vec<Value> = current
                .iter()
                .skip_while(|e| Some(&e.id) != common.as_ref() && common.is_some())
                .skip(usize::from(common.is_some()))
                .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
                .collect();
            (old_leaf, common, abandoned)
        };
        let payload = json!({"preparation": {
            "target_id": entry_id,
            "old_leaf_id": old_leaf,
            "common_ancestor_id": common,
            "entries_to_summarize": abandoned,
            "user_wants_summary": summarize,
            "custom_instructions": custom_instructions,
            "label": label,
        }});
        let verdict = self.runner.cancelable("session_before_tree", payload).await;
        if verdict.cancelled_by.is_some() {
            return Ok(json!({"cancelled": true}));
        }
        let reply = verdict.result.unwrap_or_default();
        let label = reply
            .get("label")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or(label);
        let custom = reply
            .get("custom_instructions")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or(custom_instructions);
        let supplied = reply.get("summary").filter(|v| !v.is_null()).cloned();

        // The summary: the hook's, or the model's when the user asked for one and there is
        // something to summarise.
        let summary: Option<(String, Option<Value>, Option<Value>, bool)> = match supplied {
            Some(v) => {
                let text = v
                    .get("summary")
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        OpError::Failed(
                            "session_before_tree: `summary.summary` (a string) is required".into(),
                        )
                    })?
                    .to_string();
                Some((
                    text,
                    v.get("details").cloned(),
                    v.get("usage").cloned(),
                    true,
                ))
            }
            None if summarize && !abandoned.is_empty() => {
                let messages = {
                    let s = self.session.lock();
                    let ids: Vec<String> = abandoned
                        .iter()
                        .filter_map(|e| e.get("id").and_then(Value::as_str))
                        .map(str::to_string)
                        .collect();
                    s.branch(None)
                        .into_iter()
                        .filter(|e| ids.contains(&e.id))
                        .filter_map(|e| e.message().cloned())
                        .collect::<Vec<_>>()
                };
                let r = self
                    .compactor
                    .summarize_branch(&messages, custom.as_deref(), self.agent.cancel_token())
                    .await
                    .map_err(|e| OpError::Failed(format!("branch summary failed: {e}")))?;
                Some((
                    r.summary,
                    serde_json::to_value(&r.details).ok(),
                    serde_json::to_value(&r.usage).ok(),
                    false,
                ))
            }
            None => None,
        };

        let (new_leaf, editor_text, summary_id) = {
            let mut s = self.session.lock();
            let nav = s.navigate(entry_id)?;
            let summary_id = match &summary {
                Some((text, details, usage, from_hook)) => {
                    drop(s);
                    let leaf = nav.leaf.clone();
                    let id = self.session.record(|s| {
                        s.branch_with_summary(
                            leaf.as_deref(),
                            text,
                            details.clone(),
                            from_hook.then_some(true),
                            usage.clone(),
                        )
                    })?;
                    Some(id)
                }
                None => None,
            };
            (nav.leaf, nav.editor_text, summary_id)
        };
        if let Some(l) = label.as_deref().map(str::trim).filter(|l| !l.is_empty()) {
            self.session.record(|s| s.append_label(entry_id, Some(l)))?;
        }
        self.reload_agent();
        let summary_entry = summary_id.as_deref().and_then(|id| {
            let s = self.session.lock();
            s.entry(id).and_then(|e| serde_json::to_value(e).ok())
        });
        self.runner
            .awaited(
                "session_tree",
                json!({
                    "new_leaf_id": self.session.lock().leaf_id(),
                    "old_leaf_id": old_leaf,
                    "summary_entry": summary_entry,
                    "from_extension": summary.as_ref().map(|s| s.3),
                }),
            )
            .await;
        Ok(json!({
            "cancelled": false,
            "leaf_id": new_leaf,
            "editor_text": editor_text,
            "summary_entry_id": summary_id,
        }))
    }

    /// `/fork` (`before`) or `/clone` (`at`): a new session file from the chosen point, which
    /// this run then continues in. Hooks see `session_before_fork` (cancelable), then the
    /// usual boundary: `session_shutdown` for the old session, `session_start` for the new.
    pub async fn fork(&self, entry_id: &str, position: ForkPosition) -> Result<Value, OpError> {
        let _busy = self.busy.lock().await;
        let pos = match position {
            ForkPosition::Before => "before",
            ForkPosition::At => "at",
        };
        {
            let s = self.session.lock();
            if s.entry(entry_id).is_none() {
                return Err(SessionError::EntryNotFound(entry_id.into()).into());
            }
            // Checked before any hook is asked: the fork's file goes next to this session.
            if s.makes_files() {
                new_files_dir(&s)?;
            }
        }
        let verdict = self
            .runner
            .cancelable(
                "session_before_fork",
                json!({"entry_id": entry_id, "position": pos}),
            )
            .await;
        if verdict.cancelled_by.is_some() {
            return Ok(json!({"cancelled": true}));
        }
        let skip_restore = verdict
            .result
            .as_ref()
            .and_then(|r| r.get("skip_conversation_restore"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let fork = self.session.lock().fork(entry_id, position)?;
        let mut out = self
            .replace_session(fork.session, "fork", !skip_restore)
            .await;
        out["text"] = json!(fork.text);
        Ok(out)
    }

    /// The session boundary every replacement goes through: `session_shutdown` for the old
    /// session, the swap, the agent's context from the new one, then `session_start`.
    async fn replace_session(&self, mut next: Session, reason: &str, restore: bool) -> Value {
        // The run's confinement carries over to every session it continues in.
        next.set_sessions_root(self.session.lock().sessions_root().map(Path::to_path_buf));
        let new_file = next.path().map(|p| p.display().to_string());
        let new_id = next.id().to_string();
        self.runner
            .awaited(
                "session_shutdown",
                json!({"reason": reason, "target_session_file": new_file}),
            )
            .await;
        let old = self.session.replace(next);
        let old_file = old.path().map(|p| p.display().to_string());
        if restore {
            self.reload_agent();
        }
        self.runner
            .awaited(
                "session_start",
                json!({"reason": reason, "previous_session_file": old_file}),
            )
            .await;
        json!({
            "cancelled": false,
            "session_file": new_file,
            "session_id": new_id,
        })
    }

    /// `/new` (`target: None`) or `/resume` (another file): `session_before_switch` may
    /// cancel; then the run continues in the other session. The other file must be a session
    /// inside the run's sessions root, and a new session's folder must be inside it too
    /// (see [`crate::session::root`]); a refused file is not touched.
    pub async fn switch(&self, target: Option<&str>) -> Result<Value, OpError> {
        let _busy = self.busy.lock().await;
        let (cwd, root, new_dir) = {
            let s = self.session.lock();
            let new_dir = match target.is_none() && s.makes_files() {
                true => Some(new_files_dir(&s)?),
                false => None,
            };
            (
                s.cwd().to_string(),
                s.sessions_root().map(Path::to_path_buf),
                new_dir,
            )
        };
        // The other file is read (not written) before any hook is asked, so a refused or
        // cancelled switch leaves it as it was; only opening it may migrate it.
        let read = match target {
            Some(file) => {
                let root = root.ok_or(SessionError::NoSessionDir)?;
                let path = root::confine(&root, Path::new(file))?;
                if std::fs::symlink_metadata(&path).is_err() {
                    return Err(OpError::NoSuchFile(path));
                }
                Some(Session::read(&path)?)
            }
            None => None,
        };
        let reason = if target.is_some() { "resume" } else { "new" };
        let verdict = self
            .runner
            .cancelable(
                "session_before_switch",
                json!({"reason": reason, "target_session_file": target}),
            )
            .await;
        if verdict.cancelled_by.is_some() {
            return Ok(json!({"cancelled": true}));
        }
        let next = match (read, new_dir) {
            (Some(read), _) => {
                let (session, warnings) = read.open(&cwd)?;
                for w in warnings {
                    eprintln!("Warning: {}", w.message);
                }
                session
            }
            (None, Some(d)) => Session::create(&cwd, &d, NewSession::default()),
            (None, None) => Session::in_memory(&cwd),
        };
        Ok(self.replace_session(next, reason, true).await)
    }

    /// `/clone`: a fork at the current leaf.
    pub async fn clone_session(&self) -> Result<Value, OpError> {
        let leaf = self.session.lock().leaf_id().map(str::to_string);
        match leaf {
            Some(id) => self.fork(&id, ForkPosition::At).await,
            None => Err(OpError::Failed(
                "the session is empty: nothing to clone".into(),
            )),
        }
    }
}

/// The folder where sessions made from `s` (new, fork, clone) are created, if the run's
/// sessions root contains it.
fn new_files_dir(s: &Session) -> Result<PathBuf, SessionError> {
    let root = s.sessions_root().ok_or(SessionError::NoSessionDir)?;
    let dir = s.session_dir().ok_or(SessionError::NoSessionDir)?;
    root::confine(root, dir)?;
    Ok(dir.to_path_buf())
}

#[async_trait]
impl SessionControl for SessionOps {
    async fn run(&self, op: SessionOp) -> Result<Value, CallError> {
        let r = match op {
            SessionOp::Compact {
                custom_instructions,
            } => {
                let _busy = self.busy.lock().await;
                super::compact::run(self, Reason::Manual, custom_instructions, false)
                    .await
                    .map(|r| r.unwrap_or_else(|| json!({"cancelled": true})))
            }
            SessionOp::NavigateTree {
                entry_id,
                summarize,
                custom_instructions,
                label,
            } => {
                self.navigate(&entry_id, summarize, custom_instructions, label)
                    .await
            }
            SessionOp::Fork { entry_id, position } => self.fork(&entry_id, position).await,
            SessionOp::Clone => self.clone_session().await,
            SessionOp::New => self.switch(None).await,
            SessionOp::Switch { session_file } => self.switch(Some(&session_file)).await,
        };
        r.map_err(CallError::from)
    }
}
