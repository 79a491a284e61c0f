//! Entry builders shared by the compaction tests. Sizes are in characters, so a message of
//! `n` characters estimates to `n / 4` tokens.

use serde_json::{json, Value};

use crate::message::{AssistantMessage, Content, Message, ToolCall, ToolResultMessage, Usage};
use crate::session::entry::{
    AgentMessage, BranchSummary, Compaction, CustomMessageEntry, Entry, EntryKind, MessageEntry,
    ModelChange,
};

const TS: &str = "2025-01-01T00:00:00.000Z";

pub fn entry(id: &str, kind: EntryKind) -> Entry {
    Entry::new(id.into(), None, TS.into(), kind)
}

pub fn msg_entry(id: &str, m: impl Into<AgentMessage>) -> Entry {
    entry(
        id,
        EntryKind::Message(MessageEntry {
            message: m.into(),
            extra: Default::default(),
        }),
    )
}

pub fn user(id: &str, chars: usize) -> Entry {
    user_text(id, &"u".repeat(chars))
}

pub fn user_text(id: &str, text: &str) -> Entry {
    msg_entry(id, Message::user(text))
}

pub fn assistant_msg(content: Vec<Content>) -> AssistantMessage {
    let mut a = AssistantMessage::empty("faux", "faux", "faux-1");
    a.content = content;
    a
}

pub fn assistant_text(id: &str, chars: usize) -> Entry {
    msg_entry(
        id,
        Message::Assistant(assistant_msg(vec![Content::text("a".repeat(chars))])),
    )
}

pub fn assistant_with_usage(id: &str, chars: usize, total: u64) -> Entry {
    let mut a = assistant_msg(vec![Content::text("a".repeat(chars))]);
    a.usage = Usage {
        input: total,
        total_tokens: total,
        ..Usage::default()
    };
    msg_entry(id, Message::Assistant(a))
}

pub fn call(tool: &str, args: Value) -> Content {
    Content::ToolCall(ToolCall {
        thought_signature: None,
        id: format!("call_{tool}"),
        name: tool.into(),
        arguments: args,
    })
}

pub fn assistant_call(id: &str, tool: &str, path: &str) -> Entry {
    msg_entry(
        id,
        Message::Assistant(assistant_msg(vec![call(tool, json!({ "path": path }))])),
    )
}

pub fn tool_result_msg(text: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: "call".into(),
        tool_name: "read".into(),
        content: vec![Content::text(text)],
        details: None,
        is_error: false,
        structured_content: None,
        usage: None,
        duration_ms: None,
        timestamp: 0,
    })
}

pub fn tool_result(id: &str, chars: usize) -> Entry {
    msg_entry(id, tool_result_msg(&"t".repeat(chars)))
}

pub fn bash(id: &str, chars: usize) -> Entry {
    msg_entry(
        id,
        AgentMessage::Raw(json!({
            "role": "bashExecution", "command": "ls", "output": "o".repeat(chars.saturating_sub(2)),
            "exitCode": 0, "cancelled": false, "truncated": false, "timestamp": 1
        })),
    )
}

pub fn custom_message(id: &str, chars: usize) -> Entry {
    entry(
        id,
        EntryKind::CustomMessage(Box::new(CustomMessageEntry {
            custom_type: "ext".into(),
            content: Value::String("c".repeat(chars)),
            display: true,
            details: None,
            extra: Default::default(),
        })),
    )
}

pub fn branch_summary(id: &str, chars: usize) -> Entry {
    entry(
        id,
        EntryKind::BranchSummary(Box::new(BranchSummary {
            from_id: "root".into(),
            summary: "s".repeat(chars),
            details: None,
            from_hook: None,
            usage: None,
            extra: Default::default(),
        })),
    )
}

pub fn model_change(id: &str) -> Entry {
    entry(
        id,
        EntryKind::ModelChange(ModelChange {
            provider: "faux".into(),
            model_id: "faux-2".into(),
            extra: Default::default(),
        }),
    )
}

pub fn compaction(id: &str, summary: &str, first_kept: &str, details: Option<Value>) -> Entry {
    entry(
        id,
        EntryKind::Compaction(Box::new(Compaction {
            summary: summary.into(),
            first_kept_entry_id: Some(first_kept.into()),
            tokens_before: 1234,
            details,
            from_hook: None,
            usage: None,
            retained_tail: None,
            system_message: None,
            extra: Default::default(),
        })),
    )
}
