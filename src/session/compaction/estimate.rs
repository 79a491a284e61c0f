//! How many tokens the context holds, as pi estimates it: the provider-reported usage of the
//! last assistant reply that has a trustworthy one, plus chars/4 for every message after it.
//!
//! Character counts are JavaScript string lengths (UTF-16 code units), so the estimates, the
//! cut points derived from them and the `tokensBefore` written to the session agree with pi
//! for non-ASCII text too. A usage is not trusted when the reply was aborted or failed, or
//! when every counter is zero (providers that report nothing).

use serde_json::Value;

use super::settings::CompactionSettings;
use crate::message::{
    Content, CustomMessage, Message, StopReason, Usage, UserContent, UserMessage,
};
use crate::session::context::ContextMessage;
use crate::session::entry::AgentMessage;

/// An image counts as this many characters (about 1200 tokens).
pub const IMAGE_CHARS: u64 = 4800;

/// A string's length as JavaScript counts it.
pub(crate) fn js_len(s: &str) -> u64 {
    s.encode_utf16().count() as u64
}

fn tokens_of_chars(chars: u64) -> u64 {
    chars.div_ceil(4)
}

/// pi's `calculateContextTokens`: `totalTokens`, or the sum of the parts when it is zero.
pub fn calculate_context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens > 0 {
        return usage.total_tokens;
    }
    usage.input + usage.output + usage.cache_read + usage.cache_write
}

/// Something that can sit in a context: our typed messages, pi's `AgentMessage`s, or the
/// session's context messages.
pub trait ContextItem {
    /// pi's `estimateTokens`: chars/4, rounded up.
    fn estimate_tokens(&self) -> u64;
    /// The context size reported by this message's usage, when it is a successful assistant
    /// reply with a non-zero usage.
    fn reported_context_tokens(&self) -> Option<u64>;
}

fn blocks_chars(blocks: &[Content]) -> u64 {
    blocks
        .iter()
        .map(|b| match b {
            Content::Text { text, .. } => js_len(text),
            Content::Image { .. } => IMAGE_CHARS,
            _ => 0,
        })
        .sum()
}

fn valid_usage_tokens(stop: StopReason, usage: &Usage) -> Option<u64> {
    if matches!(stop, StopReason::Aborted | StopReason::Error) {
        return None;
    }
    Some(calculate_context_tokens(usage)).filter(|&t| t > 0)
}

/// Borrowed items count like owned ones, so callers can estimate a session's messages in place.
impl<T: ContextItem + ?Sized> ContextItem for &T {
    fn estimate_tokens(&self) -> u64 {
        (**self).estimate_tokens()
    }
    fn reported_context_tokens(&self) -> Option<u64> {
        (**self).reported_context_tokens()
    }
}

impl ContextItem for Message {
    fn estimate_tokens(&self) -> u64 {
        let chars = match self {
            Message::User(UserMessage { content, .. })
            | Message::Custom(CustomMessage { content, .. }) => match content {
                UserContent::Text(s) => js_len(s),
                UserContent::Blocks(b) => blocks_chars(b),
            },
            Message::Assistant(a) => a
                .content
                .iter()
                .map(|b| match b {
                    Content::Text { text, .. } => js_len(text),
                    Content::Thinking { thinking, .. } => js_len(thinking),
                    Content::ToolCall(tc) => js_len(&tc.name) + js_len(&tc.arguments.to_string()),
                    Content::Image { .. } => 0,
                })
                .sum(),
            Message::ToolResult(t) => blocks_chars(&t.content),
            // pi 1.6: the content, each section present, and the added tools as JSON.
            Message::System(s) => {
                let content = match &s.content {
                    UserContent::Text(t) => js_len(t),
                    UserContent::Blocks(b) => blocks_chars(b),
                };
                let sections: u64 = s
                    .sections
                    .iter()
                    .flatten()
                    .flat_map(|(_, v)| v)
                    .map(|v| js_len(v))
                    .sum();
                let tools = s
                    .tools_added
                    .as_ref()
                    .map_or(0, |t| js_len(&serde_json::to_string(t).unwrap_or_default()));
                content + sections + tools
            }
        };
        tokens_of_chars(chars)
    }

    fn reported_context_tokens(&self) -> Option<u64> {
        match self {
            Message::Assistant(a) => valid_usage_tokens(a.stop_reason, &a.usage),
            _ => None,
        }
    }
}

