//! `/trust`: the project's remembered trust decision, for the next start.

use super::super::app::{App, DialogReply};
use super::super::dialog::ActiveDialog;
use super::Pick;
use crate::hooks::ui::Dialog;

pub(super) const TRUST_ALWAYS: &str = "Always trust this project";

pub(super) const TRUST_NEVER: &str = "Never trust this project";

/// `/trust`: remember whether this project is trusted.
pub(super) fn pick_trust(app: &mut App) {
    let options = vec![TRUST_ALWAYS.to_string(), TRUST_NEVER.to_string()];
    let d = ActiveDialog::new(
        "pi",
        Dialog::Select {
            title: format!("Trust {}?", app.cwd.display()),
            options,
        },
        None,
    );
    app.dialogs.push_back((d, DialogReply::Pi(Pick::Trust)));
}

/// The answer to the trust question, remembered for the next start.
pub(super) fn remember_trust(app: &mut App, value: &str) {
    let trusted = value == TRUST_ALWAYS;
    let store = crate::resources::trust::TrustStore::new(&app.agent_dir);
    match store.remember(&app.cwd, trusted) {
        Ok(()) => {
            let verdict = if trusted { "trusted" } else { "not trusted" };
            app.transcript.notice(
                format!(
                    "This project is {verdict} from the next start of pi here (remembered in {})",
                    store.path().display()
                ),
                app.theme.muted,
            );
        }
        Err(e) => app.notify(format!("Error: {e}"), app.theme.error),
    }
}
