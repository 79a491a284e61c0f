//! Code block layout: a header naming the language, a gutter bar on every row (so code stands
//! apart from prose without colour), long lines wrapped under the gutter, and a footer. Lines
//! are rendered one at a time with the highlighter's state carried along, so a streaming code
//! block can print each finished line once and a whole render gives the very same rows.

use unicode_width::UnicodeWidthChar;

use crate::modes::interactive::highlight::CodeHighlighter;
use crate::modes::interactive::text::Line;
use crate::modes::interactive::theme::Theme;

const TAB: usize = 4;

/// The language token of a fence's info string: its first word (`rust` in "rust,ignore" or
/// "rust title=x").
pub(super) fn lang_of(info: &str) -> Option<&str> {
    let word = info
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("")
        .trim_start_matches('.');
    (!word.is_empty()).then_some(word)
}

/// The lines of a code block's text: a final newline ends the last line, it does not start an
/// empty one.
pub(super) fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let empty = text.is_empty();
    body.split('\n')
        .filter(move |_| !empty)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// One code block being laid out.
#[derive(Clone)]
pub(super) struct CodeBlock {
    lang: Option<String>,
    hl: CodeHighlighter,
}

impl CodeBlock {
    pub fn new(lang: Option<&str>, theme: &Theme, wait: bool) -> CodeBlock {
        CodeBlock {
            lang: lang.map(str::to_string),
            hl: match lang {
                Some(l) => CodeHighlighter::new(Some(l), theme, wait),
                None => CodeHighlighter::plain(),
            },
        }
    }

    /// Bytes handed to the highlighter so far.
    pub fn highlighted_bytes(&self) -> u64 {
        self.hl.bytes()
    }

    pub fn header(&self, theme: &Theme) -> Line {
        let mut l = Line::styled("╭─", theme.code_border);
        if let Some(lang) = &self.lang {
            l.push(" ", theme.code_border);
            l.push(super::sanitize(lang), theme.code_border);
        }
        l
    }

    pub fn footer(&self, theme: &Theme) -> Line {
        Line::styled("╰─", theme.code_border)
    }

    /// The rows of one source line (no newline), wrapped under the gutter.
    pub fn line(&mut self, line: &str, width: usize, theme: &Theme) -> Vec<Line> {
        let gutter = Line::styled("│ ", theme.code_border);
        let mut row = Line::new();
        let mut col = 0;
        // Highlighted code is text in the syntax colours (1.6's highlighter); code without a
        // known language is all `mdCodeBlock`.
        let base = if self.hl.is_active() {
            theme.text
        } else {
            theme.code_block
        };
        for (style, piece) in self.hl.line(line) {
            let style = base.patch(style);
            let mut text = String::with_capacity(piece.len());
            for ch in piece.chars() {
                if ch == '\t' {
                    let n = TAB - col % TAB;
                    text.extend(std::iter::repeat_n(' ', n));
                    col += n;
                } else {
                    let clean = super::clean_char(ch);
                    col += clean.width().unwrap_or(0);
                    text.push(clean);
                }
            }
            row.push(text, style);
        }
        hard_wrap(&row, width.saturating_sub(gutter.width()).max(1))
            .into_iter()
            .map(|r| r.prefixed("│ ", theme.code_border))
            .collect()
    }
}

/// Cut a line into rows of at most `width` columns exactly where they fill up: code keeps its
/// spaces, so a word-wrapper's swallowing of spaces at breaks would change it. A character
/// wider than a whole row still gets a row of its own.
fn hard_wrap(line: &Line, width: usize) -> Vec<Line> {
    let mut rows = vec![Line::new()];
    let mut used = 0;
    for span in &line.spans {
        for ch in span.text().chars() {
            let w = ch.width().unwrap_or(0);
            if used + w > width && used > 0 {
                rows.push(Line::new());
                used = 0;
            }
            if let Some(row) = rows.last_mut() {
                row.push(ch.to_string(), span.style);
            }
            used += w;
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lang_is_the_first_word_of_the_info_string() {
        assert_eq!(lang_of("rust"), Some("rust"));
        assert_eq!(lang_of("rust,ignore"), Some("rust"));
        assert_eq!(lang_of("python title=\"x\""), Some("python"));
        assert_eq!(lang_of("{.js}"), None);
        assert_eq!(lang_of(".js"), Some("js"));
        assert_eq!(lang_of(""), None);
    }

    #[test]
    fn split_lines_does_not_invent_a_last_empty_line() {
        assert_eq!(split_lines("a\nb\n").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(split_lines("a\n\n").collect::<Vec<_>>(), ["a", ""]);
        assert_eq!(split_lines("a").collect::<Vec<_>>(), ["a"]);
        assert_eq!(split_lines("").count(), 0);
        assert_eq!(split_lines("\n").collect::<Vec<_>>(), [""]);
    }
}
