//! The session store: pi's JSONL v3 session files, byte-compatible with the TypeScript pi.
//!
//! A session is a header line plus an append-only tree of entries linked by `parentId`; the
//! *leaf* is the current position, and the LLM context is the path from the leaf to the root
//! with compactions applied ([`context`]). [`Session`] owns the entries of one file and writes
//! them lazily: nothing touches the disk until the first assistant message (or a `custom` or
//! `usage` entry), then the buffered entries are written with an exclusive create and every
//! later entry is appended as one line ([`store`]). Reading streams the file once
//! ([`load`]); tree operations (navigate, fork, clone, labels, branch summaries) are in
//! [`tree`], and the on-disk layout (`~/.pi/agent/sessions/--<cwd>--/…jsonl`) in [`paths`].

pub mod compaction;
pub mod context;
pub mod entry;
pub mod load;
mod manager;
pub mod paths;
pub mod shared;
mod store;
pub mod tree;

use std::path::{Path, PathBuf};

pub use context::{build_context, ContextMessage, ModelRef, SessionContext};
pub use entry::{
    AgentMessage, BranchSummary, Compaction, ContextEdit, CustomEntry, CustomMessageEntry, Entry,
    EntryKind, FileDetails, Header, LabelEntry, MessageEntry, ModelChange, Replacement,
    SessionInfo, ThinkingLevelChange, UnknownEntry, UsageEntry, CURRENT_VERSION,
};
pub use load::{LoadWarning, WarningKind};
pub use manager::{NewSession, Session};
pub use shared::SharedSession;
pub use tree::{Fork, ForkPosition, Navigation, Tree};

/// Errors of the session store. Damage inside a file is not an error: it comes back as
/// [`LoadWarning`]s.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a pi session file (its first line is not a session header)", path.display())]
    NotASession { path: PathBuf },
    #[error("{}: already exists; refusing to overwrite it", path.display())]
    AlreadyExists { path: PathBuf },
    #[error("entry {0} not found")]
    EntryNotFound(String),
    #[error("entry {0} is not a user message")]
    NotAUserMessage(String),
    #[error("entry {0} cannot be edited: it must be a user, assistant or tool result message or a custom message on the current branch")]
    NotEditable(String),
    #[error("no session matches {0:?}")]
    NoMatch(String),
    #[error("{query:?} matches {} sessions; give more of the id", matches.len())]
    Ambiguous {
        query: String,
        matches: Vec<PathBuf>,
    },
}

impl SessionError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            return SessionError::AlreadyExists {
                path: path.to_path_buf(),
            };
        }
        SessionError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Fills in the path of errors raised by code that only saw a reader.
    pub(crate) fn with_path(self, p: &Path) -> Self {
        match self {
            SessionError::Io { path, source } if path.as_os_str().is_empty() => SessionError::Io {
                path: p.to_path_buf(),
                source,
            },
            SessionError::NotASession { path } if path.as_os_str().is_empty() => {
                SessionError::NotASession {
                    path: p.to_path_buf(),
                }
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests;
