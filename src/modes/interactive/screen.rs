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

use std::fmt::Write as _;
use std::io::{self, Write};

use crossterm::style::{Attribute, SetAttribute, SetBackgroundColor, SetForegroundColor};

use super::text::{Line, Style};

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
    /// The live rows on screen now, as written (escape sequences included).
    shown: Vec<String>,
    /// The live-region row the terminal cursor is on.
    cursor_row: usize,
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
            written: 0,
        }
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
        self.emit("\x1b[?2026h\x1b[3J\x1b[H\x1b[J\x1b[?2026l")
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
        let mut live: Vec<String> = frame
            .live
            .iter()
            .map(|l| encode(&l.truncated(width)))
            .collect();
        let mut cursor = frame.cursor;
        // Keep the bottom of the live region (editor, footer) when it is taller than the window.
        if live.len() > self.height {
            let cut = live.len() - self.height;
            live.drain(..cut);
            cursor = cursor.and_then(|(r, c)| r.checked_sub(cut).map(|r| (r, c)));
        }
        let first_changed = if frame.commit.is_empty() {
            self.shown
                .iter()
                .zip(&live)
                .position(|(a, b)| a != b)
                .unwrap_or(self.shown.len().min(live.len()))
        } else {
            0
        };
        let unchanged = frame.commit.is_empty()
            && first_changed == live.len()
            && first_changed == self.shown.len();

        let mut buf = String::with_capacity(256);
        buf.push_str("\x1b[?2026h\x1b[?25l");
        if !unchanged {
            // Rows are erased one by one (EL) as they are written rather than with one
            // erase-below: some terminals (tmux) push the whole screen into the scrollback
            // when erase-below starts at the top-left corner.
            let start = first_changed.min(self.shown.len());
            self.move_to_row(&mut buf, start);
            let rows: Vec<String> = frame
                .commit
                .iter()
                .map(|l| encode(&l.truncated(width)))
                .chain(live.iter().skip(first_changed).cloned())
                .collect();
            buf.push('\r');
            for (i, row) in rows.iter().enumerate() {
                if i > 0 {
                    buf.push_str("\r\n");
                }
                buf.push_str("\x1b[K");
                buf.push_str(row);
            }
            if live.is_empty() && !frame.commit.is_empty() {
                // Only scrollback was written: the (empty) live region starts on the next row.
                buf.push_str("\r\n\x1b[J");
                self.cursor_row = 0;
                self.shown = live;
            } else {
                // Where the cursor is now, counted in the new region's rows.
                let mut at = if rows.is_empty() {
                    start
                } else {
                    live.len().saturating_sub(1)
                };
                let old_bottom = self.shown.len().saturating_sub(1);
                // Old rows below what was written: the written rows end on `at`, and old rows
                // existed down to `old_bottom` (counted from the old top, which the commit moved).
                let written_bottom = start + rows.len();
                if rows.is_empty() {
                    if start <= old_bottom && start < self.shown.len() {
                        buf.push_str("\x1b[J");
                    }
                } else if written_bottom <= old_bottom {
                    buf.push_str("\r\n\x1b[J");
                    at += 1;
                }
                self.cursor_row = at;
                self.shown = live;
            }
        }
        match cursor {
            Some((row, col)) if row < self.shown.len() => {
                self.move_to_row(&mut buf, row);
                buf.push('\r');
                if col > 0 {
                    let _ = write!(buf, "\x1b[{}C", col.min(width.saturating_sub(1)));
                }
                buf.push_str("\x1b[?25h");
            }
            _ => {}
        }
        buf.push_str("\x1b[?2026l");
        self.emit(&buf)
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
        self.emit(&buf)
    }

    fn move_to_row(&mut self, buf: &mut String, row: usize) {
        if row < self.cursor_row {
            let _ = write!(buf, "\x1b[{}A", self.cursor_row - row);
        } else if row > self.cursor_row {
            let _ = write!(buf, "\x1b[{}B", row - self.cursor_row);
        }
        self.cursor_row = row;
    }

    fn emit(&mut self, s: &str) -> io::Result<()> {
        self.written += s.len() as u64;
        self.out.write_all(s.as_bytes())?;
        self.out.flush()
    }
}

/// One line as text with SGR sequences, ending with a reset when it set anything.
pub fn encode(line: &Line) -> String {
    let mut s = String::new();
    let mut current = Style::plain();
    for span in &line.spans {
        if span.style != current {
            s.push_str("\x1b[0m");
            push_style(&mut s, span.style);
            current = span.style;
        }
        s.push_str(&span.text);
    }
    if current != Style::plain() {
        s.push_str("\x1b[0m");
    }
    s
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
        let _ = write!(s, "{}", SetForegroundColor(c));
    }
    if let Some(c) = st.bg {
        let _ = write!(s, "{}", SetBackgroundColor(c));
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
}
