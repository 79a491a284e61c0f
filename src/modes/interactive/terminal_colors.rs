//! Asking the terminal for its colours, as pi 1.6's TUI does: its default foreground and
//! background (OSC 10 and 11) and its 16 palette colours (OSC 4), then a device-attributes
//! request (DA1) that every terminal answers right after the colour replies, so a terminal
//! that knows the colour queries is done at once and one that knows none of them ends the
//! wait. The query is written after the first paint and the answers are read by the key
//! reader's thread before it starts reading keys, for at most 1.6's 100 ms; what the person
//! typed meanwhile is not a reply and is handed on as keys ([`typed_keys`]). The reported
//! background decides light or dark the way 1.6's `terminalAppearance` does, which picks the
//! half of a `light/dark` theme setting.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use palette::{FromColor, Oklab, Srgb};

use crate::resources::themes::Appearance;

/// 1.6's `TERMINAL_COLOR_QUERY`: OSC 10, OSC 11, OSC 4 for palette entries 0–15, then DA1.
pub const QUERY: &str = concat!(
    "\x1b]10;?\x07\x1b]11;?\x07",
    "\x1b]4;0;?\x07\x1b]4;1;?\x07\x1b]4;2;?\x07\x1b]4;3;?\x07",
    "\x1b]4;4;?\x07\x1b]4;5;?\x07\x1b]4;6;?\x07\x1b]4;7;?\x07",
    "\x1b]4;8;?\x07\x1b]4;9;?\x07\x1b]4;10;?\x07\x1b]4;11;?\x07",
    "\x1b]4;12;?\x07\x1b]4;13;?\x07\x1b]4;14;?\x07\x1b]4;15;?\x07",
    "\x1b[c"
);

/// 1.6's `TERMINAL_QUERY_TIMEOUT_MS`.
pub const TIMEOUT: std::time::Duration = std::time::Duration::from_millis(100);

/// 18 colour replies complete a query, as DA1's does.
const REPLIES: usize = 18;

pub type Rgb = (u8, u8, u8);

/// What the terminal reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalColors {
    pub foreground: Option<Rgb>,
    pub background: Option<Rgb>,
}

/// The answers read so far, and the bytes that were not answers.
#[derive(Debug, Default)]
pub struct Replies {
    pub colors: TerminalColors,
    pub typed: Vec<u8>,
    replied: usize,
    pub done: bool,
    /// An escape sequence not complete yet.
    partial: Vec<u8>,
}

impl Replies {
    /// Take `bytes` from the terminal: OSC colour replies and DA1 are consumed, anything else
    /// is kept as typed.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut buf = std::mem::take(&mut self.partial);
        buf.extend_from_slice(bytes);
        let mut i = 0;
        while i < buf.len() {
            match sequence_at(&buf[i..]) {
                Seq::Incomplete => {
                    self.partial = buf[i..].to_vec();
                    return;
                }
                Seq::Osc(len) => {
                    self.osc(&buf[i + 2..i + len]);
                    i += len;
                }
                Seq::Da1(len) => {
                    self.done = true;
                    i += len;
                }
                Seq::Other => {
                    self.typed.push(buf[i]);
                    i += 1;
                }
            }
        }
    }

    /// What is left when the wait ends: an unfinished sequence counts as typed.
    pub fn finish(mut self) -> (TerminalColors, Vec<u8>) {
        self.typed.append(&mut self.partial);
        (self.colors, self.typed)
    }

    fn osc(&mut self, body: &[u8]) {
        let body = String::from_utf8_lossy(body);
        let body = body
            .trim_end_matches(['\x07', '\\'])
            .trim_end_matches('\x1b');
        let Some((target, value)) = body.split_once(';') else {
            return;
        };
        let (target, value) = match target {
            "4" => match value.split_once(';') {
                Some((_, v)) => ("4", v),
                None => return,
            },
            t => (t, value),
        };
        self.replied += 1;
        let rgb = parse_color(value);
        match target {
            "10" => self.colors.foreground = rgb,
            "11" => self.colors.background = rgb,
            _ => {}
        }
        if self.replied >= REPLIES {
            self.done = true;
        }
    }
}

enum Seq {
    Osc(usize),
    Da1(usize),
    Other,
    Incomplete,
}

