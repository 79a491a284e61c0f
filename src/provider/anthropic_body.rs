//! The Messages API request body as plain serde types that borrow from the [`Request`].
//!
//! The conversation is the bulk of a request; building the body as a `serde_json::Value`
//! would copy every message's text before serializing it again. These types point into the
//! request's messages instead, so the body is written straight from them (a `Value` is made
//! only when a hook's `before_provider_request` must see and may rewrite it). Field order is
//! the order the API documentation and pi use, and it is what the bytes on the wire show.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::anthropic::{sanitize_tool_id, token_limits};
use super::anthropic_system::InPlace;
use super::stream::replayable_messages;
use super::Request;
use crate::message::{Content, CustomMessage, Message, UserContent, UserMessage};

/// `{"type": "ephemeral"}`.
#[derive(Debug, Clone, Copy, Serialize)]
pub(super) struct Ephemeral {
    #[serde(rename = "type")]
    ty: &'static str,
}

const EPHEMERAL: Ephemeral = Ephemeral { ty: "ephemeral" };

#[derive(Debug, Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    text: Cow<'a, str>,
    cache_control: Ephemeral,
}

#[derive(Debug, Serialize)]
pub(super) struct ImageSource<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    media_type: &'a str,
    data: &'a str,
}

/// `{}`: the input of a tool call whose arguments are not an object.
#[derive(Debug, Serialize)]
pub(super) struct EmptyObject {}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum Input<'a> {
    Args(&'a Value),
    Empty(EmptyObject),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum BlockKind<'a> {
    Text {
        text: &'a str,
    },
    /// Text made for the request (a system message's update).
    #[serde(rename = "text")]
    OwnedText {
        text: String,
    },
    Image {
        source: ImageSource<'a>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    ToolUse {
        id: String,
        name: &'a str,
        input: Input<'a>,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        content: Vec<Block<'a>>,
        is_error: bool,
    },
    /// A tool withdrawn inside the conversation (native tool changes).
    ToolRemoval {
        tool: ToolReference<'a>,
    },
    /// A tool defined inside the conversation (native tool changes).
    ToolAddition {
        tool: ToolDefinition<'a>,
    },
}

#[derive(Debug, Serialize)]
pub(super) struct ToolReference<'a> {
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub name: &'a str,
}

#[derive(Debug, Serialize)]
pub(super) struct ToolDefinition<'a> {
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub definition: WireTool<'a>,
}

/// A content block; the newest user turn's last block carries `cache_control` after its own
/// fields.
#[derive(Debug, Serialize)]
pub(super) struct Block<'a> {
    #[serde(flatten)]
    pub kind: BlockKind<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Ephemeral>,
}

impl<'a> From<BlockKind<'a>> for Block<'a> {
    fn from(kind: BlockKind<'a>) -> Self {
        Block {
            kind,
            cache_control: None,
        }
    }
}

#[derive(Debug, Serialize)]
pub(super) struct WireMessage<'a> {
    pub role: &'static str,
    pub content: Vec<Block<'a>>,
}

#[derive(Debug, Serialize)]
pub(super) struct WireTool<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub input_schema: Schema<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defer_loading: Option<bool>,
}

/// A tool's schema, or the empty one of the deferred placeholder.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum Schema<'a> {
    Of(&'a Value),
    Empty(EmptySchema),
}

/// `{"type": "object", "properties": {}, "required": []}`.
#[derive(Debug, Serialize)]
pub(super) struct EmptySchema {
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub properties: EmptyObject,
    pub required: [(); 0],
}

#[derive(Debug, Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    ty: &'static str,
    budget_tokens: u64,
}

/// The request body (before `before_provider_request`).
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    model: &'a str,
    max_tokens: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<SystemBlock<'a>>,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    stream: bool,
}

