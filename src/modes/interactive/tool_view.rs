//! How one tool call looks in the transcript: a title line per tool (the bash command, the
//! read path and range, the edit path, the write size…) with its status, and a body (the
//! output's tail, the edit's coloured diff, progress from a hook tool, the reason a policy
//! blocked it). Pure: the app keeps the state, this turns it into lines.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::text::{wrap, Line, Style};
use super::theme::Theme;
use super::tool_output;
use crate::tools::truncate::format_size;

/// Where a call is.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolStatus {
    /// Arguments still streaming from the model.
    Pending,
    Running,
    Done,
    Failed,
    /// A hook's gate refused it; the reason.
    Blocked(String),
}

/// One tool call's state.
#[derive(Debug, Clone)]
pub struct ToolCallView {
    pub id: String,
    pub name: String,
    pub args: Value,
    pub status: ToolStatus,
    /// Text of the latest progress update (hook tools) or the final result.
    pub output: String,
    pub details: Option<Value>,
    /// When it started running (this run's calls), for `Elapsed 3.0s` while it runs.
    pub started: Option<Instant>,
    /// How long it ran, once it ended (the event's or the session's `durationMs`).
    pub duration: Option<Duration>,
    /// A truncated call's full output file, read when the transcript expands (Ctrl+O).
    pub full_output: Option<String>,
}

/// Rows of a multi-line bash command shown under its first line.
const COMMAND_ROWS: usize = 10;

impl ToolCallView {
    pub fn new(id: impl Into<String>, name: impl Into<String>, args: Value) -> ToolCallView {
        ToolCallView {
            id: id.into(),
            name: name.into(),
            args,
            status: ToolStatus::Pending,
            output: String::new(),
            details: None,
            started: None,
            duration: None,
            full_output: None,
        }
    }

    pub fn finished(&self) -> bool {
        matches!(
            self.status,
            ToolStatus::Done | ToolStatus::Failed | ToolStatus::Blocked(_)
        )
    }

    /// `spinner` is the frame to show while it runs; `expanded`: the whole output (Ctrl+O).
    pub fn render(&self, width: usize, theme: &Theme, spinner: &str, expanded: bool) -> Vec<Line> {
        let (icon, icon_style) = match &self.status {
            ToolStatus::Pending | ToolStatus::Running => (spinner, theme.accent),
            ToolStatus::Done => ("✓", theme.success),
            ToolStatus::Failed => ("✗", theme.error),
            ToolStatus::Blocked(_) => ("⊘", theme.error),
        };
        let mut title = Line::new();
        title.push(format!("{icon} "), icon_style);
        for (text, style) in self.title(theme) {
            title.push(text, style);
        }
        let mut out = wrap(&title, width, &Line::plain("  "));
        let body_indent = Line::plain("  ");
        for l in self.command_rest(theme) {
            out.extend(wrap(&l.prefixed("  ", Style::plain()), width, &body_indent));
        }
        let (body, notice) = self.body(theme, expanded);
        // A command is shown apart from its output (pi 1.6 sets them off by a blank line).
        let blocked = matches!(self.status, ToolStatus::Blocked(_));
        if self.name == "bash" && !body.is_empty() && !blocked {
            out.push(Line::new());
        }
        for l in body {
            out.extend(wrap(&l.prefixed("  ", Style::plain()), width, &body_indent));
        }
        if let Some(n) = notice {
            out.push(Line::new());
            out.extend(wrap(
                &Line::styled(n, theme.warning).prefixed("  ", Style::plain()),
                width,
                &body_indent,
            ));
        }
        if let Some(t) = self.time_text() {
            if out.len() > 1 {
                out.push(Line::new());
            }
            out.push(Line::styled(format!("  {t}"), theme.muted));
        }
        out
    }

    /// `Took 0.1s` once it ran, `Elapsed 3.0s` while it runs (pi 1.6's wording).
    fn time_text(&self) -> Option<String> {
        match (&self.status, self.duration, self.started) {
            (ToolStatus::Blocked(_) | ToolStatus::Pending, _, _) => None,
            (ToolStatus::Running, _, Some(s)) => Some(format!(
                "Elapsed {}",
                tool_output::format_duration(s.elapsed())
            )),
            (ToolStatus::Done | ToolStatus::Failed, Some(d), _) => {
                Some(format!("Took {}", tool_output::format_duration(d)))
            }
            _ => None,
        }
    }

    fn arg(&self, key: &str) -> Option<&str> {
        self.args.get(key).and_then(Value::as_str)
    }