/// What starts at `b`: an OSC 4/10/11 reply (its length), a DA1 reply, or anything else.
fn sequence_at(b: &[u8]) -> Seq {
    if b[0] != 0x1b {
        return Seq::Other;
    }
    if b.len() < 2 {
        return Seq::Incomplete;
    }
    match b[1] {
        b']' => {
            let body = &b[2..];
            let is_color = [&b"10;"[..], b"11;", b"4;"]
                .iter()
                .any(|p| body.starts_with(p) || p.starts_with(&body[..body.len().min(p.len())]));
            if !is_color {
                return Seq::Other;
            }
            for (j, c) in body.iter().enumerate() {
                if *c == 0x07 {
                    return Seq::Osc(2 + j + 1);
                }
                if *c == b'\\' && j > 0 && body[j - 1] == 0x1b {
                    return Seq::Osc(2 + j + 1);
                }
            }
            Seq::Incomplete
        }
        b'[' => {
            let rest = &b[2..];
            if rest.is_empty() {
                return Seq::Incomplete;
            }
            if rest[0] != b'?' {
                return Seq::Other;
            }
            for (j, c) in rest.iter().enumerate().skip(1) {
                match c {
                    b'c' => return Seq::Da1(2 + j + 1),
                    b'0'..=b'9' | b';' => {}
                    _ => return Seq::Other,
                }
            }
            Seq::Incomplete
        }
        _ => Seq::Other,
    }
}

/// 1.6's `parseOscColorValue`: `#rrggbb`, `#rrrrggggbbbb`, or `rgb:r/g/b` with 1–4 hex digits
/// a channel, scaled to 0–255.
fn parse_color(raw: &str) -> Option<Rgb> {
    let v = raw.trim();
    let channel = |s: &str| -> Option<u8> {
        if s.is_empty() || s.len() > 4 || !s.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let max = 16f64.powi(s.len() as i32) - 1.0;
        let n = u32::from_str_radix(s, 16).ok()? as f64;
        Some((n / max * 255.0).round() as u8)
    };
    if let Some(hex) = v.strip_prefix('#') {
        let step = match hex.len() {
            6 => 2,
            12 => 4,
            _ => return None,
        };
        return Some((
            channel(&hex[..step])?,
            channel(&hex[step..2 * step])?,
            channel(&hex[2 * step..])?,
        ));
    }
    let v = v
        .strip_prefix("rgba:")
        .or_else(|| v.strip_prefix("rgb:"))
        .unwrap_or(v);
    let mut parts = v.split('/');
    Some((
        channel(parts.next()?)?,
        channel(parts.next()?)?,
        channel(parts.next()?)?,
    ))
}

