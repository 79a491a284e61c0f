//! pi's session entries as the lines of a Claude Code transcript: pure rules, no I/O.
//!
//! Claude Code writes one JSON object per line: `user` and `assistant` records whose `message`
//! is the Anthropic API message, and common fields around it (`uuid`, `parentUuid` chaining
//! each record to the one before, `sessionId`, `timestamp`, `cwd`, `isSidechain`, `userType`,
//! `version`). It writes an assistant message one content block per record, all with the same
//! `message.id` and `usage`, and a tool's result as a `user` record holding a `tool_result`
//! block; hooks that read the transcript (the last assistant text, the calls made so far,
//! token counts) depend on exactly that shape, so it is reproduced here, tools named as
//! Claude Code names them (`names`). Entries with nothing for the model (labels, model
//! changes, hook data) write no line; a compaction's summary is a `user` record marked
//! `isCompactSummary`, and an extension's message a `user` record marked `isMeta`.

use std::path::Path;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::super::names::{self, McpOrigins};
use crate::message::{
    AssistantMessage, Content, Message, StopReason, ToolResultMessage, UserContent,
};
use crate::session::{AgentMessage, Entry, EntryKind};

/// What every record of one transcript shares.
pub struct View<'a> {
    pub session_id: &'a str,
    pub cwd: &'a Path,
    /// Where MCP tools come from, for their Claude Code names.
    pub mcp: &'a dyn McpOrigins,
}

/// The id of the `index`th record written for `entry_id`: a UUID, as Claude Code's are, and
/// the same each time the transcript is rebuilt, so a hook that kept one still finds it.
pub fn record_uuid(session_id: &str, entry_id: &str, index: usize) -> String {
    let digest = Sha256::new()
        .chain_update(session_id.as_bytes())
        .chain_update([0])
        .chain_update(entry_id.as_bytes())
        .chain_update(index.to_le_bytes())
        .finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .to_string()
}

/// The records of `entry`, the first one's parent `parent`; each later one's parent is the
/// record before it. None for an entry the model never sees.
pub fn records(view: &View, entry: &Entry, parent: Option<&str>) -> Vec<Value> {
    let bodies = bodies(view, entry);
    let mut parent = parent.map(str::to_string);
    let mut out = Vec::with_capacity(bodies.len());
    for (i, body) in bodies.into_iter().enumerate() {
        let uuid = record_uuid(view.session_id, &entry.id, i);
        let mut r = Map::new();
        r.insert("parentUuid".into(), json!(parent));
        r.insert("isSidechain".into(), json!(false));
        r.insert("userType".into(), json!("external"));
        r.insert("cwd".into(), json!(view.cwd.display().to_string()));
        r.insert("sessionId".into(), json!(view.session_id));
        r.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
        r.extend(body);
        r.insert("uuid".into(), json!(uuid));
        r.insert("timestamp".into(), json!(entry.timestamp));
        parent = Some(uuid);
        out.push(Value::Object(r));
    }
    out
}

/// Each record's own fields (`type`, `message`, markers), in order.
fn bodies(view: &View, entry: &Entry) -> Vec<Map<String, Value>> {
    match &entry.kind {
        EntryKind::Message(m) => match &m.message {
            AgentMessage::Typed(msg) => message(view, &entry.id, msg),
            AgentMessage::Raw(v) => match serde_json::from_value::<Message>(v.clone()) {
                Ok(msg) => message(view, &entry.id, &msg),
                Err(_) => Vec::new(),
            },
        },
        EntryKind::CustomMessage(c) => {
            let content = serde_json::from_value::<UserContent>(c.content.clone())
                .map_or(Value::Null, |u| user_content(&u));
            vec![user(content, &[("isMeta", true)])]
        }
        EntryKind::Compaction(c) => vec![user(json!(c.summary), &[("isCompactSummary", true)])],
        EntryKind::BranchSummary(b) => vec![user(json!(b.summary), &[("isMeta", true)])],
        _ => Vec::new(),
    }
}

fn message(view: &View, entry_id: &str, msg: &Message) -> Vec<Map<String, Value>> {
    match msg {
        Message::User(u) => vec![user(user_content(&u.content), &[])],
        Message::Custom(c) => vec![user(user_content(&c.content), &[("isMeta", true)])],
        Message::ToolResult(r) => vec![user(json!([tool_result(r)]), &[])],
        Message::Assistant(a) => assistant(view, entry_id, a),
        // Claude Code's transcript has no system records; the prompt is not in it.
        Message::System(_) => Vec::new(),
    }
}

