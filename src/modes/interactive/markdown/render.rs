//! The block tree laid out at a width: wrapping with hanging indents, list markers, quote bars,
//! rules, and dispatch to the code and table layouts. Pure: the same tree, width and theme give
//! the same lines, which is what lets streamed and whole renders agree.

use unicode_width::UnicodeWidthStr;

use super::ast::{Block, Item};
use super::code::{self, CodeBlock};
use super::table;
use crate::modes::interactive::text::{wrap, Line, Style};
use crate::modes::interactive::theme::Theme;

/// What every block renderer needs besides the width.
pub(super) struct Ctx<'a> {
    pub theme: &'a Theme,
    /// Wait for the syntax definitions (lines for scrollback) or render code plain until they
    /// are loaded (a provisional tail).
    pub wait: bool,
}

const BULLETS: [&str; 3] = ["•", "◦", "▪"];

/// Blocks one after another; a blank line between them unless `tight` (inside a tight list
/// item).
pub(super) fn blocks(
    bs: &[Block],
    width: usize,
    ctx: &Ctx,
    depth: usize,
    tight: bool,
) -> Vec<Line> {
    let mut out = Vec::new();
    for (k, b) in bs.iter().enumerate() {
        if k > 0 && !tight {
            out.push(Line::new());
        }
        out.extend(block(b, width, ctx, depth));
    }
    out
}

pub(super) fn block(b: &Block, width: usize, ctx: &Ctx, depth: usize) -> Vec<Line> {
    let theme = ctx.theme;
    match b {
        Block::Para(lines) => lines
            .iter()
            .flat_map(|l| wrap(l, width, &Line::new()))
            .collect(),
        Block::Heading(level, lines) => heading(*level, lines, width, theme),
        Block::Quote(inner) => {
            let body = blocks(inner, width.saturating_sub(2).max(1), ctx, depth, false);
            body.into_iter()
                .map(|l| {
                    let mut out = Line::new();
                    out.push(
                        if l.spans.is_empty() { "│" } else { "│ " },
                        theme.quote_border,
                    );
                    for s in l.spans {
                        // Plain text in a quote is `mdQuote`, not `text`; roles keep theirs.
                        let mut own = s.style;
                        if own.fg == theme.text.fg {
                            own.fg = None;
                        }
                        out.push(s.text(), theme.quote.patch(own));
                    }
                    out
                })
                .collect()
        }
        Block::List {
            start,
            loose,
            items,
        } => list(*start, *loose, items, width, ctx, depth),
        Block::Code { info, text } => {
            let lang = info.as_deref().and_then(code::lang_of);
            let mut cb = CodeBlock::new(lang, theme, ctx.wait);
            let mut out = vec![cb.header(theme)];
            for line in code::split_lines(text) {
                out.extend(cb.line(line, width, theme));
            }
            out.push(cb.footer(theme));
            out
        }
        Block::Html(text) => code::split_lines(text)
            .flat_map(|l| {
                wrap(
                    &Line::styled(super::sanitize(l), theme.text),
                    width,
                    &Line::new(),
                )
            })
            .collect(),
        Block::Rule => vec![Line::styled("─".repeat(width.max(1)), theme.rule)],
        Block::Table(t) => table::render(t, width, theme),
    }
}

fn heading(level: u8, lines: &[Line], width: usize, theme: &Theme) -> Vec<Line> {
    let marker = format!("{} ", "#".repeat(usize::from(level)));
    let mut style = theme.heading;
    if level == 1 {
        style = style.underline();
    }
    let indent = Line::plain(" ".repeat(marker.len()));
    let mut out = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        let mut line = Line::new();
        line.push(
            if k == 0 {
                marker.clone()
            } else {
                " ".repeat(marker.len())
            },
            theme.heading,
        );
        for s in &l.spans {
            line.push(s.text(), style.patch(s.style));
        }
        out.extend(wrap(&line, width, &indent));
    }
    if out.is_empty() {
        out.push(Line::styled(marker.trim_end(), theme.heading));
    }
    out
}

fn list(
    start: Option<u64>,
    loose: bool,
    items: &[Item],
    width: usize,
    ctx: &Ctx,
    depth: usize,
) -> Vec<Line> {
    let theme = ctx.theme;
    let markers: Vec<String> = match start {
        Some(first) => {
            let nums: Vec<String> = (0..items.len() as u64)
                .map(|k| format!("{}.", first.saturating_add(k)))
                .collect();
            let w = nums.iter().map(|n| n.width()).max().unwrap_or(0);
            nums.into_iter().map(|n| format!("{n:>w$} ")).collect()
        }
        None => vec![format!("{} ", BULLETS[depth % BULLETS.len()]); items.len()],
    };
    let mut out = Vec::new();
    for (k, (item, marker)) in items.iter().zip(markers).enumerate() {
        if k > 0 && loose {
            out.push(Line::new());
        }
        let mut marker = marker;
        if let Some(done) = item.task {
            marker.push_str(if done { "[x] " } else { "[ ] " });
        }
        let mw = marker.width();
        let inner = width.saturating_sub(mw).max(1);
        let body = blocks(&item.blocks, inner, ctx, depth + 1, !loose);
        let pad = " ".repeat(mw);
        if body.is_empty() {
            out.push(Line::styled(marker.trim_end(), theme.list_marker));
            continue;
        }
        for (n, l) in body.into_iter().enumerate() {
            if n == 0 {
                out.push(l.prefixed(&marker, theme.list_marker));
            } else if l.spans.is_empty() {
                out.push(l);
            } else {
                out.push(l.prefixed(&pad, Style::plain()));
            }
        }
    }
    out
}
