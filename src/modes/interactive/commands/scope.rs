//! `/scoped-models`: which models Ctrl+P cycles through, as pi 1.6's "Model Configuration":
//! Enter toggles the highlighted model, Ctrl+A enables all (or all the filter shows), Ctrl+X
//! clears them, Ctrl+P toggles the highlighted model's provider, Ctrl+S saves the selection as
//! `enabledModels`. Each change applies to this run at once; the list stays open until Esc.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::super::app::{App, DialogReply};
use super::super::dialog::ActiveDialog;
use super::Pick;
use crate::config::ScopedModel;
use crate::hooks::ui::Dialog;

/// The editor's state between its dialogs: the models with auth (`provider/id`), and the
/// enabled ones in cycle order (`None`: all of them, no scope).
#[derive(Debug, Clone)]
pub struct ScopeEdit {
    all: Vec<String>,
    enabled: Option<Vec<String>>,
    /// Unsaved changes since the last Ctrl+S.
    dirty: bool,
    /// The row labels of the dialog shown, and the `provider/id` each stands for.
    rows: Vec<(String, String)>,
}

impl ScopeEdit {
    fn is_enabled(&self, id: &str) -> bool {
        self.enabled
            .as_ref()
            .is_none_or(|e| e.iter().any(|x| x == id))
    }

    /// An explicit list that covers every model is "all" again (pi 1.6's rule).
    fn normalized(&self, list: Vec<String>) -> Option<Vec<String>> {
        let covers = list.len() == self.all.len() && self.all.iter().all(|a| list.contains(a));
        (!covers).then_some(list)
    }

    fn toggle(&mut self, id: &str) {
        self.enabled = match self.enabled.take() {
            None => Some(self.all.iter().filter(|a| *a != id).cloned().collect()),
            Some(mut e) => match e.iter().position(|x| x == id) {
                Some(i) => {
                    e.remove(i);
                    Some(e)
                }
                None => {
                    e.push(id.to_string());
                    self.normalized(e)
                }
            },
        };
        self.dirty = true;
    }

    fn enable(&mut self, ids: &[String]) {
        if let Some(mut e) = self.enabled.take() {
            for id in ids {
                if !e.contains(id) {
                    e.push(id.clone());
                }
            }
            self.enabled = self.normalized(e);
        }
        self.dirty = true;
    }

    fn clear(&mut self, ids: &[String]) {
        let kept = match self.enabled.take() {
            None => self.all.clone(),
            Some(e) => e,
        };
        self.enabled = Some(kept.into_iter().filter(|x| !ids.contains(x)).collect());
        self.dirty = true;
    }

    /// Enabled models first, in cycle order, then the rest.
    fn order(&self) -> Vec<String> {
        match &self.enabled {
            None => self.all.clone(),
            Some(e) => e
                .iter()
                .filter(|x| self.all.contains(x))
                .chain(self.all.iter().filter(|a| !e.contains(a)))
                .cloned()
                .collect(),
        }
    }

    fn footer(&self) -> String {
        let count = match &self.enabled {
            None => "all enabled".to_string(),
            Some(e) => format!(
                "{}/{} enabled",
                e.iter().filter(|x| self.all.contains(x)).count(),
                self.all.len()
            ),
        };
        let unsaved = if self.dirty { " (unsaved)" } else { "" };
        format!(
            "Enter toggle · Ctrl+A all · Ctrl+X clear · Ctrl+P provider · Ctrl+S save · {count}{unsaved}"
        )
    }
}

/// `/scoped-models`: the editor, starting from this run's scope.
pub(super) fn edit_scope(app: &mut App) {
    let c = app.controller.clone();
    let all: Vec<String> = c
        .get_available_models()
        .models
        .iter()
        .map(|m| format!("{}/{}", m.provider, m.id))
        .collect();
    if all.is_empty() {
        app.notify("No models are configured", app.theme.error);
        return;
    }
    let scope = c.scoped_models();
    let enabled = (!scope.is_empty()).then(|| scope.iter().map(ScopedModel::reference).collect());
    let edit = ScopeEdit {
        all,
        enabled,
        dirty: false,
        rows: Vec::new(),
    };
    show(app, edit, "", None);
}

