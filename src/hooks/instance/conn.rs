//! One process generation's connection state: the writer queue and its task, the map of
//! requests waiting for a `reply` (with the nesting depth of each `tool_execute`), the slots
//! and the payload budget that bound the hook's calls in flight, and the clock that pauses request deadlines while
//! the host serves the hook's own `ui.*` calls.
//!
//! A request is [`Outstanding`] from the moment it is sent until its reply is taken: whoever
//! gives up on it — a deadline, an abort, a caller whose future was dropped — withdraws it by
//! dropping the guard, which forgets the id and sends `cancel {id}`, so no path can leave a
//! hook working on a request nobody waits for.
//!
//! Every request that ends also ends the dialogs that were serving only it (see `dialogs`).
//!
//! A new `Conn` is made for every (re)started process, so a dying generation fails exactly its
//! own in-flight requests, and late messages from an old process can never complete a request
//! sent to its successor.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot, watch, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::dialogs::Dialogs;
use super::RequestError;
use crate::hooks::framing::{encode, FrameError, FrameWriter};
use crate::hooks::process::HookStdin;
use crate::hooks::protocol::{HostMessage, Progress, Reply};

/// Notifications beyond this many unwritten frames are dropped: a hook that stops reading its
/// stdin must not make the host's memory grow without bound.
const NOTIFY_QUEUE_LIMIT: usize = 1024;
/// How many abandoned (timed-out or cancelled) ids are remembered, so their late replies are
/// recognised as late rather than reported as replies to unknown ids.
const ABANDONED_MEMORY: usize = 256;
/// A hook's calls served at once (SPEC 4.9). With every slot taken the host reads nothing more
/// from that hook until a call finishes: its stdout pipe fills and its writes block.
pub(super) const MAX_CALLS_IN_FLIGHT: usize = 64;
/// The payload (frame bytes) a hook's calls being served may hold at once: the frame limit.
/// With it taken the host reads nothing more from that hook until a call finishes, as with the
/// slots, so however large its calls, what they hold in pi stays bounded. A call of any size
/// the frame limit allows is admitted once the calls before it are done.
pub(super) const CALL_BYTES_IN_FLIGHT: usize = 16 * 1024 * 1024;
/// The granule of [`CALL_BYTES_IN_FLIGHT`]: every call holds at least one.
const CALL_BYTES_UNIT: usize = 64 * 1024;
const CALL_BYTE_UNITS: usize = CALL_BYTES_IN_FLIGHT / CALL_BYTES_UNIT;

/// The units of the payload budget a call of `len` frame bytes holds.
pub(super) fn call_units(len: usize) -> u32 {
    let units = len.div_ceil(CALL_BYTES_UNIT).clamp(1, CALL_BYTE_UNITS);
    u32::try_from(units).unwrap_or(u32::MAX)
}

pub(super) type ReplyResult = Result<Reply, RequestError>;
pub(super) type PendingReply = oneshot::Receiver<ReplyResult>;

/// How long a waiter polls for its reply before it sleeps (measured: a Rust gate hook's round
/// trip falls from about 95 to 35 µs; a Python hook, which takes longer, is unaffected).
const REPLY_SPIN: std::time::Duration = std::time::Duration::from_micros(50);

enum Outgoing {
    Frame(Bytes),
    /// Flush, then close the hook's stdin (its signal to exit).
    Close,
}

/// What the host knows of a `tool_execute` in flight.
#[derive(Debug, Clone)]
pub(super) struct ToolRequest {
    pub(super) depth: u32,
    pub(super) call_id: String,
}

struct Waiter {
    tx: oneshot::Sender<ReplyResult>,
    progress: Option<mpsc::UnboundedSender<Progress>>,
    /// For a `tool_execute`: the nesting depth it runs at (0 for the model's own call) and
    /// the tool call it runs.
    nesting: Option<ToolRequest>,
}

#[derive(Default)]
struct Pending {
    /// Set when the generation died: no new request may wait on it.
    closed: bool,
    map: HashMap<u64, Waiter>,
    abandoned: VecDeque<u64>,
    /// Depths of the hook's calls of its own tools that are still on their way to becoming a
    /// `tool_execute` (depth → how many).
    reserved: BTreeMap<u32, usize>,
    /// The hook's open dialogs and the requests each may serve.
    dialogs: Dialogs,
}

/// What became of a `reply`.
pub(super) enum Delivery {
    Delivered,
    /// The request had timed out or been cancelled; the reply is dropped.
    Late,
    Unknown,
}

/// Time spent serving `ui.*` calls, which does not count against request deadlines.
#[derive(Debug, Clone, Copy, Default)]
struct UiClock {
    inflight: usize,
    paused_total: Duration,
    paused_since: Option<Instant>,
}

