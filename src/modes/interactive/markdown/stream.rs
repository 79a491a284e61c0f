//! A message that is still streaming. Only the open tail — the last top-level block and any
//! partial line — is kept as text; everything before it has been rendered once and handed out
//! by `take_stable`. A fenced code block at column 0 is special: its finished lines can never
//! change (each line's colours depend only on the lines above it), so they are handed out as
//! they complete, keeping a long code block out of the redrawn live region, and its text is
//! never parsed again.

use std::cell::Cell;

use super::code::{self, CodeBlock};
use super::render::Ctx;
use super::segment::{self, Defs};
use super::{clean_input, fit};
use crate::modes::interactive::text::Line;
use crate::modes::interactive::theme::Theme;

/// The code block whose fence line has been handed out and whose closing fence has not come.
#[derive(Clone)]
struct OpenFence {
    ch: char,
    len: usize,
    block: CodeBlock,
}

/// The opening fence's character and length (the line is known to open a fence at column 0).
fn fence_of(line: &str) -> Option<(char, usize)> {
    let ch = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    Some((ch, line.chars().take_while(|c| *c == ch).count()))
}

/// CommonMark's closing fence: up to three spaces, at least as many fence characters as the
/// opening, then only spaces or tabs.
fn closes(line: &str, ch: char, len: usize) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let run = rest.chars().take_while(|c| *c == ch).count();
    run >= len && rest[run * ch.len_utf8()..].trim_end_matches(' ').is_empty()
}

/// Streaming markdown: push deltas, take the lines that can no longer change, redraw the rest.
/// See the module docs of [`super`] for the guarantees.
#[derive(Default)]
pub struct MarkdownStream {
    /// The text not yet handed out as stable lines.
    tail: String,
    /// The last delta ended in `\r`; a `\n` starting the next one belongs to it.
    pending_cr: bool,
    defs: Defs,
    /// Some block has been handed out: the next one is preceded by a blank line.
    emitted: bool,
    fence: Option<OpenFence>,
    /// Length of the tail's complete lines at the last scan that found nothing to hand out.
    scanned: usize,
    parsed: Cell<u64>,
    highlighted: u64,
}

