//! Keeps `hook-protocol.md` and the protocol types from drifting apart.
//!
//! Every ```json block in the document must sit directly under an HTML comment that says what
//! it is (`<!-- check: host -->`, `hook`, `reply EVENT`, `event`, `stream`, `settings`,
//! `project-env`); each block is parsed into the Rust type it claims to be, and the parsed
//! value must serialise back to a superset of the example, so a misspelt or invented field
//! fails here instead of being silently ignored by the lenient envelope types. The document must also list every event of
//! [`Event::all`] in a table row with its semantics kind, and show every message type at least once.

use std::collections::BTreeSet;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::calls::methods;
use super::events::{kind_of, Event, Kind};
use super::protocol::{
    BeforeAgentStartReply, BoundaryReply, CacheWarmingReply, CancelableReply, ContextReply,
    DiscoverReply, FailPolicy, GateReply, HeadersReply, HookMessage, HostMessage, InputAction,
    InputReply, MessageEndReply, PrepareArgumentsReply, ProviderRequestReply, ToolResultReply,
    TrustReply, UserBashReply, PROTOCOL_VERSIONS,
};
use super::sources::{from_settings, SourceError};
use super::spec::HookSource;
use super::subscribe::Change;
use crate::agent::events::{AgentEvent, HookAnswer, HookDecision};
use crate::message::{Content, Message, ToolResultMessage};

const DOC: &str = include_str!("../../hook-protocol.md");

/// Every `type` of a host → hook message. [`host_tag`] matches exhaustively, so a new variant
/// does not compile until it is listed here (and then documented).
const HOST_TYPES: &[&str] = &[
    "hello",
    "event",
    "tool_execute",
    "command",
    "cancel",
    "result",
    "shutdown",
];
const HOOK_TYPES: &[&str] = &[
    "register",
    "reply",
    "progress",
    "call",
    "log",
    "subscribe",
    "unsubscribe",
];

/// Reply result types; each needs at least one `reply EVENT` example.
const REPLY_TYPES: &[&str] = &[
    "GateReply",
    "InputReply",
    "ToolResultReply",
    "PrepareArgumentsReply",
    "BeforeAgentStartReply",
    "ContextReply",
    "ProviderRequestReply",
    "HeadersReply",
    "MessageEndReply",
    "TrustReply",
    "UserBashReply",
    "CancelableReply",
    "DiscoverReply",
    "BoundaryReply",
    "CacheWarmingReply",
    "empty",
];

const ANSWER_OUTCOMES: &[&str] = &[
    "allow",
    "block",
    "would_block",
    "patch",
    "would_patch",
    "continue",
    "transform",
    "handled",
    "cancel",
    "replace",
    "error",
    "skipped",
    "warm",
    "stop",
];
const DECISION_OUTCOMES: &[&str] = &[
    "allow",
    "block",
    "patched",
    "unchanged",
    "handled",
    "cancelled",
    "warm",
    "stop",
];
const HOOK_STATES: &[&str] = &["running", "restarting", "quarantined", "stopped"];

fn host_tag(m: &HostMessage) -> &'static str {
    match m {
        HostMessage::Hello(_) => "hello",
        HostMessage::Event(_) => "event",
        HostMessage::ToolExecute(_) => "tool_execute",
        HostMessage::Command(_) => "command",
        HostMessage::Complete(_) => "complete",
        HostMessage::Cancel { .. } => "cancel",
        HostMessage::Result(_) => "result",
        HostMessage::CallProgress(_) => "call_progress",
        HostMessage::Shutdown { .. } => "shutdown",
    }
}

fn hook_tag(m: &HookMessage) -> &'static str {
    match m {
        HookMessage::Register(_) => "register",
        HookMessage::Reply(_) => "reply",
        HookMessage::Progress(_) => "progress",
        HookMessage::Call(_) => "call",
        HookMessage::Log(_) => "log",
        HookMessage::Subscribe(_) => "subscribe",
        HookMessage::Unsubscribe(_) => "unsubscribe",
        HookMessage::CallCancel { .. } => "call_cancel",
    }
}

