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

use super::cache_retention::Retention;
use super::constrained_sampling::{resolve_strict, tool_parameters, Sampled};
use super::openai_body::{ArgumentsString, DataUrl};
use super::openai_responses_system::{self as system_items, SearchArguments, SystemItems};
use super::stream::replayable_messages;
use super::thinking_map;
use super::transcript;
use super::{ProviderError, Request, ThinkingLevel};
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
    /// A tool's `strict` where the model takes it but the tool asks for no strict sampling:
    /// `false`, or Codex's `null`.
    pub loose_strict: Option<bool>,
    /// The effort a `configuration_update` item at the end switches to (models whose
    /// `compat.supportsMidConvoEffort` takes the level inside the conversation).
    pub configuration_update: Option<&'a str>,
    /// Signed in with ChatGPT to OpenAI's own endpoint, which rejects `max_output_tokens`.
    pub chatgpt_sign_in: bool,
}

pub const OPENAI_TOOL_CALL_PROVIDERS: &[&str] = &["openai", "openai-codex", "opencode"];
pub const AZURE_TOOL_CALL_PROVIDERS: &[&str] = &["openai", "openai-codex", "opencode", "azure"];

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputPart<'a> {
    InputText {
        text: Cow<'a, str>,
    },
    InputImage {
        detail: &'static str,
        image_url: DataUrl<'a>,
    },
}

#[derive(Debug, Serialize)]
pub struct OutputText<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    text: &'a str,
    annotations: [(); 0],
}

/// A function call output: text, or parts when the result has images.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Output<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<InputPart<'a>>),
}

/// One `input` item.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Item<'a> {
    Role {
        role: &'static str,
        content: Cow<'a, str>,
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
        id: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        phase: Option<&'static str>,
    },
    /// The tools, declared inside the conversation (models that take tool changes there).
    AdditionalTools {
        #[serde(rename = "type")]
        ty: &'static str,
        role: &'static str,
        tools: Vec<Tool<'a>>,
    },
    /// Tools loaded by a client-side tool search (models that take additions that way).
    ToolSearchCall {
        #[serde(rename = "type")]
        ty: &'static str,
        call_id: String,
        execution: &'static str,
        status: &'static str,
        arguments: SearchArguments,
    },
    ToolSearchOutput {
        #[serde(rename = "type")]
        ty: &'static str,
        call_id: String,
        execution: &'static str,
        status: &'static str,
        tools: Vec<Tool<'a>>,
    },
    /// The thinking level, switched inside the conversation.
    ConfigurationUpdate {
        #[serde(rename = "type")]
        ty: &'static str,
        reasoning: Effort<'a>,
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
pub struct Effort<'a> {
    effort: &'a str,
}

/// A function tool as the Responses API declares it.
#[derive(Debug, Serialize)]
pub struct Tool<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: Cow<'a, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    defer_loading: Option<bool>,
    /// Absent where the model takes no `strict`; `null` is Codex's "not asked for".
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<Option<bool>>,
}

#[derive(Debug, Serialize)]
struct Reasoning<'a> {
    effort: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'static str>,
}

/// The request body (before `before_provider_request`).
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    model: &'a str,
    input: Vec<Item<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_retention: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_options: Option<CacheOptions>,
    store: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Reasoning<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    include: Option<[&'static str; 1]>,
}

/// `prompt_cache_options`: `{"ttl": "30m"}` for a long retention where the endpoint caches
/// explicitly.
#[derive(Debug, Serialize)]
pub struct CacheOptions {
    ttl: &'static str,
}

/// How long OpenAI keeps the prompt cache when `PI_CACHE_RETENTION=long` (1.6's
/// `getPromptCacheRetention` and `getPromptCacheOptions`): a day, or half an hour where the
/// model caches explicitly (`compat.supportsExplicitPromptCacheMode`). Signed in with ChatGPT,
/// neither field is taken.
fn cache_fields(
    req: &Request,
    flavor: &Flavor<'_>,
) -> (Option<&'static str>, Option<CacheOptions>) {
    if !flavor.openai || flavor.chatgpt_sign_in {
        return (None, None);
    }
    let long = Retention::of(&req.model).long_kept(&req.model, true);
    let explicit = compat_bool(req, "supportsExplicitPromptCacheMode") == Some(true);
    match (long, explicit) {
        (true, false) => (Some("24h"), None),
        (true, true) => (None, Some(CacheOptions { ttl: "30m" })),
        _ => (None, None),
    }
}

/// The session's id as OpenAI's `prompt_cache_key` (at most 64 characters, as 1.6 clamps it).
pub fn prompt_cache_key(req: &Request) -> Option<&str> {
    let id = req.session_id.as_deref()?;
    Some(match id.char_indices().nth(64) {
        Some((end, _)) => &id[..end],
        None => id,
    })
}

/// The replayable messages of a request, for [`body`].
pub fn replayed(req: &Request) -> Vec<Arc<Message>> {
    replayable_messages(&req.messages)
}

fn compat_bool(req: &Request, key: &str) -> Option<bool> {
    req.model.compat.get(key).and_then(Value::as_bool)
}

