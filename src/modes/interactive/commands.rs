//! The slash commands pi handles itself, each one controller operation (or a picker that
//! ends in one), and the keys that are operations too (Shift+Tab, Ctrl+P). Anything else
//! starting with `/` goes to the controller as a prompt, which expands templates and skills
//! and runs hooks' commands.

use std::time::Instant;

use super::app::{App, AppMsg, DialogReply};
use super::dialog::ActiveDialog;
use super::transcript::{BashView, Item};
use crate::controller::BashRequest;
use crate::hooks::ui::{Dialog, DialogAnswer};

/// What a pi picker's answer is for.
#[derive(Debug, Clone)]
pub enum Pick {
    /// `provider/id` labels.
    Model,
    /// Session file paths, same order as the options.
    Resume(Vec<(String, String)>),
    /// (label, entry id) of user messages.
    Fork(Vec<(String, String)>),
    /// `/trust`: the project's remembered decision.
    Trust,
    /// `/tree`: (label, entry id) of the tree's rows.
    Tree(Vec<(String, String)>),
    /// `/tree`, second question: summarize the branch left before moving to this entry?
    TreeSummary(String),
}

const TRUST_ALWAYS: &str = "Always trust this project";
const TRUST_NEVER: &str = "Never trust this project";

/// The built-in commands: (name, description), for `/` completion and `/hotkeys`' neighbour.
pub const BUILTINS: &[(&str, &str)] = &[
    ("model", "choose the model"),
    ("new", "start a new session"),
    ("resume", "open another session of this project"),
    ("fork", "a new session from an earlier message"),
    ("tree", "move to another point of this session's tree"),
    ("label", "label the current point of the tree [text]"),
    ("clone", "a copy of this session to continue separately"),
    (
        "compact",
        "summarize the conversation to free context [instructions]",
    ),
    ("reload", "re-read settings, resources and restart hooks"),
    ("name", "name this session"),
    (
        "session",
        "this session's file, id, counts, tokens and cost",
    ),
    ("export", "write the session as HTML [file]"),
    ("copy", "copy the last answer (OSC 52)"),
    ("hooks", "loaded hooks: state, latency, restarts"),
    ("mcp", "MCP servers: state, tools, last error"),
    ("trust", "remember whether this project is trusted"),
    ("hotkeys", "key bindings"),
    ("quit", "leave pi"),
];

/// Whether `/name` is one of the interactive mode's own commands (or an alias of one), which
/// run before any hook command of that name.
pub fn is_builtin(name: &str) -> bool {
    name == "exit" || BUILTINS.iter().any(|(n, _)| *n == name)
}

const HOTKEYS: &str = "\
Enter            send (while the agent works: steer)
Alt+Enter        follow-up (delivered after the run)
Shift+Enter      new line (also Ctrl+J, or \\ before Enter)
Esc / Ctrl+C     interrupt the run
Ctrl+C twice     quit (on an empty editor); Ctrl+D too
Alt+Up           pull queued messages back into the editor
Shift+Tab        cycle the thinking level
Ctrl+P           cycle the model
Ctrl+T           show or collapse thinking
!cmd / !!cmd     run a shell command (with / without adding it to the context)";

/// `/mcp`: one line per server (state, tools, deferred ones, transport), its last error under
/// it, and where the log is.
pub fn mcp_report(views: &[crate::mcp::hub::ServerView], log: &std::path::Path) -> String {
    let mut lines = Vec::new();
    for v in views {
        let mut line = format!("{:<12} {:<10}", v.name, v.status.label());
        if v.tools > 0 {
            line.push_str(&format!(" {} tools", v.tools));
            if v.deferred > 0 {
                line.push_str(&format!(" ({} deferred)", v.deferred));
            }
        }
        line.push_str(&format!("  {}", v.transport));
        if let Some(version) = &v.server_version {
            line.push_str(&format!("  [{version}]"));
        }
        lines.push(line);
        if let Some(e) = &v.last_error {
            lines.push(format!("{:<12} last error: {e}", ""));
        }
    }
    lines.push(format!("Log: {}", log.display()));
    lines.join("\n")
}

