//! Where an export goes, and what it may replace there.
//!
//! No file is clobbered (issue 8's rule): a path is written when nothing is there, when an
//! empty regular file is there (as `mktemp` leaves one), or when an earlier export is there
//! (a file that begins with [`MARKER`]), so exporting to the same path again just updates it.
//! Anything else — another file, a symbolic link, a FIFO or device — is refused with an error
//! naming the path. A directory gets the default file name inside it. The page is written to a
//! temporary file beside the target and renamed over it, so the target never holds half an
//! export; a new file is renamed into place only if the name is still free at that moment, and
//! a file is replaced only if it is still the one that was checked.

use std::fs::{Metadata, OpenOptions, Permissions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::page::MARKER;
use super::{ExportError, RefuseReason};

/// What is at the target path now.
#[derive(Debug)]
pub(crate) enum Existing {
    Nothing,
    /// An empty file or an earlier export: replaced, keeping its permissions.
    Replaceable {
        permissions: Permissions,
        identity: Identity,
    },
}

/// Which file was checked: an inode number alone can be reused by a file created after the
/// check, so its size and modification time are compared too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
}

impl Identity {
    fn of(m: &Metadata) -> Identity {
        Identity {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
        }
    }
}

/// Looks at `path` and decides whether an export may be written there.
pub(crate) fn inspect(path: &Path) -> Result<Existing, ExportError> {
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Existing::Nothing),
        Err(e) => return Err(ExportError::io(path, e)),
        Ok(m) => m,
    };
    let refuse = |reason| ExportError::Refused {
        path: path.to_path_buf(),
        reason,
    };
    let ft = meta.file_type();
    if ft.is_symlink() {
        let target = std::fs::read_link(path).unwrap_or_default();
        return Err(refuse(RefuseReason::Symlink(target)));
    }
    if !ft.is_file() {
        return Err(refuse(RefuseReason::Special(kind_of(&meta))));
    }
    // O_NONBLOCK and O_NOFOLLOW: should a FIFO or a link have been swapped in since the check,
    // the open returns at once instead of waiting for a writer or following the link.
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| ExportError::io(path, e))?;
    let meta = file.metadata().map_err(|e| ExportError::io(path, e))?;
    if !meta.file_type().is_file() {
        return Err(refuse(RefuseReason::Special(kind_of(&meta))));
    }
    if meta.len() > 0 {
        let mut start = Vec::with_capacity(MARKER.len());
        (&mut file)
            .take(MARKER.len() as u64)
            .read_to_end(&mut start)
            .map_err(|e| ExportError::io(path, e))?;
        if start != MARKER.as_bytes() {
            return Err(refuse(RefuseReason::NotAnExport));
        }
    }
    Ok(Existing::Replaceable {
        permissions: meta.permissions(),
        identity: Identity::of(&meta),
    })
}

fn kind_of(meta: &Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        "directory"
    } else if ft.is_fifo() {
        "FIFO (named pipe)"
    } else if ft.is_socket() {
        "socket"
    } else if ft.is_char_device() {
        "character device"
    } else if ft.is_block_device() {
        "block device"
    } else {
        "special file"
    }
}

/// The directory the file goes in (`.` for a bare file name), which must exist.
pub(crate) fn parent_dir(path: &Path) -> Result<PathBuf, ExportError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => Ok(dir),
        Ok(_) => Err(ExportError::NoDirectory { dir }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(ExportError::NoDirectory { dir }),
        Err(e) => Err(ExportError::io(&dir, e)),
    }
}

/// A temporary file beside the target, created as any new file is (mode 0666 less the umask).
pub(crate) fn temp_file(dir: &Path) -> Result<tempfile::NamedTempFile, ExportError> {
    tempfile::Builder::new()
        .prefix(".pi-export-")
        .suffix(".html.tmp")
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(|e| ExportError::io(dir, e))
}

/// Moves the written page to `path`, replacing only what [`inspect`] allowed.
pub(crate) fn commit(
    tmp: tempfile::NamedTempFile,
    path: &Path,
    existing: Existing,
) -> Result<(), ExportError> {
    match existing {
        Existing::Nothing => match tmp.persist_noclobber(path) {
            Ok(_) => Ok(()),
            // Someone else took the name while the page was being written.
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => Err(ExportError::Refused {
                path: path.to_path_buf(),
                reason: RefuseReason::Appeared,
            }),
            Err(e) => Err(ExportError::io(path, e.error)),
        },
        Existing::Replaceable {
            permissions,
            identity,
        } => {
            tmp.as_file()
                .set_permissions(permissions)
                .map_err(|e| ExportError::io(tmp.path(), e))?;
            // The file that was checked must still be the one there.
            match std::fs::symlink_metadata(path) {
                Ok(m) if m.file_type().is_file() && Identity::of(&m) == identity => {}
                Ok(_) | Err(_) => {
                    return Err(ExportError::Refused {
                        path: path.to_path_buf(),
                        reason: RefuseReason::Replaced,
                    })
                }
            }
            tmp.persist(path)
                .map(|_| ())
                .map_err(|e| ExportError::io(path, e.error))
        }
    }
}
