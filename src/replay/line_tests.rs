//! The streamed reading of session lines against the loader: for any lines — well formed,
//! damaged, with keys repeated or reordered, of format v1, v2 or v3 — it finds exactly the calls
//! and results that loading the file and reading its messages finds (the way replay read
//! sessions before it streamed them).

use std::collections::HashMap;

use proptest::prelude::*;
use serde_json::{json, Value};

use super::super::calls::{read_lines, Recorded};
use super::*;
use crate::session::entry::content_text;
use crate::session::load::load_reader;

/// What loading the whole file finds: the calls in order and the result of each id.
fn by_loader(text: &str) -> (Vec<Call>, HashMap<String, Recorded>) {
    let loaded = load_reader(text.as_bytes())
        .expect("loads")
        .expect("not empty");
    let mut calls = Vec::new();
    let mut results = HashMap::new();
    for entry in &loaded.entries {
        let Some(m) = entry.message() else { continue };
        let v = m.to_value();
        match m.role() {
            "assistant" => {
                for block in v
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if block.get("type").and_then(Value::as_str) != Some("toolCall") {
                        continue;
                    }
                    let (Some(id), Some(name)) = (
                        block.get("id").and_then(Value::as_str),
                        block.get("name").and_then(Value::as_str),
                    ) else {
                        continue;
                    };
                    let input = arguments_of(block.get("arguments").cloned());
                    calls.push((id.to_string(), name.to_string(), input));
                }
            }
            "toolResult" => {
                let Some(id) = v.get("toolCallId").and_then(Value::as_str) else {
                    continue;
                };
                let is_error = v.get("isError").and_then(Value::as_bool).unwrap_or(false);
                let recorded = if !is_error {
                    Recorded::Ok
                } else if content_text(v.get("content")).starts_with("Blocked") {
                    Recorded::Blocked
                } else {
                    Recorded::Error
                };
                results.insert(id.to_string(), recorded);
            }
            _ => {}
        }
    }
    (calls, results)
}

/// What streaming the lines after the header finds.
fn streamed(text: &str, version: u32) -> (Vec<Call>, HashMap<String, Recorded>) {
    let body = text.split_once('\n').map_or("", |(_, rest)| rest);
    read_lines(body.as_bytes(), version).expect("reads")
}

fn header(version: u32) -> String {
    json!({"type": "session", "version": version, "id": "s", "timestamp": "t", "cwd": "/p"})
        .to_string()
}

#[test]
fn reads_calls_results_and_skips_what_the_loader_skips() {
    let lines = [
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}},{"type":"toolCall","id":"c2","name":"write","arguments":"{\"path\":\"/x\"}"},{"type":"toolCall","id":"c3","name":"bash","arguments":"not json"},{"name":"read","type":"toolCall","id":"c4"}]}}"#,
        r#"{"type":"message","id":"r1","parentId":"a1","message":{"role":"toolResult","toolCallId":"c1","content":[{"type":"text","text":"a"}],"isError":false}}"#,
        r#"{"type":"message","id":"r2","parentId":"r1","message":{"role":"toolResult","toolCallId":"c2","content":"Blocked by hook g","isError":true}}"#,
        r#"{"type":"message","id":"r3","parentId":"r2","message":{"isError":true,"content":[{"type":"image"},{"text":"Blocked: no","type":"text"}],"toolCallId":"c3","role":"toolResult"}}"#,
        // Damaged or not entries: skipped by both.
        r#"{"type":"message","parentId":"r3","message":{"role":"toolResult","toolCallId":"c4","isError":false}}"#,
        r#"{"type":"message","id":"x","timestamp":null,"message":{"role":"assistant","content":[{"type":"toolCall","id":"bad","name":"bash"}]}}"#,
        r#"{"type":"message","id":"y","message":{"role":"assistant","content":[{"type":"toolCall","id":"trailing","name":"bash"}]}} {}"#,
        r#"{"type":"session","id":"z","message":{"role":"assistant","content":[{"type":"toolCall","id":"hdr","name":"bash"}]}}"#,
        "",
        "   ",
        "[1, 2]",
        r#"{"type":"message","id":"cut","message":{"role":"assistant","content":[{"type":"toolCall","id":"cut","name":"bash""#,
    ];
    for version in [1, 2, 3] {
        let text = format!("{}\n{}\n", header(version), lines.join("\n"));
        let (calls, results) = streamed(&text, version);
        assert_eq!(
            (calls.clone(), results.clone()),
            by_loader(&text),
            "v{version}"
        );
        let ids: Vec<&str> = calls.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(ids, ["c1", "c2", "c3", "c4"], "v{version}");
        assert_eq!(calls[1].2, json!({"path": "/x"}));
        assert_eq!(calls[2].2, json!("not json"));
        assert_eq!(calls[3].2, json!({}));
        assert_eq!(results["c2"], Recorded::Blocked);
        assert_eq!(results["c3"], Recorded::Blocked);
        // v1 entries need no id: only there does the result without one count.
        assert_eq!(results.contains_key("c4"), version < 2, "v{version}");
    }
}

