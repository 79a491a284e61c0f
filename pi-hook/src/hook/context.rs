//! The connection a running hook shares between its reader and its handlers — the one frame
//! writer, the host calls waiting for their `result`, the requests in flight — and the
//! [`Context`] a handler gets for the request it serves.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};

use super::answers::{HostError, ToolOutput};
use crate::framing::FrameWriter;
use crate::protocol::{CallResult, Hello, Subscription};

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A handler that panicked while holding a lock leaves data that is still usable here.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A request's cancellation flag, waitable.
#[derive(Default)]
pub(crate) struct CancelFlag {
    set: Mutex<bool>,
    cond: Condvar,
}

impl CancelFlag {
    pub(crate) fn cancel(&self) {
        *lock(&self.set) = true;
        self.cond.notify_all();
    }

    fn is_set(&self) -> bool {
        *lock(&self.set)
    }

    fn wait(&self, timeout: Duration) -> bool {
        let guard = lock(&self.set);
        let (guard, _) = self
            .cond
            .wait_timeout_while(guard, timeout, |set| !*set)
            .unwrap_or_else(|p| p.into_inner());
        *guard
    }
}

/// What every handler and the reader share.
pub(crate) struct Conn {
    writer: Mutex<FrameWriter<Box<dyn Write + Send>>>,
    /// Set once the host has gone (EOF, `shutdown`, a failed write).
    closed: AtomicBool,
    next_call: AtomicU64,
    calls: Mutex<HashMap<u64, mpsc::Sender<Result<Value, HostError>>>>,
    pub(crate) inflight: Mutex<HashMap<u64, Arc<CancelFlag>>>,
    pub(crate) hello: Hello,
    pub(crate) name: String,
}

impl Conn {
    pub(crate) fn new(
        writer: FrameWriter<Box<dyn Write + Send>>,
        name: String,
        hello: Hello,
    ) -> Conn {
        Conn {
            writer: Mutex::new(writer),
            closed: AtomicBool::new(false),
            next_call: AtomicU64::new(1),
            calls: Mutex::new(HashMap::new()),
            inflight: Mutex::new(HashMap::new()),
            hello,
            name,
        }
    }

    /// Writes one frame; a failed write means the host is gone, so the hook winds down.
    pub(crate) fn send<M: Serialize>(&self, msg: &M) {
        if self.closed.load(Ordering::Relaxed) {
            return;
        }
        if let Err(e) = lock(&self.writer).write_message(msg) {
            if !e.is_broken_pipe() {
                eprintln!("[{}] cannot write a frame: {e}", self.name);
            }
            self.close();
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// Ends every wait: host calls fail with `closed`, requests are cancelled.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        for (_, tx) in lock(&self.calls).drain() {
            let _ = tx.send(Err(HostError::new("closed", "the host connection ended")));
        }
        for flag in lock(&self.inflight).values() {
            flag.cancel();
        }
    }

    /// A `result` from the host for one of our calls.
    pub(crate) fn answer(&self, r: CallResult) {
        let Some(tx) = lock(&self.calls).remove(&r.id) else {
            return;
        };
        let out = match (r.error, r.value) {
            (Some(e), _) => Err(HostError {
                code: e.code,
                message: e.message,
            }),
            (None, v) => Ok(v.unwrap_or(Value::Null)),
        };
        let _ = tx.send(out);
    }

    /// Sends `build(id)` with a fresh id from the call id space and waits for its `result`.
    pub(crate) fn exchange(
        &self,
        what: &str,
        timeout: Option<Duration>,
        build: impl FnOnce(u64) -> Value,
    ) -> Result<Value, HostError> {
        if self.is_closed() {
            return Err(HostError::new("closed", "the host connection ended"));
        }
        let id = self.next_call.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel();
        lock(&self.calls).insert(id, tx);
        self.send(&build(id));
        let got = match timeout {
            Some(t) => rx.recv_timeout(t).map_err(|_| ()),
            None => rx.recv().map_err(|_| ()),
        };
        lock(&self.calls).remove(&id);
        match got {
            Ok(r) => r,
            Err(()) if self.is_closed() => {
                Err(HostError::new("closed", "the host connection ended"))
            }
            Err(()) => Err(HostError::new(
                "timeout",
                format!("no answer to {what} within {timeout:?}"),
            )),
        }
    }
}

/// What a handler knows about the request it serves, and how it talks to the host.
pub struct Context {
    pub(crate) conn: Arc<Conn>,
    /// The request id; `None` for a notify event.
    pub(crate) id: Option<u64>,
    pub(crate) name: String,
    pub(crate) deadline_ms: Option<u64>,
    pub(crate) call_id: Option<String>,
    pub(crate) cancel: Arc<CancelFlag>,
    pub(crate) is_tool: bool,
}

