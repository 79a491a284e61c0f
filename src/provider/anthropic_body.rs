//! The Messages API request body of a [`Request`], as pi 1.6's `anthropic-messages.js` builds
//! it (`buildParams`, `convertMessages`): the conversation in Anthropic's shapes, the prompt,
//! the tools, and what [`anthropic_params`](super::anthropic_params) decides about thinking,
//! effort and caching. The types it fills are in [`anthropic_wire`](super::anthropic_wire).

use std::borrow::Cow;
use std::sync::Arc;

use super::anthropic::sanitize_tool_id;
use super::anthropic_params::{self as params, Compat, Plan};
use super::anthropic_system::InPlace;
use super::anthropic_wire::{
    Block, BlockKind, Body, CacheControl, EmptyObject, Fallback, ImageSource, Input,
    MessageContent, OutputConfig, ResultContent, SystemBlock, WireMessage,
};
use super::stream::replayable_messages;
use super::{Model, ProviderError, Request};
use crate::message::{AssistantMessage, Content, Message, ToolResultMessage, UserContent};

/// What stands in for an error result's images, which follow the batch's results.
const ERROR_IMAGE_PLACEHOLDER: &str = "(image attached after the tool results)";
/// The text a result of images alone opens with.
const IMAGES_ONLY: &str = "(see attached image)";
/// Effort levels a reply may have been recorded with.
const EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

/// The body of `req` and how it thinks. `replayed` must be [`replayable_messages`] of the
/// request's messages (the caller keeps it alive, as the body borrows from it). With
/// `claude_code` (a Claude Pro/Max login's token) the request presents itself as Claude
/// Code, as pi 1.6's does: the identity line first in `system`, and tools under Claude Code's
/// names.
pub fn body<'a>(
    req: &'a Request,
    replayed: &'a [Arc<Message>],
    claude_code: bool,
) -> Result<(Body<'a>, Plan), ProviderError> {
    let model = &req.model;
    let compat = Compat::of(model);
    let cache = params::cache_control(model);
    let name = |n: &'a str| if claude_code { claude_code_name(n) } else { n };
    let in_place = InPlace::of(req, replayed);
    let conversation = match &in_place {
        Some(p) if p.leading.is_some() => &replayed[1..],
        _ => replayed,
    };
    let converted = messages(conversation, model, compat, &name, in_place.as_ref())?;
    let mut messages = converted.messages;
    if let Some(cache) = cache {
        mark_last(&mut messages, cache);
    }
    let plan = params::plan(req);
    if let Some(active) = &plan.effort_markers {
        messages = with_effort_markers(messages, &converted.levels, active);
    }
    let prompt: Cow<'a, str> = match &in_place {
        Some(p) => Cow::Owned(p.leading_text.clone()),
        None => Cow::Borrowed(&req.system_prompt),
    };
    let tool_cache = cache.filter(|_| compat.cache_on_tools);
    let tools = match &in_place {
        Some(p) => p.tools(&name, compat, tool_cache)?,
        None => {
            let specs: Vec<_> = req.tools.iter().collect();
            params::tools(&specs, compat, &name, tool_cache)?
        }
    };
    let body = Body {
        model: &model.id,
        messages,
        max_tokens: plan.max_tokens,
        stream: true,
        system: claude_code
            .then_some(Cow::Borrowed(CLAUDE_CODE_IDENTITY))
            .into_iter()
            .chain((!prompt.is_empty()).then_some(prompt))
            .map(|text| SystemBlock {
                ty: "text",
                text,
                cache_control: cache,
            })
            .collect(),
        tools,
        thinking: plan.thinking.clone(),
        output_config: plan.output_config.clone(),
        fallbacks: params::fallbacks(model)
            .into_iter()
            .map(|model| Fallback { model })
            .collect(),
    };
    Ok((body, plan))
}

