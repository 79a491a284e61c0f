//! Lines as terminal bytes: SGR styles per span, runs of blank cells skipped with a cursor
//! movement rather than written as spaces, and the smallest rewrite of one row into another
//! (only the columns that changed). The differential screen is built on these, so a streamed
//! answer costs the terminal about what it adds, not a repaint per delta.

use std::fmt::Write as _;

use crossterm::style::{Attribute, Color, SetAttribute, SetBackgroundColor, SetForegroundColor};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use super::text::{Line, Style};

/// Blank cells in a row, from this many on, are skipped with `CSI n C` (on a cleared row).
const SKIP_FROM: usize = 4;

/// One grapheme with its style and width in cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cell<'a> {
    g: &'a str,
    style: Style,
    width: usize,
}

fn cells(line: &Line) -> Vec<Cell<'_>> {
    line.spans
        .iter()
        .flat_map(|s| {
            s.text().graphemes(true).map(move |g| Cell {
                g,
                style: s.style,
                width: g.width(),
            })
        })
        .collect()
}

/// A space that looks like nothing (no background, no line through or under it), so a
/// cleared cell is the same picture.
fn invisible(c: &Cell) -> bool {
    c.g == " " && c.style.bg.is_none() && !c.style.reverse && !c.style.underline && !c.style.strike
}

/// `cells` written from the cursor. With `cleared`, the cells ahead are known to be blank,
/// so blank runs are skipped and trailing blanks are not written at all.
fn write_cells(out: &mut String, cells: &[Cell], cleared: bool) {
    let mut current = Style::plain();
    let mut i = 0;
    while i < cells.len() {
        if cleared && invisible(&cells[i]) {
            let run = cells[i..].iter().take_while(|c| invisible(c)).count();
            if i + run == cells.len() {
                break;
            }
            if run >= SKIP_FROM {
                let _ = write!(out, "\x1b[{run}C");
                i += run;
                continue;
            }
        }
        let c = cells[i];
        // A space looks the same in any foreground colour: no switch for it alone.
        let same_look = invisible(&c)
            && current.bg.is_none()
            && !current.reverse
            && !current.underline
            && !current.strike;
        if c.style != current && !same_look {
            switch_style(out, current, c.style);
            current = c.style;
        }
        out.push_str(c.g);
        i += 1;
    }
    if current != Style::plain() {
        out.push_str("\x1b[0m");
    }
}

/// One line as text with SGR sequences, for a row that was just cleared (`EL`).
pub fn encode(line: &Line) -> String {
    let mut s = String::new();
    write_cells(&mut s, &cells(line), true);
    s
}

/// The bytes that turn row `old` into row `new`, the cursor being at column 0 of that row:
/// nothing when they are equal; a changed middle of the same width written over in place;
/// otherwise the row from the first changed column, after clearing the rest of it.
pub fn patch(old: &Line, new: &Line) -> String {
    let (a, b) = (cells(old), cells(new));
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if prefix == a.len() && prefix == b.len() {
        return String::new();
    }
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let col: usize = b[..prefix].iter().map(|c| c.width).sum();
    let mut out = String::new();
    if col > 0 {
        let _ = write!(out, "\x1b[{col}C");
    }
    let old_mid: usize = a[prefix..a.len() - suffix].iter().map(|c| c.width).sum();
    let new_mid = &b[prefix..b.len() - suffix];
    let new_mid_w: usize = new_mid.iter().map(|c| c.width).sum();
    if old_mid == new_mid_w && suffix > 0 {
        write_cells(&mut out, new_mid, false);
    } else {
        out.push_str("\x1b[K");
        write_cells(&mut out, &b[prefix..], true);
    }
    out
}

/// From `from` to `to` in the fewest bytes: only what is added or changed when `to` keeps
/// every attribute `from` has; otherwise a reset first. (Every write ends with a reset, so a
/// row starts plain.)
fn switch_style(out: &mut String, from: Style, to: Style) {
    let keeps = |a: bool, b: bool| !a || b;
    let additive = keeps(from.bold, to.bold)
        && keeps(from.dim, to.dim)
        && keeps(from.italic, to.italic)
        && keeps(from.underline, to.underline)
        && keeps(from.strike, to.strike)
        && keeps(from.reverse, to.reverse)
        && (from.fg.is_none() || to.fg.is_some())
        && (from.bg.is_none() || to.bg.is_some());
    if !additive {
        out.push_str("\x1b[0m");
        push_style(out, to);
        return;
    }
    let added = Style {
        fg: if to.fg != from.fg { to.fg } else { None },
        bg: if to.bg != from.bg { to.bg } else { None },
        bold: to.bold && !from.bold,
        dim: to.dim && !from.dim,
        italic: to.italic && !from.italic,
        underline: to.underline && !from.underline,
        strike: to.strike && !from.strike,
        reverse: to.reverse && !from.reverse,
    };
    push_style(out, added);
}

/// Whether the terminal says it shows 24-bit colour (`COLORTERM`); otherwise RGB colours are
/// sent as the nearest of the 256-colour palette, which every colour terminal has.
fn truecolor() -> bool {
    static TRUE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRUE.get_or_init(|| std::env::var("COLORTERM").is_ok_and(|v| v == "truecolor" || v == "24bit"))
}

/// An RGB colour as the terminal can show it (see [`truecolor`]).
fn to_256(c: Color) -> Color {
    if truecolor() {
        c
    } else {
        nearest_256(c)
    }
}

