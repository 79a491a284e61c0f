//! The differential renderer. The screen has two parts: the **scrollback**, where finished
//! transcript lines are printed once and then belong to the terminal (scroll, search and copy
//! work as in any program's output), and the **live region** below it (streaming tail, tool
//! blocks in progress, status, editor, footer), which is redrawn on every frame — but only
//! from its first changed row down, so a streaming answer costs about what it adds, not a
//! repaint per delta. Each frame is wrapped in synchronized output (DEC mode 2026), which
//! terminals that support it apply atomically and the others ignore.
//!
//! Rows above the top of the terminal window cannot be reached with cursor movement, so the
//! live region is never taller than the window: when it would be, its top rows are not shown
//! (they reach the scrollback when their item finishes). Everything is relative to where the
//! cursor was left, so the renderer never needs to ask the terminal where it is.
//!
//! Between two frames only what changed is written: rows equal at the top and bottom are
//! kept, rows that appear or go in between are opened or closed with insert/delete-line
//! (so the editor and footer below a growing answer are not rewritten for each new row), a
//! changed row is patched from its first changed column (`sgr::patch`), and rows that are
//! committed to the scrollback while already on screen are simply left where they are.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::sgr;
use super::text::Line;

pub use super::sgr::encode;

/// A frame: lines to print into the scrollback (once), the live region, and where the cursor
/// should be in it (row, column), if anywhere.
#[derive(Debug, Default)]
pub struct Frame {
    pub commit: Vec<Line>,
    pub live: Vec<Line>,
    pub cursor: Option<(usize, usize)>,
}

pub struct Screen {
    out: Box<dyn Write + Send>,
    width: usize,
    height: usize,
    /// The live rows on screen now.
    shown: Vec<Line>,
    /// The live-region row the terminal cursor is on (negative: a row above the live region,
    /// after rows it was on were committed in place).
    cursor_row: isize,
    /// Where the visible cursor was left (row, column), if it was shown.
    cursor_shown: Option<(isize, usize)>,
    /// Bytes written so far (for the benchmark's "bytes per streamed byte" and for tests).
    pub written: u64,
}

impl Screen {
    pub fn new(out: Box<dyn Write + Send>, width: u16, height: u16) -> Screen {
        Screen {
            out,
            width: width.max(1) as usize,
            height: height.max(1) as usize,
            shown: Vec::new(),
            cursor_row: 0,
            cursor_shown: None,
            written: 0,
        }
    }

