//! What the interactive mode says when it starts and when it ends, as pi 1.6 lays it out: the
//! start-up header (the version, the key hints — a line of them, all of them once Ctrl+O
//! expands the transcript — and what loaded: `[Context]`, `[Skills]`, `[Prompts]`, `[Hooks]`,
//! `[MCP servers]`, then any `[Warnings]`), and the line that tells how to resume the session
//! after quitting. Pure: the app gathers what it shows.

use std::path::Path;

use super::text::{Line, Style};
use super::theme::Theme;
use crate::controller::loaded::Loaded;

/// The compact header's key hints (pi 1.6's words and order).
const COMPACT_HINTS: [(&str, &str); 5] = [
    ("escape", "interrupt"),
    ("ctrl+c/ctrl+d", "clear/exit"),
    ("/", "commands"),
    ("!", "bash"),
    ("ctrl+o", "more"),
];

/// Every key hint, once expanded (pi 1.6's list, less the keys pi does not have: pasting
/// images and dropping files).
pub const EXPANDED_HINTS: [(&str, &str); 18] = [
    ("escape", "to interrupt"),
    ("ctrl+c", "to clear"),
    ("ctrl+c twice", "to exit"),
    ("ctrl+d", "to exit (empty)"),
    ("ctrl+z", "to suspend"),
    ("ctrl+k", "to delete to end"),
    ("shift+tab", "to cycle thinking level"),
    ("ctrl+p", "to cycle models"),
    ("ctrl+l", "to select model"),
    ("ctrl+o", "to expand tools"),
    ("ctrl+t", "to expand thinking"),
    ("ctrl+g", "for external editor"),
    ("/", "for commands"),
    ("!", "to run bash"),
    ("!!", "to run bash (no context)"),
    ("alt+enter", "to queue follow-up"),
    ("alt+up", "to edit all queued messages"),
    ("escape twice", "to open the session tree (empty editor)"),
];

/// The header's lines, collapsed or expanded. `cwd` and `home` shorten the paths shown.
pub fn header(
    loaded: &Loaded,
    expanded: bool,
    cwd: &Path,
    home: Option<&Path>,
    theme: &Theme,
) -> Vec<Line> {
    let mut out = Vec::new();
    let mut title = Line::styled("pi", theme.accent.bold());
    title.push(format!(" v{}", env!("CARGO_PKG_VERSION")), theme.muted);
    out.push(title);
    if expanded {
        for (key, what) in EXPANDED_HINTS {
            out.push(hint(key, what, theme));
        }
    } else {
        let mut l = Line::new();
        for (i, (key, what)) in COMPACT_HINTS.iter().enumerate() {
            if i > 0 {
                l.push(" · ", theme.muted);
            }
            l.push(*key, theme.text);
            l.push(format!(" {what}"), theme.muted);
        }
        out.push(l);
        out.push(Line::styled(
            "Press ctrl+o to show full startup help and loaded resources.",
            theme.muted.dim(),
        ));
    }
    let short = |p: &Path| display_path(p, home);
    let context: Vec<String> = loaded
        .context_files
        .iter()
        .map(|p| match p.strip_prefix(cwd) {
            Ok(rel) if !expanded => rel.display().to_string(),
            _ => short(p),
        })
        .collect();
    section(&mut out, "Context", &context, expanded, false, theme);
    let skills: Vec<String> = match expanded {
        true => loaded.skills.iter().map(|(_, p)| short(p)).collect(),
        false => loaded.skills.iter().map(|(n, _)| n.clone()).collect(),
    };
    section(&mut out, "Skills", &skills, expanded, true, theme);
    let templates: Vec<String> = loaded
        .templates
        .iter()
        .map(|(n, _)| format!("/{n}"))
        .collect();
    section(&mut out, "Prompts", &templates, expanded, true, theme);
    section(&mut out, "Hooks", &loaded.hooks, expanded, false, theme);
    section(
        &mut out,
        "MCP servers",
        &loaded.mcp_servers,
        expanded,
        false,
        theme,
    );
    if !loaded.warnings.is_empty() {
        out.push(Line::new());
        out.push(Line::styled("[Warnings]", theme.warning));
        for w in &loaded.warnings {
            out.push(Line::styled(format!("  {w}"), theme.warning));
        }
    }
    out
}

fn hint(key: &str, what: &str, theme: &Theme) -> Line {
    let mut l = Line::styled(key, theme.text);
    l.push(format!(" {what}"), theme.muted);
    l
}

