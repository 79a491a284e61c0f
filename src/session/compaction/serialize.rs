//! The conversation as plain text for the summarizer (pi's `serializeConversation`). Sending
//! it as one user message of labelled lines, instead of as chat turns, keeps the model from
//! continuing the conversation instead of summarizing it.
//!
//! Each message becomes `[User]: `, `[Assistant thinking]: `, `[Assistant]: `,
//! `[Assistant tool calls]: name(k=json, …); …` or `[Tool result]: ` parts, separated by blank
//! lines. Tool results are cut to 2000 characters: their full text is rarely needed for a
//! summary and would blow the summarizer's own budget.

use std::borrow::{Borrow, Cow};
use std::sync::Arc;

use serde_json::Value;

use super::estimate::js_len;
use crate::message::{text_of, Content, CustomMessage, Message, UserContent, UserMessage};
use crate::session::context::{ContextMessage, SessionContext};
use crate::session::entry::AgentMessage;

/// Characters of a tool result kept in the serialized text.
pub const TOOL_RESULT_MAX_CHARS: u64 = 2000;

/// pi's `convertToLlm`: summaries, custom messages and bash executions become user messages,
/// bash executions excluded from context and unknown roles are dropped. The session context
/// already implements it; this borrows that implementation rather than repeating it.
pub fn to_llm(messages: &[AgentMessage]) -> Vec<Arc<Message>> {
    SessionContext {
        messages: messages
            .iter()
            .map(|m| ContextMessage {
                entry_id: "",
                message: Cow::Borrowed(m),
            })
            .collect(),
        thinking_level: String::new(),
        model: None,
    }
    .llm_messages()
}

/// Text blocks joined with nothing in between, as pi's `contentText(content, "")`.
fn joined_text(blocks: &[Content]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            Content::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// Keeps the first `max` UTF-16 units (never splitting a character) and says how many were
/// dropped, counted as pi counts them.
fn truncate_for_summary(text: &str, max: u64) -> Cow<'_, str> {
    let len = js_len(text);
    if len <= max {
        return Cow::Borrowed(text);
    }
    let mut units = 0u64;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        let w = c.len_utf16() as u64;
        if units + w > max {
            break;
        }
        units += w;
        end = i + c.len_utf8();
    }
    Cow::Owned(format!(
        "{}\n\n[... {} more characters truncated]",
        &text[..end],
        len - max
    ))
}

/// `k=JSON` pairs of a tool call's arguments, in their stored order.
fn call_args(args: &Value) -> String {
    match args {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    }
}

/// pi's `serializeConversation` over provider messages.
///
/// Written into one string as it goes: over a long history the text is tens of megabytes,
/// and collecting parts to join them would hold it twice.
pub fn serialize_conversation<M: Borrow<Message>>(messages: &[M]) -> String {
    let mut out = String::new();
    let mut part = |label: &str, body: &str| {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(label);
        out.push_str(body);
    };
    for m in messages {
        match m.borrow() {
            Message::User(UserMessage { content, .. })
            | Message::Custom(CustomMessage { content, .. }) => {
                let text = match content {
                    UserContent::Text(s) => Cow::Borrowed(s.as_str()),
                    UserContent::Blocks(b) => Cow::Owned(joined_text(b)),
                };
                if !text.is_empty() {
                    part("[User]: ", &text);
                }
            }
            Message::Assistant(a) => {
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                let mut has_text = false;
                for b in &a.content {
                    match b {
                        Content::Thinking { thinking: t, .. } => thinking.push(t.as_str()),
                        Content::ToolCall(tc) => {
                            calls.push(format!("{}({})", tc.name, call_args(&tc.arguments)))
                        }
                        Content::Text { .. } => has_text = true,
                        Content::Image { .. } => {}
                    }
                }
                if !thinking.is_empty() {
                    part("[Assistant thinking]: ", &thinking.join("\n"));
                }
                if has_text {
                    part("[Assistant]: ", &text_of(&a.content));
                }
                if !calls.is_empty() {
                    part("[Assistant tool calls]: ", &calls.join("; "));
                }
            }
            Message::ToolResult(t) => {
                let text = joined_text(&t.content);
                if !text.is_empty() {
                    part(
                        "[Tool result]: ",
                        &truncate_for_summary(&text, TOOL_RESULT_MAX_CHARS),
                    );
                }
            }
            // Prompt state, not conversation: pi 1.6 summarizes without it.
            Message::System(_) => {}
        }
    }
    out
}