fn user(content: Value, marks: &[(&str, bool)]) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), json!("user"));
    m.insert(
        "message".into(),
        json!({"role": "user", "content": content}),
    );
    for (k, v) in marks {
        m.insert((*k).into(), json!(v));
    }
    m
}

/// Text is a string, as Claude Code writes a typed prompt (pi keeps a prompt as blocks);
/// with images, Anthropic's text and image blocks.
fn user_content(c: &UserContent) -> Value {
    match c {
        UserContent::Text(s) => json!(s),
        UserContent::Blocks(b) if b.iter().all(|c| matches!(c, Content::Text { .. })) => {
            json!(crate::message::text_of(b))
        }
        UserContent::Blocks(b) => Value::Array(b.iter().filter_map(block).collect()),
    }
}

/// A text or image block in the API's shape (tool calls and thinking are the assistant's).
fn block(c: &Content) -> Option<Value> {
    match c {
        Content::Text { text, .. } => Some(json!({"type": "text", "text": text})),
        Content::Image { data, mime_type } => Some(json!({"type": "image",
            "source": {"type": "base64", "media_type": mime_type, "data": data}})),
        Content::Thinking { .. } | Content::ToolCall(_) => None,
    }
}

/// A tool's result; all-text content is one string, as Claude Code writes most results.
fn tool_result(r: &ToolResultMessage) -> Value {
    let all_text = r.content.iter().all(|c| matches!(c, Content::Text { .. }));
    let content = if all_text {
        json!(crate::message::text_of(&r.content))
    } else {
        Value::Array(r.content.iter().filter_map(block).collect())
    };
    json!({"tool_use_id": r.tool_call_id, "type": "tool_result", "content": content,
           "is_error": r.is_error})
}

/// One record per content block, as Claude Code streams them; a failed request with no
/// content is the API error Claude Code records in its place.
fn assistant(view: &View, entry_id: &str, a: &AssistantMessage) -> Vec<Map<String, Value>> {
    // Without the provider's id, one derived from the entry: the same for all its blocks.
    let id = a.response_id.clone().unwrap_or_else(|| {
        format!(
            "msg_{}",
            record_uuid(view.session_id, entry_id, usize::MAX).replace('-', "")
        )
    });
    let stop = match a.stop_reason {
        StopReason::Stop => json!("end_turn"),
        StopReason::ToolUse => json!("tool_use"),
        StopReason::Length => json!("max_tokens"),
        StopReason::Pending | StopReason::Error | StopReason::Aborted => Value::Null,
    };
    let usage = json!({
        "input_tokens": a.usage.input,
        "output_tokens": a.usage.output,
        "cache_read_input_tokens": a.usage.cache_read,
        "cache_creation_input_tokens": a.usage.cache_write,
    });
    let mut blocks: Vec<Value> = a.content.iter().map(|c| assistant_block(view, c)).collect();
    let api_error = blocks.is_empty() && a.error_message.is_some();
    if let (true, Some(e)) = (api_error, &a.error_message) {
        blocks.push(json!({"type": "text", "text": format!("API Error: {e}")}));
    }
    blocks
        .into_iter()
        .map(|b| {
            let mut m = Map::new();
            m.insert(
                "message".into(),
                json!({"id": id, "type": "message", "role": "assistant", "model": a.model,
                       "content": [b], "stop_reason": stop, "stop_sequence": null,
                       "usage": usage}),
            );
            m.insert("type".into(), json!("assistant"));
            if api_error {
                m.insert("isApiErrorMessage".into(), json!(true));
            }
            m
        })
        .collect()
}

fn assistant_block(view: &View, c: &Content) -> Value {
    match c {
        Content::ToolCall(call) => {
            let (name, input) =
                names::to_claude_call(&call.name, &call.arguments, view.cwd, view.mcp);
            json!({"type": "tool_use", "id": call.id, "name": name, "input": input})
        }
        Content::Thinking {
            thinking,
            signature,
        } => json!({"type": "thinking", "thinking": thinking,
                    "signature": signature.as_deref().unwrap_or("")}),
        other => block(other).unwrap_or(Value::Null),
    }
}

#[cfg(test)]
#[path = "records_tests.rs"]
mod tests;