/// One fenced JSON block and the check its comment names.
struct Block {
    /// 1-based line of the opening fence.
    line: usize,
    check: String,
    body: String,
}

/// The check named by a `<!-- check: ... -->` line, if it is one.
fn check_comment(line: &str) -> Option<&str> {
    line.trim()
        .strip_prefix("<!-- check:")
        .and_then(|s| s.strip_suffix("-->"))
        .map(str::trim)
}

/// Every fenced block that must be checked; structural mistakes (a JSON block without a
/// comment, a comment without a JSON block, an unclosed fence) go to `errors`.
fn blocks(doc: &str, errors: &mut Vec<String>) -> Vec<Block> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(check) = check_comment(line) {
            let next = lines.get(i + 1).map(|l| l.trim()).unwrap_or("");
            if next != "```json" {
                errors.push(format!(
                    "line {}: `<!-- check: {check} -->` must be directly followed by a ```json fence",
                    i + 1
                ));
            }
        }
        let Some(lang) = line.trim_start().strip_prefix("```") else {
            i += 1;
            continue;
        };
        let lang = lang.trim();
        let start = i;
        let mut body = String::new();
        i += 1;
        while i < lines.len() && !lines[i].trim_start().starts_with("```") {
            body.push_str(lines[i]);
            body.push('\n');
            i += 1;
        }
        if i == lines.len() {
            errors.push(format!("line {}: fence is never closed", start + 1));
        }
        i += 1;
        if !lang.starts_with("json") {
            continue;
        }
        match start
            .checked_sub(1)
            .and_then(|p| check_comment(lines[p]))
        {
            Some(check) => out.push(Block {
                line: start + 1,
                check: check.to_string(),
                body,
            }),
            None => errors.push(format!(
                "line {}: a ```{lang} block needs a `<!-- check: ... -->` comment on the line above",
                start + 1
            )),
        }
    }
    out
}

/// Parse into `T` and serialise back.
fn typed<T: DeserializeOwned + Serialize>(v: &Value) -> Result<Value, String> {
    let t: T = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(t).map_err(|e| e.to_string())
}

/// Every field of `doc` is in `typed` with the same value (typed values may add defaults).
fn subset(doc: &Value, typed: &Value, path: &str) -> Result<(), String> {
    match (doc, typed) {
        (Value::Object(d), Value::Object(t)) => {
            for (k, v) in d {
                let p = format!("{path}.{k}");
                match t.get(k) {
                    Some(tv) => subset(v, tv, &p)?,
                    // `null` and absent are the same for optional fields.
                    None if v.is_null() => {}
                    None => {
                        return Err(format!(
                            "field `{p}` is not part of the type (misspelt or not implemented)"
                        ))
                    }
                }
            }
            Ok(())
        }
        (Value::Array(d), Value::Array(t)) if d.len() == t.len() => {
            for (n, (dv, tv)) in d.iter().zip(t).enumerate() {
                subset(dv, tv, &format!("{path}[{n}]"))?;
            }
            Ok(())
        }
        (d, t) if d == t => Ok(()),
        (d, t) => Err(format!("`{path}` reads back as {t}, the example says {d}")),
    }
}

/// What the examples covered.
#[derive(Default)]
struct Seen {
    types: BTreeSet<&'static str>,
    replies: BTreeSet<&'static str>,
}

