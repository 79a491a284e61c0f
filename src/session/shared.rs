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
    /// ones stay in memory). Returns the new entry's id.
    pub fn record(
        &self,
        f: impl FnOnce(&mut Session) -> Result<String, SessionError>,
    ) -> Result<String, SessionError> {
        let mut s = self.lock();
        let r = f(&mut s);
        if let Err(e @ SessionError::Io { .. }) = &r {
            eprintln!("Warning: cannot write the session file: {e}; this run is no longer saved");
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
