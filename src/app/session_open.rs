//! Which session a run continues or starts: `--session`, `-c`, `--no-session`, or a new file in
//! this working directory's session folder. Kept apart from the run flow because every session
//! flag (and its conflicts) is decided here, before anything else touches the store.

use crate::cli::Cli;

/// The session for this run: `--session`, `-c`, or a new one (kept in memory only with
/// `--no-session`). Files are written lazily, from the first assistant message on.
pub fn open_session(
    cli: &Cli,
    agent_dir: &std::path::Path,
    cwd: &std::path::Path,
) -> anyhow::Result<crate::session::Session> {
    use crate::session::{paths, NewSession, Session};
    let cwd_s = cwd.display().to_string();
    if cli.no_session {
        return Ok(Session::in_memory(&cwd_s));
    }
    let override_dir = cli
        .session_dir
        .clone()
        .or_else(|| std::env::var_os("PI_CODING_AGENT_SESSION_DIR").map(Into::into));
    let root = paths::sessions_dir(agent_dir, override_dir.as_deref());
    let dir = paths::session_dir_for_cwd(&root, &cwd_s);
    let (session, warnings) = if let Some(arg) = &cli.session {
        let path = paths::find_session(&root, Some(&dir), arg)?;
        Session::open(&cwd.join(path), &cwd_s)?
    } else if cli.continue_session {
        Session::continue_recent(&cwd_s, &dir)?
    } else {
        (
            Session::create(&cwd_s, &dir, NewSession::default()),
            Vec::new(),
        )
    };
    for w in warnings {
        eprintln!("Warning: {}", w.message);
    }
    Ok(session)
}
