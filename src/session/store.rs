//! File I/O for one session file: lazy first write, exclusive create, one append per entry.
//!
//! Every line goes out in a single `write_all` of the line plus its newline on an unbuffered
//! `File`, so when the process is killed (even with `kill -9`) the kernel already holds every
//! completed line and at most the line being written is cut short; the loader skips such a
//! truncated last line, and the first append after reopening starts on a fresh line. There is
//! no `fsync`: that would guard against power loss, not process death, at a large cost per
//! entry.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::SessionError;

#[derive(Debug)]
pub(crate) struct Store {
    path: PathBuf,
    /// Open append handle, opened on first use.
    file: Option<File>,
    /// Whether the file exists with our header (written by us or loaded).
    created: bool,
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
            created: false,
            needs_newline: false,
        }
    }

    /// A file that exists and was loaded.
    pub(crate) fn existing(path: PathBuf, ends_with_newline: bool) -> Self {
        Store {
            path,
            file: None,
            created: true,
            needs_newline: !ends_with_newline,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn is_created(&self) -> bool {
        self.created
    }

    /// Creates the file exclusively (it must not exist: another session's file is never
    /// overwritten) and writes `lines`, one write per line.
    pub(crate) fn create_with<I>(&mut self, lines: I) -> Result<(), SessionError>
    where
        I: IntoIterator<Item = String>,
    {
        if let Some(dir) = self.path.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir).map_err(|e| SessionError::io(dir, e))?;
            }
        }
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&self.path)
            .map_err(|e| SessionError::io(&self.path, e))?;
        self.created = true;
        self.file = Some(file);
        for line in lines {
            self.append(&line)?;
        }
        Ok(())
    }

    /// Appends one line (a newline is added).
    pub(crate) fn append(&mut self, line: &str) -> Result<(), SessionError> {
        let path = &self.path;
        if self.file.is_none() {
            let f = OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(|e| SessionError::io(path, e))?;
            self.file = Some(f);
        }
        let mut buf = String::with_capacity(line.len() + 2);
        if self.needs_newline {
            buf.push('\n');
        }
        buf.push_str(line);
        buf.push('\n');
        if let Some(f) = self.file.as_mut() {
            f.write_all(buf.as_bytes())
                .and_then(|()| f.flush())
                .map_err(|e| SessionError::io(path, e))?;
        }
        self.needs_newline = false;
        Ok(())
    }

    /// Replaces the file's content atomically (temp file in the same directory, then
    /// rename), for files migrated from v1/v2 as pi rewrites them.
    pub(crate) fn rewrite<I>(&mut self, lines: I) -> Result<(), SessionError>
    where
        I: IntoIterator<Item = String>,
    {
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut tmp =
            tempfile::NamedTempFile::new_in(&dir).map_err(|e| SessionError::io(&dir, e))?;
        for line in lines {
            tmp.write_all(line.as_bytes())
                .and_then(|()| tmp.write_all(b"\n"))
                .map_err(|e| SessionError::io(tmp.path(), e))?;
        }
        tmp.persist(&self.path)
            .map_err(|e| SessionError::io(&self.path, e.error))?;
        self.file = None;
        self.created = true;
        self.needs_newline = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut s = Store::existing(p.clone(), false);
        s.append("b").unwrap();
        s.append("c").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\n{\"trunc\nb\nc\n");
    }

    #[test]
    fn rewrite_replaces_content() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f.jsonl");
        std::fs::write(&p, "old\n").unwrap();
        let mut s = Store::existing(p.clone(), true);
        s.rewrite(vec!["new".to_string()]).unwrap();
        s.append("more").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\nmore\n");
    }
}
