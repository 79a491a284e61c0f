//! Questions at the terminal, keyboard only: a hook's `ui.confirm/select/input/editor`, and
//! pi's own pickers (model, session, fork point) which are selects with a filter. One dialog
//! is shown at a time in place of the editor; its timeout counts down on screen, Esc cancels.
//!
//! What a dialog asks about is shown whole, in the dialog: an approval may not rely on the
//! transcript above it, which other text could have drawn over. A subject taller than the
//! window scrolls (PgUp/PgDn; in a confirm also ↑/↓, Home/End) while the title's first rows
//! and the answer stay in view (`viewport`).

use std::cell::Cell;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::line_input::{InputOutcome, LineInput};
use super::text::{wrap, Line};
use super::theme::Theme;
use super::viewport;
use crate::hooks::ui::{Dialog, DialogAnswer};

/// Rows of options shown at once.
const VISIBLE: usize = 10;

pub struct ActiveDialog {
    /// Who asks: a hook's name, or "pi".
    pub asker: String,
    pub dialog: Dialog,
    /// Extra text shown per select option (descriptions, dimmed), same order as the options.
    pub details: Vec<String>,
    pub deadline: Option<Instant>,
    /// Text shown under the title of any kind of dialog (a confirm's message comes first).
    message: Option<String>,
    selected: usize,
    /// A select's filter, or an input/editor's text.
    input: LineInput,
    /// The first scrolled row of the subject, and what the last render allowed: the largest
    /// offset and a page's rows.
    scroll: usize,
    max_scroll: Cell<usize>,
    page: Cell<usize>,
    /// `/tree`'s selector, shown and answered in place of the select (its answer is the
    /// chosen entry's id).
    tree: Option<Box<super::tree_view::TreeView>>,
}

impl ActiveDialog {
    pub fn new(
        asker: impl Into<String>,
        dialog: Dialog,
        deadline: Option<Instant>,
    ) -> ActiveDialog {
        let mut input = LineInput::new();
        if let Dialog::Editor {
            prefill: Some(p), ..
        } = &dialog
        {
            input.set_text(p);
        }
        ActiveDialog {
            asker: asker.into(),
            dialog,
            details: Vec::new(),
            deadline,
            message: None,
            selected: 0,
            input,
            scroll: 0,
            max_scroll: Cell::new(0),
            page: Cell::new(1),
            tree: None,
        }
    }

    /// `/tree`'s selector as pi's dialog.
    pub fn tree(view: super::tree_view::TreeView) -> ActiveDialog {
        let mut d = ActiveDialog::new(
            "pi",
            Dialog::Select {
                title: "Session Tree".into(),
                options: Vec::new(),
            },
            None,
        );
        d.tree = Some(Box::new(view));
        d
    }

    /// Text to show under the title (what pi's own questions are about, such as the trust
    /// question's list of what a project would load).
    pub fn with_message(mut self, message: impl Into<String>) -> ActiveDialog {
        self.message = Some(message.into());
        self
    }

    /// Whether the subject did not fit at the last render.
    fn scrolls(&self) -> bool {
        self.max_scroll.get() > 0
    }

    fn scroll_by(&mut self, rows: isize) {
        let to = self.scroll.saturating_add_signed(rows);
        self.scroll = to.min(self.max_scroll.get());
    }

    /// Scrolling keys any dialog understands; true when `key` was one.
    fn scroll_key(&mut self, key: KeyEvent) -> bool {
        let page = self.page.get().saturating_sub(1).max(1) as isize;
        match key.code {
            KeyCode::PageUp => self.scroll_by(-page),
            KeyCode::PageDown => self.scroll_by(page),
            _ => return false,
        }
        true
    }

    pub fn with_details(mut self, details: Vec<String>) -> ActiveDialog {
        self.details = details;
        self
    }

    /// Start on the last option (a tree's current end).
    pub fn select_last(&mut self) {
        self.selected = self.matching().len().saturating_sub(1);
    }

    pub fn expired(&self, now: Instant) -> bool {
        self.deadline.is_some_and(|d| now >= d)
    }

