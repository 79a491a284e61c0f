//! The real `pi` binary in a pseudo-terminal, its output parsed by a terminal emulator
//! (`vt100`) so tests assert what a person would see: the rows of the screen, the scrollback
//! above it, the cursor. Keys are the bytes a terminal sends. Every wait is bounded and a
//! failing wait dumps the screen, the scrollback and pi's stderr.

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};

use super::{process_gone, TestAgent};

/// How long a screen may take to show what a test waits for.
pub const SCREEN_TIMEOUT: Duration = Duration::from_secs(20);

struct Shared {
    parser: vt100::Parser,
    /// Every byte pi wrote, for the failure dump and byte counts.
    bytes: Vec<u8>,
    eof: bool,
    /// Inside a synchronized-output frame (`CSI ? 2026 h` seen, its `l` not yet): the
    /// screen is half drawn, and waits do not look at it (a terminal would not show it).
    in_frame: bool,
}

pub struct PtyPi {
    shared: Arc<(Mutex<Shared>, Condvar)>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    master: Box<dyn MasterPty + Send>,
    child: Box<dyn Child + Send + Sync>,
    pub pid: i32,
    stderr_path: std::path::PathBuf,
    rows: u16,
    cols: u16,
}

fn nz(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n.max(1)).unwrap_or(NonZeroU16::MIN)
}

impl TestAgent {
    /// `pi args…` on a `cols`×`rows` terminal, in this agent's hermetic environment. stderr
    /// goes to a file (a terminal user would see it mixed in; tests read it apart).
    pub fn pty<S: AsRef<str>>(&self, args: &[S], cols: u16, rows: u16) -> PtyPi {
        let line = self.pi_command_line(args);
        self.pty_running(&format!("exec {line}"), cols, rows)
    }

    /// An interactive `bash` (job control on, prompt `$ `) in the pty, in this agent's
    /// hermetic environment; [`TestAgent::pi_command_line`] is what to type to start pi in it.
    pub fn pty_shell(&self, cols: u16, rows: u16) -> PtyPi {
        let pty = self.pty_running("PS1='$ ' exec bash --norc --noprofile -i", cols, rows);
        pty.wait_text("$");
        pty
    }

    /// `pi args…` as a shell command line, stderr to the file the failure dumps show.
    pub fn pi_command_line<S: AsRef<str>>(&self, args: &[S]) -> String {
        let stderr_path = self.tmp.join(format!("pty-stderr-{}", std::process::id()));
        let mut line = shell_words::quote(env!("CARGO_BIN_EXE_pi")).into_owned();
        for a in args {
            line.push(' ');
            line.push_str(&shell_words::quote(a.as_ref()));
        }
        format!(
            "{line} 2>{}",
            shell_words::quote(stderr_path.to_str().expect("utf-8 path"))
        )
    }

    /// `pi args…` on a terminal that answers: each time pi writes `asked`, the terminal
    /// sends `answer` back (as a terminal answers a query).
    pub fn pty_answering<S: AsRef<str>>(
        &self,
        args: &[S],
        (cols, rows): (u16, u16),
        asked: &[u8],
        answer: &[u8],
    ) -> PtyPi {
        let line = self.pi_command_line(args);
        let answers = Some((asked.to_vec(), answer.to_vec()));
        self.pty_with(&format!("exec {line}"), cols, rows, answers)
    }

    /// `/bin/sh -c line` in a new pty.
    fn pty_running(&self, line: &str, cols: u16, rows: u16) -> PtyPi {
        self.pty_with(line, cols, rows, None)
    }

