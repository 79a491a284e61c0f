//! The `pi-messages` wire API: pi's own message protocol, spoken by the Radius gateway (the
//! `radius` provider) and any backend a models.json provider points at with
//! `"api": "pi-messages"`, as pi 1.6 speaks it.
//!
//! The request is one POST of `{model, context, options}` to `{baseUrl}/messages`: the
//! conversation in pi's own message format (the transcript's system messages as they are,
//! custom messages as the user turns they are to a model), the key as a bearer. The
//! answer is server-sent events that are pi's own assistant-message events (`text_start`,
//! `toolcall_delta`, …) ending in `done` or `error`, so reading it is mapping each event onto
//! the message being built. A `contentIndex` from the wire is checked before it is used: a
//! start adds the next block, anything else names a started one.

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::sse::SseEvent;
use super::stream::{
    join_url, sse_request, stream_call, BlockKind, Flow, MessageBuilder, RequestBody, StreamEnd,
    StreamParser,
};
use super::{CallContext, Model, Provider, ProviderError, Request, ThinkingLevel};
use crate::delta::AssistantDelta;
use crate::message::system::{SystemMessage, ToolDeclaration};
use crate::message::{AssistantMessage, Message, StopReason, Usage, UserContent, UserMessage};

pub const PI_MESSAGES_API: &str = "pi-messages";

pub struct PiMessages {
    client: reqwest::Client,
}

impl PiMessages {
    pub fn new(client: reqwest::Client) -> Self {
        PiMessages { client }
    }
}

#[async_trait]
impl Provider for PiMessages {
    fn api(&self) -> &'static str {
        PI_MESSAGES_API
    }

    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        let Some(key) = req.credential().await?.filter(|k| !k.is_empty()) else {
            return Err(ProviderError::Other(format!(
                "No API key provided for provider \"{}\"",
                req.model.provider
            )));
        };
        let mut http = sse_request(
            join_url(req.model.base_url.trim_end_matches('/'), "messages"),
            RequestBody::of(&payload(req), ctx)?,
        );
        http.credential_header("authorization", &format!("Bearer {key}"));
        let parser = || PiMessagesParser::new(&req.model, ctx.deltas.clone());
        stream_call(&self.client, http, ctx, &req.model, parser)
            .await
            .map_err(worded)
    }
}

#[derive(Debug, Serialize)]
struct Payload<'a> {
    model: &'a str,
    context: Context,
    options: Options,
}

#[derive(Debug, Serialize)]
struct Context {
    messages: Vec<Message>,
}

#[derive(Debug, Serialize)]
struct Options {
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<&'static str>,
}

fn payload(req: &Request) -> Payload<'_> {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    // The protocol carries pi's own context: the transcript's system messages as they are, or,
    // when the request has none (a prompt a hook replaced), one leading message declaring it.
    let declared = super::transcript::has_system(&req.messages);
    if !declared && (!req.system_prompt.is_empty() || !req.tools.is_empty()) {
        messages.push(Message::System(SystemMessage {
            content: UserContent::Text(req.system_prompt.clone()),
            sections: None,
            timestamp: 0,
            tools_added: (!req.tools.is_empty())
                .then(|| req.tools.iter().map(ToolDeclaration::from).collect()),
            tools_removed: None,
        }));
    }
    for m in &req.messages {
        messages.push(match m.as_ref() {
            // A model reads a custom message as the user turn it is (1.6's convertToLlm).
            Message::Custom(c) => Message::User(UserMessage {
                content: c.content.clone(),
                timestamp: c.timestamp,
            }),
            other => other.clone(),
        });
    }
    Payload {
        model: &req.model.id,
        context: Context { messages },
        options: Options {
            reasoning: (req.thinking != ThinkingLevel::Off).then(|| req.thinking.as_str()),
        },
    }
}

/// The JSON request body (before `before_provider_request`), as hooks see it.
pub fn build_body(req: &Request) -> Value {
    serde_json::to_value(payload(req)).unwrap_or(Value::Null)
}

/// An HTTP failure in 1.6's words: `status statusText: message (code)`, the error's message
/// or else the body.
fn worded(e: ProviderError) -> ProviderError {
    e.worded_http(|status, body| {
        let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let error = parsed.get("error").filter(|e| e.is_object());
        let said = error.and_then(|e| e["message"].as_str()).unwrap_or(body);
        let code = error
            .and_then(|e| e["code"].as_str())
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        let reason = ProviderError::status_text(status);
        format!("{status} {reason}: {said}{code}")
    })
}

/// Maps the backend's pi events onto the message being built.
pub struct PiMessagesParser {
    b: MessageBuilder,
    /// Blocks started so far; a wire `contentIndex` must be one of them (or the next).
    started: usize,
    /// The usage the terminal event reported, taken whole (the gateway prices it).
    usage: Option<Usage>,
    provider: String,
    done: bool,
}

