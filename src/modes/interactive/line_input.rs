//! A small text input: what dialogs that ask for text use, and the prompt editor's stand-in
//! until the full editor lands. Multi-line (Shift+Enter / Ctrl+J insert a newline), cursor
//! movement, word and line deletion, paste.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use unicode_width::UnicodeWidthStr;

use super::text::{Line, Style};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputOutcome {
    None,
    /// Enter: the text, and whether Alt was held (a follow-up while the agent works).
    Submit {
        text: String,
        alt: bool,
    },
}

#[derive(Debug, Default, Clone)]
pub struct LineInput {
    text: String,
    /// Byte offset of the cursor in `text`, always on a char boundary.
    cursor: usize,
}

impl LineInput {
    pub fn new() -> LineInput {
        LineInput::default()
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Text from elsewhere (a hook's prefill): kept as a paste is, so what is shown, measured
    /// and edited is the same text.
    pub fn set_text(&mut self, text: &str) {
        self.text = super::editor::paste::sanitize(text);
        self.cursor = self.text.len();
    }

    pub fn clear(&mut self) {
        self.set_text("");
    }

    pub fn paste(&mut self, s: &str) {
        self.insert(&super::editor::paste::sanitize(s));
    }

    fn insert(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    fn prev_boundary(&self) -> usize {
        self.text[..self.cursor]
            .char_indices()
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self) -> usize {
        self.text[self.cursor..]
            .chars()
            .next()
            .map_or(self.cursor, |c| self.cursor + c.len_utf8())
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> InputOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if shift => self.insert("\n"),
            KeyCode::Char('j') if ctrl => self.insert("\n"),
            KeyCode::Enter => {
                // pi's fallback for terminals that cannot report Shift+Enter: a `\` before Enter.
                if !alt && self.text[..self.cursor].ends_with('\\') {
                    self.cursor -= 1;
                    self.text.remove(self.cursor);
                    self.insert("\n");
                    return InputOutcome::None;
                }
                let text = std::mem::take(&mut self.text);
                self.cursor = 0;
                return InputOutcome::Submit { text, alt };
            }
            KeyCode::Backspace if alt => self.delete_word_back(),
            KeyCode::Char('w') if ctrl => self.delete_word_back(),
            KeyCode::Backspace => {
                let p = self.prev_boundary();
                self.text.replace_range(p..self.cursor, "");
                self.cursor = p;
            }
            KeyCode::Delete => {
                let n = self.next_boundary();
                self.text.replace_range(self.cursor..n, "");
            }
            KeyCode::Left => self.cursor = self.prev_boundary(),
            KeyCode::Right => self.cursor = self.next_boundary(),
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::Char('a') if ctrl => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            KeyCode::Char('e') if ctrl => self.cursor = self.line_end(),
            KeyCode::Char('u') if ctrl => {
                let s = self.line_start();
                self.text.replace_range(s..self.cursor, "");
                self.cursor = s;
            }
            KeyCode::Char('k') if ctrl => {
                let e = self.line_end();
                self.text.replace_range(self.cursor..e, "");
            }
            KeyCode::Tab => self.insert("\t"),
            KeyCode::Char(c) if !ctrl => {
                let mut b = [0u8; 4];
                self.insert(c.encode_utf8(&mut b));
            }
            _ => {}
        }
        InputOutcome::None
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    fn delete_word_back(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end_matches(' ');
        let start = trimmed.rfind([' ', '\n']).map_or(0, |i| i + 1);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Lines with `prompt` before the first (continuation lines indented to match), and the
    /// cursor's (row, column). Long lines are cut at the right edge around the cursor rather
    /// than wrapped, which keeps the cursor arithmetic exact.
    pub fn render(&self, prompt: &str, style: Style, width: usize) -> (Vec<Line>, (usize, usize)) {
        let pw = prompt.width();
        let indent = " ".repeat(pw);
        let mut lines = Vec::new();
        let mut cursor = (0, pw);
        let mut offset = 0;
        for (row, raw) in self.text.split('\n').enumerate() {
            let shown = raw.replace('\t', " ");
            let mut l = Line::new();
            l.push(if row == 0 { prompt } else { indent.as_str() }, style);
            let in_line = self.cursor >= offset && self.cursor <= offset + raw.len();
            let col = if in_line {
                pw + raw[..self.cursor - offset].replace('\t', " ").width()
            } else {
                0
            };
            // Keep the cursor on screen: drop the line's start when it would be past the edge.
            let avail = width.saturating_sub(pw + 1).max(1);
            let mut text = shown.clone();
            let mut c = col;
            if in_line && col >= pw + avail {
                let mut drop = col - pw - avail + 1;
                while drop > 0 && !text.is_empty() {
                    let ch = text.remove(0);
                    let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
                    drop = drop.saturating_sub(w);
                    c -= w;
                }
            }
            l.push(text, Style::plain());
            if in_line {
                cursor = (row, c);
            }
            lines.push(l.truncated(width));
            offset += raw.len() + 1;
        }
        (lines, cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    fn typed(s: &str) -> LineInput {
        let mut i = LineInput::new();
        for c in s.chars() {
            i.handle_key(key(KeyCode::Char(c), KeyModifiers::NONE));
        }
        i
    }

    #[test]
    fn enter_submits_and_alt_enter_says_follow_up() {
        let mut i = typed("hello");
        assert_eq!(
            i.handle_key(key(KeyCode::Enter, KeyModifiers::ALT)),
            InputOutcome::Submit {
                text: "hello".into(),
                alt: true
            }
        );
        assert!(i.is_empty());
    }

    #[test]
    fn backslash_enter_and_shift_enter_insert_newlines() {
        let mut i = typed("a\\");
        assert_eq!(
            i.handle_key(key(KeyCode::Enter, KeyModifiers::NONE)),
            InputOutcome::None
        );
        i.handle_key(key(KeyCode::Char('b'), KeyModifiers::NONE));
        i.handle_key(key(KeyCode::Enter, KeyModifiers::SHIFT));
        i.handle_key(key(KeyCode::Char('c'), KeyModifiers::NONE));
        assert_eq!(i.text(), "a\nb\nc");
        let (lines, cur) = i.render("› ", Style::plain(), 40);
        assert_eq!(
            lines.iter().map(Line::text).collect::<Vec<_>>(),
            ["› a", "  b", "  c"]
        );
        assert_eq!(cur, (2, 3));
    }

    #[test]
    fn ctrl_w_deletes_a_word_and_backspace_a_whole_character() {
        let mut i = typed("one twö");
        i.handle_key(key(KeyCode::Backspace, KeyModifiers::NONE));
        assert_eq!(i.text(), "one tw");
        i.handle_key(key(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(i.text(), "one ");
    }

    #[test]
    fn paste_normalises_line_ends_and_drops_control_characters() {
        let mut i = LineInput::new();
        i.paste("a\r\nb\x07c");
        assert_eq!(i.text(), "a\nbc");
    }
}
