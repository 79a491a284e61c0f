//! JSON that is safe to print where a terminal may read it (`pi mcp list --json`, `--mode
//! json`, RPC). serde_json escapes `"`, `\` and C0 controls but writes DEL, the C1 controls
//! (U+0080–U+009F: U+009B is a CSI to many terminals) and bidi overrides as they are; this
//! formatter writes those as `\uXXXX` too. The data is the same JSON value — any JSON reader
//! decodes it identically — but no byte of it makes a terminal act.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

/// Whether `c` is written as `\uXXXX` on top of serde_json's own escapes.
fn escaped(c: char) -> bool {
    matches!(c, '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every [`escaped`] character written as `\uXXXX`. Used for string fragments and
/// for raw JSON fragments alike: in valid JSON such characters can only occur inside strings,
/// where the escape means the same character.
fn write_escaped<W: ?Sized + io::Write>(w: &mut W, text: &str) -> io::Result<()> {
    // Every escaped character is DEL or starts with byte C2 or E2: most text has none.
    if memchr::memchr3(0x7f, 0xc2, 0xe2, text.as_bytes()).is_none() {
        return w.write_all(text.as_bytes());
    }
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if escaped(c) {
            w.write_all(&text.as_bytes()[start..i])?;
            write!(w, "\\u{:04x}", c as u32)?;
            start = i + c.len_utf8();
        }
    }
    w.write_all(&text.as_bytes()[start..])
}

/// A serde_json [`Formatter`] that escapes what [`escaped`] names, around compact or pretty
/// layout (`F`).
pub struct Safe<F>(F);

macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $name<W: ?Sized + io::Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            self.0.$name(w $(, $arg)*)
        })*
    };
}

impl<F: Formatter> Formatter for Safe<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_escaped(w, fragment)
    }

    fn write_raw_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_escaped(w, fragment)
    }

    /// Numbers as JavaScript prints them (`0.000003`, not `3e-6`; `2`, not `2.0`): what goes
    /// out in JSON mode and RPC must read as pi 1.6's, and a value that passed through a
    /// `serde_json::Value` has lost the layout its type chose.
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        if value.is_finite() {
            w.write_all(crate::message::js_number_text(value).as_bytes())
        } else {
            self.0.write_f64(w, value)
        }
    }

    forward! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        end_object_key();
        begin_object_value();
        end_object_value();
    }
}

fn write_with<T: ?Sized + Serialize, F: Formatter>(value: &T, f: F) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Safe(f));
    value.serialize(&mut ser)?;
    // The serializer writes UTF-8 only (it is given `&str`s and escapes); a failure here
    // would be a serde_json bug, reported as its own error type rather than a panic.
    String::from_utf8(out).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

/// `value` as one line of terminal-safe JSON.
pub fn to_string<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    write_with(value, CompactFormatter)
}

/// `value` as indented terminal-safe JSON (what `{:#}` prints for a `Value`).
pub fn to_string_pretty<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    write_with(value, PrettyFormatter::new())
}

/// `value` appended to `out` as one line of terminal-safe JSON.
pub fn to_writer<W: io::Write, T: ?Sized + Serialize>(out: W, value: &T) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, Safe(CompactFormatter));
    value.serialize(&mut ser)
}

/// A JSON value as one terminal-safe line, for printing. Serialising a `Value` cannot fail
/// (its keys are strings, its numbers finite), so there is no error to pass on.
pub fn line(v: &serde_json::Value) -> String {
    to_string(v).unwrap_or_default()
}

/// A JSON value indented, terminal-safe (what `{:#}` prints).
pub fn pretty(v: &serde_json::Value) -> String {
    to_string_pretty(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn c1_del_and_bidi_are_escaped_and_the_value_is_the_same() {
        let v = json!({"k\u{9b}": ["a\u{9b}2J\u{7f}\u{202e}b", "\u{1b}]0;x\u{7}", "é日"]});
        for s in [to_string(&v).unwrap(), to_string_pretty(&v).unwrap()] {
            assert!(
                !s.chars().any(|c| c.is_control() && c != '\n' || escaped(c)),
                "{s:?}"
            );
            assert!(s.contains("\\u009b") && s.contains("é日"), "{s}");
            assert_eq!(serde_json::from_str::<Value>(&s).unwrap(), v);
        }
        assert_eq!(
            to_string_pretty(&v).unwrap().lines().count(),
            format!("{v:#}").lines().count()
        );
        // Without anything to escape, the bytes are serde_json's own.
        let clean = json!({"a": [1, "é\u{1b}", {"b": null}], "c": {}});
        assert_eq!(to_string(&clean).unwrap(), clean.to_string());
        assert_eq!(to_string_pretty(&clean).unwrap(), format!("{clean:#}"));
    }

    #[test]
    fn numbers_are_laid_out_as_javascript_prints_them() {
        let v = json!([3e-6, 0.0000075, 2.0, 0.0004155, 1e21, 0.5]);
        assert_eq!(
            to_string(&v).unwrap(),
            "[0.000003,0.0000075,2,0.0004155,1e+21,0.5]"
        );
    }

    #[test]
    fn raw_values_are_escaped_too() {
        let raw = serde_json::value::RawValue::from_string("{\"t\":\"x\u{9b}y\"}".into()).unwrap();
        let s = to_string(&raw).unwrap();
        assert_eq!(s, "{\"t\":\"x\\u009by\"}");
        let v: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["t"], "x\u{9b}y");
    }
}
