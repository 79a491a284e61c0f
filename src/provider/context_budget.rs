//! The output budget pi 1.6 asks for (`clampMaxTokensToContext`): the model's `maxTokens`,
//! cut so that it fits the context window beside the input as 1.6's provider layer estimates
//! it, with a safety margin for the server counting the input higher.
//!
//! Many catalog models (Mistral's among them) declare a `maxTokens` as large as their window,
//! which a server rejects next to any input, so the request's `max_tokens` depends on the
//! conversation. The estimate is pi-ai's `estimateContextTokens`, not the compaction one: 3.5
//! characters (UTF-16 code units) to a token, an image as 4800 characters, the leading system
//! message (prompt and tool declarations as JSON) counted like any other, and the usage of the
//! last successful reply standing for everything up to it when it still describes the prefix.

use crate::message::system::ToolDeclaration;
use crate::message::{Content, CustomMessage, Message, StopReason, UserContent, UserMessage};

use super::Request;

const CHARS_PER_TOKEN: f64 = 3.5;
const IMAGE_CHARS: u64 = 4800;
const SAFETY_TOKENS: i64 = 4096;
const SAFETY_RATIO: f64 = 0.15;
const MIN_OUTPUT_WITH_RATIO_MARGIN: i64 = 32768;

fn js_len(s: &str) -> u64 {
    s.encode_utf16().count() as u64
}

fn tokens(chars: u64) -> u64 {
    (chars as f64 / CHARS_PER_TOKEN).ceil() as u64
}

fn blocks_chars(blocks: &[Content]) -> u64 {
    blocks
        .iter()
        .map(|b| match b {
            Content::Text { text, .. } => js_len(text),
            _ => IMAGE_CHARS,
        })
        .sum()
}

fn content_tokens(content: &UserContent) -> u64 {
    tokens(match content {
        UserContent::Text(t) => js_len(t),
        UserContent::Blocks(b) => blocks_chars(b),
    })
}

/// pi-ai's `estimateMessageTokens`.
fn message_tokens(m: &Message) -> u64 {
    match m {
        Message::User(UserMessage { content, .. })
        | Message::Custom(CustomMessage { content, .. }) => content_tokens(content),
        Message::ToolResult(r) => tokens(blocks_chars(&r.content)),
        Message::Assistant(a) => tokens(
            a.content
                .iter()
                .map(|b| match b {
                    Content::Text { text, .. } => js_len(text),
                    Content::Thinking { thinking, .. } => js_len(thinking),
                    Content::ToolCall(tc) => {
                        js_len(&tc.name)
                            + js_len(&serde_json::to_string(&tc.arguments).unwrap_or_default())
                    }
                    Content::Image { .. } => 0,
                })
                .sum(),
        ),
        Message::System(s) => {
            let tools = |t: Option<String>| t.map_or(0, |json| tokens(js_len(&json)));
            tokens(js_len(&s.text()))
                + tools(
                    s.tools_added
                        .as_ref()
                        .filter(|t| !t.is_empty())
                        .and_then(|t| serde_json::to_string(t).ok()),
                )
                + tools(
                    s.tools_removed
                        .as_ref()
                        .filter(|t| !t.is_empty())
                        .and_then(|t| serde_json::to_string(t).ok()),
                )
        }
    }
}

fn timestamp(m: &Message) -> i64 {
    match m {
        Message::User(u) => u.timestamp,
        Message::Custom(c) => c.timestamp,
        Message::Assistant(a) => a.timestamp,
        Message::ToolResult(r) => r.timestamp,
        Message::System(s) => s.timestamp,
    }
}

/// The context's tokens as pi-ai estimates them: the transcript's system messages where they
/// are (or, for a request without them, one leading message declaring its prompt and tools),
/// then the conversation.
pub fn estimate_input_tokens(req: &Request) -> u64 {
    let declarations: Vec<ToolDeclaration> = req.tools.iter().map(ToolDeclaration::from).collect();
    let declared = super::transcript::has_system(&req.messages);
    let head = if declared || (req.system_prompt.is_empty() && declarations.is_empty()) {
        0
    } else {
        let tools = if declarations.is_empty() {
            0
        } else {
            tokens(js_len(
                &serde_json::to_string(&declarations).unwrap_or_default(),
            ))
        };
        tokens(js_len(&req.system_prompt)) + tools
    };
    let messages = &req.messages;
    // pi-ai's `getLastAssistantUsageInfo`: a reply's usage counts for the prefix only when no
    // message before it is newer (a compaction summary inserted later is).
    let mut latest = i64::MIN;
    let mut last_usage: Option<(usize, u64)> = None;
    for (i, m) in messages.iter().enumerate() {
        if let Message::Assistant(a) = m.as_ref() {
            let u = &a.usage;
            let total = if u.total_tokens > 0 {
                u.total_tokens
            } else {
                u.input + u.output + u.cache_read + u.cache_write
            };
            let failed = matches!(a.stop_reason, StopReason::Aborted | StopReason::Error);
            if a.timestamp >= latest && !failed && total > 0 {
                last_usage = Some((i, total));
            }
        }
        latest = latest.max(timestamp(m));
    }
    match last_usage {
        Some((i, total)) => {
            total
                + messages[i + 1..]
                    .iter()
                    .map(|m| message_tokens(m))
                    .sum::<u64>()
        }
        None => head + messages.iter().map(|m| message_tokens(m)).sum::<u64>(),
    }
}

/// 1.6's `clampMaxTokensToContext` of the model's `maxTokens` for this request.
pub fn clamp_max_tokens(req: &Request) -> u64 {
    clamp_to_context(req, req.model.max_tokens)
}

/// 1.6's `clampMaxTokensToContext` of `max_tokens` for this request: what fits the context
/// window beside the estimated input and its safety margin.
pub fn clamp_to_context(req: &Request, max_tokens: u64) -> u64 {
    let model = &req.model;
    let max_tokens = max_tokens as i64;
    if model.context_window == 0 {
        return max_tokens.max(1) as u64;
    }
    let window = model.context_window as i64;
    let input = estimate_input_tokens(req) as i64;
    let margin = SAFETY_TOKENS.max((input as f64 * SAFETY_RATIO).ceil() as i64);
    let mut room = window - input - margin;
    if room < MIN_OUTPUT_WITH_RATIO_MARGIN {
        room = MIN_OUTPUT_WITH_RATIO_MARGIN.min(window - input - SAFETY_TOKENS);
    }
    max_tokens.min(room.max(1)).max(0) as u64
}