fn check_host(v: &Value, seen: &mut Seen) -> Result<HostMessage, String> {
    let m: HostMessage = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    subset(v, &serde_json::to_value(&m).map_err(|e| e.to_string())?, "")?;
    seen.types.insert(host_tag(&m));
    if let HostMessage::Hello(h) = &m {
        if h.protocol_versions != PROTOCOL_VERSIONS {
            return Err(format!(
                "hello offers {:?}, the host speaks {PROTOCOL_VERSIONS:?}",
                h.protocol_versions
            ));
        }
        if let Some(x) = h
            .capabilities
            .methods
            .iter()
            .find(|x| !methods().any(|m| m == x.as_str()))
        {
            return Err(format!(
                "hello offers method `{x}`, which calls::METHODS lacks"
            ));
        }
    }
    Ok(m)
}

fn check_hook(v: &Value, seen: &mut Seen) -> Result<HookMessage, String> {
    let m: HookMessage = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    subset(v, &serde_json::to_value(&m).map_err(|e| e.to_string())?, "")?;
    seen.types.insert(hook_tag(&m));
    if let HookMessage::Register(r) = &m {
        if !PROTOCOL_VERSIONS.contains(&r.protocol_version) {
            return Err(format!(
                "register picks version {}, not one the host offers",
                r.protocol_version
            ));
        }
        for s in &r.subscriptions {
            if kind_of(&s.event).is_none() {
                return Err(format!("subscription to unknown event `{}`", s.event));
            }
        }
    }
    // A dynamic change is checked as the host would apply it to an empty set.
    let change = match &m {
        HookMessage::Subscribe(s) => Some(Change::Subscribe(s.subscriptions.clone())),
        HookMessage::Unsubscribe(u) => Some(Change::Unsubscribe(u.events.clone())),
        _ => None,
    };
    if let Some(c) = change {
        let none = super::registration::Subscriptions::default();
        super::subscribe::apply(&none, &c, std::time::Duration::from_secs(30), &[])
            .map_err(|e| format!("the host would refuse this {}: {e}", c.message()))?;
    }
    if let HookMessage::Call(c) = &m {
        if !methods().any(|m| m == c.method) {
            return Err(format!("`{}` is not in calls::METHODS", c.method));
        }
        if c.method.starts_with("ui.") {
            super::ui::UiCall::parse(&c.method, &c.params).map_err(|e| e.to_string())?;
        }
        if c.method == "model.complete" {
            super::complete_calls::parse(&c.params).map_err(|e| e.message)?;
        }
        if let (Some(block), Some(name)) = (c.params.get("oauth"), c.params["name"].as_str()) {
            crate::oauth::hook_flow::intern(name, "doc", block).map_err(|e| e.to_string())?;
        }
    }
    Ok(m)
}

/// Parse a field that holds pi data (messages, content) with the real types.
fn pi_data<T: DeserializeOwned>(v: &Value, key: &str, what: &str) -> Result<(), String> {
    match v.get(key) {
        Some(x) => serde_json::from_value::<T>(x.clone())
            .map(|_| ())
            .map_err(|e| format!("`{key}` is not {what}: {e}")),
        None => Ok(()),
    }
}

/// `context_with_system`'s `messages`: the system message, then pi messages.
fn transcript(v: &Value) -> Result<(), String> {
    let Some(list) = v.get("messages") else {
        return Ok(());
    };
    let list = list.as_array().ok_or("`messages` must be a list")?;
    let first = list
        .first()
        .ok_or("`messages` must start with the system message")?;
    if first.get("role").and_then(Value::as_str) != Some("system")
        || !first.get("content").is_some_and(Value::is_string)
    {
        return Err("the first message must be {\"role\": \"system\", \"content\": string}".into());
    }
    serde_json::from_value::<Vec<Message>>(Value::Array(list[1..].to_vec()))
        .map(|_| ())
        .map_err(|e| format!("`messages` after the system message are not pi messages: {e}"))
}

