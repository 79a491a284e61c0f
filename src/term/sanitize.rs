//! The terminal rule: which characters may reach a terminal as themselves, and what the others
//! become. A terminal acts on control characters instead of showing them — ESC and the C1 CSI
//! (U+009B) start sequences that move the cursor, clear the screen, set the title, write the
//! clipboard (OSC 52) or plant links (OSC 8); CR and BS overwrite what was written; bidi
//! overrides reorder it — so text from a model, a hook, a tool, a server or a file could make
//! the screen show something other than what it holds. Every such character becomes a visible
//! stand-in: a C0 control its Control Pictures symbol (`␛` for ESC, `␍` for CR), DEL `␡`, a C1
//! control or a bidi override or isolate U+FFFD. Only `\n` and `\t` are kept, as layout.
//!
//! This one rule serves every output: the interactive mode's spans ([`row`]), the lines pi
//! prints ([`sanitize`], through `term::out`), pastes (which drop what [`stand_in`] names), and
//! markdown. The check is a byte scan and clean text is returned borrowed, so the common case
//! costs one pass and no allocation.

use std::borrow::Cow;

/// The visible stand-in for a character a terminal would act on, or `None` when it may be
/// shown as itself. `\n` and `\t` have stand-ins too; callers that keep them as layout test
/// them first.
pub fn stand_in(c: char) -> Option<char> {
    match c {
        '\u{0}'..='\u{1f}' => Some(char::from_u32(0x2400 + c as u32).unwrap_or('\u{FFFD}')),
        '\u{7f}' => Some('\u{2421}'),
        '\u{80}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => Some('\u{FFFD}'),
        _ => None,
    }
}

/// Whether the character at byte `i` of `b` may need a stand-in. Exact for ASCII; for the lead
/// bytes of C1 (`C2 80..9F`) and of the bidi controls (`E2 80 AA..AE`, `E2 81 A6..A9`) it
/// looks at the continuation bytes, so ordinary non-ASCII text does not leave the fast path.
#[inline]
fn suspect(b: &[u8], i: usize, keep_layout: bool) -> bool {
    match b[i] {
        b'\n' | b'\t' => !keep_layout,
        0x00..=0x1f | 0x7f => true,
        0xc2 => matches!(b.get(i + 1), Some(0x80..=0x9f)),
        0xe2 => matches!(
            (b.get(i + 1), b.get(i + 2)),
            (Some(0x80), Some(0xaa..=0xae)) | (Some(0x81), Some(0xa6..=0xa9))
        ),
        _ => false,
    }
}

fn first_suspect(s: &str, keep_layout: bool) -> Option<usize> {
    let b = s.as_bytes();
    (0..b.len()).find(|&i| suspect(b, i, keep_layout))
}

/// Text as a terminal may receive it: every control character but `\n` and `\t` replaced by
/// its [`stand_in`]. Borrowed when nothing changes.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    match first_suspect(s, true) {
        None => Cow::Borrowed(s),
        Some(at) => Cow::Owned(replace_from(s, at, |c| match c {
            '\n' | '\t' => None,
            c => stand_in(c),
        })),
    }
}

/// Text for one row of a screen (a span of the interactive mode): as [`sanitize`], and a `\n`
/// or `\t` that reaches a row becomes a space, since a row cannot break and the terminal's tab
/// stops would move what follows. Producers split lines and expand tabs before this.
pub fn row(s: &str) -> Cow<'_, str> {
    match first_suspect(s, false) {
        None => Cow::Borrowed(s),
        Some(at) => Cow::Owned(replace_from(s, at, |c| match c {
            '\n' | '\t' => Some(' '),
            c => stand_in(c),
        })),
    }
}

/// Whether [`row`] would leave `s` unchanged.
pub fn is_clean_row(s: &str) -> bool {
    first_suspect(s, false).is_none()
}

fn replace_from(s: &str, at: usize, map: impl Fn(char) -> Option<char>) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..at]);
    for c in s[at..].chars() {
        out.push(map(c).unwrap_or(c));
    }
    out
}

