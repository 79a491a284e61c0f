//! File I/O for one session file: lazy first write, exclusive create, one append per entry,
//! and the one rewrite there is, migration.
//!
//! Every line goes out in a single `write_all` of the line plus its newline on an unbuffered
//! `File`, so when the process is killed (even with `kill -9`) the kernel already holds every
//! completed line and at most the line being written is cut short; the loader skips such a
//! truncated last line, and the first append after reopening starts on a fresh line. There is
//! no `fsync`: that would guard against power loss, not process death, at a large cost per
//! entry.
//!
//! A file that was loaded is written only while it is still the file that was loaded (same
//! device and inode), so a file swapped in under its name is never appended to. Migration
//! never edits the old file: the new content goes to a temporary file beside it, which is
//! synced and renamed over the old name only once complete, and the old file stays as
//! `<name>.bak`.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::file::Identity;
use super::SessionError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing at the path yet: the first write creates it exclusively.
    Pending,
    /// An empty (0-byte) file was opened: the first write fills it, if it is still that file
    /// and still empty.
    Empty,
    /// The file holds our header (written by us, or loaded).
    Written,
}

#[derive(Debug)]
pub(crate) struct Store {
    path: PathBuf,
    /// Open append handle, opened on first use.
    file: Option<File>,
    state: State,
    /// The file that was loaded (or emptied); writes go to it and no other.
    identity: Option<Identity>,
    /// The existing file does not end in a newline (an interrupted write): start the next
    /// append on a new line so it is not glued to the fragment.
    needs_newline: bool,
}

impl Store {
    /// A file that does not exist yet; nothing is written until [`Store::create_with`].
    pub(crate) fn pending(path: PathBuf) -> Self {
        Store {
            path,
            file: None,
            state: State::Pending,
            identity: None,
            needs_newline: false,
        }
    }

    /// An empty file that was opened as a new session; written by [`Store::create_with`].
    pub(crate) fn empty(path: PathBuf, identity: Identity) -> Self {
        Store {
            path,
            file: None,
            state: State::Empty,
            identity: Some(identity),
            needs_newline: false,
        }
    }

    /// A file that exists and was loaded.
    pub(crate) fn existing(path: PathBuf, ends_with_newline: bool, identity: Identity) -> Self {
        Store {
            path,
            file: None,
            state: State::Written,
            identity: Some(identity),
            needs_newline: !ends_with_newline,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn is_created(&self) -> bool {
        self.state == State::Written
    }

    /// Writes the first `lines` of a new session: into a new file created exclusively
    /// (another session's file is never overwritten), or into the empty file it was opened
    /// on. One write per line.
    pub(crate) fn create_with<I>(&mut self, lines: I) -> Result<(), SessionError>
    where
        I: IntoIterator<Item = String>,
    {
        let file = match self.state {
            State::Written => {
                return Err(SessionError::AlreadyExists {
                    path: self.path.clone(),
                })
            }
            State::Empty => {
                let file = self.open_append()?;
                let len = file
                    .metadata()
                    .map_err(|e| SessionError::io(&self.path, e))?
                    .len();
                if len != 0 {
                    return Err(SessionError::AlreadyExists {
                        path: self.path.clone(),
                    });
                }
                file
            }
            State::Pending => {
                if let Some(dir) = self.path.parent() {
                    if !dir.as_os_str().is_empty() {
                        std::fs::create_dir_all(dir).map_err(|e| SessionError::io(dir, e))?;
                    }
                }
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&self.path)
                    .map_err(|e| SessionError::io(&self.path, e))?
            }
        };
        self.state = State::Written;
        self.file = Some(file);
        for line in lines {
            self.append(&line)?;
        }
        Ok(())
    }

    /// Opens the file for appending, refusing it if it is no longer the file that was read.
    fn open_append(&self) -> Result<File, SessionError> {
        let file = OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map_err(|e| SessionError::io(&self.path, e))?;
        if let Some(expected) = self.identity {
            let meta = file
                .metadata()
                .map_err(|e| SessionError::io(&self.path, e))?;
            if Identity::of(&meta) != expected {
                return Err(SessionError::Replaced {
                    path: self.path.clone(),
                });
            }
        }
        Ok(file)
    }

    /// Appends one line (a newline is added).
    pub(crate) fn append(&mut self, line: &str) -> Result<(), SessionError> {
        if self.file.is_none() {
            self.file = Some(self.open_append()?);
        }
        let mut buf = String::with_capacity(line.len() + 2);
        if self.needs_newline {
            buf.push('\n');
        }
        buf.push_str(line);
        buf.push('\n');
        let path = &self.path;
        if let Some(f) = self.file.as_mut() {
            f.write_all(buf.as_bytes())
                .and_then(|()| f.flush())
                .map_err(|e| SessionError::io(path, e))?;
        }
        self.needs_newline = false;
        Ok(())
    }

    /// Replaces a v1/v2 file (migrated in memory from version `from`) by `lines`: they are
    /// written to a temporary file in the same directory and synced, the original is kept as
    /// `<name>.bak` (never overwriting a file there), and only then is the new file renamed
    /// over the old name. Through a symlink, the link's target is replaced and the link kept.
    /// Returns the backup's path.
    pub(crate) fn migrate<I>(&mut self, lines: I, from: u32) -> Result<PathBuf, SessionError>
    where
        I: IntoIterator<Item = String>,
    {
        let target =
            std::fs::canonicalize(&self.path).map_err(|e| SessionError::io(&self.path, e))?;
        let meta = std::fs::metadata(&target).map_err(|e| SessionError::io(&target, e))?;
        if self.identity.is_some_and(|id| id != Identity::of(&meta)) {
            return Err(SessionError::Replaced {
                path: self.path.clone(),
            });
        }
        // A canonical path to a regular file always has both.
        let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
            let e = std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file's path");
            return Err(SessionError::io(&target, e));
        };
        let mut backup_name = name.to_os_string();
        backup_name.push(".bak");
        let backup = dir.join(backup_name);
        let backup_exists = || SessionError::BackupExists {
            path: self.path.clone(),
            backup: backup.clone(),
            from,
        };
        if std::fs::symlink_metadata(&backup).is_ok() {
            return Err(backup_exists());
        }

        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(name);
        prefix.push(".");
        let mut tmp = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".migrating")
            .tempfile_in(dir)
            .map_err(|e| SessionError::io(dir, e))?;
        let tmp_path = tmp.path().to_path_buf();
        let io = |e| SessionError::io(&tmp_path, e);
        {
            let mut w = BufWriter::new(tmp.as_file_mut());
            for line in lines {
                w.write_all(line.as_bytes()).map_err(io)?;
                w.write_all(b"\n").map_err(io)?;
            }
            w.flush().map_err(io)?;
        }
        tmp.as_file()
            .set_permissions(meta.permissions())
            .map_err(io)?;
        tmp.as_file().sync_all().map_err(io)?;

