//! `/login [provider]` and `/logout`: signing in and out without leaving pi. The controller
//! runs the flow and asks its questions through the terminal's own dialogs (the same pickers
//! and inputs hooks' `ui.*` calls open), so this side only starts it and says how it ended.

use super::super::app::{App, AppMsg};

/// `/login [provider]`: a subscription login (or an API key for a provider without one).
pub(super) fn login(app: &mut App, args: &str) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let (muted, accent, error) = (app.theme.muted, app.theme.accent, app.theme.error);
    let provider = (!args.is_empty()).then(|| args.to_string());
    tokio::spawn(async move {
        let (text, colour) = match c.login(provider.as_deref(), true).await {
            Ok(o) if o.cancelled => (o.message, muted),
            Ok(o) => {
                let _ = tx.send(AppMsg::Refresh);
                (o.message, accent)
            }
            Err(e) => (format!("Error: {e}"), error),
        };
        let _ = tx.send(AppMsg::Notice(text, colour));
    });
}

/// `/logout`: remove a credential `/login` stored.
pub(super) fn logout(app: &mut App, args: &str) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let (muted, warning, error) = (app.theme.muted, app.theme.warning, app.theme.error);
    let provider = (!args.is_empty()).then(|| args.to_string());
    tokio::spawn(async move {
        let (text, colour) = match c.logout(provider.as_deref()).await {
            Ok(o) if o.cancelled => (o.message, warning),
            Ok(o) => {
                let _ = tx.send(AppMsg::Refresh);
                (o.message, muted)
            }
            Err(e) => (format!("Error: {e}"), error),
        };
        let _ = tx.send(AppMsg::Notice(text, colour));
    });
}