impl UiClock {
    fn paused(&self, now: Instant) -> Duration {
        self.paused_total
            + self
                .paused_since
                .map(|s| now.saturating_duration_since(s))
                .unwrap_or_default()
    }
}

pub(super) struct Conn {
    /// The registered name, for error messages.
    pub(super) hook: String,
    out: mpsc::UnboundedSender<Outgoing>,
    queued: Arc<AtomicUsize>,
    pending: Mutex<Pending>,
    ui: watch::Sender<UiClock>,
    /// Cancelled when this generation ends; tasks serving the hook's calls stop with it.
    pub(super) dead: CancellationToken,
    /// Cancelled by the writer task when a write fails (broken pipe): the process is gone.
    pub(super) write_failed: CancellationToken,
    /// One permit per call being served ([`MAX_CALLS_IN_FLIGHT`]).
    pub(super) call_slots: Arc<Semaphore>,
    /// The payload budget of the calls being served ([`CALL_BYTES_IN_FLIGHT`], in units).
    pub(super) call_bytes: Arc<Semaphore>,
    /// The hook's calls being served, by id: cancelled by its `call_cancel`.
    calls: Mutex<HashMap<u64, CancellationToken>>,
    max_frame: usize,
}

impl Conn {
    /// Makes the connection and starts its single writer task.
    pub(super) fn start(
        hook: String,
        writer: FrameWriter<HookStdin>,
        max_frame: usize,
    ) -> Arc<Conn> {
        let (out, rx) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let write_failed = CancellationToken::new();
        tokio::spawn(write_loop(
            writer,
            rx,
            queued.clone(),
            write_failed.clone(),
            hook.clone(),
        ));
        Arc::new(Conn {
            hook,
            out,
            queued,
            pending: Mutex::new(Pending::default()),
            ui: watch::Sender::new(UiClock::default()),
            dead: CancellationToken::new(),
            write_failed,
            call_slots: Arc::new(Semaphore::new(MAX_CALLS_IN_FLIGHT)),
            call_bytes: Arc::new(Semaphore::new(CALL_BYTE_UNITS)),
            calls: Mutex::new(HashMap::new()),
            max_frame,
        })
    }

    /// Records the hook's call `id` as being served; the token fires on its `call_cancel`.
    /// [`call_done`](Self::call_done) forgets it.
    pub(super) fn call_begin(&self, id: u64) -> CancellationToken {
        let token = self.dead.child_token();
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        calls.insert(id, token.clone());
        token
    }

    pub(super) fn call_done(&self, id: u64) {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        calls.remove(&id);
    }

