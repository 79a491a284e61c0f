//! The model and the thinking level: `/model` and its picker, Ctrl+P and Shift+Tab.

use super::super::app::{App, DialogReply};
use super::super::dialog::ActiveDialog;
use super::Pick;
use crate::hooks::ui::Dialog;

/// `/model`: choose the model.
pub(super) fn pick_model(app: &mut App, args: &str) {
    let c = app.controller.clone();
    let error = app.theme.error;
    let models = c.get_available_models().models;
    if models.is_empty() {
        app.notify("No models are configured", error);
        return;
    }
    let options: Vec<String> = models
        .iter()
        .map(|m| format!("{}/{}", m.provider, m.id))
        .collect();
    let details: Vec<String> = models.iter().map(|m| m.name.clone()).collect();
    let mut d = ActiveDialog::new(
        "pi",
        Dialog::Select {
            title: "Model".into(),
            options,
        },
        None,
    )
    .with_details(details);
    if !args.is_empty() {
        d.paste(args);
    }
    app.dialogs.push_back((d, DialogReply::Pi(Pick::Model)));
}

/// `provider/id` from the model picker.
pub(super) fn set_picked_model(app: &mut App, value: &str) {
    let Some((provider, id)) = value.split_once('/') else {
        return;
    };
    let c = app.controller.clone();
    match c.set_model(provider, id) {
        Ok(m) => {
            app.notify(format!("Model: {}/{}", m.provider, m.id), app.theme.muted);
            app.refresh_footer();
        }
        Err(e) => app.notify(format!("Error: {e}"), app.theme.error),
    }
}

pub fn cycle_thinking(app: &mut App) {
    match app.controller.cycle_thinking_level() {
        Some(o) => app.notify(format!("Thinking: {}", o.level), app.theme.muted),
        None => app.notify("This model has no thinking levels", app.theme.muted),
    }
    app.refresh_footer();
}

pub fn cycle_model(app: &mut App) {
    match app.controller.cycle_model() {
        Ok(Some(m)) => app.notify(
            format!("Model: {}/{}", m.model.provider, m.model.id),
            app.theme.muted,
        ),
        Ok(None) => app.notify("Only one model to cycle through", app.theme.muted),
        Err(e) => app.notify(format!("Error: {e}"), app.theme.error),
    }
    app.refresh_footer();
}
