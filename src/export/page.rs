//! The page around the entries: the document head (inline CSS, a Content-Security-Policy
//! that lets the page load nothing and run nothing), the header with the session's facts and
//! totals, and the active branch's entries in order.
//!
//! The first bytes of every page are [`MARKER`], which is how a later export recognises a
//! file it may replace ([`super::target`]); no session text comes before it.

use std::io;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::resources::themes::ThemeSpec;
use crate::session::Session;

use super::entries::{self, Branch};
use super::extras::ExportExtras;
use super::parts::{esc, Out};
use super::stats::Stats;

/// How every export begins. A file that begins otherwise is not one of ours.
pub(crate) const MARKER: &str = "<!DOCTYPE html>\n<!-- pi session export -->\n";

const STYLE: &str = include_str!("style.css");

/// Writes the whole page for `session`'s active branch.
pub(crate) fn render(w: Out<'_>, session: &Session, extras: &ExportExtras<'_>) -> io::Result<()> {
    let branch = session.branch(None);
    head(w, session, extras.theme)?;
    w.write_all(b"<body>\n<main>\n")?;
    header(w, session, branch.len())?;
    // A session that records its prompt shows it where it was declared, as pi 1.6 does.
    let records_prompt = branch.iter().any(|e| {
        e.message().is_some_and(|m| {
            matches!(
                super::view::MessageView::of(m),
                super::view::MessageView::System(_)
            )
        })
    });
    if !records_prompt {
        super::extras::write(w, extras)?;
    }
    if branch.is_empty() {
        w.write_all(b"<p class=\"empty\">This session has no messages yet.</p>\n")?;
    } else {
        let index = Branch::index(&branch);
        for e in &branch {
            entries::entry(w, session, &index, e)?;
        }
    }
    w.write_all(b"<footer>Exported from pi.</footer>\n</main>\n</body>\n</html>\n")
}

fn head(w: Out<'_>, s: &Session, theme: Option<&ThemeSpec>) -> io::Result<()> {
    let style = match theme.and_then(super::theme::css) {
        Some(rule) => std::borrow::Cow::Owned(format!("{STYLE}{rule}")),
        None => std::borrow::Cow::Borrowed(STYLE),
    };
    w.write_all(MARKER.as_bytes())?;
    // The policy allows the one style element (by its hash) and data: images, nothing else:
    // no script runs and nothing is fetched, even if some text were ever mis-escaped.
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(style.as_bytes()));
    write!(
        w,
        "<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'sha256-{hash}'; img-src data:; base-uri 'none'; form-action 'none'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta name=\"generator\" content=\"pi\">\n<title>"
    )?;
    title(w, s)?;
    w.write_all(b"</title>\n<style>")?;
    w.write_all(style.as_bytes())?;
    w.write_all(b"</style>\n</head>\n")
}

/// The session's name, or its id.
fn title(w: Out<'_>, s: &Session) -> io::Result<()> {
    match s.name() {
        Some(name) => esc(w, name),
        None => {
            w.write_all(b"Session ")?;
            esc(w, s.id())
        }
    }
}

fn header(w: Out<'_>, s: &Session, shown: usize) -> io::Result<()> {
    let h = s.header();
    let stats = Stats::of(s.entries());
    w.write_all(b"<header class=\"session-header\">\n<h1>")?;
    title(w, s)?;
    w.write_all(b"</h1>\n<dl class=\"info\">\n")?;
    row(w, "Session", &h.id)?;
    row(w, "Date", &date(&h.timestamp))?;
    row(w, "Directory", &h.cwd)?;
    if let Some(parent) = &h.parent_session {
        row(w, "Forked from", parent)?;
    }
    let models = if stats.models.is_empty() {
        "unknown".to_string()
    } else {
        stats.models.join(", ")
    };
    row(w, "Models", &models)?;
    row(w, "Messages", &stats.messages_line())?;
    row(w, "Tool calls", &stats.tool_calls.to_string())?;
    row(w, "Tokens", &stats.tokens_line())?;
    row(w, "Cost", &stats.cost_line())?;
    let total = s.entries().len();
    let branch = if shown == total {
        format!("all {total} entries")
    } else {
        format!("the active branch: {shown} of {total} entries")
    };
    row(w, "Shown", &branch)?;
    w.write_all(b"</dl>\n</header>\n")
}

fn row(w: Out<'_>, name: &str, value: &str) -> io::Result<()> {
    write!(w, "<dt>{name}</dt><dd>")?;
    esc(w, value)?;
    w.write_all(b"</dd>\n")
}

/// `2025-02-01 10:00:00 UTC`; a timestamp that does not parse is shown as is.
fn date(ts: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(ts) {
        Ok(t) => t.naive_utc().format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        Err(_) if ts.is_empty() => "unknown".to_string(),
        Err(_) => ts.to_string(),
    }
}
