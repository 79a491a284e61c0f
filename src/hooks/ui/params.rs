//! A hook's `ui.*` call params, checked: every field's type, the required ones present, the
//! choices spelled as the protocol spells them, so a front end only ever sees a well-formed
//! call and a hook always learns which field was wrong.

use std::time::Duration;

use serde_json::Value;

use super::{Dialog, NotifyLevel, UiUpdate, WidgetPlacement};

/// A validated `ui.*` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiCall {
    Dialog {
        dialog: Dialog,
        /// The hook's own `timeout_ms`: the dialog is dismissed when it passes.
        timeout: Option<Duration>,
    },
    Update(UiUpdate),
    /// `ui.set_theme`: switch to the theme called `name`.
    SetTheme {
        name: String,
    },
}

/// Why a `ui.*` call's params were refused; the message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UiParamError {
    #[error("{method}: `{field}` ({what}) is required")]
    Missing {
        method: &'static str,
        field: &'static str,
        what: &'static str,
    },
    #[error("{method}: `{field}` must be {what}")]
    Invalid {
        method: &'static str,
        field: &'static str,
        what: &'static str,
    },
    #[error("unknown ui method {0:?}")]
    UnknownMethod(String),
}

/// Every `ui.*` method, in the order of the host-call table.
pub const UI_METHODS: &[&str] = &[
    "ui.notify",
    "ui.confirm",
    "ui.select",
    "ui.input",
    "ui.editor",
    "ui.set_status",
    "ui.set_widget",
    "ui.set_title",
    "ui.set_editor_text",
    "ui.set_theme",
];

struct Params<'a> {
    method: &'static str,
    params: &'a Value,
}

