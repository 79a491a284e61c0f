//! One supervised hook: [`HookInstance`] starts a hook process, performs the `hello` /
//! `register` handshake, sends it requests and notifications, serves its calls to the host,
//! and restarts it after a crash with backoff until it crash-loops into quarantine (SPEC 4.6).
//!
//! The runner (per-event semantics over all hooks) sits on top of this and only sees
//! `Result`s: every failure of a request comes back at once as a [`RequestError`] that names
//! the hook and says what happened, and never waits for a deadline when the process is already
//! known to be dead. Things that happen outside any request (a crash between events, a reply
//! to an unknown id, a restart, quarantine, the hook's `log` frames) arrive as [`Notice`]s.
//!
//! Every request is withdrawn (`cancel {id}`) the moment nobody waits for it any more — its
//! deadline passed, the run was aborted, or the caller's future was dropped — and a hook tool
//! runs at most the host's tool cap. Layout: `conn` is one process generation's connection
//! (writer task, pending requests, call slots, the `ui.*` deadline clock), with `dialogs`
//! tracking which of the hook's open dialogs still serve a request; `supervisor` spawns,
//! handshakes, reads, restarts and stops, and `dispatch` handles each frame read; `limits`
//! holds the per-hook bounds (log budget, nesting depth, the hurry of a signalled exit).

mod conn;
mod dialogs;
mod dispatch;
mod limits;
mod subscriptions;
mod supervisor;
#[cfg(test)]
mod tests;
mod types;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use self::conn::{Conn, Outstanding};
use self::limits::Limits;
pub use self::limits::{call_scope, nesting_depth, CallScope, ProgressSink};
use self::types::{fmt_tail, Latency};
pub use self::types::{
    CallHandler, HookErrorKind, HookState, HostContext, LatencyStats, Notice, RequestError,
    StartError, Supervision, HURRIED_GRACE, LATENCY_SAMPLES, TOOL_DEADLINE_CAP, TOOL_TIMEOUT_ENV,
};
use super::framing::FrameError;
use super::protocol::{CommandRequest, EventRequest, HostMessage, Progress, Register, ToolExecute};
use super::registration::{Registration, Subscriptions};
use super::spec::HookSpec;

/// What changes over the instance's life, under one lock.
struct Live {
    state: HookState,
    /// The current generation's checked `register` and its compiled subscriptions.
    registration: Registration,
    /// The current generation's connection; `None` unless `Running`.
    conn: Option<Arc<Conn>>,
}

/// Everything the instance and its supervisor task share.
struct Shared {
    spec: HookSpec,
    ctx: HostContext,
    handler: Arc<dyn CallHandler>,
    notices: mpsc::UnboundedSender<Notice>,
    live: Mutex<Live>,
    next_id: AtomicU64,
    restarts: AtomicU32,
    latency: Mutex<Latency>,
    /// Cancelled by `shutdown` (or drop): stop restarting, stop the process.
    stop: CancellationToken,
    stop_reason: Mutex<String>,
    /// Becomes `true` when the supervisor has finished (process group gone).
    stopped: watch::Sender<bool>,
    /// Why the last generation ended or the last restart failed; quoted when a required hook
    /// is not running.
    last_error: Mutex<Option<String>>,
    limits: Limits,
    /// Built by [`HookInstance::failed`]: no process ever ran, so it never registered what it
    /// would have gated.
    never_started: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No critical section panics; if one ever did, the data is still consistent enough to use.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    fn new(
        spec: HookSpec,
        ctx: HostContext,
        handler: Arc<dyn CallHandler>,
        notices: mpsc::UnboundedSender<Notice>,
        state: HookState,
    ) -> Arc<Shared> {
        let limits = Limits::new(ctx.supervision.logs_per_sec);
        Arc::new(Shared {
            spec,
            ctx,
            handler,
            notices,
            live: Mutex::new(Live {
                state,
                registration: Registration::none(),
                conn: None,
            }),
            next_id: AtomicU64::new(1),
            restarts: AtomicU32::new(0),
            latency: Mutex::new(Latency::default()),
            stop: CancellationToken::new(),
            stop_reason: Mutex::new(String::new()),
            stopped: watch::Sender::new(false),
            last_error: Mutex::new(None),
            limits,
            never_started: state == HookState::Quarantined,
        })
    }

    fn name(&self) -> String {
        self.name_from(&lock(&self.live))
    }

    fn notice(&self, n: Notice) {
        // Nobody listening is fine: notices are informational.
        let _ = self.notices.send(n);
    }

