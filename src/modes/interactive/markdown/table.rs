//! Table layout: columns as wide as their widest cell when the table fits, otherwise the
//! width shared out so narrow columns keep their natural width and wide ones wrap inside their
//! cells; a table too narrow for even one column per cell is cut with `…`. Columns are
//! separated by a bar, the header row is bold and underlined by a rule, cells keep their
//! alignment.

use pulldown_cmark::Alignment;

use super::ast::Table;
use crate::modes::interactive::text::{wrap, Line, Style};
use crate::modes::interactive::theme::Theme;

const SEP: &str = " │ ";
const SEP_W: usize = 3;

/// Column widths for natural widths `natural` in `avail` columns (separators excluded): each
/// column gets at most its natural width, and the room is shared so no column is squeezed
/// below an equal share while a wider one keeps more.
pub(super) fn fit_columns(natural: &[usize], avail: usize) -> Vec<usize> {
    let n = natural.len();
    if natural.iter().sum::<usize>() <= avail {
        return natural.to_vec();
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| natural[i]);
    let mut widths = vec![0; n];
    let mut remaining = avail;
    for (k, &i) in order.iter().enumerate() {
        let share = remaining / (n - k);
        let w = natural[i].min(share).max(1);
        widths[i] = w;
        remaining = remaining.saturating_sub(w);
    }
    widths
}

/// A cell padded to its column's width; the last column gets no trailing spaces.
fn pad(line: &Line, width: usize, align: Alignment, last: bool) -> Line {
    let gap = width.saturating_sub(line.width());
    let (left, mut right) = match align {
        Alignment::Right => (gap, 0),
        Alignment::Center => (gap / 2, gap - gap / 2),
        Alignment::Left | Alignment::None => (0, gap),
    };
    if last {
        right = 0;
    }
    let mut out = Line::new();
    out.push(" ".repeat(left), Style::plain());
    for s in &line.spans {
        out.push(s.text(), s.style);
    }
    out.push(" ".repeat(right), Style::plain());
    out
}

pub(super) fn render(t: &Table, width: usize, theme: &Theme) -> Vec<Line> {
    let cols = t
        .head
        .len()
        .max(t.rows.iter().map(Vec::len).max().unwrap_or(0));
    if cols == 0 {
        return Vec::new();
    }
    let cell = |row: &[Line], i: usize| row.get(i).cloned().unwrap_or_default();
    let mut natural = vec![1; cols];
    for row in std::iter::once(&t.head).chain(&t.rows) {
        for (i, n) in natural.iter_mut().enumerate() {
            *n = (*n).max(cell(row, i).width());
        }
    }
    let seps = SEP_W * (cols - 1);
    let cut = width < seps + cols;
    let widths = if cut {
        natural.clone()
    } else {
        fit_columns(&natural, width - seps)
    };
    let align = |i: usize| t.aligns.get(i).copied().unwrap_or(Alignment::None);

    let mut out = Vec::new();
    let emit_row = |row: &[Line], header: bool, out: &mut Vec<Line>| {
        let cells: Vec<Vec<Line>> = (0..cols)
            .map(|i| {
                let mut c = cell(row, i);
                if header {
                    c = Line::from_spans(
                        c.spans
                            .into_iter()
                            .map(|mut s| {
                                s.style = s.style.patch(theme.bold);
                                s
                            })
                            .collect(),
                    );
                }
                wrap(&c, widths[i], &Line::new())
                    .into_iter()
                    .map(|l| super::fit(l, widths[i]))
                    .collect()
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for r in 0..height {
            let mut line = Line::new();
            for (i, c) in cells.iter().enumerate() {
                if i > 0 {
                    line.push(SEP, theme.table_border);
                }
                let piece = c.get(r).cloned().unwrap_or_default();
                for s in pad(&piece, widths[i], align(i), i + 1 == cols).spans {
                    line.push(s.text(), s.style);
                }
            }
            out.push(line);
        }
    };
    emit_row(&t.head, true, &mut out);
    let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    out.push(Line::styled(rule.join("─┼─"), theme.table_border));
    for row in &t.rows {
        emit_row(row, false, &mut out);
    }
    if cut {
        out = out.into_iter().map(|l| l.truncated(width)).collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_that_fit_keep_their_natural_width() {
        assert_eq!(fit_columns(&[3, 5], 10), [3, 5]);
    }

    #[test]
    fn narrow_columns_keep_their_width_and_wide_ones_share_the_rest() {
        let w = fit_columns(&[2, 40, 30], 30);
        assert_eq!(w[0], 2);
        assert_eq!(w.iter().sum::<usize>(), 30);
        assert!(w[1] >= w[2]);
    }
}