/// A reply result for `event`: parsed into the event's reply type and read back.
fn check_reply_result(event: &str, r: &Value, seen: &mut Seen) -> Result<(), String> {
    let kind = kind_of(event).ok_or_else(|| format!("`{event}` is not a known event"))?;
    // An empty reply (`null`) means the reply type's defaults, as in the runner.
    let empty = Value::Object(Default::default());
    let r = if r.is_null() && kind != Kind::AwaitedNotify {
        &empty
    } else {
        r
    };
    let (name, back) = match (event, kind) {
        (_, Kind::Notify) => return Err(format!("`{event}` is a notify event: no reply")),
        (_, Kind::AwaitedNotify) => {
            let empty = r.is_null() || r.as_object().is_some_and(|o| o.is_empty());
            if !empty {
                return Err(format!("`{event}` is acknowledged with null or {{}}"));
            }
            seen.replies.insert("empty");
            return Ok(());
        }
        ("tool_call", _) => ("GateReply", typed::<GateReply>(r)?),
        ("input", _) => {
            let i: InputReply = serde_json::from_value(r.clone()).map_err(|e| e.to_string())?;
            if i.action == InputAction::Transform && i.text.is_none() {
                return Err("`transform` needs `text`".into());
            }
            ("InputReply", typed::<InputReply>(r)?)
        }
        ("tool_result", _) => {
            pi_data::<Vec<Content>>(r, "content", "a list of content blocks")?;
            ("ToolResultReply", typed::<ToolResultReply>(r)?)
        }
        ("prepare_arguments", _) => {
            if let Some(a) = r.get("arguments") {
                if !a.is_object() {
                    return Err("`arguments` must be an object".into());
                }
            }
            ("PrepareArgumentsReply", typed::<PrepareArgumentsReply>(r)?)
        }
        ("before_agent_start", _) => ("BeforeAgentStartReply", typed::<BeforeAgentStartReply>(r)?),
        ("context", _) => {
            pi_data::<Vec<Message>>(r, "messages", "a list of pi messages")?;
            ("ContextReply", typed::<ContextReply>(r)?)
        }
        ("context_with_system", _) => {
            transcript(r)?;
            ("ContextReply", typed::<ContextReply>(r)?)
        }
        ("before_provider_request", _) => {
            ("ProviderRequestReply", typed::<ProviderRequestReply>(r)?)
        }
        ("before_provider_headers", _) => {
            if let Some(h) = r.get("headers").and_then(Value::as_object) {
                if let Some((k, _)) = h.iter().find(|(_, v)| !(v.is_string() || v.is_null())) {
                    return Err(format!("header `{k}` must be a string or null"));
                }
            }
            ("HeadersReply", typed::<HeadersReply>(r)?)
        }
        ("message_end", _) => {
            pi_data::<Message>(r, "message", "a pi message")?;
            ("MessageEndReply", typed::<MessageEndReply>(r)?)
        }
        ("project_trust", _) => ("TrustReply", typed::<TrustReply>(r)?),
        ("user_bash", _) => ("UserBashReply", typed::<UserBashReply>(r)?),
        (_, Kind::Cancelable) => ("CancelableReply", typed::<CancelableReply>(r)?),
        ("resources_discover", _) => ("DiscoverReply", typed::<DiscoverReply>(r)?),
        (_, Kind::Boundary) => ("BoundaryReply", typed::<BoundaryReply>(r)?),
        ("cache_warming_decision", _) => ("CacheWarmingReply", typed::<CacheWarmingReply>(r)?),
        _ => {
            return Err(format!(
                "no reply type known for `{event}`; teach protocol_doc_tests.rs"
            ))
        }
    };
    subset(r, &back, "result")?;
    seen.replies.insert(name);
    Ok(())
}

