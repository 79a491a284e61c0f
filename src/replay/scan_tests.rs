use proptest::prelude::*;
use serde_json::json;

use super::*;

/// Whether the scanner reads `line` as one JSON value.
fn accepts(line: &str) -> bool {
    let mut s = Scanner::new(line.as_bytes());
    s.skip().is_ok() && s.rest_is_blank().unwrap_or(false)
}

/// Whether the session loader would read `line` (serde_json into a `Value`).
fn loader_accepts(line: &str) -> bool {
    serde_json::from_str::<Value>(line).is_ok()
}

#[test]
fn accepts_what_serde_json_accepts() {
    let cases = [
        r#"{"a": [1, -2.5e3, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"]}"#,
        r#"  {"type":"message" , "id" : "a1"}	"#,
        "[]",
        "{}",
        "0",
        "-0",
        "1E+2",
        r#""é😀""#,
        "01",
        "1.",
        ".5",
        "-",
        "1e",
        "1e400",
        "-1e400",
        "1e-400",
        "tru",
        "nul",
        "[1,]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{1: 2}",
        "[1 2]",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"tab\there\"",
        "{} {}",
        "[] x",
        "\"unterminated",
        "{\"a\":",
    ];
    for c in cases {
        assert_eq!(accepts(c), loader_accepts(c), "{c:?}");
    }
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    for n in [126, 127, 128, 129] {
        assert_eq!(accepts(&deep(n)), loader_accepts(&deep(n)), "depth {n}");
    }
}

#[test]
fn strings_are_kept_up_to_the_cap_in_whole_characters() {
    let read = |text: &str, cap: usize| Scanner::new(text.as_bytes()).string(cap).unwrap();
    assert_eq!(
        read(r#""Blocked by hook""#, 7),
        Capped {
            text: "Blocked".into(),
            whole: false
        }
    );
    assert!(read(r#""message""#, 16).is("message"));
    assert!(!read(r#""messages""#, 7).is("message"));
    // Escapes are decoded; a character that does not fit ends the prefix.
    assert_eq!(read(r#""\u0042locked""#, 16).text, "Blocked");
    assert_eq!(read(r#""aé""#, 2).text, "a");
    assert_eq!(read(r#""a\u00e9b""#, 2).text, "a");
    assert!(read(r#""""#, 0).is(""));
    assert!(!read(r#""x""#, 0).whole);
}

#[test]
fn objects_arrays_and_values_are_read_in_order_across_lines() {
    let text = "{\"k\": {\"args\": [1, {\"x\": \"y\"}]}, \"long_key_that_is_longer_than_the_cap_of_keys\": 2}\n\n[true]\n";
    let mut s = Scanner::new(text.as_bytes());
    let mut seen = Vec::new();
    s.object(|s, key| {
        if key.is("k") {
            s.object(|s, _| {
                seen.push(s.value()?);
                Ok(())
            })
        } else {
            assert!(!key.whole, "{key:?}");
            s.skip()
        }
    })
    .unwrap();
    assert_eq!(seen, [json!([1, {"x": "y"}])]);
    assert!(s.rest_is_blank().unwrap());
    s.finish_line().unwrap();
    assert!(s.rest_is_blank().unwrap(), "a blank line");
    s.finish_line().unwrap();
    let mut flags = Vec::new();
    s.array(|s| {
        flags.push(s.bool()?);
        Ok(())
    })
    .unwrap();
    assert_eq!(flags, [Some(true)]);
    s.finish_line().unwrap();
    assert!(s.at_end().unwrap());
}

#[test]
fn a_line_that_fails_is_skipped_to_its_end() {
    let mut s = Scanner::new("{\"a\": [1, 2 oops], \"b\": 3}\n\"next\"\n".as_bytes());
    assert!(s.skip().is_err());
    s.finish_line().unwrap();
    assert_eq!(s.string(16).unwrap().text, "next");
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e300f64..1e300).prop_map(|f| json!(f)),
        "[a-z\"\\\\\u{0}-\u{1f}é😀 ]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z\"é]{0,6}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Any text (one line of it): the scanner reads it exactly when the loader does.
    #[test]
    fn reads_a_line_exactly_when_serde_json_does(
        line in "[{}\\[\\]\":,0-9eE+.\\-truefalsn \\\\/ubdcx\t\u{1}é]{0,40}"
    ) {
        prop_assert_eq!(accepts(&line), loader_accepts(&line), "{:?}", line);
    }

    /// Every JSON value is read back as it was written.
    #[test]
    fn reads_back_every_value(v in json_value()) {
        let text = v.to_string();
        let mut s = Scanner::new(text.as_bytes());
        prop_assert_eq!(s.value().unwrap(), v);
        prop_assert!(s.rest_is_blank().unwrap());
    }
}
