//! RPC mode's [`HookUi`]: a hook's `ui.*` call becomes an `extension_ui_request` on stdout,
//! and a dialog waits for the client's `extension_ui_response` with the same id. This is the
//! one place in RPC mode that waits on the client, so it owns the rule that nothing waits
//! forever (pi's issue #9951): a dialog is dismissed at the hook's timeout, when the hook's
//! call is abandoned (its future is dropped: the hook exited or was stopped, pi is exiting),
//! when the client closes stdin ([`RpcUi::close`]) or when stdout's consumer is gone.
//!
//! The server routes every `extension_ui_response` line to [`RpcUi::answer`]; an answer for an
//! id that is not waiting (unknown, timed out, already answered) is ignored. Because a hook may
//! open a dialog from `session_start`, which the controller awaits while it starts, the server
//! must already be writing `Outgoing` records and routing answers when it starts the
//! controller, and must call [`RpcUi::close`] at stdin's end.
//!
//! Fire-and-forget requests are counted until the writer has written them ([`RpcUi::written`]):
//! a client that stops reading stdout makes later ones fail (the hook hears `failed`) instead
//! of queueing without bound.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::protocol::ui::{NotifyType, WidgetPlacement as WirePlacement};
use super::protocol::{ExtensionUiRequest, ExtensionUiResponse, Outgoing, UiAnswer, UiMethod};
use crate::hooks::protocol::UiCapabilities;
use crate::hooks::ui::{
    serves_all, Dialog, DialogAnswer, HookUi, NotifyLevel, ThemeAnswer, UiError, UiUpdate,
    WidgetPlacement,
};

/// The RPC client as the hooks' UI.
pub struct RpcUi {
    out: mpsc::UnboundedSender<Outgoing>,
    /// Dialogs waiting for an answer, by request id.
    waiting: Mutex<HashMap<String, oneshot::Sender<UiAnswer>>>,
    /// Cancelled when the client closed stdin: no answer can come any more.
    closed: CancellationToken,
    /// Fire-and-forget requests sent and not yet written.
    unwritten: AtomicUsize,
}

/// How many fire-and-forget requests may wait for a client that does not read stdout.
pub const MAX_UNWRITTEN_UPDATES: usize = 1024;

/// Forgets a dialog's id however its wait ends (answered, timed out, dropped), so a late
/// answer finds nothing and the map cannot grow.
struct Forget<'a> {
    ui: &'a RpcUi,
    id: String,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.ui.waiting().remove(&self.id);
    }
}

impl RpcUi {
    /// `out` is the stream of records to stdout.
    pub fn new(out: mpsc::UnboundedSender<Outgoing>) -> Arc<RpcUi> {
        Arc::new(RpcUi {
            out,
            waiting: Mutex::default(),
            closed: CancellationToken::new(),
            unwritten: AtomicUsize::new(0),
        })
    }

    /// The writer wrote (or dropped) `request`; a fire-and-forget one no longer counts.
    pub fn written(&self, request: &ExtensionUiRequest) {
        if !request.method.expects_answer() {
            // Saturating: a request written that this bridge did not count changes nothing.
            let _ = self
                .unwritten
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        }
    }

    fn waiting(&self) -> MutexGuard<'_, HashMap<String, oneshot::Sender<UiAnswer>>> {
        // A panic while holding the map leaves it consistent (inserts and removes only).
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The client's answer to the dialog `resp.id`. Returns whether a dialog was waiting for it;
    /// an answer to anything else is ignored.
    pub fn answer(&self, resp: ExtensionUiResponse) -> bool {
        let Some(tx) = self.waiting().remove(&resp.id) else {
            tracing::debug!(id = %resp.id, "extension_ui_response for no open dialog ignored");
            return false;
        };
        // The dialog may have been abandoned a moment ago; then nobody needs the answer.
        tx.send(resp.answer()).is_ok()
    }

    /// The client closed stdin: every open dialog, and every later one, is dismissed.
    pub fn close(&self) {
        self.closed.cancel();
        self.waiting().clear();
    }

    /// How many dialogs wait for an answer (for tests and diagnostics).
    pub fn open_dialogs(&self) -> usize {
        self.waiting().len()
    }

