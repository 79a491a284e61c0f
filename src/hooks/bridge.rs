//! The bridge from the agent loop's hook points ([`AgentHooks`], [`ProviderHooks`]) to the
//! runner: it names each event, builds its snake_case payload, and turns the combined reply
//! back into what the loop expects. Payload fields at the top level are snake_case; messages
//! inside them keep pi's message shape (camelCase), the same as sessions and JSON mode.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use super::events::{BoundaryEvent, ChainEvent, NotifyEvent};
use super::model_calls::sections_value;
use super::protocol::{
    parse_result, BeforeAgentStartReply, ContextReply, HeadersReply, InputAction, InputReply,
    MessageEndReply, PrepareArgumentsReply, ProviderRequestReply, SystemPromptOptions,
    ToolResultReply,
};
use super::runner::{injected_to_message, ChainEnd, EndpointError, GateVerdict, Runner, Step};
use crate::agent::events::AgentEvent;
use crate::agent::hooks::{
    AgentHooks, BeforeAgentStart, Boundary, BoundaryEntry, GateOutcome, InputOutcome, InputSource,
    Outcome, Validate,
};
use crate::message::{Content, Message, ToolCall, ToolResultMessage};
use crate::provider::ProviderHooks;
use crate::resources::system_prompt::{check_section_name, SystemPrompt};

/// A tool's result when an abort kept a `tool_result` hook from seeing it.
pub const WITHHELD: &str =
    "Operation aborted (output withheld: the run was aborted before every tool_result hook had seen it)";

pub struct HookBridge {
    runner: Arc<Runner>,
}

impl HookBridge {
    pub fn new(runner: Arc<Runner>) -> Self {
        HookBridge { runner }
    }
}