    /// Options of a select that match the filter, as indices.
    fn matching(&self) -> Vec<usize> {
        let Dialog::Select { options, .. } = &self.dialog else {
            return Vec::new();
        };
        let filter = self.input.text().to_lowercase();
        options
            .iter()
            .enumerate()
            .filter(|(i, o)| {
                let hay = format!("{} {}", o, self.details.get(*i).map_or("", String::as_str))
                    .to_lowercase();
                subsequence(&filter, &hay)
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Labels the tree selector saved, for the session to record (empty for other dialogs).
    pub fn take_saved_labels(&mut self) -> Vec<(String, Option<String>)> {
        self.tree
            .as_mut()
            .map(|t| t.take_saved_labels())
            .unwrap_or_default()
    }

    /// A key; `Some` when the dialog is over.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<DialogAnswer> {
        if let Some(t) = self.tree.as_mut() {
            use super::tree_view::TreeKey;
            return match t.handle_key(key) {
                TreeKey::Stay => None,
                TreeKey::Chose(id) => Some(DialogAnswer::Value(id)),
                TreeKey::Cancelled => Some(DialogAnswer::Dismissed),
            };
        }
        if key.code == KeyCode::Esc
            || (key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL))
        {
            return Some(DialogAnswer::Dismissed);
        }
        if self.scroll_key(key) {
            return None;
        }
        match &self.dialog {
            Dialog::Confirm { .. } => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => Some(DialogAnswer::Confirmed(true)),
                KeyCode::Char('n') | KeyCode::Char('N') => Some(DialogAnswer::Confirmed(false)),
                // ↑/↓ scroll what the confirm asks about when it does not fit.
                KeyCode::Up if self.scrolls() => {
                    self.scroll_by(-1);
                    None
                }
                KeyCode::Down if self.scrolls() => {
                    self.scroll_by(1);
                    None
                }
                KeyCode::Home => {
                    self.scroll = 0;
                    None
                }
                KeyCode::End => {
                    self.scroll = self.max_scroll.get();
                    None
                }
                KeyCode::Left | KeyCode::Right | KeyCode::Up | KeyCode::Down | KeyCode::Tab => {
                    self.selected = 1 - self.selected.min(1);
                    None
                }
                KeyCode::Enter => Some(DialogAnswer::Confirmed(self.selected == 0)),
                _ => None,
            },
            Dialog::Select { options, .. } => {
                let matching = self.matching();
                match key.code {
                    KeyCode::Up => {
                        self.selected = self.selected.saturating_sub(1);
                        None
                    }
                    KeyCode::Down => {
                        if self.selected + 1 < matching.len() {
                            self.selected += 1;
                        }
                        None
                    }
                    KeyCode::Enter => matching
                        .get(self.selected)
                        .map(|&i| DialogAnswer::Value(options[i].clone())),
                    _ => {
                        self.input.handle_key(key);
                        self.selected = 0;
                        None
                    }
                }
            }
            Dialog::Input { .. } | Dialog::Editor { .. } => {
                let single = matches!(self.dialog, Dialog::Input { .. });
                if single && key.code == KeyCode::Enter {
                    return Some(DialogAnswer::Value(self.input.text().to_string()));
                }
                match self.input.handle_key(key) {
                    InputOutcome::Submit { text, .. } => Some(DialogAnswer::Value(text)),
                    InputOutcome::None => None,
                }
            }
        }
    }

    pub fn paste(&mut self, text: &str) {
        match self.dialog {
            Dialog::Input { .. } => self.input.paste(&text.replace('\n', " ")),
            _ => self.input.paste(text),
        }
    }

    /// Lines and, for text entry, the cursor, in at most `height` rows (see `viewport`).
    pub fn render(
        &self,
        width: usize,
        height: usize,
        theme: &Theme,
        now: Instant,
    ) -> (Vec<Line>, Option<(usize, usize)>) {
        if let Some(t) = &self.tree {
            return (t.render(width, theme), None);
        }
        let head = self.head(width, theme, now);
        let body = self.body(width, theme);
        let (controls, cursor) = self.controls(width, theme);
        let room = height.saturating_sub(1 + controls.len());
        let fit = viewport::fit(head.len(), body.len(), room, self.scroll);
        self.max_scroll.set(fit.max_top());
        self.page.set(fit.shown);
        let mut out = vec![Line::styled("─".repeat(width), theme.border)];
        let subject = head.into_iter().chain(body);
        out.extend(subject.clone().take(fit.fixed));
        out.extend(subject.skip(fit.fixed + fit.top).take(fit.shown));
        if fit.scrolls {
            let keys = if matches!(self.dialog, Dialog::Confirm { .. }) {
                "↑↓ PgUp PgDn Home End"
            } else {
                "PgUp PgDn"
            };
            out.push(
                Line::styled(
                    format!(
                        "  rows {}–{} of {} · {keys} to scroll",
                        fit.top + 1,
                        fit.top + fit.shown,
                        fit.total
                    ),
                    theme.warning,
                )
                .truncated(width),
            );
        }
        let cursor = cursor.map(|(r, c)| (out.len() + r, c));
        out.extend(controls);
        (out, cursor)
    }