impl Context {
    /// The event, tool or command name this request is for.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The host's `hello`: mode, session, capabilities, model, flags.
    pub fn hello(&self) -> &Hello {
        &self.conn.hello
    }

    /// This hook's `config` from its settings entry (`{}` when none).
    pub fn config(&self) -> &Value {
        &self.conn.hello.config
    }

    /// The project directory (`PI_PROJECT_DIR`, else `hello.cwd`).
    pub fn cwd(&self) -> String {
        std::env::var("PI_PROJECT_DIR")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| self.conn.hello.cwd.clone())
    }

    /// The reply deadline the host gave (events and commands; a tool's is the host's cap).
    pub fn deadline_ms(&self) -> Option<u64> {
        self.deadline_ms
    }

    /// The model's tool call id (`tool_execute` only).
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    /// True once the host sent `cancel` for this request or went away; the reply is then not
    /// sent, so a handler may stop early.
    pub fn cancelled(&self) -> bool {
        self.cancel.is_set()
    }

    /// Sleeps up to `timeout`, waking early on cancel. Returns [`cancelled`](Self::cancelled).
    pub fn wait_cancelled(&self, timeout: Duration) -> bool {
        self.cancel.wait(timeout)
    }

    /// Partial output of a running tool (cumulative: it replaces the previous one). Does
    /// nothing outside `tool_execute`.
    pub fn progress(&self, so_far: impl Into<ToolOutput>) {
        let (Some(id), true) = (self.id, self.is_tool) else {
            return;
        };
        let out: ToolOutput = so_far.into();
        let mut msg = json!({"type": "progress", "id": id, "content": out.content});
        if let Some(d) = out.details {
            msg["details"] = d;
        }
        self.conn.send(&msg);
    }

    /// Calls the host (`ui.notify`, `session.append_entry`, `model.get`, …) and waits for its
    /// answer. The call serves this request: it may outlive the reply, but the host answers
    /// `cancelled` once the request is withdrawn.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, HostError> {
        self.call_timeout(method, params, None)
    }

    /// [`call`](Self::call) with a limit on the wait (error code `timeout` when it passes).
    pub fn call_timeout(
        &self,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, HostError> {
        self.conn.exchange(
            method,
            timeout,
            |id| json!({"type": "call", "id": id, "method": method, "params": params}),
        )
    }

    /// `model.complete`: one model request through pi's providers and keys (`params` as
    /// hook-protocol.md describes: `messages`, optional `model {provider, id}`,
    /// `system_prompt`, `tools`, `max_tokens`, `thinking`). Returns the assistant message, in
    /// pi-ai's shape; its usage is counted in the session's. The key never reaches the hook.
    pub fn complete(&self, params: Value) -> Result<Value, HostError> {
        let mut v = self.call("model.complete", params)?;
        Ok(v.get_mut("message").map(Value::take).unwrap_or(Value::Null))
    }

    /// `ui.set_theme`: switches pi's terminal UI to the theme called `name`, which becomes the
    /// user's `theme` setting (1.6's `ctx.ui.setTheme`). `Ok(Err(why))` when pi did not switch:
    /// an unknown name (`why` lists the themes there are), or a mode without a terminal UI.
    pub fn set_theme(&self, name: &str) -> Result<Result<(), String>, HostError> {
        let v = self.call("ui.set_theme", json!({"name": name}))?;
        if v.get("success").and_then(Value::as_bool) == Some(true) {
            return Ok(Ok(()));
        }
        let why = v
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("not switched");
        Ok(Err(why.to_string()))
    }

    /// Adds (or replaces) subscriptions from now on; answers the hook's whole set as the host
    /// now has it. The handlers must already be registered with [`Hook::handler`](crate::Hook::handler).
    pub fn subscribe(&self, subs: Vec<Subscription>) -> Result<Value, HostError> {
        self.conn.exchange(
            "subscribe",
            None,
            |id| json!({"type": "subscribe", "id": id, "subscriptions": subs}),
        )
    }

    /// Drops subscriptions from the next dispatch on.
    pub fn unsubscribe(&self, events: &[&str]) -> Result<Value, HostError> {
        self.conn.exchange(
            "unsubscribe",
            None,
            |id| json!({"type": "unsubscribe", "id": id, "events": events}),
        )
    }

    /// A `log` frame (`debug`, `info`, `warn`, `error`), recorded under the hook's name.
    pub fn log(&self, level: &str, message: impl Into<String>) {
        self.conn
            .send(&json!({"type": "log", "level": level, "message": message.into()}));
    }
}
