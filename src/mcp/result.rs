//! An MCP `tools/call` result, as the wire has it, turned into what pi's tools return: text and
//! images for the model, the rest in `details` for UIs and sessions. Working on the wire JSON
//! (not rmcp's types) keeps this independent of the SDK's model churn and testable with the
//! exact bytes servers send.
//!
//! - `text` blocks are joined; over 20 KB the middle is cut (see [`super::cut`]).
//! - `image` blocks stay images; `audio` becomes a line saying what was left out.
//! - `resource` (embedded) gives its text, or a line naming a binary resource.
//! - `resource_link` becomes a line with its URI, so the model can `read_mcp_resource` it.
//! - `structuredContent` is shown as JSON text when the server sent no text of its own (a
//!   server with an `outputSchema` may send only that), and kept whole in `details`.
//! - `isError: true` makes the call fail with the same content.

use serde_json::{json, Value};

use super::cut;
use crate::message::Content;
use crate::tools::{ToolError, ToolOutput};

/// The tool result for `result` (the `tools/call` result object).
pub fn convert(server: &str, tool: &str, result: &Value) -> Result<ToolOutput, ToolError> {
    let mut content: Vec<Content> = Vec::new();
    let mut text = String::new();
    let push_text = |text: &mut String, s: &str| {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(s);
    };
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut images = Vec::new();
    for b in blocks {
        match b.get("type").and_then(Value::as_str).unwrap_or("") {
            "image" => images.push(Content::Image {
                data: str_of(b, "data").to_string(),
                mime_type: b
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("image/png")
                    .to_string(),
            }),
            kind => push_text(&mut text, &block_text(kind, b)),
        }
    }
    let structured = result.get("structuredContent").filter(|v| !v.is_null());
    if text.is_empty() {
        if let Some(s) = structured {
            text = serde_json::to_string_pretty(s).unwrap_or_default();
        }
    }
    if !text.is_empty() || images.is_empty() {
        content.push(Content::text(cut::middle_cut(&text)));
    }
    content.extend(images);
    let mut details = json!({"server": server, "tool": tool});
    if let Some(s) = structured {
        details["structuredContent"] = s.clone();
    }
    let links: Vec<&Value> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("resource_link"))
        .collect();
    if !links.is_empty() {
        details["resourceLinks"] = json!(links);
    }
    let out = ToolOutput {
        content,
        details: Some(details),
        structured_content: structured.cloned(),
        ..Default::default()
    };
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(ToolError::FailedWithOutput(Box::new(out)));
    }
    Ok(out)
}

/// What the model reads of a block that is not an image: its text, or a line saying what it
/// is and where it can be had.
fn block_text<'a>(kind: &str, b: &'a Value) -> std::borrow::Cow<'a, str> {
    let mime = |v: &'a Value| {
        v.get("mimeType")
            .and_then(Value::as_str)
            .unwrap_or("unknown type")
    };
    match kind {
        "text" => str_of(b, "text").into(),
        "audio" => format!(
            "[audio ({}) returned by the tool; pi cannot pass audio to the model]",
            mime(b)
        )
        .into(),
        "resource" => {
            let r = b.get("resource").unwrap_or(&Value::Null);
            match r.get("text").and_then(Value::as_str) {
                Some(t) => t.into(),
                None => format!("[binary resource {} ({})]", str_of(r, "uri"), mime(r)).into(),
            }
        }
        "resource_link" => {
            let name = b.get("name").and_then(Value::as_str).unwrap_or("");
            let mut line = format!("[resource link: {}", str_of(b, "uri"));
            if !name.is_empty() {
                line.push_str(&format!(" ({name})"));
            }
            if let Some(d) = b.get("description").and_then(Value::as_str) {
                line.push_str(&format!(" — {d}"));
            }
            line.push(']');
            line.into()
        }
        other => format!("[content of type {other:?} left out]").into(),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::text_of;

    fn ok(v: Value) -> ToolOutput {
        convert("everything", "t", &v).expect("ok")
    }

    #[test]
    fn text_blocks_are_joined() {
        let out =
            ok(json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}));
        assert_eq!(text_of(&out.content), "a\nb");
    }

    #[test]
    fn images_stay_images_after_the_text() {
        let out = ok(json!({"content": [
            {"type": "text", "text": "here"},
            {"type": "image", "data": "iVBOR", "mimeType": "image/png"}
        ]}));
        assert_eq!(out.content.len(), 2);
        assert!(
            matches!(&out.content[1], Content::Image { data, mime_type } if data == "iVBOR" && mime_type == "image/png")
        );
        let only =
            ok(json!({"content": [{"type": "image", "data": "x", "mimeType": "image/gif"}]}));
        assert_eq!(
            only.content.len(),
            1,
            "no empty text block before a lone image"
        );
    }

    #[test]
    fn structured_content_alone_is_shown_as_json_and_kept_in_details() {
        let out = ok(json!({"content": [], "structuredContent": {"temperature": 21.5}}));
        assert!(text_of(&out.content).contains("\"temperature\": 21.5"));
        assert_eq!(
            out.details.unwrap()["structuredContent"]["temperature"],
            21.5
        );
    }

    #[test]
    fn resource_links_and_embedded_resources_become_lines() {
        let out = ok(json!({"content": [
            {"type": "resource_link", "uri": "test://static/resource/1", "name": "Resource 1"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAA=", "mimeType": "application/octet-stream"}}
        ]}));
        let text = text_of(&out.content);
        assert!(
            text.contains("[resource link: test://static/resource/1 (Resource 1)]"),
            "{text}"
        );
        assert!(text.contains("inside"));
        assert!(text.contains("[binary resource file:///b.bin (application/octet-stream)]"));
        assert_eq!(
            out.details.unwrap()["resourceLinks"][0]["name"],
            "Resource 1"
        );
    }

    #[test]
    fn is_error_fails_the_call_with_its_content() {
        let err = convert(
            "s",
            "t",
            &json!({"content": [{"type": "text", "text": "bad input"}], "isError": true}),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "bad input");
    }

    #[test]
    fn long_text_is_cut_in_the_middle() {
        let long = "z".repeat(cut::LIMIT * 2);
        let out = ok(json!({"content": [{"type": "text", "text": long}]}));
        let text = text_of(&out.content);
        assert!(text.len() < cut::LIMIT + 400);
        assert!(text.contains("bytes cut from the middle"));
    }
}
