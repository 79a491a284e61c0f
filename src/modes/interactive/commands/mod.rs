//! The slash commands pi handles itself, each one controller operation (or a picker that
//! ends in one), and the keys that are operations too (Shift+Tab, Ctrl+P). Anything else
//! starting with `/` goes to the controller as a prompt, which expands templates and skills
//! and runs hooks' commands.

mod auth;
mod bash;
mod import;
mod info;
pub(super) use info::copy_last;
mod model;
mod scope;
pub(super) mod session;
pub mod settings;
mod trust;

pub use bash::run_bash;
pub use info::mcp_report;
pub use model::{cycle_model, cycle_thinking};

/// Ctrl+L: the model picker, as `/model`.
pub fn pick_model(app: &mut App) {
    model::pick_model(app, "");
}

use super::app::App;
use crate::hooks::ui::DialogAnswer;

/// What a pi picker's answer is for.
#[derive(Debug, Clone)]
pub enum Pick {
    /// The model picker's rows (label, (provider, id)); `scoped`: the scope's models only.
    Model {
        rows: Vec<(String, (String, String))>,
        scoped: bool,
    },
    /// The thinking picker's rows (label, level).
    Thinking(Vec<(String, String)>),
    /// `/scoped-models`, between its dialogs.
    Scope(Box<scope::ScopeEdit>),
    /// Session file paths, same order as the options.
    Resume(Vec<(String, String)>),
    /// (label, entry id) of user messages.
    Fork(Vec<(String, String)>),
    /// `/trust`: the project's remembered decision.
    Trust,
    /// `/tree`: the selector answers the chosen entry's id.
    Tree,
    /// `/tree`, second question: summarize the branch left before moving to this entry?
    TreeSummary(String),
    /// `/tree`, third: the custom instructions for the summary before moving to this entry.
    TreeInstructions(String),
    /// `/import`'s question about this path (as typed).
    Import(String),
    /// `/resume` of this session file, whose directory is gone: 1.6's three answers.
    MissingCwd(String, crate::controller::MissingCwd),
}

/// The built-in commands: (name, description), for `/` completion and `/hotkeys`' neighbour.
pub const BUILTINS: &[(&str, &str)] = &[
    ("model", "choose the model (Ctrl+S there: the default)"),
    ("thinking", "choose the thinking level [level]"),
    ("scoped-models", "choose the models Ctrl+P cycles through"),
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
    (
        "import",
        "replace this session with a copy of a session file <path.jsonl>",
    ),
    ("copy", "copy the last answer to the clipboard"),
    ("hooks", "loaded hooks: state, latency, restarts"),
    ("mcp", "MCP servers: state, tools, last error"),
    ("trust", "remember whether this project is trusted"),
    ("login", "Configure provider authentication [provider]"),
    ("logout", "Remove provider authentication"),
    (
        "settings",
        "change settings: theme, queue modes, thinking… (user or project)",
    ),
    ("hotkeys", "key bindings"),
    ("changelog", "what changed in pi"),
    ("quit", "leave pi"),
];

/// Whether `/name` is one of the interactive mode's own commands (or an alias of one), which
/// run before any hook command of that name.
pub fn is_builtin(name: &str) -> bool {
    name == "exit" || BUILTINS.iter().any(|(n, _)| *n == name)
}

/// Runs `/name args` if it is pi's own; false when it is not (the caller prompts with it).
pub fn builtin(app: &mut App, line: &str) -> bool {
    let (name, args) = match line[1..].split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (&line[1..], ""),
    };
    match name {
        "quit" | "exit" => app.quit = true,
        "hotkeys" => info::hotkeys(app),
        "name" => session::set_name(app, args),
        "session" => info::session_info(app),
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
        "mcp" => info::mcp_servers(app),
        "hooks" => info::hooks_report(app),
        "copy" => info::copy_last(app),
        "export" => info::export_html(app, args),
        "import" => import::ask(app, args),
        "changelog" => info::changelog(app),
        "new" => session::new_session(app),
        "clone" => session::clone_session(app),
        "compact" => session::compact(app, args),
        "reload" => session::reload(app),
        "model" => model::pick_model(app, args),
        "thinking" => model::pick_thinking(app, args),
        "scoped-models" => scope::edit_scope(app),
        "fork" => session::pick_fork(app),
        "tree" => session::pick_tree(app, None),
        "label" => session::label(app, args),
        "trust" => trust::pick_trust(app),
        "login" => auth::login(app, args),
        "logout" => auth::logout(app, args),
        "settings" => settings::open(app),
        "resume" => session::pick_resume(app),
        _ => return false,
    }
    true
}

/// A pi picker was answered with `value` (one of its options).
pub fn picked(app: &mut App, pick: Pick, answer: DialogAnswer) {
    // `/tree`'s questions go back one step on Esc, as 1.6's do.
    match (&pick, answer.clone()) {
        (Pick::TreeSummary(entry), DialogAnswer::Value(v)) => {
            match v.as_str() {
                session::CUSTOM_SUMMARY => session::ask_tree_instructions(app, entry.clone()),
                v => session::navigate(app, entry.clone(), v == session::SUMMARIZE, None),
            }
            return;
        }
        (Pick::TreeSummary(entry), _) => return session::pick_tree(app, Some(entry)),
        (Pick::TreeInstructions(entry), DialogAnswer::Value(v)) => {
            let v = (!v.trim().is_empty()).then_some(v);
            return session::navigate(app, entry.clone(), true, v);
        }
        (Pick::TreeInstructions(entry), _) => {
            return session::ask_tree_summary(app, entry.clone());
        }
        (Pick::MissingCwd(path, issue), a) => {
            let value = match a {
                DialogAnswer::Value(v) => Some(v),
                _ => None,
            };
            return session::missing_cwd_answered(app, path.clone(), issue.clone(), value);
        }
        // Esc answers no, as 1.6's confirm does.
        (Pick::Import(path), a) => {
            return import::answered(app, path.clone(), a == DialogAnswer::Confirmed(true));
        }
        _ => {}
    }
    let DialogAnswer::Value(value) = answer else {
        return;
    };
    match pick {
        Pick::Trust => trust::remember_trust(app, &value),
        Pick::Model { rows, .. } => {
            if let Some((provider, id)) = chosen(rows, &value) {
                model::set_model(app, &provider, &id, false);
            }
        }
        Pick::Thinking(rows) => {
            if let Some(level) = chosen(rows, &value) {
                model::set_thinking(app, &level, false);
            }
        }
        Pick::Scope(_) => {}
        Pick::Resume(rows) => {
            if let Some(path) = chosen(rows, &value) {
                session::resume(app, path);
            }
        }
        Pick::TreeSummary(_)
        | Pick::TreeInstructions(_)
        | Pick::Import(_)
        | Pick::MissingCwd(..) => {}
        Pick::Tree => session::tree_chosen(app, value),
        Pick::Fork(rows) => {
            if let Some(entry) = chosen(rows, &value) {
                session::fork(app, entry);
            }
        }
    }
}

/// Keys pi's own pickers take before the dialog does (Ctrl+S to save a default, Tab, the
/// scope editor's Ctrl keys); true when one was taken.
pub fn picker_key(app: &mut App, key: crossterm::event::KeyEvent) -> bool {
    model::picker_key(app, key) || scope::editor_key(app, key)
}

/// What the option a picker's answer names stands for.
pub(super) fn chosen<T>(rows: Vec<(String, T)>, value: &str) -> Option<T> {
    rows.into_iter().find(|r| r.0 == value).map(|r| r.1)
}

pub(super) fn one_line(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max - 1).collect();
    format!("{cut}…")
}
