//! The conversation data model shared by providers, the agent loop, modes and (later) sessions.
//!
//! The shapes and field names follow the TypeScript pi's `AgentMessage` exactly (camelCase on
//! the wire), because these values are written to session files and JSON event streams that
//! must stay readable by pi and by existing clients.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod system;
pub use system::SystemMessage;

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
        /// What the provider attached to the text to have it sent back as it was: Gemini's
        /// `thoughtSignature` on a text part (pi 1.6's `textSignature`).
        #[serde(
            rename = "textSignature",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        text_signature: Option<String>,
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
        Content::Text {
            text: s.into(),
            text_signature: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
    /// Gemini's `thoughtSignature` on the call's part: the model's reasoning, encrypted, which
    /// it wants back with the call on the next turn (pi 1.6 keeps it on the tool call).
    #[serde(
        rename = "thoughtSignature",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub thought_signature: Option<String>,
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

/// A hook's content (text and image blocks only, as the protocol allows) as a message's.
impl From<pi_hook::UserContent> for UserContent {
    fn from(c: pi_hook::UserContent) -> Self {
        match c {
            pi_hook::UserContent::Text(s) => UserContent::Text(s),
            pi_hook::UserContent::Blocks(b) => UserContent::Blocks(
                b.into_iter()
                    .map(|b| match b {
                        pi_hook::ContentBlock::Text { text } => Content::text(text),
                        pi_hook::ContentBlock::Image { data, mime_type } => {
                            Content::Image { data, mime_type }
                        }
                    })
                    .collect(),
            ),
        }
    }
}

/// Concatenated text blocks, newline-separated.
pub fn text_of(blocks: &[Content]) -> String {
    blocks
        .iter()
        .filter_map(|c| match c {
            Content::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// [`text_of`], borrowed when there is at most one text block (the common case, which then
/// copies nothing).
pub fn joined_text(blocks: &[Content]) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let mut texts = blocks.iter().filter_map(|c| match c {
        Content::Text { text, .. } => Some(text.as_str()),
        _ => None,
    });
    match (texts.next(), texts.next()) {
        (None, _) => Cow::Borrowed(""),
        (Some(only), None) => Cow::Borrowed(only),
        _ => Cow::Owned(text_of(blocks)),
    }
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
    /// Whether `total` is the provider's own figure (OpenRouter reports it) rather than pi's
    /// pricing; absent until the usage has been priced at all, as pi 1.6 writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_from_provider: Option<bool>,
}

/// Writes a number as JavaScript's `JSON.stringify` does, so session lines and JSON-mode
/// events match the TypeScript pi's byte for byte: a whole number without a fraction (`0`, not
/// `0.0`), and the decimal/exponent switch where JavaScript makes it (`0.0000035` and `1e+21`,
/// where serde_json alone would write `3.5e-6` and `1e21`). Both print the shortest digits that
/// read back as the same double, so only the layout of those digits needs translating.
pub(crate) fn js_number<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: beyond it f64 has no fractions anyway
    let a = v.abs();
    if v.fract() == 0.0 && a < EXACT {
        return s.serialize_i64(*v as i64);
    }
    // serde_json lays out [1e-5, 2^53) as JavaScript does; non-finite values become `null`.
    if !v.is_finite() || (1e-5..EXACT).contains(&a) {
        return s.serialize_f64(*v);
    }
    match serde_json::value::RawValue::from_string(js_number_text(*v)) {
        Ok(raw) => raw.serialize(s),
        Err(_) => s.serialize_f64(*v),
    }
}

/// [`js_number`] for an optional number (`null` when absent).
pub(crate) fn js_number_opt<S: serde::Serializer>(
    v: &Option<f64>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => js_number(v, s),
        None => s.serialize_none(),
    }
}

/// ECMAScript's `Number::toString` for a finite `v`, from Rust's shortest round-trip digits.
pub(crate) fn js_number_text(v: f64) -> String {
    let sci = format!("{:e}", v.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    // The value is 0.DIGITS × 10^n.
    let n = exp.parse::<i32>().unwrap_or(0) + 1;
    let mut out = String::with_capacity(k as usize + 8);
    if v < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// Reasoning tokens (a part of `output`), where the provider's usage reports them; pi 1.6
    /// has the field from the first usage the provider sends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    pub total_tokens: u64,
    #[serde(default)]
    pub cost: Cost,
    /// Cache writes kept for an hour (a part of `cacheWrite`, priced at twice the input rate),
    /// where the provider reports the breakdown (Anthropic).
    #[serde(
        rename = "cacheWrite1h",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_write_1h: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// The message is still streaming (its `message_start`); never a final message's reason.
    Pending,
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
    /// The provider's own stop reason (`tool_calls`, `end_turn`, …) as it sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_stop_reason: Option<String>,
    /// How long the response took, from the request to its last event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The thinking level the request asked for (`off` when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<String>,
    /// The effort a Codex model was switched to inside the conversation (a
    /// `configuration_update` item), sent back before this turn when it is replayed.
    #[serde(
        rename = "providerThinkingLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub provider_thinking_level: Option<String>,
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
            raw_stop_reason: None,
            duration_ms: None,
            thinking_level: None,
            provider_thinking_level: None,
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
    /// JSON for programs (a tool with an `outputSchema`, bash): shown to nested callers,
    /// hooks and `tool_execution_end`, never sent to the model as such. Like pi 1.6, the
    /// message itself (in events, `get_messages`, the session file) does not carry it.
    #[serde(default, skip_serializing)]
    pub structured_content: Option<Value>,
    /// What running the tool cost, when it called a model itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// How long the tool ran; absent when it did not run (blocked, unknown, invalid input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    pub timestamp: i64,
}

/// An extension's message in the context (pi's `role: "custom"`): stored as a `custom_message`
/// session entry, shown (when `display`) as the extension's, and sent to the model as a user
/// message carrying its content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    pub custom_type: String,
    pub content: UserContent,
    #[serde(default)]
    pub display: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    pub timestamp: i64,
}

/// A message in the agent's context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// The system prompt and tool loadout as the conversation declares them (pi 1.6).
    System(SystemMessage),
    User(UserMessage),
    Assistant(AssistantMessage),
    ToolResult(ToolResultMessage),
    Custom(CustomMessage),
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Message::User(UserMessage {
            content: UserContent::Text(text.into()),
            timestamp: now_ms(),
        })
    }

    /// What the model receives as a user turn: a user message's content, or a custom
    /// message's (pi's `convertToLlm` sends custom messages as user messages).
    pub fn user_content(&self) -> Option<&UserContent> {
        match self {
            Message::User(u) => Some(&u.content),
            Message::Custom(c) => Some(&c.content),
            Message::System(_) | Message::Assistant(_) | Message::ToolResult(_) => None,
        }
    }

    /// pi's `role` field.
    pub fn role(&self) -> &'static str {
        match self {
            Message::System(_) => "system",
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "toolResult",
            Message::Custom(_) => "custom",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_message_uses_pi_field_names() {
        let mut m = AssistantMessage::empty("openai-completions", "openai", "gpt");
        m.content.push(Content::ToolCall(ToolCall {
            thought_signature: None,
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
    fn signatures_on_text_and_tool_calls_keep_pi_1_6s_names_and_stay_out_when_absent() {
        let line = r#"{"role":"assistant","content":[{"type":"text","text":"a","textSignature":"c2ln"},{"type":"toolCall","id":"c1","name":"read","arguments":{},"thoughtSignature":"dHM="}],"api":"google-generative-ai","provider":"google","model":"g","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1}"#;
        let m: Message = serde_json::from_str(line).unwrap();
        let Message::Assistant(a) = &m else {
            panic!("not an assistant message")
        };
        assert_eq!(a.tool_calls()[0].thought_signature.as_deref(), Some("dHM="));
        assert_eq!(serde_json::to_string(&m).unwrap(), line);
        let plain = serde_json::to_value(Content::text("b")).unwrap();
        assert_eq!(plain, serde_json::json!({"type": "text", "text": "b"}));
    }

    #[test]
    fn numbers_are_written_as_javascript_writes_them_and_read_back_exactly() {
        // Each pair is a double and what node's JSON.stringify prints for it.
        let cases: [(f64, &str); 18] = [
            (0.0, "0"),
            (-0.0, "0"),
            (3.0, "3"),
            (12.5, "12.5"),
            (-0.5, "-0.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (0.00045224999999999996, "0.00045224999999999996"),
            (1.2e-5, "0.000012"),
            (3.5e-6, "0.0000035"),
            (-3.5e-6, "-0.0000035"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (2.5e-7, "2.5e-7"),
            (5e-324, "5e-324"),
            (9007199254740994.0, "9007199254740994"),
            (1e16, "10000000000000000"),
            (1e21, "1e+21"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ];
        for (v, js) in cases {
            let cost = Cost {
                total: v,
                ..Cost::default()
            };
            let line = serde_json::to_string(&cost).unwrap();
            let want =
                format!(r#"{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":{js}}}"#);
            assert_eq!(line, want, "{v:e}");
            let back: Cost = serde_json::from_str(&line).unwrap();
            assert_eq!(back.total, v, "{v:e} reads back");
        }
    }

    #[test]
    fn an_assistant_message_pi_priced_serializes_back_to_the_same_bytes() {
        // pi 0.73.1's line for 1 input, 7 output, 1000 cache-read and 2 cache-write tokens at
        // $3/$15/$0.30/$3.75 per million; a session loaded and written again must keep it.
        let line = r#"{"role":"assistant","content":[{"type":"text","text":"priced"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":1,"output":7,"cacheRead":1000,"cacheWrite":2,"totalTokens":1010,"cost":{"input":0.000003,"output":0.000105,"cacheRead":0.0003,"cacheWrite":0.0000075,"total":0.0004155}},"stopReason":"stop","timestamp":1760000000000}"#;
        let m: Message = serde_json::from_str(line).unwrap();
        assert_eq!(serde_json::to_string(&m).unwrap(), line);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 2000,
            failure_persistence: None,
            ..Default::default()
        })]

        /// Whatever layout `js_number` picks, the digits still spell the same double.
        #[test]
        fn any_finite_number_reads_back_as_itself(bits in proptest::prelude::any::<u64>()) {
            let v = f64::from_bits(bits);
            proptest::prop_assume!(v.is_finite());
            let cost = Cost { total: v, ..Cost::default() };
            let line = serde_json::to_string(&cost).unwrap();
            let back: Cost = serde_json::from_str(&line).unwrap();
            proptest::prop_assert_eq!(back.total, v, "{}", line);
        }
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
