//! The Responses API request body (`POST /responses`), as pi 1.6 builds it in
//! `openai-responses-shared.js` and `openai-responses.js`/`azure-openai-responses.js`.
//!
//! The conversation becomes `input` items: the system prompt a `developer` (reasoning models)
//! or `system` item, user turns `input_text`/`input_image` parts, an assistant turn its
//! reasoning items (the encrypted item 1.6 keeps as the thinking block's signature, sent back
//! as it came), `message` items and `function_call`s, and each tool result a
//! `function_call_output`. The two deployments differ only in the few [`Flavor`] fields, so
//! both share this one builder. Like [`super::openai_body`] the body borrows from the request;
//! only ids that must be rewritten and data URLs are built.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::openai_body::{ArgumentsString, DataUrl};
use super::stream::replayable_messages;
use super::{Request, ThinkingLevel};
use crate::message::{AssistantMessage, Content, CustomMessage, Message, UserContent, UserMessage};

/// Responses rejects `max_output_tokens` below this (pi 1.6's `OPENAI_RESPONSES_MIN_OUTPUT_TOKENS`).
const MIN_OUTPUT_TOKENS: u64 = 16;

/// What differs between OpenAI's and Azure's Responses bodies.
#[derive(Debug, Clone, Copy)]
pub struct Flavor<'a> {
    /// The body's `model`: the model id, or Azure's deployment name.
    pub model: &'a str,
    /// Providers whose `call|item` tool call ids are kept as Responses ids.
    pub tool_call_providers: &'static [&'static str],
    /// `compat.supportsStrictMode` when models.json does not say (OpenAI no, Azure yes).
    pub strict_default: bool,
    /// Whether OpenAI-only switches apply (`supportsMaxOutputTokens`, xAI's `include`).
    pub openai: bool,
}

pub const OPENAI_TOOL_CALL_PROVIDERS: &[&str] = &["openai", "openai-codex", "opencode"];
pub const AZURE_TOOL_CALL_PROVIDERS: &[&str] = &["openai", "openai-codex", "opencode", "azure"];

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum InputPart<'a> {
    InputText {
        text: Cow<'a, str>,
    },
    InputImage {
        detail: &'static str,
        image_url: DataUrl<'a>,
    },
}

#[derive(Debug, Serialize)]
struct OutputText<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    text: &'a str,
    annotations: [(); 0],
}

