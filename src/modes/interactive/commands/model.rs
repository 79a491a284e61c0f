//! The model and the thinking level: `/model` and its picker (Ctrl+L), `/thinking` and its
//! picker, Ctrl+S in either to save the choice as the default (as pi 1.6), Ctrl+P and
//! Shift+Ctrl+P through the model scope, Shift+Tab through the thinking levels.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::super::app::{App, DialogReply};
use super::super::dialog::ActiveDialog;
use super::Pick;
use crate::controller::ModelInfo;
use crate::hooks::ui::Dialog;

/// pi 1.6's words for each thinking level in its picker.
fn level_description(level: &str) -> &'static str {
    match level {
        "off" => "No reasoning",
        "minimal" => "Very brief reasoning (~1k tokens)",
        "low" => "Light reasoning (~2k tokens)",
        "medium" => "Moderate reasoning (~8k tokens)",
        "high" => "Deep reasoning (~16k tokens)",
        "xhigh" => "Extra-high reasoning (~32k tokens)",
        _ => "Maximum reasoning",
    }
}

const SAVE_HINT: &str = "Enter to select · Ctrl+S to set as default · Esc to cancel";

/// The model's name when it says more than its id (pi 1.6 shows it then, in parentheses).
fn distinct_name(m: &ModelInfo) -> Option<&str> {
    let words = |s: &str| -> Vec<String> {
        s.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(String::from)
            .collect()
    };
    let name = m.name.trim();
    if name.is_empty() {
        return None;
    }
    let id_words = words(&m.id);
    let compact: String = id_words.concat();
    let covered =
        |w: &String| id_words.contains(w) || (w.len() > 1 && compact.contains(w.as_str()));
    (!words(name).iter().all(covered)).then_some(name)
}

/// `/model [search]`: the picker, the current model first and marked ✓, the default next
/// (`· default`), each row `id (name) [provider]`. `search` that names one model exactly
/// switches to it at once, as in pi 1.6.
pub(super) fn pick_model(app: &mut App, args: &str) {
    let c = app.controller.clone();
    let all = c.get_available_models().models;
    if all.is_empty() {
        app.notify("No models are configured", app.theme.error);
        return;
    }
    if !args.is_empty() {
        let exact = all.iter().find(|m| {
            m.id.eq_ignore_ascii_case(args)
                || format!("{}/{}", m.provider, m.id).eq_ignore_ascii_case(args)
        });
        if let Some(m) = exact {
            let (provider, id) = (m.provider.clone(), m.id.clone());
            set_model(app, &provider, &id, false);
            return;
        }
    }
    let scoped = !c.scoped_models().is_empty();
    open_model_picker(app, args, scoped);
}

/// The model picker over every model with auth or (`scoped`) the scope's models.
fn open_model_picker(app: &mut App, filter: &str, scoped: bool) {
    let c = app.controller.clone();
    let all = c.get_available_models().models;
    let scope = c.scoped_models();
    let current = c.get_state().model;
    let default = c.default_model();
    let is = |m: &ModelInfo, p: &str, id: &str| m.provider == p && m.id == id;
    let is_current = |m: &ModelInfo| current.as_ref().is_some_and(|c| is(m, &c.provider, &c.id));
    let is_default = |m: &ModelInfo| default.as_ref().is_some_and(|(p, id)| is(m, p, id));
    let mut models: Vec<ModelInfo> = if scoped {
        scope
            .iter()
            .filter_map(|s| all.iter().find(|m| is(m, &s.provider, &s.id)).cloned())
            .collect()
    } else {
        all.clone()
    };
    if !scoped {
        // As pi 1.6: the current model first, the default second, then by provider.
        models.sort_by_key(|m| (!is_current(m), !is_default(m), m.provider.clone()));
    }
    let rows: Vec<(String, (String, String))> = models
        .iter()
        .map(|m| {
            let mark = if is_current(m) { "✓ " } else { "  " };
            let name = distinct_name(m).map_or(String::new(), |n| format!(" ({n})"));
            let default = if is_default(m) { " · default" } else { "" };
            let label = format!("{mark}{}{name} [{}]{default}", m.id, m.provider);
            (label, (m.provider.clone(), m.id.clone()))
        })
        .collect();
    let head = if scope.is_empty() {
        "Only showing models from configured providers.".to_string()
    } else {
        let (all_word, scoped_word) = if scoped {
            ("all", "[scoped]")
        } else {
            ("[all]", "scoped")
        };
        format!("Scope: {all_word} | {scoped_word} · Tab scope (all/scoped)")
    };
    let mut d = ActiveDialog::new(
        "pi",
        Dialog::Select {
            title: "Model".into(),
            options: rows.iter().map(|r| r.0.clone()).collect(),
        },
        None,
    )
    .with_message(format!("{head}\n{SAVE_HINT}"));
    if !filter.is_empty() {
        d.paste(filter);
    }
    if let Some(r) = rows.iter().find(|r| r.0.starts_with('✓')) {
        d.highlight(&r.0);
    }
    app.dialogs
        .push_front((d, DialogReply::Pi(Pick::Model { rows, scoped })));
}

/// The model picker's answer: `(provider, id)`; `save`: also the default (Ctrl+S).
pub(super) fn set_model(app: &mut App, provider: &str, id: &str, save: bool) {
    let c = app.controller.clone();
    let done = if save {
        c.set_default_model(provider, id)
            .map(|m| format!("Default model: {}/{}", m.provider, m.id))
    } else {
        c.set_model(provider, id)
            .map(|m| format!("Model: {}", m.id))
    };
    match done {
        Ok(text) => app.notify(text, app.theme.muted),
        Err(e) => app.notify(format!("Error: {e}"), app.theme.error),
    }
    app.refresh_footer();
}