/// Top-level payload keys of the events whose payloads the host builds field by field.
fn payload_keys(event: &str) -> Option<&'static [&'static str]> {
    Some(match event {
        "tool_call" => &["tool_call_id", "tool_name", "input"],
        "tool_result" => &[
            "tool_call_id",
            "tool_name",
            "input",
            "content",
            "details",
            "structured_content",
            "usage",
            "is_error",
        ],
        "prepare_arguments" => &["tool_call_id", "tool_name", "arguments"],
        "input" => &["text", "source"],
        "before_agent_start" => &["prompt", "system_prompt", "system_prompt_options"],
        "context" => &["messages"],
        "context_with_system" => &["messages"],
        "before_provider_request" => &["payload"],
        "before_provider_headers" => &["headers"],
        "after_provider_response" => &["status", "headers"],
        "provider_stream_event" => &["api", "provider", "model", "event", "data"],
        "message_end" => &["message"],
        "turn_end" => &[
            "turn_index",
            "message",
            "tool_results",
            "outcome",
            "proposal",
        ],
        "agent_before_settle" => &["message_count", "outcome", "proposal"],
        "project_trust" => &["cwd"],
        "cache_warming_decision" => &[
            "warm_cost",
            "miss_cost",
            "continuation_probability",
            "action",
        ],
        _ => return None,
    })
}

fn check_event(v: &Value, seen: &mut Seen) -> Result<(), String> {
    let HostMessage::Event(e) = check_host(v, seen)? else {
        return Err("not an `event` message".into());
    };
    let kind = kind_of(&e.name).ok_or_else(|| format!("`{}` is not a known event", e.name))?;
    if e.id.is_some() != kind.expects_reply() {
        return Err(format!(
            "`{}` is a {} event: it {} an `id`",
            e.name,
            kind.as_str(),
            if kind.expects_reply() {
                "needs"
            } else {
                "has no"
            }
        ));
    }
    if e.deadline_ms.is_some() != e.id.is_some() {
        return Err("a request carries `deadline_ms`, a notification does not".into());
    }
    let p = e
        .payload
        .as_object()
        .ok_or("the payload must be an object")?;
    if let Some(k) = p.keys().find(|k| k.chars().any(|c| c.is_ascii_uppercase())) {
        return Err(format!("payload key `{k}` is not snake_case"));
    }
    if let Some(keys) = payload_keys(&e.name) {
        let want: BTreeSet<&str> = keys.iter().copied().collect();
        let got: BTreeSet<&str> = p.keys().map(String::as_str).collect();
        if want != got {
            return Err(format!(
                "`{}` payload has keys {got:?}, the host sends {want:?}",
                e.name
            ));
        }
    }
    pi_data::<Message>(&e.payload, "message", "a pi message")?;
    if e.name == "context_with_system" {
        transcript(&e.payload)?;
    } else {
        pi_data::<Vec<Message>>(&e.payload, "messages", "a list of pi messages")?;
    }
    pi_data::<Vec<ToolResultMessage>>(&e.payload, "tool_results", "a list of tool results")?;
    pi_data::<crate::hooks::protocol::BoundaryProposal>(
        &e.payload,
        "proposal",
        "a boundary proposal",
    )?;
    if e.name == "tool_result" {
        pi_data::<Vec<Content>>(&e.payload, "content", "a list of content blocks")?;
    }
    for key in ["result", "partial_result"] {
        if let Some(r) = e.payload.get(key) {
            pi_data::<Vec<Content>>(r, "content", "a list of content blocks")?;
        }
    }
    Ok(())
}

fn str_at(v: &Value, k: &str) -> Result<String, String> {
    v.get(k)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("`{k}` must be a string"))
}

fn opt_str_at(v: &Value, k: &str) -> Result<Option<String>, String> {
    match v.get(k) {
        None => Ok(None),
        Some(_) => str_at(v, k).map(Some),
    }
}