/// A function call output: text, or parts when the result has images.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Output<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<InputPart<'a>>),
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Item<'a> {
    Role {
        role: &'static str,
        content: &'a str,
    },
    User {
        role: &'static str,
        content: Vec<InputPart<'a>>,
    },
    /// A reasoning item as the API sent it (the thinking block's signature).
    Raw(&'a RawValue),
    Message {
        #[serde(rename = "type")]
        ty: &'static str,
        role: &'static str,
        content: [OutputText<'a>; 1],
        status: &'static str,
        id: String,
    },
    FunctionCall {
        #[serde(rename = "type")]
        ty: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<Cow<'a, str>>,
        call_id: Cow<'a, str>,
        name: &'a str,
        arguments: ArgumentsString<'a>,
    },
    FunctionCallOutput {
        #[serde(rename = "type")]
        ty: &'static str,
        call_id: Cow<'a, str>,
        output: Output<'a>,
    },
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

#[derive(Debug, Serialize)]
struct Reasoning {
    effort: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'static str>,
}

/// The request body (before `before_provider_request`).
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    model: &'a str,
    input: Vec<Item<'a>>,
    stream: bool,
    store: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Reasoning>,
    #[serde(skip_serializing_if = "Option::is_none")]
    include: Option<[&'static str; 1]>,
}

/// The replayable messages of a request, for [`body`].
pub fn replayed(req: &Request) -> Vec<Arc<Message>> {
    replayable_messages(&req.messages)
}

fn compat_bool(req: &Request, key: &str) -> Option<bool> {
    req.model.compat.get(key).and_then(Value::as_bool)
}

/// The effort pi 1.6 sends for a thinking level: its name (the controller has already clamped
/// it to what the model offers).
fn effort(level: ThinkingLevel) -> Option<&'static str> {
    (level != ThinkingLevel::Off).then(|| level.as_str())
}

/// The body of `req`; `replayed` must be [`replayed`] of the same request.
pub fn body<'a>(req: &'a Request, replayed: &'a [Arc<Message>], flavor: Flavor<'a>) -> Body<'a> {
    let model = &req.model;
    let strict = compat_bool(req, "supportsStrictMode").unwrap_or(flavor.strict_default);
    let max_output = model.max_tokens > 0
        && !(flavor.openai && compat_bool(req, "supportsMaxOutputTokens") == Some(false));
    let (reasoning, include) = match (model.reasoning, effort(req.thinking)) {
        (false, _) => (None, None),
        (true, Some(effort)) => (
            Some(Reasoning {
                effort,
                summary: Some("auto"),
            }),
            Some(["reasoning.encrypted_content"]),
        ),
        (true, None) => (
            Some(Reasoning {
                effort: "none",
                summary: None,
            }),
            None,
        ),
    };
    let include = match include {
        None if flavor.openai && model.reasoning && model.provider == "xai" => {
            Some(["reasoning.encrypted_content"])
        }
        other => other,
    };
    Body {
        model: flavor.model,
        input: input(req, replayed, flavor),
        stream: true,
        store: false,
        max_output_tokens: max_output.then(|| model.max_tokens.max(MIN_OUTPUT_TOKENS)),
        tools: req
            .tools
            .iter()
            .map(|t| Tool {
                ty: "function",
                name: &t.name,
                description: &t.description,
                parameters: &t.parameters,
                strict: strict.then_some(false),
            })
            .collect(),
        reasoning,
        include,
    }
}

fn user_parts(blocks: &[Content]) -> Vec<InputPart<'_>> {
    blocks
        .iter()
        .filter_map(|b| match b {
            Content::Text { text, .. } => Some(InputPart::InputText {
                text: Cow::Borrowed(text),
            }),
            Content::Image { data, mime_type } => Some(InputPart::InputImage {
                detail: "auto",
                image_url: DataUrl { mime_type, data },
            }),
            _ => None,
        })
        .collect()
}

fn user_item<'a>(content: &'a UserContent, out: &mut Vec<Item<'a>>) {
    let content = match content {
        UserContent::Text(text) => vec![InputPart::InputText {
            text: Cow::Borrowed(text),
        }],
        UserContent::Blocks(b) => user_parts(b),
    };
    if !content.is_empty() {
        out.push(Item::User {
            role: "user",
            content,
        });
    }
}

/// pi 1.6's `convertToolResultOutput` for a model that takes images.
fn tool_output(content: &[Content]) -> Output<'_> {
    let text = crate::message::joined_text(content);
    let has_images = content.iter().any(|c| matches!(c, Content::Image { .. }));
    let has_text = !text.trim().is_empty();
    if !has_images {
        return Output::Text(if has_text {
            text
        } else {
            Cow::Borrowed("(no tool output)")
        });
    }
    let mut parts = Vec::new();
    if has_text {
        parts.push(InputPart::InputText { text });
    }
    parts.extend(
        user_parts(content)
            .into_iter()
            .filter(|p| matches!(p, InputPart::InputImage { .. })),
    );
    Output::Parts(parts)
}

