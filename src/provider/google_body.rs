//! The Gemini request body, as pi 1.6's parameters reach the wire through `@google/genai`
//! (`google-shared.js`'s `convertMessages`/`convertTools`, `google-generative-ai.js`'s and
//! `google-vertex.js`'s `buildParams`): `contents`, `systemInstruction`, `tools`, `toolConfig`,
//! `generationConfig`, in the order 1.6's requests have them. The Gemini API and Vertex AI
//! get the same body but for the key order of function calls and responses (the SDK's
//! converters differ there) and 2.5 Flash-Lite's thinking budgets.
//!
//! User turns are `user` contents of `text` and `inlineData` parts; an assistant turn is a
//! `model` content whose thinking is `thought: true` text, and whose text and function calls
//! carry back the `thoughtSignature` Gemini attached to them (only to the model that made
//! them, and only valid base64, as 1.6 checks). Tool results are `functionResponse` parts,
//! consecutive ones merged into one user turn; their images go inside the response for
//! Gemini 3 and later, else in a user turn after it. The body borrows the conversation from
//! the request; only tool schemas (rewritten for Gemini) and renamed ids are built.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use super::constrained_sampling::{resolve_strict, tool_parameters};
use super::google::{
    multimodal_function_response, requires_tool_call_id, supports_strict_tools, thinking_config,
    ThinkingConfig,
};
use super::stream::replayable_messages;
use super::{ProviderError, Request};
use crate::message::{
    AssistantMessage, Content, CustomMessage, Message, ToolResultMessage, UserContent, UserMessage,
};

/// `inlineData`, as 1.6 builds it (the SDK sends parts as they are).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RawBlob<'a> {
    mime_type: &'a str,
    data: &'a str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ResponseImage<'a> {
    inline_data: RawBlob<'a>,
}

/// `{}`: the arguments of a call that has none.
#[derive(Debug, Serialize)]
struct EmptyObject {}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Args<'a> {
    Value(&'a Value),
    Empty(EmptyObject),
}

/// A function call as the SDK's Gemini API converter writes it.
#[derive(Debug, Serialize)]
struct FunctionCall<'a> {
    args: Args<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Cow<'a, str>>,
    name: &'a str,
}

