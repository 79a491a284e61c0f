//! The per-request plumbing of a running hook: a request's [`Context`] (registered as in
//! flight before its work starts, so a `cancel` right behind it finds it), handlers run with
//! panics caught, the reply sent unless the request was cancelled, and the one thread that
//! runs notify events in order.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc};

use serde_json::{json, Value};

use super::context::{lock, CancelFlag, Conn, Context};
use super::{EventFn, HandlerError};
use crate::protocol::HostMessage;

pub(super) fn kind_of(m: &HostMessage) -> String {
    let v = serde_json::to_value(m).unwrap_or(Value::Null);
    format!("`{}`", v.get("type").and_then(Value::as_str).unwrap_or("?"))
}

pub(super) fn context(
    conn: &Arc<Conn>,
    id: Option<u64>,
    name: String,
    deadline_ms: Option<u64>,
    call_id: Option<String>,
    is_tool: bool,
) -> Context {
    let cancel = Arc::new(CancelFlag::default());
    if let Some(id) = id {
        // Registered on the reader, before the work starts, so a `cancel` right behind the
        // request finds it.
        lock(&conn.inflight).insert(id, cancel.clone());
    }
    Context {
        conn: conn.clone(),
        id,
        name,
        deadline_ms,
        call_id,
        cancel,
        is_tool,
    }
}

pub(super) fn guarded(
    f: impl FnOnce() -> Result<Value, HandlerError>,
) -> Result<Value, HandlerError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(HandlerError(format!("the handler panicked: {what}")))
        }
    }
}

/// Replies to request `id`, unless it was cancelled (the host no longer waits for it).
pub(super) fn finish(ctx: &Context, id: u64, out: Result<Value, HandlerError>) {
    lock(&ctx.conn.inflight).remove(&id);
    if ctx.cancelled() {
        return;
    }
    let reply = match out {
        Ok(result) => json!({"type": "reply", "id": id, "result": result}),
        Err(e) => {
            eprintln!("[{}] {} failed: {e}", ctx.conn.name, ctx.name);
            error_reply(id, &e.0)
        }
    };
    ctx.conn.send(&reply);
}

pub(super) fn error_reply(id: u64, message: &str) -> Value {
    json!({"type": "reply", "id": id, "error": message})
}

pub(super) type Notification = (EventFn, Value, Context);

/// Notify events run one at a time, in arrival order, on this thread. The second channel says
/// when it has drained.
pub(super) fn notify_thread() -> (mpsc::Sender<Notification>, mpsc::Receiver<()>) {
    let (tx, rx) = mpsc::channel::<Notification>();
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        for (f, payload, ctx) in rx {
            if let Err(e) = guarded(|| f(&payload, &ctx)) {
                eprintln!("[{}] {} failed: {e}", ctx.conn.name, ctx.name);
            }
        }
        let _ = done_tx.send(());
    });
    (tx, done_rx)
}
