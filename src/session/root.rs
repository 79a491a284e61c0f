//! The session directory that hook session calls are confined to.
//!
//! A hook may switch the run to another session file or create one (`session.switch`,
//! `session.new`, `session.fork`, `session.clone`), but only inside the run's sessions root:
//! the configured session directory (`--session-dir` > `PI_CODING_AGENT_SESSION_DIR` >
//! `sessionDir` setting) or else `<agent dir>/sessions`, which holds every project's folder, so
//! a hook can still resume another project's session as `/resume` does. Both the root and
//! the candidate are resolved before comparing: symlinks as far as the path exists, then `.`
//! and `..` of the rest, so neither `root/../x` nor a symlink inside the root that points out
//! of it gets through. The command line is not confined: a path the user typed is theirs.

use std::path::{Component, Path, PathBuf};

use super::SessionError;

/// `path` (relative to the current directory) resolved: symlinks followed for the longest
/// prefix that exists, then the remaining components applied by name. Only a missing
/// component ends the real resolution; any other error (permissions, a file used as a
/// directory, a symlink loop, a symlink to nothing) is returned, since guessing past it could
/// be fooled.
pub fn resolve(path: &Path) -> std::io::Result<PathBuf> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    let components: Vec<Component> = absolute.components().collect();
    for split in (0..=components.len()).rev() {
        let prefix: PathBuf = components[..split].iter().collect();
        match std::fs::canonicalize(&prefix) {
            Ok(mut out) => {
                for c in &components[split..] {
                    match c {
                        Component::ParentDir => {
                            out.pop();
                        }
                        Component::Normal(name) => out.push(name),
                        Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
                    }
                }
                return Ok(out);
            }
            // A symlink that points nowhere would be followed by whatever creates the path
            // later, to wherever it points: no verdict can be given.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if std::fs::symlink_metadata(&prefix).is_ok() {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "a symbolic link on this path points to nothing",
                    ));
                }
            }
            Err(e) => return Err(e),
        }
    }
    // Not even the root directory resolved.
    Err(std::io::ErrorKind::NotFound.into())
}

/// `path` resolved, if it is `root` or inside it (both resolved); otherwise
/// [`SessionError::OutsideSessionDir`], naming both as given and what `path` resolved to.
pub fn confine(root: &Path, path: &Path) -> Result<PathBuf, SessionError> {
    let resolved_root = resolve(root).map_err(|e| SessionError::io(root, e))?;
    let resolved = resolve(path).map_err(|e| SessionError::io(path, e))?;
    if resolved.starts_with(&resolved_root) {
        Ok(resolved)
    } else {
        Err(SessionError::OutsideSessionDir {
            path: path.to_path_buf(),
            resolved,
            root: root.to_path_buf(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_dot_and_symlinks_are_resolved_before_the_check() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("sessions");
        std::fs::create_dir_all(root.join("--p--")).unwrap();
        std::fs::write(root.join("--p--/s.jsonl"), "").unwrap();
        std::fs::write(base.join("outside.jsonl"), "").unwrap();
        std::os::unix::fs::symlink(base.join("outside.jsonl"), root.join("--p--/l.jsonl")).unwrap();
        std::os::unix::fs::symlink(&base, root.join("up")).unwrap();

        assert_eq!(
            confine(&root, &root.join("--p--/s.jsonl")).unwrap(),
            root.join("--p--/s.jsonl")
        );
        // Not created yet: the folder of a new session, or a file in it.
        assert_eq!(
            confine(&root, &root.join("--new--/x.jsonl")).unwrap(),
            root.join("--new--/x.jsonl")
        );
        assert_eq!(confine(&root, &root).unwrap(), root);
        for escape in [
            root.join("--p--/../../outside.jsonl"),
            root.join("--p--/l.jsonl"),
            root.join("up/outside.jsonl"),
            root.join("missing/../../outside.jsonl"),
            base.join("sessions-not/x.jsonl"),
            PathBuf::from("/etc/passwd"),
        ] {
            match confine(&root, &escape) {
                Err(SessionError::OutsideSessionDir { path, root: r, .. }) => {
                    assert_eq!(path, escape);
                    assert_eq!(r, root);
                }
                other => panic!("{}: {other:?}", escape.display()),
            }
        }
        std::os::unix::fs::symlink(base.join("later"), root.join("dangling")).unwrap();
        assert!(matches!(
            confine(&root, &root.join("dangling/x.jsonl")),
            Err(SessionError::Io { .. })
        ));
        let message = confine(&root, &root.join("--p--/l.jsonl"))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(&format!(
                "resolves to {}",
                base.join("outside.jsonl").display()
            )),
            "{message}"
        );
    }

    #[test]
    fn a_root_reached_through_a_symlink_still_contains_its_files() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("real")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        assert!(confine(&base.join("link"), &base.join("real/a.jsonl")).is_ok());
        assert!(confine(&base.join("real"), &base.join("link/a.jsonl")).is_ok());
    }
}