    fn pty_with(
        &self,
        line: &str,
        cols: u16,
        rows: u16,
        answers: Option<(Vec<u8>, Vec<u8>)>,
    ) -> PtyPi {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pseudo-terminal");
        // The shell redirects stderr, so pi's own stderr writes never reach the screen.
        let stderr_path = self.tmp.join(format!("pty-stderr-{}", std::process::id()));
        let mut cmd = CommandBuilder::new("/bin/sh");
        cmd.args(["-c", line]);
        cmd.cwd(&self.cwd);
        cmd.env_clear();
        cmd.env(
            "PATH",
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
        );
        cmd.env("HOME", &self.home);
        cmd.env("TMPDIR", &self.tmp);
        cmd.env("PI_CODING_AGENT_DIR", &self.agent_dir);
        cmd.env("LANG", "C.UTF-8");
        cmd.env("TERM", "xterm-256color");
        for (k, v) in self.extra_env() {
            cmd.env(k, v);
        }
        let child = pty.slave.spawn_command(cmd).expect("spawn pi in the pty");
        drop(pty.slave);
        let pid = child.process_id().expect("pid") as i32;
        let mut reader = pty.master.try_clone_reader().expect("pty reader");
        let writer = Arc::new(Mutex::new(pty.master.take_writer().expect("pty writer")));
        let answerer = writer.clone();
        let shared = Arc::new((
            Mutex::new(Shared {
                parser: vt100::Parser::new(nz(rows), nz(cols), 10_000),
                bytes: Vec::new(),
                eof: false,
                in_frame: false,
            }),
            Condvar::new(),
        ));
        let s2 = shared.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                let n = reader.read(&mut buf).unwrap_or(0);
                let (lock, cv) = &*s2;
                let mut s = lock.lock().unwrap_or_else(|e| e.into_inner());
                if n == 0 {
                    s.eof = true;
                    cv.notify_all();
                    return;
                }
                s.parser.process(&buf[..n]);
                if let Some((asked, answer)) = &answers {
                    let from = s.bytes.len().saturating_sub(asked.len() - 1);
                    let mut seen = s.bytes[from..].to_vec();
                    seen.extend_from_slice(&buf[..n]);
                    if seen.windows(asked.len()).any(|w| w == asked.as_slice()) {
                        let mut w = answerer.lock().unwrap_or_else(|e| e.into_inner());
                        let _ = w.write_all(answer);
                        let _ = w.flush();
                    }
                }
                let from = s.bytes.len().saturating_sub(7);
                s.bytes.extend_from_slice(&buf[..n]);
                let tail = &s.bytes[from..];
                let last = |m: &[u8]| tail.windows(m.len()).rposition(|w| w == m);
                match (last(b"\x1b[?2026h"), last(b"\x1b[?2026l")) {
                    (Some(h), Some(l)) => s.in_frame = h > l,
                    (Some(_), None) => s.in_frame = true,
                    (None, Some(_)) => s.in_frame = false,
                    (None, None) => {}
                }
                cv.notify_all();
            }
        });
        PtyPi {
            shared,
            writer,
            master: pty.master,
            child,
            pid,
            stderr_path,
            rows,
            cols,
        }
    }
}

impl TestAgent {
    /// `pi` on the offline faux model with `steps`, once its first screen (the footer) shows.
    pub fn pty_faux(&self, steps: serde_json::Value, cols: u16, rows: u16) -> PtyPi {
        let pi = self.pty(&self.faux_args(steps), cols, rows);
        pi.wait_text("faux/faux-1");
        pi
    }
}

/// How long quitting may take.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(20);

impl PtyPi {
    /// Quit with Ctrl+D on the (empty) editor; pi must exit 0.
    #[track_caller]
    pub fn quit(mut self) {
        self.ctrl('d');
        let code = self.wait_exit(EXIT_TIMEOUT);
        assert_eq!(code, 0, "stderr: {}", self.stderr());
    }

    /// Type text (each char as a terminal sends it).
    pub fn type_text(&mut self, s: &str) {
        self.send(s.as_bytes());
    }

    pub fn send(&mut self, bytes: &[u8]) {
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        w.write_all(bytes).expect("write to the pty");
        w.flush().expect("flush the pty");
    }

    pub fn enter(&mut self) {
        self.send(b"\r");
    }

    pub fn esc(&mut self) {
        self.send(b"\x1b");
    }

    pub fn ctrl(&mut self, c: char) {
        let b = (c.to_ascii_lowercase() as u8) & 0x1f;
        self.send(&[b]);
    }

    /// Alt+Enter as terminals send it (ESC CR).
    pub fn alt_enter(&mut self) {
        self.send(b"\x1b\r");
    }

    /// A bracketed paste.
    pub fn paste(&mut self, text: &str) {
        let mut b = b"\x1b[200~".to_vec();
        b.extend_from_slice(text.as_bytes());
        b.extend_from_slice(b"\x1b[201~");
        self.send(&b);
    }

    /// The visible rows, trailing spaces trimmed.
    pub fn screen(&self) -> Vec<String> {
        let (lock, _) = &*self.shared;
        let s = lock.lock().unwrap_or_else(|e| e.into_inner());
        s.parser
            .screen()
            .rows(0, self.cols)
            .map(|r| r.trim_end().to_string())
            .collect()
    }