/// Runs `/name args` if it is pi's own; false when it is not (the caller prompts with it).
pub fn builtin(app: &mut App, line: &str) -> bool {
    let (name, args) = match line[1..].split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (&line[1..], ""),
    };
    match name {
        "quit" | "exit" => app.quit = true,
        "hotkeys" => app.transcript.notice(HOTKEYS, app.theme.muted),
        "name" => set_name(app, args),
        "session" => session_info(app),
        // A hook that registers its own `/mcp` replaces this one (as an extension does in pi).
        "mcp"
            if app
                .controller
                .get_commands()
                .commands
                .iter()
                .any(|h| h.name == "mcp") =>
        {
            return false
        }
        "mcp" => mcp_servers(app),
        "hooks" => hooks_report(app),
        "copy" => copy_last(app),
        "export" => export_html(app, args),
        "new" => new_session(app),
        "clone" => clone_session(app),
        "compact" => compact(app, args),
        "reload" => reload(app),
        "model" => pick_model(app, args),
        "fork" => pick_fork(app),
        "tree" => pick_tree(app),
        "label" => label(app, args),
        "trust" => pick_trust(app),
        "resume" => pick_resume(app),
        _ => return false,
    }
    true
}

/// `/name`: name this session.
fn set_name(app: &mut App, args: &str) {
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

/// `/session`: this session's file, id, counts, tokens and cost.
fn session_info(app: &mut App) {
    let c = app.controller.clone();
    let muted = app.theme.muted;
    let s = c.get_session_stats();
    let t = &s.counts.tokens;
    let text = format!(
        "Session {}\nFile     {}\nMessages {} ({} user, {} assistant, {} tool calls)\nTokens   {} in, {} out, {} cache read, {} cache write\nCost     ${:.4}",
        s.session_id,
        s.session_file.as_deref().unwrap_or("(not saved)"),
        s.counts.total_messages,
        s.counts.user_messages,
        s.counts.assistant_messages,
        s.counts.tool_calls,
        t.input,
        t.output,
        t.cache_read,
        t.cache_write,
        s.counts.cost
    );
    app.transcript.notice(text, muted);
}

/// `/mcp`: MCP servers: state, tools, last error.
fn mcp_servers(app: &mut App) {
    let c = app.controller.clone();
    let muted = app.theme.muted;
    let text = match c.mcp().filter(|h| !h.is_empty()) {
        Some(hub) => mcp_report(&hub.views(), &hub.log().path()),
        None => {
            "No MCP servers configured (add one with `pi mcp add`, or in ~/.pi/agent/mcp.json)."
                .to_string()
        }
    };
    app.transcript.notice(text, muted);
}

/// `/hooks`: loaded hooks: state, latency, restarts.
fn hooks_report(app: &mut App) {
    let c = app.controller.clone();
    let muted = app.theme.muted;
    let lines = c.latency_report();
    let text = if lines.is_empty() {
        "No hooks loaded.".to_string()
    } else {
        lines.join("\n")
    };
    app.transcript.notice(text, muted);
}

/// `/copy`: copy the last answer (OSC 52).
fn copy_last(app: &mut App) {
    let c = app.controller.clone();
    let muted = app.theme.muted;
    let error = app.theme.error;
    match c.get_last_assistant_text().text {
        Some(text) => {
            use base64::Engine;
            let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
            let _ = app.screen.raw(&format!("\x1b]52;c;{b64}\x07"));
            app.notify("Copied the last answer to the clipboard", muted);
        }
        None => app.notify("Nothing to copy yet", error),
    }
}

/// `/export`: write the session as HTML [file].
fn export_html(app: &mut App, args: &str) {
    let c = app.controller.clone();
    let muted = app.theme.muted;
    let error = app.theme.error;
    let path = (!args.is_empty()).then_some(args);
    match c.export_html(path) {
        Ok(p) => app
            .transcript
            .notice(format!("Exported to {}", p.path), muted),
        Err(e) => app.notify(format!("Error: {e}"), error),
    }
}

/// `/new`: start a new session.
fn new_session(app: &mut App) {
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
fn clone_session(app: &mut App) {
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
fn compact(app: &mut App, args: &str) {
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
fn reload(app: &mut App) {
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
            }
            Err(e) => {
                let _ = tx.send(AppMsg::Notice(format!("Error: {e}"), error));
            }
        }
        let _ = tx.send(AppMsg::Refresh);
    });
}

