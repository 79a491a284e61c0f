//! The Mistral chat completions request body, as pi 1.6's `buildChatPayload` makes it and its
//! `toMistralWirePayload` renames it to the wire's snake_case (the renamed fields move to the
//! end, in 1.6's rename order: `max_tokens`, `reasoning_effort`, `prompt_mode`).
//!
//! The prompt is a leading `system` message. User turns are a string, or `text` and
//! `image_url` chunks (the URL a bare `data:` string); a model without image input gets 1.6's
//! placeholders instead of images. An assistant turn is `prefix: false`, its text and (for the
//! model that made it) thinking as chunks and its calls as `tool_calls`, every call with
//! `index: 0` as 1.6 writes them; calls of other models are renamed to Mistral's nine-character
//! ids ([`super::mistral_ids`]) and their results follow. Tool results are `tool` messages
//! whose text always comes first (an error marked `[tool error]`, nothing said as
//! `(no tool output)`), then their images.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::constrained_sampling::{resolve_strict, tool_parameters};
use super::context_budget::clamp_max_tokens;
use super::mistral::{thinking_fields, ThinkingFields};
use super::mistral_ids::IdNormalizer;
use super::openai_body::DataUrl;
use super::stream::replayable_messages;
use super::{ProviderError, Request};
use crate::message::{
    AssistantMessage, Content, CustomMessage, Message, ToolResultMessage, UserContent, UserMessage,
};

const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: DataUrl<'a> },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ThinkingText<'a> {
    Text { text: &'a str },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AssistantPart<'a> {
    Text { text: &'a str },
    Thinking { thinking: [ThinkingText<'a>; 1] },
}

#[derive(Debug, Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: String,
}

#[derive(Debug, Serialize)]
struct WireCall<'a> {
    id: Cow<'a, str>,
    #[serde(rename = "type")]
    ty: &'static str,
    function: Function<'a>,
    index: u32,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum WireMessage<'a> {
    Text {
        role: &'static str,
        content: Cow<'a, str>,
    },
    Parts {
        role: &'static str,
        content: Vec<Part<'a>>,
    },
    Assistant {
        role: &'static str,
        prefix: bool,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        content: Vec<AssistantPart<'a>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireCall<'a>>,
    },
    Tool {
        role: &'static str,
        name: &'a str,
        content: Vec<Part<'a>>,
        tool_call_id: Cow<'a, str>,
    },
}

#[derive(Debug, Serialize)]
struct WireFunctionSpec<'a> {
    name: &'a str,
    description: &'a str,
    parameters: Value,
    strict: bool,
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    function: WireFunctionSpec<'a>,
}

/// The request body (before `before_provider_request`).
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    model: &'a str,
    stream: bool,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<WireTool<'a>>>,
    max_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_mode: Option<&'static str>,
    /// The session's id, which keys Mistral's prompt cache (1.6's `promptCacheKey`).
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
}

/// The replayable messages of a request, for [`body`].
pub fn replayed(req: &Request) -> Vec<Arc<Message>> {
    replayable_messages(&req.messages)
}

/// The body of `req`; `replayed` must be [`replayed`] of the same request. Fails when a tool
/// requires strict sampling the model is not marked for (1.6's error).
pub fn body<'a>(req: &'a Request, replayed: &'a [Arc<Message>]) -> Result<Body<'a>, ProviderError> {
    let model = &req.model;
    let strict_ok = model
        .compat
        .get("supportsStrictMode")
        .and_then(Value::as_bool)
        == Some(true);
    let mut tools = Vec::with_capacity(req.tools.len());
    for tool in req.tools.iter() {
        let strict =
            resolve_strict(tool, strict_ok).map_err(|e| ProviderError::Other(e.to_string()))?;
        tools.push(WireTool {
            ty: "function",
            function: WireFunctionSpec {
                name: &tool.name,
                description: &tool.description,
                parameters: tool_parameters(tool, strict),
                strict,
            },
        });
    }
    let ThinkingFields {
        reasoning_effort,
        prompt_mode,
    } = thinking_fields(model, req.thinking);
    Ok(Body {
        model: &model.id,
        stream: true,
        messages: messages(req, replayed),
        tools: (!tools.is_empty()).then_some(tools),
        max_tokens: clamp_max_tokens(req),
        reasoning_effort,
        prompt_mode,
        prompt_cache_key: req.session_id.as_deref(),
    })
}

fn image<'a>(data: &'a str, mime_type: &'a str) -> Part<'a> {
    Part::ImageUrl {
        image_url: DataUrl { mime_type, data },
    }
}

/// Content blocks with images replaced as 1.6 replaces them for a model without image input:
/// one placeholder per run of images (a placeholder text already there counts).
fn texts_without_images<'a>(blocks: &'a [Content], placeholder: &'static str) -> Vec<&'a str> {
    let mut out = Vec::with_capacity(blocks.len());
    let mut after_placeholder = false;
    for b in blocks {
        match b {
            Content::Image { .. } => {
                if !after_placeholder {
                    out.push(placeholder);
                }
                after_placeholder = true;
            }
            Content::Text { text, .. } => {
                out.push(text.as_str());
                after_placeholder = text == placeholder;
            }
            _ => after_placeholder = false,
        }
    }
    out
}

fn user<'a>(content: &'a UserContent, images: bool, out: &mut Vec<WireMessage<'a>>) {
    let blocks = match content {
        UserContent::Text(text) => {
            out.push(WireMessage::Text {
                role: "user",
                content: Cow::Borrowed(text),
            });
            return;
        }
        UserContent::Blocks(blocks) => blocks,
    };
    let parts: Vec<Part<'a>> = if images {
        blocks
            .iter()
            .filter_map(|b| match b {
                Content::Text { text, .. } => Some(Part::Text {
                    text: Cow::Borrowed(text),
                }),
                Content::Image { data, mime_type } => Some(image(data, mime_type)),
                _ => None,
            })
            .collect()
    } else {
        texts_without_images(blocks, USER_IMAGE_PLACEHOLDER)
            .into_iter()
            .map(|t| Part::Text {
                text: Cow::Borrowed(t),
            })
            .collect()
    };
    if !parts.is_empty() {
        out.push(WireMessage::Parts {
            role: "user",
            content: parts,
        });
    }
}

