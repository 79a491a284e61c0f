//! One run's session, shared by everything that writes to it while the run goes on: the
//! agent's messages (recorded synchronously as each one ends), hooks' entries, names and
//! labels, compactions and tree moves. A write error is reported once; the session then
//! carries on in memory so the run itself is not lost.

use std::sync::{Arc, Mutex, MutexGuard};

use super::{Session, SessionError};

pub struct SharedSession {
    inner: Mutex<Session>,
}

impl SharedSession {
    pub fn new(session: Session) -> Arc<SharedSession> {
        Arc::new(SharedSession {
            inner: Mutex::new(session),
        })
    }

    /// The session, locked. Hold it only for in-memory work and single appends.
    pub fn lock(&self) -> MutexGuard<'_, Session> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Append with `f`; on a write error, warn and stop writing the file (the entry and later
    /// ones stay in memory). Returns the new entry's id. Finding the file taken by another
    /// (created under the new session's name, written into while it was an empty file, or
    /// replaced since it was loaded) is a write error too: the file is not ours to write.
    pub fn record(
        &self,
        f: impl FnOnce(&mut Session) -> Result<String, SessionError>,
    ) -> Result<String, SessionError> {
        let mut s = self.lock();
        let r = f(&mut s);
        if let Err(
            e @ (SessionError::Io { .. }
            | SessionError::AlreadyExists { .. }
            | SessionError::Replaced { .. }),
        ) = &r
        {
            term_eprintln!(
                "Warning: cannot write the session file: {e}; this run is no longer saved"
            );
            s.stop_writing();
            // The entry was kept in memory; its id is the leaf.
            if let Some(id) = s.leaf_id() {
                return Ok(id.to_string());
            }
        }
        r
    }

    /// Swap in another session (fork, clone, new); returns the old one.
    pub fn replace(&self, session: Session) -> Session {
        std::mem::replace(&mut *self.lock(), session)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{AssistantMessage, Content, Message};

    #[test]
    fn a_file_taken_by_another_stops_the_writing_and_keeps_the_entries() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("e.jsonl");
        std::fs::write(&p, "").unwrap();
        let (session, _) = Session::open(&p, "/w").unwrap();
        let shared = SharedSession::new(session);
        shared
            .record(|s| s.append_message(Message::user("q")))
            .unwrap();
        // Someone else writes the empty file before the first reply.
        std::fs::write(&p, "theirs\n").unwrap();
        let mut a = AssistantMessage::empty("faux", "faux", "m");
        a.content.push(Content::text("r"));
        let id = shared
            .record(|s| s.append_message(Message::Assistant(a)))
            .unwrap();
        let s = shared.lock();
        assert_eq!(s.leaf_id(), Some(id.as_str()));
        assert_eq!(s.entries().len(), 2);
        assert!(s.path().is_none(), "no longer saved");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "theirs\n");
    }
}