/// A function call as Vertex AI gets it: the SDK passes 1.6's object through as it is.
#[derive(Debug, Serialize)]
struct VertexFunctionCall<'a> {
    name: &'a str,
    args: Args<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Cow<'a, str>>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Call<'a> {
    Gemini(FunctionCall<'a>),
    Vertex(VertexFunctionCall<'a>),
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
enum ResponseValue<'a> {
    Output(Cow<'a, str>),
    Error(Cow<'a, str>),
}

#[derive(Debug, Serialize)]
struct FunctionResponse<'a> {
    name: &'a str,
    response: ResponseValue<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parts: Option<Vec<ResponseImage<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Cow<'a, str>>,
}

/// A function response as the SDK writes it for Vertex AI.
#[derive(Debug, Serialize)]
struct VertexFunctionResponse<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Cow<'a, str>>,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parts: Option<Vec<ResponseImage<'a>>>,
    response: ResponseValue<'a>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Response<'a> {
    Gemini(FunctionResponse<'a>),
    Vertex(VertexFunctionResponse<'a>),
}

/// One part, its fields in the order 1.6's parts have them on the wire.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Part<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    function_call: Option<Call<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    function_response: Option<Response<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inline_data: Option<RawBlob<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thought: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thought_signature: Option<&'a str>,
}

impl<'a> Part<'a> {
    fn text(text: &'a str) -> Self {
        Part {
            text: Some(text),
            ..Part::default()
        }
    }

    fn image(data: &'a str, mime_type: &'a str) -> Self {
        Part {
            inline_data: Some(RawBlob { mime_type, data }),
            ..Part::default()
        }
    }
}

#[derive(Debug, Serialize)]
struct WireContent<'a> {
    parts: Vec<Part<'a>>,
    role: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct FunctionDeclaration<'a> {
    name: &'a str,
    description: &'a str,
    parameters_json_schema: Value,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct WireTools<'a> {
    function_declarations: Vec<FunctionDeclaration<'a>>,
}

#[derive(Debug, Serialize)]
struct CallingMode {
    mode: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolConfig {
    function_calling_config: CallingMode,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_config: Option<ThinkingConfig>,
}

/// The request body (before `before_provider_request`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Body<'a> {
    contents: Vec<WireContent<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<WireContent<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<[WireTools<'a>; 1]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_config: Option<ToolConfig>,
    generation_config: GenerationConfig,
}

/// The replayable messages of a request, for [`body`].
pub fn replayed(req: &Request) -> Vec<Arc<Message>> {
    replayable_messages(&req.messages)
}

/// The body of `req`; `replayed` must be [`replayed`] of the same request. Fails when a tool
/// requires strict sampling the model cannot give, or the model's thinking map names a level
/// Gemini does not have (1.6's errors).
pub fn body<'a>(req: &'a Request, replayed: &'a [Arc<Message>]) -> Result<Body<'a>, ProviderError> {
    let model = &req.model;
    let strict_ok = supports_strict_tools(&model.id);
    let mut any_strict = false;
    let mut declarations = Vec::with_capacity(req.tools.len());
    for tool in req.tools.iter() {
        let strict =
            resolve_strict(tool, strict_ok).map_err(|e| ProviderError::Other(e.to_string()))?;
        any_strict |= strict;
        declarations.push(FunctionDeclaration {
            name: &tool.name,
            description: &tool.description,
            parameters_json_schema: const_as_enum(tool_parameters(tool, strict), false),
        });
    }
    let has_tools = !declarations.is_empty();
    Ok(Body {
        contents: contents(req, replayed),
        system_instruction: (!req.system_prompt.is_empty()).then(|| WireContent {
            parts: vec![Part::text(&req.system_prompt)],
            role: "user",
        }),
        tools: has_tools.then(|| {
            [WireTools {
                function_declarations: declarations,
            }]
        }),
        tool_config: (has_tools && any_strict).then_some(ToolConfig {
            function_calling_config: CallingMode { mode: "VALIDATED" },
        }),
        generation_config: GenerationConfig {
            max_output_tokens: (model.max_tokens > 0).then_some(model.max_tokens),
            thinking_config: thinking_config(model, req.thinking)?,
        },
    })
}

/// Keywords whose values map names to subschemas (their keys are names, not keywords).
const NAME_MAPS: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// Keywords holding a subschema or a list of them.
const SUBSCHEMAS: [&str; 16] = [
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];

/// String and number `const`s as one-value `enum`s, which Gemini honours where it ignores
/// `const` (1.6's `rewriteConstAsEnum`). Literal data (`enum`, `default`, examples) is left
/// alone.
pub fn const_as_enum(schema: Value, name_map: bool) -> Value {
    match schema {
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|i| const_as_enum(i, false)).collect())
        }
        Value::Object(o) => {
            let mut out: Map<String, Value> = o
                .into_iter()
                .map(|(k, v)| {
                    let v = if name_map || SUBSCHEMAS.contains(&k.as_str()) {
                        const_as_enum(v, false)
                    } else if NAME_MAPS.contains(&k.as_str()) {
                        const_as_enum(v, true)
                    } else {
                        v
                    };
                    (k, v)
                })
                .collect();
            let scalar = out
                .get("const")
                .is_some_and(|c| c.is_string() || c.is_number());
            if !name_map && scalar && !out.contains_key("enum") {
                if let Some(c) = out.shift_remove("const") {
                    out.insert("enum".into(), Value::Array(vec![c]));
                }
            }
            Value::Object(out)
        }
        other => other,
    }
}

/// Whether the body goes to Vertex AI, whose SDK converter keeps 1.6's function call and
/// response objects in other key orders than the Gemini API's.
fn is_vertex(model: &super::Model) -> bool {
    model.api == super::google_vertex::GOOGLE_VERTEX_API
}

/// A signature Gemini will take back: base64 of a length divisible by four.
fn valid_signature(sig: Option<&str>) -> Option<&str> {
    let s = sig?;
    let body = s.trim_end_matches('=');
    let ok = !s.is_empty()
        && s.len() % 4 == 0
        && s.len() - body.len() <= 2
        && !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    ok.then_some(s)
}

/// An id as a model that requires ids takes it (1.6's `normalizeToolCallId`).
fn normalized_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

fn user_content<'a>(content: &'a UserContent, out: &mut Vec<WireContent<'a>>) {
    let parts: Vec<Part<'a>> = match content {
        UserContent::Text(text) => vec![Part::text(text)],
        UserContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                Content::Text { text, .. } => Some(Part::text(text)),
                Content::Image { data, mime_type } => Some(Part::image(data, mime_type)),
                _ => None,
            })
            .collect(),
    };
    if !parts.is_empty() {
        out.push(WireContent {
            parts,
            role: "user",
        });
    }
}

fn contents<'a>(req: &'a Request, replayed: &'a [Arc<Message>]) -> Vec<WireContent<'a>> {
    let mut out = Vec::with_capacity(replayed.len());
    // Ids of other models' tool calls rewritten for this one, so their results follow.
    let mut renamed: HashMap<&'a str, String> = HashMap::new();
    for m in replayed {
        match m.as_ref() {
            // The prompt is the request's `systemInstruction`.
            Message::System(_) => {}
            Message::User(UserMessage { content, .. })
            | Message::Custom(CustomMessage { content, .. }) => user_content(content, &mut out),
            Message::Assistant(a) => {
                let parts = model_parts(req, a, &mut renamed);
                if !parts.is_empty() {
                    out.push(WireContent {
                        parts,
                        role: "model",
                    });
                }
            }
            Message::ToolResult(r) => tool_result(req, r, &renamed, &mut out),
        }
    }
    out
}

