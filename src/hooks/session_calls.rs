//! The `session.*` host calls that read or change the session store: custom entries, the
//! session name, labels, the tree, the branch and the entries after a cursor are answered here
//! from the shared session; `commands.list` asks the controller, which knows the commands of
//! every source; compaction,
//! tree navigation, fork and clone need the whole run (the model, the other hooks' cancelable
//! events, the agent's context, new hook processes), so they are handed to the session
//! controller through [`SessionControl`]. The entries a hook writes (custom entries, names,
//! labels) count towards its session-entry budget (`budget`).

use async_trait::async_trait;
use serde_json::{json, Value};

use super::budget::json_size;
use super::calls::{err, str_param, HostCalls};
use super::events::NotifyEvent;
use super::protocol::CallError;
use crate::session::{ForkPosition, SessionError};

/// A session operation only the session controller can carry out.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionOp {
    /// `session.compact {custom_instructions?}`.
    Compact { custom_instructions: Option<String> },
    /// `session.navigate_tree {entry_id, summarize?, custom_instructions?, label?}`.
    NavigateTree {
        entry_id: String,
        summarize: bool,
        custom_instructions: Option<String>,
        label: Option<String>,
    },
    /// `session.fork {entry_id, position?}` (`before`, the default, or `at`), into a new file
    /// in the current session's folder, which must be inside the session directory.
    Fork {
        entry_id: String,
        position: ForkPosition,
    },
    /// `session.clone {}`: the whole active path into a new session (as `Fork`).
    Clone,
    /// `session.new {parent_session?}`: an empty session in the same folder (`/new`), which
    /// must be inside the session directory; `parent_session` is recorded in its header (1.6's
    /// `ctx.newSession({parentSession})`, RPC `new_session`).
    New { parent_session: Option<String> },
    /// `session.switch {session_file}`: continue in another session file (`/resume`); only a
    /// session file inside the session directory (see `crate::session::root`).
    Switch { session_file: String },
}

/// The session controller as hooks' host calls see it (its model operations included).
/// `caller` is the hook that asked: when the operation replaces the session, that hook is
/// answered before it is replaced.
#[async_trait]
pub trait SessionControl: super::model_calls::ModelControl + Send + Sync {
    async fn run(&self, caller: &str, op: SessionOp) -> Result<Value, CallError>;

    /// `message.send`: an extension's message; answers where it went (`steer`, `follow_up`,
    /// `next_turn`, `deferred`, `started`, `appended`).
    async fn send_custom(
        &self,
        message: crate::message::CustomMessage,
        deliver_as: Option<super::message_calls::Delivery>,
        trigger_turn: Option<bool>,
    ) -> &'static str;

    /// `message.send_user`: a user message; answers `started`, `queued` or `handled`.
    async fn send_user(
        &self,
        text: String,
        deliver_as: Option<super::message_calls::Delivery>,
    ) -> Result<&'static str, CallError>;

    /// `commands.list`'s value: `{commands: [{name, description?, source, source_info, hook?}]}`
    /// — the same gathering as RPC `get_commands` and the editor's `/` list.
    fn commands(&self) -> Value;

    /// The tools the model is offered changed (`tools.set_active`, `tools.register`,
    /// `tools.unregister`): the system prompt's tool section and skills block are rendered
    /// again, for the next model request.
    fn tools_changed(&self);

    /// `model.complete`: one request through pi's providers and keys, its text and thinking
    /// deltas sent to `progress`, stopped when `cancel` fires (error `cancelled`); answers
    /// `{message}` and counts its usage in the session's.
    async fn complete(
        &self,
        hook: &str,
        request: super::complete_calls::CompleteRequest,
        progress: super::instance::ProgressSink,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<Value, CallError>;
}

fn store_err(e: SessionError) -> CallError {
    let code = match e {
        SessionError::EntryNotFound(_) => "not_found",
        _ => "failed",
    };
    err(code, e.to_string())
}

/// Writes one entry of `size` bytes with `append`, charged to `hook`'s entry budget (and
/// refunded when it is not written).
fn charged(
    calls: &HostCalls,
    hook: &str,
    what: &'static str,
    size: usize,
    append: impl FnOnce(&mut crate::session::Session) -> Result<String, SessionError>,
) -> Result<String, CallError> {
    let session = calls.session()?;
    calls.charge_entry(hook, what, size)?;
    session.record(append).map_err(|e| {
        calls.refund_entry(hook, size);
        store_err(e)
    })
}

/// The entry `id` a hook appended, announced as `entry_appended` (pi 1.6 does so for an
/// extension's `appendEntry`), with the entry as the session file has it.
fn announce(calls: &HostCalls, id: &str) {
    let Some(runner) = calls.runner() else {
        return;
    };
    let entry = calls.session().ok().and_then(|s| {
        s.lock()
            .entry(id)
            .and_then(|e| serde_json::to_value(e).ok())
    });
    if let Some(entry) = entry {
        runner.emit_event(crate::agent::events::AgentEvent::EntryAppended { entry });
    }
}

fn opt_str(params: &Value, key: &str) -> Result<Option<String>, CallError> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(err(
            "invalid_params",
            format!("`{key}` must be a string, not {other}"),
        )),
    }
}

