//! `/import <path.jsonl>`, as pi 1.6: asks `Replace current session with <path>?`, copies the
//! file into this project's session directory (keeping its id; see [`crate::session::import`])
//! and continues in the copy as `/resume` would, saying `Session imported from: <path>`. A
//! copy that is not opened after all (a bad file, a hook's cancel) is removed again.

use super::super::app::{App, AppMsg, DialogReply};
use super::super::dialog::ActiveDialog;
use super::Pick;
use crate::hooks::ui::Dialog;
use crate::session::import::{copy_into, Imported};

/// The path argument as 1.6 reads it: quoted (`'…'` or `"…"`), else up to the first space.
fn path_argument(args: &str) -> Option<&str> {
    let args = args.trim_start();
    let first = args.chars().next()?;
    if first == '"' || first == '\'' {
        let rest = &args[1..];
        return rest.find(first).map(|end| &rest[..end]);
    }
    Some(args.split_whitespace().next().unwrap_or(args))
}

/// `/import [path]`: the usage line without a path, else 1.6's question.
pub(super) fn ask(app: &mut App, args: &str) {
    let Some(path) = path_argument(args).filter(|p| !p.is_empty()) else {
        app.transcript
            .notice("Error: Usage: /import <path.jsonl>", app.theme.error);
        return;
    };
    let d = ActiveDialog::new(
        "pi",
        Dialog::Confirm {
            title: "Import session".into(),
            message: format!("Replace current session with {path}?"),
        },
        None,
    );
    app.dialogs
        .push_back((d, DialogReply::Pi(Pick::Import(path.to_string()))));
}

/// The question was answered: `yes` imports `path` (as typed).
pub(super) fn answered(app: &mut App, path: String, yes: bool) {
    let (muted, error) = (app.theme.muted, app.theme.error);
    if !yes {
        app.transcript.notice("Import cancelled", muted);
        return;
    }
    let home = dirs::home_dir();
    let typed = crate::session::paths::expand_tilde(&path, home.as_deref());
    let source = crate::session::paths::resolve_path(&app.cwd, &typed);
    let c = app.controller.clone();
    let Some(dir) = c
        .get_state()
        .session_file
        .and_then(|f| std::path::Path::new(&f).parent().map(|p| p.to_path_buf()))
    else {
        app.transcript.notice(
            "Error: Failed to import session: this session is not saved, so there is no session folder",
            error,
        );
        return;
    };
    let Imported {
        path: stored,
        copied,
    } = match copy_into(&source, &dir) {
        Ok(i) => i,
        Err(e) => {
            app.transcript
                .notice(format!("Error: Failed to import session: {e}"), error);
            return;
        }
    };
    let tx = app.tx.clone();
    tokio::spawn(async move {
        let outcome = c.switch_session(&stored.display().to_string()).await;
        let opened = matches!(&outcome, Ok(o) if !o.cancelled);
        if copied && !opened {
            let _ = std::fs::remove_file(&stored);
        }
        let msg = match outcome {
            Ok(o) if !o.cancelled => {
                let _ = tx.send(AppMsg::SessionChanged);
                AppMsg::Notice(format!("Session imported from: {path}"), muted)
            }
            Ok(_) => AppMsg::Notice("Import cancelled".into(), muted),
            Err(e) => AppMsg::Notice(format!("Error: Failed to import session: {e}"), error),
        };
        let _ = tx.send(msg);
    });
}

#[cfg(test)]
mod tests {
    use super::path_argument;

    #[test]
    fn the_path_is_quoted_or_the_first_word() {
        assert_eq!(path_argument("a b.jsonl"), Some("a"));
        assert_eq!(path_argument("\"a b.jsonl\" x"), Some("a b.jsonl"));
        assert_eq!(path_argument("'a b.jsonl'"), Some("a b.jsonl"));
        assert_eq!(path_argument("\"open"), None);
        assert_eq!(path_argument(""), None);
    }
}