    fn title(&self, theme: &Theme) -> Vec<(String, Style)> {
        let t = theme.tool_title;
        let m = theme.muted;
        match self.name.as_str() {
            "bash" => vec![
                ("$ ".into(), m),
                (
                    self.arg("command")
                        .unwrap_or("")
                        .split('\n')
                        .next()
                        .unwrap_or("")
                        .into(),
                    t,
                ),
            ],
            "read" => {
                let mut v = vec![
                    ("read ".into(), m),
                    (self.arg("path").unwrap_or("").into(), t),
                ];
                let off = self.args.get("offset").and_then(Value::as_u64);
                let lim = self.args.get("limit").and_then(Value::as_u64);
                match (off, lim) {
                    (Some(o), Some(l)) => v.push((format!(":{o}-{}", o + l.saturating_sub(1)), m)),
                    (Some(o), None) => v.push((format!(":{o}-"), m)),
                    (None, Some(l)) => v.push((format!(":1-{l}"), m)),
                    (None, None) => {}
                }
                v
            }
            "edit" => vec![
                ("edit ".into(), m),
                (self.arg("path").unwrap_or("").into(), t),
            ],
            "write" => {
                let content = self.arg("content").unwrap_or("");
                let lines = content.lines().count();
                vec![
                    ("write ".into(), m),
                    (self.arg("path").unwrap_or("").into(), t),
                    (
                        format!(" ({lines} lines, {})", format_size(content.len())),
                        m,
                    ),
                ]
            }
            "grep" => vec![
                ("grep ".into(), m),
                (self.arg("pattern").unwrap_or("").into(), t),
                (format!(" in {}", self.arg("path").unwrap_or(".")), m),
            ],
            "find" => vec![
                ("find ".into(), m),
                (self.arg("pattern").unwrap_or("").into(), t),
                (format!(" in {}", self.arg("path").unwrap_or(".")), m),
            ],
            "ls" => vec![
                ("ls ".into(), m),
                (self.arg("path").unwrap_or(".").into(), t),
            ],
            other => {
                let args = compact_json(&self.args, 120);
                vec![(other.to_string(), t), (format!(" {args}"), m)]
            }
        }
    }

    /// A bash command's lines after the first, each on its own row as it will run (at most
    /// [`COMMAND_ROWS`]; the approval dialog is where a command is shown whole).
    fn command_rest(&self, theme: &Theme) -> Vec<Line> {
        if self.name != "bash" {
            return Vec::new();
        }
        let command = self.arg("command").unwrap_or("");
        let rest: Vec<&str> = command.split('\n').skip(1).collect();
        let mut out: Vec<Line> = rest
            .iter()
            .take(COMMAND_ROWS)
            .map(|l| {
                Line::styled(
                    l.trim_end_matches('\r').replace('\t', "    "),
                    theme.tool_title,
                )
            })
            .collect();
        if rest.len() > COMMAND_ROWS {
            out.push(Line::styled(
                format!("… {} more lines", rest.len() - COMMAND_ROWS),
                theme.muted,
            ));
        }
        out
    }

    /// The rows under the title, and a truncated result's notice to show apart.
    fn body(&self, theme: &Theme, expanded: bool) -> (Vec<Line>, Option<String>) {
        if let ToolStatus::Blocked(reason) = &self.status {
            // Hooks' reasons usually say it themselves ("Blocked by hook policy: …").
            let text = if reason.to_lowercase().starts_with("blocked") {
                reason.clone()
            } else {
                format!("blocked by policy: {reason}")
            };
            return (vec![Line::styled(text, theme.error)], None);
        }
        if self.name == "edit" && self.status == ToolStatus::Done {
            if let Some(diff) = self
                .details
                .as_ref()
                .and_then(|d| d.get("diff"))
                .and_then(Value::as_str)
            {
                return (diff_lines(diff, theme), None);
            }
        }
        // What the model reads of a read or write is not worth a person's screen; say how much.
        if self.status == ToolStatus::Done && matches!(self.name.as_str(), "read" | "write") {
            if self.name == "read" {
                let n = self.output.lines().count();
                return (vec![Line::styled(format!("{n} lines"), theme.muted)], None);
            }
            return (Vec::new(), None);
        }
        let style = if self.status == ToolStatus::Failed {
            theme.error
        } else {
            theme.tool_output
        };
        // Colours a command wrote are dropped (as pi's TypeScript version does); any other
        // sequence stays in the text, and the spans show it as visible characters.
        let output = crate::term::sanitize::strip_sgr(&self.output);
        let (text, notice) = tool_output::split_notice(&output, self.details.as_ref());
        let total = tool_output::real_line_count(&text, self.details.as_ref());
        let rows = match self.full_output.as_deref().filter(|_| expanded) {
            Some(full) => {
                let full = crate::term::sanitize::strip_sgr(full);
                tool_output::body_rows(&full, total, true, style, theme)
            }
            None => tool_output::body_rows(&text, total, expanded, style, theme),
        };
        (rows, notice)
    }
}