fn input<'a>(req: &'a Request, replayed: &'a [Arc<Message>], flavor: Flavor<'a>) -> Vec<Item<'a>> {
    let model = &req.model;
    let mut out = Vec::with_capacity(replayed.len() * 2 + 1);
    if !req.system_prompt.is_empty() {
        let developer = model.reasoning && compat_bool(req, "supportsDeveloperRole") != Some(false);
        out.push(Item::Role {
            role: if developer { "developer" } else { "system" },
            content: &req.system_prompt,
        });
    }
    // Ids of foreign tool calls rewritten for this API, so their results follow.
    let mut renamed: HashMap<&'a str, String> = HashMap::new();
    // 1.6's `msgIndex`: counts the messages that became items (it names text items).
    let mut msg_index = 0;
    for m in replayed {
        let before = out.len();
        match m.as_ref() {
            // The prompt travels as `instructions`/the leading item: the request's, which
            // the transcript's system messages replay to.
            Message::System(_) => {}
            Message::User(UserMessage { content, .. })
            | Message::Custom(CustomMessage { content, .. }) => user_item(content, &mut out),
            Message::Assistant(a) => {
                assistant_items(req, a, msg_index, flavor, &mut renamed, &mut out);
            }
            Message::ToolResult(r) => {
                let id = match renamed.get(r.tool_call_id.as_str()) {
                    Some(new) => Cow::Owned(new.clone()),
                    None => Cow::Borrowed(r.tool_call_id.as_str()),
                };
                out.push(Item::FunctionCallOutput {
                    ty: "function_call_output",
                    call_id: split_id(id).0,
                    output: tool_output(&r.content),
                });
            }
        }
        if out.len() > before {
            msg_index += 1;
        }
    }
    out
}

fn assistant_items<'a>(
    req: &'a Request,
    a: &'a AssistantMessage,
    msg_index: usize,
    flavor: Flavor<'a>,
    renamed: &mut HashMap<&'a str, String>,
    out: &mut Vec<Item<'a>>,
) {
    let model = &req.model;
    let same_api = a.provider == model.provider && a.api == model.api;
    let same_model = same_api && a.model == model.id;
    let mut text_index = 0;
    for block in &a.content {
        match block {
            // Reasoning is only valid for the model that produced it (1.6's transformMessages).
            Content::Thinking {
                signature: Some(sig),
                ..
            } if same_model => {
                if let Ok(raw) = serde_json::from_str::<&RawValue>(sig) {
                    out.push(Item::Raw(raw));
                }
            }
            Content::Text { text, .. } => {
                let id = match text_index {
                    0 => format!("msg_pi_{msg_index}"),
                    n => format!("msg_pi_{msg_index}_{n}"),
                };
                text_index += 1;
                out.push(Item::Message {
                    ty: "message",
                    role: "assistant",
                    content: [OutputText {
                        ty: "output_text",
                        text,
                        annotations: [],
                    }],
                    status: "completed",
                    id,
                });
            }
            Content::ToolCall(tc) => {
                let id: Cow<'a, str> = if same_model {
                    Cow::Borrowed(&tc.id)
                } else {
                    let new = super::openai_responses_ids::normalize_tool_call_id(
                        &tc.id,
                        flavor
                            .tool_call_providers
                            .contains(&model.provider.as_str()),
                        !same_api,
                    );
                    if new != tc.id {
                        renamed.insert(&tc.id, new.clone());
                    }
                    Cow::Owned(new)
                };
                let (call_id, item_id) = split_id(id);
                // Another model's item ids were paired with its reasoning: 1.6 leaves them out.
                let other_model = same_api && !same_model;
                let item_id = item_id.filter(|i| !other_model && i.starts_with("fc_"));
                out.push(Item::FunctionCall {
                    ty: "function_call",
                    id: item_id,
                    call_id,
                    name: &tc.name,
                    arguments: ArgumentsString(&tc.arguments),
                });
            }
            _ => {}
        }
    }
}

/// `call|item` into its two parts (pi 1.6's `id.split("|")`, first two).
fn split_id(id: Cow<'_, str>) -> (Cow<'_, str>, Option<Cow<'_, str>>) {
    match id {
        Cow::Borrowed(s) => {
            let mut it = s.split('|');
            let call = it.next().unwrap_or(s);
            (Cow::Borrowed(call), it.next().map(Cow::Borrowed))
        }
        Cow::Owned(s) => {
            let mut it = s.split('|');
            let call = it.next().unwrap_or_default().to_string();
            (
                Cow::Owned(call),
                it.next().map(|i| Cow::Owned(i.to_string())),
            )
        }
    }
}
