//! Session operations that need the whole run: tree navigation (with an optional summary of
//! the abandoned branch), fork and clone, new and switch, each behind its cancelable
//! `session_before_*` event and followed by its notification. Compaction lives beside it in
//! [`super::compact`], the session boundary (`session_shutdown`, the swap, new hook
//! processes, `session_start`) in [`super::replace`]. Hooks reach these through host calls;
//! front ends through the controller's methods.
//!
//! Every operation holds the agent (see `Core::exclusive`): a run in progress is aborted
//! first, and operations never overlap. After every operation the session's context is the
//! truth: the agent's messages are replaced with it, so the next prompt continues from the
//! new position.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{Core, ForkOutcome, NavigateOutcome, SwitchOutcome};
use crate::hooks::events::{CancelableEvent, NotifyEvent};
use crate::hooks::protocol::CallError;
use crate::session::{root, ForkPosition, NewSession, Session, SessionError};

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

/// A summary of the branch left behind: its text, details and usage, and whether a hook
/// supplied it (rather than the model).
type BranchSummary = (String, Option<Value>, Option<Value>, bool);

/// Where a move in the tree starts from: the old leaf, the common ancestor of the old and the
/// new leaf, and the abandoned entries (from the old leaf back to the common ancestor).
struct TreeMove {
    old_leaf: Option<String>,
    common: Option<String>,
    abandoned: Vec<Value>,
}

/// Where a move in the tree ended: the new leaf, the text it leaves in the editor, and the
/// branch summary's entry.
struct Moved {
    leaf: Option<String>,
    editor_text: Option<String>,
    summary_id: Option<String>,
}

