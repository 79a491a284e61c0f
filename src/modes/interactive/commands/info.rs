//! The commands that show something and change nothing (or only the clipboard or a file):
//! `/hotkeys`, `/session`, `/mcp`, `/hooks`, `/copy`, `/export`.

use super::super::app::App;

/// `/hotkeys`: pi 1.6's list (its sections, rows and words), less the keys pi does not have
/// (jumping to a character, cycling the kill ring, undo, Ctrl+V image paste), plus Esc twice.
pub(super) const HOTKEYS: &str = "\
**Navigation**
| Key | Action |
|-----|--------|
| `Up` / `Down` / `Left`/`Ctrl+B` / `Right`/`Ctrl+F` | Move cursor / browse history |
| `Alt+Left`/`Ctrl+Left`/`Alt+B` / `Alt+Right`/`Ctrl+Right`/`Alt+F` | Move by word |
| `Home`/`Ctrl+A` | Start of line |
| `End`/`Ctrl+E` | End of line |
| `PageUp` / `PageDown` | Scroll by page |

**Editing**
| Key | Action |
|-----|--------|
| `Enter` | Send message |
| `Shift+Enter`/`Ctrl+J` | New line |
| `Ctrl+W`/`Alt+Backspace` | Delete word backwards |
| `Alt+D`/`Alt+Delete` | Delete word forwards |
| `Ctrl+U` | Delete to start of line |
| `Ctrl+K` | Delete to end of line |
| `Ctrl+Y` | Paste the most-recently-deleted text |

**Other**
| Key | Action |
|-----|--------|
| `Tab` | Path completion / accept autocomplete |
| `Escape` | Cancel autocomplete / abort streaming |
| `Escape` twice | Open the session tree (empty editor) |
| `Ctrl+C` | Clear editor (first) / exit (second) |
| `Ctrl+D` | Exit (when editor is empty) |
| `Ctrl+Z` | Suspend to background |
| `Shift+Tab` | Cycle thinking level |
| `Ctrl+P` / `Shift+Ctrl+P` | Cycle models |
| `Ctrl+L` | Open model selector |
| `Ctrl+O` | Toggle tool output expansion |
| `Ctrl+T` | Toggle thinking block visibility |
| `Ctrl+G` | Edit message in external editor |
| `Ctrl+X` | Copy selection or last assistant message |
| `Alt+Enter` | Queue follow-up message |
| `Alt+Up` | Restore queued messages |
| `/` | Slash commands |
| `!` | Run bash command |
| `!!` | Run bash command (excluded from context) |";

/// `/hotkeys`: the title and the tables.
pub(super) fn hotkeys(app: &mut App) {
    use super::super::transcript::{Item, TextItem};
    let title = app.theme.accent.bold();
    app.transcript.notice("Keyboard Shortcuts", title);
    app.transcript.push(Item::Text(TextItem::finished(HOTKEYS)));
}

/// The project's changelog, built into the binary.
const CHANGELOG: &str = include_str!("../../../../CHANGELOG.md");

/// The changelog's `## ` sections, oldest first (the file has the newest first; 1.6 shows the
/// newest last, next to the editor), without the text before the first one.
fn changelog_entries(text: &str) -> String {
    let mut entries: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with("## ") {
            entries.push(String::new());
        }
        if let Some(e) = entries.last_mut() {
            e.push_str(line);
            e.push('\n');
        }
    }
    let entries: Vec<&str> = entries.iter().rev().map(|e| e.trim()).collect();
    if entries.is_empty() {
        return "No changelog entries found.".into();
    }
    entries.join("\n\n")
}

/// `/changelog`: 1.6's title and the entries as markdown.
pub(super) fn changelog(app: &mut App) {
    use super::super::transcript::{Item, TextItem};
    let title = app.theme.accent.bold();
    app.transcript.notice("What's New", title);
    let text = changelog_entries(CHANGELOG);
    app.transcript.push(Item::Text(TextItem::finished(&text)));
}