/// A JSON-mode line: rebuilt as the host's own event and serialised; it must come out equal.
fn check_stream(v: &Value) -> Result<(), String> {
    let ev = match v.get("type").and_then(Value::as_str) {
        Some("hook_decision") => {
            let mut answers = Vec::new();
            for a in v
                .get("answers")
                .and_then(Value::as_array)
                .ok_or("`answers` must be a list")?
            {
                let outcome = str_at(a, "outcome")?;
                if !ANSWER_OUTCOMES.contains(&outcome.as_str()) {
                    return Err(format!("unknown answer outcome `{outcome}`"));
                }
                answers.push(HookAnswer {
                    hook: str_at(a, "hook")?,
                    outcome,
                    reason: opt_str_at(a, "reason")?,
                    patch: a.get("patch").cloned(),
                    latency_us: a
                        .get("latencyUs")
                        .and_then(Value::as_u64)
                        .ok_or("`latencyUs` must be an integer")?,
                });
            }
            let outcome = str_at(v, "outcome")?;
            if !DECISION_OUTCOMES.contains(&outcome.as_str()) {
                return Err(format!("unknown decision outcome `{outcome}`"));
            }
            AgentEvent::HookDecision(HookDecision {
                event: str_at(v, "event")?,
                tool_call_id: opt_str_at(v, "toolCallId")?,
                tool_name: opt_str_at(v, "toolName")?,
                answers,
                outcome,
                reason: opt_str_at(v, "reason")?,
            })
        }
        Some("hook_error") => AgentEvent::HookError {
            hook: str_at(v, "hook")?,
            event: str_at(v, "event")?,
            kind: str_at(v, "kind")?,
            message: str_at(v, "message")?,
        },
        Some("hook_state") => {
            let state = str_at(v, "state")?;
            if !HOOK_STATES.contains(&state.as_str()) {
                return Err(format!("unknown hook state `{state}`"));
            }
            AgentEvent::HookState {
                hook: str_at(v, "hook")?,
                state,
                detail: opt_str_at(v, "detail")?,
            }
        }
        Some("hook_command") => AgentEvent::HookCommand {
            hook: str_at(v, "hook")?,
            name: str_at(v, "name")?,
            text: opt_str_at(v, "text")?,
        },
        other => {
            return Err(format!(
                "a stream example's `type` must be hook_decision, hook_error, hook_state or \
                 hook_command, not {other:?}"
            ))
        }
    };
    let back = serde_json::to_value(&ev).map_err(|e| e.to_string())?;
    if &back != v {
        return Err(format!("the host writes this event as {back}"));
    }
    Ok(())
}

/// A `hooks` entry of settings: the real parser must accept it (an executable that does not
/// exist here is fine), and the fields must be the ones the document lists, with valid values.
fn check_settings(v: &Value) -> Result<(), String> {
    let list = Value::Array(vec![v.clone()]);
    match from_settings(
        &list,
        "settings.json",
        std::path::Path::new("/"),
        HookSource::User,
    ) {
        Ok(_) | Err(SourceError::NotFound { .. }) => {}
        Err(e) => return Err(e.to_string()),
    }
    let o = match v {
        Value::String(s) if !s.trim().is_empty() => return Ok(()),
        Value::Object(o) => o,
        _ => return Err("a hooks entry is a command string or an object".into()),
    };
    let strings = |k: &str, x: &Value| match x.as_array() {
        Some(a) if a.iter().all(Value::is_string) => Ok(()),
        _ => Err(format!("`{k}` must be a list of strings")),
    };
    match o.get("command").and_then(Value::as_str) {
        Some(c) if !c.trim().is_empty() => {}
        _ => return Err("`command` must be a non-empty string".into()),
    }
    for (k, x) in o {
        match k.as_str() {
            "command" => {}
            "name" => {
                str_at(v, k)?;
            }
            "args" | "env_passthrough" => strings(k, x)?,
            "env" => {
                if !x
                    .as_object()
                    .is_some_and(|m| m.values().all(Value::is_string))
                {
                    return Err("`env` must map names to strings".into());
                }
            }
            "config" => {
                if !x.is_object() {
                    return Err("`config` must be an object".into());
                }
            }
            "timeout_ms" | "start_timeout_ms" => {
                if x.as_u64().is_none_or(|n| n == 0) {
                    return Err(format!("`{k}` must be a positive integer"));
                }
            }
            "fail" => {
                serde_json::from_value::<FailPolicy>(x.clone())
                    .map_err(|e| format!("`fail`: {e}"))?;
            }
            "mode" => {
                if !matches!(x.as_str(), Some("enforce" | "shadow")) {
                    return Err("`mode` must be \"enforce\" or \"shadow\"".into());
                }
            }
            "sha256" | "interpreter_sha256" => {
                let ok = x
                    .as_str()
                    .is_some_and(|s| s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit()));
                if !ok {
                    return Err(format!("`{k}` must be 64 hex digits"));
                }
            }
            other => return Err(format!("unknown settings field `{other}`")),
        }
    }
    Ok(())
}

