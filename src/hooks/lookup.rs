//! Finding the program of a hook command: a word with a `/` is a path (relative to a base the
//! caller chooses by source), a bare name is looked up in a list of directories.
//!
//! Why it is its own module: where a hook's program comes from is a trust decision. A
//! relative path in the user's settings must not resolve inside whatever repository pi runs
//! in, and neither may a bare name through an empty or relative `PATH` entry (`""`, `.`,
//! `bin` all mean "somewhere under the current directory"), so only absolute `PATH` entries
//! are searched. Managed entries search the fixed system `PATH` instead (`managed_env`).

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::exec_check::{self, ExecProblem};

/// Why a hook's program cannot be found.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    #[error("cannot find hook executable {program:?}{}", searched.as_deref().map(|s| format!(" on {s}")).unwrap_or_default())]
    NotFound {
        program: String,
        /// Where a bare name was looked for ("PATH", "the managed PATH …"); `None` for paths.
        searched: Option<String>,
    },
    #[error("cannot run hook executable {}: {problem}", path.display())]
    NotRunnable { path: PathBuf, problem: ExecProblem },
    #[error(
        "a managed hook command cannot start with `~` ({program:?}): the user's home is the \
         user's to change; use an absolute path"
    )]
    HomeRelative { program: String },
}

/// Where bare command names are looked up.
#[derive(Debug, Clone)]
pub struct SearchPath {
    dirs: Vec<PathBuf>,
    /// How error messages name it.
    label: String,
}

impl SearchPath {
    /// `PATH` from pi's environment, with empty and relative entries dropped.
    pub fn from_env() -> SearchPath {
        SearchPath {
            dirs: search_dirs(std::env::var_os("PATH").as_deref()),
            label: "PATH".into(),
        }
    }

    /// The fixed `PATH` of a managed hook (`path`, or the system default).
    pub fn managed(path: Option<&str>) -> SearchPath {
        let shown = path.unwrap_or(super::managed_env::SYSTEM_PATH);
        SearchPath {
            dirs: super::managed_env::managed_dirs(path),
            label: format!("the managed hooks' PATH {shown}"),
        }
    }
}

/// The absolute directories of a `PATH` value, in order; empty and relative entries are left
/// out (they would search the current directory).
pub fn search_dirs(path: Option<&OsStr>) -> Vec<PathBuf> {
    path.map(|p| {
        std::env::split_paths(p)
            .filter(|d| d.is_absolute())
            .collect()
    })
    .unwrap_or_default()
}

fn is_executable_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first executable file `name` in `dirs`.
pub fn find_on(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    dirs.iter()
        .map(|d| d.join(name))
        .find(|p| is_executable_file(p))
}

/// Resolves a command's first word: a path (with a `/`) against `base`, a bare name on
/// `search`. `home_ok` allows a leading `~/` (not in managed entries). A path that exists but
/// is a directory says so; whether a file can run is checked at spawn, where a hook that
/// cannot start is handled by its failure policy.
pub fn resolve_program(
    program: &str,
    base: &Path,
    search: &SearchPath,
    home_ok: bool,
) -> Result<PathBuf, LookupError> {
    if !program.contains('/') {
        return find_on(program, &search.dirs).ok_or_else(|| {
            // pi 1.6's `-e ext.ts` names a file in the cwd, not a command on PATH.
            let here = base.join(program);
            if exec_check::is_extension_module(&here) && here.is_file() {
                return LookupError::NotRunnable {
                    path: here,
                    problem: ExecProblem::ExtensionModule,
                };
            }
            LookupError::NotFound {
                program: program.to_string(),
                searched: Some(search.label.clone()),
            }
        });
    }
    if !home_ok && program.starts_with('~') {
        return Err(LookupError::HomeRelative {
            program: program.to_string(),
        });
    }
    let p = crate::tools::path::resolve(base, program);
    match exec_check::probe(&p).kind {
        exec_check::FileKind::Missing => Err(LookupError::NotFound {
            program: program.to_string(),
            searched: None,
        }),
        exec_check::FileKind::Directory => Err(LookupError::NotRunnable {
            path: p,
            problem: ExecProblem::Directory,
        }),
        _ => Ok(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exe(dir: &Path, name: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn only_absolute_path_entries_are_searched() {
        let dirs = search_dirs(Some(OsStr::new(".::bin:/usr/bin:rel/x:/bin")));
        assert_eq!(dirs, vec![PathBuf::from("/usr/bin"), PathBuf::from("/bin")]);
        assert!(search_dirs(None).is_empty());
    }

    #[test]
    fn bare_names_are_found_in_order_and_paths_against_the_base() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        exe(&b, "tool");
        let first = exe(&a, "tool");
        let search = SearchPath {
            dirs: vec![a.clone(), b.clone()],
            label: "PATH".into(),
        };
        assert_eq!(
            resolve_program("tool", d.path(), &search, true).unwrap(),
            first
        );
        let e = resolve_program("nope", d.path(), &search, true).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot find hook executable \"nope\" on PATH"
        );
        assert_eq!(
            resolve_program("b/tool", d.path(), &search, true).unwrap(),
            b.join("tool")
        );
        let e = resolve_program("./a", d.path(), &search, true).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("a: it is a directory, not an executable"),
            "{e}"
        );
        let e = resolve_program("~/x", d.path(), &search, false).unwrap_err();
        assert!(matches!(e, LookupError::HomeRelative { .. }), "{e}");
    }

    #[test]
    fn the_managed_search_path_is_the_system_one_unless_set() {
        let s = SearchPath::managed(None);
        assert_eq!(s.dirs.len(), 6);
        assert!(s.label.contains("/usr/local/sbin"));
        let s = SearchPath::managed(Some("/opt/acme/bin:relative"));
        assert_eq!(s.dirs, vec![PathBuf::from("/opt/acme/bin")]);
        assert!(resolve_program("sh", Path::new("/"), &SearchPath::managed(None), false).is_ok());
    }
}