/// The body of `req`. `replayed` must be [`replayable_messages`] of the request's messages
/// (the caller keeps it alive, as the body borrows from it). With `claude_code` (a Claude
/// Pro/Max login's token) the request presents itself as Claude Code, as pi 1.6's does: the
/// identity line first in `system`, and tools under Claude Code's names.
pub fn body<'a>(req: &'a Request, replayed: &'a [Arc<Message>], claude_code: bool) -> Body<'a> {
    let (max_tokens, budget) = token_limits(&req.model, req.thinking);
    let name = |n: &'a str| if claude_code { claude_code_name(n) } else { n };
    let in_place = InPlace::of(req, replayed);
    let conversation = match &in_place {
        Some(p) if p.leading.is_some() => &replayed[1..],
        _ => replayed,
    };
    let mut messages = messages(conversation, &name, in_place.as_ref());
    // Cache the conversation prefix up to the newest user turn or system update (as pi does):
    // the next request repeats it, and cached input is far cheaper.
    if let Some(last) = messages.last_mut().filter(|m| m.role != "assistant") {
        if let Some(block) = last.content.last_mut().filter(|b| cacheable(&b.kind)) {
            block.cache_control = Some(EPHEMERAL);
        }
    }
    let prompt: Cow<'a, str> = match &in_place {
        Some(p) => Cow::Owned(p.leading_text.clone()),
        None => Cow::Borrowed(&req.system_prompt),
    };
    let tools = match &in_place {
        Some(p) => p.tools(&name),
        None => req
            .tools
            .iter()
            .map(|t| WireTool {
                name: name(&t.name),
                description: &t.description,
                input_schema: Schema::Of(&t.parameters),
                defer_loading: None,
            })
            .collect(),
    };
    Body {
        model: &req.model.id,
        max_tokens,
        system: claude_code
            .then_some(Cow::Borrowed(CLAUDE_CODE_IDENTITY))
            .into_iter()
            .chain((!prompt.is_empty()).then_some(prompt))
            .map(|text| SystemBlock {
                ty: "text",
                text,
                cache_control: EPHEMERAL,
            })
            .collect(),
        messages,
        tools,
        thinking: budget.map(|budget_tokens| Thinking {
            ty: "enabled",
            budget_tokens,
        }),
        stream: true,
    }
}

/// The first system block of a request made with a Claude Pro/Max login.
const CLAUDE_CODE_IDENTITY: &str = "You are Claude Code, Anthropic's official CLI for Claude.";

/// Claude Code 2.x's tool names, which a Claude Pro/Max login's requests use for pi's tools
/// of the same name in any case (as pi 1.6 does).
const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// `name` in Claude Code's casing when it is one of its tools.
pub fn claude_code_name(name: &str) -> &str {
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|t| t.eq_ignore_ascii_case(name))
        .copied()
        .unwrap_or(name)
}

/// The replayable messages of a request, for [`body`].
pub fn replayed(req: &Request) -> Vec<Arc<Message>> {
    replayable_messages(&req.messages)
}

/// Text and image blocks, skipping empty text (which the API rejects).
fn media_blocks(blocks: &[Content]) -> Vec<Block<'_>> {
    blocks.iter().filter_map(media_block).collect()
}

fn media_block(b: &Content) -> Option<Block<'_>> {
    match b {
        Content::Text { text, .. } if !text.trim().is_empty() => {
            Some(BlockKind::Text { text }.into())
        }
        Content::Image { data, mime_type } => Some(
            BlockKind::Image {
                source: ImageSource {
                    ty: "base64",
                    media_type: mime_type,
                    data,
                },
            }
            .into(),
        ),
        _ => None,
    }
}

/// Whether a message's last block of this kind takes the conversation's cache breakpoint.
fn cacheable(kind: &BlockKind<'_>) -> bool {
    matches!(
        kind,
        BlockKind::Text { .. }
            | BlockKind::OwnedText { .. }
            | BlockKind::Image { .. }
            | BlockKind::ToolResult { .. }
            | BlockKind::ToolAddition { .. }
            | BlockKind::ToolRemoval { .. }
    )
}