/// [`serialize_conversation`] of pi's `AgentMessage`s, after [`to_llm`].
pub fn serialize_agent_messages(messages: &[AgentMessage]) -> String {
    serialize_conversation(&to_llm(messages))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::UserMessage;
    use crate::session::compaction::test_support::*;
    use serde_json::json;

    #[test]
    fn labels_each_part_and_separates_with_blank_lines() {
        let a = assistant_msg(vec![
            Content::Thinking {
                thinking: "plan".into(),
                signature: None,
            },
            Content::text("one"),
            Content::text("two"),
            call("read", json!({"path": "a.rs", "offset": 3})),
            call("bash", json!({"command": "ls -la"})),
        ]);
        let msgs = [
            Message::user("hi"),
            Message::Assistant(a),
            tool_result_msg("file body"),
        ];
        assert_eq!(
            serialize_conversation(&msgs),
            "[User]: hi\n\n[Assistant thinking]: plan\n\n[Assistant]: one\ntwo\n\n\
             [Assistant tool calls]: read(path=\"a.rs\", offset=3); bash(command=\"ls -la\")\n\n\
             [Tool result]: file body"
        );
    }

    #[test]
    fn user_blocks_join_without_separator_and_empty_parts_vanish() {
        let u = Message::User(UserMessage {
            content: UserContent::Blocks(vec![Content::text("a"), Content::text("b")]),
            timestamp: 0,
        });
        let empty_user = Message::user("");
        let empty_result = tool_result_msg("");
        let text_only_empty = Message::Assistant(assistant_msg(vec![Content::text("")]));
        assert_eq!(
            serialize_conversation(&[u, empty_user, empty_result, text_only_empty]),
            "[User]: ab\n\n[Assistant]: "
        );
    }

    #[test]
    fn tool_results_are_cut_to_2000_characters() {
        let long = "x".repeat(2500);
        let out = serialize_conversation(&[tool_result_msg(&long)]);
        let expected = format!(
            "[Tool result]: {}\n\n[... 500 more characters truncated]",
            "x".repeat(2000)
        );
        assert_eq!(out, expected);
        let exact = "y".repeat(2000);
        assert_eq!(
            serialize_conversation(&[tool_result_msg(&exact)]),
            format!("[Tool result]: {exact}")
        );
        // Counted in UTF-16 units, never splitting a character.
        let emoji = "😀".repeat(1001);
        let out = serialize_conversation(&[tool_result_msg(&emoji)]);
        assert!(out.starts_with(&format!("[Tool result]: {}\n\n", "😀".repeat(1000))));
        assert!(out.ends_with("[... 2 more characters truncated]"));
    }

    #[test]
    fn pi_roles_are_converted_first() {
        let msgs = [
            AgentMessage::Raw(
                json!({"role": "bashExecution", "command": "ls", "output": "a",
                "exitCode": 0, "cancelled": false, "truncated": false, "timestamp": 1}),
            ),
            AgentMessage::Raw(
                json!({"role": "bashExecution", "command": "secret", "output": "",
                "excludeFromContext": true, "timestamp": 1}),
            ),
            AgentMessage::Raw(
                json!({"role": "custom", "customType": "x", "content": "note",
                "display": true, "timestamp": 1}),
            ),
            AgentMessage::Raw(
                json!({"role": "branchSummary", "summary": "went", "fromId": "r",
                "timestamp": 1}),
            ),
        ];
        let out = serialize_agent_messages(&msgs);
        assert_eq!(
            out,
            "[User]: Ran `ls`\n```\na\n```\n\n[User]: note\n\n[User]: The following is a summary \
             of a branch that this conversation came back from:\n\n<summary>\nwent</summary>"
        );
    }
}