fn check_block(b: &Block, seen: &mut Seen) -> Result<(), String> {
    let v: Value = serde_json::from_str(&b.body).map_err(|e| format!("not JSON: {e}"))?;
    let mut words = b.check.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("host"), None, _) => check_host(&v, seen).map(|_| ()),
        (Some("hook"), None, _) => check_hook(&v, seen).map(|_| ()),
        (Some("event"), None, _) => check_event(&v, seen),
        (Some("stream"), None, _) => check_stream(&v),
        (Some("settings"), None, _) => check_settings(&v),
        // A user settings file granting projects variables (`projectEnv`).
        (Some("project-env"), None, _) => {
            let grant = v.get("projectEnv").ok_or("no `projectEnv` key")?;
            crate::config::ProjectGrant::read(
                Some(grant),
                std::path::Path::new("/"),
                std::path::Path::new("settings.json"),
            )
            .map(|_| ())
            .map_err(|e| e.to_string())
        }
        (Some("reply"), Some(event), None) => {
            let HookMessage::Reply(r) = check_hook(&v, seen)? else {
                return Err("not a `reply` message".into());
            };
            if r.error.is_some() {
                return Err("an `error` reply is a `check: hook` example".into());
            }
            check_reply_result(event, r.result.as_ref().unwrap_or(&Value::Null), seen)
        }
        _ => Err(format!("unknown check kind `{}`", b.check)),
    }
}

/// Every example, checked; returns what they covered.
fn check_all() -> (Seen, Vec<String>) {
    let mut errors = Vec::new();
    let mut seen = Seen::default();
    let found = blocks(DOC, &mut errors);
    assert!(
        !found.is_empty(),
        "hook-protocol.md has no checked examples"
    );
    for b in &found {
        if let Err(e) = check_block(b, &mut seen) {
            errors.push(format!(
                "hook-protocol.md line {} (check: {}): {e}",
                b.line, b.check
            ));
        }
    }
    (seen, errors)
}

#[test]
fn every_json_example_parses_as_what_it_claims() {
    let (_, errors) = check_all();
    assert!(errors.is_empty(), "\n{}", errors.join("\n"));
}

#[test]
fn every_message_type_and_reply_shape_has_an_example() {
    let (seen, _) = check_all();
    let missing: Vec<_> = HOST_TYPES
        .iter()
        .chain(HOOK_TYPES)
        .filter(|t| !seen.types.contains(*t))
        .chain(REPLY_TYPES.iter().filter(|t| !seen.replies.contains(*t)))
        .collect();
    assert!(missing.is_empty(), "no checked example for {missing:?}");
}