/// `"key": value`, or nothing (the key absent), picked with weights.
fn pick(key: &'static str, values: Vec<(u32, &'static str)>) -> BoxedStrategy<Option<String>> {
    let arms: Vec<(u32, BoxedStrategy<Option<String>>)> = values
        .into_iter()
        .map(|(w, v)| {
            let m = (!v.is_empty()).then(|| format!("\"{key}\":{v}"));
            (w, Just(m).boxed())
        })
        .collect();
    prop::strategy::Union::new_weighted(arms).boxed()
}

/// An object of the given members in any order, some of them perhaps given twice.
fn object(members: Vec<BoxedStrategy<Option<String>>>) -> BoxedStrategy<String> {
    (
        members,
        prop::collection::vec(any::<prop::sample::Index>(), 0..2),
    )
        .prop_flat_map(|(members, twice)| {
            let mut m: Vec<String> = members.into_iter().flatten().collect();
            if !m.is_empty() {
                let again: Vec<String> =
                    twice.iter().map(|i| m[i.index(m.len())].clone()).collect();
                m.extend(again);
            }
            Just(m).prop_shuffle()
        })
        .prop_map(|m| format!("{{{}}}", m.join(",")))
        .boxed()
}

fn block() -> BoxedStrategy<String> {
    let members = vec![
        pick(
            "type",
            vec![
                (6, "\"toolCall\""),
                (3, "\"text\""),
                (1, "\"image\""),
                (1, "3"),
                (1, ""),
            ],
        ),
        pick("id", vec![(4, "\"c1\""), (4, "\"c2\""), (1, "5"), (1, "")]),
        pick("name", vec![(6, "\"bash\""), (1, "null"), (1, "")]),
        pick(
            "arguments",
            vec![
                (3, r#"{"command":"ls"}"#),
                (2, r#""{\"path\":\"x\"}""#),
                (1, r#""oops""#),
                (1, "[1]"),
                (2, ""),
            ],
        ),
        pick(
            "text",
            vec![
                (3, "\"Blocked by hook\""),
                (2, "\"Block\""),
                (2, "\"fine\""),
                (1, "7"),
                (2, ""),
            ],
        ),
    ];
    prop_oneof![9 => object(members), 1 => Just("\"a string block\"".to_string())].boxed()
}

fn message() -> BoxedStrategy<String> {
    let content = prop_oneof![
        6 => prop::collection::vec(block(), 0..4).prop_map(|b| format!("[{}]", b.join(","))),
        1 => Just(r#""Blocked: no""#.to_string()),
        1 => Just(r#""fine""#.to_string()),
        1 => Just("null".to_string()),
    ]
    .prop_map(|c| Some(format!("\"content\":{c}")));
    let members = vec![
        pick(
            "role",
            vec![
                (4, "\"assistant\""),
                (4, "\"toolResult\""),
                (1, "\"user\""),
                (1, "3"),
                (1, ""),
            ],
        ),
        prop_oneof![6 => content, 1 => Just(None)].boxed(),
        pick(
            "toolCallId",
            vec![(4, "\"c1\""), (4, "\"c2\""), (1, "4"), (1, "")],
        ),
        pick(
            "isError",
            vec![(3, "true"), (3, "false"), (1, "\"yes\""), (1, "")],
        ),
        pick(
            "usage",
            vec![(1, r#"{"input":1,"cost":{"total":0.5}}"#), (3, "")],
        ),
    ];
    object(members)
}

/// A session line: mostly well-formed entries, some of another kind, some damaged.
fn session_line() -> impl Strategy<Value = String> {
    let message = prop_oneof![
        8 => message().prop_map(|m| Some(format!("\"message\":{m}"))),
        1 => Just(Some(r#""message":"not an object""#.to_string())),
        1 => Just(None),
    ]
    .boxed();
    let members = vec![
        pick(
            "type",
            vec![
                (8, "\"message\""),
                (1, "\"custom\""),
                (1, "\"session\""),
                (1, "5"),
                (1, ""),
            ],
        ),
        pick("id", vec![(8, "\"e1\""), (1, "null"), (1, "3"), (1, "")]),
        pick(
            "parentId",
            vec![(4, "\"e0\""), (2, "null"), (1, "[]"), (2, "")],
        ),
        pick(
            "timestamp",
            vec![
                (4, "\"2025-01-01T00:00:00Z\""),
                (1, "null"),
                (1, "1"),
                (2, ""),
            ],
        ),
        message,
    ];
    (
        object(members),
        prop_oneof![8 => Just(""), 1 => Just(" trailing"), 1 => Just("cut")],
    )
        .prop_map(|(line, damage)| match damage {
            "cut" => line[..line.len() / 2].to_string(),
            d => format!("{line}{d}"),
        })
}

proptest! {
    #[test]
    fn streaming_finds_what_loading_finds(
        version in 1u32..=3,
        lines in prop::collection::vec(session_line(), 0..8),
        last_newline in any::<bool>(),
    ) {
        let mut text = format!("{}\n{}", header(version), lines.join("\n"));
        if last_newline {
            text.push('\n');
        }
        prop_assert_eq!(streamed(&text, version), by_loader(&text), "{}", text);
    }
}
