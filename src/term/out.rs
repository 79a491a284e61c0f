//! Plain lines on stdout and stderr — warnings, errors, print mode's progress, `pi mcp list`,
//! `pi hooks`, pickers, the log — by the terminal rule. Everything pi prints for a person goes
//! through [`line`] (the `term_println!` family of macros) or a [`Sanitized`] writer, so a
//! server name, a hook's message or a session's title cannot send a sequence to the terminal
//! however it reaches the text. `std`'s `println!`/`eprintln!` and `io::stdout()`/`stderr()`
//! are refused by clippy (`clippy.toml`) outside the few reviewed places that write encoded
//! bytes themselves (the interactive screen, JSON lines, RPC).
//!
//! Write errors are ignored, as for a closed pipe (`pi mcp list | head`): a person's output
//! that cannot be written is not a reason to fail differently.

use std::fmt;
use std::io::{self, Write};

use super::sanitize::sanitize;

/// Which stream a line goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum To {
    Stdout,
    Stderr,
}

/// Format, sanitise and write; with `newline`, a `\n` after it.
pub fn line(to: To, args: fmt::Arguments<'_>, newline: bool) {
    let mut text = match args.as_str() {
        Some(s) => s.to_string(),
        None => args.to_string(),
    };
    if newline {
        text.push('\n');
    }
    let clean = sanitize(&text);
    #[allow(clippy::disallowed_methods)] // this is the sanitising writer
    let _ = match to {
        To::Stdout => write_flushed(&mut io::stdout().lock(), clean.as_bytes()),
        To::Stderr => write_flushed(&mut io::stderr().lock(), clean.as_bytes()),
    };
}

fn write_flushed(w: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    w.write_all(bytes)?;
    w.flush()
}

/// Whether `to` is a terminal (where data such as print mode's answer is shown, not stored).
pub fn is_terminal(to: To) -> bool {
    use std::io::IsTerminal;
    #[allow(clippy::disallowed_methods)] // only asks, writes nothing
    match to {
        To::Stdout => io::stdout().is_terminal(),
        To::Stderr => io::stderr().is_terminal(),
    }
}

/// stderr through [`Sanitized`]: the writer for the log (`tracing`) and the pickers.
pub fn stderr() -> Sanitized<io::Stderr> {
    #[allow(clippy::disallowed_methods)] // wrapped in the sanitising writer
    Sanitized::new(io::stderr())
}

/// A writer that applies the terminal rule to what goes through it. Bytes that are not UTF-8
/// become U+FFFD (a lone `0x9b` is a CSI to a terminal in 8-bit mode); a character split
/// between two writes is held until its end arrives (or [`Sanitized::flush`] gives up on it).
pub struct Sanitized<W: Write> {
    inner: W,
    /// The start of a UTF-8 sequence whose remaining bytes have not been written yet.
    carry: Vec<u8>,
}

impl<W: Write> Sanitized<W> {
    pub fn new(inner: W) -> Self {
        Sanitized {
            inner,
            carry: Vec::new(),
        }
    }

    fn emit(&mut self, text: &str) -> io::Result<()> {
        self.inner.write_all(sanitize(text).as_bytes())
    }
}

impl<W: Write> Write for Sanitized<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(buf);
        let mut rest = bytes.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    self.emit(s)?;
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // `valid_up_to` promises UTF-8 up to there.
                    self.emit(std::str::from_utf8(valid).unwrap_or_default())?;
                    match e.error_len() {
                        Some(bad) => {
                            self.emit("\u{FFFD}")?;
                            rest = &after[bad..];
                        }
                        None => {
                            self.carry = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.carry.is_empty() {
            self.carry.clear();
            self.emit("\u{FFFD}")?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for Sanitized<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// `println!` by the terminal rule.
#[macro_export]
macro_rules! term_println {
    () => { $crate::term::out::line($crate::term::out::To::Stdout, format_args!(""), true) };
    ($($arg:tt)*) => {
        $crate::term::out::line($crate::term::out::To::Stdout, format_args!($($arg)*), true)
    };
}

/// `print!` by the terminal rule.
#[macro_export]
macro_rules! term_print {
    ($($arg:tt)*) => {
        $crate::term::out::line($crate::term::out::To::Stdout, format_args!($($arg)*), false)
    };
}

/// `eprintln!` by the terminal rule.
#[macro_export]
macro_rules! term_eprintln {
    () => { $crate::term::out::line($crate::term::out::To::Stderr, format_args!(""), true) };
    ($($arg:tt)*) => {
        $crate::term::out::line($crate::term::out::To::Stderr, format_args!($($arg)*), true)
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(chunks: &[&[u8]]) -> String {
        let mut out = Vec::new();
        {
            let mut w = Sanitized::new(&mut out);
            for c in chunks {
                w.write_all(c).unwrap();
            }
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn sequences_become_visible_and_lines_stay() {
        assert_eq!(
            through(&[b"a\x1b]52;c;eA==\x07\n", "b\u{9b}2J\tc".as_bytes()]),
            "a␛]52;c;eA==␇\nb\u{FFFD}2J\tc"
        );
    }

    #[test]
    fn a_character_split_between_writes_is_kept_whole() {
        let csi = "\u{9b}".as_bytes();
        let e = "é".as_bytes();
        assert_eq!(
            through(&[b"x", &csi[..1], &csi[1..], &e[..1], &e[1..]]),
            "x\u{FFFD}é"
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_become_replacement_characters() {
        assert_eq!(through(&[b"a\x9b2Jb\xff"]), "a\u{FFFD}2Jb\u{FFFD}");
        assert_eq!(through(&[b"cut \xe2\x80"]), "cut \u{FFFD}");
    }
}
