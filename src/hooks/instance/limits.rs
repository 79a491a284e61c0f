//! What one hook may claim of pi beyond a single request (SPEC 4.9), and how pi takes it back
//! in a hurry: the budgets for its `log` frames and its fire-and-forget `ui.*` calls (each
//! becomes a line on stderr or an RPC request the client must read), the process group a forced exit kills, the
//! flag that cuts its shutdown graces once a signal asked pi to exit — and the nesting depth
//! of `tools.execute`, which follows the host's own work rather than any one hook.
//!
//! **Nesting depth.** A hook's `call` carries no trustworthy link to the request it serves
//! (`parent_call_id` is optional and could name anything), so the host derives the depth
//! itself: a call runs at depth `n + 1`, where `n` is the deepest `tool_execute` that hook has
//! in flight (the model's own tool calls are depth 0, a `tool_execute` sent while serving a
//! depth-`d` call is depth `d`). The depth is carried through the host's work for that call as
//! a task-local value — everything a host call does (gates, the tool, `tool_result`) runs in
//! the one task serving it — so a `tool_execute` sent on its behalf is tagged without any
//! signature in between having to pass it along.

use std::future::Future;
use std::sync::Mutex;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use crate::hooks::rate_limit::RateLimit;
use crate::watchdog::ProcessGroup;

tokio::task_local! {
    static NESTING: u32;
    static SCOPE: CallScope;
}

/// What the host knows about the hook call being served by the current task: whether the
/// hook's process still runs, and which tool calls its `tool_execute`s in flight run (the
/// calls it may be serving).
#[derive(Debug, Clone, Default)]
pub struct CallScope {
    /// Cancelled when the process generation that made the call ends.
    pub process_ended: CancellationToken,
    /// The tool calls of the hook's `tool_execute`s in flight as the call arrived.
    pub serving: Vec<String>,
    /// Cancelled by the hook's `call_cancel` for this call (and when its process ends).
    pub withdrawn: CancellationToken,
    /// Where the call's partial output goes (`call_progress` frames); none outside a hook.
    pub progress: Option<ProgressSink>,
}

/// Sends `call_progress {id, event}` for the call being served.
#[derive(Clone)]
pub struct ProgressSink(std::sync::Arc<dyn Fn(serde_json::Value) + Send + Sync>);

impl ProgressSink {
    pub fn new(f: impl Fn(serde_json::Value) + Send + Sync + 'static) -> Self {
        ProgressSink(std::sync::Arc::new(f))
    }

    pub fn send(&self, event: serde_json::Value) {
        (self.0)(event)
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// The scope of the host call being served by the current task; `None` outside any.
pub fn call_scope() -> Option<CallScope> {
    SCOPE.try_with(Clone::clone).ok()
}

/// Runs `f` (the host's work for one call) within `scope`.
pub(super) async fn in_scope<F: Future>(scope: CallScope, f: F) -> F::Output {
    SCOPE.scope(scope, f).await
}

/// The nesting depth of the host call being served by the current task; 0 outside any (the
/// agent's own loop).
pub fn nesting_depth() -> u32 {
    NESTING.try_with(|d| *d).unwrap_or(0)
}

/// Runs `f` (the host's work for one call) at nesting depth `depth`.
pub(super) async fn at_depth<F: Future>(depth: u32, f: F) -> F::Output {
    NESTING.scope(depth, f).await
}

/// Per-instance bounds, shared by the instance and its supervisor.
pub(super) struct Limits {
    /// Cancelled when a signal asked pi to exit: shutdown graces shrink to `hurried_grace`.
    pub(super) hurry: CancellationToken,
    /// The running generation's process group, for a forced exit.
    pub(super) pgid: Mutex<Option<ProcessGroup>>,
    /// `log` frames per second.
    pub(super) logs: Mutex<RateLimit>,
    /// Fire-and-forget `ui.*` calls per second (the same budget as `log` frames).
    pub(super) ui_updates: Mutex<RateLimit>,
}

impl Limits {
    pub(super) fn new(logs_per_sec: u32) -> Self {
        Limits {
            hurry: CancellationToken::new(),
            pgid: Mutex::new(None),
            logs: Mutex::new(RateLimit::new(logs_per_sec, Instant::now())),
            ui_updates: Mutex::new(RateLimit::new(logs_per_sec, Instant::now())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn depth_is_zero_outside_a_host_call_and_scoped_inside() {
        assert_eq!(nesting_depth(), 0);
        let inner = at_depth(3, async { nesting_depth() }).await;
        assert_eq!(inner, 3);
        assert_eq!(nesting_depth(), 0);
    }
}