/// `/model`: choose the model.
fn pick_model(app: &mut App, args: &str) {
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

/// `/fork`: a new session from an earlier message.
fn pick_fork(app: &mut App) {
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
fn pick_tree(app: &mut App) {
    let c = app.controller.clone();
    let error = app.theme.error;
    match c.get_tree() {
        Ok(view) => {
            let tree: serde_json::Value = serde_json::from_str(view.tree.get()).unwrap_or_default();
            let rows = super::tree_rows::rows(&tree, view.leaf_id.as_deref());
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
fn label(app: &mut App, args: &str) {
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

/// `/trust`: remember whether this project is trusted.
fn pick_trust(app: &mut App) {
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

/// `/resume`: open another session of this project.
fn pick_resume(app: &mut App) {
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

/// A pi picker was answered with `value` (one of its options).
pub fn picked(app: &mut App, pick: Pick, answer: DialogAnswer) {
    if let Pick::TreeSummary(entry) = &pick {
        let summarize = answer == DialogAnswer::Confirmed(true);
        if answer == DialogAnswer::Dismissed {
            return;
        }
        navigate(app, entry.clone(), summarize);
        return;
    }
    let DialogAnswer::Value(value) = answer else {
        return;
    };
    match pick {
        Pick::Trust => remember_trust(app, &value),
        Pick::Model => set_picked_model(app, &value),
        Pick::Resume(rows) => {
            if let Some(path) = chosen(rows, &value) {
                resume(app, path);
            }
        }
        Pick::TreeSummary(_) => {}
        Pick::Tree(rows) => {
            if let Some(entry) = chosen(rows, &value) {
                ask_tree_summary(app, entry);
            }
        }
        Pick::Fork(rows) => {
            if let Some(entry) = chosen(rows, &value) {
                fork(app, entry);
            }
        }
    }
}

/// What the option a picker's answer names stands for.
fn chosen<T>(rows: Vec<(String, T)>, value: &str) -> Option<T> {
    rows.into_iter().find(|r| r.0 == value).map(|r| r.1)
}

/// The answer to the trust question, remembered for the next start.
fn remember_trust(app: &mut App, value: &str) {
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

/// `provider/id` from the model picker.
fn set_picked_model(app: &mut App, value: &str) {
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

fn resume(app: &mut App, path: String) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let error = app.theme.error;
    tokio::spawn(async move {
        let ended = c.switch_session(&path).await.map(|o| (o.cancelled, None));
        report_move(&tx, ended, "switch", error);
    });
}

/// Before moving to `entry` in the tree: whether to summarise the branch being left.
fn ask_tree_summary(app: &mut App, entry: String) {
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

fn fork(app: &mut App, entry: String) {
    let c = app.controller.clone();
    let tx = app.tx.clone();
    let error = app.theme.error;
    tokio::spawn(async move {
        let ended = c.fork(&entry).await.map(|o| (o.cancelled, o.text));
        report_move(&tx, ended, "fork", error);
    });
}

fn navigate(app: &mut App, entry: String, summarize: bool) {
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
fn report_move<E: std::fmt::Display>(
    tx: &tokio::sync::mpsc::UnboundedSender<AppMsg>,
    ended: Result<(bool, Option<String>), E>,
    what: &str,
    error: super::text::Style,
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

fn one_line(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max - 1).collect();
    format!("{cut}…")
}
