//! Questions at the terminal, keyboard only: a hook's `ui.confirm/select/input/editor`, and
//! pi's own pickers (model, session, fork point) which are selects with a filter. One dialog
//! is shown at a time in place of the editor; its timeout counts down on screen, Esc cancels.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::line_input::{InputOutcome, LineInput};
use super::text::{wrap, Line};
use super::theme::Theme;
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
    selected: usize,
    /// A select's filter, or an input/editor's text.
    input: LineInput,
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
            selected: 0,
            input,
        }
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

    /// A key; `Some` when the dialog is over.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<DialogAnswer> {
        if key.code == KeyCode::Esc
            || (key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL))
        {
            return Some(DialogAnswer::Dismissed);
        }
        match &self.dialog {
            Dialog::Confirm { .. } => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => Some(DialogAnswer::Confirmed(true)),
                KeyCode::Char('n') | KeyCode::Char('N') => Some(DialogAnswer::Confirmed(false)),
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

    /// Lines and, for text entry, the cursor.
    pub fn render(
        &self,
        width: usize,
        theme: &Theme,
        now: Instant,
    ) -> (Vec<Line>, Option<(usize, usize)>) {
        let mut out = vec![Line::styled("─".repeat(width), theme.border)];
        let (title, body) = match &self.dialog {
            Dialog::Confirm { title, message } => (title, Some(message)),
            Dialog::Select { title, .. }
            | Dialog::Input { title, .. }
            | Dialog::Editor { title, .. } => (title, None),
        };
        let mut head = Line::styled(title.clone(), theme.bold);
        if self.asker != "pi" {
            head.push(format!("  ({})", self.asker), theme.muted);
        }
        if let Some(d) = self.deadline {
            let left = d.saturating_duration_since(now).as_secs_f64().ceil() as u64;
            head.push(format!("  {left}s"), theme.warning);
        }
        out.extend(wrap(&head, width, &Line::new()));
        if let Some(body) = body {
            for l in body.lines() {
                out.extend(wrap(&Line::plain(l), width, &Line::new()));
            }
        }
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
        let (lines, _) = d.render(60, &theme, Instant::now());
        let text: Vec<String> = lines.iter().map(Line::text).collect();
        assert!(text.iter().any(|l| l == "› openai/gpt-4o"), "{text:?}");
        assert!(!text.iter().any(|l| l.contains("claude")), "{text:?}");
        assert_eq!(
            d.handle_key(key(KeyCode::Enter)),
            Some(DialogAnswer::Value("openai/gpt-4o".into()))
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
