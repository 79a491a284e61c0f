//! The interactive mode's state and main loop. Three inputs — the terminal's keys, the
//! controller's events, the hooks' UI calls — each handled as it comes; after each batch one
//! frame is drawn (events that arrived meanwhile are applied first, so a fast stream costs one
//! frame per batch, not one per delta). Every action is a controller operation, run on its
//! own task so the screen stays live while it works; what it returns comes back as a message.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use crossterm::event::Event;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::dialog::ActiveDialog;
use super::editor::{CommandInfo, Editor, EditorOptions};
use super::footer::{self, FooterInfo};
use super::screen::{Frame, Screen};
use super::text::{Line, Style};
use super::theme::Theme;
use super::transcript::{Item, Transcript};
use super::ui::UiRequest;
use crate::agent::events::AgentEvent;
use crate::controller::{PromptRequest, SessionController, StreamingBehavior};
use crate::hooks::ui::{DialogAnswer, NotifyLevel, UiUpdate, WidgetPlacement};
use crate::provider::ThinkingLevel;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// How long a notification stays.
const NOTICE_FOR: Duration = Duration::from_secs(4);
/// The shortest time between two frames drawn for model output (30 per second): each frame
/// costs the terminal a few dozen bytes of cursor movement besides the text it adds.
const FRAME: Duration = Duration::from_millis(33);
/// Two Ctrl+C within this quit; two Esc on an empty editor open `/tree` (pi 1.6's 500 ms).
pub(super) const DOUBLE_KEY: Duration = Duration::from_millis(500);

/// A key that gives the terminal to something else for a while (see `takeover`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takeover {
    /// Ctrl+G: the external editor on the editor's text.
    Editor,
    /// Ctrl+Z: suspend to the shell until `fg`.
    Suspend,
}

/// What a finished background operation tells the loop.
pub enum AppMsg {
    /// A line for the transcript.
    Notice(String, Style),
    /// Show this text in the editor (a queue pulled back, a hook's command output…).
    EditorText(String),
    /// The session was replaced or moved in its tree: clear the screen and show its messages
    /// again.
    SessionChanged,
    /// Refresh the footer's numbers.
    Refresh,
    /// The editor's background file walk has news.
    EditorPoll,
    /// Commands may have changed (start, reload): refresh `/` completion.
    Commands,
    /// A `/reload` finished: read the themes again.
    Reloaded,
    /// The file of the theme in use was saved (`theme_watch`).
    ThemeFileSaved(std::path::PathBuf),
    /// A hook answered an argument completion: the list shows it.
    CompletionsReady,
    /// `/resume` of this file found its directory gone: ask what to do, as 1.6 does.
    MissingCwd(String, crate::controller::MissingCwd),
    /// A picker's answer, to act on.
    Picked(super::commands::Pick, String),
    /// A `!` command finished (its output streamed as `bash_execution_update` events).
    BashDone(Result<crate::controller::BashOutcome, String>, Instant),
    /// A copy to the clipboard ended: the OSC 52 sequence still to write, and what to say.
    Copied(
        Result<Option<String>, super::clipboard::ClipboardError>,
        &'static str,
    ),
    Quit,
}

/// Who is waiting for the dialog's answer.
pub enum DialogReply {
    Hook(oneshot::Sender<DialogAnswer>),
    Pi(super::commands::Pick),
}

pub struct App {
    pub controller: SessionController,
    pub theme: Theme,
    pub screen: Screen,
    pub transcript: Transcript,
    pub editor: Editor,
    pub statuses: BTreeMap<String, String>,
    pub widgets: BTreeMap<String, (Vec<String>, WidgetPlacement)>,
    pub notice: Option<(String, Style, Instant)>,
    pub busy_since: Option<Instant>,
    pub queue: (Vec<String>, Vec<String>),
    pub dialogs: VecDeque<(ActiveDialog, DialogReply)>,
    pub footer: FooterInfo,
    pub cwd: std::path::PathBuf,
    pub agent_dir: std::path::PathBuf,
    pub tx: mpsc::UnboundedSender<AppMsg>,
    pub(super) last_ctrl_c: Option<Instant>,
    pub(super) last_esc: Option<Instant>,
    /// Set by Ctrl+G and Ctrl+Z; the loop hands the terminal over.
    pub takeover: Option<Takeover>,
    /// The start-up header, shown before the session's messages when it first opens.
    pub header: Option<Item>,
    pub quit: bool,
    /// The themes there are and the `theme` setting in effect (`theme_state`).
    pub themes: super::theme_state::Themes,
    /// `/settings` while it is open (in place of the editor).
    pub settings: Option<super::settings_editor::SettingsEditor>,
    started: Instant,
}