/// The nearest xterm 256-palette colour to an RGB one (the 6×6×6 cube or the grey ramp).
fn nearest_256(c: Color) -> Color {
    let Color::Rgb { r, g, b } = c else {
        return c;
    };
    let level = |v: u8| -> u8 {
        if v < 48 {
            0
        } else if v < 115 {
            1
        } else {
            (v - 35) / 40
        }
    };
    let (lr, lg, lb) = (level(r), level(g), level(b));
    let value = |l: u8| if l == 0 { 0 } else { 55 + 40 * l as i32 };
    let cube = 16 + 36 * lr + 6 * lg + lb;
    let dist = |x: i32, y: i32, z: i32| {
        (x - r as i32).pow(2) + (y - g as i32).pow(2) + (z - b as i32).pow(2)
    };
    let cube_d = dist(value(lr), value(lg), value(lb));
    let avg = (r as i32 + g as i32 + b as i32) / 3;
    let grey_i = ((avg - 8).max(0) / 10).min(23);
    let grey_v = 8 + 10 * grey_i;
    let grey_d = dist(grey_v, grey_v, grey_v);
    if grey_d < cube_d {
        Color::AnsiValue(232 + grey_i as u8)
    } else {
        Color::AnsiValue(cube)
    }
}

fn push_style(s: &mut String, st: Style) {
    let attrs = [
        (st.bold, Attribute::Bold),
        (st.dim, Attribute::Dim),
        (st.italic, Attribute::Italic),
        (st.underline, Attribute::Underlined),
        (st.strike, Attribute::CrossedOut),
        (st.reverse, Attribute::Reverse),
    ];
    for (on, a) in attrs {
        if on {
            let _ = write!(s, "{}", SetAttribute(a));
        }
    }
    if let Some(c) = st.fg {
        let _ = write!(s, "{}", SetForegroundColor(to_256(c)));
    }
    if let Some(c) = st.bg {
        let _ = write!(s, "{}", SetBackgroundColor(to_256(c)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::text::Span;
    use crossterm::style::Color;

    fn render(bytes: &str, w: u16) -> String {
        let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap();
        let mut p = vt100::Parser::new(nz(2), nz(w), 0);
        p.process(bytes.as_bytes());
        let row = p.screen().rows(0, w).next().unwrap_or_default();
        row
    }

    #[test]
    fn blank_runs_are_skipped_and_trailing_blanks_not_written() {
        let l = Line::plain(format!("left{}right   ", " ".repeat(20)));
        let s = encode(&l);
        assert_eq!(s, "left\x1b[20Cright");
        assert_eq!(
            render(&format!("\x1b[K{s}"), 40).trim_end(),
            l.text().trim_end()
        );
    }

    #[test]
    fn an_appended_suffix_writes_only_the_new_text() {
        let old = Line::plain("streaming text");
        let new = Line::plain("streaming text grows");
        let p = patch(&old, &new);
        assert_eq!(p, "\x1b[14C\x1b[K grows");
        assert_eq!(
            render(&format!("{}\r{p}", encode(&old)), 40),
            "streaming text grows"
        );
    }

    #[test]
    fn a_changed_glyph_is_written_in_place() {
        let st = Style::plain().fg(Color::Cyan);
        let old = Line::from_spans(vec![Span::new("⠋ Working… 3s", st)]);
        let new = Line::from_spans(vec![Span::new("⠙ Working… 3s", st)]);
        let p = patch(&old, &new);
        assert!(p.len() < 20, "{p:?}");
        assert_eq!(
            render(&format!("{}\r{p}", encode(&old)), 40),
            "⠙ Working… 3s"
        );
    }

    #[test]
    fn a_shorter_row_clears_what_is_left() {
        let old = Line::plain("a long row of text");
        let new = Line::plain("a long");
        let p = patch(&old, &new);
        assert_eq!(render(&format!("{}\r{p}", encode(&old)), 40), "a long");
    }

    #[test]
    fn a_colour_change_alone_sets_only_the_colour_and_spaces_do_not_switch() {
        let a = Style::plain().fg(Color::Red);
        let b = Style::plain().fg(Color::Green);
        let l = Line::from_spans(vec![
            Span::new("x", a),
            Span::new(" ", b),
            Span::new("y", b),
        ]);
        let s = encode(&l);
        assert_eq!(s.matches("\x1b[0m").count(), 1, "{s:?}");
        assert_eq!(render(&format!("\x1b[K{s}"), 10), "x y");
    }

    #[test]
    fn rgb_becomes_the_nearest_palette_colour() {
        assert_eq!(
            nearest_256(Color::Rgb { r: 255, g: 0, b: 0 }),
            Color::AnsiValue(196)
        );
        assert_eq!(
            nearest_256(Color::Rgb {
                r: 128,
                g: 128,
                b: 128
            }),
            Color::AnsiValue(244)
        );
    }

    #[test]
    fn equal_rows_cost_nothing() {
        let l = Line::plain("same");
        assert_eq!(patch(&l, &l), "");
    }

    #[test]
    fn wide_characters_keep_their_columns() {
        let old = Line::plain("日本語 abc");
        let new = Line::plain("日本語 abd");
        let p = patch(&old, &new);
        assert_eq!(render(&format!("{}\r{p}", encode(&old)), 40), "日本語 abd");
    }
}
