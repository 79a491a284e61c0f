//! Which session a run continues or starts, decided before anything else touches the store:
//! `--fork`, `--session`, `-r`, `-c`, `--session-id`, `--no-session`, or a new file in this
//! project's session directory; then `-n/--name` names it. The order of precedence and every
//! message follow pi's `createSessionManager` (0.84); flag conflicts are clap's.
//!
//! The session directory is `--session-dir` > `PI_CODING_AGENT_SESSION_DIR` > the `sessionDir`
//! setting > `<agent dir>/sessions/--<cwd>--` ([`SessionDirs`] explains the shared layout of a
//! custom directory). Files are still written lazily, from the first assistant message on,
//! except a fork, which is a copy and is written at once.

use std::path::{Path, PathBuf};

use super::picker::{PickerError, Row, Terminal};
use crate::cli::Cli;
use crate::config::Settings;
use crate::session::entry::now_iso;
use crate::session::load::load_file;
use crate::session::paths::{self, InvalidSessionId, Resolved, SessionDirs};
use crate::session::{Header, LoadWarning, NewSession, NotSessionReason, Session, SessionError};

/// Environment variable that relocates the session directory (pi's name).
pub const SESSION_DIR_ENV: &str = "PI_CODING_AGENT_SESSION_DIR";

/// Why no session could be opened. [`OpenError::report`] prints it and gives the exit code.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    InvalidSessionId(#[from] InvalidSessionId),
    #[error("--name requires a non-empty value")]
    EmptyName,
    #[error("No session found matching '{0}'")]
    NotFound(String),
    #[error("Session already exists with id '{0}'")]
    IdTaken(String),
    #[error("cannot fork the session: {0}")]
    Fork(#[source] SessionError),
    #[error(
        "session '{arg}' belongs to another project ({cwd}) and there is no terminal to \
         confirm forking it here; pass --fork {arg} to copy it into this project"
    )]
    OtherProject { arg: String, cwd: String },
    #[error("{0}")]
    MissingCwd(super::session_cwd::MissingCwd),
    #[error("no sessions to resume in this directory (looked in {})", dir.display())]
    NoSessions { dir: PathBuf },
    #[error(
        "--resume needs a terminal to pick a session from; pass --session <id> to open a \
         known session, or -c to continue the most recent one"
    )]
    NoTerminal,
    #[error(transparent)]
    Picker(#[from] PickerError),
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The user declined (an empty choice, or "no" to forking); pi exits 0 here.
    #[error("{0}")]
    Cancelled(&'static str),
}

impl OpenError {
    /// 0 when the user cancelled (as pi exits after "No session selected"), else 1.
    pub fn exit_code(&self) -> i32 {
        match self {
            OpenError::Cancelled(_) => 0,
            _ => 1,
        }
    }

    /// Prints the error on stderr (a cancellation without the `Error:` prefix) and returns the
    /// exit code.
    pub fn report(&self) -> i32 {
        match self {
            OpenError::Cancelled(message) => term_eprintln!("{message}"),
            other => term_eprintln!("Error: {other}"),
        }
        self.exit_code()
    }
}

/// The session for this run, named with `--name` if given, and the directory the run works
/// in (the session's own, see [`super::session_cwd`]). A new session stays in memory until
/// its first assistant message; with `--no-session` it is never written.
pub fn open_session(
    cli: &Cli,
    agent_dir: &Path,
    cwd: &Path,
    settings: &Settings,
    interactive: bool,
) -> Result<(Session, PathBuf), OpenError> {
    // Checked before anything is created, so a bad flag leaves no fork behind.
    let name = cli.name.as_deref().map(session_name).transpose()?;
    if let Some(id) = &cli.session_id {
        paths::validate_session_id(id)?;
    }
    let cwd_s = cwd.display().to_string();
    let (mut session, work_dir) = if cli.no_session {
        (in_memory(&cwd_s, cli.session_id.clone()), cwd.to_path_buf())
    } else {
        let home = dirs::home_dir();
        let custom = session_dir_override(
            cli.session_dir.as_deref(),
            std::env::var(SESSION_DIR_ENV).ok().as_deref(),
            settings.get("sessionDir").and_then(|v| v.as_str()),
            home.as_deref(),
        )
        .map(|dir| paths::resolve_path(cwd, &dir));
        let dirs = SessionDirs::new(agent_dir, custom.as_deref(), &cwd_s);
        let (mut session, warnings) = choose(cli, &dirs, cwd)?;
        for w in warnings {
            term_eprintln!("Warning: {}", w.message);
        }
        // Hooks may switch to and create sessions only in here, wherever this one is.
        session.set_sessions_root(Some(dirs.root().to_path_buf()));
        super::session_cwd::working_dir(session, cwd, interactive, dirs.dir())?
    };
    if let Some(name) = name {
        session.append_session_info(&name)?;
    }
    Ok((session, work_dir))
}

/// The custom session directory, by pi's precedence: flag, environment, setting. Empty values
/// count as unset; `~` is the home directory.
fn session_dir_override(
    flag: Option<&Path>,
    env: Option<&str>,
    setting: Option<&str>,
    home: Option<&Path>,
) -> Option<PathBuf> {
    let expand = |s: &str| paths::expand_tilde(s, home);
    match flag {
        Some(p) if !p.as_os_str().is_empty() => Some(p.to_str().map_or(p.to_path_buf(), expand)),
        _ => env
            .filter(|s| !s.is_empty())
            .or(setting.filter(|s| !s.is_empty()))
            .map(expand),
    }
}

/// pi's display-name rule: each run of line breaks becomes one space, then trim; nothing left
/// is an error.
fn session_name(raw: &str) -> Result<String, OpenError> {
    let name = raw
        .split(['\r', '\n'])
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .trim()
        .to_string();
    if name.is_empty() {
        Err(OpenError::EmptyName)
    } else {
        Ok(name)
    }
}

/// A session that is never written, with the `--session-id` if one was given (pi keeps it).
fn in_memory(cwd: &str, id: Option<String>) -> Session {
    match id {
        None => Session::in_memory(cwd),
        Some(id) => {
            let header = Header::new(id, now_iso(), cwd.to_string(), None);
            Session::new_written(header, Vec::new(), None, None)
                .unwrap_or_else(|_| Session::in_memory(cwd))
        }
    }
}

type Opened = (Session, Vec<LoadWarning>);

/// pi's precedence: `--fork`, `--session`, `-r`, `-c`, `--session-id`, then a new session.
fn choose(cli: &Cli, dirs: &SessionDirs, cwd: &Path) -> Result<Opened, OpenError> {
    let cwd_s = cwd.display().to_string();
    if let Some(arg) = &cli.fork {
        if let Some(id) = &cli.session_id {
            if dirs.find_local_id(id).is_some() {
                return Err(OpenError::IdTaken(id.clone()));
            }
        }
        let source = resolve(dirs, arg, cwd)?;
        return fork(source.path(), &cwd_s, dirs.dir(), cli.session_id.clone());
    }
    if let Some(arg) = &cli.session {
        return match resolve(dirs, arg, cwd)? {
            Resolved::Path(path) | Resolved::Local(path) => Ok(Session::open(&path, &cwd_s)?),
            Resolved::Other { path, cwd: other } => {
                // pi asks on the terminal; with nobody to ask, say how to do it explicitly.
                let Ok(mut terminal) = Terminal::open() else {
                    return Err(OpenError::OtherProject {
                        arg: arg.clone(),
                        cwd: other,
                    });
                };
                term_eprintln!("Session found in different project: {other}");
                if !terminal.confirm("Fork this session into current directory?")? {
                    return Err(OpenError::Cancelled("Aborted."));
                }
                fork(&path, &cwd_s, dirs.dir(), None)
            }
        };
    }
    if cli.resume {
        return resume(dirs, &cwd_s);
    }
    if cli.continue_session {
        return match dirs.newest_local() {
            Some(path) => Ok(Session::open(&path, &cwd_s)?),
            None => Ok((new_session(&cwd_s, dirs, None), Vec::new())),
        };
    }
    if let Some(id) = &cli.session_id {
        if let Some(path) = dirs.find_local_id(id) {
            return Ok(Session::open(&path, &cwd_s)?);
        }
        term_eprintln!(
            "Warning: No project session found with id '{id}'; creating a new session with that id."
        );
    }
    Ok((
        new_session(&cwd_s, dirs, cli.session_id.clone()),
        Vec::new(),
    ))
}

fn new_session(cwd: &str, dirs: &SessionDirs, id: Option<String>) -> Session {
    let opts = NewSession {
        id,
        parent_session: None,
    };
    Session::create(cwd, dirs.dir(), opts)
}

fn resolve(dirs: &SessionDirs, arg: &str, cwd: &Path) -> Result<Resolved, OpenError> {
    dirs.resolve(arg, cwd).map_err(|e| match e {
        SessionError::NoMatch(arg) => OpenError::NotFound(arg),
        other => OpenError::Session(other),
    })
}

/// `-r`: this project's sessions, newest first, numbered on stderr; the choice comes from
/// the terminal. Only headers are read to list them, and each file is streamed once for its
/// summary, so large sessions cost time but not memory.
fn resume(dirs: &SessionDirs, cwd: &str) -> Result<Opened, OpenError> {
    let sessions = dirs.local_sessions();
    if sessions.is_empty() {
        return Err(OpenError::NoSessions {
            dir: dirs.dir().to_path_buf(),
        });
    }
    // Before any file is scanned: without a terminal the answer is immediate.
    let mut terminal = Terminal::open().map_err(|_| OpenError::NoTerminal)?;
    let rows: Vec<Row> = sessions
        .iter()
        .map(|info| {
            // An unreadable file still gets a row: it was listed, so it can be chosen.
            let summary = paths::summarize(&info.path).unwrap_or_default();
            Row {
                modified: info.modified,
                name: summary.name,
                first_message: summary.first_message,
                message_count: summary.message_count,
            }
        })
        .collect();
    match terminal.pick(&rows)? {
        Some(i) => Ok(Session::open(&sessions[i].path, cwd)?),
        None => Err(OpenError::Cancelled("No session selected")),
    }
}

/// A copy of the whole `source` file as a new session of this project (pi's `forkFrom`): a
/// new header (new id unless `--session-id`, this cwd, `parentSession` = the source path),
/// then every entry unchanged. Written at once; the source is only read.
fn fork(source: &Path, cwd: &str, dir: &Path, id: Option<String>) -> Result<Opened, OpenError> {
    let Some(id) = id else {
        return Session::fork_from(source, cwd, dir).map_err(OpenError::Fork);
    };
    // `Session::fork_from` always draws a fresh id; this is the same copy with a chosen one.
    let loaded = load_file(source).map_err(OpenError::Fork)?.ok_or_else(|| {
        OpenError::Fork(SessionError::NotASession {
            path: source.to_path_buf(),
            reason: NotSessionReason::Empty,
        })
    })?;
    let header = Header::new(
        id,
        now_iso(),
        cwd.to_string(),
        Some(source.to_string_lossy().into_owned()),
    );
    let path = dir.join(paths::session_file_name(&header.timestamp, &header.id));
    let session = Session::new_written(header, loaded.entries, Some(path), Some(dir.into()))
        .map_err(OpenError::Fork)?;
    Ok((session, loaded.warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_dir_precedence_is_flag_env_setting() {
        let home = Some(Path::new("/h"));
        let pick = |flag: Option<&str>, env: Option<&str>, setting: Option<&str>| {
            session_dir_override(flag.map(Path::new), env, setting, home)
        };
        assert_eq!(pick(Some("/f"), Some("/e"), Some("/s")), Some("/f".into()));
        assert_eq!(pick(None, Some("/e"), Some("/s")), Some("/e".into()));
        assert_eq!(pick(None, Some(""), Some("/s")), Some("/s".into()));
        assert_eq!(pick(None, None, Some("~/s")), Some("/h/s".into()));
        assert_eq!(pick(Some("~"), None, None), Some("/h".into()));
        assert_eq!(pick(None, None, None), None);
    }

    #[test]
    fn names_are_flattened_and_must_not_be_blank() {
        assert_eq!(
            session_name("  my\nlong\r\n\nname ").unwrap(),
            "my long name"
        );
        assert!(matches!(session_name(" \n "), Err(OpenError::EmptyName)));
    }

    #[test]
    fn only_a_cancellation_exits_zero() {
        assert_eq!(OpenError::Cancelled("No session selected").exit_code(), 0);
        assert_eq!(OpenError::NoTerminal.exit_code(), 1);
        assert_eq!(OpenError::EmptyName.exit_code(), 1);
    }

    #[test]
    fn in_memory_sessions_keep_a_chosen_id() {
        let s = in_memory("/w", Some("my-id".into()));
        assert_eq!(s.id(), "my-id");
        assert!(s.path().is_none());
        assert_ne!(in_memory("/w", None).id(), "my-id");
    }
}