/// Command output for display: SGR sequences (colours and text attributes, `ESC [ … m` or
/// `CSI … m`) removed, as pi's TypeScript version shows tool output. Only SGR is removed:
/// every other sequence stays in the text for [`sanitize`] to show, so output that tries to
/// move the cursor or set the clipboard is seen doing so.
pub fn strip_sgr(s: &str) -> Cow<'_, str> {
    if !s.contains(['\u{1b}', '\u{9b}']) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find(['\u{1b}', '\u{9b}']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        match sgr_len(tail) {
            Some(n) => rest = &tail[n..],
            None => {
                let c_len = tail.chars().next().map_or(1, char::len_utf8);
                out.push_str(&tail[..c_len]);
                rest = &tail[c_len..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The length in bytes of the SGR sequence `s` starts with, if it starts with one: an
/// introducer (`ESC [` or U+009B), parameters (digits, `;`, `:`), then `m`.
fn sgr_len(s: &str) -> Option<usize> {
    let body = s
        .strip_prefix("\u{1b}[")
        .or_else(|| s.strip_prefix('\u{9b}'))?;
    let params = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';' || *b == b':')
        .count();
    (body.as_bytes().get(params) == Some(&b'm')).then(|| s.len() - body.len() + params + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escapes_become_visible_and_layout_stays() {
        assert_eq!(
            sanitize("a\u{1b}]52;c;eA==\u{7}b\n\tc\r"),
            "a␛]52;c;eA==␇b\n\tc␍"
        );
        assert_eq!(sanitize("\u{9b}2J\u{7f}\u{202e}x"), "\u{FFFD}2J␡\u{FFFD}x");
    }

    #[test]
    fn a_row_has_no_line_breaks_or_tabs() {
        assert_eq!(row("a\nb\tc\u{1b}[2J"), "a b c␛[2J");
    }

    #[test]
    fn clean_text_is_borrowed() {
        let s = "plain text, naïve café, 日本語, emoji 🎉, arrows → ✓, quotes “”";
        assert!(matches!(sanitize(s), Cow::Borrowed(_)));
        assert!(matches!(row(s), Cow::Borrowed(_)));
        assert!(is_clean_row(s));
        // Lead bytes of C1 and bidi controls with other continuations are ordinary text.
        assert!(is_clean_row("© ¡ — ‘ ’ … ⁰"));
    }

    #[test]
    fn strip_sgr_removes_colours_only() {
        assert_eq!(strip_sgr("\u{1b}[1;31mred\u{1b}[0m ok"), "red ok");
        assert_eq!(strip_sgr("\u{9b}32mgreen\u{1b}[m"), "green");
        assert_eq!(
            strip_sgr("a\u{1b}[2Jb\u{1b}]0;t\u{7}"),
            "a\u{1b}[2Jb\u{1b}]0;t\u{7}"
        );
        assert_eq!(strip_sgr("tail \u{1b}["), "tail \u{1b}[");
    }

    fn allowed(c: char) -> bool {
        c == '\n' || c == '\t' || stand_in(c).is_none()
    }

    proptest! {
        /// Whatever goes in, what comes out holds no control character but `\n` and `\t`
        /// (no C0, DEL, C1, bidi override or isolate), and a row not even those.
        #[test]
        fn nothing_a_terminal_acts_on_comes_out(s in any::<String>()) {
            let out = sanitize(&s);
            prop_assert!(out.chars().all(|c| c == '\n' || c == '\t' || (!c.is_control() && stand_in(c).is_none())), "{:?}", out);
            let r = row(&s);
            prop_assert!(r.chars().all(|c| !c.is_control() && stand_in(c).is_none()), "{:?}", r);
            prop_assert_eq!(out.chars().count(), s.chars().count());
        }

        /// The same for text made mostly of escape sequences and controls.
        #[test]
        fn sequences_come_out_inert(s in "(\u{1b}|\u{9b}|\u{7}|\r|\u{8}|\u{7f}|\u{202e}|\u{2066}|\\]|\\[|[0-9;]|[A-Za-z]|\n|\t)*") {
            let out = sanitize(&s);
            let bad = ['\u{1b}', '\u{9b}', '\u{7}', '\r', '\u{8}', '\u{7f}', '\u{202e}', '\u{2066}'];
            prop_assert!(!out.contains(bad), "{:?}", out);
        }

        /// Printable text passes unchanged, borrowed.
        #[test]
        fn printable_text_passes_unchanged(s in any::<String>().prop_map(|s| s.chars().filter(|&c| allowed(c)).collect::<String>())) {
            let out = sanitize(&s);
            prop_assert!(matches!(out, Cow::Borrowed(_)));
            prop_assert_eq!(out.as_ref(), s.as_str());
        }
    }
}