    /// The screen on the process's stdout (the terminal). Only [`sgr`] encodes what is
    /// written there: lines of clean spans, and pi's own sequences.
    pub fn on_stdout(width: u16, height: u16) -> Screen {
        #[allow(clippy::disallowed_methods)] // the encoder is the terminal rule's way out
        let out = io::stdout();
        Screen::new(Box::new(out), width, height)
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn height(&self) -> usize {
        self.height
    }

    /// The window changed size. The terminal may have reflowed what it shows, so the old live
    /// rows cannot be found again: the visible window and the scrollback are cleared and the
    /// caller prints its transcript again at the new width ([`Screen::draw`] with a commit).
    pub fn resize(&mut self, width: u16, height: u16) -> io::Result<()> {
        self.width = width.max(1) as usize;
        self.height = height.max(1) as usize;
        self.shown.clear();
        self.cursor_row = 0;
        self.cursor_shown = None;
        self.emit("\x1b[?2026h\x1b[3J\x1b[H\x1b[J\x1b[?2026l")
    }

    /// What was shown no longer holds (the session or the branch was replaced): the window
    /// and the scrollback are cleared, as 1.6 clears its chat, and the caller prints the new
    /// transcript ([`Screen::draw`] with a commit).
    pub fn clear(&mut self) -> io::Result<()> {
        self.resize(self.width as u16, self.height as u16)
    }

    /// The window's height changed but not its width: rows are where they were.
    pub fn set_height(&mut self, height: u16) {
        self.height = height.max(1) as usize;
    }

    /// Bytes that change no row (a window title).
    pub fn raw(&mut self, s: &str) -> io::Result<()> {
        self.emit(s)
    }

    /// Draw one frame.
    pub fn draw(&mut self, frame: &Frame) -> io::Result<()> {
        let width = self.width;
        let mut live: Vec<Line> = frame.live.iter().map(|l| l.truncated(width)).collect();
        let mut cursor = frame.cursor;
        // Keep the bottom of the live region (editor, footer) when it is taller than the window.
        if live.len() > self.height {
            let cut = live.len() - self.height;
            live.drain(..cut);
            cursor = cursor.and_then(|(r, c)| r.checked_sub(cut).map(|r| (r, c)));
        }
        let commit: Vec<Line> = frame.commit.iter().map(|l| l.truncated(width)).collect();
        let mut buf = String::with_capacity(256);
        let c = commit.len();
        if c > 0 && c + live.len() <= self.height {
            // The commit goes where the top of the live region is now, usually the same rows
            // the streaming tail already shows: patched like live rows, then left in place as
            // scrollback.
            let mut rows = commit;
            rows.extend(live);
            self.patch_live(&mut buf, rows);
            self.shown.drain(..c);
            self.cursor_row -= c as isize;
            self.cursor_shown = None;
        } else if c > 0 {
            self.rewrite(&mut buf, &commit, live);
        } else {
            self.patch_live(&mut buf, live);
        }
        let target = match cursor {
            Some((row, col)) if row < self.shown.len() => {
                Some((row as isize, col.min(width.saturating_sub(1))))
            }
            _ => None,
        };
        if buf.is_empty() && target == self.cursor_shown {
            // Nothing changed: nothing is written.
            return Ok(());
        }
        let mut out = String::with_capacity(buf.len() + 40);
        out.push_str("\x1b[?2026h\x1b[?25l");
        out.push_str(&buf);
        self.cursor_shown = None;
        if let Some((row, col)) = target {
            self.move_to_row(&mut out, row);
            out.push('\r');
            if col > 0 {
                let _ = write!(out, "\x1b[{col}C");
            }
            out.push_str("\x1b[?25h");
            self.cursor_shown = Some((row, col));
        }
        out.push_str("\x1b[?2026l");
        self.emit(&out)
    }

    /// Commit lines printed from the top of the live region, then the whole live region.
    /// Rows are erased one by one (EL) as they are written rather than with one erase-below:
    /// some terminals (tmux) push the whole screen into the scrollback when erase-below starts
    /// at the top-left corner.
    fn rewrite(&mut self, buf: &mut String, commit: &[Line], live: Vec<Line>) {
        self.move_to_row(buf, 0);
        buf.push('\r');
        let rows = commit.len() + live.len();
        for (i, row) in commit.iter().chain(live.iter()).enumerate() {
            if i > 0 {
                buf.push_str("\r\n");
            }
            buf.push_str("\x1b[K");
            buf.push_str(&sgr::encode(row));
        }
        if live.is_empty() {
            // Only scrollback was written: the (empty) live region starts on the next row.
            buf.push_str("\r\n\x1b[J");
            self.cursor_row = 0;
        } else {
            self.cursor_row = live.len() as isize - 1;
            if rows < self.shown.len() {
                // Old rows are left below what was written.
                buf.push_str("\r\n\x1b[J");
                self.cursor_row += 1;
            }
        }
        self.shown = live;
    }

    /// The live region changed into `live`: keep the rows equal at both ends, open or close
    /// rows between them, patch the rest.
    fn patch_live(&mut self, buf: &mut String, live: Vec<Line>) {
        let old_len = self.shown.len();
        let new_len = live.len();
        let prefix = self
            .shown
            .iter()
            .zip(&live)
            .take_while(|(a, b)| a == b)
            .count();
        let suffix = self
            .shown
            .iter()
            .rev()
            .zip(live.iter().rev())
            .take(old_len.min(new_len) - prefix)
            .take_while(|(a, b)| a == b)
            .count();
        let old_mid = old_len - prefix - suffix;
        let new_mid = new_len - prefix - suffix;
        let blank = Line::new();
        if new_mid > old_mid {
            let d = new_mid - old_mid;
            if old_len == 0 {
                self.move_to_row(buf, 0);
                buf.push('\r');
                for (i, row) in live.iter().enumerate() {
                    if i > 0 {
                        buf.push_str("\r\n");
                    }
                    buf.push_str("\x1b[K");
                    buf.push_str(&sgr::encode(row));
                }
                self.cursor_row = new_len as isize - 1;
                self.shown = live;
                return;
            }
            // New rows below the last one (scrolling the window when it is full), then moved
            // up to just above the kept bottom rows with insert-line.
            self.move_to_row(buf, old_len as isize - 1);
            for _ in 0..d {
                buf.push_str("\r\n");
            }
            self.cursor_row += d as isize;
            if suffix > 0 {
                self.move_to_row(buf, (old_len - suffix) as isize);
                let _ = write!(buf, "\x1b[{d}L");
            } else {
                // The new rows are the last ones: they are where the newlines left them.
            }
            for i in 0..new_mid {
                let row = prefix + i;
                let old = if i < old_mid {
                    &self.shown[row]
                } else {
                    &blank
                };
                let p = sgr::patch(old, &live[row]);
                self.put_row(buf, row, &p);
            }
        } else {
            if old_mid > new_mid {
                let d = old_mid - new_mid;
                self.move_to_row(buf, (prefix + new_mid) as isize);
                let _ = write!(buf, "\x1b[{d}M");
            }
            for i in 0..new_mid {
                let row = prefix + i;
                let p = sgr::patch(&self.shown[row], &live[row]);
                self.put_row(buf, row, &p);
            }
        }
        self.shown = live;
    }

    /// A row's patch, written at the start of `row`.
    fn put_row(&mut self, buf: &mut String, row: usize, p: &str) {
        if p.is_empty() {
            return;
        }
        self.move_to_row(buf, row as isize);
        buf.push('\r');
        buf.push_str(p);
    }

    /// Erase the live region (before leaving: the transcript stays, the editor goes).
    pub fn clear_live(&mut self) -> io::Result<()> {
        let mut buf = String::new();
        self.move_to_row(&mut buf, 0);
        buf.push('\r');
        for i in 0..self.shown.len() {
            if i > 0 {
                buf.push_str("\r\n");
            }
            buf.push_str("\x1b[K");
        }
        if self.shown.len() > 1 {
            let _ = write!(buf, "\x1b[{}A", self.shown.len() - 1);
        }
        buf.push_str("\x1b[?25h");
        self.shown.clear();
        self.cursor_row = 0;
        self.cursor_shown = None;
        self.emit(&buf)
    }

    fn move_to_row(&mut self, buf: &mut String, row: isize) {
        if row < self.cursor_row {
            let _ = write!(buf, "\x1b[{}A", self.cursor_row - row);
        } else if row > self.cursor_row {
            // Line feeds, not cursor-down: a row below the last one written may not exist yet
            // (rows were committed in place at the window's bottom), and only a line feed
            // scrolls the window to make it.
            for _ in 0..row - self.cursor_row {
                buf.push('\n');
            }
        }
        self.cursor_row = row;
    }

    fn emit(&mut self, s: &str) -> io::Result<()> {
        self.written += s.len() as u64;
        self.out.write_all(s.as_bytes())?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if let Ok(mut v) = self.0.lock() {
                v.extend_from_slice(b);
            }
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn screen_text(bytes: &[u8], w: u16, h: u16) -> Vec<String> {
        let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap();
        let mut p = vt100::Parser::new(nz(h), nz(w), 0);
        p.process(bytes);
        p.screen().rows(0, w).collect()
    }

    fn lines(v: &[&str]) -> Vec<Line> {
        v.iter().map(|s| Line::plain(*s)).collect()
    }

    #[test]
    fn commits_go_above_and_the_live_region_is_redrawn_below() {
        let sink = Sink::default();
        let mut s = Screen::new(Box::new(sink.clone()), 20, 6);
        s.draw(&Frame {
            commit: vec![],
            live: lines(&["editor", "footer"]),
            cursor: Some((0, 2)),
        })
        .unwrap();
        s.draw(&Frame {
            commit: lines(&["hello", "world"]),
            live: lines(&["editor", "footer"]),
            cursor: Some((0, 2)),
        })
        .unwrap();
        s.draw(&Frame {
            commit: vec![],
            live: lines(&["streaming", "editor", "footer"]),
            cursor: Some((1, 0)),
        })
        .unwrap();
        let bytes = sink.0.lock().unwrap().clone();
        let rows = screen_text(&bytes, 20, 6);
        assert_eq!(
            rows[..5],
            ["hello", "world", "streaming", "editor", "footer"]
        );
    }

    #[test]
    fn an_unchanged_frame_writes_only_the_cursor() {
        let sink = Sink::default();
        let mut s = Screen::new(Box::new(sink.clone()), 20, 6);
        let f = Frame {
            commit: vec![],
            live: lines(&["a long line of text", "footer"]),
            cursor: None,
        };
        s.draw(&f).unwrap();
        let before = s.written;
        s.draw(&f).unwrap();
        assert!(s.written - before < 30, "{} bytes", s.written - before);
    }

    #[test]
    fn only_rows_from_the_first_change_are_rewritten() {
        let sink = Sink::default();
        let mut s = Screen::new(Box::new(sink.clone()), 40, 10);
        let top = "x".repeat(39);
        s.draw(&Frame {
            commit: vec![],
            live: lines(&[&top, &top, "tail", "footer"]),
            cursor: None,
        })
        .unwrap();
        let before = s.written;
        s.draw(&Frame {
            commit: vec![],
            live: lines(&[&top, &top, "tail grows", "footer"]),
            cursor: None,
        })
        .unwrap();
        assert!(s.written - before < 60, "{} bytes", s.written - before);
        let rows = screen_text(&sink.0.lock().unwrap(), 40, 10);
        assert_eq!(rows[2], "tail grows");
        assert_eq!(rows[3], "footer");
    }

    #[test]
    fn a_live_region_taller_than_the_window_keeps_its_bottom() {
        let sink = Sink::default();
        let mut s = Screen::new(Box::new(sink.clone()), 20, 3);
        s.draw(&Frame {
            commit: vec![],
            live: lines(&["1", "2", "3", "4", "editor"]),
            cursor: Some((4, 0)),
        })
        .unwrap();
        s.draw(&Frame {
            commit: vec![],
            live: lines(&["1", "2", "3", "4", "5", "editor"]),
            cursor: Some((5, 0)),
        })
        .unwrap();
        let rows = screen_text(&sink.0.lock().unwrap(), 20, 3);
        assert_eq!(rows, ["4", "5", "editor"]);
    }

    /// tmux (scroll-on-clear) copies the whole screen into its history when erase-below
    /// starts at the top-left corner: a redraw from the top must erase row by row instead.
    #[test]
    fn redraw_from_the_top_never_erases_below_from_the_corner() {
        let sink = Sink::default();
        let mut s = Screen::new(Box::new(sink.clone()), 20, 6);
        s.draw(&Frame {
            commit: vec![],
            live: lines(&["editor", "footer"]),
            cursor: Some((0, 1)),
        })
        .unwrap();
        s.draw(&Frame {
            commit: lines(&["hello"]),
            live: lines(&["editor", "footer"]),
            cursor: Some((1, 1)),
        })
        .unwrap();
        s.draw(&Frame {
            commit: vec![],
            live: lines(&["x"]),
            cursor: None,
        })
        .unwrap();
        let bytes = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert!(
            !bytes.contains("\x1b[H\x1b[J") && !bytes.starts_with("\x1b[?2026h\x1b[?25l\r\x1b[J"),
            "{bytes:?}"
        );
        assert!(!bytes.contains("\x1b[1A\r\x1b[J"), "{bytes:?}");
        let rows = screen_text(sink.0.lock().unwrap().as_slice(), 20, 6);
        assert_eq!(rows[..3], ["hello", "x", ""]);
    }

    /// Opening a session prints its transcript with no live region yet; the next frame must
    /// start below it, not on its last row.
    #[test]
    fn a_commit_without_a_live_region_is_not_overwritten_by_the_next_frame() {
        let sink = Sink::default();
        let mut s = Screen::new(Box::new(sink.clone()), 20, 6);
        s.draw(&Frame {
            commit: lines(&["question", "answer"]),
            live: vec![],
            cursor: None,
        })
        .unwrap();
        s.draw(&Frame {
            commit: vec![],
            live: lines(&["editor"]),
            cursor: Some((0, 0)),
        })
        .unwrap();
        let rows = screen_text(sink.0.lock().unwrap().as_slice(), 20, 6);
        assert_eq!(rows[..3], ["question", "answer", "editor"]);
    }

    #[test]
    fn a_shrinking_live_region_leaves_no_garbage() {
        let sink = Sink::default();
        let mut s = Screen::new(Box::new(sink.clone()), 20, 6);
        s.draw(&Frame {
            commit: vec![],
            live: lines(&["a", "b", "c", "d"]),
            cursor: None,
        })
        .unwrap();
        s.draw(&Frame {
            commit: vec![],
            live: lines(&["a", "x"]),
            cursor: None,
        })
        .unwrap();
        let rows = screen_text(&sink.0.lock().unwrap(), 20, 6);
        assert_eq!(rows[..4], ["a", "x", "", ""]);
    }

    fn all_rows(bytes: &[u8], w: u16, h: u16) -> Vec<String> {
        let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap();
        let mut p = vt100::Parser::new(nz(h), nz(w), 10_000);
        p.process(bytes);
        p.screen_mut().set_scrollback(usize::MAX);
        let mut k = p.screen().scrollback();
        let mut out = Vec::new();
        while k > 0 {
            p.screen_mut().set_scrollback(k);
            let take = k.min(h as usize);
            out.extend(
                p.screen()
                    .rows(0, w)
                    .take(take)
                    .map(|r| r.trim_end().to_string()),
            );
            k -= take;
        }
        p.screen_mut().set_scrollback(0);
        out.extend(p.screen().rows(0, w).map(|r| r.trim_end().to_string()));
        while out.last().is_some_and(|r| r.is_empty()) {
            out.pop();
        }
        out
    }

    #[derive(Debug, Clone)]
    enum Step {
        /// New lines for the scrollback, and a new live region.
        Frame(Vec<String>, Vec<String>),
        /// The top `k` live rows are committed as they are, the rest stays live plus `more`.
        CommitTop(usize, Vec<String>),
    }

    fn word() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::sample::select(vec![
            "", "a", "ab", "editor", "footer", "x y z", "日本", "tail",
        ])
        .prop_map(String::from)
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::collection::vec;
        proptest::prop_oneof![
            (vec(word(), 0..3), vec(word(), 0..7)).prop_map(|(c, l)| Step::Frame(c, l)),
            (0usize..4, vec(word(), 0..3)).prop_map(|(k, m)| Step::CommitTop(k, m)),
        ]
    }

    use proptest::prelude::*;

    proptest! {
        /// Whatever the sequence of frames, the terminal ends up showing every committed line
        /// once, in order, followed by the last live region: nothing lost, nothing doubled.
        #[test]
        fn any_frame_sequence_leaves_scrollback_then_live_region(steps in proptest::collection::vec((step(), 0usize..8), 1..14)) {
            let (w, h) = (20u16, 8u16);
            let sink = Sink::default();
            let mut screen = Screen::new(Box::new(sink.clone()), w, h);
            let mut committed: Vec<String> = Vec::new();
            let mut live: Vec<String> = Vec::new();
            for (st, at) in steps {
                let (commit, next) = match st {
                    Step::Frame(c, l) => (c, l),
                    Step::CommitTop(k, more) => {
                        let k = k.min(live.len());
                        let mut next: Vec<String> = live[k..].to_vec();
                        next.extend(more);
                        (live[..k].to_vec(), next)
                    }
                };
                let next: Vec<String> = next.into_iter().take(h as usize - 1).collect();
                committed.extend(commit.iter().cloned());
                live = next.clone();
                let cursor = (!live.is_empty()).then(|| (at % live.len(), at % 3));
                screen.draw(&Frame { commit: lines(&commit.iter().map(String::as_str).collect::<Vec<_>>()), live: lines(&next.iter().map(String::as_str).collect::<Vec<_>>()), cursor }).unwrap();
            }
            let mut expected: Vec<String> = committed.into_iter().chain(live).collect();
            while expected.last().is_some_and(|r| r.is_empty()) {
                expected.pop();
            }
            let got = all_rows(sink.0.lock().unwrap().as_slice(), w, h);
            prop_assert_eq!(got, expected);
        }
    }
}
