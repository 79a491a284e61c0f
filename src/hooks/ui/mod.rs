//! The seam between a hook's `ui.*` host calls and whichever front end shows them. The host
//! parses and validates the call ([`UiCall::parse`], in `params`), hands it to the front end's
//! [`HookUi`], and turns the answer into the call's result ([`DialogAnswer::to_result`]), so
//! every front end gets the same params, the same answers and the same "dismissed" meaning.
//!
//! Dialogs (`confirm`, `select`, `input`, `editor`) wait for an answer or are dismissed;
//! everything else is fire-and-forget. A front end lists only what it shows in
//! [`HookUi::served`] (`hello.capabilities.ui`), so a hook can tell beforehand. Print and JSON
//! mode are [`HeadlessUi`], pi's no-op UI (seed A §8.3): notifications go to stderr, a dialog
//! answers its default at once (`confirm` false, the others no value — what a dismissed
//! dialog answers), and the other calls change nothing. A mode with a UI refuses calls until
//! its front end has started ([`UiError::NotStarted`]): an answer then would be no one's.

mod params;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

pub use params::{UiCall, UiParamError, UI_METHODS};

use super::protocol::UiCapabilities;

/// A question that waits for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dialog {
    Confirm {
        title: String,
        message: String,
    },
    /// Answered with one of `options` (anything else counts as dismissed).
    Select {
        title: String,
        options: Vec<String>,
    },
    Input {
        title: String,
        placeholder: Option<String>,
    },
    /// A multi-line text, starting from `prefill`.
    Editor {
        title: String,
        prefill: Option<String>,
    },
}

impl Dialog {
    /// The host-call method that asks it.
    pub fn method(&self) -> &'static str {
        match self {
            Dialog::Confirm { .. } => "ui.confirm",
            Dialog::Select { .. } => "ui.select",
            Dialog::Input { .. } => "ui.input",
            Dialog::Editor { .. } => "ui.editor",
        }
    }
}

/// Whether host-call `method` is a dialog (waits for the user).
pub fn is_dialog(method: &str) -> bool {
    matches!(
        method,
        "ui.confirm" | "ui.select" | "ui.input" | "ui.editor"
    )
}

/// The result of a dialog nobody will answer any more (see [`DialogAnswer::to_result`]).
pub fn dismissed(method: &str) -> Value {
    if method == "ui.confirm" {
        json!({"confirmed": false})
    } else {
        json!({"value": null})
    }
}

/// How a dialog ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogAnswer {
    Confirmed(bool),
    Value(String),
    /// Cancelled by the user, timed out, abandoned, or answered with something the dialog
    /// cannot use.
    Dismissed,
}

impl DialogAnswer {
    /// The call's result: `{confirmed}` for a confirm (dismissed is `false`), `{value}` for the
    /// others (dismissed is `null`) — pi's cancel semantics. An answer of the wrong kind, or a
    /// `select` answer that is not one of its options, is dismissed.
    pub fn to_result(&self, dialog: &Dialog) -> Value {
        match (dialog, self) {
            (Dialog::Confirm { .. }, DialogAnswer::Confirmed(c)) => json!({"confirmed": c}),
            (Dialog::Confirm { .. }, _) => json!({"confirmed": false}),
            (Dialog::Select { options, .. }, DialogAnswer::Value(v)) if options.contains(v) => {
                json!({"value": v})
            }
            (Dialog::Input { .. } | Dialog::Editor { .. }, DialogAnswer::Value(v)) => {
                json!({"value": v})
            }
            _ => json!({"value": null}),
        }
    }
}

/// A notification's level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NotifyLevel {
    #[default]
    Info,
    Warning,
    Error,
}

/// Where a widget goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WidgetPlacement {
    AboveEditor,
    BelowEditor,
}

/// A fire-and-forget call: shown (or not) by the front end, answered `{}` at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiUpdate {
    Notify {
        message: String,
        level: NotifyLevel,
    },
    /// `text: None` clears the status entry `key`.
    SetStatus {
        key: String,
        text: Option<String>,
    },
    /// `lines: None` removes the widget `key`.
    SetWidget {
        key: String,
        lines: Option<Vec<String>>,
        placement: Option<WidgetPlacement>,
    },
    SetTitle {
        title: String,
    },
    SetEditorText {
        text: String,
    },
}

impl UiUpdate {
    pub fn method(&self) -> &'static str {
        match self {
            UiUpdate::Notify { .. } => "ui.notify",
            UiUpdate::SetStatus { .. } => "ui.set_status",
            UiUpdate::SetWidget { .. } => "ui.set_widget",
            UiUpdate::SetTitle { .. } => "ui.set_title",
            UiUpdate::SetEditorText { .. } => "ui.set_editor_text",
        }
    }
}

/// How a `ui.set_theme` ended, as 1.6's `ctx.ui.setTheme` answers: `{success: true}`, or
/// `{success: false, error}` saying why (an unknown theme and the ones there are, a mode
/// without a terminal UI).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThemeAnswer {
    Switched,
    Failed(String),
}

impl ThemeAnswer {
    pub fn to_result(&self) -> Value {
        match self {
            ThemeAnswer::Switched => json!({"success": true}),
            ThemeAnswer::Failed(why) => json!({"success": false, "error": why}),
        }
    }
}

/// Why a front end did not serve a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UiError {
    #[error("{method} is not available yet: pi's {mode} front end has not started")]
    NotStarted { method: &'static str, mode: String },
    /// The front end's reader is not keeping up: nothing more is queued for it until it does.
    #[error("{method} not sent: the client has not read the last {pending} requests yet")]
    Backlog {
        method: &'static str,
        pending: usize,
    },
}