/// Characters of a raw pi content value: a string, or text and image blocks.
fn raw_content_chars(content: Option<&Value>) -> u64 {
    match content {
        Some(Value::String(s)) => js_len(s),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => b.get("text").and_then(Value::as_str).map_or(0, js_len),
                Some("image") => IMAGE_CHARS,
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

fn raw_str<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

impl ContextItem for AgentMessage {
    fn estimate_tokens(&self) -> u64 {
        let v = match self {
            AgentMessage::Typed(m) => return m.estimate_tokens(),
            AgentMessage::Raw(v) => v,
        };
        let chars = match self.role() {
            "user" | "assistant" | "toolResult" => {
                return self.to_message().map_or(0, |m| m.estimate_tokens())
            }
            "custom" => raw_content_chars(v.get("content")),
            "bashExecution" => js_len(raw_str(v, "command")) + js_len(raw_str(v, "output")),
            "branchSummary" | "compactionSummary" => js_len(raw_str(v, "summary")),
            _ => 0,
        };
        tokens_of_chars(chars)
    }

    fn reported_context_tokens(&self) -> Option<u64> {
        match self {
            AgentMessage::Typed(m) => m.reported_context_tokens(),
            AgentMessage::Raw(v) if self.role() == "assistant" => {
                let stop = match raw_str(v, "stopReason") {
                    "aborted" => StopReason::Aborted,
                    "error" => StopReason::Error,
                    _ => StopReason::Stop,
                };
                let u = v.get("usage")?;
                let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                let usage = Usage {
                    input: n("input"),
                    output: n("output"),
                    cache_read: n("cacheRead"),
                    cache_write: n("cacheWrite"),
                    total_tokens: n("totalTokens"),
                    ..Usage::default()
                };
                valid_usage_tokens(stop, &usage)
            }
            AgentMessage::Raw(_) => None,
        }
    }
}

impl ContextItem for ContextMessage<'_> {
    fn estimate_tokens(&self) -> u64 {
        self.message.estimate_tokens()
    }

    fn reported_context_tokens(&self) -> Option<u64> {
        self.message.reported_context_tokens()
    }
}

/// pi's `estimateTokens` for one message.
pub fn estimate_tokens(message: &impl ContextItem) -> u64 {
    message.estimate_tokens()
}

/// The sum of the estimates, ignoring usage (pi's `estimateMessagesTokens`, used for the
/// context size right after a compaction, when no reply has reported one yet).
pub fn estimate_messages_tokens<M: ContextItem>(messages: &[M]) -> u64 {
    messages.iter().map(|m| m.estimate_tokens()).sum()
}

/// The system message's share of the context, as pi 1.6 estimates it (its system prompt is a
/// message of the context): the prompt's characters and the offered tools' JSON, over 4.
pub fn estimate_system_tokens(prompt: &str, tools: &impl serde::Serialize) -> u64 {
    let tools_json = serde_json::to_string(tools).unwrap_or_default();
    tokens_of_chars(js_len(prompt) + js_len(&tools_json))
}

/// pi's `ContextUsageEstimate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextEstimate {
    /// `usage_tokens + trailing_tokens`.
    pub tokens: u64,
    /// From the last valid usage; 0 when there is none.
    pub usage_tokens: u64,
    /// Estimated for the messages after it (all messages when there is none).
    pub trailing_tokens: u64,
    /// Index of the message whose usage was taken. The app needs it to ignore a usage that
    /// predates the latest compaction.
    pub last_usage_index: Option<usize>,
}

/// pi's `estimateContextTokens`.
pub fn estimate_context<M: ContextItem>(messages: &[M]) -> ContextEstimate {
    let last = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| m.reported_context_tokens().map(|t| (i, t)));
    let (usage_tokens, from, last_usage_index) = match last {
        Some((i, t)) => (t, i + 1, Some(i)),
        None => (0, 0, None),
    };
    let trailing_tokens = messages[from..].iter().map(|m| m.estimate_tokens()).sum();
    ContextEstimate {
        tokens: usage_tokens + trailing_tokens,
        usage_tokens,
        trailing_tokens,
        last_usage_index,
    }
}

/// The context size in tokens: last valid usage plus estimates of later messages.
pub fn context_tokens<M: ContextItem>(messages: &[M]) -> u64 {
    estimate_context(messages).tokens
}