fn relative_luminance((r, g, b): Rgb) -> f64 {
    let linear = |c: u8| {
        let v = f64::from(c) / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
}

fn contrast(a: Rgb, b: Rgb) -> f64 {
    let (x, y) = (relative_luminance(a), relative_luminance(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

fn lightness((r, g, b): Rgb) -> f64 {
    let srgb = Srgb::new(r, g, b).into_format::<f64>();
    Oklab::from_color(srgb.into_linear()).l
}

/// 1.6's `terminalAppearance`: the direction of the terminal's own foreground when text can
/// be readable that way (WCAG 4.5), otherwise dark when white text has more contrast on the
/// background than black text.
pub fn appearance(background: Rgb, foreground: Option<Rgb>) -> Appearance {
    let white = contrast((255, 255, 255), background);
    let black = contrast((0, 0, 0), background);
    if let Some(fg) = foreground {
        let (fl, bl) = (lightness(fg), lightness(background));
        if (fl - bl).abs() > 0.05 {
            let (dark, best) = if fl > bl {
                (true, white)
            } else {
                (false, black)
            };
            if best >= 4.5 {
                return if dark {
                    Appearance::Dark
                } else {
                    Appearance::Light
                };
            }
        }
    }
    if white >= black {
        Appearance::Dark
    } else {
        Appearance::Light
    }
}

/// The keys in bytes typed while the answers were awaited: characters, Enter, Tab,
/// Backspace, Esc, Ctrl+letter and the arrow, Home, End and Delete keys (anything longer
/// typed in those 100 ms arrives as its characters).
pub fn typed_keys(bytes: &[u8]) -> Vec<Event> {
    let key = |code, mods| Event::Key(KeyEvent::new(code, mods));
    let text = String::from_utf8_lossy(bytes);
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let rest: String = chars.clone().collect();
        if c == '\x1b' && rest.starts_with("[200~") {
            // A bracketed paste: the text up to its end marker, as one paste.
            let body = &rest[5..];
            let (pasted, len) = match body.find("\x1b[201~") {
                Some(end) => (&body[..end], 5 + end + 6),
                None => (body, rest.len()),
            };
            out.push(Event::Paste(pasted.to_string()));
            for _ in 0..rest[..len].chars().count() {
                chars.next();
            }
            continue;
        }
        if let Some((event, len)) = (c == '\x1b').then(|| csi_u(&rest)).flatten() {
            out.push(event);
            for _ in 0..len {
                chars.next();
            }
            continue;
        }
        if c == '\x1b' && chars.peek() == Some(&'[') {
            let mut probe = chars.clone();
            probe.next();
            let code = match (probe.next(), probe.peek()) {
                (Some('A'), _) => Some((KeyCode::Up, 2)),
                (Some('B'), _) => Some((KeyCode::Down, 2)),
                (Some('C'), _) => Some((KeyCode::Right, 2)),
                (Some('D'), _) => Some((KeyCode::Left, 2)),
                (Some('H'), _) => Some((KeyCode::Home, 2)),
                (Some('F'), _) => Some((KeyCode::End, 2)),
                (Some('3'), Some('~')) => Some((KeyCode::Delete, 3)),
                _ => None,
            };
            if let Some((code, len)) = code {
                for _ in 0..len {
                    chars.next();
                }
                out.push(key(code, KeyModifiers::NONE));
                continue;
            }
        }
        out.push(match c {
            '\r' | '\n' => key(KeyCode::Enter, KeyModifiers::NONE),
            '\t' => key(KeyCode::Tab, KeyModifiers::NONE),
            '\x7f' | '\x08' => key(KeyCode::Backspace, KeyModifiers::NONE),
            '\x1b' => key(KeyCode::Esc, KeyModifiers::NONE),
            c @ '\x01'..='\x1a' => key(
                KeyCode::Char((b'a' + (c as u8) - 1) as char),
                KeyModifiers::CONTROL,
            ),
            c => key(KeyCode::Char(c), KeyModifiers::NONE),
        });
    }
    out
}

/// A kitty keyboard protocol key (`CSI code ; mods u`, which pi asks the terminal for) at the
/// start of `rest` (after the ESC): the key and the characters it takes.
fn csi_u(rest: &str) -> Option<(Event, usize)> {
    let body = rest.strip_prefix('[')?;
    let end = body.find('u')?;
    let (code, mods) = match body[..end].split_once(';') {
        Some((c, m)) => (c.parse::<u32>().ok()?, m.parse::<u8>().ok()?),
        None => (body[..end].parse::<u32>().ok()?, 1),
    };
    let bits = mods.saturating_sub(1);
    let mut m = KeyModifiers::NONE;
    for (bit, flag) in [
        (1, KeyModifiers::SHIFT),
        (2, KeyModifiers::ALT),
        (4, KeyModifiers::CONTROL),
    ] {
        if bits & bit != 0 {
            m |= flag;
        }
    }
    let code = match code {
        13 => KeyCode::Enter,
        9 => KeyCode::Tab,
        27 => KeyCode::Esc,
        127 => KeyCode::Backspace,
        c => KeyCode::Char(char::from_u32(c)?),
    };
    Some((Event::Key(KeyEvent::new(code, m)), 1 + end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_taken_and_typed_keys_kept() {
        let mut r = Replies::default();
        r.feed(b"a\x1b]11;rgb:ffff/ffff/ffff\x07b\x1b]10;rgb:00");
        assert!(!r.done);
        r.feed(b"00/0000/0000\x1b\\\x1b[?62;22c");
        assert!(r.done);
        let (colors, typed) = r.finish();
        assert_eq!(colors.background, Some((255, 255, 255)));
        assert_eq!(colors.foreground, Some((0, 0, 0)));
        assert_eq!(typed, b"ab");
    }

    #[test]
    fn colors_parse_as_1_6_parses_them() {
        assert_eq!(parse_color("#102030"), Some((16, 32, 48)));
        assert_eq!(parse_color("rgb:f/8/0"), Some((255, 136, 0)));
        assert_eq!(parse_color("rgb:zz/00/00"), None);
    }

    #[test]
    fn appearance_follows_the_background_and_foreground() {
        assert_eq!(appearance((255, 255, 255), None), Appearance::Light);
        assert_eq!(appearance((0, 0, 0), None), Appearance::Dark);
        assert_eq!(
            appearance((40, 44, 52), Some((220, 223, 228))),
            Appearance::Dark
        );
        assert_eq!(
            appearance((253, 246, 227), Some((101, 123, 131))),
            Appearance::Light
        );
    }

    #[test]
    fn typed_bytes_become_keys() {
        let keys = typed_keys(b"h\r\x03\x1b[A\x1b[3~");
        assert_eq!(keys.len(), 5);
        assert_eq!(keys[3], Event::Key(KeyCode::Up.into()));
        assert_eq!(keys[4], Event::Key(KeyCode::Delete.into()));
        assert_eq!(
            typed_keys(b"\x1b[13;2u"),
            [Event::Key(KeyEvent::new(
                KeyCode::Enter,
                KeyModifiers::SHIFT
            ))]
        );
        let pasted = typed_keys(b"\x1b[200~a\x1bb\x1b[201~x");
        assert_eq!(
            pasted,
            [
                Event::Paste("a\x1bb".into()),
                Event::Key(KeyCode::Char('x').into())
            ]
        );
        assert_eq!(
            keys[2],
            Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL))
        );
    }
}
