//! Applying a running hook's `subscribe` / `unsubscribe` to its live subscription set
//! (`hooks::subscribe` decides what the new set is). It runs on the reader task, in frame
//! order, so a change the hook makes before replying to a request is in force by the time the
//! host reads that reply; the runner reads the set once per dispatch, so an event already
//! being dispatched is not affected.
//!
//! The hook hears the outcome: with an `id`, as `result {id, value: {subscriptions}}` or
//! `result {id, error: {code: "invalid_params", message}}`; a refused change is also reported
//! as a `hook_error` of kind `bad_subscription`, so it is visible without an `id` too.
//! Dynamic subscriptions live and die with the process: a restarted hook starts from its new
//! `register`.

use std::sync::Arc;

use super::conn::Conn;
use super::{lock, HookErrorKind, Shared};
use crate::hooks::protocol::{CallError, CallResult, HostMessage};
use crate::hooks::subscribe::{apply, describe, Change};

/// Applies `change` (atomically: all of it, or nothing) and tells the hook.
pub(super) fn change(shared: &Shared, conn: &Arc<Conn>, id: Option<u64>, change: Change) {
    let hook = conn.hook.clone();
    let outcome = {
        let mut live = lock(&shared.live);
        let reg = &live.registration;
        // A required hook's registered subscriptions are the administrator's policy.
        let pinned: Vec<String> = if shared.spec.required {
            reg.subscriptions_registered()
        } else {
            Vec::new()
        };
        match apply(
            &reg.subscriptions,
            &change,
            shared.spec.event_timeout,
            &pinned,
        ) {
            Ok((subs, notes)) => {
                let value = describe(&subs);
                live.registration.subscriptions = Arc::new(subs);
                Ok((value, notes))
            }
            Err(e) => Err(e),
        }
    };
    let result = match outcome {
        Ok((value, notes)) => {
            for note in notes {
                tracing::info!(hook = %hook, "{note}");
            }
            tracing::debug!(hook = %hook, now = %value, "{} applied", change.message());
            CallResult {
                id: id.unwrap_or_default(),
                value: Some(value),
                error: None,
            }
        }
        Err(e) => {
            let message = format!("{} refused: {e}", change.message());
            shared.notice_error(
                HookErrorKind::BadSubscription,
                format!("hook {hook}: {message}"),
            );
            CallResult {
                id: id.unwrap_or_default(),
                value: None,
                error: Some(CallError {
                    code: "invalid_params".into(),
                    message,
                }),
            }
        }
    };
    if id.is_some() {
        if let Err(e) = conn.send(&HostMessage::Result(result)) {
            tracing::debug!(hook = %hook, "the answer to {} not sent: {e}", change.message());
        }
    }
}