impl Params<'_> {
    fn present(&self, field: &str) -> Option<&Value> {
        self.params.get(field).filter(|v| !v.is_null())
    }

    fn string(&self, field: &'static str) -> Result<String, UiParamError> {
        match self.present(field) {
            None => Err(UiParamError::Missing {
                method: self.method,
                field,
                what: "a string",
            }),
            Some(v) => v.as_str().map(str::to_string).ok_or(UiParamError::Invalid {
                method: self.method,
                field,
                what: "a string",
            }),
        }
    }

    fn opt_string(&self, field: &'static str) -> Result<Option<String>, UiParamError> {
        match self.present(field) {
            None => Ok(None),
            Some(_) => self.string(field).map(Some),
        }
    }

    fn opt_strings(&self, field: &'static str) -> Result<Option<Vec<String>>, UiParamError> {
        let Some(v) = self.present(field) else {
            return Ok(None);
        };
        let bad = UiParamError::Invalid {
            method: self.method,
            field,
            what: "a list of strings",
        };
        let items = v.as_array().ok_or_else(|| bad.clone())?;
        items
            .iter()
            .map(|i| i.as_str().map(str::to_string).ok_or_else(|| bad.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    fn timeout(&self) -> Result<Option<Duration>, UiParamError> {
        let Some(v) = self.present("timeout_ms") else {
            return Ok(None);
        };
        match v.as_u64() {
            Some(ms) if ms > 0 => Ok(Some(Duration::from_millis(ms))),
            _ => Err(UiParamError::Invalid {
                method: self.method,
                field: "timeout_ms",
                what: "a positive whole number of milliseconds",
            }),
        }
    }

    /// One of `allowed` (its wire spelling) or absent.
    fn opt_choice<T: Copy>(
        &self,
        field: &'static str,
        what: &'static str,
        allowed: &[(&str, T)],
    ) -> Result<Option<T>, UiParamError> {
        let Some(v) = self.present(field) else {
            return Ok(None);
        };
        v.as_str()
            .and_then(|s| allowed.iter().find(|(n, _)| *n == s).map(|(_, t)| *t))
            .map(Some)
            .ok_or(UiParamError::Invalid {
                method: self.method,
                field,
                what,
            })
    }
}

impl UiCall {
    /// Validates `params` for `method` (one of [`UI_METHODS`]). Unknown fields are ignored,
    /// as everywhere in the protocol; a `null` field counts as absent.
    pub fn parse(method: &str, params: &Value) -> Result<UiCall, UiParamError> {
        let Some(&method) = UI_METHODS.iter().find(|m| **m == method) else {
            return Err(UiParamError::UnknownMethod(method.to_string()));
        };
        let p = Params { method, params };
        let dialog = |dialog| -> Result<UiCall, UiParamError> {
            Ok(UiCall::Dialog {
                dialog,
                timeout: p.timeout()?,
            })
        };
        match method {
            "ui.confirm" => dialog(Dialog::Confirm {
                title: p.string("title")?,
                message: p.string("message")?,
            }),
            "ui.select" => {
                let options = p.opt_strings("options")?.ok_or(UiParamError::Missing {
                    method,
                    field: "options",
                    what: "a list of strings",
                })?;
                if options.is_empty() {
                    return Err(UiParamError::Invalid {
                        method,
                        field: "options",
                        what: "a non-empty list of strings",
                    });
                }
                dialog(Dialog::Select {
                    title: p.string("title")?,
                    options,
                })
            }
            "ui.input" => dialog(Dialog::Input {
                title: p.string("title")?,
                placeholder: p.opt_string("placeholder")?,
            }),
            "ui.editor" => dialog(Dialog::Editor {
                title: p.string("title")?,
                prefill: p.opt_string("prefill")?,
            }),
            "ui.notify" => Ok(UiCall::Update(UiUpdate::Notify {
                message: p.string("message")?,
                level: p
                    .opt_choice(
                        "level",
                        "\"info\", \"warning\" or \"error\"",
                        &[
                            ("info", NotifyLevel::Info),
                            ("warning", NotifyLevel::Warning),
                            ("error", NotifyLevel::Error),
                        ],
                    )?
                    .unwrap_or_default(),
            })),
            "ui.set_status" => Ok(UiCall::Update(UiUpdate::SetStatus {
                key: p.string("key")?,
                text: p.opt_string("text")?,
            })),
            "ui.set_widget" => Ok(UiCall::Update(UiUpdate::SetWidget {
                key: p.string("key")?,
                lines: p.opt_strings("lines")?,
                placement: p.opt_choice(
                    "placement",
                    "\"above_editor\" or \"below_editor\"",
                    &[
                        ("above_editor", WidgetPlacement::AboveEditor),
                        ("below_editor", WidgetPlacement::BelowEditor),
                    ],
                )?,
            })),
            "ui.set_title" => Ok(UiCall::Update(UiUpdate::SetTitle {
                title: p.string("title")?,
            })),
            "ui.set_theme" => Ok(UiCall::SetTheme {
                name: p.string("name")?,
            }),
            // The only method left in UI_METHODS.
            _ => Ok(UiCall::Update(UiUpdate::SetEditorText {
                text: p.string("text")?,
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(method: &str, params: Value) -> Result<UiCall, String> {
        UiCall::parse(method, &params).map_err(|e| e.to_string())
    }

    #[test]
    fn dialogs_parse_with_their_optional_fields_and_the_hooks_timeout() {
        assert_eq!(
            parse(
                "ui.select",
                json!({"title": "t", "options": ["a"], "timeout_ms": 50})
            ),
            Ok(UiCall::Dialog {
                dialog: Dialog::Select {
                    title: "t".into(),
                    options: vec!["a".into()]
                },
                timeout: Some(Duration::from_millis(50)),
            })
        );
        assert_eq!(
            parse("ui.editor", json!({"title": "t", "prefill": null})),
            Ok(UiCall::Dialog {
                dialog: Dialog::Editor {
                    title: "t".into(),
                    prefill: None
                },
                timeout: None,
            })
        );
    }

    #[test]
    fn bad_params_name_the_method_and_the_field() {
        let cases = [
            ("ui.confirm", json!({"title": "t"}), "ui.confirm: `message`"),
            (
                "ui.select",
                json!({"title": "t", "options": []}),
                "`options`",
            ),
            (
                "ui.select",
                json!({"title": "t", "options": [1]}),
                "`options`",
            ),
            ("ui.input", json!({"title": 3}), "ui.input: `title` must be"),
            (
                "ui.confirm",
                json!({"title": "t", "message": "m", "timeout_ms": 0}),
                "`timeout_ms`",
            ),
            (
                "ui.notify",
                json!({"message": "m", "level": "loud"}),
                "`level`",
            ),
            (
                "ui.set_widget",
                json!({"key": "k", "lines": "x"}),
                "`lines`",
            ),
            (
                "ui.set_widget",
                json!({"key": "k", "placement": "left"}),
                "`placement`",
            ),
            ("ui.set_title", json!({}), "ui.set_title: `title`"),
            ("ui.set_editor_text", json!({"text": false}), "`text`"),
            ("ui.set_theme", json!({}), "ui.set_theme: `name`"),
        ];
        for (method, params, want) in cases {
            let got = parse(method, params.clone()).expect_err(method);
            assert!(got.contains(want), "{method} {params}: {got}");
        }
    }
}