/// Every event has a row `| `name` | kind | ...` whose kind is the one in events.rs, and a
/// heading that names it.
#[test]
fn every_event_is_listed_with_its_kind() {
    let mut errors = Vec::new();
    for (name, kind) in Event::all().map(|e| (e.name(), e.kind())) {
        let tick = format!("`{name}`");
        let rows: Vec<Vec<&str>> = DOC
            .lines()
            .filter(|l| l.trim_start().starts_with('|'))
            .map(|l| {
                l.trim()
                    .trim_matches('|')
                    .split('|')
                    .map(str::trim)
                    .collect()
            })
            .filter(|cells: &Vec<&str>| cells.first() == Some(&tick.as_str()))
            .collect();
        // Rows whose second cell is a kind name must name this event's kind; other tables
        // (payload tables, say) may list the event too.
        let kinds: BTreeSet<&str> = Event::all().map(|e| e.kind().as_str()).collect();
        let mut listed = false;
        for r in &rows {
            match r.get(1) {
                Some(k) if *k == kind.as_str() => listed = true,
                Some(k) if kinds.contains(k) => errors.push(format!(
                    "{name}: a row says kind {k:?}, events.rs says {:?}",
                    kind.as_str()
                )),
                _ => {}
            }
        }
        if !listed {
            errors.push(format!(
                "{name}: no table row `| {tick} | {} |`",
                kind.as_str()
            ));
        }
        let heading = DOC.lines().any(|l| l.starts_with('#') && l.contains(&tick));
        if !heading {
            errors.push(format!("{name}: no heading mentions {tick}"));
        }
    }
    assert!(errors.is_empty(), "\n{}", errors.join("\n"));
}

/// Every host-call method has a table row `| `method` | ...`, and every row that looks like one
/// names a method the host implements.
#[test]
fn every_host_call_method_is_documented() {
    let rows: BTreeSet<&str> = DOC
        .lines()
        .filter_map(|l| l.trim().strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .filter(|m| m.contains('.') && !m.contains(' ') && !m.contains('/'))
        .collect();
    let missing: Vec<_> = methods().filter(|m| !rows.contains(m)).collect();
    assert!(missing.is_empty(), "no table row for methods {missing:?}");
    let unknown: Vec<_> = rows
        .iter()
        .filter(|m| {
            !methods().any(|x| x == **m)
                && ["session.", "tools.", "ui.", "agent.", "flags."]
                    .iter()
                    .any(|p| m.starts_with(p))
        })
        .collect();
    assert!(
        unknown.is_empty(),
        "documented methods the host lacks: {unknown:?}"
    );
}

#[test]
fn the_checker_rejects_what_it_should() {
    let mut errors = Vec::new();
    let doc = "x\n```json\n{}\n```\n<!-- check: host -->\ntext\n";
    assert!(blocks(doc, &mut errors).is_empty());
    assert_eq!(errors.len(), 2, "{errors:?}");
    let mut seen = Seen::default();
    let bad = |check: &str, body: &str| Block {
        line: 1,
        check: check.into(),
        body: body.into(),
    };
    let mut fails = |check: &str, body: &str| check_block(&bad(check, body), &mut seen).is_err();
    assert!(fails("nonsense", "{}"));
    assert!(fails("host", r#"{"type":"cancel","id":1,"reason":"x"}"#));
    assert!(fails(
        "reply tool_call",
        r#"{"type":"reply","id":1,"result":{"blok":true}}"#
    ));
    assert!(fails(
        "reply agent_start",
        r#"{"type":"reply","id":1,"result":{}}"#
    ));
    assert!(fails(
        "event",
        r#"{"type":"event","name":"tool_call","payload":{}}"#
    ));
    assert!(fails(
        "stream",
        r#"{"type":"hook_error","hook":"h","event":"e","kind":"k","message":"m","x":1}"#
    ));
    assert!(fails("settings", r#"{"command":"x","timeout":5}"#));
    assert!(fails("settings", r#"{"command":"x","mode":"loud"}"#));
    assert!(fails(
        "hook",
        r#"{"type":"call","id":1,"method":"ui.shout","params":{}}"#
    ));
    assert!(fails(
        "hook",
        r#"{"type":"call","id":1,"method":"ui.select","params":{"title":"t"}}"#
    ));
    assert!(!fails("settings", r#""~/bin/gate --strict""#));
}
