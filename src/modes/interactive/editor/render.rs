//! Drawing the editor as styled lines: the prompt box (a border above and below, at most
//! [`MAX_ROWS`] rows of soft-wrapped text scrolled to keep the cursor in view, with "↑ n more"
//! in the border when rows are hidden), the cursor's cell inside it, and the completion popup
//! (at most [`MAX_POPUP_ITEMS`] items, the selected one highlighted, descriptions dimmed and
//! cut to the width). Nothing here touches the terminal: the screen draws the lines and puts
//! the cursor where the view says.

use std::cell::Cell;
use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

use super::buffer::Buffer;
use super::completion::{Popup, PopupKind, PopupNote};
use super::files::MAX_FILES;
use unicode_width::UnicodeWidthStr;

use super::layout::{self, tab_cells};
use crate::modes::interactive::text::{Line, Style};
use crate::modes::interactive::theme::Theme;

/// Text rows the box shows at most; longer content scrolls inside it.
pub const MAX_ROWS: usize = 10;
/// Items the popup shows at most; the list scrolls to keep the selection visible.
pub const MAX_POPUP_ITEMS: usize = 8;

/// What the screen draws for the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorView {
    /// The box: a border line, the text rows, a border line.
    pub lines: Vec<Line>,
    /// The cursor as (index into `lines`, column in terminal cells).
    pub cursor: (usize, usize),
    /// The completion list, empty when none is open. The screen puts it above or below the
    /// box as space allows.
    pub popup: Vec<Line>,
}

fn border(width: usize, label: Option<String>, theme: &Theme) -> Line {
    let mut line = Line::new();
    match label {
        Some(label) => {
            let head = format!("── {label} ");
            let fill = width.saturating_sub(head.width());
            line.push(head, theme.editor_border);
            line.push("─".repeat(fill), theme.editor_border);
            line.truncated(width)
        }
        None => {
            line.push("─".repeat(width), theme.editor_border);
            line
        }
    }
}

/// One text row: tabs drawn as spaces, atoms (paste markers) in the accent style.
fn text_row(
    text: &str,
    offset: usize,
    atoms: &[Range<usize>],
    theme: &Theme,
    width: usize,
) -> Line {
    let mut line = Line::new();
    for (i, g) in text.grapheme_indices(true) {
        let at = offset + i;
        let style = if atoms.iter().any(|r| r.start <= at && at < r.end) {
            theme.accent
        } else {
            theme.text
        };
        if g == "\t" {
            line.push(" ".repeat(tab_cells(width)), style);
        } else {
            line.push(g, style);
        }
    }
    line
}

/// The box and the cursor in it. `scroll` is the first row shown, kept between renders so
/// the view only moves when the cursor would leave it.
pub fn render_box(
    buf: &Buffer,
    placeholder: &str,
    width: usize,
    theme: &Theme,
    scroll: &Cell<usize>,
) -> (Vec<Line>, (usize, usize)) {
    let width = width.max(1);
    if buf.is_empty() {
        scroll.set(0);
        let hint = Line::styled(placeholder, theme.muted).truncated(width);
        let lines = vec![border(width, None, theme), hint, border(width, None, theme)];
        return (lines, (1, 0));
    }
    let lines = buf.lines();
    let rows = layout::rows(lines, width, buf.cursor());
    let (cur_row, cur_col) = layout::locate(&rows, lines, buf.cursor(), width);
    let height = rows.len().min(MAX_ROWS);
    let mut top = scroll.get().min(rows.len() - height);
    if cur_row < top {
        top = cur_row;
    } else if cur_row >= top + height {
        top = cur_row + 1 - height;
    }
    scroll.set(top);
    let hidden_below = rows.len() - top - height;
    let mut out = Vec::with_capacity(height + 2);
    out.push(border(
        width,
        (top > 0).then(|| format!("↑ {top} more")),
        theme,
    ));
    let mut atoms_of: Option<(usize, Vec<Range<usize>>)> = None;
    for r in &rows[top..top + height] {
        if atoms_of.as_ref().is_none_or(|(l, _)| *l != r.line) {
            atoms_of = Some((r.line, buf.atom_ranges(r.line)));
        }
        let atoms = atoms_of.as_ref().map_or(&[][..], |(_, a)| a.as_slice());
        out.push(text_row(
            &lines[r.line][r.start..r.end],
            r.start,
            atoms,
            theme,
            width,
        ));
    }
    out.push(border(
        width,
        (hidden_below > 0).then(|| format!("↓ {hidden_below} more")),
        theme,
    ));
    (out, (1 + cur_row - top, cur_col))
}

/// Text from a completion source (a hook) as it may reach the screen: control characters
/// (escape sequences, line breaks, tabs) become spaces.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `text` cut to `width` cells from the left, keeping its end (a path's file name) visible.
fn cut_left(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let budget = width.saturating_sub(1);
    let mut kept = Vec::new();
    let mut used = 0;
    for g in text.graphemes(true).rev() {
        let w = g.width();
        if used + w > budget {
            break;
        }
        used += w;
        kept.push(g);
    }
    kept.reverse();
    format!("…{}", kept.concat())
}

fn note_text(note: PopupNote, kind: PopupKind) -> String {
    match (note, kind) {
        (PopupNote::Searching, _) => "searching files…".into(),
        (PopupNote::NoMatches, PopupKind::File) => "no matching files".into(),
        (PopupNote::NoMatches, _) => "no matches".into(),
        (PopupNote::Truncated, _) => format!("only the first {MAX_FILES} files are listed"),
    }
}

/// The completion list: `› ` marks the selection, labels in a column, descriptions dimmed.
pub fn render_popup(popup: &Popup, width: usize, theme: &Theme) -> Vec<Line> {
    let width = width.max(1);
    let n = popup.items.len();
    let start = (popup.selected + 1).saturating_sub(MAX_POPUP_ITEMS);
    let shown = &popup.items[start..n.min(start + MAX_POPUP_ITEMS)];
    // Labels get a third of the width back for descriptions only when there are some.
    let has_desc = shown
        .iter()
        .any(|i| i.description.as_deref().is_some_and(|d| !d.is_empty()));
    let room = width.saturating_sub(2);
    let label_cap = if has_desc {
        (room * 2 / 3).max(8)
    } else {
        room
    };
    let label_col = shown
        .iter()
        .map(|i| printable(&i.label).width())
        .max()
        .unwrap_or(0)
        .min(label_cap);
    let mut out = Vec::new();
    for (k, item) in shown.iter().enumerate() {
        let selected = start + k == popup.selected;
        let mut line = Line::new();
        let label = cut_left(&printable(&item.label), label_col);
        if selected {
            line.push("› ", theme.selected);
            line.push(label.clone(), theme.selected);
        } else {
            line.push("  ", Style::plain());
            line.push(label.clone(), theme.text);
        }
        if let Some(desc) = item.description.as_deref().filter(|d| !d.is_empty()) {
            let pad = label_col - label.width() + 2;
            line.push(" ".repeat(pad), Style::plain());
            // Descriptions are one line; a hook's multi-line text must not break the list.
            let flat = printable(desc)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            line.push(flat, theme.muted);
        }
        out.push(line.truncated(width));
    }
    let mut footer = Vec::new();
    if n > MAX_POPUP_ITEMS {
        footer.push(format!("{}/{}", popup.selected + 1, n));
    }
    if let Some(note) = popup.note {
        footer.push(note_text(note, popup.kind));
    }
    if !footer.is_empty() {
        out.push(Line::styled(format!("  {}", footer.join(" · ")), theme.muted).truncated(width));
    }
    out
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
