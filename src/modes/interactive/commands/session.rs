//! The commands that change which session, branch or point of the tree is current, or what
//! the session holds: `/name`, `/new`, `/clone`, `/compact`, `/reload`, `/fork`, `/tree`,
//! `/label`, `/resume`, and what their pickers' answers do.

use super::super::app::{App, AppMsg, DialogReply};
use super::super::dialog::ActiveDialog;
use super::{one_line, Pick};
use crate::hooks::ui::Dialog;

/// `/name`: name this session.
pub(super) fn set_name(app: &mut App, args: &str) {
    let c = app.controller.clone();
    let error = app.theme.error;
    if args.is_empty() {
        app.notify("Usage: /name <session name>", error);
    } else if let Err(e) = c.set_session_name(args) {
        app.notify(format!("Error: {e}"), error);
    } else {
        app.refresh_footer();
    }
}

/// `/new`: start a new session.
pub(super) fn new_session(app: &mut App) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let muted = app.theme.muted;
    let error = app.theme.error;
    tokio::spawn(async move {
        match c.new_session(None).await {
            Ok(o) if !o.cancelled => {
                let _ = tx.send(AppMsg::Notice("New session".into(), muted));
                let _ = tx.send(AppMsg::SessionChanged);
            }
            Ok(_) => {
                let _ = tx.send(AppMsg::Notice(
                    "A hook cancelled the new session".into(),
                    error,
                ));
            }
            Err(e) => {
                let _ = tx.send(AppMsg::Notice(format!("Error: {e}"), error));
            }
        }
    });
}

/// `/clone`: a copy of this session to continue separately.
pub(super) fn clone_session(app: &mut App) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let muted = app.theme.muted;
    let error = app.theme.error;
    tokio::spawn(async move {
        match c.clone_session().await {
            Ok(o) if !o.cancelled => {
                let f = o.session_file.unwrap_or_default();
                let _ = tx.send(AppMsg::Notice(format!("Cloned into {f}"), muted));
                let _ = tx.send(AppMsg::Refresh);
            }
            Ok(_) => {
                let _ = tx.send(AppMsg::Notice("A hook cancelled the clone".into(), error));
            }
            Err(e) => {
                let _ = tx.send(AppMsg::Notice(format!("Error: {e}"), error));
            }
        }
    });
}

/// `/compact`: summarize the conversation to free context [instructions].
pub(super) fn compact(app: &mut App, args: &str) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let error = app.theme.error;
    let instructions = (!args.is_empty()).then(|| args.to_string());
    tokio::spawn(async move {
        if let Err(e) = c.compact(instructions).await {
            let _ = tx.send(AppMsg::Notice(format!("Error: {e}"), error));
        }
        let _ = tx.send(AppMsg::Refresh);
    });
}

/// `/reload`: re-read settings, resources and restart hooks.
pub(super) fn reload(app: &mut App) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let muted = app.theme.muted;
    let error = app.theme.error;
    tokio::spawn(async move {
        match c.reload().await {
            Ok(()) => {
                let _ = tx.send(AppMsg::Notice(
                    "Reloaded settings, resources and hooks".into(),
                    muted,
                ));
                let _ = tx.send(AppMsg::Commands);
                let _ = tx.send(AppMsg::Reloaded);
            }
            Err(e) => {
                let _ = tx.send(AppMsg::Notice(format!("Error: {e}"), error));
            }
        }
        let _ = tx.send(AppMsg::Refresh);
    });
}

/// `/fork`: a new session from an earlier message.
pub(super) fn pick_fork(app: &mut App) {
    let c = app.controller.clone();
    let error = app.theme.error;
    let msgs = c.get_fork_messages().messages;
    if msgs.is_empty() {
        app.notify("No user message to fork from", error);
        return;
    }
    let rows: Vec<(String, String)> = msgs
        .iter()
        .rev()
        .enumerate()
        .map(|(i, m)| {
            (
                format!("{}. {}", i + 1, one_line(&m.text, 100)),
                m.entry_id.clone(),
            )
        })
        .collect();
    let options = rows.iter().map(|r| r.0.clone()).collect();
    let d = ActiveDialog::new(
        "pi",
        Dialog::Select {
            title: "Fork from".into(),
            options,
        },
        None,
    );
    app.dialogs
        .push_back((d, DialogReply::Pi(Pick::Fork(rows))));
}

/// `/tree`: move to another point of this session's tree.
pub(super) fn pick_tree(app: &mut App) {
    let c = app.controller.clone();
    let error = app.theme.error;
    match c.get_tree() {
        Ok(view) => {
            let tree: serde_json::Value = serde_json::from_str(view.tree.get()).unwrap_or_default();
            let rows = super::super::tree_rows::rows(&tree, view.leaf_id.as_deref());
            if rows.is_empty() {
                app.notify("The session has no entries yet", error);
                return;
            }
            let options: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
            let mut d = ActiveDialog::new(
                "pi",
                Dialog::Select {
                    title: "Session tree (● is where you are)".into(),
                    options,
                },
                None,
            );
            d.select_last();
            app.dialogs
                .push_back((d, DialogReply::Pi(Pick::Tree(rows))));
        }
        Err(e) => app.notify(format!("Error: {e}"), error),
    }
}

