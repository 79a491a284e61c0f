//! Fitting a dialog into the window. A dialog is its subject — the title rows, then the
//! message rows (what an approval asks about) — and its controls (the answer row, options,
//! the text being typed). The live region keeps only its bottom rows when it is taller than
//! the window, so a dialog that did not fit would lose its title and the top of what it asks
//! about without a trace. Here the controls and the first title rows always stay in view, and
//! the rest of the subject scrolls in the rows left, with a row saying which rows are shown.
//! Pure: the dialog keeps the scroll offset, this says what is shown.

/// What of a subject of `head + body` rows is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    /// Title rows always shown (the top of the subject).
    pub fixed: usize,
    /// The first scrolled row shown (an index into the rows after `fixed`).
    pub top: usize,
    /// How many scrolled rows are shown.
    pub shown: usize,
    /// How many rows scroll (`head + body - fixed`).
    pub total: usize,
    /// Whether the subject scrolls (then a row of its own says where it is).
    pub scrolls: bool,
}

impl Fit {
    /// The largest useful scroll offset.
    pub fn max_top(&self) -> usize {
        self.total.saturating_sub(self.shown)
    }
}

/// How a subject of `head` title rows and `body` message rows is shown in `room` rows,
/// scrolled to `scroll` (clamped). When it does not fit, one row goes to the scroll
/// indicator, at most a third of the rest (at least one row) to the title, and the rest
/// scrolls; at least one scrolled row is always shown, even when `room` is smaller.
pub fn fit(head: usize, body: usize, room: usize, scroll: usize) -> Fit {
    let all = head + body;
    if all <= room {
        return Fit {
            fixed: head,
            top: 0,
            shown: body,
            total: body,
            scrolls: false,
        };
    }
    let rows = room.saturating_sub(1).max(1);
    let fixed = head.min((rows / 3).max(1)).min(rows.saturating_sub(1));
    let total = all - fixed;
    let shown = rows.saturating_sub(fixed).max(1).min(total);
    let top = scroll.min(total - shown);
    Fit {
        fixed,
        top,
        shown,
        total,
        scrolls: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subject_that_fits_is_shown_whole() {
        let f = fit(1, 3, 10, 5);
        assert_eq!((f.fixed, f.top, f.shown, f.scrolls), (1, 0, 3, false));
    }

    #[test]
    fn a_tall_subject_keeps_its_title_and_scrolls_the_rest() {
        // 20 rows of room: 1 indicator, 1 title row, 18 of the 200 message rows.
        let f = fit(1, 200, 20, 0);
        assert_eq!((f.fixed, f.top, f.shown, f.total), (1, 0, 18, 200));
        assert!(f.scrolls);
        let end = fit(1, 200, 20, usize::MAX);
        assert_eq!(end.top, 200 - 18);
        assert_eq!(end.top + end.shown, end.total, "the last row is reachable");
    }

    #[test]
    fn a_long_title_scrolls_too_past_a_third_of_the_room() {
        let f = fit(30, 5, 13, 0);
        assert_eq!(f.fixed, 4);
        assert_eq!(f.total, 31);
        assert_eq!(f.shown, 8);
    }

    #[test]
    fn a_tiny_window_still_shows_a_row() {
        let f = fit(2, 50, 0, 3);
        assert_eq!(f.shown, 1);
        assert_eq!(f.top, 3);
    }
}