    /// Scrollback and screen, top to bottom: everything a person could scroll back to.
    pub fn transcript(&self) -> Vec<String> {
        let (lock, _) = &*self.shared;
        let mut s = lock.lock().unwrap_or_else(|e| e.into_inner());
        all_rows(&mut s.parser, self.rows, self.cols)
    }

    /// Every byte pi wrote to the terminal so far, for checks of what reached it raw.
    pub fn bytes(&self) -> Vec<u8> {
        let (lock, _) = &*self.shared;
        lock.lock().unwrap_or_else(|e| e.into_inner()).bytes.clone()
    }

    pub fn bytes_written(&self) -> usize {
        let (lock, _) = &*self.shared;
        lock.lock().unwrap_or_else(|e| e.into_inner()).bytes.len()
    }

    pub fn cursor(&self) -> (u16, u16) {
        let (lock, _) = &*self.shared;
        lock.lock()
            .unwrap_or_else(|e| e.into_inner())
            .parser
            .screen()
            .cursor_position()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// The colours (foreground, background) of the cell where `needle` first starts on the
    /// visible screen, as the terminal shows them; `None` when it is not on screen.
    pub fn colors_of(&self, needle: &str) -> Option<(vt100::Color, vt100::Color)> {
        let (lock, _) = &*self.shared;
        let s = lock.lock().unwrap_or_else(|e| e.into_inner());
        cell_colors(s.parser.screen(), self.rows, self.cols, needle)
    }

    /// Wait until the cell where `needle` starts has colours that satisfy `pred`.
    #[track_caller]
    pub fn wait_colors(
        &self,
        needle: &str,
        pred: impl Fn(vt100::Color, vt100::Color) -> bool,
    ) -> (vt100::Color, vt100::Color) {
        let deadline = Instant::now() + SCREEN_TIMEOUT;
        let (lock, cv) = &*self.shared;
        let mut s = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let found = cell_colors(s.parser.screen(), self.rows, self.cols, needle);
            if let Some((fg, bg)) = found.filter(|(f, b)| !s.in_frame && pred(*f, *b)) {
                return (fg, bg);
            }
            let now = Instant::now();
            if now >= deadline || s.eof {
                let screen: Vec<String> = s.parser.screen().rows(0, self.cols).collect();
                drop(s);
                panic!(
                    "waited for {needle:?} in the colours asked for; it has {found:?}\n--- screen ---\n{}\n--- stderr ---\n{}",
                    screen.join("\n"),
                    self.stderr()
                );
            }
            s = cv
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Wait until `pred` holds for the visible screen; panics with a dump after `limit`.
    #[track_caller]
    pub fn wait_screen(&self, what: &str, pred: impl Fn(&[String]) -> bool) -> Vec<String> {
        self.wait_for(what, SCREEN_TIMEOUT, |s| pred(&s.screen))
    }

    /// Wait until some visible row contains `needle`.
    #[track_caller]
    pub fn wait_text(&self, needle: &str) -> Vec<String> {
        self.wait_screen(&format!("{needle:?} on screen"), |rows| {
            rows.iter().any(|r| r.contains(needle))
        })
    }

    /// Wait until the scrollback or the screen contains `needle`.
    #[track_caller]
    pub fn wait_transcript(&self, needle: &str) -> Vec<String> {
        self.wait_for(
            &format!("{needle:?} in the transcript"),
            SCREEN_TIMEOUT,
            |s| s.all.iter().any(|r| r.contains(needle)),
        )
    }

    /// Wait until the editor's first row is `row` ([`PLACEHOLDER`] when empty).
    #[track_caller]
    pub fn wait_editor(&self, row: &str) -> Vec<String> {
        self.wait_screen(&format!("the editor showing {row:?}"), |s| {
            editor_row(s) == Some(row)
        })
    }

    /// Wait until some row of the scrollback or the screen is exactly `row` (trailing spaces
    /// aside): output, not the editor echoing what was typed.
    #[track_caller]
    pub fn wait_row(&self, row: &str) -> Vec<String> {
        self.wait_for(&format!("a row {row:?}"), SCREEN_TIMEOUT, |s| {
            s.all.iter().any(|r| r == row)
        })
    }

    #[track_caller]
    fn wait_for(&self, what: &str, limit: Duration, pred: impl Fn(&View) -> bool) -> Vec<String> {
        let deadline = Instant::now() + limit;
        let (lock, cv) = &*self.shared;
        let mut s = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let screen: Vec<String> = s
                .parser
                .screen()
                .rows(0, self.cols)
                .map(|r| r.trim_end().to_string())
                .collect();
            let all = all_rows(&mut s.parser, self.rows, self.cols);
            let view = View { screen, all };
            if !s.in_frame && pred(&view) {
                return view.screen;
            }
            let now = Instant::now();
            if now >= deadline || s.eof {
                let eof = s.eof;
                drop(s);
                panic!(
                    "waited for {what}{}\n--- screen ---\n{}\n--- transcript ---\n{}\n--- stderr ---\n{}",
                    if eof { " but pi's terminal closed" } else { "" },
                    view.screen.join("\n"),
                    view.all.join("\n"),
                    self.stderr()
                );
            }
            s = cv
                .wait_timeout(s, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    /// Resize the terminal (pi gets SIGWINCH), and the emulator with it.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        {
            let (lock, _) = &*self.shared;
            let mut s = lock.lock().unwrap_or_else(|e| e.into_inner());
            s.parser.screen_mut().set_size(nz(rows), nz(cols));
        }
        self.rows = rows;
        self.cols = cols;
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize the pty");
    }

    /// Wait for pi to exit; its exit code.
    #[track_caller]
    pub fn wait_exit(&mut self, limit: Duration) -> u32 {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                // What pi wrote last (the resume line) is read before the screen is asked.
                let (lock, cv) = &*self.shared;
                let s = lock.lock().unwrap_or_else(|e| e.into_inner());
                let _ = cv.wait_timeout_while(s, Duration::from_secs(5), |s| !s.eof);
                return status.exit_code();
            }
            if Instant::now() > deadline {
                panic!(
                    "pi did not exit within {limit:?}\n--- screen ---\n{}\n--- stderr ---\n{}",
                    self.screen().join("\n"),
                    self.stderr()
                );
            }
            // The child's exit cannot be awaited through portable-pty; the terminal's EOF is.
            let (lock, cv) = &*self.shared;
            let s = lock.lock().unwrap_or_else(|e| e.into_inner());
            if !s.eof {
                let _ = cv.wait_timeout(s, Duration::from_millis(50));
            } else {
                drop(s);
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }

    pub fn gone(&self) -> bool {
        process_gone(self.pid)
    }
}

impl Drop for PtyPi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        super::kill_group(self.pid);
    }
}