/// The effort pi 1.6 sends for a thinking level, clamped to what the model offers (as 1.6's
/// `streamSimple` clamps it): the model's name for it, else the level's.
fn effort(req: &Request) -> Option<&str> {
    let model = &req.model;
    let level = match req.thinking {
        ThinkingLevel::Off => ThinkingLevel::Off,
        l => thinking_map::clamp(model.reasoning, &model.thinking_level_map, l),
    };
    (level != ThinkingLevel::Off).then(|| {
        thinking_map::mapped(&req.model.thinking_level_map, level)
            .flatten()
            .unwrap_or(level.as_str())
    })
}

/// The level a `configuration_update` item carries for models that take it inside the
/// conversation (`compat.supportsMidConvoEffort`), when thinking is on.
pub fn mid_conversation_effort(req: &Request) -> Option<&str> {
    (compat_bool(req, "supportsMidConvoEffort") == Some(true))
        .then(|| effort(req))
        .flatten()
}

/// The request's tools as 1.6's `convertResponsesTools` writes them: strict (and the schema
/// in its strict form) where the tool asks for constrained sampling and the model can,
/// otherwise the flavor's loose `strict`; a tool that requires what the model cannot do
/// fails the request.
pub fn tools<'a>(req: &'a Request, flavor: &Flavor<'a>) -> Result<Vec<Tool<'a>>, ProviderError> {
    converted(req, flavor, req.tools.iter(), false)
}

/// `list` as [`tools`] writes tools; `search_result`: as a `tool_search_output` declares them
/// (deferred).
pub fn converted<'a, T: Sampled + 'a>(
    req: &Request,
    flavor: &Flavor<'a>,
    list: impl IntoIterator<Item = &'a T>,
    search_result: bool,
) -> Result<Vec<Tool<'a>>, ProviderError> {
    let supports = compat_bool(req, "supportsStrictMode").unwrap_or(flavor.strict_default);
    list.into_iter()
        .map(|t| {
            let strict =
                resolve_strict(t, supports).map_err(|e| ProviderError::Other(e.to_string()))?;
            Ok(Tool {
                ty: "function",
                name: t.tool_name(),
                description: t.tool_description(),
                parameters: if strict {
                    Cow::Owned(tool_parameters(t, true))
                } else {
                    Cow::Borrowed(t.schema())
                },
                defer_loading: search_result.then_some(true),
                strict: supports.then_some(if strict {
                    Some(true)
                } else {
                    flavor.loose_strict
                }),
            })
        })
        .collect()
}

/// Whether the model takes its tools inside the conversation (1.6's tool support `changes`):
/// then they are an `additional_tools` item ahead of the prompt, not the body's `tools`.
pub fn tools_in_conversation(req: &Request) -> bool {
    compat_bool(req, "supportsMidConvoSystemMessages") == Some(true)
        && compat_bool(req, "supportsAdditionalTools") == Some(true)
}

/// The body's tools and `input`: collapsed, the request's tools (an `additional_tools` item
/// ahead of the prompt for a model that takes them in the conversation); in place, the tools
/// the system messages leave to the list, and the messages' own items (see
/// [`super::openai_responses_system`]).
pub fn tools_and_input<'a>(
    req: &'a Request,
    replayed: &'a [Arc<Message>],
    flavor: Flavor<'a>,
) -> Result<(Vec<Tool<'a>>, Vec<Item<'a>>), ProviderError> {
    if transcript::in_place(req) {
        let support = system_items::support(req);
        let declared = transcript::transcript_tools(&req.messages, support);
        let tools = converted(req, &flavor, declared.request_tools, false)?;
        let systems = SystemItems::new(support, declared.folded, instruction_role(req), flavor);
        return Ok((
            tools,
            input(req, replayed, flavor, Vec::new(), Some(systems))?,
        ));
    }
    let tools = tools(req, &flavor)?;
    Ok(if tools_in_conversation(req) {
        (Vec::new(), input(req, replayed, flavor, tools, None)?)
    } else {
        (tools, input(req, replayed, flavor, Vec::new(), None)?)
    })
}

/// The role of the prompt's items.
fn instruction_role(req: &Request) -> &'static str {
    let developer = req.model.reasoning && compat_bool(req, "supportsDeveloperRole") != Some(false);
    if developer {
        "developer"
    } else {
        "system"
    }
}

