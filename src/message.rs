//! The conversation data model shared by providers, the agent loop, modes and (later) sessions.
//!
//! The shapes and field names follow the TypeScript pi's `AgentMessage` exactly (camelCase on
//! the wire), because these values are written to session files and JSON event streams that
//! must stay readable by pi and by existing clients.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Milliseconds since the Unix epoch, as pi stores message timestamps.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// One block of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Content {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
        #[serde(
            rename = "thinkingSignature",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        signature: Option<String>,
    },
    #[serde(rename = "toolCall")]
    ToolCall(ToolCall),
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl Content {
    pub fn text(s: impl Into<String>) -> Self {
        Content::Text { text: s.into() }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// User content is either a plain string or a list of text/image blocks, as in pi.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    Blocks(Vec<Content>),
}

impl UserContent {
    /// The text of the message with blocks joined by newlines (images omitted).
    pub fn as_text(&self) -> String {
        match self {
            UserContent::Text(s) => s.clone(),
            UserContent::Blocks(b) => text_of(b),
        }
    }
}

/// Concatenated text blocks, newline-separated.
pub fn text_of(blocks: &[Content]) -> String {
    blocks
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    #[serde(serialize_with = "js_number")]
    pub input: f64,
    #[serde(serialize_with = "js_number")]
    pub output: f64,
    #[serde(serialize_with = "js_number")]
    pub cache_read: f64,
    #[serde(serialize_with = "js_number")]
    pub cache_write: f64,
    #[serde(serialize_with = "js_number")]
    pub total: f64,
}

/// Writes a number as JavaScript does: a whole number without a fraction (`0`, not `0.0`),
/// so session lines match the TypeScript pi's byte for byte.
fn js_number<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: beyond it f64 has no fractions anyway
    if v.fract() == 0.0 && v.abs() < EXACT {
        s.serialize_i64(*v as i64)
    } else {
        s.serialize_f64(*v)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total_tokens: u64,
    #[serde(default)]
    pub cost: Cost,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    pub content: Vec<Content>,
    pub api: String,
    pub provider: String,
    pub model: String,
    #[serde(default)]
    pub usage: Usage,
    pub stop_reason: StopReason,
    pub timestamp: i64,
    /// The provider's id for the response, when its API gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// pi sets this last, once the request has failed; the field order follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

impl AssistantMessage {
    pub fn empty(api: &str, provider: &str, model: &str) -> Self {
        AssistantMessage {
            content: Vec::new(),
            api: api.to_string(),
            provider: provider.to_string(),
            model: model.to_string(),
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            timestamp: now_ms(),
            response_id: None,
            error_message: None,
        }
    }

    pub fn tool_calls(&self) -> Vec<&ToolCall> {
        self.content
            .iter()
            .filter_map(|c| match c {
                Content::ToolCall(tc) => Some(tc),
                _ => None,
            })
            .collect()
    }

    pub fn text(&self) -> String {
        text_of(&self.content)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    pub content: UserContent,
    pub timestamp: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    pub tool_call_id: String,
    pub tool_name: String,
    pub content: Vec<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    pub is_error: bool,
    pub timestamp: i64,
}

/// A message in the agent's context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    User(UserMessage),
    Assistant(AssistantMessage),
    ToolResult(ToolResultMessage),
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Message::User(UserMessage {
            content: UserContent::Text(text.into()),
            timestamp: now_ms(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_message_uses_pi_field_names() {
        let mut m = AssistantMessage::empty("openai-completions", "openai", "gpt");
        m.content.push(Content::ToolCall(ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: serde_json::json!({"path": "a"}),
        }));
        m.stop_reason = StopReason::ToolUse;
        let v = serde_json::to_value(Message::Assistant(m)).unwrap();
        assert_eq!(v["role"], "assistant");
        assert_eq!(v["stopReason"], "toolUse");
        assert_eq!(v["content"][0]["type"], "toolCall");
        assert_eq!(v["usage"]["totalTokens"], 0);
        let back: Message = serde_json::from_value(v).unwrap();
        assert!(matches!(back, Message::Assistant(_)));
    }

    #[test]
    fn user_content_accepts_string_or_blocks() {
        let a: UserMessage = serde_json::from_str(r#"{"content":"hi","timestamp":1}"#).unwrap();
        assert_eq!(a.content.as_text(), "hi");
        let b: UserMessage = serde_json::from_str(
            r#"{"content":[{"type":"text","text":"x"},{"type":"text","text":"y"}],"timestamp":1}"#,
        )
        .unwrap();
        assert_eq!(b.content.as_text(), "x\ny");
    }
}
