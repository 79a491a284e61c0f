//! The host calls that put messages into the conversation: `message.send` (an extension's own
//! message, pi's `sendMessage`), `message.send_user` (a user message, pi's
//! `sendUserMessage`), and `session.send_message`, the earlier name of `message.send_user`,
//! kept so hooks written against it keep working. Parameters are checked here; where a message
//! goes is the session controller's decision ([`SessionControl`]), because it depends on
//! whether a run streams. Every message counts towards the hook's session-entry budget
//! (`budget`): it ends up in the session.

use serde_json::{json, Value};

use super::budget::json_size;
use super::calls::{err, HostCalls};
use super::protocol::CallError;
use crate::message::{now_ms, CustomMessage, UserContent};

/// The methods of this module.
pub const METHODS: &[&str] = &["message.send", "message.send_user", "session.send_message"];

/// `deliver_as` of an injected message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    Steer,
    FollowUp,
    NextTurn,
}

impl Delivery {
    fn param(params: &Value) -> Result<Option<Delivery>, CallError> {
        match params.get("deliver_as") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => match s.as_str() {
                "steer" => Ok(Some(Delivery::Steer)),
                "follow_up" => Ok(Some(Delivery::FollowUp)),
                "next_turn" => Ok(Some(Delivery::NextTurn)),
                other => Err(bad_delivery(other)),
            },
            Some(other) => Err(bad_delivery(&other.to_string())),
        }
    }
}

fn bad_delivery(got: &str) -> CallError {
    err(
        "invalid_params",
        format!("`deliver_as` must be steer, follow_up or next_turn, not {got}"),
    )
}

/// `content`: a string, or text and image blocks.
fn content(params: &Value) -> Result<UserContent, CallError> {
    let bad = || {
        err(
            "invalid_params",
            "`content` (a string, or a list of text and image blocks) is required",
        )
    };
    match params.get("content") {
        Some(Value::String(s)) => Ok(UserContent::Text(s.clone())),
        Some(v @ Value::Array(_)) => serde_json::from_value(v.clone())
            .map(UserContent::Blocks)
            .map_err(|e| err("invalid_params", format!("`content` blocks: {e}"))),
        _ => Err(bad()),
    }
}

fn opt_bool(params: &Value, key: &str) -> Result<Option<bool>, CallError> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(err(
            "invalid_params",
            format!("`{key}` must be true or false, not {other}"),
        )),
    }
}

/// What a message from `params` adds to the session, for the hook's entry budget.
fn entry_size(params: &Value) -> usize {
    ["custom_type", "content", "details"]
        .iter()
        .filter_map(|k| params.get(*k))
        .map(json_size)
        .fold(0, usize::saturating_add)
}

pub(super) async fn handle(
    calls: &HostCalls,
    hook: &str,
    method: &str,
    params: &Value,
) -> Result<Value, CallError> {
    let deliver_as = Delivery::param(params)?;
    let what = METHODS
        .iter()
        .find(|m| **m == method)
        .copied()
        .unwrap_or("message");
    // Measured before anything is copied: a message past the limit is refused as it is.
    let size = entry_size(params);
    calls.charge_entry(hook, what, size)?;
    let sent = send(calls, method, params, deliver_as).await;
    if sent.is_err() {
        calls.refund_entry(hook, size);
    }
    sent
}

async fn send(
    calls: &HostCalls,
    method: &str,
    params: &Value,
    deliver_as: Option<Delivery>,
) -> Result<Value, CallError> {
    match method {
        "message.send" => {
            let custom_type = params
                .get("custom_type")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| err("invalid_params", "`custom_type` (a string) is required"))?;
            let message = CustomMessage {
                custom_type: custom_type.to_string(),
                content: content(params)?,
                display: opt_bool(params, "display")?.unwrap_or(true),
                details: params.get("details").filter(|v| !v.is_null()).cloned(),
                timestamp: now_ms(),
            };
            let trigger_turn = opt_bool(params, "trigger_turn")?;
            let delivered = calls
                .control()?
                .send_custom(message, deliver_as, trigger_turn)
                .await;
            Ok(json!({ "delivered": delivered }))
        }
        _ => {
            // The earlier name queued a follow-up unless told otherwise, next turn included.
            let deliver_as = match (method, deliver_as) {
                ("session.send_message", None | Some(Delivery::NextTurn)) => {
                    Some(Delivery::FollowUp)
                }
                (_, d) => d,
            };
            let text = match content(params)? {
                UserContent::Text(t) => t,
                UserContent::Blocks(b) => crate::message::text_of(&b),
            };
            let disposition = calls.control()?.send_user(text, deliver_as).await?;
            Ok(json!({ "disposition": disposition }))
        }
    }
}