/// `toolCallId` → `tool_call_id`.
fn snake(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A notify event's hook name, tool (for filters) and payload, or `None` for events that are
/// not notify events for hooks (chains and boundaries are sent at their own hook points).
fn notify_event(ev: &AgentEvent) -> Option<(NotifyEvent, Option<&str>)> {
    Some(match ev {
        AgentEvent::AgentStart => (NotifyEvent::AgentStart, None),
        AgentEvent::AgentEnd { .. } => (NotifyEvent::AgentEnd, None),
        AgentEvent::TurnStart { .. } => (NotifyEvent::TurnStart, None),
        AgentEvent::MessageStart { .. } => (NotifyEvent::MessageStart, None),
        AgentEvent::MessageUpdate { .. } => (NotifyEvent::MessageUpdate, None),
        AgentEvent::ToolExecutionStart { tool_name, .. } => {
            (NotifyEvent::ToolExecutionStart, Some(tool_name.as_str()))
        }
        AgentEvent::ToolExecutionUpdate { tool_name, .. } => {
            (NotifyEvent::ToolExecutionUpdate, Some(tool_name.as_str()))
        }
        AgentEvent::ToolExecutionEnd { tool_name, .. } => {
            (NotifyEvent::ToolExecutionEnd, Some(tool_name.as_str()))
        }
        _ => return None,
    })
}

fn payload_of(ev: &AgentEvent) -> Value {
    match serde_json::to_value(ev) {
        Ok(Value::Object(m)) => Value::Object(
            m.into_iter()
                .filter(|(k, _)| k != "type")
                .map(|(k, v)| (snake(&k), v))
                .collect::<Map<String, Value>>(),
        ),
        _ => json!({}),
    }
}

fn field<T: DeserializeOwned>(hook: &str, event: &str, v: Value) -> Result<T, EndpointError> {
    serde_json::from_value(v).map_err(|e| EndpointError::bad_reply(hook, event, e))
}

/// Parse a reply result by the protocol's one rule (`protocol::parse_result`): `null` is the
/// default, an object is parsed strictly, anything else is a wrong shape.
fn reply<T: DeserializeOwned + Default>(
    hook: &str,
    event: &str,
    v: Value,
) -> Result<T, EndpointError> {
    parse_result(v).map_err(|e| EndpointError::bad_reply(hook, event, e))
}

#[async_trait]
impl AgentHooks for HookBridge {
    fn event(&self, event: &AgentEvent) {
        if let Some((name, tool)) = notify_event(event) {
            self.runner.notify(name, tool, || payload_of(event));
        }
    }

    async fn input(&self, text: String, source: InputSource) -> InputOutcome {
        let (text, handled) = self
            .runner
            .chain(
                ChainEvent::Input,
                None,
                (text, false),
                |(t, _)| json!({"text": t, "source": source.as_str()}),
                |acc, v, hook| {
                    let r: InputReply = reply(hook, "input", v)?;
                    match r.action {
                        InputAction::Continue => Ok(Step::Continue),
                        InputAction::Handled => {
                            acc.1 = true;
                            Ok(Step::Stop("handled"))
                        }
                        InputAction::Transform => {
                            let t = r.text.ok_or_else(|| {
                                EndpointError::bad_reply(hook, "input", "`transform` needs `text`")
                            })?;
                            acc.0 = t;
                            Ok(Step::Changed("transform"))
                        }
                    }
                },
            )
            .await;
        if handled {
            InputOutcome::Handled
        } else {
            InputOutcome::Continue(text)
        }
    }

    async fn before_agent_start(
        &self,
        prompt: &str,
        system_prompt: SystemPrompt,
    ) -> BeforeAgentStart {
        let init = RunPrompt {
            sections: system_prompt,
            whole: None,
            messages: Vec::new(),
        };
        let run = self
            .runner
            .chain(
                ChainEvent::BeforeAgentStart,
                None,
                init,
                |acc| {
                    json!({"prompt": prompt, "system_prompt": acc.text(),
                           "system_prompt_options": {"sections": sections_value(&acc.sections)}})
                },
                |acc, v, hook| {
                    let r: BeforeAgentStartReply = reply(hook, "before_agent_start", v)?;
                    let mut step = Step::Continue;
                    if let Some(options) = r.system_prompt_options {
                        let edits = section_edits(hook, options)?;
                        if !edits.is_empty() {
                            acc.sections.edit(edits).map_err(|e| {
                                EndpointError::bad_reply(hook, "before_agent_start", e.to_string())
                            })?;
                            step = Step::Changed("patch");
                        }
                    }
                    if let Some(sp) = r.system_prompt {
                        acc.whole = Some(sp);
                        step = Step::Changed("patch");
                    }
                    if let Some(m) = r.message {
                        acc.messages.push(injected_to_message(&m));
                        step = Step::Changed("patch");
                    }
                    Ok(step)
                },
            )
            .await;
        BeforeAgentStart {
            system_prompt: run.text().to_string(),
            sections: run.sections,
            messages: run.messages,
        }
    }

    async fn context(&self, messages: Vec<Arc<Message>>) -> Vec<Arc<Message>> {
        if !self.runner.any_wants(ChainEvent::Context, None) {
            return messages;
        }
        self.runner
            .chain(
                ChainEvent::Context,
                None,
                messages,
                |acc| json!({"messages": acc}),
                |acc, v, hook| {
                    let r: ContextReply = reply(hook, "context", v)?;
                    match r.messages {
                        Some(list) => {
                            *acc = field(hook, "context", Value::Array(list))?;
                            Ok(Step::Changed("patch"))
                        }
                        None => Ok(Step::Continue),
                    }
                },
            )
            .await
    }

    async fn context_with_system(
        &self,
        system_prompt: String,
        messages: Vec<Arc<Message>>,
    ) -> (String, Vec<Arc<Message>>) {
        if !self.runner.any_wants(ChainEvent::ContextWithSystem, None) {
            return (system_prompt, messages);
        }
        self.runner
            .chain(
                ChainEvent::ContextWithSystem,
                None,
                (system_prompt, messages),
                |(sp, msgs)| {
                    let system = json!({"role": "system", "content": sp});
                    let rest = msgs.iter().map(|m| json!(m));
                    json!({"messages": std::iter::once(system).chain(rest).collect::<Vec<_>>()})
                },
                |acc, v, hook| {
                    let r: ContextReply = reply(hook, "context_with_system", v)?;
                    let Some(list) = r.messages else {
                        return Ok(Step::Continue);
                    };
                    *acc = transcript(list)
                        .map_err(|e| EndpointError::bad_reply(hook, "context_with_system", e))?;
                    Ok(Step::Changed("patch"))
                },
            )
            .await
    }

    async fn prepare_arguments(&self, call: &ToolCall, args: Value) -> Value {
        let tool = Some((call.id.as_str(), call.name.as_str()));
        if !self
            .runner
            .any_wants(ChainEvent::PrepareArguments, tool.map(|t| t.1))
        {
            return args;
        }
        self.runner
            .chain(
                ChainEvent::PrepareArguments,
                tool,
                args,
                |a| json!({"tool_call_id": call.id, "tool_name": call.name, "arguments": a}),
                |acc, v, hook| {
                    let r: PrepareArgumentsReply = reply(hook, "prepare_arguments", v)?;
                    match r.arguments {
                        Some(a) if a.is_object() => {
                            *acc = a;
                            Ok(Step::Changed("patch"))
                        }
                        Some(other) => Err(EndpointError::bad_reply(
                            hook,
                            "prepare_arguments",
                            format!(
                                "`arguments` must be an object, got {}",
                                super::protocol::json_kind(&other)
                            ),
                        )),
                        None => Ok(Step::Continue),
                    }
                },
            )
            .await
    }

    async fn tool_call(&self, call: &ToolCall, validate: &Validate) -> GateOutcome {
        match self
            .runner
            .gate(&call.id, &call.name, call.arguments.clone(), validate)
            .await
        {
            GateVerdict::Allow { input, patched_by } => GateOutcome::Allow {
                args: input,
                patched_by,
            },
            GateVerdict::Block { reason, terminate } => GateOutcome::Block { reason, terminate },
        }
    }

    async fn tool_blocked(&self, call: &ToolCall, reason: &str) -> Vec<String> {
        self.runner
            .blocked_feedback(&call.id, &call.name, &call.arguments, reason)
            .await
    }

    async fn tool_result(&self, call: &ToolCall, result: ToolResultMessage) -> ToolResultMessage {
        let (result, end) = self
            .runner
            .chain_to_end(
                ChainEvent::ToolResult,
                Some((call.id.as_str(), call.name.as_str())),
                result,
                |r| {
                    json!({
                        "tool_call_id": r.tool_call_id,
                        "tool_name": r.tool_name,
                        "input": call.arguments,
                        "content": r.content,
                        "details": r.details,
                        "structured_content": r.structured_content,
                        "usage": r.usage,
                        "is_error": r.is_error,
                    })
                },
                |acc, v, hook| {
                    let r: ToolResultReply = reply(hook, "tool_result", v)?;
                    // Parsed whole before anything is applied: a bad field changes nothing.
                    let content = r
                        .content
                        .map(|c| field::<Vec<Content>>(hook, "tool_result", Value::Array(c)))
                        .transpose()?;
                    let usage = r
                        .usage
                        .map(|u| field::<crate::message::Usage>(hook, "tool_result", u))
                        .transpose()?;
                    let mut step = Step::Continue;
                    if let Some(c) = content {
                        acc.content = c;
                        // New content the old structured content may not match any more.
                        acc.structured_content = None;
                        step = Step::Changed("patch");
                    }
                    if let Some(s) = r.structured_content {
                        acc.structured_content = Some(s);
                        step = Step::Changed("patch");
                    }
                    if let Some(d) = r.details {
                        acc.details = Some(d);
                        step = Step::Changed("patch");
                    }
                    if let Some(e) = r.is_error {
                        acc.is_error = e;
                        step = Step::Changed("patch");
                    }
                    if let Some(u) = usage {
                        acc.usage = Some(u);
                        step = Step::Changed("patch");
                    }
                    Ok(step)
                },
            )
            .await;
        match end {
            ChainEnd::Whole => result,
            // A hook the abort kept from answering may have had to redact this output; it
            // reaches neither the model nor the session unseen.
            ChainEnd::Aborted => ToolResultMessage {
                content: vec![Content::text(WITHHELD)],
                details: None,
                structured_content: None,
                is_error: true,
                ..result
            },
        }
    }

    async fn message_end(&self, message: Arc<Message>) -> Arc<Message> {
        if !self.runner.any_wants(ChainEvent::MessageEnd, None) {
            return message;
        }
        let chained = self
            .runner
            .chain(
                ChainEvent::MessageEnd,
                None,
                Arc::unwrap_or_clone(message),
                |m| json!({"message": m}),
                |acc, v, hook| {
                    let r: MessageEndReply = reply(hook, "message_end", v)?;
                    let Some(m) = r.message else {
                        return Ok(Step::Continue);
                    };
                    let m: Message = field(hook, "message_end", m)?;
                    if std::mem::discriminant(&m) != std::mem::discriminant(acc) {
                        return Err(EndpointError::bad_reply(
                            hook,
                            "message_end",
                            "the message must keep its role",
                        ));
                    }
                    *acc = m;
                    Ok(Step::Changed("patch"))
                },
            )
            .await;
        Arc::new(chained)
    }

    async fn turn_end(
        &self,
        turn_index: usize,
        message: &Message,
        results: &[ToolResultMessage],
        outcome: Outcome,
    ) -> Boundary {
        if !self.runner.any_wants(BoundaryEvent::TurnEnd, None) {
            return Boundary::default();
        }
        let r = self
            .runner
            .boundary(
                BoundaryEvent::TurnEnd,
                json!({"turn_index": turn_index, "message": message, "tool_results": results,
                       "outcome": outcome.as_str()}),
            )
            .await;
        boundary(r)
    }

    async fn agent_before_settle(&self, messages: &[Arc<Message>], outcome: Outcome) -> Boundary {
        if !self
            .runner
            .any_wants(BoundaryEvent::AgentBeforeSettle, None)
        {
            return Boundary::default();
        }
        let r = self
            .runner
            .boundary(
                BoundaryEvent::AgentBeforeSettle,
                json!({"message_count": messages.len(), "outcome": outcome.as_str()}),
            )
            .await;
        boundary(r)
    }

    fn provider_hooks(&self) -> Arc<dyn ProviderHooks> {
        Arc::new(ProviderBridge {
            runner: self.runner.clone(),
        })
    }
}

struct ProviderBridge {
    runner: Arc<Runner>,
}

#[async_trait]
impl ProviderHooks for ProviderBridge {
    fn rewrites_request(&self) -> bool {
        self.runner
            .any_wants(ChainEvent::BeforeProviderRequest, None)
    }

    async fn before_provider_request(&self, payload: Value) -> Value {
        self.runner
            .chain(
                ChainEvent::BeforeProviderRequest,
                None,
                payload,
                |p| json!({"payload": p}),
                |acc, v, hook| {
                    let r: ProviderRequestReply = reply(hook, "before_provider_request", v)?;
                    match r.payload {
                        Some(p) => {
                            *acc = p;
                            Ok(Step::Changed("patch"))
                        }
                        None => Ok(Step::Continue),
                    }
                },
            )
            .await
    }

    async fn before_provider_headers(
        &self,
        headers: BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        self.runner
            .chain(
                ChainEvent::BeforeProviderHeaders,
                None,
                headers,
                |h| json!({"headers": h}),
                |acc, v, hook| {
                    let r: HeadersReply = reply(hook, "before_provider_headers", v)?;
                    let Some(edits) = r.headers else {
                        return Ok(Step::Continue);
                    };
                    for (k, v) in edits {
                        // Header names are case-insensitive; pi's are lower-case, so an edit
                        // of `Authorization` edits `authorization` rather than adding a twin.
                        let k = k.to_ascii_lowercase();
                        match v {
                            Value::Null => {
                                acc.remove(&k);
                            }
                            Value::String(s) => {
                                acc.insert(k, s);
                            }
                            other => {
                                return Err(EndpointError::bad_reply(
                                    hook,
                                    "before_provider_headers",
                                    format!("header {k} must be a string or null, got {other}"),
                                ))
                            }
                        }
                    }
                    Ok(Step::Changed("patch"))
                },
            )
            .await
    }

    async fn after_provider_response(&self, status: u16, headers: &BTreeMap<String, String>) {
        self.runner.notify(
            NotifyEvent::AfterProviderResponse,
            None,
            || json!({"status": status, "headers": headers}),
        );
    }

    fn observes_stream(&self) -> bool {
        self.runner
            .any_wants(NotifyEvent::ProviderStreamEvent, None)
    }

    fn provider_stream_event(
        &self,
        model: &crate::provider::Model,
        event: Option<&str>,
        data: &str,
    ) {
        self.runner
            .notify(NotifyEvent::ProviderStreamEvent, None, || {
                // The event's JSON as the provider sent it; a payload that is not JSON (a
                // `[DONE]` marker) is passed as its text.
                let data = serde_json::from_str::<Value>(data)
                    .unwrap_or_else(|_| Value::String(data.to_string()));
                json!({"api": model.api, "provider": model.provider, "model": model.id,
                       "event": event, "data": data})
            });
    }
}

/// `before_agent_start`'s value as it chains: pi's prompt with the sections hooks edited, and
/// a whole prompt a hook returned, which wins for this run.
struct RunPrompt {
    sections: SystemPrompt,
    whole: Option<String>,
    messages: Vec<Message>,
}

impl RunPrompt {
    fn text(&self) -> &str {
        self.whole.as_deref().unwrap_or(self.sections.text())
    }
}

/// `system_prompt_options.sections` as edits: each value a string (the new content) or `null`
/// (remove); anything else, or a name pi refuses (`preamble`, or not `^[a-z][a-z0-9_-]*$`),
/// is a wrong shape.
fn section_edits(
    hook: &str,
    options: SystemPromptOptions,
) -> Result<Vec<(String, Option<String>)>, EndpointError> {
    let bad = |m: String| EndpointError::bad_reply(hook, "before_agent_start", m);
    options
        .sections
        .into_iter()
        .map(|(name, v)| {
            check_section_name(&name).map_err(|e| bad(e.to_string()))?;
            match v {
                Value::String(s) => Ok((name, Some(s))),
                Value::Null => Ok((name, None)),
                other => Err(bad(format!(
                    "section {name:?} must be a string or null, got {other}"
                ))),
            }
        })
        .collect()
}

/// A `context_with_system` reply's transcript: the system message first (its `content` a
/// string or text blocks), then pi messages. A list that does not start with the system
/// message is refused, not repaired, as in pi; this pi sends one system prompt, so a later
/// system message is refused too. `Err` says what is wrong.
pub(super) fn transcript(list: Vec<Value>) -> Result<(String, Vec<Arc<Message>>), String> {
    let mut list = list.into_iter();
    let first = list.next().unwrap_or(Value::Null);
    if first.get("role").and_then(Value::as_str) != Some("system") {
        return Err(
            "the first message must be the system message ({\"role\": \"system\", \"content\": …})"
                .into(),
        );
    }
    let system = match first.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let blocks: Vec<Content> = serde_json::from_value(Value::Array(blocks.clone()))
                .map_err(|e| format!("the system message's `content`: {e}"))?;
            crate::message::text_of(&blocks)
        }
        _ => return Err("the system message's `content` must be a string or text blocks".into()),
    };
    let rest: Vec<Value> = list.collect();
    if rest
        .iter()
        .any(|m| m.get("role").and_then(Value::as_str) == Some("system"))
    {
        return Err(
            "only the first message may be a system message (pi sends one system prompt)".into(),
        );
    }
    let messages: Vec<Arc<Message>> = serde_json::from_value(Value::Array(rest))
        .map_err(|e| format!("the messages after the system message: {e}"))?;
    Ok((system, messages))
}

