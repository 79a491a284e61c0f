//! Markdown for the terminal: assistant text rendered to styled, wrapped lines, whole or while
//! it streams. Headings, emphasis, inline code, links (the address after the text when it
//! differs), quotes, nested/ordered/task lists, rules, tables fitted to the width, and code
//! blocks with a gutter and syntax highlighting. Raw HTML is shown as text; control characters
//! in the model's text are shown as visible symbols, never sent to the terminal.
//!
//! Streaming and whole renders agree by construction: both cut the text into top-level blocks
//! at the same lines and render each the same way (see `segment`), so what goes to scrollback
//! while a message streams is exactly what the finished message renders to. Every line is at
//! most `width` columns wide.

mod ast;
mod code;
mod render;
mod segment;
mod stream;
mod table;

pub use stream::MarkdownStream;

use crate::modes::interactive::text::Line;
use crate::modes::interactive::theme::Theme;

/// Whole-document render (used for finished messages, e.g. when resuming a session).
pub fn render(text: &str, width: usize, theme: &Theme) -> Vec<Line> {
    let mut s = MarkdownStream::new();
    s.push(text);
    s.finish(width, theme)
}

/// A code block on its own (file previews of the `read` tool): the same gutter, wrapping and
/// highlighting as fenced code in a message. `lang` is a fence token such as
/// [`super::highlight::language_for_path`] returns.
pub fn render_code(code: &str, lang: Option<&str>, width: usize, theme: &Theme) -> Vec<Line> {
    let mut pending = false;
    let mut text = String::with_capacity(code.len());
    clean_input(code, &mut pending, &mut text);
    let mut block = code::CodeBlock::new(lang, theme, true);
    let mut out = vec![block.header(theme)];
    for line in code::split_lines(&text) {
        out.extend(block.line(line, width, theme));
    }
    out.push(block.footer(theme));
    out.into_iter().map(|l| fit(l, width)).collect()
}

/// Input as the parser should see it: `\r\n` and lone `\r` become `\n` (CommonMark treats all
/// three as line endings; one form keeps line splitting simple) and NUL becomes U+FFFD (as
/// CommonMark requires), across delta boundaries.
fn clean_input(delta: &str, pending_cr: &mut bool, out: &mut String) {
    for ch in delta.chars() {
        match ch {
            '\n' if std::mem::take(pending_cr) => {}
            '\r' => {
                out.push('\n');
                *pending_cr = true;
            }
            '\0' => {
                *pending_cr = false;
                out.push('\u{FFFD}');
            }
            c => {
                *pending_cr = false;
                out.push(c);
            }
        }
    }
}

/// A character the terminal would act on instead of showing — C0/C1 controls, DEL, bidi
/// overrides — replaced by its visible stand-in (`␛` for ESC), by the terminal rule.
fn clean_char(ch: char) -> char {
    crate::term::sanitize::stand_in(ch).unwrap_or(ch)
}

/// Running text for a span: controls made visible, tabs and newlines spaces.
fn sanitize(text: &str) -> String {
    crate::term::sanitize::row(text).into_owned()
}

/// The last guard of the width promise. `text::wrap` measures character by character, while
/// `Line::width` measures the string, and the two differ for a few sequences (an emoji
/// presentation selector widens the character before it); a row that came out too wide is cut.
fn fit(line: Line, width: usize) -> Line {
    if line.width() <= width {
        return line;
    }
    let mut line = line.truncated(width);
    while line.width() > width {
        let Some(last) = line.spans.last_mut() else {
            break;
        };
        last.pop();
        if last.text().is_empty() {
            line.spans.pop();
        }
    }
    line
}

#[cfg(test)]
mod tests;