/// The conversation prefix up to the newest user turn or system update is cached (as pi
/// does): the next request repeats it, and cached input is far cheaper.
fn mark_last(messages: &mut [WireMessage<'_>], cache: CacheControl) {
    let Some(last) = messages.last_mut().filter(|m| m.role != "assistant") else {
        return;
    };
    match &mut last.content {
        MessageContent::Text(text) => {
            last.content = MessageContent::Blocks(vec![Block {
                kind: BlockKind::text(text),
                cache_control: Some(cache),
            }]);
        }
        MessageContent::Blocks(blocks) => {
            if let Some(block) = blocks.last_mut().filter(|b| cacheable(&b.kind)) {
                block.cache_control = Some(cache);
            }
        }
    }
}

/// 1.6's `insertThinkingLevelMessages`: before each reply recorded with an effort, a marker
/// of it; at the end, the marker of the effort this reply is asked for.
fn with_effort_markers<'a>(
    messages: Vec<WireMessage<'a>>,
    levels: &[(usize, &'a str)],
    active: &str,
) -> Vec<WireMessage<'a>> {
    let marker = |effort: &str| WireMessage {
        role: "system",
        content: MessageContent::Blocks(Vec::new()),
        output_config: Some(OutputConfig {
            effort: effort.to_string(),
        }),
    };
    let mut out = Vec::with_capacity(messages.len() + levels.len() + 1);
    for (i, m) in messages.into_iter().enumerate() {
        if let Some((_, effort)) = levels.iter().find(|(at, _)| *at == i) {
            out.push(marker(effort));
        }
        out.push(m);
    }
    out.push(marker(active));
    out
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

fn image<'a>(data: &'a str, mime_type: &'a str) -> Block<'a> {
    BlockKind::Image {
        source: ImageSource {
            ty: "base64",
            media_type: mime_type,
            data,
        },
    }
    .into()
}

/// A user turn: plain text as a string, blocks without blank text; nothing when empty.
fn user_turn(content: &UserContent) -> Option<MessageContent<'_>> {
    match content {
        UserContent::Text(s) if s.trim().is_empty() => None,
        UserContent::Text(s) => Some(MessageContent::Text(s)),
        UserContent::Blocks(b) => {
            let blocks: Vec<Block<'_>> = b
                .iter()
                .filter_map(|c| match c {
                    Content::Text { text, .. } if !text.trim().is_empty() => {
                        Some(BlockKind::text(text).into())
                    }
                    Content::Image { data, mime_type } => Some(image(data, mime_type)),
                    _ => None,
                })
                .collect();
            (!blocks.is_empty()).then_some(MessageContent::Blocks(blocks))
        }
    }
}

/// A reply's blocks. Thinking is only valid for the model that produced it: another model's
/// is dropped, an unsigned one sent as text (or, where the model allows it, with an empty
/// signature).
fn assistant_turn<'a>(
    a: &'a AssistantMessage,
    model: &Model,
    compat: Compat,
    name: &dyn Fn(&'a str) -> &'a str,
) -> Vec<Block<'a>> {
    let same = a.provider == model.provider && a.api == model.api && a.model == model.id;
    a.content
        .iter()
        .filter_map(|b| match b {
            Content::Text { text, .. } if !text.trim().is_empty() => {
                Some(BlockKind::text(text).into())
            }
            Content::Thinking {
                thinking,
                signature,
            } if same => {
                let signature = signature.as_deref().filter(|s| !s.trim().is_empty());
                match signature {
                    Some(signature) => Some(BlockKind::Thinking {
                        thinking,
                        signature,
                    }),
                    None if thinking.trim().is_empty() => None,
                    None if compat.allow_empty_signature => Some(BlockKind::Thinking {
                        thinking,
                        signature: "",
                    }),
                    None => Some(BlockKind::text(thinking)),
                }
                .map(Block::from)
            }
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
        .collect()
}

/// One tool result; an error result's images (which the API rejects there) are handed back
/// to follow the batch, each batch's captioned.
fn tool_result<'a>(r: &'a ToolResultMessage, after: &mut Vec<Block<'a>>) -> Block<'a> {
    let images = || {
        r.content
            .iter()
            .filter(|c| matches!(c, Content::Image { .. }))
    };
    let split = r.is_error && images().next().is_some();
    let content = if split {
        let mut texts: Vec<&str> = Vec::new();
        let mut last_placeholder = false;
        for c in &r.content {
            match c {
                Content::Image { .. } if !last_placeholder => {
                    texts.push(ERROR_IMAGE_PLACEHOLDER);
                    last_placeholder = true;
                }
                Content::Text { text, .. } => {
                    texts.push(text);
                    last_placeholder = text == ERROR_IMAGE_PLACEHOLDER;
                }
                _ => {}
            }
        }
        after.push(
            BlockKind::Text {
                text: Cow::Owned(format!(
                    "Images from the error result of tool call {} ({}):",
                    r.tool_call_id, r.tool_name
                )),
            }
            .into(),
        );
        after.extend(images().filter_map(|c| match c {
            Content::Image { data, mime_type } => Some(image(data, mime_type)),
            _ => None,
        }));
        ResultContent::Text(Cow::Owned(texts.join("\n")))
    } else {
        result_content(&r.content)
    };
    BlockKind::ToolResult {
        tool_use_id: sanitize_tool_id(&r.tool_call_id),
        content,
        is_error: r.is_error,
    }
    .into()
}

/// 1.6's `convertContentBlocks`: text alone joined into a string, else text and image
/// blocks (opened by a line of text when there are only images).
fn result_content(content: &[Content]) -> ResultContent<'_> {
    let texts = || {
        content.iter().filter_map(|c| match c {
            Content::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
    };
    if !content.iter().any(|c| matches!(c, Content::Image { .. })) {
        return ResultContent::Text(Cow::Owned(texts().collect::<Vec<_>>().join("\n")));
    }
    let mut blocks: Vec<Block<'_>> = Vec::new();
    if texts().next().is_none() {
        blocks.push(BlockKind::text(IMAGES_ONLY).into());
    }
    blocks.extend(content.iter().filter_map(|c| match c {
        Content::Text { text, .. } => Some(BlockKind::text(text).into()),
        Content::Image { data, mime_type } => Some(image(data, mime_type)),
        _ => None,
    }));
    ResultContent::Blocks(blocks)
}

/// Whether a message's last block of this kind takes the conversation's cache breakpoint.
fn cacheable(kind: &BlockKind<'_>) -> bool {
    matches!(
        kind,
        BlockKind::Text { .. }
            | BlockKind::Image { .. }
            | BlockKind::ToolResult { .. }
            | BlockKind::ToolAddition { .. }
            | BlockKind::ToolRemoval { .. }
    )
}

/// The converted conversation, and the effort each of the model's own replies was made at
/// (by index among the converted messages).
struct Converted<'a> {
    messages: Vec<WireMessage<'a>>,
    levels: Vec<(usize, &'a str)>,
}

/// pi's messages as Anthropic messages. In place, a system message after the first is held
/// back and sent just before the next assistant message (or at the end): Anthropic wants a
/// tool's result right after its call, so nothing may come between.
fn messages<'a>(
    replayed: &'a [Arc<Message>],
    model: &Model,
    compat: Compat,
    name: &dyn Fn(&'a str) -> &'a str,
    in_place: Option<&InPlace<'a>>,
) -> Result<Converted<'a>, ProviderError> {
    let mut out: Vec<WireMessage<'_>> = Vec::new();
    let mut levels = Vec::new();
    let mut held: Vec<WireMessage<'_>> = Vec::new();
    let mut i = 0;
    while i < replayed.len() {
        match replayed[i].as_ref() {
            // Collapsed, the prompt travels as `system`: the request's, which the system
            // messages replay to.
            Message::System(s) => {
                if let Some(p) = in_place {
                    held.extend(p.update(s, name, compat)?);
                }
            }
            Message::User(_) | Message::Custom(_) => {
                let turn = replayed[i].user_content().and_then(user_turn);
                out.extend(turn.map(|content| WireMessage {
                    role: "user",
                    content,
                    output_config: None,
                }));
            }
            Message::Assistant(a) => {
                let blocks = assistant_turn(a, model, compat, name);
                if !blocks.is_empty() {
                    out.append(&mut held);
                    let level = a.provider_thinking_level.as_deref();
                    if let Some(level) = level.filter(|l| {
                        a.api == "anthropic-messages"
                            && a.provider == model.provider
                            && EFFORTS.contains(l)
                    }) {
                        levels.push((out.len(), level));
                    }
                    out.push(WireMessage::blocks("assistant", blocks));
                }
            }
            // Results of one batch of tool calls travel together in a single user message.
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                let mut after = Vec::new();
                while let Some(Message::ToolResult(r)) = replayed.get(i).map(|m| m.as_ref()) {
                    results.push(tool_result(r, &mut after));
                    i += 1;
                }
                results.append(&mut after);
                out.push(WireMessage::blocks("user", results));
                continue;
            }
        }
        i += 1;
    }
    out.append(&mut held);
    Ok(Converted {
        messages: out,
        levels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::stream::body_support::every_kind;

    #[test]
    fn the_body_written_from_references_is_the_body_hooks_see() {
        let req = every_kind("anthropic-messages");
        let replayed = replayed(&req);
        let (body, _) = body(&req, &replayed, false).unwrap();
        let direct = serde_json::to_string(&body).unwrap();
        let value = serde_json::to_value(&body).unwrap();
        assert_eq!(direct, serde_json::to_string(&value).unwrap());
    }
}
