//! `pi --export FILE [OUT]`: a session file as an HTML page, without a run (no model, hooks or
//! session of this directory), as pi 1.6's `--export` does. The session file is only read;
//! the page is `crate::export`'s, with the same rules for what it may replace.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::session::Session;

/// pi 1.6's name for the page of `input` when no output is given: `pi-session-<the file's name
/// without .jsonl>.html`, in the working directory.
fn default_output(input: &Path) -> PathBuf {
    let name = input.file_name().map_or(&[][..], |n| n.as_bytes());
    let stem = name.strip_suffix(b".jsonl").unwrap_or(name);
    let mut out = b"pi-session-".to_vec();
    out.extend_from_slice(stem);
    out.extend_from_slice(b".html");
    PathBuf::from(OsString::from_vec(out))
}

/// Exports `input` to `output` (or [`default_output`]); the exit code (0, or 1 with the error
/// on stderr).
pub fn run(input: &Path, output: Option<&str>, cwd: &Path) -> i32 {
    let resolved = crate::session::paths::resolve_path(
        cwd,
        &crate::session::paths::expand_tilde(&input.to_string_lossy(), dirs::home_dir().as_deref()),
    );
    if !resolved.exists() {
        term_eprintln!("Error: File not found: {}", resolved.display());
        return 1;
    }
    let session = match Session::read_only(&resolved) {
        Ok(s) => s,
        Err(e) => {
            term_eprintln!("Error: {e}");
            return 1;
        }
    };
    let out = output.map_or_else(|| default_output(&resolved), PathBuf::from);
    match crate::export::export_html(&session, Some(&out)) {
        Ok(path) => {
            term_println!("Exported to: {}", path.display());
            0
        }
        Err(e) => {
            term_eprintln!("Error: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_page_is_named_after_the_session_file() {
        assert_eq!(
            default_output(Path::new("/x/2026-01-01_abc.jsonl")),
            PathBuf::from("pi-session-2026-01-01_abc.html")
        );
        assert_eq!(
            default_output(Path::new("notes.txt")),
            PathBuf::from("pi-session-notes.txt.html")
        );
    }
}
