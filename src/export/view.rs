//! A borrowed reading of a stored message, whichever form the session keeps it in.
//!
//! The session holds each message either typed ([`Message`]) or as the JSON it was read as
//! (roles our types lack, fields they do not know); the page shows both the same way. Views
//! borrow from the session instead of converting, because converting a raw message clones it,
//! and an export of a large session must not hold a second copy of the conversation.

use serde_json::Value;

use crate::message::{AssistantMessage, Content, Message, StopReason, Usage, UserContent};
use crate::session::AgentMessage;

static NULL: Value = Value::Null;

/// One block of message content.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Block<'a> {
    Text(&'a str),
    Thinking(&'a str),
    ToolCall(CallView<'a>),
    Image(ImageView<'a>),
    /// A block of a type this export does not know: its `type`.
    Unknown(&'a str),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CallView<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub arguments: &'a Value,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ImageView<'a> {
    pub data: &'a str,
    pub mime_type: &'a str,
}

/// Token counts and the cost of one model call.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct UsageView {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// Dollars: input + output + cache read + cache write, as pi adds them up.
    pub cost: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AssistantView<'a> {
    pub blocks: Vec<Block<'a>>,
    pub provider: &'a str,
    pub model: &'a str,
    pub stop_reason: &'a str,
    pub error_message: Option<&'a str>,
    pub usage: UsageView,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResultView<'a> {
    pub tool_call_id: &'a str,
    pub tool_name: &'a str,
    pub blocks: Vec<Block<'a>>,
    pub is_error: bool,
    pub details: Option<&'a Value>,
}

/// A `!command` the user ran (`bashExecution`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BashView<'a> {
    pub command: &'a str,
    pub output: &'a str,
    pub exit_code: Option<i64>,
    pub cancelled: bool,
    pub truncated: bool,
    pub full_output_path: Option<&'a str>,
}

/// Any other role (`custom`, `branchSummary`, `compactionSummary`, roles of newer versions).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OtherView<'a> {
    pub role: &'a str,
    pub custom_type: Option<&'a str>,
    /// `false` when the message asks not to be shown (`display: false`).
    pub display: bool,
    pub blocks: Vec<Block<'a>>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MessageView<'a> {
    User(Vec<Block<'a>>),
    Assistant(AssistantView<'a>),
    ToolResult(ResultView<'a>),
    Bash(BashView<'a>),
    /// The prompt and tool loadout (pi 1.6's system messages).
    System(&'a crate::message::SystemMessage),
    Other(OtherView<'a>),
}

impl<'a> MessageView<'a> {
    pub fn of(m: &'a AgentMessage) -> MessageView<'a> {
        match m {
            AgentMessage::Typed(typed) => match typed.as_ref() {
                Message::User(u) => MessageView::User(match &u.content {
                    UserContent::Text(s) => vec![Block::Text(s)],
                    UserContent::Blocks(b) => typed_blocks(b),
                }),
                Message::Assistant(a) => MessageView::Assistant(typed_assistant(a)),
                Message::System(s) => MessageView::System(s),
                Message::Custom(c) => MessageView::Other(OtherView {
                    role: "custom",
                    custom_type: Some(&c.custom_type),
                    display: c.display,
                    blocks: match &c.content {
                        UserContent::Text(s) => vec![Block::Text(s)],
                        UserContent::Blocks(b) => typed_blocks(b),
                    },
                }),
                Message::ToolResult(t) => MessageView::ToolResult(ResultView {
                    tool_call_id: &t.tool_call_id,
                    tool_name: &t.tool_name,
                    blocks: typed_blocks(&t.content),
                    is_error: t.is_error,
                    details: t.details.as_ref(),
                }),
            },
            AgentMessage::Raw(v) => raw_view(v),
        }
    }
}

/// The blocks of a content value as pi stores it: a string, or an array of blocks.
pub(crate) fn content_blocks(content: Option<&Value>) -> Vec<Block<'_>> {
    match content {
        Some(Value::String(s)) => vec![Block::Text(s)],
        Some(Value::Array(items)) => items.iter().map(raw_block).collect(),
        _ => Vec::new(),
    }
}

fn typed_blocks(content: &[Content]) -> Vec<Block<'_>> {
    content
        .iter()
        .map(|c| match c {
            Content::Text { text, .. } => Block::Text(text),
            Content::Thinking { thinking, .. } => Block::Thinking(thinking),
            Content::ToolCall(tc) => Block::ToolCall(CallView {
                id: &tc.id,
                name: &tc.name,
                arguments: &tc.arguments,
            }),
            Content::Image { data, mime_type } => Block::Image(ImageView { data, mime_type }),
        })
        .collect()
}

fn typed_assistant(a: &AssistantMessage) -> AssistantView<'_> {
    AssistantView {
        blocks: typed_blocks(&a.content),
        provider: &a.provider,
        model: &a.model,
        stop_reason: match a.stop_reason {
            StopReason::Pending => "pending",
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
        },
        error_message: a.error_message.as_deref(),
        usage: typed_usage(&a.usage),
    }
}

fn typed_usage(u: &Usage) -> UsageView {
    UsageView {
        input: u.input,
        output: u.output,
        cache_read: u.cache_read,
        cache_write: u.cache_write,
        cost: u.cost.input + u.cost.output + u.cost.cache_read + u.cost.cache_write,
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn raw_block(b: &Value) -> Block<'_> {
    match str_at(b, "type") {
        "text" => Block::Text(str_at(b, "text")),
        "thinking" => Block::Thinking(str_at(b, "thinking")),
        "toolCall" => Block::ToolCall(CallView {
            id: str_at(b, "id"),
            name: str_at(b, "name"),
            arguments: b.get("arguments").unwrap_or(&NULL),
        }),
        "image" => Block::Image(ImageView {
            data: str_at(b, "data"),
            mime_type: str_at(b, "mimeType"),
        }),
        other => Block::Unknown(other),
    }
}

fn raw_usage(u: Option<&Value>) -> UsageView {
    let Some(u) = u else {
        return UsageView::default();
    };
    let count = |k: &str| {
        u.get(k)
            .and_then(Value::as_f64)
            .map_or(0, |n| n.max(0.0) as u64)
    };
    let cost = |k: &str| {
        u.get("cost")
            .and_then(|c| c.get(k))
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    };
    UsageView {
        input: count("input"),
        output: count("output"),
        cache_read: count("cacheRead"),
        cache_write: count("cacheWrite"),
        cost: cost("input") + cost("output") + cost("cacheRead") + cost("cacheWrite"),
    }
}

fn raw_view(v: &Value) -> MessageView<'_> {
    let content = v.get("content");
    match str_at(v, "role") {
        "user" => MessageView::User(content_blocks(content)),
        "assistant" => MessageView::Assistant(AssistantView {
            blocks: content_blocks(content),
            provider: str_at(v, "provider"),
            model: str_at(v, "model"),
            stop_reason: str_at(v, "stopReason"),
            error_message: v.get("errorMessage").and_then(Value::as_str),
            usage: raw_usage(v.get("usage")),
        }),
        "toolResult" => MessageView::ToolResult(ResultView {
            tool_call_id: str_at(v, "toolCallId"),
            tool_name: str_at(v, "toolName"),
            blocks: content_blocks(content),
            is_error: v.get("isError").and_then(Value::as_bool).unwrap_or(false),
            details: v.get("details"),
        }),
        "bashExecution" => MessageView::Bash(BashView {
            command: str_at(v, "command"),
            output: str_at(v, "output"),
            exit_code: v.get("exitCode").and_then(Value::as_i64),
            cancelled: v.get("cancelled").and_then(Value::as_bool).unwrap_or(false),
            truncated: v.get("truncated").and_then(Value::as_bool).unwrap_or(false),
            full_output_path: v.get("fullOutputPath").and_then(Value::as_str),
        }),
        role => {
            // Summary messages carry their text in `summary`, not `content`.
            let blocks = match (content, v.get("summary").and_then(Value::as_str)) {
                (None | Some(Value::Null), Some(summary)) => vec![Block::Text(summary)],
                _ => content_blocks(content),
            };
            MessageView::Other(OtherView {
                role,
                custom_type: v.get("customType").and_then(Value::as_str),
                display: v.get("display").and_then(Value::as_bool).unwrap_or(true),
                blocks,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_and_raw_forms_of_one_message_read_the_same() {
        let raw = json!({
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "thinkingSignature": "s"},
                {"type": "text", "text": "hi"},
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}
            ],
            "api": "a", "provider": "p", "model": "m",
            "usage": {"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "totalTokens": 10,
                      "cost": {"input": 0.5, "output": 0.25, "cacheRead": 0, "cacheWrite": 0, "total": 0.75}},
            "stopReason": "toolUse", "timestamp": 1
        });
        let typed = AgentMessage::from_value(raw.clone());
        assert!(matches!(typed, AgentMessage::Typed(_)));
        let raw = AgentMessage::Raw(raw);
        let (a, b) = (MessageView::of(&typed), MessageView::of(&raw));
        assert_eq!(a, b);
        let MessageView::Assistant(a) = a else {
            panic!("not an assistant view: {a:?}")
        };
        assert_eq!(a.stop_reason, "toolUse");
        assert_eq!(a.usage.cost, 0.75);
        assert!(matches!(
            a.blocks[2],
            Block::ToolCall(CallView { name: "bash", .. })
        ));
    }

    #[test]
    fn roles_our_types_lack_are_read_leniently() {
        let bash = AgentMessage::Raw(
            json!({"role": "bashExecution", "command": "ls", "output": "a",
            "exitCode": 2, "cancelled": false, "truncated": true, "timestamp": 1}),
        );
        let MessageView::Bash(b) = MessageView::of(&bash) else {
            panic!("not a bash view")
        };
        assert_eq!((b.command, b.exit_code, b.truncated), ("ls", Some(2), true));

        let summary = AgentMessage::Raw(json!({"role": "branchSummary", "summary": "went left"}));
        let MessageView::Other(o) = MessageView::of(&summary) else {
            panic!("not another role")
        };
        assert_eq!(o.blocks, vec![Block::Text("went left")]);

        // Wrongly typed fields read as empty instead of failing the export.
        let odd = AgentMessage::Raw(
            json!({"role": "user", "content": [{"type": "text", "text": 5}, {"type": "video"}]}),
        );
        assert_eq!(
            MessageView::of(&odd),
            MessageView::User(vec![Block::Text(""), Block::Unknown("video")])
        );
    }
}
