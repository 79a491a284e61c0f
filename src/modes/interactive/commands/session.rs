//! The commands that change which session, branch or point of the tree is current, or what
//! the session holds: `/name`, `/new`, `/clone`, `/compact`, `/reload`, `/fork`, `/tree`,
//! `/label`, `/resume`, and what their pickers' answers do.

use super::super::app::{App, AppMsg, DialogReply};
use super::super::dialog::ActiveDialog;
use super::super::tree_view::TreeView;
use super::{one_line, Pick};
use crate::hooks::ui::Dialog;

/// `/name`: name this session, or say its name. The line that follows is 1.6's.
pub(super) fn set_name(app: &mut App, args: &str) {
    let c = app.controller.clone();
    let (muted, warning, error) = (app.theme.muted, app.theme.warning, app.theme.error);
    if args.is_empty() {
        match c.get_state().session_name {
            Some(name) => app
                .transcript
                .notice(format!("Session name: {name}"), muted),
            None => app.transcript.notice("Usage: /name <name>", warning),
        }
    } else if let Err(e) = c.set_session_name(args) {
        app.notify(format!("Error: {e}"), error);
    } else {
        let name = c
            .get_state()
            .session_name
            .unwrap_or_else(|| args.to_string());
        app.transcript
            .notice(format!("Session name set: {name}"), muted);
        app.refresh_footer();
    }
}