/// The body of `req`; `replayed` must be [`replayed`] of the same request.
pub fn body<'a>(
    req: &'a Request,
    replayed: &'a [Arc<Message>],
    flavor: Flavor<'a>,
) -> Result<Body<'a>, ProviderError> {
    let model = &req.model;
    let (tools, input) = tools_and_input(req, replayed, flavor)?;
    let max_output = model.max_tokens > 0
        && !flavor.chatgpt_sign_in
        && !(flavor.openai && compat_bool(req, "supportsMaxOutputTokens") == Some(false));
    let off = thinking_map::mapped(&model.thinking_level_map, ThinkingLevel::Off);
    let (reasoning, include) = match (model.reasoning, effort(req)) {
        (false, _) => (None, None),
        (true, Some(effort)) => (
            Some(Reasoning {
                // The level itself travels in the conversation's last item.
                effort: flavor.configuration_update.map_or(effort, |_| "medium"),
                summary: Some("auto"),
            }),
            Some(["reasoning.encrypted_content"]),
        ),
        // A model whose map says `off: null` takes no reasoning field when it is off.
        (true, None) if off == Some(None) || model.provider == "github-copilot" => (None, None),
        (true, None) => (
            Some(Reasoning {
                effort: off.flatten().unwrap_or("none"),
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
    let (prompt_cache_retention, prompt_cache_options) = cache_fields(req, &flavor);
    Ok(Body {
        model: flavor.model,
        input,
        stream: true,
        prompt_cache_key: (req.model.compat.get("promptCacheKeyMode")
            != Some(&Value::from("disabled")))
        .then(|| prompt_cache_key(req))
        .flatten(),
        prompt_cache_retention,
        prompt_cache_options,
        store: false,
        max_output_tokens: max_output.then(|| model.max_tokens.max(MIN_OUTPUT_TOKENS)),
        tools,
        reasoning,
        include,
    })
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

/// The conversation as `input` items. Collapsed (`systems` is `None`), `leading_tools` (when
/// the model takes its tools in the conversation) are declared first, as 1.6 declares the
/// first system message's tools, then the request's prompt; in place, `systems` writes the
/// system messages where they are.
fn input<'a>(
    req: &'a Request,
    replayed: &'a [Arc<Message>],
    flavor: Flavor<'a>,
    leading_tools: Vec<Tool<'a>>,
    mut systems: Option<SystemItems<'a>>,
) -> Result<Vec<Item<'a>>, ProviderError> {
    let mut out = Vec::with_capacity(replayed.len() * 2 + 2);
    if !leading_tools.is_empty() {
        out.push(Item::AdditionalTools {
            ty: "additional_tools",
            role: "developer",
            tools: leading_tools,
        });
    }
    if systems.is_none() && !req.system_prompt.is_empty() {
        out.push(Item::Role {
            role: instruction_role(req),
            content: Cow::Borrowed(&req.system_prompt),
        });
    }
    // Ids of foreign tool calls rewritten for this API, so their results follow.
    let mut renamed: HashMap<&'a str, String> = HashMap::new();
    // 1.6's `msgIndex`: counts the messages that became items (it names text items).
    let mut msg_index = 0;
    for (position, m) in replayed.iter().enumerate() {
        let before = out.len();
        match m.as_ref() {
            Message::System(s) => {
                // Collapsed, the prompt is the leading item: the request's, which the
                // transcript's system messages replay to.
                let Some(systems) = systems.as_mut() else {
                    continue;
                };
                systems.push(req, s, position == 0, msg_index, &mut out)?;
                // 1.6 counts every later system message, items or not.
                if position > 0 {
                    msg_index += 1;
                }
                continue;
            }
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
    if let Some(effort) = flavor.configuration_update {
        out.push(configuration_update(effort));
    }
    Ok(out)
}

fn configuration_update(effort: &str) -> Item<'_> {
    Item::ConfigurationUpdate {
        ty: "configuration_update",
        reasoning: Effort { effort },
    }
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
    let first = out.len();
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
            Content::Text {
                text,
                text_signature,
            } => {
                // Another model's text travels bare (1.6's transformMessages).
                let (signed, phase) = text_signature
                    .as_deref()
                    .filter(|_| same_model)
                    .map_or((None, None), parse_text_signature);
                let id = match (signed, text_index) {
                    (Some(id), _) if id.len() > 64 => Cow::Owned(format!(
                        "msg_{}",
                        super::openai_responses_ids::short_hash(&id)
                    )),
                    (Some(id), _) => id,
                    (None, 0) => Cow::Owned(format!("msg_pi_{msg_index}")),
                    (None, n) => Cow::Owned(format!("msg_pi_{msg_index}_{n}")),
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
                    phase,
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
    // The level this turn was made at, switched to before it as it was then.
    if let (Some(_), Some(level), true) = (
        flavor.configuration_update,
        a.provider_thinking_level.as_deref(),
        same_model && out.len() > first,
    ) {
        out.insert(first, configuration_update(level));
    }
}

/// The message id and phase 1.6 keeps as a text block's signature: `{"v":1,"id":…,
/// "phase":…}`, or (written before that) the bare id.
fn parse_text_signature(sig: &str) -> (Option<Cow<'_, str>>, Option<&'static str>) {
    if sig.is_empty() {
        return (None, None);
    }
    if sig.starts_with('{') {
        if let Ok(v) = serde_json::from_str::<Value>(sig) {
            if v["v"] == 1 {
                if let Some(id) = v["id"].as_str() {
                    let phase = match v["phase"].as_str() {
                        Some("commentary") => Some("commentary"),
                        Some("final_answer") => Some("final_answer"),
                        _ => None,
                    };
                    return (Some(Cow::Owned(id.to_string())), phase);
                }
            }
        }
    }
    (Some(Cow::Borrowed(sig)), None)
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
