//! Opening a path that is supposed to be a session file, without being fooled by what is
//! really there.
//!
//! Reading a FIFO blocks until someone writes to it, and reading a device such as
//! `/dev/zero` never ends, so a path is only read once it is known to be a regular file: the
//! kind is checked on the path (for a clear error), then the file is opened without blocking
//! and checked again on the open descriptor, so a file swapped in between is caught too. The
//! descriptor's identity (device and inode) is kept, so that writes later go to the file that
//! was read and to no other ([`Identity`]).

use std::fs::{File, Metadata, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use super::{NotSessionReason, SessionError};

/// Which file a descriptor or path refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Identity {
    dev: u64,
    ino: u64,
}

impl Identity {
    pub(crate) fn of(meta: &Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// A regular file opened for reading.
#[derive(Debug)]
pub(crate) struct Opened {
    pub file: File,
    pub identity: Identity,
}

/// Opens `path` for reading if it is a regular file (symlinks followed). `Ok(None)` when
/// nothing at all is at `path`; a symlink pointing nowhere is an error, since creating a
/// session there would write through the link.
pub(crate) fn open_existing(path: &Path) -> Result<Option<Opened>, SessionError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SessionError::io(path, e)),
        Ok(_) => open_regular(path).map(Some),
    }
}

/// Opens `path` for reading, refusing anything but a regular file.
pub(crate) fn open_regular(path: &Path) -> Result<Opened, SessionError> {
    match std::fs::metadata(path) {
        Ok(meta) => check_kind(path, &meta)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Ok(target) = std::fs::read_link(path) {
                return Err(SessionError::not_a_session(
                    path,
                    NotSessionReason::DanglingSymlink(target),
                ));
            }
            return Err(SessionError::io(path, e));
        }
        Err(e) => return Err(SessionError::io(path, e)),
    }
    // O_NONBLOCK: should a FIFO have been swapped in since the check, the open returns at
    // once instead of waiting for a writer. It changes nothing for a regular file's reads.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| SessionError::io(path, e))?;
    let meta = file.metadata().map_err(|e| SessionError::io(path, e))?;
    check_kind(path, &meta)?;
    Ok(Opened {
        file,
        identity: Identity::of(&meta),
    })
}

fn check_kind(path: &Path, meta: &Metadata) -> Result<(), SessionError> {
    let ft = meta.file_type();
    let reason = if ft.is_file() {
        return Ok(());
    } else if ft.is_dir() {
        NotSessionReason::Directory
    } else if ft.is_fifo() {
        NotSessionReason::Special("FIFO (named pipe)")
    } else if ft.is_socket() {
        NotSessionReason::Special("socket")
    } else if ft.is_char_device() {
        NotSessionReason::Special("character device")
    } else if ft.is_block_device() {
        NotSessionReason::Special("block device")
    } else {
        NotSessionReason::Special("special file")
    };
    Err(SessionError::not_a_session(path, reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(r: Result<impl std::fmt::Debug, SessionError>) -> NotSessionReason {
        match r {
            Err(SessionError::NotASession { reason, .. }) => reason,
            other => panic!("expected NotASession, got {other:?}"),
        }
    }

    #[test]
    fn only_regular_files_open_and_nothing_blocks() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f.jsonl");
        std::fs::write(&file, "x").unwrap();
        let opened = open_regular(&file).unwrap();
        assert_eq!(
            opened.identity,
            Identity::of(&std::fs::metadata(&file).unwrap())
        );

        assert_eq!(
            reason(open_regular(tmp.path())),
            NotSessionReason::Directory
        );
        let fifo = tmp.path().join("p.jsonl");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(
            reason(open_regular(&fifo)),
            NotSessionReason::Special("FIFO (named pipe)")
        );
        assert_eq!(
            reason(open_regular(Path::new("/dev/null"))),
            NotSessionReason::Special("character device")
        );
    }

    #[test]
    fn missing_is_nothing_but_a_dangling_link_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(open_existing(&tmp.path().join("none")).unwrap().is_none());
        let link = tmp.path().join("l.jsonl");
        std::os::unix::fs::symlink(tmp.path().join("gone"), &link).unwrap();
        assert_eq!(
            reason(open_existing(&link)),
            NotSessionReason::DanglingSymlink(tmp.path().join("gone"))
        );
    }
}
