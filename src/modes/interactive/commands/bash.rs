//! `!cmd` and `!!cmd`: a shell command the user runs through the controller's `user_bash`.

use std::time::Instant;

use super::super::app::{App, AppMsg};
use super::super::transcript::{BashView, Item};
use crate::controller::BashRequest;

/// `!cmd` (output added to the context with the next prompt) or `!!cmd` (not added).
pub fn run_bash(app: &mut App, command: String, exclude: bool) {
    if command.is_empty() {
        app.notify(
            "Usage: !command (or !!command to keep it out of the context)",
            app.theme.error,
        );
        return;
    }
    app.transcript.push(Item::Bash(BashView {
        command: command.clone(),
        output: String::new(),
        status: None,
        excluded: exclude,
    }));
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let error = app.theme.error;
    let started = Instant::now();
    tokio::spawn(async move {
        let req = BashRequest {
            command,
            exclude_from_context: exclude,
            id: None,
        };
        let result = c.bash(req).await;
        let _ = tx.send(AppMsg::BashDone(result.map_err(|e| e.to_string()), started));
        let _ = error;
    });
}