/// pi's `shouldCompact`: enabled, and the context leaves less than `reserveTokens` of the
/// window. A window smaller than the reserve makes any context too large, as in pi.
pub fn should_compact(
    context_tokens: u64,
    context_window: u64,
    settings: &CompactionSettings,
) -> bool {
    settings.enabled
        && i128::from(context_tokens)
            > i128::from(context_window) - i128::from(settings.reserve_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{AssistantMessage, ToolCall, ToolResultMessage, UserMessage};
    use serde_json::json;

    fn assistant(stop: StopReason, usage: Usage) -> Message {
        let mut a = AssistantMessage::empty("faux", "p", "m");
        a.content.push(Content::text("x".repeat(40)));
        a.stop_reason = stop;
        a.usage = usage;
        Message::Assistant(a)
    }

    fn usage(total: u64) -> Usage {
        Usage {
            input: 1,
            total_tokens: total,
            ..Usage::default()
        }
    }

    #[test]
    fn estimates_are_chars_over_four_rounded_up() {
        assert_eq!(Message::user("abcde").estimate_tokens(), 2);
        assert_eq!(Message::user("abcd").estimate_tokens(), 1);
        // UTF-16 units: "é" is 1, "😀" is 2.
        assert_eq!(Message::user("é😀é").estimate_tokens(), 1);
        assert_eq!(Message::user("😀😀😀").estimate_tokens(), 2);
        let img = Message::User(UserMessage {
            content: UserContent::Blocks(vec![
                Content::text("abcd"),
                Content::Image {
                    data: "AAAA".into(),
                    mime_type: "image/png".into(),
                },
            ]),
            timestamp: 0,
        });
        assert_eq!(img.estimate_tokens(), (4 + 4800) / 4);
    }

    #[test]
    fn assistant_counts_text_thinking_and_tool_call_json() {
        let mut a = AssistantMessage::empty("faux", "p", "m");
        a.content.push(Content::text("hello"));
        a.content.push(Content::Thinking {
            thinking: "hmm".into(),
            signature: None,
        });
        a.content.push(Content::ToolCall(ToolCall {
            thought_signature: None,
            id: "c".into(),
            name: "read".into(),
            arguments: json!({"path": "a.rs"}),
        }));
        // 5 + 3 + 4 + len({"path":"a.rs"}) = 12 + 15 = 27 → 7
        assert_eq!(Message::Assistant(a).estimate_tokens(), 7);
        let t = Message::ToolResult(ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: "read".into(),
            content: vec![Content::text("123456789")],
            details: None,
            is_error: false,
            structured_content: None,
            usage: None,
            duration_ms: None,
            timestamp: 0,
        });
        assert_eq!(t.estimate_tokens(), 3);
    }

    #[test]
    fn pi_only_roles_are_estimated_from_raw_json() {
        let bash =
            AgentMessage::Raw(json!({"role":"bashExecution","command":"ls","output":"abcdef"}));
        assert_eq!(bash.estimate_tokens(), 2);
        let custom = AgentMessage::Raw(
            json!({"role":"custom","content":[{"type":"text","text":"abcdefgh"},{"type":"image"}]}),
        );
        assert_eq!(custom.estimate_tokens(), (8 + 4800) / 4);
        let sum = AgentMessage::Raw(json!({"role":"compactionSummary","summary":"abcdefghi"}));
        assert_eq!(sum.estimate_tokens(), 3);
        let branch = AgentMessage::Raw(json!({"role":"branchSummary","summary":"a"}));
        assert_eq!(branch.estimate_tokens(), 1);
        assert_eq!(
            AgentMessage::Raw(json!({"role":"system"})).estimate_tokens(),
            0
        );
    }

    #[test]
    fn usage_of_aborted_error_and_all_zero_replies_is_skipped() {
        let msgs = [
            Message::user("q"),
            assistant(StopReason::Stop, usage(1000)),
            Message::user("abcdefgh"),
            assistant(StopReason::Error, usage(5000)),
            assistant(StopReason::Aborted, usage(6000)),
            assistant(StopReason::Stop, Usage::default()),
        ];
        let e = estimate_context(&msgs);
        assert_eq!(e.last_usage_index, Some(1));
        assert_eq!(e.usage_tokens, 1000);
        // user (2) + three 40-char assistant replies (10 each)
        assert_eq!(e.trailing_tokens, 2 + 30);
        assert_eq!(context_tokens(&msgs), 1032);
    }

    #[test]
    fn total_tokens_zero_falls_back_to_the_sum_of_parts() {
        let u = Usage {
            input: 10,
            output: 5,
            cache_read: 3,
            cache_write: 2,
            total_tokens: 0,
            ..Usage::default()
        };
        assert_eq!(calculate_context_tokens(&u), 20);
        let msgs = [assistant(StopReason::ToolUse, u)];
        assert_eq!(context_tokens(&msgs), 20);
    }

    #[test]
    fn without_usage_everything_is_estimated() {
        let msgs = [Message::user("abcd"), Message::user("abcdefgh")];
        let e = estimate_context(&msgs);
        assert_eq!(e.last_usage_index, None);
        assert_eq!(e.tokens, 3);
        let with_usage = [
            assistant(StopReason::Stop, usage(1000)),
            Message::user("abcd"),
        ];
        assert_eq!(estimate_messages_tokens(&with_usage), 11);
    }

    #[test]
    fn raw_assistant_usage_is_read_from_json() {
        let ok = AgentMessage::Raw(json!({"role":"assistant","content":[],"stopReason":"stop",
            "usage":{"input":7,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0}}));
        assert_eq!(ok.reported_context_tokens(), Some(7));
        let err = AgentMessage::Raw(json!({"role":"assistant","content":[],"stopReason":"error",
            "usage":{"input":7}}));
        assert_eq!(err.reported_context_tokens(), None);
    }

    #[test]
    fn should_compact_uses_window_minus_reserve() {
        let s = CompactionSettings::default();
        assert!(!should_compact(200_000 - 16384, 200_000, &s));
        assert!(should_compact(200_000 - 16383, 200_000, &s));
        assert!(should_compact(1, 1000, &s));
        let off = CompactionSettings {
            enabled: false,
            ..s
        };
        assert!(!should_compact(1_000_000, 1000, &off));
    }
}
