//! `/import`'s storage step: a session file from anywhere is copied into this project's
//! session directory under its own name (`name-1.jsonl`, `name-2.jsonl`, … when that is
//! taken, as pi 1.6 does), so the imported session keeps its id and the original is never
//! written to. Opening the copy is the controller's business.

use std::io;
use std::path::{Path, PathBuf};

/// Why a file could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// pi 1.6's words.
    #[error("File not found: {}", .0.display())]
    NotFound(PathBuf),
    #[error("cannot copy {} to {}: {source}", from.display(), to.display())]
    Copy {
        from: PathBuf,
        to: PathBuf,
        source: io::Error,
    },
}

/// Where `source` is stored in `session_dir`, and whether it had to be copied there (a file
/// already in the directory is used as it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    pub path: PathBuf,
    pub copied: bool,
}

/// Copies `source` into `session_dir` (made if missing) under a name no file has yet.
pub fn copy_into(source: &Path, session_dir: &Path) -> Result<Imported, ImportError> {
    if !source.is_file() {
        return Err(ImportError::NotFound(source.to_path_buf()));
    }
    let copy_error = |to: &Path, source_err: io::Error| ImportError::Copy {
        from: source.to_path_buf(),
        to: to.to_path_buf(),
        source: source_err,
    };
    std::fs::create_dir_all(session_dir).map_err(|e| copy_error(session_dir, e))?;
    let name = source.file_name().unwrap_or_default();
    let first = session_dir.join(name);
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same(&first, source) {
        return Ok(Imported {
            path: first,
            copied: false,
        });
    }
    let stem = Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = Path::new(name)
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let mut n = 0;
    loop {
        let to = match n {
            0 => first.clone(),
            n => session_dir.join(format!("{stem}-{n}{ext}")),
        };
        // `create_new` claims the name atomically: two imports never write one file.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&to)
        {
            Ok(mut out) => {
                let copied =
                    std::fs::File::open(source).and_then(|mut from| io::copy(&mut from, &mut out));
                if let Err(e) = copied {
                    let _ = std::fs::remove_file(&to);
                    return Err(copy_error(&to, e));
                }
                return Ok(Imported {
                    path: to,
                    copied: true,
                });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(copy_error(&to, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_gets_the_next_free_suffix_and_the_source_is_left_alone() {
        let src_dir = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let src = src_dir.path().join("s.jsonl");
        std::fs::write(&src, "line\n").unwrap();
        std::fs::write(dir.path().join("s.jsonl"), "other\n").unwrap();
        let a = copy_into(&src, dir.path()).unwrap();
        let b = copy_into(&src, dir.path()).unwrap();
        assert_eq!(a.path, dir.path().join("s-1.jsonl"));
        assert_eq!(b.path, dir.path().join("s-2.jsonl"));
        assert!(a.copied && b.copied);
        assert_eq!(std::fs::read_to_string(&b.path).unwrap(), "line\n");
        assert_eq!(std::fs::read_to_string(&src).unwrap(), "line\n");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("s.jsonl")).unwrap(),
            "other\n"
        );
    }

    #[test]
    fn a_file_already_in_the_directory_is_not_copied() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("s.jsonl");
        std::fs::write(&src, "line\n").unwrap();
        let got = copy_into(&src, dir.path()).unwrap();
        assert_eq!(
            got,
            Imported {
                path: src,
                copied: false
            }
        );
    }

    #[test]
    fn a_missing_file_is_named_in_pi_words() {
        let dir = tempfile::tempdir().unwrap();
        let err = copy_into(&dir.path().join("nope.jsonl"), dir.path()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "File not found: {}",
                dir.path().join("nope.jsonl").display()
            )
        );
    }
}
