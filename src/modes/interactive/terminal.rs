//! The terminal itself: raw mode, bracketed paste, the kitty keyboard protocol's "disambiguate"
//! level (so Shift+Enter and Alt+Enter reach us as themselves where the terminal supports it),
//! and putting all of it back. Restoration happens on drop and from a panic hook, so a crash
//! never leaves the user's shell in raw mode. Nothing here queries the terminal and waits for
//! an answer: a terminal that does not answer (or a test's pseudo-terminal) must not delay the
//! first paint.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::terminal;

/// Whether the terminal is currently in our modes; read by the panic hook.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Bracketed paste on; kitty keyboard flags pushed (level 1: disambiguate escape codes). A
/// terminal that does not know the kitty sequence ignores it.
const ENTER: &str = "\x1b[?2004h\x1b[>1u";
/// The reverse, plus the cursor shown and the style reset.
const LEAVE: &str = "\x1b[<u\x1b[?2004l\x1b[0m\x1b[?25h";

/// The terminal in interactive mode until dropped.
pub struct Terminal {
    _private: (),
}

impl Terminal {
    /// Raw mode and our input modes. Fails when stdin is not a terminal.
    pub fn enter() -> io::Result<Terminal> {
        terminal::enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        install_panic_hook();
        #[allow(clippy::disallowed_methods)] // pi's own mode sequences, no text
        let mut out = io::stdout();
        out.write_all(ENTER.as_bytes())?;
        out.flush()?;
        Ok(Terminal { _private: () })
    }

    /// Our modes again after [`restore`] handed the terminal to someone else (the external
    /// editor, the shell while pi was suspended).
    pub fn reenter(&self) -> io::Result<()> {
        terminal::enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        #[allow(clippy::disallowed_methods)] // pi's own mode sequences, no text
        let mut out = io::stdout();
        out.write_all(ENTER.as_bytes())?;
        out.flush()
    }

    /// (columns, rows); 80×24 when the terminal does not say.
    pub fn size() -> (u16, u16) {
        match terminal::size() {
            Ok((w, h)) if w > 0 && h > 0 => (w, h),
            _ => (80, 24),
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        restore();
    }
}

/// Leave our modes if we are in them; safe to call twice.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        #[allow(clippy::disallowed_methods)] // pi's own mode sequences, no text
        let mut out = io::stdout();
        let _ = out.write_all(LEAVE.as_bytes());
        let _ = out.flush();
        let _ = terminal::disable_raw_mode();
    }
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // Restore first, so the panic message is readable (newlines mean newlines again).
        restore();
        previous(info);
    }));
}
