//! What the host does with each frame a running hook writes: a `reply` completes its request,
//! `progress` goes to its tool call, a `log` is recorded within the hook's per-second budget,
//! a malformed message fails only what it answers, and a `call` is served in a task of its
//! own — holding one of the hook's call slots and its payload until it has answered (see
//! `supervisor` for the backpressure this gives), at the nesting depth the host derives for it
//! (see `limits`).

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;

use super::conn::{Conn, Delivery};
use super::limits::{at_depth, in_scope, CallScope};
use super::{lock, HookErrorKind, Notice, RequestError, Shared};
use crate::hooks::framing::Incoming;
use crate::hooks::protocol::{Call, CallError, CallResult, HookMessage, HostMessage, Log};
use crate::hooks::subscribe::Change;
use crate::hooks::ui::is_dialog;

/// Records a `log` frame, within the hook's per-second budget; past it frames are counted and
/// reported as one line when the next second begins.
pub(super) fn forward_log(shared: &Shared, hook: &str, log: Log) {
    let (admit, dropped) = lock(&shared.limits.logs).admit(std::time::Instant::now());
    if let Some(n) = dropped {
        log_dropped(shared, hook, n);
    }
    if !admit {
        return;
    }
    match log.level.as_str() {
        "error" => tracing::error!(target: "pi::hooks::log", hook, "{}", log.message),
        "warn" => tracing::warn!(target: "pi::hooks::log", hook, "{}", log.message),
        "debug" => tracing::debug!(target: "pi::hooks::log", hook, "{}", log.message),
        _ => tracing::info!(target: "pi::hooks::log", hook, "{}", log.message),
    }
    shared.notice(Notice::Log {
        hook: hook.to_string(),
        level: log.level,
        message: log.message,
    });
}

/// The summary of `log` frames dropped since the last one, when a generation ends.
pub(super) fn report_dropped_logs(shared: &Shared, hook: &str) {
    let n = lock(&shared.limits.logs).take_dropped();
    if n > 0 {
        log_dropped(shared, hook, n);
    }
}

fn log_dropped(shared: &Shared, hook: &str, n: u64) {
    let message = format!(
        "… {n} log frames dropped (more than {} per second)",
        shared.ctx.supervision.logs_per_sec
    );
    tracing::warn!(target: "pi::hooks::log", hook, "{message}");
    shared.notice(Notice::Log {
        hook: hook.to_string(),
        level: "warn".into(),
        message,
    });
}

/// Whether a fire-and-forget `ui.*` call is within the hook's per-second budget. Past it the
/// call is refused (`failed`, naming the budget), so a hook cannot flood the user's screen or
/// an RPC client's stdout; the count refused in a second is logged once the next begins.
fn admit_ui_update(shared: &Shared, hook: &str, method: &str) -> Result<(), CallError> {
    let (admit, dropped) = lock(&shared.limits.ui_updates).admit(std::time::Instant::now());
    let per_sec = shared.ctx.supervision.logs_per_sec;
    if let Some(n) = dropped {
        tracing::warn!(
            hook,
            "{n} ui calls refused (more than {per_sec} per second)"
        );
    }
    if admit {
        return Ok(());
    }
    Err(CallError {
        code: "failed".into(),
        message: format!(
            "{method} refused: hook {hook} made more than {per_sec} fire-and-forget ui calls \
             in one second"
        ),
    })
}

/// What a call holds while it is served: one of the hook's call slots, and its share of the
/// payload budget (see `conn`).
pub(super) struct CallHold {
    _slot: OwnedSemaphorePermit,
    _payload: OwnedSemaphorePermit,
}

impl CallHold {
    pub(super) fn new(slot: OwnedSemaphorePermit, payload: OwnedSemaphorePermit) -> CallHold {
        CallHold {
            _slot: slot,
            _payload: payload,
        }
    }
}