/// `/thinking [level]`: the picker of the levels the model supports, the current one marked
/// ✓ and the default `· default`; a level given sets it at once.
pub(super) fn pick_thinking(app: &mut App, args: &str) {
    let c = app.controller.clone();
    let levels = c.get_available_thinking_levels().levels;
    if !args.is_empty() {
        match levels.iter().find(|l| l.eq_ignore_ascii_case(args)) {
            Some(l) => set_thinking(app, l, false),
            None => app.notify(
                format!(
                    "Unknown thinking level \"{args}\". Available levels: {}.",
                    levels.join(", ")
                ),
                app.theme.error,
            ),
        }
        return;
    }
    let current = c.get_state().thinking_level;
    let default = c
        .default_thinking_level()
        .map_or("medium", |l| l.as_str())
        .to_string();
    let rows: Vec<(String, String)> = levels
        .iter()
        .map(|l| {
            let mark = if *l == current { "✓ " } else { "  " };
            (format!("{mark}{l}"), l.clone())
        })
        .collect();
    let details = levels
        .iter()
        .map(|l| {
            let d = level_description(l);
            if *l == default {
                format!("{d} · default")
            } else {
                d.to_string()
            }
        })
        .collect();
    let mut d = ActiveDialog::new(
        "pi",
        Dialog::Select {
            title: "Thinking Level".into(),
            options: rows.iter().map(|r| r.0.clone()).collect(),
        },
        None,
    )
    .with_details(details)
    .with_message(format!(
        "Shift+Tab cycles thinking levels in-session\n{SAVE_HINT}"
    ));
    if let Some(r) = rows.iter().find(|r| r.1 == current) {
        d.highlight(&r.0);
    }
    app.dialogs
        .push_front((d, DialogReply::Pi(Pick::Thinking(rows))));
}

/// The thinking picker's answer; `save`: also the default (Ctrl+S).
pub(super) fn set_thinking(app: &mut App, level: &str, save: bool) {
    let Some(l) = crate::provider::ThinkingLevel::parse(level) else {
        return;
    };
    let c = app.controller.clone();
    let text = if save {
        match c.set_default_thinking_level(l) {
            Ok(_) => format!("Default thinking level: {level}"),
            Err(e) => {
                app.notify(format!("Error: {e}"), app.theme.error);
                return;
            }
        }
    } else {
        c.set_thinking_level(l);
        format!("Thinking level: {level}")
    };
    app.notify(text, app.theme.muted);
    app.refresh_footer();
}

/// Keys the model and thinking pickers take before the dialog: Ctrl+S (select and save as
/// default) and, in the model picker with a scope, Tab (all/scoped). True when taken.
pub(super) fn picker_key(app: &mut App, key: KeyEvent) -> bool {
    let ctrl_s = key.code == KeyCode::Char('s') && key.modifiers.contains(KeyModifiers::CONTROL);
    let Some((d, DialogReply::Pi(pick))) = app.dialogs.front() else {
        return false;
    };
    match pick {
        Pick::Model { rows, scoped } => {
            let scoped = *scoped;
            let highlighted = d
                .highlighted()
                .and_then(|h| rows.iter().find(|r| r.0 == h))
                .map(|r| r.1.clone());
            let filter = d.filter().to_string();
            if ctrl_s {
                app.dialogs.pop_front();
                if let Some((provider, id)) = highlighted {
                    set_model(app, &provider, &id, true);
                }
                return true;
            }
            if key.code == KeyCode::Tab && !app.controller.scoped_models().is_empty() {
                app.dialogs.pop_front();
                open_model_picker(app, &filter, !scoped);
                return true;
            }
            false
        }
        Pick::Thinking(rows) if ctrl_s => {
            let highlighted = d
                .highlighted()
                .and_then(|h| rows.iter().find(|r| r.0 == h))
                .map(|r| r.1.clone());
            app.dialogs.pop_front();
            if let Some(level) = highlighted {
                set_thinking(app, &level, true);
            }
            true
        }
        _ => false,
    }
}

pub fn cycle_thinking(app: &mut App) {
    match app.controller.cycle_thinking_level() {
        Some(o) => app.notify(format!("Thinking level: {}", o.level), app.theme.muted),
        None => app.notify("Current model does not support thinking", app.theme.muted),
    }
    app.refresh_footer();
}

/// Ctrl+P (`forward`) and Shift+Ctrl+P: the next or previous model of the scope, with pi
/// 1.6's words.
pub fn cycle_model(app: &mut App, forward: bool) {
    let c = app.controller.clone();
    match c.cycle_model_towards(forward) {
        Ok(Some(m)) => {
            let name = if m.model.name.is_empty() {
                &m.model.id
            } else {
                &m.model.name
            };
            let thinking = if m.model.reasoning && m.thinking_level != "off" {
                format!(" (thinking: {})", m.thinking_level)
            } else {
                String::new()
            };
            app.notify(format!("Switched to {name}{thinking}"), app.theme.muted);
        }
        Ok(None) if c.scoped_models().is_empty() => {
            app.notify("Only one model available", app.theme.muted)
        }
        Ok(None) => app.notify("Only one model in scope", app.theme.muted),
        Err(e) => app.notify(format!("Error: {e}"), app.theme.error),
    }
    app.refresh_footer();
}
