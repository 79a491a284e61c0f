//! `/settings`: opens the settings editor (`settings_editor`) and carries out what it asks —
//! writes the changed key to the scope's `settings.json` (`config::settings_file`: every other
//! key kept; a file that cannot be read or written is named and left as it was) and applies
//! what pi can apply at once: the theme, the queue modes, auto-compaction, hiding thinking.
//! The rest take effect where pi reads them (the next start, session or `/reload`), which the
//! editor says.

use crossterm::event::KeyEvent;
use serde_json::Value;

use super::super::app::App;
use super::super::settings_editor::{Action, Kind, Scope, SettingItem, SettingsEditor};
use super::super::theme_state::origin_text;
use crate::config::QueueMode;

pub(super) fn open(app: &mut App) {
    let user = crate::config::settings_path(&app.agent_dir);
    let project = app
        .controller
        .project_trusted()
        .then(|| app.cwd.join(".pi").join("settings.json"));
    let catalog = &app.themes.catalog;
    let themes = catalog
        .names()
        .into_iter()
        .map(|n| {
            let from = origin_text(catalog, &n);
            (n, from)
        })
        .collect();
    app.settings = Some(SettingsEditor::new(
        user,
        project,
        themes,
        app.theme.name.clone(),
    ));
}

/// A key while `/settings` is open.
pub fn on_key(app: &mut App, key: KeyEvent) {
    let Some(editor) = app.settings.as_mut() else {
        return;
    };
    match editor.handle_key(key) {
        Action::None => {}
        Action::Close => app.settings = None,
        Action::Preview(name) => {
            // Only themes from the list are previewed; one that vanished meanwhile stays out.
            let _ = app.switch_theme(&name);
        }
        Action::Set { item, scope, value } => set(app, item, scope, value),
    }
}

fn set(app: &mut App, item: &'static SettingItem, scope: Scope, value: Value) {
    let Some(editor) = app.settings.as_mut() else {
        return;
    };
    let path = editor.path(scope).to_path_buf();
    if let Err(e) = crate::config::settings_file::set(&path, item.key, Some(value.clone())) {
        editor.failed(format!("Not saved: {e}"));
        if item.kind == Kind::Theme {
            // The theme list showed a preview: back to the theme in use.
            let active = editor.active_theme().to_string();
            let _ = app.switch_theme(&active);
        }
        return;
    }
    let shown = match &value {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    editor.stored(item, scope, value);
    let effective = match item.kind {
        Kind::Theme => editor.theme_in_files(),
        _ => editor.effective(item),
    };
    let later = apply(app, item, &effective);
    let Some(editor) = app.settings.as_mut() else {
        return;
    };
    let now = editor.effective(item);
    let mut note = format!("{} = {shown} saved to {}", item.label, path.display());
    if now != shown {
        note.push_str(&format!(
            "; {now} stays in effect here (the project's settings)"
        ));
    } else if let Some(later) = later {
        note.push_str(&format!(" ({later})"));
    }
    editor.say(note);
}

/// What a change means now; `Some` when it applies only later.
fn apply(app: &mut App, item: &SettingItem, effective: &str) -> Option<&'static str> {
    match item.key {
        ["compaction", "enabled"] => {
            app.controller.set_auto_compaction(effective == "true");
            None
        }
        ["steeringMode"] => {
            app.controller
                .set_steering_mode(QueueMode::parse(effective).unwrap_or_default());
            None
        }
        ["followUpMode"] => {
            app.controller
                .set_follow_up_mode(QueueMode::parse(effective).unwrap_or_default());
            None
        }
        ["hideThinkingBlock"] => {
            app.transcript.show_thinking = effective != "true";
            app.apply_theme(app.theme.clone());
            None
        }
        ["theme"] => {
            app.themes.cli_choice = None;
            if let Err(why) = app.switch_theme(effective) {
                if let Some(e) = app.settings.as_mut() {
                    e.failed(why);
                }
            }
            if let Some(e) = app.settings.as_mut() {
                e.set_active_theme(&app.theme.name);
            }
            None
        }
        ["cacheWarming"] => Some("from the next start or /reload"),
        ["defaultThinkingLevel"] => Some("for the next session"),
        _ => Some("from the next start"),
    }
}