impl PiMessagesParser {
    pub fn new(model: &Model, deltas: mpsc::UnboundedSender<AssistantDelta>) -> Self {
        PiMessagesParser {
            b: MessageBuilder::new(model, deltas),
            started: 0,
            usage: None,
            provider: model.provider.clone(),
            done: false,
        }
    }

    /// The event's block, checked: a start must add the next block, the rest name one.
    fn index(&self, ev: &Value, ty: &str) -> Result<usize, ProviderError> {
        let raw = &ev["contentIndex"];
        let limit = if ty.ends_with("_start") {
            Some(self.started)
        } else {
            self.started.checked_sub(1)
        };
        match (raw.as_u64(), limit) {
            (Some(i), Some(limit)) if i as usize <= limit => Ok(i as usize),
            _ => Err(ProviderError::Other(format!(
                "Invalid contentIndex {raw} in pi-messages {ty} event"
            ))),
        }
    }

    fn terminal(&mut self, ev: &Value) {
        self.done = true;
        self.b.stop_reason = serde_json::from_value(ev["reason"].clone()).ok();
        self.usage = serde_json::from_value(ev["usage"].clone()).ok();
        if let Some(id) = ev["responseId"].as_str() {
            self.b.set_response_id(id);
        }
    }

    fn block_event(&mut self, ty: &str, ev: &Value) -> Result<(), ProviderError> {
        let idx = self.index(ev, ty)?;
        let text = |k: &str| ev[k].as_str().unwrap_or_default();
        let kind_is = |p: &Self, k| p.b.open_kind(idx) == Some(k);
        match ty {
            "text_start" => {
                self.b.start_text();
                self.started += 1;
            }
            "thinking_start" => {
                self.b.start_thinking();
                self.started += 1;
            }
            "toolcall_start" => {
                self.b.start_tool_call(text("id"), text("toolName"));
                self.started += 1;
            }
            "text_delta" if kind_is(self, BlockKind::Text) => self.b.text_delta(idx, text("delta")),
            "thinking_delta" if kind_is(self, BlockKind::Thinking) => {
                self.b.thinking_delta(idx, text("delta"))
            }
            "toolcall_delta" if kind_is(self, BlockKind::ToolCall) => {
                self.b.tool_args_delta(idx, text("delta"))
            }
            "text_end" | "thinking_end" if self.b.open_kind(idx).is_some() => {
                self.b.set_block_text(idx, text("content"));
                if let Some(sig) = ev["contentSignature"].as_str() {
                    self.b.set_signature(idx, sig.to_string());
                }
                self.b.end_block(idx);
            }
            "toolcall_end" if kind_is(self, BlockKind::ToolCall) => {
                let call = &ev["toolCall"];
                self.b
                    .set_tool_identity(idx, call["id"].as_str(), call["name"].as_str());
                if call["arguments"].is_object() {
                    self.b.set_tool_args(idx, &call["arguments"].to_string());
                }
                if let Some(sig) = call["thoughtSignature"].as_str() {
                    self.b.set_signature(idx, sig.to_string());
                }
                self.b.end_block(idx);
            }
            _ => {}
        }
        Ok(())
    }
}

impl StreamParser for PiMessagesParser {
    fn flush(&mut self) {
        self.b.flush();
    }

    fn on_event(&mut self, ev: SseEvent) -> Result<Flow, ProviderError> {
        let data = ev.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(Flow::Continue);
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| ProviderError::Protocol(format!("invalid JSON event: {e}")))?;
        let ty = v["type"].as_str().unwrap_or_default().to_string();
        match ty.as_str() {
            "done" => {
                self.terminal(&v);
                Ok(Flow::Done)
            }
            "error" => {
                self.terminal(&v);
                let said = v["errorMessage"]
                    .as_str()
                    .unwrap_or("An unknown error occurred");
                Err(match v["reason"].as_str() {
                    Some("aborted") => ProviderError::Aborted,
                    _ => ProviderError::Other(said.to_string()),
                })
            }
            "start" => Ok(Flow::Continue),
            t if t.starts_with("text_")
                || t.starts_with("thinking_")
                || t.starts_with("toolcall_") =>
            {
                self.block_event(t, &v)?;
                Ok(Flow::Continue)
            }
            _ => Ok(Flow::Continue),
        }
    }

    fn finish(self, end: StreamEnd) -> Result<AssistantMessage, ProviderError> {
        if end == StreamEnd::Eof && !self.done {
            return Err(ProviderError::Transient(format!(
                "{} stream ended without a terminal event",
                self.provider
            )));
        }
        let usage = self.usage;
        let mut message = self.b.finish(StopReason::Stop);
        if let Some(usage) = usage {
            message.usage = usage;
        }
        Ok(message)
    }
}

#[cfg(test)]
#[path = "pi_messages_tests.rs"]
mod tests;