/// The hooks' combined proposal as the loop applies it.
fn boundary(p: super::protocol::BoundaryProposal) -> Boundary {
    use super::protocol::BoundaryDraft;
    Boundary {
        entries: p
            .entries
            .into_iter()
            .map(|d| match d {
                BoundaryDraft::Custom { custom_type, data } => {
                    BoundaryEntry::Custom { custom_type, data }
                }
                BoundaryDraft::CustomMessage(m) => BoundaryEntry::Message(injected_to_message(&m)),
                BoundaryDraft::ContextEdit {
                    target_id,
                    replacement,
                } => BoundaryEntry::ContextEdit {
                    target_id,
                    replacement,
                },
                BoundaryDraft::Compaction {
                    summary,
                    first_kept_entry_id,
                    details,
                } => BoundaryEntry::Compaction {
                    summary,
                    first_kept_entry_id,
                    details,
                },
            })
            .collect(),
        continue_run: p.continue_run,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notify_payloads_are_snake_case_at_the_top_level() {
        let ev = AgentEvent::ToolExecutionEnd {
            tool_call_id: "c1".into(),
            tool_name: "bash".into(),
            result: crate::agent::events::ToolResultPayload::partial(
                vec![Content::text("x")],
                None,
            ),
            is_error: false,
            duration_ms: Some(3),
            parent_tool_call_id: None,
        };
        let p = payload_of(&ev);
        assert_eq!(p["tool_call_id"], "c1");
        assert_eq!(p["is_error"], false);
        assert!(p.get("type").is_none());
        assert_eq!(
            notify_event(&ev),
            Some((NotifyEvent::ToolExecutionEnd, Some("bash")))
        );
    }
}
