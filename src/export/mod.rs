//! Export of a session as one self-contained HTML file (RPC `export_html`, later `/export`).
//!
//! The page shows what pi's export shows — the session's facts and totals, then the active
//! branch: user and assistant messages with thinking, tool calls with their results, `!`
//! commands, custom messages, compactions, branch summaries, model changes — in markup of its
//! own: inline CSS with a light and a dark look (or the theme in use, `theme`), no script, images as `data:` URIs, and a
//! Content-Security-Policy under which the page can load and run nothing. A session is
//! untrusted input, so every piece of its text is escaped on the way out (`escape`); text
//! is shown as written (whitespace kept), not rendered as Markdown, because Markdown would let
//! a message carry markup and links. From a live session the page also shows the system prompt
//! and the tools ([`ExportExtras`]).
//!
//! Unlike pi, which refuses, a session kept in memory (`--no-session`) or not yet written to
//! its file exports too: the page shows what the session holds, an empty one included.
//!
//! The page is streamed to the file entry by entry, borrowing from the session (`view`), so
//! exporting a large session holds no second copy of it. Where the file may go and what it may
//! replace is `target`'s.

mod entries;
mod escape;
mod extras;
mod page;
mod parts;
mod stats;
mod system;
mod target;
mod theme;
mod tools;
mod view;

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

pub use extras::ExportExtras;

use crate::session::paths::session_file_name;
use crate::session::Session;

/// Why an export was not written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot export the session to {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot export the session to {}: {reason}", path.display())]
    Refused { path: PathBuf, reason: RefuseReason },
    #[error(
        "cannot export the session: the directory {} does not exist",
        dir.display()
    )]
    NoDirectory { dir: PathBuf },
}

/// Why a path already taken is not replaced by an export.
#[derive(Debug, thiserror::Error)]
pub enum RefuseReason {
    #[error(
        "the file exists and is not an HTML export written by pi; refusing to overwrite it \
         (choose another path, or remove the file first)"
    )]
    NotAnExport,
    #[error("it is a symbolic link to {}; refusing to replace it", .0.display())]
    Symlink(PathBuf),
    #[error("it is a {0}, not a regular file")]
    Special(&'static str),
    #[error("another file was created there while the export was being written")]
    Appeared,
    #[error("the file there was replaced while the export was being written")]
    Replaced,
}

impl ExportError {
    fn io(path: &Path, source: io::Error) -> Self {
        ExportError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Writes `session`'s active branch as an HTML page to `output_path`, or when `None` to pi's
/// default name in the current directory (see [`default_file_name`]); a directory gets that
/// name inside it. Returns the path written (relative when the given path or the default is,
/// as pi answers). Only an empty file or an earlier export is replaced there; another file, a
/// symbolic link or a special file is refused ([`ExportError::Refused`]) and left as it was.
pub fn export_html(session: &Session, output_path: Option<&Path>) -> Result<PathBuf, ExportError> {
    export_html_with(session, output_path, &ExportExtras::default())
}

/// [`export_html`] with what a live session adds: the system prompt and the tools.
pub fn export_html_with(
    session: &Session,
    output_path: Option<&Path>,
    extras: &ExportExtras<'_>,
) -> Result<PathBuf, ExportError> {
    let mut path = match output_path {
        Some(p) => p.to_path_buf(),
        None => PathBuf::from(default_file_name(session)),
    };
    if std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
        path.push(default_file_name(session));
    }
    let existing = target::inspect(&path)?;
    let dir = target::parent_dir(&path)?;
    let mut tmp = target::temp_file(&dir)?;
    let written = {
        let mut w = BufWriter::with_capacity(256 * 1024, tmp.as_file_mut());
        render_html(session, extras, &mut w).and_then(|()| w.flush())
    };
    // The temporary file goes away with `tmp`; the error names the path the user asked for.
    written.map_err(|e| ExportError::io(&path, e))?;
    target::commit(tmp, &path, existing)?;
    Ok(path)
}

/// Writes the page for `session`'s active branch to `w`, streaming it entry by entry.
pub fn render_html(
    session: &Session,
    extras: &ExportExtras<'_>,
    w: &mut dyn Write,
) -> io::Result<()> {
    page::render(w, session, extras)
}

/// pi's default export name: `pi-session-<session file name without .jsonl>.html`. A session
/// kept in memory uses the name its file would have had.
pub fn default_file_name(session: &Session) -> OsString {
    let file = match session.path().and_then(Path::file_name) {
        Some(name) => name.to_os_string(),
        None => session_file_name(&session.header().timestamp, session.id()).into(),
    };
    let bytes = file.as_bytes();
    let stem = bytes.strip_suffix(b".jsonl").unwrap_or(bytes);
    let mut name = b"pi-session-".to_vec();
    name.extend_from_slice(stem);
    name.extend_from_slice(b".html");
    OsString::from_vec(name)
}

#[cfg(test)]
mod target_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
