//! The Claude Code transcript a hook's `transcript_path` names: a Claude-Code-format JSONL
//! view of pi's session, which stays in pi's own format where it is.
//!
//! Hooks written for Claude Code read the transcript (the last assistant message, the tool
//! calls so far, token counts) and cannot read pi's session file, so each hook generation
//! keeps this view and brings it up to date before every hook run ([`Transcript::sync`]):
//! the entries on the session's current branch that it has not written yet are appended,
//! each chained to its parent entry's last record, so a branch switch forks the chain as
//! Claude Code's rewinds do. The first sync of a generation (or of a new session) rewrites the
//! file from the whole branch; the record ids are derived from the entries, so they do not
//! change when it does.
//!
//! It lives in `<agent dir>/claude-transcripts/<session id>.jsonl`, outside the sessions
//! directory so nothing there takes it for a session, and stays after the run as pi's session
//! does. Without a session file (`--no-session`) it is in a private temporary directory
//! removed when the generation ends. The file is the user's conversation: mode 0600.

mod records;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use super::names::McpOrigins;
use crate::hooks::calls::HostCalls;
use crate::hooks::instance::HostContext;
use crate::session::{Session, SharedSession};
pub use records::{record_uuid, records, View};

/// Where a generation's transcript is, and what of the session it has written.
pub struct Transcript {
    path: PathBuf,
    /// Holds the directory of a transcript without a session file; removed with it.
    _temp: Option<tempfile::TempDir>,
    state: Mutex<Written>,
}

/// The entries written so far, of which session.
#[derive(Default)]
struct Written {
    session_id: Option<String>,
    /// Each written entry's last record (its parent's when it wrote none).
    last_record: HashMap<String, Option<String>>,
}

impl Written {
    /// The lines `session` adds to what was written, and whether they start the file afresh
    /// (the first sync, or another session). Marks them written.
    fn pending(&mut self, session: &Session, cwd: &Path, mcp: &dyn McpOrigins) -> (Vec<u8>, bool) {
        let fresh = self.session_id.as_deref() != Some(session.id());
        if fresh {
            *self = Written {
                session_id: Some(session.id().to_string()),
                last_record: HashMap::new(),
            };
        }
        let view = View {
            session_id: session.id(),
            cwd,
            mcp,
        };
        let mut out = Vec::new();
        for entry in session.branch(None) {
            if self.last_record.contains_key(&entry.id) {
                continue;
            }
            let parent = entry
                .parent_id
                .as_ref()
                .and_then(|p| self.last_record.get(p).cloned().flatten());
            let recs = records(&view, entry, parent.as_deref());
            let last = recs
                .last()
                .and_then(|r| r["uuid"].as_str().map(str::to_string))
                .or(parent);
            for r in recs {
                out.extend(serde_json::to_vec(&r).unwrap_or_default());
                out.push(b'\n');
            }
            self.last_record.insert(entry.id.clone(), last);
        }
        (out, fresh)
    }
}

/// Why the transcript could not be brought up to date.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the Claude Code transcript {}: {source}", path.display())]
pub struct TranscriptError {
    path: PathBuf,
    #[source]
    source: std::io::Error,
}

impl Transcript {
    /// The transcript of session `session_id`: under `agent_dir` when the session is saved
    /// (`saved`), else in a new temporary directory.
    pub fn new(
        agent_dir: Option<&Path>,
        session_id: Option<&str>,
        saved: bool,
    ) -> Result<Transcript, TranscriptError> {
        let file = format!("{}.jsonl", session_id.unwrap_or("session"));
        let (path, temp) = match (agent_dir, saved) {
            (Some(dir), true) => (dir.join("claude-transcripts").join(file), None),
            _ => {
                let temp = tempfile::Builder::new()
                    .prefix("pi-claude-transcript-")
                    .tempdir()
                    .map_err(|source| TranscriptError {
                        path: std::env::temp_dir(),
                        source,
                    })?;
                (temp.path().join(file), Some(temp))
            }
        };
        Ok(Transcript {
            path,
            _temp: temp,
            state: Mutex::default(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends what `session`'s current branch has that the file has not. The session is
    /// locked only while its entries are read.
    pub fn sync(
        &self,
        session: &SharedSession,
        cwd: &Path,
        mcp: &dyn McpOrigins,
    ) -> Result<(), TranscriptError> {
        let mut w = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (bytes, fresh) = w.pending(&session.lock(), cwd, mcp);
        let written = self.write(&bytes, fresh);
        if written.is_err() {
            // Written again in full next time rather than left with a gap.
            w.session_id = None;
        }
        written
    }

    fn write(&self, bytes: &[u8], fresh: bool) -> Result<(), TranscriptError> {
        use std::os::unix::fs::OpenOptionsExt;
        let err = |source| TranscriptError {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(!fresh)
            .write(true)
            .truncate(fresh)
            .mode(0o600)
            .open(&self.path)
            .map_err(err)?;
        f.write_all(bytes).map_err(err)
    }
}

/// A hook generation's transcript, made the first time a hook runs.
#[derive(Default)]
pub struct Slot {
    cell: OnceLock<Option<Transcript>>,
    warned: AtomicBool,
}

impl Slot {
    fn get(&self, ctx: &HostContext) -> Option<&Transcript> {
        self.cell
            .get_or_init(|| {
                let agent_dir = crate::config::agent_dir(&crate::config::SystemEnv).ok();
                let saved = ctx.session_file.is_some();
                Transcript::new(agent_dir.as_deref(), ctx.session_id.as_deref(), saved)
                    .map_err(|e| self.warn(&e))
                    .ok()
            })
            .as_ref()
    }

    /// What hooks get as `transcript_path` (empty when there can be no transcript).
    pub fn path(&self, ctx: &HostContext) -> &str {
        self.get(ctx)
            .and_then(|t| t.path().to_str())
            .unwrap_or_default()
    }

    /// Brings the transcript up to date with the run's session, before a hook runs.
    pub fn sync(&self, ctx: &HostContext, calls: &HostCalls) {
        let Some(t) = self.get(ctx) else {
            return;
        };
        let Ok(session) = calls.session() else {
            // No session (`pi hook replay`): an empty transcript, still one a hook can open.
            if let Err(e) = t.write(&[], false) {
                self.warn(&e);
            }
            return;
        };
        if let Err(e) = t.sync(session, &ctx.cwd, calls) {
            self.warn(&e);
        }
    }

    /// Once per generation: hooks still run, reading what the transcript had.
    fn warn(&self, e: &TranscriptError) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            term_eprintln!("Warning: {e}; Claude Code hooks reading it see only what it had");
        }
    }
}

#[cfg(test)]
mod tests;
