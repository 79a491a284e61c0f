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
//!
//! Nothing but a session file is ever written. A path is opened as a session only when it is a
//! regular file whose first line is a session header of a version this code understands, or
//! an empty (0-byte) file ([`file`], [`load`]); anything else is an error that names the file
//! and leaves it untouched. v1/v2 files are migrated by writing a complete new file and
//! renaming it over the old one, keeping the original as `<name>.bak` ([`store`]). Hook
//! session calls reach only files inside the run's session directory ([`root`]).

pub mod compaction;
pub mod context;
pub mod entry;
mod file;
pub mod import;
pub mod load;
mod manager;
mod open;
pub mod paths;
pub mod root;
pub mod shared;
pub mod stats;
mod store;
pub mod tree;

use std::path::{Path, PathBuf};

pub use context::{build_context, ContextMessage, ModelRef, SessionContext};
pub use entry::{
    AgentMessage, BranchSummary, Compaction, ContextEdit, CustomEntry, CustomMessageEntry, Entry,
    EntryKind, FileDetails, Header, HeaderError, LabelEntry, MessageEntry, ModelChange,
    Replacement, SessionInfo, ThinkingLevelChange, UnknownEntry, UsageEntry, CURRENT_VERSION,
};
pub use load::{LoadWarning, WarningKind};
pub use manager::{NewSession, Session};
pub use open::ReadSession;
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
    /// The file is not ours to open, let alone write: see [`NotSessionReason`].
    #[error("{}: not a pi session file: {reason}", path.display())]
    NotASession {
        path: PathBuf,
        reason: NotSessionReason,
    },
    #[error(
        "{}: session format version {version} is newer than this pi understands (up to \
         {CURRENT_VERSION}); open it with a newer pi",
        path.display()
    )]
    UnsupportedVersion { path: PathBuf, version: u32 },
    #[error("{}: already exists; refusing to overwrite it", path.display())]
    AlreadyExists { path: PathBuf },
    /// Migration keeps the original as `<name>.bak` and never overwrites another file there.
    #[error(
        "{}: cannot migrate it from session format v{from} to v{CURRENT_VERSION}: its backup {} \
         already exists; move that file away and try again",
        path.display(),
        backup.display()
    )]
    BackupExists {
        path: PathBuf,
        backup: PathBuf,
        from: u32,
    },
    /// Between loading and writing, another file took the session file's name.
    #[error(
        "{}: was replaced by another file since it was opened; refusing to write to it",
        path.display()
    )]
    Replaced { path: PathBuf },
    /// A hook session call named a file or folder outside the run's session directory.
    #[error(
        "{} is outside the session directory {}; hook session calls may only open and \
         create session files inside it",
        shown(path, resolved),
        root.display()
    )]
    OutsideSessionDir {
        path: PathBuf,
        resolved: PathBuf,
        root: PathBuf,
    },
    #[error(
        "this run keeps no session files (--no-session), so hook session calls cannot open \
         or create one"
    )]
    NoSessionDir,
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

/// Why a file is not a session file (the rest of [`SessionError::NotASession`]'s message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotSessionReason {
    #[error("it is a directory")]
    Directory,
    /// A FIFO, socket or device: reading one may block forever or never end.
    #[error("it is a {0}, not a regular file")]
    Special(&'static str),
    #[error("it is a symbolic link to {}, which does not exist", .0.display())]
    DanglingSymlink(PathBuf),
    /// Only where there is nothing to continue from (a fork's source).
    #[error("it is empty")]
    Empty,
    #[error("it holds only blank lines, no session header")]
    OnlyBlankLines,
    #[error(
        "its first line is longer than {} MiB, far longer than a session header",
        load::HEADER_LINE_LIMIT >> 20
    )]
    FirstLineTooLong,
    #[error("its first line is not JSON ({0})")]
    NotJson(String),
    #[error("its first line is not a session header (it is JSON, but not an object)")]
    NotAnObject,
    #[error("its first line is not a session header: {0}")]
    NotAHeader(#[from] HeaderError),
}

/// A path, and what it resolves to when that differs.
fn shown(path: &Path, resolved: &Path) -> String {
    if path == resolved {
        path.display().to_string()
    } else {
        format!(
            "{} (which resolves to {})",
            path.display(),
            resolved.display()
        )
    }
}

impl SessionError {
    pub(crate) fn not_a_session(path: &Path, reason: NotSessionReason) -> Self {
        SessionError::NotASession {
            path: path.to_path_buf(),
            reason,
        }
    }

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
            SessionError::NotASession { path, reason } if path.as_os_str().is_empty() => {
                SessionError::NotASession {
                    path: p.to_path_buf(),
                    reason,
                }
            }
            SessionError::UnsupportedVersion { path, version } if path.as_os_str().is_empty() => {
                SessionError::UnsupportedVersion {
                    path: p.to_path_buf(),
                    version,
                }
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod load_props;
#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;