fn model_parts<'a>(
    req: &'a Request,
    a: &'a AssistantMessage,
    renamed: &mut HashMap<&'a str, String>,
) -> Vec<Part<'a>> {
    let model = &req.model;
    // Thinking and signatures are only valid for the model that produced them (1.6's
    // transformMessages).
    let same = a.provider == model.provider && a.api == model.api && a.model == model.id;
    let with_ids = requires_tool_call_id(&model.id);
    let signature = |s: &'a Option<String>| valid_signature(s.as_deref().filter(|_| same));
    let vertex = is_vertex(model);
    let mut parts = Vec::new();
    for block in &a.content {
        match block {
            Content::Text {
                text,
                text_signature,
            } => {
                let sig = signature(text_signature);
                if text.trim().is_empty() && sig.is_none() {
                    continue;
                }
                parts.push(Part {
                    text: Some(text),
                    thought_signature: sig,
                    ..Part::default()
                });
            }
            Content::Thinking {
                thinking,
                signature: sig,
            } if same => {
                let sig = signature(sig);
                if thinking.trim().is_empty() && sig.is_none() {
                    continue;
                }
                parts.push(Part {
                    text: Some(thinking),
                    thought: Some(true),
                    thought_signature: sig,
                    ..Part::default()
                });
            }
            Content::ToolCall(tc) => {
                let id: Option<Cow<'a, str>> = with_ids.then(|| {
                    if same {
                        return Cow::Borrowed(tc.id.as_str());
                    }
                    let new = normalized_id(&tc.id);
                    if new != tc.id {
                        renamed.insert(&tc.id, new.clone());
                    }
                    Cow::Owned(new)
                });
                let args = match &tc.arguments {
                    Value::Null => Args::Empty(EmptyObject {}),
                    v => Args::Value(v),
                };
                let name = &tc.name;
                let call = if vertex {
                    Call::Vertex(VertexFunctionCall { name, args, id })
                } else {
                    Call::Gemini(FunctionCall { args, id, name })
                };
                parts.push(Part {
                    function_call: Some(call),
                    thought_signature: signature(&tc.thought_signature),
                    ..Part::default()
                });
            }
            _ => {}
        }
    }
    parts
}

fn tool_result<'a>(
    req: &'a Request,
    r: &'a ToolResultMessage,
    renamed: &HashMap<&'a str, String>,
    out: &mut Vec<WireContent<'a>>,
) {
    let id = &req.model.id;
    let text = crate::message::joined_text(&r.content);
    let images: Vec<(&'a str, &'a str)> = r
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Image { data, mime_type } => Some((data.as_str(), mime_type.as_str())),
            _ => None,
        })
        .collect();
    let inline = multimodal_function_response(id);
    let value = if !text.trim().is_empty() {
        text
    } else if !images.is_empty() {
        Cow::Borrowed("(see attached image)")
    } else {
        Cow::Borrowed("")
    };
    let call_id = requires_tool_call_id(id).then(|| match renamed.get(r.tool_call_id.as_str()) {
        Some(new) => Cow::Owned(new.clone()),
        None => Cow::Borrowed(r.tool_call_id.as_str()),
    });
    let name = &r.tool_name;
    let response = if r.is_error {
        ResponseValue::Error(value)
    } else {
        ResponseValue::Output(value)
    };
    let parts = (inline && !images.is_empty()).then(|| {
        images
            .iter()
            .map(|(data, mime_type)| ResponseImage {
                inline_data: RawBlob { mime_type, data },
            })
            .collect()
    });
    let response = if is_vertex(&req.model) {
        Response::Vertex(VertexFunctionResponse {
            id: call_id,
            name,
            parts,
            response,
        })
    } else {
        Response::Gemini(FunctionResponse {
            name,
            response,
            parts,
            id: call_id,
        })
    };
    let part = Part {
        function_response: Some(response),
        ..Part::default()
    };
    // All of a turn's function responses go in one user turn.
    match out.last_mut() {
        Some(last)
            if last.role == "user" && last.parts.iter().any(|p| p.function_response.is_some()) =>
        {
            last.parts.push(part);
        }
        _ => out.push(WireContent {
            parts: vec![part],
            role: "user",
        }),
    }
    if !inline && !images.is_empty() {
        let mut parts = vec![Part::text("Tool result image:")];
        parts.extend(images.iter().map(|(data, mime)| Part::image(data, mime)));
        out.push(WireContent {
            parts,
            role: "user",
        });
    }
}
