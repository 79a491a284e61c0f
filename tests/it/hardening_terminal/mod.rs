//! Issue 24, items 2 and 3: the terminal shows what it is told, never obeys it. Text from a
//! command's output, a tool call's arguments, the model's thinking, a provider's error, a
//! hook's notices and dialogs, a session file, a project's path and an MCP server reaches the
//! terminal as visible characters (`␛` for ESC, U+FFFD for a C1 control), and an approval
//! dialog shows the exact command it asks about, whole.
//!
//! Each test plants the sequences an attacker would — OSC 52 (write the clipboard), OSC 8 (a
//! hidden link), OSC 0 (the window title), `CSI 2J`/`CSI H` (clear, home) and the one-byte C1
//! CSI (U+009B) — and checks both what a person sees (the parsed screen shows the sequences
//! as text) and the bytes the terminal received ([`assert_inert`]: pi's own styling and
//! cursor vocabulary only, no OSC, no C1, no other control).

mod approval;
mod hooks;
mod mcp;
mod paths;
mod print;
mod sessions;
mod transcript;

use regex::bytes::Regex;
use serde_json::Value;

use crate::common::pty::PtyPi;

/// OSC 52: put "PWNED" on the clipboard.
pub const OSC52: &str = "\x1b]52;c;UFdORUQ=\x07";
/// OSC 8: a link whose target is not what it shows.
pub const OSC8: &str = "\x1b]8;;https://evil.invalid/\x07here\x1b]8;;\x07";
/// OSC 0: set the window title.
pub const TITLE: &str = "\x1b]0;PWNED\x07";
/// Clear the screen and move home.
pub const CLEAR: &str = "\x1b[2J\x1b[H";
/// The same clear as the one-byte C1 CSI.
pub const C1_CLEAR: &str = "\u{9b}2J";

/// Every payload at once, between `tag[` and `]` so a test can find where it went.
pub fn payload(tag: &str) -> String {
    format!("{tag}[{OSC52}{OSC8}{TITLE}{CLEAR}{C1_CLEAR}]")
}

/// What [`payload`] looks like on screen when pi shows it as text. The C1 CSI's stand-in,
/// U+FFFD, is on a real terminal's screen (`�`) but not on this emulator's (`vt100` drops
/// it), so it is missing here; [`sent`] has it.
pub fn shown(tag: &str) -> String {
    sent(tag).replace('\u{FFFD}', "")
}

/// The text pi sends the terminal for [`payload`]: every control as its stand-in.
pub fn sent(tag: &str) -> String {
    format!(
        "{tag}[␛]52;c;UFdORUQ=␇␛]8;;https://evil.invalid/␇here␛]8;;␇␛]0;PWNED␇␛[2J␛[H\u{FFFD}2J]"
    )
}

/// pi sent `text` to the terminal as it is (a stand-in the emulator does not show included).
#[track_caller]
pub fn assert_sent(pi: &PtyPi, text: &str) {
    let bytes = pi.bytes();
    assert!(
        String::from_utf8_lossy(&bytes).contains(text),
        "{text:?} was not sent to the terminal"
    );
}

/// JSON for typing or writing where only ASCII may go: serde_json escapes C0 controls, and
/// every other non-ASCII character is escaped here, so the text carries no raw control.
pub fn ascii_json(v: &Value) -> String {
    let s = serde_json::to_string(v).expect("json");
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for u in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// The escape sequences pi itself writes in the interactive mode: SGR styles, cursor moves
/// (forward, up), erase in line/display, insert/delete line, synchronized output, cursor
/// visibility, bracketed paste and the kitty keyboard flags. Anything else starting with ESC
/// came from somewhere else.
fn own_sequence() -> Regex {
    Regex::new(r"^\x1b\[(?:[0-9;:]*m|[0-9]+[ACLM]|K|J|\?(?:2026|25|2004)[hl]|>1u|<u)")
        .expect("regex")
}

/// The terminal received nothing but text, CR/LF and pi's own sequences: no OSC (clipboard,
/// links, title), no C1 control, no BEL or other C0 control, no foreign CSI, and valid UTF-8
/// (a lone `0x9b` byte is a CSI to a terminal in 8-bit mode).
///
/// pi's own colour query (`terminal_colors::QUERY`, OSC 10/11/4 and DA1, as 1.6 asks) is the one
/// exception, and only byte for byte.
#[track_caller]
pub fn assert_inert(bytes: &[u8]) {
    let query = pi::modes::interactive::terminal_colors::QUERY.as_bytes();
    let mut own_query_removed = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(query) {
            i += query.len();
        } else {
            own_query_removed.push(bytes[i]);
            i += 1;
        }
    }
    let bytes = own_query_removed.as_slice();
    let context = |at: usize| {
        let from = at.saturating_sub(60);
        let to = (at + 60).min(bytes.len());
        format!("{:?}", String::from_utf8_lossy(&bytes[from..to]))
    };
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => panic!(
            "the terminal received bytes that are not UTF-8 at {}: {}",
            e.valid_up_to(),
            context(e.valid_up_to())
        ),
    };
    let own = own_sequence();
    for (at, c) in text.char_indices() {
        match c {
            '\r' | '\n' => {}
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => panic!(
                "bidi control U+{:04X} reached the terminal at {at}: {}",
                c as u32,
                context(at)
            ),
            '\x1b' => assert!(
                own.is_match(&bytes[at..]),
                "a sequence pi did not make reached the terminal at {at}: {}",
                context(at)
            ),
            c if c.is_control() => panic!(
                "control character U+{:04X} reached the terminal at {at}: {}",
                c as u32,
                context(at)
            ),
            _ => {}
        }
    }
}

/// Lines for a person on stdout or stderr: UTF-8 text and line feeds, no other control at all
/// (not even a carriage return, which would let a line overwrite what came before it).
#[track_caller]
pub fn assert_plain_lines(bytes: &[u8]) {
    assert_inert(bytes);
    let text = String::from_utf8_lossy(bytes);
    if let Some(at) = text.find(|c: char| c.is_control() && c != '\n') {
        panic!("a control character in plain lines at {at}: {text:?}");
    }
}

/// [`assert_inert`] over everything pi wrote to its terminal so far.
#[track_caller]
pub fn assert_pty_inert(pi: &PtyPi) {
    assert_inert(&pi.bytes());
}

/// Whether some row of `rows` contains `needle`.
pub fn has_row(rows: &[String], needle: &str) -> bool {
    rows.iter().any(|r| r.contains(needle))
}

#[test]
fn the_checker_refuses_what_it_must_and_accepts_pis_own_bytes() {
    let ok = "\x1b[?2026h\x1b[?25l\r\x1b[K\x1b[1m\x1b[38;5;12mhi\x1b[0m\x1b[12C\x1b[2A\x1b[3L\x1b[J\r\n␛]0;x␇\x1b[?2026l";
    assert_inert(ok.as_bytes());
    for bad in [
        OSC52, OSC8, TITLE, CLEAR, C1_CLEAR, "\x07", "\x1b7", "\x1bc", "\t",
    ] {
        let r = std::panic::catch_unwind(|| assert_inert(format!("ok {bad} ok").as_bytes()));
        assert!(r.is_err(), "{bad:?} passed the check");
    }
    assert!(std::panic::catch_unwind(|| assert_inert(b"a\x9b2Jb")).is_err());
}
