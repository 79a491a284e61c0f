//! Soft wrap of the editor's logical lines into screen rows, and the mapping between a byte
//! cursor and a (row, column) cell. Rendering and Up/Down both use it, so the cursor moves
//! over the rows a person sees. Unlike [`crate::modes::interactive::text::wrap`], no
//! character is dropped at a break (every byte of the text is on exactly one row), which is
//! what makes the cursor mapping exact.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// A tab is shown as this many spaces (the terminal's own tab stops would break the layout),
/// fewer on a terminal narrower than that.
pub const TAB_WIDTH: usize = 4;

pub fn tab_cells(width: usize) -> usize {
    TAB_WIDTH.min(width.max(1))
}

/// Terminal cells of one grapheme as the editor draws it at `width`.
pub fn cell_width(g: &str, width: usize) -> usize {
    if g == "\t" {
        tab_cells(width)
    } else {
        g.width()
    }
}

pub fn str_width(s: &str, width: usize) -> usize {
    s.graphemes(true).map(|g| cell_width(g, width)).sum()
}

/// One screen row: bytes `start..end` of logical line `line`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub line: usize,
    pub start: usize,
    pub end: usize,
}

/// The rows of `lines` at `width` cells. Lines break after the last space that fits, inside a
/// word only when the word alone is too wide. When the cursor sits at the end of a row that
/// fills the width, an empty row follows for it, so it is never drawn off the edge.
pub fn rows(lines: &[String], width: usize, cursor: (usize, usize)) -> Vec<Row> {
    let width = width.max(1);
    let mut out = Vec::new();
    for (li, line) in lines.iter().enumerate() {
        let first = out.len();
        wrap_line(li, line, width, &mut out);
        if cursor == (li, line.len()) {
            let last = out.last().copied().filter(|_| out.len() > first);
            if let Some(r) = last {
                if str_width(&line[r.start..r.end], width) >= width {
                    out.push(Row {
                        line: li,
                        start: line.len(),
                        end: line.len(),
                    });
                }
            }
        }
    }
    out
}

fn wrap_line(li: usize, line: &str, width: usize, out: &mut Vec<Row>) {
    let gs: Vec<(usize, &str)> = line.grapheme_indices(true).collect();
    let mut start = 0; // index into gs
    let mut used = 0;
    // Index just after the last space in the current row.
    let mut after_space: Option<usize> = None;
    let mut i = 0;
    while i < gs.len() {
        let w = cell_width(gs[i].1, width);
        if used + w > width && i > start {
            let cut = match after_space {
                Some(s) if s > start => s,
                _ => i,
            };
            out.push(Row {
                line: li,
                start: gs[start].0,
                end: gs[cut].0,
            });
            start = cut;
            used = gs[start..i].iter().map(|g| cell_width(g.1, width)).sum();
            after_space = None;
            continue;
        }
        used += w;
        if gs[i].1 == " " {
            after_space = Some(i + 1);
        }
        i += 1;
    }
    out.push(Row {
        line: li,
        start: gs.get(start).map_or(line.len(), |g| g.0),
        end: line.len(),
    });
}

/// The row index and cell column of `cursor` in `rows` laid out at `width`.
pub fn locate(
    rows: &[Row],
    lines: &[String],
    cursor: (usize, usize),
    width: usize,
) -> (usize, usize) {
    let (line, col) = cursor;
    let mut found = 0;
    for (i, r) in rows.iter().enumerate() {
        if r.line != line {
            continue;
        }
        found = i;
        if col < r.end {
            break;
        }
    }
    let r = rows.get(found).copied();
    let text = lines.get(line).map_or("", String::as_str);
    let cells = r.map_or(0, |r| {
        str_width(&text[r.start..col.clamp(r.start, text.len())], width)
    });
    (found, cells)
}

