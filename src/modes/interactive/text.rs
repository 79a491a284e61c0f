//! Styled text for the terminal UI: a `Line` is a row of `Span`s, each a piece of text with
//! one `Style`. Every part of the interactive mode (markdown, tool blocks, editor, footer,
//! dialogs) renders to lines of this type, and only the screen turns them into escape
//! sequences, so rendering stays pure and testable without a terminal. Widths are terminal
//! columns (`unicode-width`), never bytes or chars, so CJK and emoji wrap where the terminal
//! wraps them.
//!
//! A span's text is private and every way in applies the terminal rule
//! ([`crate::term::sanitize::row`]): a control character becomes a visible stand-in when the
//! span is made, so no text from a model, hook, tool, server, session or path can reach the
//! encoder as a sequence, whichever part of the UI forgot about it, and widths are measured
//! on what is shown.

use crossterm::style::Color;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::term::sanitize;

/// How a span looks. `None` colours mean the terminal's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Style {
    pub fg: Option<Color>,
    pub bg: Option<Color>,
    pub bold: bool,
    pub dim: bool,
    pub italic: bool,
    pub underline: bool,
    pub strike: bool,
    pub reverse: bool,
}

impl Style {
    pub const fn plain() -> Style {
        Style {
            fg: None,
            bg: None,
            bold: false,
            dim: false,
            italic: false,
            underline: false,
            strike: false,
            reverse: false,
        }
    }
    pub const fn fg(mut self, c: Color) -> Style {
        self.fg = Some(c);
        self
    }
    pub const fn bg(mut self, c: Color) -> Style {
        self.bg = Some(c);
        self
    }
    pub const fn bold(mut self) -> Style {
        self.bold = true;
        self
    }
    pub const fn dim(mut self) -> Style {
        self.dim = true;
        self
    }
    pub const fn italic(mut self) -> Style {
        self.italic = true;
        self
    }
    pub const fn underline(mut self) -> Style {
        self.underline = true;
        self
    }
    pub const fn strike(mut self) -> Style {
        self.strike = true;
        self
    }
    pub const fn reverse(mut self) -> Style {
        self.reverse = true;
        self
    }
    /// `other`'s colours where it has them, and the union of both attribute sets: how nested
    /// markdown (bold inside a link inside a quote) combines.
    pub fn patch(self, other: Style) -> Style {
        Style {
            fg: other.fg.or(self.fg),
            bg: other.bg.or(self.bg),
            bold: self.bold || other.bold,
            dim: self.dim || other.dim,
            italic: self.italic || other.italic,
            underline: self.underline || other.underline,
            strike: self.strike || other.strike,
            reverse: self.reverse || other.reverse,
        }
    }
    /// The same attributes without colours (`NO_COLOR`).
    pub fn without_colors(self) -> Style {
        Style {
            fg: None,
            bg: None,
            ..self
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Span {
    /// Clean by construction (see the module's doc).
    text: String,
    pub style: Style,
}

/// `text` by the terminal rule for a row, reusing its allocation when it is clean already.
fn clean(text: String) -> String {
    if sanitize::is_clean_row(&text) {
        text
    } else {
        sanitize::row(&text).into_owned()
    }
}

impl Span {
    pub fn new(text: impl Into<String>, style: Style) -> Span {
        Span {
            text: clean(text.into()),
            style,
        }
    }
    pub fn plain(text: impl Into<String>) -> Span {
        Span::new(text, Style::plain())
    }
    pub fn text(&self) -> &str {
        &self.text
    }
    pub fn width(&self) -> usize {
        self.text.width()
    }
    /// Remove the last character (cutting a row to a width).
    pub fn pop(&mut self) -> Option<char> {
        self.text.pop()
    }
}

/// One row of styled text. Text in a line never contains `\n`; producers split first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Line {
    pub spans: Vec<Span>,
}

impl Line {
    pub fn new() -> Line {
        Line::default()
    }
    pub fn from_spans(spans: Vec<Span>) -> Line {
        Line { spans }
    }
    pub fn styled(text: impl Into<String>, style: Style) -> Line {
        Line {
            spans: vec![Span::new(text, style)],
        }
    }
    pub fn plain(text: impl Into<String>) -> Line {
        Line::styled(text, Style::plain())
    }
    pub fn push(&mut self, text: impl Into<String>, style: Style) {
        let text = text.into();
        if text.is_empty() {
            return;
        }
        match self.spans.last_mut() {
            Some(last) if last.style == style => last.text.push_str(&sanitize::row(&text)),
            _ => self.spans.push(Span::new(text, style)),
        }
    }
    pub fn width(&self) -> usize {
        self.spans.iter().map(Span::width).sum()
    }
    /// The text without styles: what a person reads, and what tests compare.
    pub fn text(&self) -> String {
        self.spans.iter().map(Span::text).collect()
    }
    /// A copy with `prefix` in front (indentation, quote bars, list bullets).
    pub fn prefixed(&self, prefix: &str, style: Style) -> Line {
        let mut l = Line::new();
        l.push(prefix, style);
        for s in &self.spans {
            l.push(s.text.as_str(), s.style);
        }
        l
    }
    /// Cut to at most `width` columns, ending in `…` when something was cut.
    pub fn truncated(&self, width: usize) -> Line {
        if self.width() <= width {
            return self.clone();
        }
        let mut out = Line::new();
        let mut used = 0;
        let budget = width.saturating_sub(1);
        'outer: for s in &self.spans {
            for ch in s.text.chars() {
                let w = ch.width().unwrap_or(0);
                if used + w > budget {
                    break 'outer;
                }
                used += w;
                out.push(ch.to_string(), s.style);
            }
        }
        if width > 0 {
            out.push("…", Style::plain());
        }
        out
    }
}

/// Split `text` on newlines into plain lines of one style; tabs become spaces so widths hold.
pub fn lines_of(text: &str, style: Style) -> Vec<Line> {
    text.split('\n')
        .map(|l| Line::styled(l.trim_end_matches('\r').replace('\t', "    "), style))
        .collect()
}

/// Word-wrap one line to `width` columns. Breaks at spaces where it can, inside a word only
/// when the word alone is wider than the line; a character wider than the whole line is kept
/// on a row of its own rather than lost. Continuation rows start with `indent` (hanging
/// indentation for list items and quotes).
pub fn wrap(line: &Line, width: usize, indent: &Line) -> Vec<Line> {
    let width = width.max(1);
    if line.width() <= width {
        return vec![line.clone()];
    }
    // Flatten into styled chars, then cut greedily at the last space that fits.
    let chars: Vec<(char, Style)> = line
        .spans
        .iter()
        .flat_map(|s| s.text.chars().map(move |c| (c, s.style)))
        .collect();
    let indent_w = indent.width().min(width.saturating_sub(1));
    let mut rows = Vec::new();
    let mut start = 0;
    let mut first = true;
    while start < chars.len() {
        let avail = if first { width } else { width - indent_w };
        let mut used = 0;
        let mut end = start;
        let mut last_space = None;
        while end < chars.len() {
            let w = chars[end].0.width().unwrap_or(0);
            if used + w > avail && end > start {
                break;
            }
            if chars[end].0 == ' ' {
                last_space = Some(end);
            }
            used += w;
            end += 1;
        }
        let (cut, next) = if end < chars.len() && chars[end].0 == ' ' {
            (end, end + 1)
        } else if end < chars.len() {
            match last_space {
                Some(sp) if sp > start => (sp, sp + 1),
                _ => (end, end),
            }
        } else {
            (end, end)
        };
        let mut row = if first { Line::new() } else { indent.clone() };
        for &(c, st) in &chars[start..cut] {
            row.push(c.to_string(), st);
        }
        rows.push(row);
        // Spaces at a break are swallowed, as every terminal word-wrapper does.
        let mut n = next;
        while n < chars.len() && chars[n].0 == ' ' && n > cut {
            n += 1;
        }
        start = n;
        first = false;
    }
    if rows.is_empty() {
        rows.push(Line::new());
    }
    rows
}

/// `lines` drawn on a panel: every span without a background of its own takes the panel's,
/// and each row is filled to `width` with it (a user message, a tool block). A panel without
/// a background (the `system` theme's, `NO_COLOR`) changes nothing.
pub fn on_panel(lines: Vec<Line>, width: usize, panel: Style) -> Vec<Line> {
    let Some(bg) = panel.bg else {
        return lines;
    };
    lines
        .into_iter()
        .map(|l| {
            let mut out = Line::new();
            for s in &l.spans {
                let mut st = s.style;
                st.bg = st.bg.or(Some(bg));
                out.push(s.text(), st);
            }
            let fill = width.saturating_sub(out.width());
            out.push(" ".repeat(fill), Style::plain().bg(bg));
            out
        })
        .collect()
}

/// Wrap every line; see [`wrap`].
pub fn wrap_all(lines: &[Line], width: usize) -> Vec<Line> {
    let none = Line::new();
    lines.iter().flat_map(|l| wrap(l, width, &none)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines.iter().map(Line::text).collect()
    }

    #[test]
    fn a_panel_fills_rows_with_its_background_only_where_it_has_one() {
        let panel = Style::plain().bg(Color::AnsiValue(4));
        let own = Style::plain().bg(Color::AnsiValue(1));
        let lines = vec![Line::from_spans(vec![
            Span::plain("ab"),
            Span::new("c", own),
        ])];
        let out = on_panel(lines.clone(), 6, panel);
        assert_eq!(out[0].text(), "abc   ");
        assert_eq!(out[0].spans[0].style.bg, Some(Color::AnsiValue(4)));
        assert_eq!(out[0].spans[1].style.bg, Some(Color::AnsiValue(1)));
        assert_eq!(on_panel(lines.clone(), 6, Style::plain()), lines);
    }

    #[test]
    fn wrap_breaks_at_spaces_and_keeps_styles() {
        let mut l = Line::new();
        l.push("hello ", Style::plain());
        l.push("brave new", Style::plain().bold());
        l.push(" world", Style::plain());
        let rows = wrap(&l, 11, &Line::new());
        assert_eq!(texts(&rows), ["hello brave", "new world"]);
        assert!(rows[1].spans[0].style.bold);
    }

    #[test]
    fn wrap_splits_a_word_longer_than_the_line() {
        let rows = wrap(&Line::plain("abcdefghij"), 4, &Line::new());
        assert_eq!(texts(&rows), ["abcd", "efgh", "ij"]);
    }

    #[test]
    fn wrap_counts_wide_characters_as_two_columns() {
        let rows = wrap(&Line::plain("日本語のテキスト"), 6, &Line::new());
        assert_eq!(texts(&rows), ["日本語", "のテキ", "スト"]);
        assert!(rows.iter().all(|r| r.width() <= 6));
    }

    #[test]
    fn wrap_hangs_continuation_rows_under_the_indent() {
        let rows = wrap(&Line::plain("- one two three"), 8, &Line::plain("  "));
        assert_eq!(texts(&rows), ["- one", "  two", "  three"]);
    }

    #[test]
    fn wrap_of_a_column_too_narrow_for_a_wide_char_still_terminates() {
        let rows = wrap(&Line::plain("日本"), 1, &Line::new());
        assert_eq!(texts(&rows), ["日", "本"]);
    }

    #[test]
    fn no_way_into_a_line_keeps_a_control_character() {
        let evil = "a\u{1b}]0;t\u{7}\u{9b}2J\nb\tc";
        let mut l = Line::styled(evil, Style::plain());
        l.push(evil, Style::plain());
        l.push(evil, Style::plain().bold());
        let l = l.prefixed(evil, Style::plain()).truncated(200);
        for s in &l.spans {
            assert!(!s.text().chars().any(char::is_control), "{:?}", s.text());
        }
        assert!(
            l.text().starts_with("a␛]0;t␇\u{FFFD}2J b c"),
            "{}",
            l.text()
        );
        assert_eq!(wrap(&Line::plain(evil), 4, &Line::new())[0].text(), "a␛]0");
    }

    #[test]
    fn truncated_marks_the_cut() {
        assert_eq!(Line::plain("abcdef").truncated(4).text(), "abc…");
        assert_eq!(Line::plain("abc").truncated(4).text(), "abc");
    }
}
