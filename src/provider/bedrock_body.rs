//! The Converse request body, as pi 1.6's `bedrock-converse-stream.js` builds the command and
//! the AWS SDK writes it (members in the service model's order: `messages`, `system`,
//! `inferenceConfig`, `toolConfig`, `additionalModelRequestFields`; an image's `format`
//! before its `source`; a tool spec's `name`, `inputSchema`, `description`, `strict`).
//!
//! Turns: user text and images (blank text dropped, `<empty>` for a turn left with nothing);
//! an assistant turn's text, `toolUse` and reasoning (signed `reasoningText` only for Claude,
//! which alone takes signatures; unsigned Claude thinking sent as text; encrypted reasoning
//! replayed as `redactedContent`); consecutive tool results merged into one user turn, Claude's
//! error-result images moved after them. Another model's turns lose their thinking and have
//! their tool call ids normalized. Claude models that cache get cache points after the system
//! prompt and the last user turn. Thinking goes in `additionalModelRequestFields` by family:
//! adaptive or budgeted Claude thinking, gpt-oss's `reasoning_effort`, GPT's `reasoning`.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::bedrock_models as fam;
use super::cache_retention::Retention;
use super::constrained_sampling::{resolve_strict, tool_parameters};
use super::stream::replayable_messages;
use super::{Model, ProviderError, Request};
use crate::message::{AssistantMessage, Content, Message, ToolResultMessage, UserContent};

const EMPTY_TEXT: &str = "<empty>";
/// What 1.6 stores as the text of encrypted reasoning; a block of just this and a payload is
/// replayed as the payload (pi's message has no `redacted` flag of its own).
pub const REDACTED_THINKING: &str = "[Reasoning redacted]";
const ERROR_IMAGE_PLACEHOLDER: &str = "(image attached after the tool results)";

/// The request body of `req` (before `before_provider_request`).
pub fn body(req: &Request) -> Result<Value, ProviderError> {
    let model = &req.model;
    let retention = Retention::of(model);
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(messages(req, retention)?));
    if !req.system_prompt.is_empty() {
        let mut system = vec![json!({"text": req.system_prompt})];
        if let Some(point) = cache_point(model, retention) {
            system.push(point);
        }
        body.insert("system".into(), Value::Array(system));
    }
    let mut inference = Map::new();
    // 1.6's agent passes the model's cap as `maxTokens` for every model.
    if model.max_tokens > 0 {
        inference.insert("maxTokens".into(), json!(model.max_tokens));
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    if let Some(tools) = tool_config(req)? {
        body.insert("toolConfig".into(), tools);
    }
    if let Some(fields) = fam::additional_fields(model, req.thinking) {
        body.insert("additionalModelRequestFields".into(), fields);
    }
    Ok(Value::Object(body))
}

/// A cache point at `retention` (`long` is an hour's cache, else the default five minutes).
fn cache_point(model: &Model, retention: Retention) -> Option<Value> {
    if retention == Retention::None || !fam::supports_prompt_caching(model) {
        return None;
    }
    Some(if retention == Retention::Long {
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    } else {
        json!({"cachePoint": {"type": "default"}})
    })
}