    /// The title row(s): the title, who asks, the countdown.
    fn head(&self, width: usize, theme: &Theme, now: Instant) -> Vec<Line> {
        let title = match &self.dialog {
            Dialog::Confirm { title, .. }
            | Dialog::Select { title, .. }
            | Dialog::Input { title, .. }
            | Dialog::Editor { title, .. } => title,
        };
        let mut head = Line::styled(title.clone(), theme.bold);
        if self.asker != "pi" {
            head.push(format!("  ({})", self.asker), theme.muted);
        }
        if let Some(d) = self.deadline {
            let left = d.saturating_duration_since(now).as_secs_f64().ceil() as u64;
            head.push(format!("  {left}s"), theme.warning);
        }
        wrap(&head, width, &Line::new())
    }

    /// The message rows, every line whole: wrapped, a continuation hanging two columns
    /// under its line's own indentation.
    fn body(&self, width: usize, theme: &Theme) -> Vec<Line> {
        let confirm = match &self.dialog {
            Dialog::Confirm { message, .. } => Some(message),
            _ => None,
        };
        confirm
            .into_iter()
            .chain(&self.message)
            .flat_map(|m| m.lines())
            .flat_map(|l| {
                let l = l.replace('\t', "    ");
                let indent = l.len() - l.trim_start_matches(' ').len() + 2;
                wrap(
                    &Line::styled(l, theme.text),
                    width,
                    &Line::plain(" ".repeat(indent)),
                )
            })
            .collect()
    }

    /// What answers: the choices, the options, the text being typed; and its cursor.
    fn controls(&self, width: usize, theme: &Theme) -> (Vec<Line>, Option<(usize, usize)>) {
        let mut out = Vec::new();
        let mut cursor = None;
        match &self.dialog {
            Dialog::Confirm { .. } => {
                let mut l = Line::new();
                for (i, label) in ["Yes", "No"].iter().enumerate() {
                    let style = if i == self.selected {
                        theme.selected.reverse()
                    } else {
                        theme.text
                    };
                    l.push(format!(" {label} "), style);
                    l.push("  ", theme.text);
                }
                l.push("y/n · Enter · Esc", theme.muted);
                out.push(l);
            }
            Dialog::Select { options, .. } => {
                let (filter_lines, c) = self.input.render("filter: ", theme.muted, width);
                if !self.input.is_empty() {
                    cursor = Some((out.len() + c.0, c.1));
                    out.extend(filter_lines);
                }
                let matching = self.matching();
                let start = self.selected.saturating_sub(VISIBLE - 1);
                for (n, &i) in matching.iter().enumerate().skip(start).take(VISIBLE) {
                    let sel = n == self.selected;
                    let mut l = Line::new();
                    l.push(if sel { "› " } else { "  " }, theme.accent);
                    l.push(
                        options[i].clone(),
                        if sel { theme.selected } else { theme.text },
                    );
                    if let Some(d) = self.details.get(i).filter(|d| !d.is_empty()) {
                        l.push(format!("  {d}"), theme.muted);
                    }
                    out.push(l.truncated(width));
                }
                if matching.is_empty() {
                    out.push(Line::styled("  no match", theme.muted));
                } else if matching.len() > VISIBLE {
                    out.push(Line::styled(
                        format!(
                            "  {} of {} · type to filter",
                            self.selected + 1,
                            matching.len()
                        ),
                        theme.muted,
                    ));
                }
            }
            Dialog::Input { placeholder, .. } => {
                let (lines, c) = self.input.render("› ", theme.accent, width);
                cursor = Some((out.len() + c.0, c.1));
                out.extend(lines);
                if self.input.is_empty() {
                    if let Some(p) = placeholder {
                        out.push(Line::styled(format!("  {p}"), theme.muted));
                    }
                }
            }
            Dialog::Editor { .. } => {
                let (lines, c) = self.input.render("› ", theme.accent, width);
                cursor = Some((out.len() + c.0, c.1));
                out.extend(lines);
                out.push(Line::styled(
                    "Enter submits · Shift+Enter new line · Esc cancels",
                    theme.muted,
                ));
            }
        }
        (out, cursor)
    }
}