    fn notice_error(&self, kind: HookErrorKind, message: String) {
        tracing::warn!(hook = %self.name(), ?kind, "{message}");
        self.notice(Notice::Error {
            hook: self.name(),
            kind,
            message,
        });
    }

    /// Changes state (and drops the connection unless running), with a notice on change.
    fn set_state(&self, state: HookState, running: Option<(Registration, Arc<Conn>)>) {
        let changed = {
            let mut live = lock(&self.live);
            let changed = live.state != state;
            live.state = state;
            match running {
                Some((reg, conn)) => {
                    live.registration = reg;
                    live.conn = Some(conn);
                }
                None => live.conn = None,
            }
            changed
        };
        if changed {
            self.notice(Notice::State {
                hook: self.name(),
                state,
            });
        }
    }

    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
}

/// One supervised hook process (and its successors after restarts).
pub struct HookInstance {
    shared: Arc<Shared>,
}

impl HookInstance {
    /// Spawns the hook, sends `hello` and waits for `register` (within `spec.start_timeout`).
    /// On success the hook is `Running` and supervised until [`shutdown`](Self::shutdown).
    pub async fn start(
        spec: HookSpec,
        ctx: HostContext,
        handler: Arc<dyn CallHandler>,
        notices: mpsc::UnboundedSender<Notice>,
    ) -> Result<Arc<HookInstance>, StartError> {
        let shared = Shared::new(spec, ctx, handler, notices, HookState::Starting);
        shared.notice(Notice::State {
            hook: shared.spec.name.clone(),
            state: HookState::Starting,
        });
        let generation = match supervisor::start_generation(&shared).await {
            Ok(g) => g,
            Err(supervisor::StartFailure::Error(e)) => {
                shared.set_state(HookState::Stopped, None);
                return Err(e);
            }
            // Nothing can cancel `stop` before the instance exists; handled for completeness.
            Err(supervisor::StartFailure::Stopped) => {
                shared.set_state(HookState::Stopped, None);
                return Err(StartError::Exited {
                    hook: shared.spec.name.clone(),
                    status: "was stopped".into(),
                    code: None,
                    stderr: Vec::new(),
                });
            }
        };
        shared.set_state(
            HookState::Running,
            Some((generation.registration.clone(), generation.conn.clone())),
        );
        tokio::spawn(supervisor::supervise(shared.clone(), generation));
        Ok(Arc::new(HookInstance { shared }))
    }

    /// A hook that could not start, kept as a quarantined instance with no process: it
    /// subscribes to nothing, every request to it fails as not running, and `last_error`
    /// says why. Used for required hooks, whose absence must stay visible (`pi hooks`, the
    /// "policy degraded" refusals) rather than silently drop out of the loaded set, and for
    /// ordinary fail-closed hooks, whose gates must keep failing closed while pi runs.
    pub fn failed(
        spec: HookSpec,
        ctx: HostContext,
        handler: Arc<dyn CallHandler>,
        notices: mpsc::UnboundedSender<Notice>,
        error: &StartError,
    ) -> Arc<HookInstance> {
        let shared = Shared::new(spec, ctx, handler, notices, HookState::Quarantined);
        *lock(&shared.last_error) = Some(error.to_string());
        // There is no supervisor: the instance is stopped from the start.
        shared.stopped.send_replace(true);
        Arc::new(HookInstance { shared })
    }

    /// The registered name (the spec's name until the hook registers).
    pub fn name(&self) -> String {
        self.shared.name()
    }

    pub fn spec(&self) -> &HookSpec {
        &self.shared.spec
    }

    /// The current registration (after a restart, the new one).
    pub fn registration(&self) -> Register {
        lock(&self.shared.live).registration.register.clone()
    }

    /// The size of the current registration's tools as JSON (their share of the hook's tool
    /// budget, `hooks::budget`).
    pub fn registered_tool_bytes(&self) -> usize {
        lock(&self.shared.live).registration.tool_bytes
    }

    /// The current registration's subscriptions, compiled when it arrived: which events, for
    /// which tools, with which (capped) deadline.
    pub fn subscriptions(&self) -> Arc<Subscriptions> {
        lock(&self.shared.live).registration.subscriptions.clone()
    }

    pub fn state(&self) -> HookState {
        lock(&self.shared.live).state
    }

    pub fn latency(&self) -> LatencyStats {
        lock(&self.shared.latency).stats()
    }