/// 1.6's `normalizeToolCallId`: Bedrock's id alphabet, at most 64 characters.
fn normalize_id(id: &str) -> String {
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

fn image(mime: &str, data: &str) -> Result<Value, ProviderError> {
    let format = match mime {
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => return Err(ProviderError::Other(format!("Unknown image type: {mime}"))),
    };
    Ok(json!({"image": {"format": format, "source": {"bytes": data}}}))
}

fn non_blank(text: &str) -> Option<Value> {
    (!text.trim().is_empty()).then(|| json!({"text": text}))
}

fn user_turn(content: &UserContent) -> Result<Value, ProviderError> {
    let mut out = Vec::new();
    match content {
        UserContent::Text(t) => {
            out.push(non_blank(t).unwrap_or_else(|| json!({"text": EMPTY_TEXT})))
        }
        UserContent::Blocks(blocks) => {
            for b in blocks {
                match b {
                    Content::Text { text, .. } => out.extend(non_blank(text)),
                    Content::Image { data, mime_type } => out.push(image(mime_type, data)?),
                    _ => {}
                }
            }
            if out.is_empty() {
                out.push(json!({"text": EMPTY_TEXT}));
            }
        }
    }
    Ok(json!({"role": "user", "content": out}))
}

/// Object keys that are empty strings removed, at every depth (1.6's `sanitizeBedrockDocument`).
fn document(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(document).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.clone(), document(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn assistant_turn(
    model: &Model,
    a: &AssistantMessage,
    ids: &mut HashMap<String, String>,
) -> Option<Value> {
    let same = a.provider == model.provider && a.api == model.api && a.model == model.id;
    let claude = fam::is_claude(model);
    let mut out = Vec::new();
    for c in &a.content {
        match c {
            Content::Text { text, .. } => out.extend(non_blank(text)),
            Content::ToolCall(tc) => {
                let id = if same {
                    tc.id.clone()
                } else {
                    let n = normalize_id(&tc.id);
                    if n != tc.id {
                        ids.insert(tc.id.clone(), n.clone());
                    }
                    n
                };
                out.push(json!({"toolUse": {"toolUseId": id, "name": tc.name, "input": document(&tc.arguments)}}));
            }
            Content::Thinking {
                thinking,
                signature,
            } if same => {
                let sig = signature.as_deref().filter(|s| !s.trim().is_empty());
                if thinking == REDACTED_THINKING {
                    if let Some(bytes) = sig.filter(|s| is_base64(s)) {
                        out.push(json!({"reasoningContent": {"redactedContent": bytes}}));
                        continue;
                    }
                }
                if thinking.trim().is_empty() {
                    continue;
                }
                out.push(match (claude, sig) {
                    (true, None) => json!({"text": thinking}),
                    (true, Some(sig)) => json!({"reasoningContent": {"reasoningText": {"text": thinking, "signature": sig}}}),
                    (false, _) => json!({"reasoningContent": {"reasoningText": {"text": thinking}}}),
                });
            }
            _ => {}
        }
    }
    (!out.is_empty()).then(|| json!({"role": "assistant", "content": out}))
}

fn is_base64(s: &str) -> bool {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .is_ok_and(|b| !b.is_empty())
}

/// One tool result; for Claude, an error result's images are handed back to follow the batch.
fn tool_result(
    model: &Model,
    r: &ToolResultMessage,
    ids: &HashMap<String, String>,
    after: &mut Vec<Value>,
) -> Result<Value, ProviderError> {
    let split = fam::is_claude(model)
        && r.is_error
        && r.content.iter().any(|c| matches!(c, Content::Image { .. }));
    let mut content = Vec::new();
    let mut last_placeholder = false;
    for c in &r.content {
        match c {
            Content::Image { data, mime_type } if split => {
                if !last_placeholder {
                    content.push(json!({"text": ERROR_IMAGE_PLACEHOLDER}));
                }
                last_placeholder = true;
                continue;
            }
            Content::Image { data, mime_type } => content.push(image(mime_type, data)?),
            Content::Text { text, .. } => content.extend(non_blank(text)),
            _ => {}
        }
        last_placeholder =
            matches!(c, Content::Text { text, .. } if text == ERROR_IMAGE_PLACEHOLDER);
    }
    if content.is_empty() {
        content.push(json!({"text": EMPTY_TEXT}));
    }
    if split {
        after.push(json!({"text": format!("Images from the error result of tool call {} ({}):", r.tool_call_id, r.tool_name)}));
        for c in &r.content {
            if let Content::Image { data, mime_type } = c {
                after.push(image(mime_type, data)?);
            }
        }
    }
    let id = ids.get(&r.tool_call_id).unwrap_or(&r.tool_call_id);
    let status = if r.is_error { "error" } else { "success" };
    Ok(json!({"toolResult": {"toolUseId": id, "content": content, "status": status}}))
}

fn messages(req: &Request, retention: Retention) -> Result<Vec<Value>, ProviderError> {
    let model = &req.model;
    let replayed = replayable_messages(&req.messages);
    let mut ids = HashMap::new();
    let mut out: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < replayed.len() {
        match replayed[i].as_ref() {
            Message::User(_) | Message::Custom(_) => {
                if let Some(c) = replayed[i].user_content() {
                    out.push(user_turn(c)?);
                }
            }
            Message::Assistant(a) => out.extend(assistant_turn(model, a, &mut ids)),
            Message::ToolResult(_) => {
                let mut content = Vec::new();
                let mut after = Vec::new();
                while let Some(Message::ToolResult(r)) = replayed.get(i).map(|m| m.as_ref()) {
                    content.push(tool_result(model, r, &ids, &mut after)?);
                    i += 1;
                }
                content.extend(after);
                out.push(json!({"role": "user", "content": content}));
                continue;
            }
            Message::System(_) => {}
        }
        i += 1;
    }
    if let Some(point) = cache_point(model, retention) {
        if let Some(last) = out.last_mut().filter(|m| m["role"] == "user") {
            if let Some(content) = last["content"].as_array_mut() {
                content.push(point);
            }
        }
    }
    Ok(out)
}

/// `toolConfig`: the tools with their (strict when honoured) schemas; none without tools.
fn tool_config(req: &Request) -> Result<Option<Value>, ProviderError> {
    if req.tools.is_empty() {
        return Ok(None);
    }
    let supports_strict = req
        .model
        .compat
        .get("supportsStrictMode")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut tools = Vec::with_capacity(req.tools.len());
    for tool in req.tools.iter() {
        let strict = resolve_strict(tool, supports_strict)
            .map_err(|e| ProviderError::Other(e.to_string()))?;
        let mut spec = Map::new();
        spec.insert("name".into(), json!(tool.name));
        spec.insert(
            "inputSchema".into(),
            json!({"json": tool_parameters(tool, strict)}),
        );
        spec.insert("description".into(), json!(tool.description));
        if strict {
            spec.insert("strict".into(), json!(true));
        }
        tools.push(json!({"toolSpec": spec}));
    }
    Ok(Some(json!({"tools": tools})))
}