/// Whether every char of `needle` appears in `hay` in order (the pickers' filter).
pub fn subsequence(needle: &str, hay: &str) -> bool {
    let mut h = hay.chars();
    needle
        .chars()
        .filter(|c| !c.is_whitespace())
        .all(|n| h.any(|c| c == n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::theme::ThemeName;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    #[test]
    fn a_select_filters_as_you_type_and_answers_the_option() {
        let mut d = ActiveDialog::new(
            "pi",
            Dialog::Select {
                title: "Model".into(),
                options: vec![
                    "anthropic/claude".into(),
                    "openai/gpt-4o".into(),
                    "faux/faux-1".into(),
                ],
            },
            None,
        );
        for c in "gpt".chars() {
            assert!(d.handle_key(key(KeyCode::Char(c))).is_none());
        }
        let theme = Theme::new(ThemeName::Dark, false);
        let (lines, _) = d.render(60, 24, &theme, Instant::now());
        let text: Vec<String> = lines.iter().map(Line::text).collect();
        assert!(text.iter().any(|l| l == "› openai/gpt-4o"), "{text:?}");
        assert!(!text.iter().any(|l| l.contains("claude")), "{text:?}");
        assert_eq!(
            d.handle_key(key(KeyCode::Enter)),
            Some(DialogAnswer::Value("openai/gpt-4o".into()))
        );
    }

    fn rows(d: &ActiveDialog, height: usize) -> Vec<String> {
        let theme = Theme::new(ThemeName::Dark, false);
        let (lines, _) = d.render(40, height, &theme, Instant::now());
        lines.iter().map(Line::text).collect()
    }

    #[test]
    fn a_confirm_taller_than_its_room_scrolls_and_keeps_title_and_answer() {
        let message: String = (1..=200).map(|i| format!("line {i}\n")).collect();
        let c = Dialog::Confirm {
            title: "Allow Bash?".into(),
            message,
        };
        let mut d = ActiveDialog::new("gate", c, None);
        let first = rows(&d, 12);
        assert_eq!(first.len(), 12, "{first:#?}");
        assert_eq!(first[1], "Allow Bash?  (gate)");
        assert_eq!(first[2], "line 1");
        assert!(first[10].contains("rows 1–8 of 200"), "{first:#?}");
        assert!(first[11].contains("y/n"), "{first:#?}");
        d.handle_key(key(KeyCode::End));
        let end = rows(&d, 12);
        assert_eq!(end[9], "line 200", "{end:#?}");
        assert_eq!(end[1], "Allow Bash?  (gate)");
        assert!(end[11].contains("y/n"));
        d.handle_key(key(KeyCode::PageUp));
        d.handle_key(key(KeyCode::Up));
        let up = rows(&d, 12);
        assert_eq!(up[2], "line 185", "{up:#?}");
        // Scrolling keys do not answer; the answer is still y/n.
        assert_eq!(
            d.handle_key(key(KeyCode::Char('n'))),
            Some(DialogAnswer::Confirmed(false))
        );
    }

    #[test]
    fn a_confirm_that_fits_toggles_its_answer_with_the_arrows() {
        let c = Dialog::Confirm {
            title: "Run?".into(),
            message: "ls".into(),
        };
        let mut d = ActiveDialog::new("policy", c, None);
        assert_eq!(rows(&d, 24).len(), 4);
        assert!(d.handle_key(key(KeyCode::Down)).is_none());
        assert_eq!(
            d.handle_key(key(KeyCode::Enter)),
            Some(DialogAnswer::Confirmed(false))
        );
    }

    #[test]
    fn confirm_answers_y_and_esc_dismisses() {
        let c = Dialog::Confirm {
            title: "Run?".into(),
            message: "rm".into(),
        };
        let mut d = ActiveDialog::new("policy", c.clone(), None);
        assert_eq!(
            d.handle_key(key(KeyCode::Char('y'))),
            Some(DialogAnswer::Confirmed(true))
        );
        let mut d = ActiveDialog::new("policy", c, None);
        assert_eq!(
            d.handle_key(key(KeyCode::Esc)),
            Some(DialogAnswer::Dismissed)
        );
    }
}