impl UiError {
    /// The host-call error code the hook gets.
    pub fn code(&self) -> &'static str {
        match self {
            UiError::NotStarted { .. } => "unavailable",
            UiError::Backlog { .. } => "failed",
        }
    }
}

/// A front end's side of the hooks' `ui.*` calls. Implementations must never wait forever: a
/// dialog ends at its `timeout` at the latest, and dropping the future abandons it (the hook's
/// call was abandoned: the hook exited, was stopped, or pi is exiting).
#[async_trait]
pub trait HookUi: Send + Sync {
    /// Which calls this front end serves (`hello.capabilities.ui`).
    fn served(&self) -> UiCapabilities;

    /// Asks the user; `hook` names who asks.
    async fn dialog(
        &self,
        hook: &str,
        dialog: &Dialog,
        timeout: Option<Duration>,
    ) -> Result<DialogAnswer, UiError>;

    /// Shows (or records) a fire-and-forget call.
    fn update(&self, hook: &str, update: &UiUpdate) -> Result<(), UiError>;

    /// Switches the theme (`ui.set_theme`); a front end without a terminal UI has none to
    /// switch, as 1.6's no-UI modes answer.
    async fn set_theme(&self, _hook: &str, _name: &str) -> Result<ThemeAnswer, UiError> {
        Ok(ThemeAnswer::Failed("UI not available".into()))
    }
}

/// Print and JSON mode: no one to ask, so a dialog answers its default and the other calls
/// change nothing; notifications are written to stderr as `[hook] message`. Also what hooks of a mode with a
/// UI get before its front end has started (see [`HeadlessUi::before_start`]).
pub struct HeadlessUi {
    mode: String,
    /// The mode has a UI, which is not attached yet.
    before_start: bool,
}

impl HeadlessUi {
    pub fn new(mode: impl Into<String>) -> Arc<HeadlessUi> {
        Arc::new(HeadlessUi {
            mode: mode.into(),
            before_start: false,
        })
    }

    /// For the hooks of a mode with a UI until the front end attaches it: during start-up
    /// (`project_trust`) nobody may be reading the answers yet, so a dialog then would only
    /// wait; it is refused, naming the reason.
    pub fn before_start(mode: impl Into<String>) -> Arc<HeadlessUi> {
        Arc::new(HeadlessUi {
            mode: mode.into(),
            before_start: true,
        })
    }

    fn refuse(&self, method: &'static str) -> UiError {
        UiError::NotStarted {
            method,
            mode: self.mode.clone(),
        }
    }
}

/// What every UI that can show everything serves.
pub fn serves_all() -> UiCapabilities {
    UiCapabilities {
        notify: true,
        confirm: true,
        select: true,
        input: true,
        editor: true,
        set_status: true,
        set_widget: true,
        set_title: true,
        set_editor_text: true,
        set_theme: true,
    }
}

#[async_trait]
impl HookUi for HeadlessUi {
    fn served(&self) -> UiCapabilities {
        UiCapabilities {
            notify: true,
            ..UiCapabilities::default()
        }
    }

    async fn dialog(
        &self,
        _hook: &str,
        dialog: &Dialog,
        _timeout: Option<Duration>,
    ) -> Result<DialogAnswer, UiError> {
        if self.before_start {
            return Err(self.refuse(dialog.method()));
        }
        Ok(DialogAnswer::Dismissed)
    }

    fn update(&self, hook: &str, update: &UiUpdate) -> Result<(), UiError> {
        match update {
            UiUpdate::Notify { message, .. } => {
                term_eprintln!("[{hook}] {message}");
                Ok(())
            }
            other if self.before_start => Err(self.refuse(other.method())),
            _ => Ok(()),
        }
    }

    async fn set_theme(&self, _hook: &str, _name: &str) -> Result<ThemeAnswer, UiError> {
        if self.before_start {
            return Err(self.refuse("ui.set_theme"));
        }
        Ok(ThemeAnswer::Failed("UI not available".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dismissed_is_false_for_confirm_and_null_otherwise() {
        let confirm = Dialog::Confirm {
            title: "t".into(),
            message: "m".into(),
        };
        let select = Dialog::Select {
            title: "t".into(),
            options: vec!["a".into()],
        };
        let input = Dialog::Input {
            title: "t".into(),
            placeholder: None,
        };
        let d = DialogAnswer::Dismissed;
        assert_eq!(d.to_result(&confirm), json!({"confirmed": false}));
        assert_eq!(d.to_result(&select), json!({"value": null}));
        // Answers of the wrong kind, and options the hook never offered, are dismissals.
        let yes = DialogAnswer::Confirmed(true);
        assert_eq!(yes.to_result(&select), json!({"value": null}));
        let stray = DialogAnswer::Value("z".into());
        assert_eq!(stray.to_result(&confirm), json!({"confirmed": false}));
        assert_eq!(stray.to_result(&select), json!({"value": null}));
        assert_eq!(stray.to_result(&input), json!({"value": "z"}));
        assert_eq!(yes.to_result(&confirm), json!({"confirmed": true}));
    }

    #[tokio::test]
    async fn headless_serves_notify_only_and_answers_the_rest_with_defaults() {
        let ui = HeadlessUi::new("json");
        assert!(ui.served().notify && !ui.served().confirm && !ui.served().set_title);
        let d = Dialog::Input {
            title: "t".into(),
            placeholder: None,
        };
        let answer = ui.dialog("h", &d, None).await.unwrap();
        assert_eq!(answer.to_result(&d), json!({"value": null}));
        let title = UiUpdate::SetTitle { title: "x".into() };
        assert!(ui.update("h", &title).is_ok());
        let early = HeadlessUi::before_start("rpc");
        let err = early.dialog("h", &d, None).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "ui.input is not available yet: pi's rpc front end has not started"
        );
    }
}
