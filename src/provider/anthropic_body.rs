//! The Messages API request body as plain serde types that borrow from the [`Request`].
//!
//! The conversation is the bulk of a request; building the body as a `serde_json::Value`
//! would copy every message's text before serializing it again. These types point into the
//! request's messages instead, so the body is written straight from them (a `Value` is made
//! only when a hook's `before_provider_request` must see and may rewrite it). Field order is
//! the order the API documentation and pi use, and it is what the bytes on the wire show.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::anthropic::{sanitize_tool_id, token_limits};
use super::stream::replayable_messages;
use super::Request;
use crate::message::{Content, CustomMessage, Message, UserContent, UserMessage};

/// `{"type": "ephemeral"}`.
#[derive(Debug, Clone, Copy, Serialize)]
struct Ephemeral {
    #[serde(rename = "type")]
    ty: &'static str,
}

const EPHEMERAL: Ephemeral = Ephemeral { ty: "ephemeral" };

#[derive(Debug, Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    text: &'a str,
    cache_control: Ephemeral,
}

#[derive(Debug, Serialize)]
struct ImageSource<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    media_type: &'a str,
    data: &'a str,
}

/// `{}`: the input of a tool call whose arguments are not an object.
#[derive(Debug, Serialize)]
struct EmptyObject {}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Input<'a> {
    Args(&'a Value),
    Empty(EmptyObject),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockKind<'a> {
    Text {
        text: &'a str,
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
}

/// A content block; the newest user turn's last block carries `cache_control` after its own
/// fields.
#[derive(Debug, Serialize)]
struct Block<'a> {
    #[serde(flatten)]
    kind: BlockKind<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Ephemeral>,
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
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
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
    let mut messages = messages(replayed, &name);
    // Cache the conversation prefix up to the newest user turn (as pi does): the next request
    // repeats it, and cached input is far cheaper.
    if let Some(last) = messages.last_mut().filter(|m| m.role == "user") {
        if let Some(block) = last.content.last_mut() {
            block.cache_control = Some(EPHEMERAL);
        }
    }
    Body {
        model: &req.model.id,
        max_tokens,
        system: claude_code
            .then_some(CLAUDE_CODE_IDENTITY)
            .into_iter()
            .chain((!req.system_prompt.is_empty()).then_some(req.system_prompt.as_str()))
            .map(|text| SystemBlock {
                ty: "text",
                text,
                cache_control: EPHEMERAL,
            })
            .collect(),
        messages,
        tools: req
            .tools
            .iter()
            .map(|t| WireTool {
                name: name(&t.name),
                description: &t.description,
                input_schema: &t.parameters,
            })
            .collect(),
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

/// pi's messages as Anthropic messages.
fn messages<'a>(
    replayed: &'a [Arc<Message>],
    name: &dyn Fn(&'a str) -> &'a str,
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
    for m in replayed {
        // The prompt travels as `system`: the request's, which the system messages replay to.
        if matches!(**m, Message::System(_)) {
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
            // Skipped above.
            Message::System(_) => {}
        }
    }
    flush(&mut results, &mut out);
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