impl App {
    pub fn new(
        controller: SessionController,
        theme: Theme,
        screen: Screen,
        cwd: std::path::PathBuf,
        agent_dir: std::path::PathBuf,
        tx: mpsc::UnboundedSender<AppMsg>,
    ) -> App {
        let wake = tx.clone();
        let notify: super::editor::Notify = std::sync::Arc::new(move || {
            let _ = wake.send(AppMsg::EditorPoll);
        });
        let editor = Editor::new(EditorOptions::for_project(&agent_dir, &cwd, Some(notify)));
        App {
            controller,
            theme,
            screen,
            transcript: Transcript::new(),
            editor,
            statuses: BTreeMap::new(),
            widgets: BTreeMap::new(),
            notice: None,
            busy_since: None,
            queue: (Vec::new(), Vec::new()),
            dialogs: VecDeque::new(),
            footer: FooterInfo::default(),
            cwd,
            agent_dir,
            tx,
            last_ctrl_c: None,
            last_esc: None,
            takeover: None,
            header: None,
            quit: false,
            themes: Default::default(),
            settings: None,
            started: Instant::now(),
        }
    }

    /// Whether something moves on screen by itself (spinner, countdown, a notice to expire).
    fn animating(&self) -> bool {
        self.busy_since.is_some()
            || self.notice.is_some()
            || self
                .dialogs
                .front()
                .is_some_and(|(d, _)| d.deadline.is_some())
            || self.transcript.has_running()
    }