/// pi's display diff (`+12 line`, `-12 line`, ` 12 line`, `...`) in colour; without colour
/// the `+`/`-` markers still say which is which.
pub fn diff_lines(diff: &str, theme: &Theme) -> Vec<Line> {
    let mut rows: Vec<Line> = diff
        .lines()
        .map(|l| {
            let style = match l.as_bytes().first() {
                Some(b'+') => theme.diff_added,
                Some(b'-') => theme.diff_removed,
                _ => theme.diff_context,
            };
            Line::styled(l.replace('\t', "    "), style)
        })
        .collect();
    const MAX: usize = 40;
    if rows.len() > MAX {
        let more = rows.len() - MAX;
        rows.truncate(MAX);
        rows.push(Line::styled(
            format!("… {more} more diff lines"),
            theme.muted,
        ));
    }
    rows
}

/// Arguments as one line of JSON, cut to `max` characters. Terminal-safe JSON, so a C1
/// control shows as its `\u009b` escape like the C0 ones JSON escapes anyway.
fn compact_json(v: &Value, max: usize) -> String {
    let s = crate::term::json::to_string(v).unwrap_or_else(|_| v.to_string());
    if s.chars().count() <= max {
        return s;
    }
    let cut: String = s.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::theme::ThemeName;
    use serde_json::json;

    fn text(lines: &[Line]) -> Vec<String> {
        lines.iter().map(Line::text).collect()
    }

    fn theme() -> Theme {
        Theme::new(ThemeName::Dark, true)
    }

    #[test]
    fn bash_shows_the_command_and_the_output_tail() {
        let mut v = ToolCallView::new("1", "bash", json!({"command": "seq 10"}));
        v.status = ToolStatus::Done;
        v.output = (1..=10).map(|i| format!("{i}\n")).collect();
        let rows = text(&v.render(80, &theme(), "⠋", false));
        assert_eq!(rows[0], "✓ $ seq 10");
        assert_eq!(rows[1], "");
        assert_eq!(rows[2], "  ... (4 earlier lines, ctrl+o to expand)");
        assert_eq!(rows.last().map(String::as_str), Some("  10"));
    }

    #[test]
    fn a_multi_line_command_shows_its_lines_and_the_output_drops_colours_only() {
        let mut v = ToolCallView::new(
            "1",
            "bash",
            json!({"command": "cd /tmp\nls --color\nrm x\u{1b}[2K"}),
        );
        v.status = ToolStatus::Done;
        v.output = "\u{1b}[34mdir\u{1b}[0m \u{1b}]0;t\u{7}\n".into();
        let rows = text(&v.render(80, &theme(), "⠋", false));
        assert_eq!(
            rows,
            [
                "✓ $ cd /tmp",
                "  ls --color",
                "  rm x␛[2K",
                "",
                "  dir ␛]0;t␇"
            ]
        );
    }

    #[test]
    fn read_shows_path_and_range() {
        let v = ToolCallView::new(
            "1",
            "read",
            json!({"path": "src/a.rs", "offset": 10, "limit": 5}),
        );
        assert_eq!(
            text(&v.render(80, &theme(), "⠋", false))[0],
            "⠋ read src/a.rs:10-14"
        );
    }

    #[test]
    fn a_blocked_call_says_so_with_the_reason() {
        let mut v = ToolCallView::new("1", "bash", json!({"command": "rm -rf /"}));
        v.status = ToolStatus::Blocked("no rm -rf".into());
        let rows = text(&v.render(80, &theme(), "⠋", false));
        assert_eq!(rows, ["⊘ $ rm -rf /", "  blocked by policy: no rm -rf"]);
    }

    #[test]
    fn edit_shows_its_diff_coloured() {
        let mut v = ToolCallView::new("1", "edit", json!({"path": "a.txt"}));
        v.status = ToolStatus::Done;
        v.details = Some(json!({"diff": " 1 a\n-2 b\n+2 c"}));
        let t = theme();
        let rows = v.render(80, &t, "⠋", false);
        assert_eq!(text(&rows), ["✓ edit a.txt", "   1 a", "  -2 b", "  +2 c"]);
        assert_eq!(rows[2].spans.last().map(|s| s.style), Some(t.diff_removed));
        assert_eq!(rows[3].spans.last().map(|s| s.style), Some(t.diff_added));
    }

    #[test]
    fn write_reports_size() {
        let v = ToolCallView::new("1", "write", json!({"path": "x", "content": "a\nb\n"}));
        assert_eq!(
            text(&v.render(80, &theme(), "·", false))[0],
            "· write x (2 lines, 4B)"
        );
    }
}