pub(super) async fn handle(
    calls: &HostCalls,
    hook: &str,
    method: &str,
    params: &Value,
) -> Result<Value, CallError> {
    match method {
        "session.append_entry" => {
            let custom_type = str_param(params, "custom_type")?;
            // Measured before it is copied: an entry past the limit is refused as it is.
            let size = custom_type
                .len()
                .saturating_add(params.get("data").map_or(0, json_size));
            let data = params.get("data");
            let id = charged(calls, hook, "session.append_entry", size, |s| {
                s.append_custom(custom_type, data.cloned())
            })?;
            announce(calls, &id);
            Ok(json!({ "id": id }))
        }
        "session.set_name" => {
            let name = str_param(params, "name")?;
            let clean = name.split_whitespace().collect::<Vec<_>>().join(" ");
            if clean.is_empty() {
                return Err(err("invalid_params", "`name` must not be empty"));
            }
            charged(calls, hook, "session.set_name", clean.len(), |s| {
                s.append_session_info(&clean)
            })?;
            if let Some(r) = calls.runner() {
                r.notify(
                    NotifyEvent::SessionInfoChanged,
                    None,
                    || json!({"name": clean}),
                );
            }
            Ok(json!({}))
        }
        "session.set_label" => {
            let target = str_param(params, "entry_id")?;
            let label = opt_str(params, "label")?;
            let label = label.as_deref().map(str::trim).filter(|l| !l.is_empty());
            let size = target.len() + label.map_or(0, str::len);
            charged(calls, hook, "session.set_label", size, |s| {
                s.append_label(target, label)
            })?;
            Ok(json!({}))
        }
        "session.get_branch" => get_branch(calls),
        "session.get_entries" => {
            let since = opt_str(params, "since")?;
            let s = calls.session()?.lock();
            // The very query RPC `get_entries` answers: entry ids are durable cursors.
            let entries = s.entries_since(since.as_deref()).map_err(store_err)?;
            let entries = serde_json::to_value(entries)
                .map_err(|e| err("failed", format!("the entries did not serialise: {e}")))?;
            Ok(json!({ "entries": entries, "leaf_id": s.leaf_id() }))
        }
        "commands.list" => Ok(calls
            .control()
            .map_err(|_| err("unavailable", "the commands are known once pi has started"))?
            .commands()),
        "session.get_tree" => {
            let s = calls.session()?.lock();
            let tree: Value = serde_json::from_str(&s.tree_json())
                .map_err(|e| err("failed", format!("the tree did not serialise: {e}")))?;
            Ok(json!({ "tree": tree, "leaf_id": s.leaf_id() }))
        }
        _ => {
            let op = parse_op(method, params)?;
            calls.control()?.run(hook, op).await
        }
    }
}

/// `session.get_branch`: the entries from the root to the leaf — custom entries, labels, model
/// changes, compactions, messages with their tool details — so a hook can rebuild its state
/// after a fork, a tree move or a reload; and, as before, the agent's messages (the session's
/// context until the agent exists, at start-up).
fn get_branch(calls: &HostCalls) -> Result<Value, CallError> {
    // Read before the session is locked: the agent takes its own lock to record messages.
    let agent_messages = calls.agent().ok().map(|a| a.messages());
    let s = calls.session()?.lock();
    let entries = serde_json::to_value(s.branch(None))
        .map_err(|e| err("failed", format!("the branch did not serialise: {e}")))?;
    let messages = agent_messages.unwrap_or_else(|| s.context().llm_messages());
    Ok(json!({ "entries": entries, "messages": messages, "leaf_id": s.leaf_id() }))
}

fn parse_op(method: &str, params: &Value) -> Result<SessionOp, CallError> {
    Ok(match method {
        "session.compact" => SessionOp::Compact {
            custom_instructions: opt_str(params, "custom_instructions")?,
        },
        "session.navigate_tree" => SessionOp::NavigateTree {
            entry_id: str_param(params, "entry_id")?.to_string(),
            summarize: params
                .get("summarize")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            custom_instructions: opt_str(params, "custom_instructions")?,
            label: opt_str(params, "label")?,
        },
        "session.fork" => SessionOp::Fork {
            entry_id: str_param(params, "entry_id")?.to_string(),
            position: match opt_str(params, "position")?.as_deref() {
                None | Some("before") => ForkPosition::Before,
                Some("at") => ForkPosition::At,
                Some(other) => {
                    return Err(err(
                        "invalid_params",
                        format!("`position` must be \"before\" or \"at\", not {other:?}"),
                    ))
                }
            },
        },
        "session.clone" => SessionOp::Clone,
        "session.new" => SessionOp::New {
            parent_session: opt_str(params, "parent_session")?,
        },
        "session.switch" => SessionOp::Switch {
            session_file: str_param(params, "session_file")?.to_string(),
        },
        other => return Err(err("unknown_method", format!("no method {other}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_parse_with_defaults_and_reject_bad_values() {
        assert_eq!(
            parse_op("session.fork", &json!({"entry_id": "a1b2c3d4"})).unwrap(),
            SessionOp::Fork {
                entry_id: "a1b2c3d4".into(),
                position: ForkPosition::Before
            }
        );
        assert!(parse_op(
            "session.fork",
            &json!({"entry_id": "x", "position": "after"})
        )
        .is_err());
        assert!(parse_op("session.navigate_tree", &json!({})).is_err());
        assert_eq!(
            parse_op(
                "session.compact",
                &json!({"custom_instructions": "keep the API notes"})
            )
            .unwrap(),
            SessionOp::Compact {
                custom_instructions: Some("keep the API notes".into())
            }
        );
        assert!(parse_op("session.compact", &json!({"custom_instructions": 3})).is_err());
    }
}