fn messages<'a>(req: &'a Request, replayed: &'a [Arc<Message>]) -> Vec<WireMessage<'a>> {
    let images = req.model.supports_images();
    let mut out = Vec::with_capacity(replayed.len() + 1);
    // In place, the transcript's system messages are sent where they are (see
    // `super::transcript`): the first as the prompt, the others as updates.
    let in_place = super::transcript::in_place(req);
    if !in_place && !req.system_prompt.is_empty() {
        out.push(WireMessage::Text {
            role: "system",
            content: Cow::Borrowed(&req.system_prompt),
        });
    }
    let mut ids = IdNormalizer::default();
    // Other models' call ids as renamed, so their results follow.
    let mut renamed: HashMap<&'a str, String> = HashMap::new();
    for (position, m) in replayed.iter().enumerate() {
        match m.as_ref() {
            Message::System(s) if in_place => {
                let text = if position == 0 {
                    s.text()
                } else {
                    super::transcript::update_text(s)
                };
                if !text.is_empty() {
                    out.push(WireMessage::Text {
                        role: "system",
                        content: Cow::Owned(text),
                    });
                }
            }
            // Collapsed, the prompt is the leading system message.
            Message::System(_) => {}
            Message::User(UserMessage { content, .. })
            | Message::Custom(CustomMessage { content, .. }) => user(content, images, &mut out),
            Message::Assistant(a) => {
                if let Some(wire) = assistant(req, a, &mut ids, &mut renamed) {
                    out.push(wire);
                }
            }
            Message::ToolResult(r) => out.push(tool_result(r, images, &renamed)),
        }
    }
    out
}

fn assistant<'a>(
    req: &'a Request,
    a: &'a AssistantMessage,
    ids: &mut IdNormalizer,
    renamed: &mut HashMap<&'a str, String>,
) -> Option<WireMessage<'a>> {
    let model = &req.model;
    let same = a.provider == model.provider && a.api == model.api && a.model == model.id;
    let mut content = Vec::new();
    let mut tool_calls = Vec::new();
    for block in &a.content {
        match block {
            Content::Text { text, .. } if !text.trim().is_empty() => {
                content.push(AssistantPart::Text { text });
            }
            // Thinking is only valid for the model that produced it (1.6's transformMessages).
            Content::Thinking { thinking, .. } if same && !thinking.trim().is_empty() => {
                content.push(AssistantPart::Thinking {
                    thinking: [ThinkingText::Text { text: thinking }],
                });
            }
            Content::ToolCall(tc) => {
                let id = if same {
                    Cow::Borrowed(tc.id.as_str())
                } else {
                    let new = ids.name(&tc.id);
                    if new != tc.id {
                        renamed.insert(&tc.id, new.clone());
                    }
                    Cow::Owned(new)
                };
                let arguments = match &tc.arguments {
                    Value::Null => "{}".to_string(),
                    v => v.to_string(),
                };
                tool_calls.push(WireCall {
                    id,
                    ty: "function",
                    function: Function {
                        name: &tc.name,
                        arguments,
                    },
                    index: 0,
                });
            }
            _ => {}
        }
    }
    (!content.is_empty() || !tool_calls.is_empty()).then_some(WireMessage::Assistant {
        role: "assistant",
        prefix: false,
        content,
        tool_calls,
    })
}

/// 1.6's `buildToolResultText`.
fn result_text(text: &str, has_images: bool, images: bool, is_error: bool) -> String {
    let trimmed = text.trim();
    let error = if is_error { "[tool error] " } else { "" };
    if !trimmed.is_empty() {
        let suffix = if has_images && !images {
            "\n[tool image omitted: model does not support images]"
        } else {
            ""
        };
        return format!("{error}{trimmed}{suffix}");
    }
    let said = if !has_images {
        "(no tool output)"
    } else if images {
        "(see attached image)"
    } else {
        USER_IMAGE_PLACEHOLDER
    };
    format!("{error}{said}")
}

fn tool_result<'a>(
    r: &'a ToolResultMessage,
    images: bool,
    renamed: &HashMap<&'a str, String>,
) -> WireMessage<'a> {
    let (text, has_images) = if images {
        let has = r.content.iter().any(|c| matches!(c, Content::Image { .. }));
        (crate::message::joined_text(&r.content), has)
    } else {
        // The images are placeholders by now: nothing is left to attach or to mention.
        let texts = texts_without_images(&r.content, TOOL_IMAGE_PLACEHOLDER);
        (Cow::Owned(texts.join("\n")), false)
    };
    let mut content = vec![Part::Text {
        text: Cow::Owned(result_text(&text, has_images, images, r.is_error)),
    }];
    if images {
        content.extend(r.content.iter().filter_map(|c| match c {
            Content::Image { data, mime_type } => Some(image(data, mime_type)),
            _ => None,
        }));
    }
    let tool_call_id = match renamed.get(r.tool_call_id.as_str()) {
        Some(new) => Cow::Owned(new.clone()),
        None => Cow::Borrowed(r.tool_call_id.as_str()),
    };
    WireMessage::Tool {
        role: "tool",
        name: &r.tool_name,
        content,
        tool_call_id,
    }
}