/// Handles one frame. A `call` is served only with its hold (`hold`), which its task keeps
/// until it has answered; without one the call is dropped (only after the hook exited).
pub(super) fn dispatch(
    shared: &Arc<Shared>,
    conn: &Arc<Conn>,
    incoming: Incoming,
    hold: Option<CallHold>,
) {
    let hook = &conn.hook;
    match incoming {
        Incoming::Message(HookMessage::Reply(reply)) => {
            let id = reply.id;
            match conn.deliver(reply) {
                Delivery::Delivered => {}
                Delivery::Late => {
                    tracing::debug!(hook = %hook, id, "late reply to a cancelled request dropped")
                }
                Delivery::Unknown => shared.notice_error(
                    HookErrorKind::UnknownId,
                    format!("hook {hook} replied to unknown request id {id}; ignored"),
                ),
            }
        }
        Incoming::Message(HookMessage::Progress(p)) => {
            let id = p.id;
            if !conn.progress(p) {
                tracing::debug!(hook = %hook, id, "progress for no running tool call dropped");
            }
        }
        Incoming::Message(HookMessage::Call(call)) => match hold {
            Some(hold) => serve_call(shared, conn, call, hold),
            None => tracing::debug!(hook = %hook, id = call.id, "call from an exited hook dropped"),
        },
        Incoming::Message(HookMessage::CallCancel { id }) => {
            if !conn.cancel_call(id) {
                tracing::debug!(hook = %hook, id, "call_cancel for no call being served ignored");
            }
        }
        Incoming::Message(HookMessage::Log(log)) => forward_log(shared, hook, log),
        Incoming::Message(HookMessage::Register(_)) => {
            tracing::warn!(hook = %hook, "`register` after the handshake ignored")
        }
        Incoming::Message(HookMessage::Subscribe(s)) => {
            super::subscriptions::change(shared, conn, s.id, Change::Subscribe(s.subscriptions))
        }
        Incoming::Message(HookMessage::Unsubscribe(u)) => {
            super::subscriptions::change(shared, conn, u.id, Change::Unsubscribe(u.events))
        }
        Incoming::Unrecognized { value, reason } => {
            unrecognized(shared, conn, &value, reason);
        }
    }
}

/// A well-framed object that is not a valid message: fails the one request it answers, if
/// any; never the process.
fn unrecognized(shared: &Arc<Shared>, conn: &Arc<Conn>, value: &Value, reason: String) {
    let hook = &conn.hook;
    let ty = Incoming::unrecognized_type(value);
    let id = Incoming::unrecognized_id(value);
    match (ty, id) {
        (Some("reply"), Some(id)) => {
            let err = RequestError::BadReply {
                hook: hook.clone(),
                detail: reason,
            };
            if !conn.fail(id, err) && !conn.is_abandoned(id) {
                shared.notice_error(
                    HookErrorKind::UnknownId,
                    format!("hook {hook} sent a malformed reply to unknown request id {id}"),
                );
            }
        }
        (Some("call"), Some(id)) => {
            let _ = conn.send(&HostMessage::Result(CallResult {
                id,
                value: None,
                error: Some(CallError {
                    code: "invalid_params".into(),
                    message: format!("malformed call: {reason}"),
                }),
            }));
        }
        (Some(t @ ("subscribe" | "unsubscribe")), id) => {
            let message = format!("malformed `{t}`: {reason}; the subscriptions did not change");
            shared.notice_error(
                HookErrorKind::BadSubscription,
                format!("hook {hook}: {message}"),
            );
            if let Some(id) = id {
                let _ = conn.send(&HostMessage::Result(CallResult {
                    id,
                    value: None,
                    error: Some(CallError {
                        code: "invalid_params".into(),
                        message,
                    }),
                }));
            }
        }
        (Some(t @ ("register" | "reply" | "progress" | "log")), _) => shared.notice_error(
            HookErrorKind::BadReply,
            format!("hook {hook} sent a malformed `{t}` message: {reason}; ignored"),
        ),
        (Some(t), _) => shared.notice_error(
            HookErrorKind::Unsupported,
            format!("hook {hook} sent an unknown message type `{t}`; ignored"),
        ),
        (None, _) => shared.notice_error(
            HookErrorKind::Unsupported,
            format!("hook {hook} sent a message without a `type`; ignored"),
        ),
    }
}