/// What an empty editor shows.
pub const PLACEHOLDER: &str = "Message pi · / for commands · @ for files";

/// The editor's first row: the editor is a box between two border lines above the footer.
pub fn editor_row(screen: &[String]) -> Option<&str> {
    let bottom = screen.iter().rposition(|r| r.starts_with('─'))?;
    let top = screen[..bottom].iter().rposition(|r| r.starts_with('─'))?;
    screen.get(top + 1).map(String::as_str)
}

struct View {
    screen: Vec<String>,
    all: Vec<String>,
}

fn all_rows(parser: &mut vt100::Parser, rows: u16, cols: u16) -> Vec<String> {
    let h = rows as usize;
    parser.screen_mut().set_scrollback(usize::MAX);
    let mut k = parser.screen().scrollback();
    let mut out = Vec::new();
    while k > 0 {
        parser.screen_mut().set_scrollback(k);
        let take = k.min(h);
        out.extend(
            parser
                .screen()
                .rows(0, cols)
                .take(take)
                .map(|r| r.trim_end().to_string()),
        );
        k -= take;
    }
    parser.screen_mut().set_scrollback(0);
    out.extend(
        parser
            .screen()
            .rows(0, cols)
            .map(|r| r.trim_end().to_string()),
    );
    out
}

/// The colours of the cell where `needle` starts (cells read left to right, the second half
/// of a wide character skipped).
fn cell_colors(
    screen: &vt100::Screen,
    rows: u16,
    cols: u16,
    needle: &str,
) -> Option<(vt100::Color, vt100::Color)> {
    for r in 0..rows {
        let mut text = String::new();
        let mut starts: Vec<(usize, u16)> = Vec::new();
        for c in 0..cols {
            let Some(cell) = screen.cell(r, c) else {
                continue;
            };
            if cell.is_wide_continuation() {
                continue;
            }
            starts.push((text.len(), c));
            let t = cell.contents();
            text.push_str(if t.is_empty() { " " } else { t });
        }
        if let Some(at) = text.find(needle) {
            let col = starts.iter().find(|(i, _)| *i == at).map(|(_, c)| *c)?;
            let cell = screen.cell(r, col)?;
            return Some((cell.fgcolor(), cell.bgcolor()));
        }
    }
    None
}