    /// Why the hook last crashed or failed to restart, if it ever did.
    /// Whether this is a [`HookInstance::failed`] instance: its process never started.
    pub fn never_started(&self) -> bool {
        self.shared.never_started
    }

    pub fn last_error(&self) -> Option<String> {
        lock(&self.shared.last_error).clone()
    }

    /// How many times the process has been re-spawned.
    pub fn restarts(&self) -> u32 {
        self.shared.restarts.load(Ordering::Relaxed)
    }

    fn conn(&self) -> Result<Arc<Conn>, RequestError> {
        let live = lock(&self.shared.live);
        match (&live.conn, live.state) {
            (Some(c), HookState::Running) => Ok(c.clone()),
            (_, state) => Err(RequestError::NotRunning {
                hook: self.shared.name_from(&live),
                state,
            }),
        }
    }

    /// Sends `msg` (built with a fresh id) and registers its waiter; the common part of every
    /// request kind. `nesting` is a `tool_execute`'s depth.
    fn send_request(
        &self,
        progress: Option<mpsc::UnboundedSender<Progress>>,
        nesting: Option<conn::ToolRequest>,
        build: impl FnOnce(u64) -> HostMessage,
    ) -> Result<(Outstanding, conn::PendingReply), RequestError> {
        let conn = self.conn()?;
        let id = self.shared.next_id();
        let rx = conn
            .wait_for(id, progress, nesting)
            .ok_or_else(|| RequestError::NotRunning {
                hook: conn.hook.clone(),
                state: self.state(),
            })?;
        if let Err(e) = conn.send(&build(id)) {
            conn.abandon(id);
            return Err(match e {
                FrameError::TooLarge { max } => RequestError::TooLarge {
                    hook: conn.hook.clone(),
                    max,
                },
                other => RequestError::Framing {
                    hook: conn.hook.clone(),
                    detail: other.to_string(),
                },
            });
        }
        Ok((Outstanding::new(conn, id), rx))
    }

    /// Waits for a reply within `deadline` (not counting time spent on the hook's `ui.*`
    /// calls). On expiry — or when this future is dropped first — the request is withdrawn:
    /// `cancel` is sent and the id forgotten.
    async fn await_reply(
        &self,
        sent: Outstanding,
        mut rx: conn::PendingReply,
        deadline: Duration,
    ) -> Result<Value, RequestError> {
        let conn = sent.conn.clone();
        match conn.wait_reply(&mut rx, deadline).await {
            Some(r) => {
                sent.settle();
                into_value(r, &conn.hook)
            }
            None => {
                drop(sent);
                Err(RequestError::Timeout {
                    hook: conn.hook.clone(),
                    after: deadline,
                })
            }
        }
    }

    /// Sends the event `event` and waits for its `reply`: `result` → `Ok(result)` (`Null` when
    /// absent), `error` → [`RequestError::ErrorReply`]. Dropping the future withdraws the
    /// request.
    pub async fn request(
        &self,
        event: &str,
        payload: Value,
        deadline: Duration,
    ) -> Result<Value, RequestError> {
        let started = tokio::time::Instant::now();
        let (sent, rx) = self.send_request(None, None, |id| {
            HostMessage::Event(EventRequest {
                id: Some(id),
                name: event.to_string(),
                payload,
                deadline_ms: Some(millis(deadline)),
            })
        })?;
        let r = self.await_reply(sent, rx, deadline).await;
        if !matches!(
            r,
            Err(RequestError::Timeout { .. }
                | RequestError::Crashed { .. }
                | RequestError::Framing { .. })
        ) {
            lock(&self.shared.latency).record(started.elapsed());
        }
        r
    }

    /// Sends the event `event` without an id (no reply). Never blocks; dropped when the hook
    /// is not running or has stopped reading its stdin.
    pub fn notify(&self, event: &str, payload: Value) {
        let Ok(conn) = self.conn() else { return };
        let msg = HostMessage::Event(EventRequest {
            id: None,
            name: event.to_string(),
            payload,
            deadline_ms: None,
        });
        if !conn.send_notification(&msg) {
            tracing::debug!(hook = %conn.hook, event, "notification dropped: hook not reading");
        }
    }

