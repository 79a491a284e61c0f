//! What the export's tests share: sessions built from JSONL lines as a file would hold them,
//! and the check every rendered page must pass (a real HTML parser finds no error and nothing
//! that loads or runs).

use scraper::{ElementRef, Html};
use serde_json::{json, Value};

use crate::session::Session;

/// A session loaded from JSONL lines (the header first), as a file would give it.
pub(crate) fn session_of(lines: &[Value]) -> Session {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2025-02-01T10-00-00-000Z_s.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let (session, warnings) = Session::open(&path, "/w").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    session
}

pub(crate) fn header(id: &str, cwd: &str) -> Value {
    json!({"type": "session", "version": 3, "id": id, "timestamp": "2025-02-01T10:00:00.000Z", "cwd": cwd})
}

/// Entries chained by `parentId` in order, ids `e1`, `e2`, … unless given.
pub(crate) fn chain(entries: Vec<Value>) -> Vec<Value> {
    let mut parent = Value::Null;
    entries
        .into_iter()
        .enumerate()
        .map(|(i, mut e)| {
            let id = e
                .get("id")
                .cloned()
                .unwrap_or_else(|| json!(format!("e{}", i + 1)));
            e["id"] = id.clone();
            if e.get("parentId").is_none() {
                e["parentId"] = parent.clone();
            }
            if e.get("timestamp").is_none() {
                e["timestamp"] = json!(format!("2025-02-01T10:00:{:02}.000Z", i + 1));
            }
            parent = id;
            e
        })
        .collect()
}

pub(crate) fn msg(message: Value) -> Value {
    json!({"type": "message", "message": message})
}

pub(crate) fn assistant(content: Value) -> Value {
    json!({"role": "assistant", "content": content, "api": "anthropic-messages",
           "provider": "anthropic", "model": "claude-sonnet-4-5",
           "usage": {"input": 1200, "output": 85, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1285,
                     "cost": {"input": 0.0036, "output": 0.001275, "cacheRead": 0, "cacheWrite": 0, "total": 0.004875}},
           "stopReason": "toolUse", "timestamp": 1})
}

pub(crate) fn result(call: &str, tool: &str, text: &str, is_error: bool) -> Value {
    json!({"role": "toolResult", "toolCallId": call, "toolName": tool,
           "content": [{"type": "text", "text": text}], "isError": is_error, "timestamp": 1})
}

/// Parses `html` and checks that it is well-formed and self-contained: no parse error, no
/// element that runs or embeds anything, no event handler or inline style, every `src` a
/// `data:image/` URI and every `href` a `#` fragment.
pub(crate) fn parse_checked(html: &str) -> Html {
    let doc = Html::parse_document(html);
    assert!(doc.errors.is_empty(), "HTML parse errors: {:?}", doc.errors);
    for node in doc.root_element().descendants() {
        let Some(el) = ElementRef::wrap(node) else {
            continue;
        };
        let name = el.value().name();
        assert!(
            !matches!(
                name,
                "script"
                    | "iframe"
                    | "frame"
                    | "object"
                    | "embed"
                    | "link"
                    | "base"
                    | "form"
                    | "svg"
                    | "math"
                    | "audio"
                    | "video"
                    | "source"
                    | "track"
                    | "noscript"
            ),
            "a <{name}> element"
        );
        for (attr, value) in el.value().attrs() {
            assert!(!attr.starts_with("on"), "event handler {attr}={value:?}");
            match attr {
                "src" => assert!(value.starts_with("data:image/"), "src={value:?}"),
                "href" => assert!(value.starts_with('#'), "href={value:?}"),
                "http-equiv" => assert_eq!(value, "Content-Security-Policy"),
                "style" | "srcset" | "action" | "formaction" | "poster" | "background" | "ping" => {
                    panic!("attribute {attr}={value:?}")
                }
                _ => {}
            }
        }
    }
    doc
}

#[test]
fn the_checker_rejects_pages_that_load_or_run_something() {
    let page = |body: &str| {
        format!("<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>")
    };
    parse_checked(&page("<p>fine <a href=\"#x\">x</a></p>"));
    for bad in [
        "<img src=\"https://example.com/a.png\">",
        "<a href=\"https://example.com/\">x</a>",
        "<p onclick=\"x()\">x</p>",
        "<script>x()</script>",
        "<p style=\"background:url(https://example.com/)\">x</p>",
        "<p>unclosed <b>bold</p>",
    ] {
        let html = page(bad);
        let caught = std::panic::catch_unwind(|| {
            parse_checked(&html);
        });
        assert!(caught.is_err(), "not caught: {bad}");
    }
}
