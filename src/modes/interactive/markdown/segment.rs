//! Cutting markdown into independently rendered segments, one top-level block each.
//!
//! CommonMark block parsing goes forward line by line: once a later top-level block has begun
//! on a complete line, no text appended after it can change the blocks before it. So a block
//! followed by another is final, and a segment — from the end of one top-level block to the
//! end of the next, so it holds the blank lines and link definitions in front of its block —
//! renders the same alone as in the whole document. Whole renders and streamed renders cut at
//! the same lines and render each segment the same way, which is why they agree.
//!
//! A link reference definition applies to links anywhere in a document; here it applies to
//! its own segment and the segments after it (passed in through pulldown-cmark's broken-link
//! callback), never to those before it, which may already be in the terminal's scrollback.
//! Definitions are shown as written so their addresses are not lost either way.

use std::cell::Cell;
use std::collections::HashMap;

use pulldown_cmark::{BrokenLink, CodeBlockKind, CowStr, Event, Options, Parser, Tag};

use super::ast::Builder;
use super::render::{self, Ctx};
use crate::modes::interactive::text::{wrap, Line};

/// Link reference definitions seen so far: normalized label → (destination, title).
pub(super) type Defs = HashMap<String, (String, String)>;

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// CommonMark matches labels case-insensitively with runs of whitespace collapsed.
fn normalize_label(label: &str) -> String {
    label
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The start of the line after the one holding the byte before `end`.
fn line_end(text: &str, end: usize) -> usize {
    if end == 0 || text.as_bytes().get(end - 1) == Some(&b'\n') {
        return end;
    }
    text[end..].find('\n').map_or(text.len(), |i| end + i + 1)
}

/// Where a text may be cut, from one parse of it.
#[derive(Debug, Default)]
pub(super) struct Scan {
    /// The line after each top-level block, ascending.
    pub cuts: Vec<usize>,
    /// The line start of the last top-level block.
    pub last_start: Option<usize>,
    /// The last top-level block is a fenced code block whose fence is at column 0: its info.
    pub last_fence: Option<String>,
}

impl Scan {
    /// Everything before this offset is final when more text may follow: the end of the
    /// second-to-last block.
    pub fn keep_from(&self) -> usize {
        match self.cuts.len() {
            0 | 1 => 0,
            n => self.cuts[n - 2],
        }
    }
}

pub(super) fn scan(text: &str, parsed: &Cell<u64>) -> Scan {
    parsed.set(parsed.get() + text.len() as u64);
    let mut depth = 0usize;
    let mut out = Scan::default();
    // A top-level list's range runs on over link definitions that follow it, so the list's
    // own end is its last item's: (the index of its cut, the end of its items so far).
    let mut list: Option<(usize, usize)> = None;
    for (ev, range) in Parser::new_ext(text, options()).into_offset_iter() {
        let top = depth == 0;
        let fence = match &ev {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => Some(info.to_string()),
            _ => None,
        };
        match ev {
            Event::Start(_) => depth += 1,
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                match (&mut list, depth) {
                    (Some((_, items)), 1) => *items = range.end,
                    (Some((at, items)), 0) => {
                        let prev = at.checked_sub(1).map_or(0, |p| out.cuts[p]);
                        out.cuts[*at] = line_end(text, *items).max(prev);
                        list = None;
                    }
                    _ => {}
                }
                continue;
            }
            _ => {}
        }
        if !top {
            continue;
        }
        let start = line_start(text, range.start);
        let prev = out.cuts.last().copied().unwrap_or(0);
        let end = line_end(text, range.end).max(prev);
        if end > prev || out.cuts.is_empty() {
            out.cuts.push(end);
            if matches!(ev, Event::Start(Tag::List(_))) {
                list = Some((out.cuts.len() - 1, range.start));
            }
        }
        out.last_start = Some(start.max(prev));
        out.last_fence = if start == range.start && start >= prev {
            fence
        } else {
            None
        };
    }
    out
}

