//! How the runner stops waiting on hooks. Every request is raced against the abort of the run
//! it serves — the agent's current cancellation token, attached once the agent exists — and
//! when the run is aborted (`agent.abort`, a signal) the wait ends at once: the request future
//! is dropped, which withdraws the request (`cancel {id}` to the hook), and the kind's failure
//! outcome applies (the gate blocks; chains keep the value so far; the other kinds keep what
//! earlier hooks answered and ask no further hook).
//!
//! `session_shutdown` is the exception: it is asked exactly when a run has ended, often
//! because it was aborted, so it is bounded instead of cancelled — every subscriber at once,
//! for at most [`SESSION_SHUTDOWN_GRACE`] whatever deadline it asked for, and once pi is
//! exiting on a signal for at most [`HURRIED_GRACE`] more.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{answer, Endpoint, EndpointError, Runner};
use crate::agent::events::HookAnswer;
use crate::hooks::instance::HURRIED_GRACE;

/// The longest pi waits for `session_shutdown` replies, whatever the subscriptions ask for:
/// the same as a hook's grace after `shutdown`.
pub const SESSION_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The current run's cancellation token.
pub(super) type AbortSource = Box<dyn Fn() -> CancellationToken + Send + Sync>;

impl Runner {
    /// From now on every wait on a hook ends when the token `source` returns at that moment
    /// (the agent's current run) is cancelled.
    pub fn attach_abort(&self, source: impl Fn() -> CancellationToken + Send + Sync + 'static) {
        let _ = self.abort.set(Box::new(source));
    }

    /// The token of the run being served, if an agent is attached.
    pub(super) fn abort_token(&self) -> Option<CancellationToken> {
        self.abort.get().map(|source| source())
    }

    /// `h`'s answer to `event`, or `None` when `abort` fires first (the request is then
    /// withdrawn). An already aborted run asks nobody.
    pub(super) async fn ask(
        &self,
        abort: Option<&CancellationToken>,
        h: &Arc<dyn Endpoint>,
        event: &str,
        payload: Value,
        deadline: Duration,
    ) -> Option<Result<Value, EndpointError>> {
        let Some(abort) = abort else {
            return Some(h.request(event, payload, deadline).await);
        };
        tokio::select! {
            biased;
            _ = abort.cancelled() => None,
            r = h.request(event, payload, deadline) => Some(r),
        }
    }

    /// `session_shutdown` (see the module comment): every subscriber at once, failures
    /// reported.
    pub(super) async fn session_shutdown(&self, payload: Value) {
        let event = "session_shutdown";
        let subs = self.subscribed(event, None);
        if subs.is_empty() {
            return;
        }
        let asks = subs.iter().map(|(h, deadline)| {
            let payload = payload.clone();
            let deadline = (*deadline).min(SESSION_SHUTDOWN_GRACE);
            async move { (h.name(), h.request(event, payload, deadline).await) }
        });
        let all = futures_util::future::join_all(asks);
        tokio::pin!(all);
        let answers = match self.abort_token() {
            None => all.await,
            Some(abort) => tokio::select! {
                r = &mut all => r,
                _ = abort.cancelled() => match tokio::time::timeout(HURRIED_GRACE, &mut all).await {
                    Ok(r) => r,
                    Err(_) => {
                        tracing::info!(event, "pi is exiting on a signal: hooks not waited for");
                        return;
                    }
                },
            },
        };
        for (name, r) in answers {
            if let Err(e) = r {
                self.report_error(&name, event, &e);
            }
        }
    }
}

/// The answer recorded for the hook whose reply the abort made pi stop waiting for.
pub(super) fn aborted(hook: &str, latency_us: u64) -> HookAnswer {
    let mut a = answer(hook, "error", latency_us);
    a.reason = Some(format!(
        "the run was aborted before hook {hook} answered; its request was cancelled"
    ));
    a
}
