//! HTML escaping for everything a session holds. A session is untrusted input (the model, a
//! tool's output or a hook may have written any text into it), so every string that reaches
//! the page goes through [`write_escaped`], in text and in (always double-quoted) attributes
//! alike: then no text can open a tag, close one, or end an attribute value.
//!
//! Characters that HTML parsers report as errors are replaced as well, so that the page stays
//! well-formed whatever the session holds: C0 control characters (other than tab, line feed
//! and carriage return) and DEL become their visible Control Pictures (`ESC` shows as `␛`, as
//! a terminal's raw output would suggest), C1 controls and Unicode noncharacters become
//! U+FFFD.

use std::io::{self, Write};

/// Writes `s` escaped for HTML text or a double-quoted attribute value.
pub(crate) fn write_escaped<W: Write + ?Sized>(w: &mut W, s: &str) -> io::Result<()> {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    let mut buf = [0u8; 4];
    while i < bytes.len() {
        // Every character that needs care starts with one of these bytes, so the common run of
        // plain text is skipped a byte at a time without decoding it. Each is a lead byte,
        // never a continuation byte, so `i` is a character boundary here.
        if !may_need_care(bytes[i]) {
            i += 1;
            continue;
        }
        let Some(c) = s[i..].chars().next() else {
            break;
        };
        let len = c.len_utf8();
        if let Some(rep) = replacement(c, &mut buf) {
            w.write_all(&bytes[start..i])?;
            w.write_all(rep.as_bytes())?;
            start = i + len;
        }
        i += len;
    }
    w.write_all(&bytes[start..])
}

/// `s` escaped, as a new string (for short values and tests).
#[cfg(test)]
pub(crate) fn escaped(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len());
    // Writing to a Vec cannot fail, and escaping keeps UTF-8 valid.
    let _ = write_escaped(&mut out, s);
    String::from_utf8(out).unwrap_or_default()
}

fn may_need_care(b: u8) -> bool {
    matches!(
        b,
        b'&' | b'<' | b'>' | b'"' | b'\'' | 0x00..=0x08 | 0x0b | 0x0c | 0x0e..=0x1f | 0x7f
            // U+0080..U+00BF (C1 controls among them), U+FDD0..U+FFFF, and the planes above.
            | 0xc2 | 0xef | 0xf0..=0xf4
    )
}

fn replacement(c: char, buf: &mut [u8; 4]) -> Option<&str> {
    Some(match c {
        '&' => "&amp;",
        '<' => "&lt;",
        '>' => "&gt;",
        '"' => "&quot;",
        '\'' => "&#39;",
        '\t' | '\n' | '\r' => return None,
        '\u{0}'..='\u{1f}' => control_picture(c as u32, buf),
        '\u{7f}' => "\u{2421}",
        '\u{80}'..='\u{9f}' => "\u{fffd}",
        c if is_noncharacter(c) => "\u{fffd}",
        _ => return None,
    })
}

/// U+2400 SYMBOL FOR NULL and its neighbours: one visible symbol per C0 control.
fn control_picture(code: u32, buf: &mut [u8; 4]) -> &str {
    char::from_u32(0x2400 + code)
        .unwrap_or('\u{fffd}')
        .encode_utf8(buf)
}

fn is_noncharacter(c: char) -> bool {
    let n = c as u32;
    (0xfdd0..=0xfdef).contains(&n) || (n & 0xfffe) == 0xfffe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_are_escaped_in_text_and_attributes() {
        assert_eq!(
            escaped(r#"</script><img src=x onerror="alert('1')"> & more"#),
            "&lt;/script&gt;&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt; &amp; more"
        );
        // Already-escaped text is escaped again: it shows as written, not as what it encodes.
        assert_eq!(escaped("&lt;b&gt;"), "&amp;lt;b&amp;gt;");
    }

    #[test]
    fn plain_and_non_ascii_text_passes_unchanged() {
        for s in [
            "",
            "plain",
            "café naïve 東京 🦀",
            "tab\tnew\nline\r\n",
            "\u{a0}\u{bf}\u{fffd}",
        ] {
            assert_eq!(escaped(s), s);
        }
    }

    #[test]
    fn controls_become_visible_and_noncharacters_become_replacements() {
        assert_eq!(escaped("a\u{1b}[1mb\u{0}"), "a\u{241b}[1mb\u{2400}");
        assert_eq!(escaped("\u{7f}\u{85}\u{9f}"), "\u{2421}\u{fffd}\u{fffd}");
        assert_eq!(
            escaped("x\u{fdd0}\u{fffe}\u{ffff}\u{1fffe}\u{10ffff}y"),
            "x\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}y"
        );
        // Neighbours of the replaced ranges are kept.
        assert_eq!(
            escaped("\u{a0}\u{fdcf}\u{fdf0}\u{fffd}\u{10000}"),
            "\u{a0}\u{fdcf}\u{fdf0}\u{fffd}\u{10000}"
        );
    }
}