    /// Writes one request; `false` when stdout's consumer is gone.
    fn send(&self, id: &str, method: UiMethod) -> bool {
        let req = ExtensionUiRequest {
            id: id.to_string(),
            method,
        };
        self.out.send(Outgoing::UiRequest(req)).is_ok()
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn dialog_method(dialog: &Dialog, timeout: Option<Duration>) -> UiMethod {
    let timeout = timeout.map(millis);
    match dialog.clone() {
        Dialog::Confirm { title, message } => UiMethod::Confirm {
            title,
            message,
            timeout,
        },
        Dialog::Select { title, options } => UiMethod::Select {
            title,
            options,
            timeout,
        },
        Dialog::Input { title, placeholder } => UiMethod::Input {
            title,
            placeholder,
            timeout,
        },
        Dialog::Editor { title, prefill } => UiMethod::Editor {
            title,
            prefill,
            timeout,
        },
    }
}

fn update_method(update: &UiUpdate) -> UiMethod {
    match update.clone() {
        UiUpdate::Notify { message, level } => UiMethod::Notify {
            message,
            notify_type: Some(match level {
                NotifyLevel::Info => NotifyType::Info,
                NotifyLevel::Warning => NotifyType::Warning,
                NotifyLevel::Error => NotifyType::Error,
            }),
        },
        UiUpdate::SetStatus { key, text } => UiMethod::SetStatus {
            status_key: key,
            status_text: text,
        },
        UiUpdate::SetWidget {
            key,
            lines,
            placement,
        } => UiMethod::SetWidget {
            widget_key: key,
            widget_lines: lines,
            widget_placement: placement.map(|p| match p {
                WidgetPlacement::AboveEditor => WirePlacement::AboveEditor,
                WidgetPlacement::BelowEditor => WirePlacement::BelowEditor,
            }),
        },
        UiUpdate::SetTitle { title } => UiMethod::SetTitle { title },
        UiUpdate::SetEditorText { text } => UiMethod::SetEditorText { text },
    }
}

/// Waits for `d`, or forever when there is none.
async fn sleep_opt(d: Option<Duration>) {
    match d {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

#[async_trait]
impl HookUi for RpcUi {
    fn served(&self) -> UiCapabilities {
        UiCapabilities {
            set_theme: false,
            ..serves_all()
        }
    }

    /// 1.6's RPC mode answers the same: its client draws, not pi.
    async fn set_theme(&self, _hook: &str, _name: &str) -> Result<ThemeAnswer, UiError> {
        Ok(ThemeAnswer::Failed(
            "Theme switching not supported in RPC mode".into(),
        ))
    }

    async fn dialog(
        &self,
        hook: &str,
        dialog: &Dialog,
        timeout: Option<Duration>,
    ) -> Result<DialogAnswer, UiError> {
        let (tx, rx) = oneshot::channel();
        let id = uuid::Uuid::new_v4().to_string();
        self.waiting().insert(id.clone(), tx);
        let _forget = Forget {
            ui: self,
            id: id.clone(),
        };
        if !self.send(&id, dialog_method(dialog, timeout)) {
            return Ok(DialogAnswer::Dismissed);
        }
        let answer = tokio::select! {
            // An error means `close` dropped the sender: the client is gone.
            r = rx => r.ok(),
            _ = sleep_opt(timeout) => {
                tracing::debug!(hook, id = %id, "dialog timed out; dismissed");
                None
            }
            _ = self.closed.cancelled() => None,
            _ = self.out.closed() => None,
        };
        Ok(match answer {
            Some(UiAnswer::Value(v)) => DialogAnswer::Value(v),
            Some(UiAnswer::Confirmed(c)) => DialogAnswer::Confirmed(c),
            Some(UiAnswer::Cancelled) | None => DialogAnswer::Dismissed,
        })
    }

    fn update(&self, hook: &str, update: &UiUpdate) -> Result<(), UiError> {
        // Nobody reading stdout any more is not the hook's problem: there is no one to show
        // it to, as when a client ignores the request.
        let pending = self.unwritten.fetch_add(1, Ordering::AcqRel);
        if pending >= MAX_UNWRITTEN_UPDATES {
            self.unwritten.fetch_sub(1, Ordering::AcqRel);
            return Err(UiError::Backlog {
                method: update.method(),
                pending,
            });
        }
        let id = uuid::Uuid::new_v4().to_string();
        if !self.send(&id, update_method(update)) {
            self.unwritten.fetch_sub(1, Ordering::AcqRel);
            tracing::debug!(
                hook,
                method = update.method(),
                "ui request not sent: stdout is gone"
            );
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "ui_bridge_tests.rs"]
mod tests;
