//! Opening session files, in two steps: [`Session::read`] looks at the path and loads the
//! file without writing anything, then [`ReadSession::open`] makes it the session to continue,
//! migrating a v1/v2 file on disk only then. A caller that must ask first (a hook's
//! `session.switch`, which other hooks may cancel) reads, asks, and opens only if allowed,
//! so a cancelled or refused switch writes nothing.
//!
//! What may be opened: nothing at the path (a new session is created there, lazily), an
//! empty 0-byte file (adopted as a new session, also lazily), or a regular file whose first
//! line is a session header of a known version. Anything else is an error naming the file
//! ([`super::file`], [`super::load`]).

use std::path::{Path, PathBuf};

use super::entry::Entry;
use super::file::{open_existing, Identity};
use super::load::{load_file, load_opened, LoadWarning, Loaded, WarningKind};
use super::manager::{new_header, NewSession, Session};
use super::paths::{newest_session, session_file_name};
use super::store::Store;
use super::{NotSessionReason, SessionError, CURRENT_VERSION};

/// A session file that was looked at and read, but not written to.
#[derive(Debug)]
pub struct ReadSession {
    path: PathBuf,
    content: Content,
}

#[derive(Debug)]
enum Content {
    /// Nothing at the path.
    Missing,
    /// An empty file.
    Empty(Identity),
    Loaded(Box<Loaded>, Identity),
}

impl ReadSession {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory the file's header names (`None` for a missing or empty file, which
    /// becomes a new session where the run works).
    pub fn header_cwd(&self) -> Option<String> {
        match &self.content {
            Content::Loaded(l, _) => Some(l.header.cwd.clone()),
            _ => None,
        }
    }

    /// The version the file will be migrated from when opened (1 or 2), if it is old.
    pub fn migrates_from(&self) -> Option<u32> {
        match &self.content {
            Content::Loaded(l, _) => l.migrated_from,
            _ => None,
        }
    }

    /// Makes this the session to continue: a new session (with `cwd` in its header) for a
    /// missing or empty file, else the loaded one. A v1/v2 file is migrated to v3 as pi does,
    /// except that a complete new file is renamed over it and the original is kept as
    /// `<name>.bak` (reported as a [`WarningKind::Migrated`] warning). Damaged lines come back
    /// as warnings.
    pub fn open(self, cwd: &str) -> Result<(Session, Vec<LoadWarning>), SessionError> {
        let path = self.path;
        let dir = path.parent().map(Path::to_path_buf);
        let new_at = |store: Store| {
            let header = new_header(cwd, NewSession::default());
            (
                Session::from_parts(header, Vec::new(), Some(store), dir.clone()),
                Vec::new(),
            )
        };
        let (loaded, identity) = match self.content {
            Content::Missing => return Ok(new_at(Store::pending(path))),
            Content::Empty(identity) => return Ok(new_at(Store::empty(path, identity))),
            Content::Loaded(loaded, identity) => (*loaded, identity),
        };
        let mut store = Store::existing(path.clone(), loaded.ends_with_newline, identity);
        let mut warnings = loaded.warnings;
        if let Some(from) = loaded.migrated_from {
            let lines = std::iter::once(loaded.header.to_line())
                .chain(loaded.entries.iter().map(Entry::to_line));
            let backup = store.migrate(lines, from)?;
            warnings.push(LoadWarning {
                line: 1,
                kind: WarningKind::Migrated,
                message: format!(
                    "{}: migrated from session format v{from} to v{CURRENT_VERSION}; the \
                     original is kept as {}",
                    path.display(),
                    backup.display()
                ),
            });
        }
        let session = Session::from_parts(loaded.header, loaded.entries, Some(store), dir);
        Ok((session, warnings))
    }
}

impl Session {
    /// Reads what is at `path` for [`ReadSession::open`], writing nothing: an error unless
    /// nothing is there, or an empty file, or a session file this code can read.
    pub fn read(path: &Path) -> Result<ReadSession, SessionError> {
        let content = match open_existing(path)? {
            None => Content::Missing,
            Some(opened) => match load_opened(path, opened.file)? {
                None => Content::Empty(opened.identity),
                Some(loaded) => Content::Loaded(Box::new(loaded), opened.identity),
            },
        };
        Ok(ReadSession {
            path: path.to_path_buf(),
            content,
        })
    }