impl MarkdownStream {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, delta: &str) {
        clean_input(delta, &mut self.pending_cr, &mut self.tail);
    }

    /// Bytes handed to the markdown parser so far (a cost meter: streaming must parse each
    /// byte a bounded number of times, not once per delta).
    pub fn parsed_bytes(&self) -> u64 {
        self.parsed.get()
    }

    /// Bytes handed to the highlighter for stable lines so far.
    pub fn highlighted_bytes(&self) -> u64 {
        self.highlighted
            + self
                .fence
                .as_ref()
                .map_or(0, |f| f.block.highlighted_bytes())
    }

    /// Lines of blocks completed since the last call, rendered at `width`; each block is
    /// returned exactly once. Waits for the syntax definitions if a completed code block needs
    /// them.
    pub fn take_stable(&mut self, width: usize, theme: &Theme) -> Vec<Line> {
        self.advance(width, theme, false)
    }

    /// The message ended: everything is stable; returns the remaining lines.
    pub fn finish(&mut self, width: usize, theme: &Theme) -> Vec<Line> {
        self.advance(width, theme, true)
    }

    /// Lines of the part not yet taken as stable: redrawn every frame, so code in it is plain
    /// until the syntax definitions have loaded rather than waiting for them.
    pub fn render_tail(&self, width: usize, theme: &Theme) -> Vec<Line> {
        let ctx = Ctx { theme, wait: false };
        let mut emitted = self.emitted;
        let mut out = Vec::new();
        let mut rest = self.tail.as_str();
        if let Some(f) = &self.fence {
            let mut block = f.block.clone();
            let mut closed = false;
            while !rest.is_empty() {
                let (line, next) = match rest.find('\n') {
                    Some(i) => (&rest[..i], &rest[i + 1..]),
                    None => (rest, ""),
                };
                rest = next;
                if closes(line, f.ch, f.len) {
                    closed = true;
                    break;
                }
                out.extend(block.line(line, width, theme));
            }
            out.push(block.footer(theme));
            if !closed {
                rest = "";
            }
        }
        if !rest.is_empty() {
            let (lines, _) =
                segment::render(rest, &self.defs, width, &ctx, &self.parsed, &mut emitted);
            out.extend(lines);
        }
        out.into_iter().map(|l| fit(l, width)).collect()
    }

    /// Render `tail[from..to]` as one segment, learning its link definitions.
    fn render_segment(&mut self, from: usize, to: usize, width: usize, ctx: &Ctx) -> Vec<Line> {
        let (lines, learned) = segment::render(
            &self.tail[from..to],
            &self.defs,
            width,
            ctx,
            &self.parsed,
            &mut self.emitted,
        );
        for (label, dest, title) in learned {
            self.defs.entry(label).or_insert((dest, title));
        }
        lines
    }

    fn advance(&mut self, width: usize, theme: &Theme, last: bool) -> Vec<Line> {
        let ctx = Ctx { theme, wait: true };
        let mut out = Vec::new();
        loop {
            if let Some(f) = self.fence.as_mut() {
                let mut used = 0;
                let mut closed = false;
                while let Some(i) = self.tail[used..].find('\n') {
                    let line = &self.tail[used..used + i];
                    used += i + 1;
                    if closes(line, f.ch, f.len) {
                        closed = true;
                        break;
                    }
                    out.extend(f.block.line(line, width, theme));
                }
                if !closed && last {
                    let rest = &self.tail[used..];
                    // pulldown-cmark drops a final unterminated line of at most three spaces
                    // (a closing fence's indentation with the fence still to come); so must we.
                    let blank = rest.len() <= 3 && rest.bytes().all(|b| b == b' ');
                    if !blank && !closes(rest, f.ch, f.len) {
                        out.extend(f.block.line(rest, width, theme));
                    }
                    used = self.tail.len();
                    closed = true;
                }
                self.tail.drain(..used);
                if !closed {
                    break;
                }
                out.push(f.block.footer(theme));
                self.highlighted += f.block.highlighted_bytes();
                self.fence = None;
                self.scanned = 0;
                continue;
            }

            let complete = if last {
                self.tail.len()
            } else {
                self.tail.rfind('\n').map_or(0, |i| i + 1)
            };
            if complete == 0 || (!last && complete == self.scanned) {
                break;
            }
            let scan = segment::scan(&self.tail[..complete], &self.parsed);
            let keep_from = if last { complete } else { scan.keep_from() };
            let mut from = 0;
            for cut in scan.cuts.iter().copied().chain([keep_from]) {
                if cut > keep_from || cut <= from {
                    continue;
                }
                out.extend(self.render_segment(from, cut, width, &ctx));
                from = cut;
            }
            self.tail.drain(..keep_from);
            self.scanned = complete - keep_from;
            if last {
                break;
            }
            // The last block is a fence at column 0: what stands before it (blank lines,
            // definitions) goes out now, then the fence line, then its lines as they complete.
            let fence_at = match (&scan.last_fence, scan.last_start) {
                (Some(_), Some(start)) if start >= keep_from => start - keep_from,
                _ => break,
            };
            let info = scan.last_fence.unwrap_or_default();
            let Some(nl) = self.tail[fence_at..].find('\n') else {
                break;
            };
            let Some((ch, len)) = fence_of(&self.tail[fence_at..fence_at + nl]) else {
                break;
            };
            if fence_at > 0 {
                out.extend(self.render_segment(0, fence_at, width, &ctx));
            }
            self.tail.drain(..=fence_at + nl);
            self.scanned = 0;
            let block = CodeBlock::new(code::lang_of(&info), theme, true);
            if self.emitted {
                out.push(Line::new());
            }
            out.push(block.header(theme));
            self.emitted = true;
            self.fence = Some(OpenFence { ch, len, block });
        }
        out.into_iter().map(|l| fit(l, width)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_fences_follow_commonmark() {
        assert!(closes("```", '`', 3));
        assert!(closes("   ````  ", '`', 3));
        assert!(!closes("    ```", '`', 3));
        assert!(!closes("``", '`', 3));
        assert!(!closes("``` x", '`', 3));
        assert!(!closes("~~~", '`', 3));
        assert!(closes("~~~~  ", '~', 4));
        assert!(!closes("~~~~\t", '~', 4));
    }
}