    /// The hook's `call_cancel {id}`: whether a call of that id was being served.
    pub(super) fn cancel_call(&self, id: u64) -> bool {
        let calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        calls.get(&id).map(CancellationToken::cancel).is_some()
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        // Critical sections never panic; recover from poisoning rather than propagate it.
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a message for the writer task. Never blocks. Fails only if the message is larger
    /// than the frame limit; a dead writer is not an error here (the generation's end fails
    /// every waiter).
    pub(super) fn send(&self, msg: &HostMessage) -> Result<(), FrameError> {
        let frame = encode(msg, self.max_frame)?;
        self.queued.fetch_add(1, Ordering::Relaxed);
        if self.out.send(Outgoing::Frame(frame)).is_err() {
            self.queued.fetch_sub(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Queues a notification unless the hook is not keeping up; returns whether it was queued.
    pub(super) fn send_notification(&self, msg: &HostMessage) -> bool {
        if self.queued.load(Ordering::Relaxed) >= NOTIFY_QUEUE_LIMIT {
            return false;
        }
        self.send(msg).is_ok()
    }

    /// Asks the writer to flush and close stdin after everything already queued.
    pub(super) fn close_stdin(&self) {
        let _ = self.out.send(Outgoing::Close);
    }

    /// Registers a waiter for `id` before its request is sent; `nesting` is the depth of a
    /// `tool_execute`.
    pub(super) fn wait_for(
        &self,
        id: u64,
        progress: Option<mpsc::UnboundedSender<Progress>>,
        nesting: Option<ToolRequest>,
    ) -> Option<PendingReply> {
        let mut p = self.pending();
        if p.closed {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        p.map.insert(
            id,
            Waiter {
                tx,
                progress,
                nesting,
            },
        );
        Some(rx)
    }

    /// Forgets a request that timed out, was cancelled or could not be sent. Returns whether
    /// it was still waiting (not answered, and its generation not over).
    pub(super) fn abandon(&self, id: u64) -> bool {
        let mut p = self.pending();
        if p.map.remove(&id).is_none() {
            return false;
        }
        p.dialogs.request_ended(id, true);
        if p.abandoned.len() >= ABANDONED_MEMORY {
            p.abandoned.pop_front();
        }
        p.abandoned.push_back(id);
        true
    }

    /// Gives up on request `id`: forgets it and, if the hook may still be working on it, tells
    /// the hook with `cancel {id}`.
    pub(super) fn withdraw(&self, id: u64) {
        if self.abandon(id) {
            let _ = self.send(&HostMessage::Cancel { id });
        }
    }

    /// The deepest nesting among the `tool_execute`s this hook is running, or is about to run
    /// for its own calls (0 when none): a call the hook makes now may serve any of them, so it
    /// counts as made from the deepest.
    pub(super) fn tool_nesting(&self) -> u32 {
        let p = self.pending();
        let running = p
            .map
            .values()
            .filter_map(|w| w.nesting.as_ref().map(|t| t.depth))
            .max();
        let coming = p.reserved.keys().next_back().copied();
        running.max(coming).unwrap_or(0)
    }

    /// The tool calls this hook's `tool_execute`s in flight run, oldest request first.
    pub(super) fn tool_call_ids(&self) -> Vec<String> {
        let p = self.pending();
        let mut running: Vec<(u64, String)> = p
            .map
            .iter()
            .filter_map(|(id, w)| w.nesting.as_ref().map(|t| (*id, t.call_id.clone())))
            .collect();
        running.sort();
        running.into_iter().map(|(_, c)| c).collect()
    }

    /// Counts a call of the hook's own tool at `depth` in [`tool_nesting`](Self::tool_nesting)
    /// from now until the guard drops — before its `tool_execute` exists, so that calls read
    /// right after it already see it.
    pub(super) fn reserve_nesting(self: &Arc<Self>, depth: u32) -> NestingReservation {
        *self.pending().reserved.entry(depth).or_default() += 1;
        NestingReservation {
            conn: self.clone(),
            depth,
        }
    }

    pub(super) fn deliver(&self, reply: Reply) -> Delivery {
        let mut p = self.pending();
        let id = reply.id;
        match p.map.remove(&id) {
            Some(w) => {
                p.dialogs.request_ended(id, false);
                // The receiver may have just given up; that is a late reply, harmlessly lost.
                let _ = w.tx.send(Ok(reply));
                Delivery::Delivered
            }
            None if p.abandoned.contains(&id) => Delivery::Late,
            None => Delivery::Unknown,
        }
    }

    /// Fails one waiting request (a malformed reply to it). Returns whether it was waiting.
    pub(super) fn fail(&self, id: u64, err: RequestError) -> bool {
        let w = {
            let mut p = self.pending();
            let w = p.map.remove(&id);
            if w.is_some() {
                p.dialogs.request_ended(id, false);
            }
            w
        };
        match w {
            Some(w) => {
                let _ = w.tx.send(Err(err));
                true
            }
            None => false,
        }
    }

    pub(super) fn is_abandoned(&self, id: u64) -> bool {
        self.pending().abandoned.contains(&id)
    }

    /// Forwards a `progress` frame to its tool call; returns whether anyone was waiting.
    pub(super) fn progress(&self, p: Progress) -> bool {
        let pending = self.pending();
        match pending.map.get(&p.id).and_then(|w| w.progress.as_ref()) {
            Some(tx) => {
                let _ = tx.send(p);
                true
            }
            None => false,
        }
    }

    /// Ends the generation for its requests: every waiter fails at once with `err()`, and no new
    /// request can wait on this connection.
    pub(super) fn fail_all(&self, err: impl Fn() -> RequestError) {
        let waiters: Vec<Waiter> = {
            let mut p = self.pending();
            p.closed = true;
            p.map.drain().map(|(_, w)| w).collect()
        };
        for w in waiters {
            let _ = w.tx.send(Err(err()));
        }
        self.dead.cancel();
    }

    /// Marks a `ui.*` call from the hook as in flight until the guard drops.
    pub(super) fn ui_begin(self: &Arc<Self>) -> UiGuard {
        self.ui.send_modify(|c| {
            if c.inflight == 0 {
                c.paused_since = Some(Instant::now());
            }
            c.inflight += 1;
        });
        UiGuard { conn: self.clone() }
    }

    /// Opens a dialog for the hook, tied to the requests it has outstanding now: the guard's
    /// `dismiss` is cancelled when they have all ended, one of them withdrawn (see `dialogs`).
    pub(super) fn dialog_begin(self: &Arc<Self>) -> DialogGuard {
        let mut p = self.pending();
        let serves = p.map.keys().copied().collect();
        let (key, dismiss) = p.dialogs.open(serves);
        DialogGuard {
            conn: self.clone(),
            key,
            dismiss,
        }
    }

    /// Waits for the reply on `rx` for at most `deadline` of time *not* spent serving this
    /// hook's `ui.*` calls. `None` means the deadline passed.
    pub(super) async fn wait_reply(
        &self,
        rx: &mut PendingReply,
        deadline: Duration,
    ) -> Option<ReplyResult> {
        // Spin briefly before sleeping: a compiled hook answers within tens of microseconds,
        // and putting this thread to sleep and waking it on an idle (virtual) CPU costs about
        // as much again. The reply is read by another worker, so this needs a multi-thread
        // runtime (pi's); on a current-thread one spinning would only delay the reader.
        let multi = tokio::runtime::Handle::try_current().is_ok_and(|h| {
            h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
                && h.metrics().num_workers() > 1
        });
        if multi {
            let spin_until = std::time::Instant::now() + REPLY_SPIN;
            while std::time::Instant::now() < spin_until {
                match rx.try_recv() {
                    Ok(r) => return Some(r),
                    Err(oneshot::error::TryRecvError::Empty) => std::hint::spin_loop(),
                    Err(oneshot::error::TryRecvError::Closed) => break,
                }
            }
        }
        let mut ui = self.ui.subscribe();
        let start = Instant::now();
        let paused_at_start = ui.borrow().paused(start);
        loop {
            let clock = *ui.borrow_and_update();
            if clock.inflight > 0 {
                // The clock is stopped: only the reply or the end of the ui call matter.
                tokio::select! {
                    r = &mut *rx => return Some(flatten(r, &self.hook)),
                    _ = ui.changed() => continue,
                }
            }
            let extra = clock.paused(Instant::now()).saturating_sub(paused_at_start);
            let at = start + deadline + extra;
            tokio::select! {
                r = &mut *rx => return Some(flatten(r, &self.hook)),
                _ = tokio::time::sleep_until(at) => return None,
                // `self.ui` lives as long as `self`, so `changed` cannot fail here.
                _ = ui.changed() => continue,
            }
        }
    }
}

fn flatten(r: Result<ReplyResult, oneshot::error::RecvError>, hook: &str) -> ReplyResult {
    r.unwrap_or_else(|_| {
        Err(RequestError::Crashed {
            hook: hook.to_string(),
            detail: "the connection ended without an answer".into(),
        })
    })
}

/// A request sent and not yet answered; dropping it without [`settle`](Self::settle)
/// withdraws the request (see the module comment).
pub(super) struct Outstanding {
    pub(super) conn: Arc<Conn>,
    pub(super) id: u64,
    settled: bool,
}

impl Outstanding {
    pub(super) fn new(conn: Arc<Conn>, id: u64) -> Self {
        Outstanding {
            conn,
            id,
            settled: false,
        }
    }

    /// The reply (or the generation's end) has been taken: nothing to withdraw.
    pub(super) fn settle(mut self) {
        self.settled = true;
    }
}

impl Drop for Outstanding {
    fn drop(&mut self) {
        if !self.settled {
            self.conn.withdraw(self.id);
        }
    }
}

/// See [`Conn::reserve_nesting`].
pub(super) struct NestingReservation {
    conn: Arc<Conn>,
    depth: u32,
}

impl Drop for NestingReservation {
    fn drop(&mut self) {
        let mut p = self.conn.pending();
        if let Some(n) = p.reserved.get_mut(&self.depth) {
            *n -= 1;
            if *n == 0 {
                p.reserved.remove(&self.depth);
            }
        }
    }
}

/// See [`Conn::dialog_begin`].
pub(super) struct DialogGuard {
    conn: Arc<Conn>,
    key: u64,
    pub(super) dismiss: CancellationToken,
}

impl Drop for DialogGuard {
    fn drop(&mut self) {
        self.conn.pending().dialogs.close(self.key);
    }
}

pub(super) struct UiGuard {
    conn: Arc<Conn>,
}

impl Drop for UiGuard {
    fn drop(&mut self) {
        self.conn.ui.send_modify(|c| {
            c.inflight = c.inflight.saturating_sub(1);
            if c.inflight == 0 {
                if let Some(since) = c.paused_since.take() {
                    c.paused_total += Instant::now().saturating_duration_since(since);
                }
            }
        });
    }
}

/// The only place frames are written. A write is never raced against anything (a cancelled
/// write could leave half a frame in the pipe). On a write error the process is gone: report
/// it and stop; the generation's supervisor takes over.
async fn write_loop(
    mut writer: FrameWriter<HookStdin>,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    queued: Arc<AtomicUsize>,
    failed: CancellationToken,
    hook: String,
) {
    while let Some(item) = rx.recv().await {
        match item {
            Outgoing::Frame(frame) => {
                let r = writer.write_frame(frame).await;
                queued.fetch_sub(1, Ordering::Relaxed);
                if let Err(e) = r {
                    tracing::debug!(hook = %hook, error = %e, "writing to hook failed");
                    failed.cancel();
                    return;
                }
            }
            Outgoing::Close => {
                let _ = writer.close().await;
                return;
            }
        }
    }
    // Dropping the writer closes the pipe.
}