/// `/mcp`: one line per server (state, tools, deferred ones, transport), its last error under
/// it, and where the log is.
pub fn mcp_report(views: &[crate::mcp::hub::ServerView], log: &std::path::Path) -> String {
    let mut lines = Vec::new();
    for v in views {
        let mut line = format!("{:<12} {:<10}", v.name, v.status.label());
        if v.tools > 0 {
            line.push_str(&format!(" {} tools", v.tools));
            if v.deferred > 0 {
                line.push_str(&format!(" ({} deferred)", v.deferred));
            }
        }
        line.push_str(&format!("  {}", v.transport));
        if let Some(version) = &v.server_version {
            line.push_str(&format!("  [{version}]"));
        }
        lines.push(line);
        if let Some(e) = &v.last_error {
            lines.push(format!("{:<12} last error: {e}", ""));
        }
    }
    lines.push(format!("Log: {}", log.display()));
    lines.join("\n")
}

/// `/session`: this session's file, id, counts, tokens and cost.
pub(super) fn session_info(app: &mut App) {
    let c = app.controller.clone();
    let muted = app.theme.muted;
    let s = c.get_session_stats();
    let t = &s.counts.tokens;
    let text = format!(
        "Session {}\nFile     {}\nMessages {} ({} user, {} assistant, {} tool calls)\nTokens   {} in, {} out, {} cache read, {} cache write\nCost     ${:.4}",
        s.session_id,
        s.session_file.as_deref().unwrap_or("(not saved)"),
        s.counts.total_messages,
        s.counts.user_messages,
        s.counts.assistant_messages,
        s.counts.tool_calls,
        t.input,
        t.output,
        t.cache_read,
        t.cache_write,
        s.counts.cost
    );
    app.transcript.notice(text, muted);
}

/// `/mcp`: MCP servers: state, tools, last error.
pub(super) fn mcp_servers(app: &mut App) {
    let c = app.controller.clone();
    let muted = app.theme.muted;
    let text = match c.mcp().filter(|h| !h.is_empty()) {
        Some(hub) => mcp_report(&hub.views(), &hub.log().path()),
        None => {
            "No MCP servers configured (add one with `pi mcp add`, or in ~/.pi/agent/mcp.json)."
                .to_string()
        }
    };
    app.transcript.notice(text, muted);
}

/// `/hooks`: loaded hooks: state, latency, restarts.
pub(super) fn hooks_report(app: &mut App) {
    let c = app.controller.clone();
    let muted = app.theme.muted;
    let lines = c.latency_report();
    let text = if lines.is_empty() {
        "No hooks loaded.".to_string()
    } else {
        lines.join("\n")
    };
    app.transcript.notice(text, muted);
}

/// `/copy` and Ctrl+X: copy the last answer, in 1.6's words.
pub(crate) fn copy_last(app: &mut App) {
    let text = app.controller.get_last_assistant_text().text;
    app.copy_text(
        text,
        "Copied last agent message to clipboard",
        "No agent messages to copy yet.",
    );
}

/// `/export`: write the session as HTML [file].
pub(super) fn export_html(app: &mut App, args: &str) {
    let c = app.controller.clone();
    let muted = app.theme.muted;
    let error = app.theme.error;
    let path = (!args.is_empty()).then_some(args);
    // The page is dressed in the theme on screen, as 1.6's `/export` does.
    let theme = app.themes.catalog.get(&app.theme.name).map(|e| e.spec());
    match c.export_html(path, theme.as_deref()) {
        Ok(p) => app
            .transcript
            .notice(format!("Exported to {}", p.path), muted),
        Err(e) => app.notify(format!("Error: {e}"), error),
    }
}

#[cfg(test)]
mod tests {
    use super::changelog_entries;

    #[test]
    fn changelog_sections_come_oldest_first_without_the_preamble() {
        let text = "# Changelog\n\nintro\n\n## 2\n- b\n\n## 1\n- a\n";
        assert_eq!(changelog_entries(text), "## 1\n- a\n\n## 2\n- b");
        assert_eq!(changelog_entries("# none"), "No changelog entries found.");
    }

    #[test]
    fn the_built_in_changelog_has_dated_entries() {
        let shown = changelog_entries(super::CHANGELOG);
        assert!(shown.starts_with("## 2026-11-29"), "{shown}");
    }
}
