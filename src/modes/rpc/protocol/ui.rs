//! The extension UI sub-protocol: what a hook's `ui.*` calls become on RPC's stdout
//! (`extension_ui_request`) and how the client answers a dialog (`extension_ui_response`).
//!
//! Dialogs (`select`, `confirm`, `input`, `editor`) wait for an answer with the request's `id`;
//! when they carry a `timeout` (milliseconds) pi resolves them itself at that deadline, with the
//! same default as a cancel. The other methods are fire-and-forget and expect no answer.

use serde::{Deserialize, Serialize};

/// One request to the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "extension_ui_request")]
pub struct ExtensionUiRequest {
    /// Unique per request (TypeScript pi uses a UUID); a dialog's answer repeats it.
    pub id: String,
    #[serde(flatten)]
    pub method: UiMethod,
}

/// Where a widget goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WidgetPlacement {
    AboveEditor,
    BelowEditor,
}

/// A notification's kind (the client shows `info` when it is absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyType {
    Info,
    Warning,
    Error,
}

/// The request's method and its fields. Method names are TypeScript pi's, mixed case and all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method")]
pub enum UiMethod {
    /// Answered with `value` (one of `options`) or `cancelled`.
    #[serde(rename = "select")]
    Select {
        title: String,
        options: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    /// Answered with `confirmed` or `cancelled` (which reads as false).
    #[serde(rename = "confirm")]
    Confirm {
        title: String,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    /// Answered with `value` or `cancelled`.
    #[serde(rename = "input")]
    Input {
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        placeholder: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    /// Answered with `value` or `cancelled`. TypeScript pi 1.6 sends no `timeout` for it.
    #[serde(rename = "editor")]
    Editor {
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefill: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    #[serde(rename = "notify")]
    Notify {
        message: String,
        #[serde(
            rename = "notifyType",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        notify_type: Option<NotifyType>,
    },
    /// Sets (or, without `statusText`, clears) the status entry `statusKey`.
    #[serde(rename = "setStatus")]
    SetStatus {
        #[serde(rename = "statusKey")]
        status_key: String,
        #[serde(
            rename = "statusText",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        status_text: Option<String>,
    },
    /// Sets (or, without `widgetLines`, clears) the widget `widgetKey`.
    #[serde(rename = "setWidget")]
    SetWidget {
        #[serde(rename = "widgetKey")]
        widget_key: String,
        #[serde(
            rename = "widgetLines",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        widget_lines: Option<Vec<String>>,
        #[serde(
            rename = "widgetPlacement",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        widget_placement: Option<WidgetPlacement>,
    },
    #[serde(rename = "setTitle")]
    SetTitle { title: String },
    #[serde(rename = "set_editor_text")]
    SetEditorText { text: String },
}

impl UiMethod {
    /// Whether the client answers it (a dialog) or not (fire-and-forget).
    pub fn expects_answer(&self) -> bool {
        matches!(
            self,
            UiMethod::Select { .. }
                | UiMethod::Confirm { .. }
                | UiMethod::Input { .. }
                | UiMethod::Editor { .. }
        )
    }
}

impl UiMethod {
    /// Whether the client is expected to answer.
    pub fn is_dialog(&self) -> bool {
        matches!(
            self,
            UiMethod::Select { .. }
                | UiMethod::Confirm { .. }
                | UiMethod::Input { .. }
                | UiMethod::Editor { .. }
        )
    }
}

/// The client's answer to a dialog. The wire allows any mix of the three fields; TypeScript
/// pi reads them in a fixed order, which [`ExtensionUiResponse::answer`] reproduces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "extension_ui_response")]
pub struct ExtensionUiResponse {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled: Option<bool>,
}

/// What a dialog's answer means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiAnswer {
    Value(String),
    Confirmed(bool),
    /// `cancelled: true`, or an answer that carries nothing the dialog can use.
    Cancelled,
}

impl ExtensionUiResponse {
    /// `cancelled: true` wins over everything; then `value`, then `confirmed`.
    pub fn answer(&self) -> UiAnswer {
        if self.cancelled == Some(true) {
            return UiAnswer::Cancelled;
        }
        match (&self.value, self.confirmed) {
            (Some(v), _) => UiAnswer::Value(v.clone()),
            (None, Some(c)) => UiAnswer::Confirmed(c),
            (None, None) => UiAnswer::Cancelled,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn requests_have_ts_pi_method_names_and_optional_fields_left_out() {
        let r = ExtensionUiRequest {
            id: "u1".into(),
            method: UiMethod::SetStatus {
                status_key: "k".into(),
                status_text: None,
            },
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"type": "extension_ui_request", "id": "u1", "method": "setStatus",
                "statusKey": "k"})
        );
    }

    #[test]
    fn a_cancel_wins_over_a_value_and_an_empty_answer_cancels() {
        let a: ExtensionUiResponse = serde_json::from_value(json!({
            "type": "extension_ui_response", "id": "u", "value": "x", "cancelled": true}))
        .unwrap();
        assert_eq!(a.answer(), UiAnswer::Cancelled);
        let b: ExtensionUiResponse =
            serde_json::from_value(json!({"type": "extension_ui_response", "id": "u"})).unwrap();
        assert_eq!(b.answer(), UiAnswer::Cancelled);
        let c: ExtensionUiResponse = serde_json::from_value(json!({
            "type": "extension_ui_response", "id": "u", "confirmed": false, "cancelled": false}))
        .unwrap();
        assert_eq!(c.answer(), UiAnswer::Confirmed(false));
    }
}