        keep_backup(&target, &backup).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => backup_exists(),
            _ => SessionError::io(&backup, e),
        })?;
        if let Err(e) = tmp.persist(&target) {
            // The original is untouched under its name; the backup would only be in the way.
            let _ = std::fs::remove_file(&backup);
            return Err(SessionError::io(&target, e.error));
        }
        // The rename is durable once the directory is; a failure here loses nothing.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        let meta = std::fs::metadata(&target).map_err(|e| SessionError::io(&target, e))?;
        self.identity = Some(Identity::of(&meta));
        self.file = None;
        self.state = State::Written;
        self.needs_newline = false;
        Ok(backup)
    }
}

/// `backup` becomes another name of `original` (a hard link: no copy, the same bytes and
/// times), or a copy where links are not supported. Fails if `backup` exists.
fn keep_backup(original: &Path, backup: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(original, backup) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(e),
        Err(_) => {
            let mut out = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(backup)?;
            let copied =
                std::io::copy(&mut File::open(original)?, &mut out).and_then(|_| out.sync_all());
            if copied.is_err() {
                let _ = std::fs::remove_file(backup);
            }
            copied
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(p: &Path) -> Identity {
        Identity::of(&std::fs::metadata(p).unwrap())
    }

    #[test]
    fn create_is_exclusive_and_appends_add_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("sub/f.jsonl");
        let mut s = Store::pending(p.clone());
        s.create_with(vec!["a".to_string(), "b".to_string()])
            .unwrap();
        s.append("c").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\nb\nc\n");
        let mut again = Store::pending(p.clone());
        assert!(matches!(
            again.create_with(Vec::new()),
            Err(SessionError::AlreadyExists { .. })
        ));
    }

    #[test]
    fn an_unterminated_file_gets_a_newline_before_the_next_line() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f.jsonl");
        std::fs::write(&p, "a\n{\"trunc").unwrap();
        let mut s = Store::existing(p.clone(), false, identity(&p));
        s.append("b").unwrap();
        s.append("c").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\n{\"trunc\nb\nc\n");
    }

    #[test]
    fn an_empty_file_is_filled_only_while_it_is_the_same_empty_file() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f.jsonl");
        std::fs::write(&p, "").unwrap();
        let mut s = Store::empty(p.clone(), identity(&p));
        assert!(!s.is_created());
        s.create_with(vec!["h".to_string()]).unwrap();
        s.append("e").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "h\ne\n");

        // Something was written to it meanwhile: not ours any more.
        std::fs::write(&p, "").unwrap();
        let mut s = Store::empty(p.clone(), identity(&p));
        std::fs::write(&p, "someone else's\n").unwrap();
        assert!(matches!(
            s.create_with(vec!["h".to_string()]),
            Err(SessionError::AlreadyExists { .. })
        ));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "someone else's\n");
    }

    #[test]
    fn a_file_replaced_under_its_name_is_not_appended_to() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f.jsonl");
        std::fs::write(&p, "h\n").unwrap();
        let mut s = Store::existing(p.clone(), true, identity(&p));
        let other = tmp.path().join("other");
        std::fs::write(&other, "not a session\n").unwrap();
        std::fs::rename(&other, &p).unwrap();
        assert!(matches!(s.append("e"), Err(SessionError::Replaced { .. })));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "not a session\n");
    }

    #[test]
    fn migration_renames_a_complete_file_over_the_old_and_keeps_a_backup() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f.jsonl");
        std::fs::write(&p, "old\n").unwrap();
        let mut s = Store::existing(p.clone(), true, identity(&p));
        let backup = s.migrate(vec!["new".to_string()], 1).unwrap();
        assert_eq!(backup, tmp.path().join("f.jsonl.bak"));
        s.append("more").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\nmore\n");
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), "old\n");
        let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(names.len(), 2, "no temporary file is left behind");

        // A second migration would need the backup's name: refused, nothing changes.
        let mut again = Store::existing(p.clone(), true, identity(&p));
        assert!(matches!(
            again.migrate(vec!["newer".to_string()], 2),
            Err(SessionError::BackupExists { from: 2, .. })
        ));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\nmore\n");
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), "old\n");
    }
}