    fn spinner(&self) -> &'static str {
        let n = (self.started.elapsed().as_millis() / 80) as usize;
        SPINNER[n % SPINNER.len()]
    }

    pub fn notify(&mut self, text: impl Into<String>, style: Style) {
        self.notice = Some((text.into(), style, Instant::now()));
    }

    /// Draw one frame: what can go to the scrollback, then the live region.
    pub fn draw(&mut self) -> std::io::Result<()> {
        let width = self.screen.width();
        let mut theme = self.theme.clone();
        let level = self
            .footer
            .thinking
            .as_deref()
            .and_then(ThinkingLevel::parse);
        theme.editor_border = theme.editor_border_for(level, self.editor.text().starts_with('!'));
        let commit = self.transcript.take_commit(width, &theme);
        let spinner = self.spinner();
        let mut live = self.transcript.live(width, &theme, spinner);
        if let Some(since) = self.busy_since {
            if !live.is_empty() {
                live.push(Line::new());
            }
            let secs = since.elapsed().as_secs();
            let mut l = Line::styled(format!("{spinner} Working… {secs}s"), theme.accent);
            l.push("  esc to interrupt", theme.muted);
            live.push(l);
        }
        for (kind, items) in [("steer", &self.queue.0), ("follow-up", &self.queue.1)] {
            for m in items {
                let first = m.lines().next().unwrap_or("");
                live.push(
                    Line::styled(format!("  ↳ {kind}: {first}"), theme.muted).truncated(width),
                );
            }
        }
        if !self.queue.0.is_empty() || !self.queue.1.is_empty() {
            live.push(Line::styled(
                "    Alt+Up pulls queued messages back into the editor",
                theme.muted,
            ));
        }
        for (lines, placement) in self.widgets.values() {
            if *placement == WidgetPlacement::AboveEditor {
                live.extend(
                    lines
                        .iter()
                        .map(|l| Line::plain(l.clone()).truncated(width)),
                );
            }
        }
        if let Some((text, style, _)) = &self.notice {
            live.push(Line::styled(text.clone(), *style).truncated(width));
        }
        let mut below = Vec::new();
        for (lines, placement) in self.widgets.values() {
            if *placement == WidgetPlacement::BelowEditor {
                below.extend(
                    lines
                        .iter()
                        .map(|l| Line::plain(l.clone()).truncated(width)),
                );
            }
        }
        if !self.statuses.is_empty() {
            let s: Vec<&str> = self.statuses.values().map(String::as_str).collect();
            below.push(Line::styled(s.join("  "), theme.muted).truncated(width));
        }
        below.extend(footer::render(&self.footer, width, &theme));
        let now = Instant::now();
        let (editor, cursor) = match self.dialogs.front() {
            // A dialog gets the rows the window has above what stays below it, so what it
            // asks about is never cut off unseen (it scrolls instead).
            Some((d, _)) => {
                let room = self.screen.height().saturating_sub(below.len());
                d.render(width, room, &theme, now)
            }
            None if self.settings.is_some() => {
                let rows = self.settings.as_ref().map(|s| s.render(width, &theme));
                (rows.unwrap_or_default(), None)
            }
            None => {
                let view = self.editor.render(width, &theme);
                let above = view.popup.len();
                let mut lines = view.popup;
                lines.extend(view.lines);
                (lines, Some((above + view.cursor.0, view.cursor.1)))
            }
        };
        let top = live.len();
        live.extend(editor);
        let cursor = cursor.map(|(r, c)| (top + r, c));
        live.extend(below);
        self.screen.draw(&Frame {
            commit,
            live,
            cursor,
        })
    }

    /// Tick: expire notices and dialogs.
    fn tick(&mut self) {
        let now = Instant::now();
        if self
            .notice
            .as_ref()
            .is_some_and(|(_, _, at)| now.duration_since(*at) > NOTICE_FOR)
        {
            self.notice = None;
        }
        if self.dialogs.front().is_some_and(|(d, _)| d.expired(now)) {
            self.finish_dialog(DialogAnswer::Dismissed);
        }
    }

    pub(super) fn finish_dialog(&mut self, answer: DialogAnswer) {
        if let Some((_, reply)) = self.dialogs.pop_front() {
            match reply {
                DialogReply::Hook(tx) => {
                    let _ = tx.send(answer);
                }
                DialogReply::Pi(pick) => super::commands::picked(self, pick, answer),
            }
        }
    }

    pub fn on_ui(&mut self, req: UiRequest) {
        match req {
            UiRequest::Dialog {
                hook,
                dialog,
                timeout,
                reply,
            } => {
                let deadline = timeout.map(|t| Instant::now() + t);
                self.dialogs.push_back((
                    ActiveDialog::new(hook, dialog, deadline),
                    DialogReply::Hook(reply),
                ));
            }
            UiRequest::Update { hook, update } => match update {
                UiUpdate::Notify { message, level } => {
                    let style = match level {
                        NotifyLevel::Info => self.theme.accent,
                        NotifyLevel::Warning => self.theme.warning,
                        NotifyLevel::Error => self.theme.error,
                    };
                    self.notify(format!("[{hook}] {message}"), style);
                }
                UiUpdate::SetStatus { key, text } => match text {
                    Some(t) => {
                        self.statuses.insert(format!("{hook}/{key}"), t);
                    }
                    None => {
                        self.statuses.remove(&format!("{hook}/{key}"));
                    }
                },
                UiUpdate::SetWidget {
                    key,
                    lines,
                    placement,
                } => match lines {
                    Some(l) => {
                        let p = placement.unwrap_or(WidgetPlacement::AboveEditor);
                        self.widgets.insert(format!("{hook}/{key}"), (l, p));
                    }
                    None => {
                        self.widgets.remove(&format!("{hook}/{key}"));
                    }
                },
                UiUpdate::SetTitle { title } => {
                    // The title is text inside pi's own OSC: by the terminal rule, so it can
                    // neither end the sequence nor start another.
                    let clean = crate::term::sanitize::row(&title);
                    let _ = self.screen.raw(&format!("\x1b]0;{clean}\x07"));
                }
                UiUpdate::SetEditorText { text } => self.editor.set_text(&text),
            },
            UiRequest::SetTheme { hook, name, reply } => {
                let _ = reply.send(self.set_theme_for_hook(&hook, &name));
            }
        }
    }

    /// `/` completion: pi's commands, then the templates, skills and hook commands.
    pub fn refresh_commands(&mut self) {
        let mut all: Vec<CommandInfo> = super::commands::BUILTINS
            .iter()
            .map(|(n, d)| CommandInfo::new(*n, *d))
            .collect();
        for c in self.controller.get_commands().commands {
            all.push(CommandInfo::new(c.name, c.description.unwrap_or_default()));
        }
        self.editor.set_commands(all);
        self.editor
            .set_argument_completer(Box::new(super::hook_args::HookArgs::new(
                self.controller.clone(),
                self.tx.clone(),
            )));
    }

    /// Copies `text` to the clipboard in the background and then says `done`; `None` (the
    /// thing has no text) says `nothing` at once.
    pub fn copy_text(&mut self, text: Option<String>, done: &'static str, nothing: &str) {
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            self.notify(nothing, self.theme.error);
            return;
        };
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let outcome = super::clipboard::Reach::from_env().copy(&text).await;
            let _ = tx.send(AppMsg::Copied(outcome, done));
        });
    }

    pub fn prompt(&mut self, text: String, behavior: Option<StreamingBehavior>) {
        let c = self.controller.clone();
        let tx = self.tx.clone();
        let error = self.theme.error;
        let muted = self.theme.text;
        tokio::spawn(async move {
            let req = PromptRequest {
                message: text,
                streaming_behavior: behavior,
                ..Default::default()
            };
            match c.prompt(req).await {
                Ok(outcome) => {
                    if let Some(t) = outcome.command_text {
                        let _ = tx.send(AppMsg::Notice(t, muted));
                    }
                }
                Err(e) => {
                    let _ = tx.send(AppMsg::Notice(format!("Error: {e}"), error));
                }
            }
        });
    }

    pub fn on_msg(&mut self, msg: AppMsg) {
        match msg {
            AppMsg::Notice(text, style) => self.transcript.notice(text, style),
            AppMsg::EditorText(t) => self.editor.set_text(&t),
            AppMsg::SessionChanged => {
                let _ = self.screen.clear();
                self.reopen();
            }
            AppMsg::Refresh => self.refresh_footer(),
            AppMsg::EditorPoll => {
                self.editor.poll_background();
            }
            AppMsg::Commands => self.refresh_commands(),
            AppMsg::Reloaded => self.reload_themes(),
            AppMsg::ThemeFileSaved(path) => self.theme_file_saved(&path),
            AppMsg::CompletionsReady => self.editor.refresh_completions(),
            AppMsg::Copied(outcome, done) => match outcome {
                Ok(sequence) => {
                    if let Some(sequence) = sequence {
                        let _ = self.screen.raw(&sequence);
                    }
                    self.notify(done, self.theme.muted);
                }
                Err(e) => self.notify(e.to_string(), self.theme.error),
            },
            AppMsg::MissingCwd(path, issue) => {
                super::commands::session::ask_missing_cwd(self, path, issue)
            }
            AppMsg::Picked(pick, value) => {
                super::commands::picked(self, pick, DialogAnswer::Value(value))
            }
            AppMsg::BashDone(result, _) => {
                let error = self.theme.error;
                match self.transcript.bash_mut() {
                    Some(b) => match result {
                        Ok(o) => {
                            if b.output.is_empty() {
                                b.output = o.output;
                            }
                            b.status = Some(match (o.exit_code, o.cancelled) {
                                (_, true) => "cancelled".into(),
                                (Some(c), _) => c.to_string(),
                                (None, _) => "killed".into(),
                            });
                        }
                        Err(e) => {
                            b.output.push_str(&e);
                            b.status = Some("failed".into());
                        }
                    },
                    None => {
                        if let Err(e) = result {
                            self.transcript.notice(format!("Error: {e}"), error);
                        }
                    }
                }
            }
            AppMsg::Quit => self.quit = true,
        }
    }

    /// Show the current session's messages (start-up, resume, switch, fork…), after the
    /// start-up header the first time.
    pub fn reopen(&mut self) {
        // The run may have moved into another project's session (1.6 works where it was made).
        self.cwd = self.controller.cwd();
        let messages = self.controller.get_messages().messages;
        let mut items: Vec<Item> = self.header.take().into_iter().collect();
        items.extend(super::history::items_of(&messages));
        let width = self.screen.width();
        let theme = self.theme.clone();
        let lines = self.transcript.open(items, width, &theme);
        self.refresh_footer();
        if !lines.is_empty() {
            let _ = self.screen.draw(&Frame {
                commit: lines,
                live: Vec::new(),
                cursor: None,
            });
        }
    }

    /// Ctrl+O: tool output, summaries and the header expanded or collapsed, everything shown
    /// again that way.
    pub fn toggle_expanded(&mut self) {
        let expanded = !self.transcript.expanded;
        self.transcript.set_expanded(expanded);
        let _ = self.repaint_all();
        let state = if expanded { "expanded" } else { "collapsed" };
        self.notify(format!("Tool output: {state}"), self.theme.muted);
    }

    /// The screen cleared and the transcript printed again, as after a width change: after
    /// Ctrl+O, and when the terminal comes back from the external editor or a suspension.
    pub fn repaint_all(&mut self) -> std::io::Result<()> {
        let (w, h) = super::terminal::Terminal::size();
        self.screen.resize(w, h)?;
        let theme = self.theme.clone();
        let lines = self.transcript.reprint(w as usize, &theme);
        self.screen.draw(&Frame {
            commit: lines,
            live: Vec::new(),
            cursor: None,
        })
    }

    pub fn refresh_footer(&mut self) {
        let state = self.controller.get_state();
        let stats = self.controller.get_session_stats();
        let home = dirs::home_dir();
        let cwd = self.cwd.display().to_string();
        self.footer = FooterInfo {
            cwd: match home.as_ref().and_then(|h| self.cwd.strip_prefix(h).ok()) {
                Some(rest) if rest.as_os_str().is_empty() => "~".into(),
                Some(rest) => format!("~/{}", rest.display()),
                None => cwd,
            },
            git_branch: super::git_branch::current(&self.cwd),
            session_name: state.session_name,
            model: state
                .model
                .as_ref()
                .map(|m| format!("{}/{}", m.provider, m.id))
                .unwrap_or_else(|| "no model".into()),
            thinking: state
                .model
                .as_ref()
                .filter(|m| m.reasoning)
                .map(|_| state.thinking_level.clone()),
            context_percent: stats.context_usage.as_ref().and_then(|u| u.percent),
            context_window: stats.context_usage.as_ref().map_or(0, |u| u.context_window),
            input_tokens: stats.counts.tokens.input,
            output_tokens: stats.counts.tokens.output,
            cost: stats.counts.cost,
        };
    }

    pub fn on_resize(&mut self, w: u16, h: u16) -> std::io::Result<()> {
        let width_changed = w as usize != self.screen.width();
        if !width_changed {
            // Height only: the rows we track are where they were; redraw the live region.
            self.screen.set_height(h);
            return Ok(());
        }
        self.screen.resize(w, h)?;
        let theme = self.theme.clone();
        let lines = self.transcript.reprint(w as usize, &theme);
        self.screen.draw(&Frame {
            commit: lines,
            live: Vec::new(),
            cursor: None,
        })
    }
}