/// `/label`: label the current point of the tree [text].
pub(super) fn label(app: &mut App, args: &str) {
    let c = app.controller.clone();
    let muted = app.theme.muted;
    let error = app.theme.error;
    let leaf = c.get_tree().ok().and_then(|v| v.leaf_id);
    match leaf {
        None => app.notify("Nothing to label yet", error),
        Some(id) => {
            let label = (!args.is_empty()).then_some(args);
            match c.set_label(&id, label) {
                Ok(()) => app.notify(
                    match label {
                        Some(l) => format!("Labelled this point \"{l}\""),
                        None => "Label removed".to_string(),
                    },
                    muted,
                ),
                Err(e) => app.notify(format!("Error: {e}"), error),
            }
        }
    }
}

/// `/resume`: open another session of this project.
pub(super) fn pick_resume(app: &mut App) {
    let c = app.controller.clone();
    let error = app.theme.error;
    let Some(dir) = c
        .get_state()
        .session_file
        .and_then(|f| std::path::Path::new(&f).parent().map(|p| p.to_path_buf()))
    else {
        app.notify(
            "This session is not saved, so there is no session folder",
            error,
        );
        return;
    };
    let rows: Vec<(String, String)> = crate::session::paths::list_session_files(&dir)
        .into_iter()
        .map(|info| {
            let summary = crate::session::paths::summarize(&info.path).unwrap_or_default();
            let row = crate::app::picker::Row {
                modified: info.modified,
                name: summary.name,
                first_message: summary.first_message,
                message_count: summary.message_count,
            };
            (
                crate::app::picker::describe(&row),
                info.path.display().to_string(),
            )
        })
        .collect();
    if rows.is_empty() {
        app.notify("No sessions in this project yet", error);
        return;
    }
    let options = rows.iter().map(|r| r.0.clone()).collect();
    let d = ActiveDialog::new(
        "pi",
        Dialog::Select {
            title: "Resume session".into(),
            options,
        },
        None,
    );
    app.dialogs
        .push_back((d, DialogReply::Pi(Pick::Resume(rows))));
}

pub(super) fn resume(app: &mut App, path: String) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let error = app.theme.error;
    tokio::spawn(async move {
        let ended = c.switch_session(&path).await.map(|o| (o.cancelled, None));
        report_move(&tx, ended, "switch", error);
    });
}

/// Before moving to `entry` in the tree: whether to summarise the branch being left.
pub(super) fn ask_tree_summary(app: &mut App, entry: String) {
    let d = ActiveDialog::new(
        "pi",
        Dialog::Confirm {
            title: "Summarize the branch you are leaving?".into(),
            message: "A summary keeps what was learned there in the new branch's context.".into(),
        },
        None,
    );
    app.dialogs
        .push_back((d, DialogReply::Pi(Pick::TreeSummary(entry))));
}

pub(super) fn fork(app: &mut App, entry: String) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let error = app.theme.error;
    tokio::spawn(async move {
        let ended = c.fork(&entry).await.map(|o| (o.cancelled, o.text));
        report_move(&tx, ended, "fork", error);
    });
}

pub(super) fn navigate(app: &mut App, entry: String, summarize: bool) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let error = app.theme.error;
    let muted = app.theme.muted;
    if summarize {
        app.notify("Summarizing the branch…", muted);
    }
    tokio::spawn(async move {
        let ended = c
            .navigate_tree(&entry, summarize, None, None)
            .await
            .map(|o| (o.cancelled, o.editor_text));
        report_move(&tx, ended, "move", error);
    });
}

/// How a switch, fork or move in the tree ended, told to the app: the new session and the
/// text it leaves in the editor, a hook's cancel, or the error. `ended` is whether a hook
/// cancelled it, and the editor text.
pub(super) fn report_move<E: std::fmt::Display>(
    tx: &tokio::sync::mpsc::UnboundedSender<AppMsg>,
    ended: Result<(bool, Option<String>), E>,
    what: &str,
    error: super::super::text::Style,
) {
    match ended {
        Ok((false, text)) => {
            let _ = tx.send(AppMsg::SessionChanged);
            if let Some(text) = text {
                let _ = tx.send(AppMsg::EditorText(text));
            }
        }
        Ok((true, _)) => {
            let _ = tx.send(AppMsg::Notice(
                format!("A hook cancelled the {what}"),
                error,
            ));
        }
        Err(e) => {
            let _ = tx.send(AppMsg::Notice(format!("Error: {e}"), error));
        }
    }
}
