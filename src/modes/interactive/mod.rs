//! Interactive mode: the terminal UI people sit in front of, a thin front end over the
//! session controller. The transcript goes to the terminal's own scrollback; only the live
//! region (streaming message, status, editor, footer) is redrawn, differentially.
//!
//! Why our own renderer rather than ratatui's inline viewport: the inline viewport has a fixed
//! height and its history insertion and resize handling are what codex-rs had to rewrite; pi's
//! own TUI shows that a line-based differential renderer over plain scrollback is all a chat
//! transcript needs. So rendering produces lines of styled spans (`text`), and `screen` turns
//! the difference between two frames into the fewest rows rewritten.

pub mod app;
pub mod banner;
mod clipboard;
pub mod commands;
pub mod dialog;
pub mod editor;
pub mod events;
pub mod footer;
pub mod git_branch;
pub mod highlight;
pub mod history;
pub mod hook_args;
mod key_reader;
mod keys;
pub mod line_input;
pub mod markdown;
pub mod screen;
pub mod settings_editor;
pub mod sgr;
pub mod takeover;
pub mod terminal;
pub mod terminal_colors;
pub mod text;
pub mod theme;
pub mod theme_state;
mod theme_watch;
pub mod tool_output;
pub mod tool_view;
pub mod transcript;
pub mod tree_view;
pub mod trust_prompt;
pub mod ui;
pub mod viewport;

use std::path::PathBuf;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::events::AgentEvent;
use crate::controller::{SessionController, StreamingBehavior};

/// Everything the interactive mode is started with.
pub struct Start {
    pub controller: SessionController,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    pub ui: mpsc::Receiver<ui::UiRequest>,
    /// The command line's messages: the first is sent at once, the others follow it.
    pub prompts: Vec<String>,
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    /// The settings' `theme` (a theme's name, or `light/dark`).
    pub theme: Option<String>,
    /// `--theme NAME` / `--use-theme`: this run's theme, over the setting.
    pub use_theme: Option<String>,
    /// `hideThinkingBlock`: thinking starts collapsed.
    pub hide_thinking: bool,
    /// `-r`: open the session picker first.
    pub pick_session: bool,
    /// Fires on SIGTERM/SIGHUP: leave as if the person quit.
    pub stop: CancellationToken,
}

/// `To resume this session:` and the command, when the session was written.
fn resume_lines(app: &app::App) -> Vec<text::Line> {
    let state = app.controller.get_state();
    let cwd = app.cwd.display().to_string();
    let default_dir =
        crate::session::paths::session_dir_for_cwd(&app.agent_dir.join("sessions"), &cwd);
    banner::resume_lines(
        &state.session_id,
        state.session_file.as_deref().map(std::path::Path::new),
        &default_dir,
        &app.theme,
    )
}

/// Runs until the person quits; then the terminal is restored, the run aborted, the session
/// ended and the hooks stopped. The transcript stays in the scrollback.
pub async fn run(start: Start) -> std::io::Result<()> {
    let term = terminal::Terminal::enter()?;
    let (w, h) = terminal::Terminal::size();
    let screen = screen::Screen::on_stdout(w, h);
    let (tx, msgs) = mpsc::unbounded_channel();
    let choice = start.use_theme.clone().or(start.theme);
    let (catalog, theme, problems) = theme_state::start(&start.controller, choice.as_deref());
    let mut app = app::App::new(
        start.controller.clone(),
        theme,
        screen,
        start.cwd,
        start.agent_dir,
        tx,
    );
    app.themes = theme_state::Themes {
        catalog,
        cli_choice: start.use_theme,
        watch: None,
    };
    app.watch_theme_file();
    app.transcript.show_thinking = !start.hide_thinking;
    app.header = Some(transcript::Item::Header {
        loaded: Box::new(start.controller.loaded_resources()),
        cwd: app.cwd.clone(),
    });
    app.reopen();
    // After the session's messages: what could not be used of the themes.
    for (text, error) in problems {
        let style = if error {
            app.theme.error
        } else {
            app.theme.warning
        };
        app.transcript.notice(text, style);
    }
    app.refresh_commands();
    if start.pick_session {
        commands::builtin(&mut app, "/resume");
    }
    for (i, p) in start.prompts.into_iter().enumerate() {
        let behavior = (i > 0).then_some(StreamingBehavior::FollowUp);
        app.prompt(p, behavior);
    }
    // Syntax highlighting's tables load after the first paint, off the loop.
    std::thread::spawn(highlight::warm);
    let ended = app::run_loop(&mut app, &term, start.events, start.ui, msgs, start.stop).await;
    let _ = app.screen.clear_live();
    let resume = resume_lines(&app);
    if !resume.is_empty() {
        let _ = app.screen.draw(&screen::Frame {
            commit: resume,
            live: Vec::new(),
            cursor: None,
        });
        let _ = app.screen.raw("\r\n");
    }
    drop(term);
    let c = start.controller;
    c.abort_bash();
    c.abort().await;
    ended
}