impl Core {
    /// `/tree`: move to `entry_id`, optionally leaving a summary of the branch left behind.
    /// `session_before_tree` may cancel, supply the summary, or change the instructions and
    /// the label; `session_tree` reports the move.
    /// The caller holds the agent.
    pub(super) async fn navigate(
        &self,
        entry_id: &str,
        summarize: bool,
        custom_instructions: Option<String>,
        label: Option<String>,
    ) -> Result<NavigateOutcome, OpError> {
        let TreeMove {
            old_leaf,
            common,
            abandoned,
        } = self.tree_move(entry_id)?;
        let payload = json!({"preparation": {
            "target_id": entry_id,
            "old_leaf_id": old_leaf,
            "common_ancestor_id": common,
            "entries_to_summarize": abandoned,
            "user_wants_summary": summarize,
            "custom_instructions": custom_instructions,
            "label": label,
        }});
        let runner = self.runner();
        let verdict = runner
            .cancelable(CancelableEvent::SessionBeforeTree, payload)
            .await;
        if verdict.cancelled_by.is_some() {
            return Ok(NavigateOutcome {
                cancelled: true,
                ..Default::default()
            });
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
        let wanted = summarize && !abandoned.is_empty();
        let summary = self
            .branch_summary(supplied, wanted, &abandoned, custom.as_deref())
            .await?;
        let Moved {
            leaf: new_leaf,
            editor_text,
            summary_id,
        } = self.move_to(entry_id, summary.as_ref())?;
        if let Some(l) = label.as_deref().map(str::trim).filter(|l| !l.is_empty()) {
            self.session.record(|s| s.append_label(entry_id, Some(l)))?;
        }
        self.reload_agent();
        self.follow_branch_loadout();
        let summary_entry = summary_id.as_deref().and_then(|id| {
            let s = self.session.lock();
            s.entry(id).and_then(|e| serde_json::to_value(e).ok())
        });
        let new_leaf_id = self.session.lock().leaf_id().map(str::to_string);
        // A notify (hook-protocol.md): a hook that, as documented, does not reply must not
        // hold the navigation up for its event deadline.
        let from_extension = summary.as_ref().map(|s| s.3);
        runner.notify(NotifyEvent::SessionTree, None, || {
            json!({
                "new_leaf_id": new_leaf_id,
                "old_leaf_id": old_leaf,
                "summary_entry": summary_entry,
                "from_extension": from_extension,
            })
        });
        Ok(NavigateOutcome {
            cancelled: false,
            leaf_id: new_leaf,
            editor_text,
            summary_entry_id: summary_id,
        })
    }

    /// Where a move in the tree to `entry_id` starts from: the old leaf, the common ancestor,
    /// and the abandoned part (from the old leaf back to, not including, the common ancestor).
    fn tree_move(&self, entry_id: &str) -> Result<TreeMove, OpError> {
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
        let abandoned: Vec<Value> = current
            .iter()
            .skip_while(|e| Some(&e.id) != common.as_ref() && common.is_some())
            .skip(usize::from(common.is_some()))
            .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
            .collect();
        Ok(TreeMove {
            old_leaf,
            common,
            abandoned,
        })
    }

    /// The summary of the branch left behind: the hook's (`supplied`), or the model's when the
    /// user asked for one and there is something to summarise (`wanted`).
    async fn branch_summary(
        &self,
        supplied: Option<Value>,
        wanted: bool,
        abandoned: &[Value],
        custom: Option<&str>,
    ) -> Result<Option<BranchSummary>, OpError> {
        let summary = match supplied {
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
            None if wanted => {
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
                    .compactor()
                    .summarize_branch(&messages, custom, self.handle.cancel_token())
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
        Ok(summary)
    }

    /// Moves the session's leaf to `entry_id`, recording `summary` there: the new leaf, the
    /// text the move leaves in the editor, and the summary entry's id.
    fn move_to(&self, entry_id: &str, summary: Option<&BranchSummary>) -> Result<Moved, OpError> {
        let mut s = self.session.lock();
        let nav = s.navigate(entry_id)?;
        let summary_id = match summary {
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
        Ok(Moved {
            leaf: nav.leaf,
            editor_text: nav.editor_text,
            summary_id,
        })
    }

    /// `/fork` (`before`) or `/clone` (`at`): a new session file from the chosen point, which
    /// this run then continues in. Hooks see `session_before_fork` (cancelable), then the
    /// session boundary ([`Core::replace_session`]). `caller` is the hook that asked, if one
    /// did. The caller holds the agent.
    pub(super) async fn fork(
        &self,
        entry_id: &str,
        position: ForkPosition,
        caller: Option<&str>,
    ) -> Result<ForkOutcome, super::ControllerError> {
        let pos = match position {
            ForkPosition::Before => "before",
            ForkPosition::At => "at",
        };
        {
            let s = self.session.lock();
            if s.entry(entry_id).is_none() {
                return Err(SessionError::EntryNotFound(entry_id.into()).into());
            }
            // Checked before any hook is asked: the fork's file goes next to this session,
            // which must be inside the session directory when a hook asked.
            if s.makes_files() && caller.is_some() {
                new_files_dir(&s)?;
            }
        }
        let verdict = self
            .runner()
            .cancelable(
                CancelableEvent::SessionBeforeFork,
                json!({"entry_id": entry_id, "position": pos}),
            )
            .await;
        if verdict.cancelled_by.is_some() {
            return Ok(ForkOutcome {
                cancelled: true,
                ..Default::default()
            });
        }
        let skip_restore = verdict
            .result
            .as_ref()
            .and_then(|r| r.get("skip_conversation_restore"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let fork = self.session.lock().fork(entry_id, position)?;
        let out = self
            .replace_session(fork.session, "fork", !skip_restore, caller, None)
            .await?;
        Ok(ForkOutcome {
            text: fork.text,
            cancelled: false,
            session_file: out.session_file,
            session_id: out.session_id,
        })
    }

    /// `/new` (`target: None`) or `/resume` (another file): `session_before_switch` may
    /// cancel; then the run continues in the other session — in the other session's directory
    /// when its header names another one that exists (pi 1.6's rule; a gone one is refused
    /// with 1.6's [`MissingCwd`](super::MissingCwd) unless `work_in` says where to work
    /// instead). The other file must be a session inside the run's sessions root, and a new
    /// session's folder must be inside it too (see [`crate::session::root`]); a refused file
    /// is not touched. A new session works where the run works now.
    /// The caller holds the agent.
    /// A front end (`caller` `None`) is the user, whose own paths are not confined, as
    /// `--session PATH` is not; a new session records `parent` as its parent.
    pub(super) async fn switch(
        &self,
        target: Option<&str>,
        parent: Option<String>,
        caller: Option<&str>,
        work_in: Option<&Path>,
    ) -> Result<SwitchOutcome, super::ControllerError> {
        let (cwd, root, new_dir) = {
            let s = self.session.lock();
            let new_dir = match (target.is_none() && s.makes_files(), caller) {
                (false, _) => None,
                (true, Some(_)) => Some(new_files_dir(&s)?),
                (true, None) => s.session_dir().map(Path::to_path_buf),
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
                let path = match caller {
                    Some(_) => {
                        let root = root.ok_or(SessionError::NoSessionDir)?;
                        root::confine(&root, Path::new(file))?
                    }
                    None => PathBuf::from(file),
                };
                if std::fs::symlink_metadata(&path).is_err() {
                    return Err(OpError::NoSuchFile(path).into());
                }
                Some(Session::read(&path)?)
            }
            None => None,
        };
        let reason = if target.is_some() { "resume" } else { "new" };
        let verdict = self
            .runner()
            .cancelable(
                CancelableEvent::SessionBeforeSwitch,
                json!({"reason": reason, "target_session_file": target}),
            )
            .await;
        if verdict.cancelled_by.is_some() {
            return Ok(SwitchOutcome::cancelled());
        }
        let (next, to) = match (read, new_dir) {
            (Some(read), _) => self.opened(read, &cwd, work_in, caller.is_some())?,
            (None, Some(d)) => (
                Session::create(
                    &cwd,
                    &d,
                    NewSession {
                        id: None,
                        parent_session: parent,
                    },
                ),
                None,
            ),
            (None, None) => (Session::in_memory(&cwd), None),
        };
        self.replace_session(next, reason, true, caller, to).await
    }

    /// The other session opened, and the directory it works in when that is not the run's:
    /// as 1.6, its directory is checked after `session_before_switch`, before anything else
    /// changes. A hook's `session.switch` into a session whose directory is gone continues
    /// where the run is (the hook protocol has no question to put to the user).
    fn opened(
        &self,
        read: crate::session::ReadSession,
        cwd: &str,
        work_in: Option<&Path>,
        by_hook: bool,
    ) -> Result<(Session, Option<PathBuf>), super::ControllerError> {
        let place = self.place();
        let header_cwd = read.header_cwd().unwrap_or_default();
        let to = match work_in {
            Some(dir) => (dir != place.cwd).then(|| dir.to_path_buf()),
            None => {
                match super::relocate::destination(&header_cwd, Some(read.path()), &place.cwd) {
                    Err(_) if by_hook => None,
                    other => other?,
                }
            }
        };
        let (mut session, warnings) = read.open(cwd)?;
        for w in warnings {
            term_eprintln!("Warning: {}", w.message);
        }
        if let Some(dir) = work_in {
            session.work_in(&dir.display().to_string());
        }
        Ok((session, to))
    }

    /// `/clone`: a fork at the current leaf. The caller holds the agent.
    pub(super) async fn clone_session(
        &self,
        caller: Option<&str>,
    ) -> Result<ForkOutcome, super::ControllerError> {
        let leaf = self.session.lock().leaf_id().map(str::to_string);
        match leaf {
            Some(id) => self.fork(&id, ForkPosition::At, caller).await,
            None => Err(OpError::Failed("the session is empty: nothing to clone".into()).into()),
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

/// The session operations for front ends (the user's own requests, so paths are theirs and
/// not confined to the session directory).
impl super::SessionController {
    /// `new_session {parentSession?}`.
    pub async fn new_session(
        &self,
        parent_session: Option<String>,
    ) -> Result<SwitchOutcome, super::ControllerError> {
        let _agent = self.core.exclusive().await;
        self.core.switch(None, parent_session, None, None).await
    }

    /// `switch_session {sessionPath}`.
    pub async fn switch_session(
        &self,
        path: &str,
    ) -> Result<SwitchOutcome, super::ControllerError> {
        self.switch_session_in(path, None).await
    }

    /// `switch_session`, working in `work_in` instead of the session's own directory (1.6's
    /// "Continue in …" answer for a session whose directory is gone; the header is kept, so
    /// pi asks again next time).
    pub async fn switch_session_in(
        &self,
        path: &str,
        work_in: Option<&Path>,
    ) -> Result<SwitchOutcome, super::ControllerError> {
        let _agent = self.core.exclusive().await;
        self.core.switch(Some(path), None, None, work_in).await
    }

    /// `fork {entryId}`: a new session up to the chosen user message, whose text comes back.
    pub async fn fork(&self, entry_id: &str) -> Result<ForkOutcome, super::ControllerError> {
        if self.core.session.lock().entry(entry_id).is_none() {
            return Err(super::ControllerError::InvalidForkEntry);
        }
        self.saved_or_refuse()?;
        let _agent = self.core.exclusive().await;
        match self.core.fork(entry_id, ForkPosition::Before, None).await {
            Err(super::ControllerError::Session(SessionError::EntryNotFound(_))) => {
                Err(super::ControllerError::InvalidForkEntry)
            }
            other => other,
        }
    }

    /// `clone`: the active branch into a new session.
    pub async fn clone_session(&self) -> Result<ForkOutcome, super::ControllerError> {
        self.saved_or_refuse()?;
        let _agent = self.core.exclusive().await;
        self.core.clone_session(None).await
    }

    /// pi refuses to fork or clone a session that has no reply yet: its file is written with
    /// the first reply (a fork that starts before any reply has none either). A session kept
    /// in memory has no file to wait for.
    fn saved_or_refuse(&self) -> Result<(), super::ControllerError> {
        let s = self.core.session.lock();
        let replied = || {
            s.entries()
                .iter()
                .any(|e| e.message().is_some_and(|m| m.role() == "assistant"))
        };
        if s.makes_files() && !(s.is_written() && replied()) {
            return Err(super::ControllerError::Unsaved);
        }
        Ok(())
    }

    /// Move in the tree to `entry_id`, optionally leaving a summary of the branch left behind.
    pub async fn navigate_tree(
        &self,
        entry_id: &str,
        summarize: bool,
        custom_instructions: Option<String>,
        label: Option<String>,
    ) -> Result<NavigateOutcome, super::ControllerError> {
        let _agent = self.core.exclusive().await;
        Ok(self
            .core
            .navigate(entry_id, summarize, custom_instructions, label)
            .await?)
    }

    /// `compact {customInstructions?}`.
    pub async fn compact(
        &self,
        custom_instructions: Option<String>,
    ) -> Result<super::CompactOutcome, super::ControllerError> {
        use super::compact::{Compacted, Reason};
        let _agent = self.core.exclusive().await;
        match self
            .core
            .compact_now(Reason::Manual, custom_instructions, false)
            .await?
        {
            Some(Compacted::Stored(c)) => Ok(c),
            Some(Compacted::Cancelled(by)) => Err(super::ControllerError::CompactionCancelled(by)),
            // Manual compaction always answers; `None` is for the threshold check only.
            None => Err(OpError::Failed("nothing to compact".into()).into()),
        }
    }
}
