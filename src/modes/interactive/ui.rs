//! Hooks' `ui.*` calls in interactive mode: the host's [`HookUi`] side sends each call to the
//! app loop, which shows dialogs at the terminal (one at a time, in the order asked) and
//! applies the fire-and-forget updates. A dialog ends at its timeout even if the app never
//! gets to it, and is dismissed when the app has gone; updates beyond a bounded backlog are
//! refused (`failed`), never queued without limit.

use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};

use crate::hooks::protocol::UiCapabilities;
use crate::hooks::ui::{serves_all, Dialog, DialogAnswer, HookUi, ThemeAnswer, UiError, UiUpdate};

/// Updates the app has not applied yet before further ones are refused.
const BACKLOG: usize = 1024;

/// A call on its way to the app loop.
pub enum UiRequest {
    Dialog {
        hook: String,
        dialog: Dialog,
        timeout: Option<Duration>,
        reply: oneshot::Sender<DialogAnswer>,
    },
    Update {
        hook: String,
        update: UiUpdate,
    },
    /// `ui.set_theme`: the answer is the theme switched to, or why not.
    SetTheme {
        hook: String,
        name: String,
        reply: oneshot::Sender<Result<(), String>>,
    },
}

pub struct InteractiveUi {
    tx: mpsc::Sender<UiRequest>,
}

impl InteractiveUi {
    pub fn new() -> (InteractiveUi, mpsc::Receiver<UiRequest>) {
        let (tx, rx) = mpsc::channel(BACKLOG);
        (InteractiveUi { tx }, rx)
    }
}

#[async_trait]
impl HookUi for InteractiveUi {
    fn served(&self) -> UiCapabilities {
        serves_all()
    }

    async fn dialog(
        &self,
        hook: &str,
        dialog: &Dialog,
        timeout: Option<Duration>,
    ) -> Result<DialogAnswer, UiError> {
        let (reply, answer) = oneshot::channel();
        let req = UiRequest::Dialog {
            hook: hook.to_string(),
            dialog: dialog.clone(),
            timeout,
            reply,
        };
        if self.tx.send(req).await.is_err() {
            return Ok(DialogAnswer::Dismissed);
        }
        let wait = async { answer.await.unwrap_or(DialogAnswer::Dismissed) };
        match timeout {
            // The app counts the timeout down on screen and answers at zero; this bound only
            // matters if the app is busy elsewhere (another dialog still open).
            Some(t) => Ok(tokio::time::timeout(t + Duration::from_millis(250), wait)
                .await
                .unwrap_or(DialogAnswer::Dismissed)),
            None => Ok(wait.await),
        }
    }

    async fn set_theme(&self, hook: &str, name: &str) -> Result<ThemeAnswer, UiError> {
        let (reply, answer) = oneshot::channel();
        let req = UiRequest::SetTheme {
            hook: hook.to_string(),
            name: name.to_string(),
            reply,
        };
        let gone = || ThemeAnswer::Failed("pi is exiting".into());
        if self.tx.send(req).await.is_err() {
            return Ok(gone());
        }
        Ok(match answer.await {
            Ok(Ok(())) => ThemeAnswer::Switched,
            Ok(Err(why)) => ThemeAnswer::Failed(why),
            Err(_) => gone(),
        })
    }

    fn update(&self, hook: &str, update: &UiUpdate) -> Result<(), UiError> {
        let req = UiRequest::Update {
            hook: hook.to_string(),
            update: update.clone(),
        };
        match self.tx.try_send(req) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => Err(UiError::Backlog {
                method: update.method(),
                pending: BACKLOG,
            }),
            // The app has gone (pi is exiting): nothing to show it on.
            Err(mpsc::error::TrySendError::Closed(_)) => Ok(()),
        }
    }
}