/// Render one segment. `emitted` says whether anything was rendered before it (a blank line
/// separates blocks) and is updated. Returns the lines and the definitions the segment makes.
pub(super) fn render(
    seg: &str,
    defs: &Defs,
    width: usize,
    ctx: &Ctx,
    parsed: &Cell<u64>,
    emitted: &mut bool,
) -> (Vec<Line>, Vec<(String, String, String)>) {
    parsed.set(parsed.get() + seg.len() as u64);
    let callback = |link: BrokenLink<'_>| {
        defs.get(&normalize_label(&link.reference))
            .map(|(dest, title)| (CowStr::from(dest.clone()), CowStr::from(title.clone())))
    };
    let mut iter =
        Parser::new_with_broken_link_callback(seg, options(), Some(callback)).into_offset_iter();
    let mut builder = Builder::new(ctx.theme);
    let mut depth = 0usize;
    let mut block_starts = Vec::new();
    for (ev, range) in iter.by_ref() {
        if depth == 0 && !matches!(ev, Event::End(_)) {
            block_starts.push(range.start);
        }
        match &ev {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        builder.event(ev);
    }
    let mut new_defs: Vec<(usize, String, String, String)> = iter
        .reference_definitions()
        .iter()
        .map(|(label, d)| {
            let title = d.title.as_deref().unwrap_or("").to_string();
            (d.span.start, label.to_string(), d.dest.to_string(), title)
        })
        .collect();
    drop(iter);
    new_defs.sort_by_key(|d| d.0);
    let blocks = builder.finish();

    // Blocks and groups of definitions, in the order they were written.
    let mut out = Vec::new();
    let mut emit = |lines: Vec<Line>, out: &mut Vec<Line>| {
        if lines.is_empty() {
            return;
        }
        if *emitted {
            out.push(Line::new());
        }
        out.extend(lines);
        *emitted = true;
    };
    let mut d = 0;
    for (k, b) in blocks.iter().enumerate() {
        let at = block_starts.get(k).copied().unwrap_or(usize::MAX);
        let mut group = Vec::new();
        while d < new_defs.len() && new_defs[d].0 < at {
            group.extend(def_lines(&new_defs[d], width, ctx));
            d += 1;
        }
        emit(group, &mut out);
        emit(render::block(b, width, ctx, 0), &mut out);
    }
    let rest: Vec<Line> = new_defs[d..]
        .iter()
        .flat_map(|def| def_lines(def, width, ctx))
        .collect();
    emit(rest, &mut out);
    let learned = new_defs
        .into_iter()
        .map(|(_, label, dest, title)| (normalize_label(&label), dest, title))
        .collect();
    (out, learned)
}

fn def_lines(def: &(usize, String, String, String), width: usize, ctx: &Ctx) -> Vec<Line> {
    let (_, label, dest, title) = def;
    let mut text = format!("[{label}]: {dest}");
    if !title.is_empty() {
        text.push_str(&format!(" \"{title}\""));
    }
    wrap(
        &Line::styled(super::sanitize(&text), ctx.theme.muted),
        width,
        &Line::plain("  "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuts(text: &str) -> Vec<usize> {
        scan(text, &Cell::new(0)).cuts
    }

    #[test]
    fn cuts_fall_on_the_lines_after_top_level_blocks() {
        let t = "# Title\npara one\nstill one\n\n- a\n- b\n\n```\ncode\n```\n";
        assert_eq!(cuts(t), [8, 27, 37, 50]);
        assert_eq!(&t[27..28], "\n");
        let s = scan(t, &Cell::new(0));
        assert_eq!(s.keep_from(), 37);
        assert_eq!(s.last_start, Some(37));
    }

    #[test]
    fn the_last_block_is_reported_as_a_fence_only_at_column_zero() {
        let s = scan("para\n\n```rust\nfn x\n", &Cell::new(0));
        assert_eq!(s.last_fence.as_deref(), Some("rust"));
        assert_eq!(s.last_start, Some(6));
        let s = scan("para\n\n  ```rust\nfn x\n", &Cell::new(0));
        assert_eq!(s.last_fence, None);
    }
}