/// The loop. Returns when the person quits or `stop` fires (a signal).
pub async fn run_loop(
    app: &mut App,
    term: &super::terminal::Terminal,
    mut events: mpsc::UnboundedReceiver<AgentEvent>,
    mut ui: mpsc::Receiver<UiRequest>,
    mut msgs: mpsc::UnboundedReceiver<AppMsg>,
    stop: CancellationToken,
) -> std::io::Result<()> {
    // 1.6 asks the terminal for its colours at start; the answers are read before any key.
    let asked = app.screen.raw(super::terminal_colors::QUERY).is_ok();
    let mut input = super::key_reader::KeyReader::start(asked);
    let mut colors = input.colors.take();
    let mut tick = tokio::time::interval(Duration::from_millis(80));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut events_open = true;
    app.draw()?;
    let mut last_draw = Instant::now();
    // Model output waits for the next frame (at most FRAME after the last one), so a fast
    // stream costs a frame per FRAME, not one per batch of deltas; keys draw at once.
    let mut pending = false;
    loop {
        let mut now_please = false;
        let next_frame = tokio::time::Instant::from_std(last_draw + FRAME);
        tokio::select! {
            ev = input.next() => {
                now_please = true;
                match ev {
                    Some(Ok(Event::Key(k))) => app.on_key(k),
                    Some(Ok(Event::Paste(p))) => match app.dialogs.front_mut() {
                        Some((d, _)) => d.paste(&p),
                        None => app.editor.handle_paste(&p),
                    },
                    Some(Ok(Event::Resize(w, h))) => app.on_resize(w, h)?,
                    Some(Ok(_)) => {}
                    // The terminal is gone (hung up): nothing more can be asked or shown.
                    Some(Err(_)) | None => app.quit = true,
                }
            }
            ev = events.recv(), if events_open => match ev {
                Some(ev) => {
                    super::events::apply(app, ev);
                    while let Ok(ev) = events.try_recv() {
                        super::events::apply(app, ev);
                    }
                    pending = true;
                }
                None => events_open = false,
            },
            Some(req) = ui.recv() => {
                app.on_ui(req);
                now_please = true;
            }
            Some(msg) = msgs.recv() => {
                app.on_msg(msg);
                now_please = true;
            }
            reported = async {
                match colors.as_mut() {
                    Some(rx) => rx.await.ok(),
                    None => std::future::pending().await,
                }
            }, if colors.is_some() => {
                colors = None;
                if let Some(reported) = reported {
                    app.terminal_colors(reported);
                    now_please = true;
                }
            }
            _ = tick.tick(), if app.animating() => {
                app.tick();
                pending = true;
            }
            _ = tokio::time::sleep_until(next_frame), if pending => {}
            _ = stop.cancelled() => app.quit = true,
        }
        if app.quit {
            return Ok(());
        }
        if let Some(what) = app.takeover.take() {
            // The key reader would read the keys meant for the other program.
            input.pause();
            let outcome = super::takeover::run(app, term, what).await;
            input.resume();
            outcome?;
            now_please = true;
        }
        if now_please || (pending && last_draw.elapsed() >= FRAME) {
            app.draw()?;
            last_draw = Instant::now();
            pending = false;
        }
    }
}