    /// The session file at `path` in memory, to look at and never to continue (`--export`):
    /// nothing is written, not even a migration of an old file. An empty file is an error.
    pub fn read_only(path: &Path) -> Result<Session, SessionError> {
        let loaded = load_file(path)?
            .ok_or_else(|| SessionError::not_a_session(path, NotSessionReason::Empty))?;
        let dir = path.parent().map(Path::to_path_buf);
        Ok(Session::from_parts(
            loaded.header,
            loaded.entries,
            None,
            dir,
        ))
    }

    /// [`Session::read`] then [`ReadSession::open`]: the session at `path` (`--session`).
    pub fn open(path: &Path, cwd: &str) -> Result<(Session, Vec<LoadWarning>), SessionError> {
        Session::read(path)?.open(cwd)
    }

    /// `-c`: the newest session in `session_dir`, or a new one when there is none.
    pub fn continue_recent(
        cwd: &str,
        session_dir: &Path,
    ) -> Result<(Session, Vec<LoadWarning>), SessionError> {
        match newest_session(session_dir) {
            Some(path) => {
                let (mut s, w) = Session::open(&path, cwd)?;
                s.session_dir = Some(session_dir.to_path_buf());
                Ok((s, w))
            }
            None => Ok((
                Session::create(cwd, session_dir, NewSession::default()),
                Vec::new(),
            )),
        }
    }

    /// `--fork <file>`: a new session in `target_dir` holding every entry of `source`
    /// (written at once), whose header records `source` as its parent and `target_cwd` as
    /// its cwd. Entries keep their ids and bytes; `source` is only read.
    pub fn fork_from(
        source: &Path,
        target_cwd: &str,
        target_dir: &Path,
    ) -> Result<(Session, Vec<LoadWarning>), SessionError> {
        let Some(loaded) = load_file(source)? else {
            return Err(SessionError::not_a_session(source, NotSessionReason::Empty));
        };
        let header = new_header(
            target_cwd,
            NewSession {
                id: None,
                parent_session: Some(source.to_string_lossy().into_owned()),
            },
        );
        let path = target_dir.join(session_file_name(&header.timestamp, &header.id));
        let mut store = Store::pending(path);
        let lines =
            std::iter::once(header.to_line()).chain(loaded.entries.iter().map(Entry::to_line));
        store.create_with(lines)?;
        let session = Session::from_parts(
            header,
            loaded.entries,
            Some(store),
            Some(target_dir.to_path_buf()),
        );
        Ok((session, loaded.warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::message::Message;
    use crate::session::test_util::{assistant, lines};

    #[test]
    fn an_empty_file_becomes_a_session_lazily_and_only_when_still_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("e.jsonl");
        std::fs::write(&p, "").unwrap();
        let (mut s, _) = Session::open(&p, "/w").unwrap();
        assert!(!s.is_written());
        s.append_message(Message::user("a")).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "",
            "lazy, as any new session"
        );
        s.append_message(assistant("b")).unwrap();
        assert_eq!(lines(&p).len(), 3);
        assert!(lines(&p)[0].starts_with(r#"{"type":"session","version":3"#));

        // Only blank lines is not empty: not a session, not touched.
        std::fs::write(&p, "\n\n").unwrap();
        assert!(matches!(
            Session::open(&p, "/w"),
            Err(SessionError::NotASession {
                reason: NotSessionReason::OnlyBlankLines,
                ..
            })
        ));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "\n\n");
    }

    #[test]
    fn a_future_version_is_refused_and_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f.jsonl");
        let text = "{\"type\":\"session\",\"version\":4,\"id\":\"x\"}\n";
        std::fs::write(&p, text).unwrap();
        let err = Session::open(&p, "/w").unwrap_err();
        assert!(matches!(
            err,
            SessionError::UnsupportedVersion { version: 4, ref path } if *path == p
        ));
        assert!(err.to_string().contains("newer pi"), "{err}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
    }

    #[test]
    fn reading_never_writes_and_opening_migrates() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("old.jsonl");
        let v2 = concat!(
            r#"{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"hookMessage","customType":"h","content":"x","display":true,"timestamp":1}}"#,
            "\n"
        );
        std::fs::write(&p, v2).unwrap();
        let read = Session::read(&p).unwrap();
        assert_eq!(read.migrates_from(), Some(2));
        drop(read);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), v2);
        assert!(!tmp.path().join("old.jsonl.bak").exists());

        let (s, warnings) = Session::read(&p).unwrap().open("/x").unwrap();
        assert_eq!(warnings[0].kind, WarningKind::Migrated);
        assert_eq!(s.header().version, CURRENT_VERSION);
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("old.jsonl.bak")).unwrap(),
            v2
        );
        assert!(std::fs::read_to_string(&p)
            .unwrap()
            .contains(r#""role":"custom""#));
    }
}