/// Shows the editor for `edit`, with the filter `filter` and the cursor on `at` (a
/// `provider/id`).
fn show(app: &mut App, mut edit: ScopeEdit, filter: &str, at: Option<&str>) {
    edit.rows = edit
        .order()
        .into_iter()
        .map(|id| {
            let mark = if edit.is_enabled(&id) { "✓ " } else { "  " };
            let (provider, model) = id.split_once('/').unwrap_or(("", id.as_str()));
            (format!("{mark}{model} [{provider}]"), id.clone())
        })
        .collect();
    let mut d = ActiveDialog::new(
        "pi",
        Dialog::Select {
            title: "Model Configuration".into(),
            options: edit.rows.iter().map(|r| r.0.clone()).collect(),
        },
        None,
    )
    .with_message(format!(
        "Session-only. Ctrl+S to save to settings.\n{}",
        edit.footer()
    ));
    if !filter.is_empty() {
        d.paste(filter);
    }
    if let Some(row) = at.and_then(|id| edit.rows.iter().find(|r| r.1 == id)) {
        d.highlight(&row.0);
    }
    app.dialogs
        .push_front((d, DialogReply::Pi(Pick::Scope(Box::new(edit)))));
}

/// The scope `edit` stands for applied to the run (none when all or none are enabled).
fn apply(app: &App, edit: &ScopeEdit) {
    let scope = match &edit.enabled {
        Some(e) if e.iter().any(|x| edit.all.contains(x)) => e
            .iter()
            .filter_map(|x| x.split_once('/'))
            .map(|(p, id)| ScopedModel {
                provider: p.to_string(),
                id: id.to_string(),
                thinking: None,
            })
            .collect(),
        _ => Vec::new(),
    };
    app.controller.set_scoped_models(scope);
}

/// Enter (toggle), Ctrl+A, Ctrl+X, Ctrl+P and Ctrl+S while the editor is open; true when
/// taken. The editor is then shown again with the change, its filter and cursor kept.
pub(super) fn editor_key(app: &mut App, key: KeyEvent) -> bool {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let k = match key.code {
        KeyCode::Enter => '\n',
        KeyCode::Char(k @ ('a' | 'x' | 'p' | 's')) if ctrl => k,
        _ => return false,
    };
    let Some((d, DialogReply::Pi(Pick::Scope(edit)))) = app.dialogs.front() else {
        return false;
    };
    let mut edit = (**edit).clone();
    let filter = d.filter().to_string();
    let at = d
        .highlighted()
        .and_then(|h| edit.rows.iter().find(|r| r.0 == h))
        .map(|r| r.1.clone());
    // What the filter shows: the targets of Ctrl+A and Ctrl+X (all models without a filter).
    let shown: Vec<String> = edit
        .rows
        .iter()
        .filter(|r| super::super::dialog::subsequence(&filter.to_lowercase(), &r.0.to_lowercase()))
        .map(|r| r.1.clone())
        .collect();
    match k {
        '\n' => match &at {
            Some(id) => edit.toggle(id),
            None => return true,
        },
        'a' => edit.enable(&shown),
        'x' => edit.clear(&shown),
        'p' => {
            let Some(provider) = at.as_deref().and_then(|a| a.split_once('/')).map(|p| p.0) else {
                return true;
            };
            let ids: Vec<String> = edit
                .all
                .iter()
                .filter(|a| a.starts_with(&format!("{provider}/")))
                .cloned()
                .collect();
            if ids.iter().all(|i| edit.is_enabled(i)) {
                edit.clear(&ids);
            } else {
                edit.enable(&ids);
            }
        }
        _ => {
            if let Err(e) = app.controller.save_scoped_models() {
                app.notify(format!("Error: {e}"), app.theme.error);
                return true;
            }
            edit.dirty = false;
            app.notify("Model selection saved to settings", app.theme.muted);
        }
    }
    apply(app, &edit);
    app.dialogs.pop_front();
    show(app, edit, &filter, at.as_deref());
    true
}
