//! Rewriting an `mcp.json` file without losing anything: the edit is applied to what is on
//! disk under an advisory lock on the file's directory (the file itself is replaced by a
//! rename, so a lock on it would guard a file that is gone), written to a temporary file
//! beside it with the original's permissions, and renamed over it only if the file still holds
//! what was read — an editor or another tool that wrote it meanwhile (they do not take the
//! lock) makes the edit start over from their version. A file pi cannot parse is never
//! written. A symbolic link (a dotfiles repository) is followed, so the link stays a link.

use std::fs::{self, File, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::mcp::edit::{Document, EditError};

/// Start-overs after a concurrent change before giving up.
const ATTEMPTS: usize = 5;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: {source}; the file was left as it is", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: EditError,
    },
    #[error("{}: {source}", path.display())]
    Rejected {
        path: PathBuf,
        #[source]
        source: EditError,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} kept changing while pi was writing it; nothing was written, try again", path.display())]
    Busy { path: PathBuf },
}

/// What an edit did.
#[derive(Debug)]
pub struct Written<T> {
    /// The edit's own result.
    pub value: T,
    /// The file written (a link's target).
    pub path: PathBuf,
    /// The file did not exist before.
    pub created: bool,
}

/// A file's bytes, or `None` when it does not exist. Anything but a regular file is an error
/// (reading a FIFO would block).
pub fn read(path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    let err = |source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    };
    match fs::metadata(path) {
        Ok(m) if !m.is_file() => return Err(err(io::Error::other("not a regular file"))),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e)),
    }
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(err(e)),
    }
}

/// Apply `change` to the document in `path` (an empty one if the file does not exist) and
/// write the result. `private`: a new file and directory are the owner's only (the user's
/// file, which may hold header values); a project's file is created like any other file.
/// `change` may run more than once (once per start-over) and must depend only on the document.
pub fn edit<T>(
    path: &Path,
    private: bool,
    mut change: impl FnMut(&mut Document) -> Result<T, EditError>,
) -> Result<Written<T>, StoreError> {
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let write_err = |source| StoreError::Write {
        path: target.clone(),
        source,
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    if private {
        builder.mode(0o700);
    }
    builder.create(&dir).map_err(write_err)?;
    let lock = File::open(&dir).map_err(write_err)?;
    // File systems without advisory locks still get the changed-file check below.
    let _ = lock.lock();
    for _ in 0..ATTEMPTS {
        let before = read(&target)?;
        let mut doc = match &before {
            None => Document::new(),
            Some(bytes) => Document::parse(bytes).map_err(|source| StoreError::Unreadable {
                path: target.clone(),
                source,
            })?,
        };
        let value = change(&mut doc).map_err(|source| StoreError::Rejected {
            path: target.clone(),
            source,
        })?;
        let mode = match fs::metadata(&target) {
            Ok(m) => Some(m.permissions()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(write_err(e)),
        };
        let mut tmp = tempfile::Builder::new()
            .prefix(".mcp.json.")
            .suffix(".tmp")
            .permissions(Permissions::from_mode(if private { 0o600 } else { 0o666 }))
            .tempfile_in(&dir)
            .map_err(write_err)?;
        if let Some(mode) = &mode {
            tmp.as_file()
                .set_permissions(mode.clone())
                .map_err(write_err)?;
        }
        let text = doc.to_text().map_err(|e| write_err(e.into()))?;
        tmp.write_all(text.as_bytes()).map_err(write_err)?;
        tmp.as_file().sync_all().map_err(write_err)?;
        if read(&target)? != before {
            continue;
        }
        tmp.persist(&target).map_err(|e| write_err(e.error))?;
        // The rename itself reaches the disk with the directory.
        let _ = lock.sync_all();
        return Ok(Written {
            value,
            path: target,
            created: before.is_none(),
        });
    }
    Err(StoreError::Busy { path: target })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn add(name: &'static str) -> impl FnMut(&mut Document) -> Result<bool, EditError> {
        move |doc| {
            doc.insert(name, json!({"command": name}), false)
                .map(|(replaced, _)| replaced)
        }
    }

    #[test]
    fn a_file_written_by_someone_else_during_the_edit_is_not_clobbered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        fs::write(&path, r#"{"mcpServers": {"a": {"command": "a"}}}"#).unwrap();
        let mut calls = 0;
        let mut inner = add("mine");
        let written = edit(&path, true, |doc| {
            calls += 1;
            if calls == 1 {
                // Another program saves its own change between pi's read and rename.
                fs::write(
                    &path,
                    r#"{"mcpServers": {"a": {"command": "a"}, "theirs": {"command": "t"}}}"#,
                )
                .unwrap();
            }
            inner(doc)
        })
        .unwrap();
        assert_eq!(
            calls, 2,
            "the edit starts over from the other writer's version"
        );
        let doc = Document::parse(fs::read(&path).unwrap()).unwrap();
        assert_eq!(doc.names(), ["a", "theirs", "mine"]);
        assert!(!written.created);
    }

    #[test]
    fn a_file_that_keeps_changing_is_left_alone_with_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        let mut n = 0;
        let err = edit(&path, true, |doc| {
            n += 1;
            fs::write(&path, format!(r#"{{"mcpServers": {{}}, "n": {n}}}"#)).unwrap();
            doc.insert("x", json!({"command": "x"}), false)
        })
        .unwrap_err();
        assert!(matches!(err, StoreError::Busy { .. }), "{err}");
        assert!(err.to_string().contains("mcp.json"), "{err}");
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            format!(r#"{{"mcpServers": {{}}, "n": {ATTEMPTS}}}"#)
        );
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn permissions_are_kept_new_files_are_private_and_links_stay_links() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles").join("mcp.json");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, "{}").unwrap();
        fs::set_permissions(&real, Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("agent").join("mcp.json");
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let written = edit(&link, true, add("a")).unwrap();
        assert_eq!(written.path, real.canonicalize().unwrap());
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let mode = fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(
            Document::parse(fs::read(&real).unwrap()).unwrap().names(),
            ["a"]
        );

        let fresh = dir.path().join("new").join("deeper").join("mcp.json");
        let written = edit(&fresh, true, add("b")).unwrap();
        assert!(written.created);
        let mode = fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = fs::metadata(fresh.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
    }

    #[test]
    fn an_unparsable_file_or_a_refused_edit_leaves_the_bytes_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        let broken = b"{\"mcpServers\": {\"a\": ,}}  // mine\n";
        fs::write(&path, broken).unwrap();
        let err = edit(&path, true, add("x")).unwrap_err();
        assert!(matches!(err, StoreError::Unreadable { .. }), "{err}");
        assert!(err.to_string().contains("not valid JSON"), "{err}");
        assert_eq!(fs::read(&path).unwrap(), broken);

        let kept = b"{ \"mcpServers\": { \"x\": {\"command\": \"x\"} } }";
        fs::write(&path, kept).unwrap();
        let err = edit(&path, true, add("x")).unwrap_err();
        assert!(matches!(err, StoreError::Rejected { .. }), "{err}");
        assert_eq!(fs::read(&path).unwrap(), kept);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