/// `/new`: start a new session.
pub(super) fn new_session(app: &mut App) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let accent = app.theme.accent;
    let error = app.theme.error;
    tokio::spawn(async move {
        match c.new_session(None).await {
            Ok(o) if !o.cancelled => {
                let _ = tx.send(AppMsg::SessionChanged);
                let _ = tx.send(AppMsg::Notice("✓ New session started".into(), accent));
            }
            // As in 1.6, a hook's cancel leaves the screen as it was.
            Ok(_) => {}
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
                let _ = tx.send(AppMsg::SessionChanged);
                let _ = tx.send(AppMsg::EditorText(String::new()));
                let _ = tx.send(AppMsg::Notice("Cloned to new session".into(), muted));
            }
            Ok(_) => {}
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

/// `/fork`: a new session from an earlier message: every user message of the session, on
/// any branch, oldest first, starting on the newest (as 1.6's `getUserMessagesForForking`).
pub(super) fn pick_fork(app: &mut App) {
    let c = app.controller.clone();
    let msgs = c.get_fork_messages().messages;
    if msgs.is_empty() {
        app.transcript
            .notice("No messages to fork from", app.theme.muted);
        return;
    }
    let total = msgs.len();
    let rows: Vec<(String, String)> = msgs
        .iter()
        .enumerate()
        .map(|(i, m)| {
            (
                format!("{}. {}", i + 1, one_line(&m.text, 100)),
                m.entry_id.clone(),
            )
        })
        .collect();
    let options = rows.iter().map(|r| r.0.clone()).collect();
    let details = (1..=total)
        .map(|i| format!("Message {i} of {total}"))
        .collect();
    let mut d = ActiveDialog::new(
        "pi",
        Dialog::Select {
            title: "Fork from Message".into(),
            options,
        },
        None,
    )
    .with_message(
        "Select a user message to copy the active path up to that point into a new session",
    )
    .with_details(details);
    d.select_last();
    app.dialogs
        .push_back((d, DialogReply::Pi(Pick::Fork(rows))));
}

/// `/tree`: move to another point of this session's tree, in 1.6's tree selector, starting
/// on `start` (the current leaf when `None`).
pub(super) fn pick_tree(app: &mut App, start: Option<&str>) {
    let c = app.controller.clone();
    match c.get_tree() {
        Ok(view) => {
            let tree: serde_json::Value = serde_json::from_str(view.tree.get()).unwrap_or_default();
            let height = app.screen.height();
            let t = TreeView::new(&tree, view.leaf_id.as_deref(), height, start);
            if t.is_empty() {
                app.transcript
                    .notice("No entries in session", app.theme.muted);
                return;
            }
            app.dialogs
                .push_back((ActiveDialog::tree(t), DialogReply::Pi(Pick::Tree)));
        }
        Err(e) => app.notify(format!("Error: {e}"), app.theme.error),
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
    let (muted, error) = (app.theme.muted, app.theme.error);
    tokio::spawn(async move {
        let ended = match c.switch_session(&path).await {
            Err(crate::controller::ControllerError::MissingCwd(issue)) => {
                let _ = tx.send(AppMsg::MissingCwd(path, issue));
                return;
            }
            other => other.map(|o| (o.cancelled, None)),
        };
        report_move(&tx, ended, ("Resumed session", None), (muted, error));
    });
}

/// 1.6's question about a session whose directory is gone: continue here, fork here, cancel.
pub fn ask_missing_cwd(app: &mut App, path: String, issue: crate::controller::MissingCwd) {
    let d = ActiveDialog::new(
        "pi",
        Dialog::Select {
            title: issue.prompt(),
            options: issue.options().to_vec(),
        },
        None,
    );
    app.dialogs
        .push_back((d, DialogReply::Pi(Pick::MissingCwd(path, issue))));
}

/// The answer to [`ask_missing_cwd`] (`None`: Esc), with 1.6's line after it.
pub(super) fn missing_cwd_answered(
    app: &mut App,
    path: String,
    issue: crate::controller::MissingCwd,
    answer: Option<String>,
) {
    let options = issue.options();
    let (muted, error) = (app.theme.muted, app.theme.error);
    let chosen = answer.and_then(|a| options.iter().position(|o| *o == a));
    if !matches!(chosen, Some(0 | 1)) {
        app.transcript.notice("Resume cancelled", muted);
        return;
    }
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let here = issue.fallback.clone();
    tokio::spawn(async move {
        let (ended, said) = if chosen == Some(0) {
            let ended = c.switch_session_in(&path, Some(&here)).await;
            (ended, format!("Resumed session in {}", here.display()))
        } else {
            match fork_here(&c, &path, &here).await {
                Ok((ended, id)) => (
                    ended,
                    format!("Forked into new session {id} in {}", here.display()),
                ),
                Err(e) => {
                    let _ = tx.send(AppMsg::Notice(format!("Error: {e}"), error));
                    return;
                }
            }
        };
        let ended = ended.map(|o| (o.cancelled, None));
        report_move(&tx, ended, (&said, None), (muted, error));
    });
}

/// 1.6's "Fork into …": a copy of the session made in `here`, in this session's folder, then
/// switched to; a hook's cancel removes the copy again.
async fn fork_here(
    c: &crate::controller::SessionController,
    path: &str,
    here: &std::path::Path,
) -> Result<
    (
        Result<crate::controller::SwitchOutcome, crate::controller::ControllerError>,
        String,
    ),
    crate::session::SessionError,
> {
    let dir = c
        .session()
        .lock()
        .session_dir()
        .map(std::path::Path::to_path_buf)
        .ok_or(crate::session::SessionError::NoSessionDir)?;
    let (fork, _) = crate::session::Session::fork_from(
        std::path::Path::new(path),
        &here.display().to_string(),
        &dir,
    )?;
    let id = fork.id().to_string();
    let fork_path = fork.path().map(|p| p.display().to_string());
    drop(fork);
    let Some(fork_path) = fork_path else {
        return Err(crate::session::SessionError::NoSessionDir);
    };
    let ended = c.switch_session(&fork_path).await;
    if matches!(&ended, Ok(o) if o.cancelled) {
        let _ = std::fs::remove_file(&fork_path);
    }
    Ok((ended, id))
}

/// An entry was chosen in the tree: where the session is already, or on to 1.6's question
/// whether to summarize the branch being left.
pub(super) fn tree_chosen(app: &mut App, entry: String) {
    let leaf = app.controller.get_tree().ok().and_then(|v| v.leaf_id);
    if leaf.as_deref() == Some(entry.as_str()) {
        app.transcript
            .notice("Already at this point", app.theme.muted);
        return;
    }
    ask_tree_summary(app, entry);
}

/// 1.6's three answers to "Summarize branch?".
pub(super) const NO_SUMMARY: &str = "No summary";
pub(super) const SUMMARIZE: &str = "Summarize";
pub(super) const CUSTOM_SUMMARY: &str = "Summarize with custom prompt";

/// Before moving to `entry` in the tree: whether to summarise the branch being left, and
/// how. Esc goes back to the tree.
pub(super) fn ask_tree_summary(app: &mut App, entry: String) {
    let d = ActiveDialog::new(
        "pi",
        Dialog::Select {
            title: "Summarize branch?".into(),
            options: vec![NO_SUMMARY.into(), SUMMARIZE.into(), CUSTOM_SUMMARY.into()],
        },
        None,
    );
    app.dialogs
        .push_back((d, DialogReply::Pi(Pick::TreeSummary(entry))));
}

/// "Summarize with custom prompt": the instructions the summary request carries. Esc goes
/// back to the question.
pub(super) fn ask_tree_instructions(app: &mut App, entry: String) {
    let d = ActiveDialog::new(
        "pi",
        Dialog::Editor {
            title: "Custom summarization instructions".into(),
            prefill: None,
        },
        None,
    );
    app.dialogs
        .push_back((d, DialogReply::Pi(Pick::TreeInstructions(entry))));
}

pub(super) fn fork(app: &mut App, entry: String) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let (muted, error) = (app.theme.muted, app.theme.error);
    tokio::spawn(async move {
        // The editor takes the chosen message's text (empty for a clone-like fork).
        let ended = c
            .fork(&entry)
            .await
            .map(|o| (o.cancelled, Some(o.text.unwrap_or_default())));
        report_move(&tx, ended, ("Forked to new session", None), (muted, error));
    });
}

pub(super) fn navigate(
    app: &mut App,
    entry: String,
    summarize: bool,
    instructions: Option<String>,
) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let error = app.theme.error;
    let muted = app.theme.muted;
    if summarize {
        app.notify("Summarizing the branch…", muted);
    }
    tokio::spawn(async move {
        let ended = c
            .navigate_tree(&entry, summarize, instructions, None)
            .await
            .map(|o| (o.cancelled, o.editor_text));
        let said = ("Navigated to selected point", Some("Navigation cancelled"));
        report_move(&tx, ended, said, (muted, error));
    });
}

/// How a switch, fork or move in the tree ended, told to the app: the new session (shown
/// again from a cleared screen, as 1.6 redraws its chat), the text it leaves in the editor and
/// 1.6's one line about it; a hook's cancel (1.6 says nothing, except for a move in the tree);
/// or the error. `ended` is whether a hook cancelled it, and the editor text; `said` the line
/// for done and for cancelled.
pub(super) fn report_move<E: std::fmt::Display>(
    tx: &tokio::sync::mpsc::UnboundedSender<AppMsg>,
    ended: Result<(bool, Option<String>), E>,
    said: (&str, Option<&str>),
    (muted, error): (super::super::text::Style, super::super::text::Style),
) {
    match ended {
        Ok((false, text)) => {
            let _ = tx.send(AppMsg::SessionChanged);
            if let Some(text) = text {
                let _ = tx.send(AppMsg::EditorText(text));
            }
            let _ = tx.send(AppMsg::Notice(said.0.into(), muted));
        }
        Ok((true, _)) => {
            if let Some(line) = said.1 {
                let _ = tx.send(AppMsg::Notice(line.into(), muted));
            }
        }
        Err(e) => {
            let _ = tx.send(AppMsg::Notice(format!("Error: {e}"), error));
        }
    }
}