/// `[Name]` and its items: one per row expanded, a comma-separated row collapsed.
fn section(
    out: &mut Vec<Line>,
    name: &str,
    items: &[String],
    expanded: bool,
    sort: bool,
    theme: &Theme,
) {
    if items.is_empty() {
        return;
    }
    out.push(Line::new());
    out.push(Line::styled(format!("[{name}]"), theme.accent));
    if expanded {
        for i in items {
            out.push(Line::styled(format!("  {i}"), theme.muted));
        }
    } else {
        let mut labels = items.to_vec();
        if sort {
            labels.sort();
        }
        out.push(Line::styled(
            format!("  {}", labels.join(", ")),
            theme.muted,
        ));
    }
}

/// A path with the home directory as `~`.
fn display_path(p: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    }
}

/// What is printed after quitting (pi 1.6's words): `To resume this session:` and the
/// command, on its own line so a triple-click selects it; with `--session-dir` when the
/// session is not in the default directory. Nothing when the session was never written.
pub fn resume_lines(
    session_id: &str,
    session_file: Option<&Path>,
    default_dir: &Path,
    theme: &Theme,
) -> Vec<Line> {
    let Some(file) = session_file.filter(|f| f.is_file()) else {
        return Vec::new();
    };
    let mut command = String::from("pi");
    if let Some(dir) = file.parent().filter(|d| *d != default_dir) {
        command.push_str(" --session-dir ");
        command.push_str(&shell_words::quote(&dir.display().to_string()));
    }
    command.push_str(" --session ");
    command.push_str(session_id);
    vec![
        Line::styled("To resume this session:", theme.muted.dim()),
        Line::styled(command, Style::plain()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::theme::ThemeName;
    use std::path::PathBuf;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines.iter().map(Line::text).collect()
    }

    #[test]
    fn the_header_lists_what_loaded_compact_then_whole() {
        let theme = Theme::new(ThemeName::Dark, false);
        let loaded = Loaded {
            context_files: vec![PathBuf::from("/h/p/AGENTS.md")],
            skills: vec![
                ("zeta".into(), "/h/s/z.md".into()),
                ("alpha".into(), "/h/s/a.md".into()),
            ],
            templates: vec![("review".into(), "/h/t/review.md".into())],
            hooks: vec!["policy".into()],
            mcp_servers: vec!["files".into()],
            warnings: vec!["bad.md: no description".into()],
        };
        let home = Path::new("/h");
        let rows = texts(&header(
            &loaded,
            false,
            Path::new("/h/p"),
            Some(home),
            &theme,
        ));
        assert!(rows[0].starts_with("pi v"), "{rows:?}");
        assert_eq!(
            rows[1],
            "escape interrupt · ctrl+c/ctrl+d clear/exit · / commands · ! bash · ctrl+o more"
        );
        let at = |name: &str| rows.iter().position(|r| r == name).unwrap();
        assert_eq!(rows[at("[Context]") + 1], "  AGENTS.md");
        assert_eq!(rows[at("[Skills]") + 1], "  alpha, zeta");
        assert_eq!(rows[at("[Prompts]") + 1], "  /review");
        assert_eq!(rows[at("[Hooks]") + 1], "  policy");
        assert_eq!(rows[at("[MCP servers]") + 1], "  files");
        assert_eq!(rows[at("[Warnings]") + 1], "  bad.md: no description");
        let rows = texts(&header(
            &loaded,
            true,
            Path::new("/h/p"),
            Some(home),
            &theme,
        ));
        assert!(rows.contains(&"ctrl+z to suspend".to_string()), "{rows:?}");
        assert_eq!(rows[at_in(&rows, "[Context]") + 1], "  ~/p/AGENTS.md");
        assert_eq!(rows[at_in(&rows, "[Skills]") + 1], "  ~/s/z.md");
    }

    fn at_in(rows: &[String], name: &str) -> usize {
        rows.iter().position(|r| r == name).unwrap()
    }

    #[test]
    fn the_resume_line_names_the_session_and_a_custom_directory() {
        let theme = Theme::new(ThemeName::Dark, false);
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("s.jsonl");
        assert!(resume_lines("abc", Some(&file), d.path(), &theme).is_empty());
        std::fs::write(&file, "{}\n").unwrap();
        let rows = texts(&resume_lines("abc", Some(&file), d.path(), &theme));
        assert_eq!(rows, ["To resume this session:", "pi --session abc"]);
        let rows = texts(&resume_lines(
            "abc",
            Some(&file),
            Path::new("/elsewhere"),
            &theme,
        ));
        assert_eq!(
            rows[1],
            format!("pi --session-dir {} --session abc", d.path().display())
        );
    }
}