/// Serves one `call` from the hook in its own task, so a slow host call (a UI prompt) never
/// stops the reader. Time spent in `ui.*` calls pauses request deadlines; a dialog is answered
/// as dismissed once nobody waits for it (the hook is being stopped, or the requests it could
/// serve were withdrawn), so none outlives its purpose; fire-and-forget `ui.*` calls are held to
/// a per-second budget. The task keeps `hold` until it has answered, and runs at the nesting
/// depth of the call (see `limits`); a `tools.execute` of the hook's own tool reserves that
/// depth at once, since its `tool_execute` will only be sent later, by the task.
fn serve_call(shared: &Arc<Shared>, conn: &Arc<Conn>, call: Call, hold: CallHold) {
    // Served from the providers every hook shares, as during the handshake (where they
    // belong); after start-up they answer `unavailable`.
    if call.method.starts_with("provider.") {
        let _ = conn.send(&super::supervisor::provider_call(shared, call));
        return;
    }
    let handler = shared.handler.clone();
    let depth = conn.tool_nesting().saturating_add(1);
    let own_tool = call.method == "tools.execute"
        && call
            .params
            .get("tool")
            .and_then(Value::as_str)
            .is_some_and(|t| {
                lock(&shared.live)
                    .registration
                    .register
                    .tools
                    .iter()
                    .any(|d| d.name == t)
            });
    let reservation = own_tool.then(|| conn.reserve_nesting(depth));
    let progress_conn = Arc::downgrade(conn);
    let call_id = call.id;
    let scope = CallScope {
        process_ended: conn.dead.clone(),
        serving: conn.tool_call_ids(),
        withdrawn: conn.call_begin(call.id),
        // Advisory and droppable (a notification): the call's result is what counts.
        progress: Some(super::ProgressSink::new(move |event| {
            if let Some(c) = progress_conn.upgrade() {
                let msg = HostMessage::CallProgress(crate::hooks::protocol::CallProgress {
                    id: call_id,
                    event,
                });
                c.send_notification(&msg);
            }
        })),
    };
    let conn = conn.clone();
    let shared = shared.clone();
    tokio::spawn(at_depth(
        depth,
        in_scope(scope, async move {
            let _hold = hold;
            let _reservation = reservation;
            let Call { id, method, params } = call;
            // A dialog waits on the user and a compaction or branch summary on the model: neither
            // is the hook being slow, so its request deadlines pause meanwhile.
            let paused = method.starts_with("ui.")
                || matches!(
                    method.as_str(),
                    "session.compact" | "session.navigate_tree" | "session.fork" | "session.clone"
                );
            if method.starts_with("ui.") && !is_dialog(&method) {
                if let Err(e) = admit_ui_update(&shared, &conn.hook, &method) {
                    conn.call_done(id);
                    let _ = conn.send(&HostMessage::Result(CallResult {
                        id,
                        value: None,
                        error: Some(e),
                    }));
                    return;
                }
            }
            let ui = paused.then(|| conn.ui_begin());
            // Nothing waits on a dialog forever: it is dismissed when the hook is being stopped or
            // every request it could serve was withdrawn (see `instance::dialogs`).
            let dialog = is_dialog(&method).then(|| conn.dialog_begin());
            let dismissed = async {
                match &dialog {
                    Some(d) => tokio::select! {
                        _ = d.dismiss.cancelled() => {}
                        _ = shared.stop.cancelled() => {}
                    },
                    None => std::future::pending().await,
                }
            };
            let res = tokio::select! {
                r = handler.call(&conn.hook, &method, params) => r,
                // The process is gone: nobody to answer.
                _ = conn.dead.cancelled() => return,
                _ = dismissed => {
                    tracing::debug!(hook = %conn.hook, method, "dialog abandoned; dismissed");
                    Ok(crate::hooks::ui::dismissed(&method))
                }
            };
            drop(dialog);
            drop(ui);
            conn.call_done(id);
            let msg = match res {
                Ok(v) => CallResult {
                    id,
                    value: Some(v),
                    error: None,
                },
                Err(e) => CallResult {
                    id,
                    value: None,
                    error: Some(e),
                },
            };
            if let Err(e) = conn.send(&HostMessage::Result(msg)) {
                let _ = conn.send(&HostMessage::Result(CallResult {
                    id,
                    value: None,
                    error: Some(CallError {
                        code: "failed".into(),
                        message: format!("the result cannot be sent: {e}"),
                    }),
                }));
            }
        }),
    ));
}
