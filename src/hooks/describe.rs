//! What the host makes of one raw reply, in words: the decision `pi hook test` prints and the
//! shape check `pi hook check` applies. Uses the same reply types as the runner.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::events::{kind_of, Kind};
use super::protocol::{
    BeforeAgentStartReply, BoundaryReply, CacheWarmingReply, CancelableReply, ContextReply,
    DiscoverReply, GateReply, HeadersReply, InputAction, InputReply, MessageEndReply,
    PrepareArgumentsReply, ProviderRequestReply, ToolResultReply, TrustReply, UserBashReply,
};

#[derive(Debug, thiserror::Error)]
pub enum ReplyShapeError {
    #[error("unknown event {0:?}")]
    UnknownEvent(String),
    #[error("the reply does not have the shape {event} expects: {source}")]
    Shape {
        event: String,
        source: serde_json::Error,
    },
    #[error("the reply does not have the shape {event} expects: {message}")]
    Invalid { event: String, message: String },
}

fn parse<T: DeserializeOwned + Default>(event: &str, v: &Value) -> Result<T, ReplyShapeError> {
    if v.is_null() {
        return Ok(T::default());
    }
    serde_json::from_value(v.clone()).map_err(|source| ReplyShapeError::Shape {
        event: event.to_string(),
        source,
    })
}

/// The decision a reply amounts to, e.g. `block: no deletes`, `patch {"command":"ls"}`.
pub fn describe(event: &str, v: &Value) -> Result<String, ReplyShapeError> {
    let kind = kind_of(event).ok_or_else(|| ReplyShapeError::UnknownEvent(event.to_string()))?;
    Ok(match (kind, event) {
        (Kind::Notify | Kind::AwaitedNotify, _) => "acknowledged".into(),
        (Kind::Gate, _) => {
            let r: GateReply = parse(event, v)?;
            if r.block {
                format!(
                    "block{}: {}",
                    if r.terminate { " and terminate" } else { "" },
                    r.reason.unwrap_or_else(|| "no reason given".into())
                )
            } else if let Some(p) = r.patch {
                format!("patch {p}")
            } else {
                "allow".into()
            }
        }
        (_, "input") => {
            let r: InputReply = parse(event, v)?;
            match r.action {
                InputAction::Continue => "continue".into(),
                InputAction::Handled => "handled".into(),
                InputAction::Transform => format!("transform: {}", r.text.unwrap_or_default()),
            }
        }
        (_, "tool_result") => {
            changed(parse::<ToolResultReply>(event, v)? != ToolResultReply::default())
        }
        (_, "prepare_arguments") => changed(
            parse::<PrepareArgumentsReply>(event, v)?
                .arguments
                .is_some(),
        ),
        (_, "before_agent_start") => {
            changed(parse::<BeforeAgentStartReply>(event, v)? != BeforeAgentStartReply::default())
        }
        (_, "context") => changed(parse::<ContextReply>(event, v)?.messages.is_some()),
        (_, "context_with_system") => match parse::<ContextReply>(event, v)?.messages {
            Some(list) => {
                super::bridge::transcript(list).map_err(|message| ReplyShapeError::Invalid {
                    event: event.to_string(),
                    message,
                })?;
                changed(true)
            }
            None => changed(false),
        },
        (_, "before_provider_request") => {
            changed(parse::<ProviderRequestReply>(event, v)?.payload.is_some())
        }
        (_, "before_provider_headers") => {
            changed(parse::<HeadersReply>(event, v)?.headers.is_some())
        }
        (_, "message_end") => changed(parse::<MessageEndReply>(event, v)?.message.is_some()),
        (_, "project_trust") => {
            let r: TrustReply = parse(event, v)?;
            format!(
                "trusted: {:?}{}",
                r.trusted,
                if r.remember { " (remember)" } else { "" }
            )
            .to_lowercase()
        }
        (_, "user_bash") => match parse::<UserBashReply>(event, v)?.result {
            Some(r) => format!("ran it (exit code {:?})", r.exit_code),
            None => "no decision".into(),
        },
        (Kind::Cancelable, _) => {
            let r: CancelableReply = parse(event, v)?;
            if r.cancel {
                "cancel".into()
            } else if r.rest.is_empty() {
                "continue".into()
            } else {
                format!("replace {}", Value::Object(r.rest))
            }
        }
        (Kind::Collect, _) => {
            let r: DiscoverReply = parse(event, v)?;
            format!(
                "{} skill path(s), {} prompt path(s), {} theme path(s)",
                r.skill_paths.len(),
                r.prompt_paths.len(),
                r.theme_paths.len()
            )
        }
        (Kind::Boundary, _) => {
            let r: BoundaryReply = parse(event, v)?;
            let entries = match &r.entries {
                Some(e) => format!("{} entries (replacing the proposal's)", e.len()),
                None => "the proposal's entries".into(),
            };
            let cont = match r.continue_run {
                Some(c) => format!("continue: {c}"),
                None => "continue as proposed".into(),
            };
            format!("{entries}, {} message(s) added, {cont}", r.messages.len())
        }
        (Kind::LastOverride, _) => match parse::<CacheWarmingReply>(event, v)?.action {
            Some(a) => a.as_str().into(),
            None => "no opinion (pi's decision stands)".into(),
        },
        _ => "acknowledged".into(),
    })
}

fn changed(c: bool) -> String {
    if c { "patch" } else { "unchanged" }.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn describes_gate_replies_and_rejects_bad_shapes() {
        assert_eq!(
            describe("tool_call", &json!({"block": true, "reason": "no"})).unwrap(),
            "block: no"
        );
        assert_eq!(describe("tool_call", &Value::Null).unwrap(), "allow");
        assert!(describe("tool_call", &json!({"blok": true})).is_err());
        assert!(describe("nope", &Value::Null).is_err());
        assert_eq!(
            describe("input", &json!({"action": "handled"})).unwrap(),
            "handled"
        );
        assert_eq!(
            describe("session_before_fork", &json!({"cancel": true})).unwrap(),
            "cancel"
        );
    }
}