    /// Runs a tool the hook registered; `progress` frames are forwarded. It runs until its
    /// reply, until `cancel` fires ([`RequestError::Cancelled`]), or until the host's tool cap
    /// ([`Supervision::tool_deadline`], sent as `deadline_ms`) passes
    /// ([`RequestError::Timeout`]); in both last cases the hook gets `cancel` and its reply is
    /// not waited for. Time the hook spends on its own `ui.*` calls does not count.
    pub async fn execute_tool(
        &self,
        tool: &str,
        call_id: &str,
        args: Value,
        cancel: CancellationToken,
        progress: mpsc::UnboundedSender<Progress>,
    ) -> Result<Value, RequestError> {
        let cap = self.shared.ctx.supervision.tool_deadline;
        let request = conn::ToolRequest {
            depth: nesting_depth(),
            call_id: call_id.to_string(),
        };
        let (sent, mut rx) = self.send_request(Some(progress), Some(request), |id| {
            HostMessage::ToolExecute(ToolExecute {
                id,
                tool: tool.to_string(),
                call_id: call_id.to_string(),
                arguments: args,
                deadline_ms: Some(millis(cap)),
            })
        })?;
        let conn = sent.conn.clone();
        tokio::select! {
            r = conn.wait_reply(&mut rx, cap) => match r {
                Some(r) => {
                    sent.settle();
                    into_value(r, &conn.hook)
                }
                None => Err(RequestError::Timeout { hook: conn.hook.clone(), after: cap }),
            },
            _ = cancel.cancelled() => Err(RequestError::Cancelled { hook: conn.hook.clone() }),
        }
    }

    /// Runs a command the hook registered (`/name args`). Dropping the future withdraws it.
    pub async fn command(
        &self,
        name: &str,
        args: &str,
        deadline: Duration,
    ) -> Result<Value, RequestError> {
        let (sent, rx) = self.send_request(None, None, |id| {
            HostMessage::Command(CommandRequest {
                id,
                name: name.to_string(),
                args: args.to_string(),
                deadline_ms: Some(millis(deadline)),
            })
        })?;
        self.await_reply(sent, rx, deadline).await
    }

    /// Asks for completions of `/name prefix…` (a command registered with `completions`).
    pub async fn complete(
        &self,
        name: &str,
        prefix: &str,
        deadline: Duration,
    ) -> Result<Value, RequestError> {
        let (sent, rx) = self.send_request(None, None, |id| {
            HostMessage::Complete(crate::hooks::protocol::CompleteRequest {
                id,
                name: name.to_string(),
                prefix: prefix.to_string(),
            })
        })?;
        self.await_reply(sent, rx, deadline).await
    }

    /// Cuts the shutdown graces to [`Supervision::hurried_grace`] from now on (also for a
    /// shutdown already under way): a signal asked pi to exit.
    pub fn hurry(&self) {
        self.shared.limits.hurry.cancel();
    }

    /// SIGKILLs the running process group at once, without any protocol: for an exit that
    /// cannot wait (a second signal). Safe to call at any time.
    pub fn kill_now(&self) {
        if let Some(pgid) = *lock(&self.shared.limits.pgid) {
            pgid.signal(nix::sys::signal::Signal::SIGKILL);
        }
    }

    /// Stops the hook (SPEC 4.6): `shutdown {reason}`, stdin closed, a grace period, SIGTERM
    /// to the group, then SIGKILL to the group, and reaping. When this returns no process of
    /// the hook's group is alive. Idempotent; concurrent callers all wait for the end.
    pub async fn shutdown(&self, reason: &str) {
        {
            let mut r = lock(&self.shared.stop_reason);
            if r.is_empty() {
                *r = reason.to_string();
            }
        }
        self.shared.stop.cancel();
        let mut stopped = self.shared.stopped.subscribe();
        // `wait_for` fails only if the sender is gone, which means the supervisor is gone too.
        let _ = stopped.wait_for(|s| *s).await;
    }
}

impl Shared {
    fn name_from(&self, live: &Live) -> String {
        if live.registration.register.name.is_empty() {
            self.spec.name.clone()
        } else {
            live.registration.register.name.clone()
        }
    }
}

impl Drop for HookInstance {
    fn drop(&mut self) {
        // Without an explicit shutdown the supervisor still stops the process group (in the
        // background, if the runtime is still running).
        {
            let mut r = lock(&self.shared.stop_reason);
            if r.is_empty() {
                *r = "host dropped the hook".into();
            }
        }
        self.shared.stop.cancel();
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn into_value(r: conn::ReplyResult, hook: &str) -> Result<Value, RequestError> {
    let reply = r?;
    match (reply.error, reply.result) {
        (Some(message), _) => Err(RequestError::ErrorReply {
            hook: hook.to_string(),
            message,
        }),
        (None, result) => Ok(result.unwrap_or(Value::Null)),
    }
}
