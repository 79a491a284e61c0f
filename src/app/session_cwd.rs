//! Where a run works when it continues a session. pi 1.6 works where the session was made:
//! `--session PATH` to another project's file runs in that project — its trust decided for
//! it, its settings, hooks, context files and skills loaded, tools' paths relative to it —
//! as the seeds ask of a switch into another project. A session whose directory is gone is
//! pi's missing-cwd case: the terminal offers to continue here (the file keeps its header,
//! so pi asks again next time), to fork the session here, or to cancel; with nobody to ask
//! the run ends with pi's message. Decided before trust and hooks, which read the answer.

use std::path::{Path, PathBuf};

use super::picker::Terminal;
use super::session_open::OpenError;
use crate::session::Session;

pub use crate::controller::MissingCwd;

/// What the run does with a session it opened at start-up.
#[derive(Debug, PartialEq, Eq)]
pub enum Where {
    /// Work in this directory (the session's own, or the process's when they agree).
    In(PathBuf),
    /// The session's directory is gone.
    Missing(MissingCwd),
}

/// Pure rule: a written session works in its header's directory when that exists.
pub fn decide(session_cwd: &str, file: Option<&Path>, cwd: &Path) -> Where {
    if session_cwd.is_empty() || Path::new(session_cwd) == cwd || file.is_none() {
        return Where::In(cwd.to_path_buf());
    }
    if Path::new(session_cwd).is_dir() {
        return Where::In(PathBuf::from(session_cwd));
    }
    Where::Missing(MissingCwd {
        session_cwd: session_cwd.to_string(),
        session_file: file.map(Path::to_path_buf),
        fallback: cwd.to_path_buf(),
    })
}

/// The session the run continues and the directory it works in; a missing directory is
/// asked about on the terminal when the run is interactive.
/// A fork goes to `fork_dir`, this project's session directory.
pub fn working_dir(
    mut session: Session,
    cwd: &Path,
    interactive: bool,
    fork_dir: &Path,
) -> Result<(Session, PathBuf), OpenError> {
    let missing = match decide(session.cwd(), session.path(), cwd) {
        Where::In(dir) => return Ok((session, dir)),
        Where::Missing(missing) => missing,
    };
    let terminal = if interactive {
        Terminal::open().ok()
    } else {
        None
    };
    let Some(mut terminal) = terminal else {
        return Err(OpenError::MissingCwd(missing));
    };
    let options = missing.options();
    let heading = missing.prompt();
    match terminal.choose(&heading, &options, "Which? [1-3, Enter to cancel]: ")? {
        Some(0) => {
            session.work_in(&cwd.display().to_string());
            Ok((session, cwd.to_path_buf()))
        }
        Some(1) => {
            let source = missing.session_file.clone().unwrap_or_default();
            let cwd_s = cwd.display().to_string();
            let (mut fork, _) =
                Session::fork_from(&source, &cwd_s, fork_dir).map_err(OpenError::Fork)?;
            fork.set_sessions_root(session.sessions_root().map(Path::to_path_buf));
            Ok((fork, cwd.to_path_buf()))
        }
        _ => Err(OpenError::Cancelled("Aborted.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_of_another_existing_project_works_there() {
        let other = tempfile::tempdir().unwrap();
        let other_s = other.path().display().to_string();
        let file = Path::new("/s/f.jsonl");
        assert_eq!(
            decide(&other_s, Some(file), Path::new("/here")),
            Where::In(other.path().to_path_buf())
        );
        // Unwritten or in-memory sessions are this run's own.
        assert_eq!(
            decide("/gone/away", None, Path::new("/here")),
            Where::In("/here".into())
        );
    }

    #[test]
    fn a_gone_directory_is_reported_as_pi_words_it() {
        let Where::Missing(m) = decide(
            "/gone/away",
            Some(Path::new("/s/f.jsonl")),
            Path::new("/here"),
        ) else {
            panic!("expected a missing cwd");
        };
        assert_eq!(
            m.to_string(),
            "Stored session working directory does not exist: /gone/away\n\
             Session file: /s/f.jsonl\nCurrent working directory: /here"
        );
    }
}