/// The byte position in row `row` closest to cell column `goal` (never past the row's last
/// grapheme unless the row ends its line, since that position is drawn on the next row).
pub fn position_at(
    rows: &[Row],
    lines: &[String],
    row: usize,
    goal: usize,
    width: usize,
) -> (usize, usize) {
    let Some(r) = rows.get(row).copied() else {
        return (0, 0);
    };
    let text = &lines[r.line];
    let ends_line = rows.get(row + 1).is_none_or(|n| n.line != r.line);
    let mut used = 0;
    let mut pos = r.start;
    for (i, g) in text[r.start..r.end].grapheme_indices(true) {
        let w = cell_width(g, width);
        let next = r.start + i + g.len();
        if used + w > goal || (next == r.end && !ends_line) {
            break;
        }
        used += w;
        pos = next;
    }
    (r.line, pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[String], rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| lines[r.line][r.start..r.end].to_string())
            .collect()
    }

    fn ls(text: &str) -> Vec<String> {
        text.split('\n').map(str::to_string).collect()
    }

    #[test]
    fn wraps_at_spaces_keeping_every_character() {
        let lines = ls("hello brave new world");
        let rows = rows(&lines, 11, (0, 0));
        assert_eq!(texts(&lines, &rows), ["hello ", "brave new ", "world"]);
    }

    #[test]
    fn a_word_wider_than_the_row_is_split() {
        let lines = ls("abcdefghij");
        assert_eq!(
            texts(&lines, &rows(&lines, 4, (0, 0))),
            ["abcd", "efgh", "ij"]
        );
    }

    #[test]
    fn wide_characters_take_two_cells() {
        let lines = ls("日本語のテキスト");
        let rs = rows(&lines, 6, (0, 0));
        assert_eq!(texts(&lines, &rs), ["日本語", "のテキ", "スト"]);
        // Cursor before "の" is at the start of the second row.
        assert_eq!(locate(&rs, &lines, (0, 9), 6), (1, 0));
        assert_eq!(locate(&rs, &lines, (0, 12), 6), (1, 2));
    }

    #[test]
    fn a_cursor_after_a_full_row_gets_a_row_of_its_own() {
        let lines = ls("abcd");
        let rs = rows(&lines, 4, (0, 4));
        assert_eq!(texts(&lines, &rs), ["abcd", ""]);
        assert_eq!(locate(&rs, &lines, (0, 4), 4), (1, 0));
        let rs = rows(&lines, 4, (0, 2));
        assert_eq!(rs.len(), 1, "no extra row when the cursor is elsewhere");
    }

    #[test]
    fn empty_lines_are_rows_too() {
        let lines = ls("a\n\nb");
        let rs = rows(&lines, 10, (1, 0));
        assert_eq!(texts(&lines, &rs), ["a", "", "b"]);
        assert_eq!(locate(&rs, &lines, (1, 0), 10), (1, 0));
        assert_eq!(locate(&rs, &lines, (2, 1), 10), (2, 1));
    }

    #[test]
    fn tabs_count_as_four_cells_or_the_whole_row_when_narrower() {
        let lines = ls("\tx");
        let rs = rows(&lines, 80, (0, 2));
        assert_eq!(locate(&rs, &lines, (0, 2), 80), (0, 5));
        let rs = rows(&lines, 2, (0, 1));
        assert_eq!(texts(&lines, &rs), ["\t", "x"]);
        assert_eq!(locate(&rs, &lines, (0, 1), 2), (1, 0));
    }

    #[test]
    fn position_at_keeps_the_goal_column_and_stays_on_the_row() {
        let lines = ls("hello brave new world\nab");
        let rs = rows(&lines, 11, (0, 0));
        // Row 1 is "brave new ": column 3 is after "bra".
        assert_eq!(position_at(&rs, &lines, 1, 3, 11), (0, 9));
        // Past the end of a wrapped row: the last position still drawn on that row.
        assert_eq!(position_at(&rs, &lines, 0, 50, 11), (0, 5));
        // Past the end of a line's last row: the end of the line.
        assert_eq!(position_at(&rs, &lines, 3, 50, 11), (1, 2));
    }

    #[test]
    fn position_at_does_not_split_a_wide_character() {
        let lines = ls("日本");
        let rs = rows(&lines, 80, (0, 0));
        assert_eq!(position_at(&rs, &lines, 0, 1, 80), (0, 0));
        assert_eq!(position_at(&rs, &lines, 0, 2, 80), (0, 3));
    }

    #[test]
    fn zero_width_still_makes_progress() {
        let lines = ls("日本");
        let rs = rows(&lines, 0, (0, 0));
        assert_eq!(texts(&lines, &rs), ["日", "本"]);
    }
}