/// pi's messages as Anthropic messages. In place, a system message after the first is held
/// back and sent just before the next assistant message (or at the end): Anthropic wants a
/// tool's result right after its call, so nothing may come between.
fn messages<'a>(
    replayed: &'a [Arc<Message>],
    name: &dyn Fn(&'a str) -> &'a str,
    in_place: Option<&InPlace<'a>>,
) -> Vec<WireMessage<'a>> {
    fn flush<'a>(results: &mut Vec<Block<'a>>, out: &mut Vec<WireMessage<'a>>) {
        if !results.is_empty() {
            out.push(WireMessage {
                role: "user",
                content: std::mem::take(results),
            });
        }
    }
    let mut out: Vec<WireMessage<'_>> = Vec::new();
    // Results of one batch of tool calls travel together in a single user message.
    let mut results: Vec<Block<'_>> = Vec::new();
    let mut held: Vec<WireMessage<'_>> = Vec::new();
    for m in replayed {
        if let Message::System(s) = m.as_ref() {
            // Collapsed, the prompt travels as `system`: the request's, which the system
            // messages replay to.
            if let Some(p) = in_place {
                held.extend(p.update(s, name));
            }
            continue;
        }
        if !matches!(**m, Message::ToolResult(_)) {
            flush(&mut results, &mut out);
        }
        match m.as_ref() {
            Message::User(UserMessage { content, .. })
            | Message::Custom(CustomMessage { content, .. }) => {
                let blocks = match content {
                    UserContent::Text(s) if s.trim().is_empty() => Vec::new(),
                    UserContent::Text(s) => vec![BlockKind::Text { text: s }.into()],
                    UserContent::Blocks(b) => media_blocks(b),
                };
                if !blocks.is_empty() {
                    out.push(WireMessage {
                        role: "user",
                        content: blocks,
                    });
                }
            }
            Message::Assistant(a) => {
                // Signatures are only valid for the API that issued them.
                let own = a.api == "anthropic-messages";
                let blocks: Vec<Block<'_>> = a
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        Content::Text { text, .. } if !text.trim().is_empty() => {
                            Some(BlockKind::Text { text }.into())
                        }
                        Content::Thinking {
                            thinking,
                            signature: Some(sig),
                        } if own && !sig.is_empty() => Some(
                            BlockKind::Thinking {
                                thinking,
                                signature: sig,
                            }
                            .into(),
                        ),
                        Content::ToolCall(tc) => Some(
                            BlockKind::ToolUse {
                                id: sanitize_tool_id(&tc.id),
                                name: name(&tc.name),
                                input: if tc.arguments.is_object() {
                                    Input::Args(&tc.arguments)
                                } else {
                                    Input::Empty(EmptyObject {})
                                },
                            }
                            .into(),
                        ),
                        _ => None,
                    })
                    .collect();
                if !blocks.is_empty() {
                    out.append(&mut held);
                    out.push(WireMessage {
                        role: "assistant",
                        content: blocks,
                    });
                }
            }
            Message::ToolResult(r) => results.push(
                BlockKind::ToolResult {
                    tool_use_id: sanitize_tool_id(&r.tool_call_id),
                    content: media_blocks(&r.content),
                    is_error: r.is_error,
                }
                .into(),
            ),
            // Handled above.
            Message::System(_) => {}
        }
    }
    flush(&mut results, &mut out);
    out.append(&mut held);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::stream::body_support::every_kind;

    #[test]
    fn the_body_written_from_references_is_the_body_hooks_see() {
        let req = every_kind("anthropic-messages");
        let replayed = replayed(&req);
        let body = body(&req, &replayed, false);
        let direct = serde_json::to_string(&body).unwrap();
        let value = serde_json::to_value(&body).unwrap();
        assert_eq!(direct, serde_json::to_string(&value).unwrap());
        // Spot checks of the shapes the API requires.
        let msgs = value["messages"].as_array().unwrap();
        assert_eq!(msgs[3]["content"][3]["input"]["n"][1], 2.5);
        assert_eq!(msgs[3]["content"][4]["input"], serde_json::json!({}));
        assert_eq!(msgs[4]["content"][1]["tool_use_id"], "c2");
        assert!(msgs[4]["content"][1].get("content").is_none());
        let last = msgs.last().unwrap();
        assert_eq!(last["content"][0]["cache_control"]["type"], "ephemeral");
        assert!(direct
            .contains(r#"{"type":"text","text":"last","cache_control":{"type":"ephemeral"}}"#));
    }
}
