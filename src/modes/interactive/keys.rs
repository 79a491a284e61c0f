//! The keys the app takes before (or instead of) the editor, and what Enter does with the
//! editor's text: interrupt, clear and quit, the thinking level and model keys, expanding
//! tool output, the external editor and suspending, pulling queued messages back, `!`
//! commands, pi's own `/` commands, and prompts with their streaming behaviour.
//!
//! Ctrl+C and Esc behave as in pi 1.6: Ctrl+C clears the editor (even while the agent
//! works) and a second one within half a second quits; Esc aborts the run and brings the
//! queued messages back into the editor, else stops a running `!` command, else clears a `!`
//! line, and twice on an empty editor opens `/tree`.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::{App, Takeover, DOUBLE_KEY};
use super::editor::EditorOutcome;
use crate::controller::StreamingBehavior;

impl App {
    pub fn on_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        if let Some((d, _)) = self.dialogs.front_mut() {
            let answer = d.handle_key(key);
            for (id, label) in d.take_saved_labels() {
                if let Err(e) = self.controller.set_label(&id, label.as_deref()) {
                    self.notify(format!("Error: {e}"), self.theme.error);
                }
            }
            if let Some(answer) = answer {
                self.finish_dialog(answer);
            }
            return;
        }
        if self.settings.is_some() {
            super::commands::settings::on_key(self, key);
            return;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        // The app's own keys, which the editor would otherwise take.
        match key.code {
            KeyCode::Char('t') if ctrl => {
                self.transcript.show_thinking = !self.transcript.show_thinking;
                let state = if self.transcript.show_thinking {
                    "shown"
                } else {
                    "collapsed"
                };
                self.notify(format!("Thinking {state}"), self.theme.muted);
                return;
            }
            KeyCode::Char('p') if ctrl => {
                super::commands::cycle_model(self);
                return;
            }
            KeyCode::Char('o') if ctrl => {
                self.toggle_expanded();
                return;
            }
            KeyCode::Char('l') if ctrl => {
                super::commands::builtin(self, "/model");
                return;
            }
            KeyCode::Char('g') if ctrl => {
                self.takeover = Some(Takeover::Editor);
                return;
            }
            KeyCode::Char('z') if ctrl => {
                self.takeover = Some(Takeover::Suspend);
                return;
            }
            KeyCode::Up if alt => {
                self.pull_back_queue();
                return;
            }
            _ => {}
        }
        match self.editor.handle_key(&key) {
            EditorOutcome::Handled => {}
            EditorOutcome::Submit(text) => self.submit(text, false),
            EditorOutcome::FollowUp(text) => self.submit(text, true),
            EditorOutcome::Ignored => self.unhandled_key(key),
        }
        for p in self.editor.take_problems() {
            self.notify(p.to_string(), self.theme.warning);
        }
    }

    /// Keys the editor left to the app: clear and quit, interrupt, thinking level.
    fn unhandled_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c') if ctrl => {
                if self.last_ctrl_c.is_some_and(|t| t.elapsed() < DOUBLE_KEY) {
                    self.quit = true;
                } else {
                    self.editor.clear();
                    self.last_ctrl_c = Some(Instant::now());
                }
            }
            KeyCode::Char('d') if ctrl && self.editor.is_empty() => self.quit = true,
            KeyCode::Esc => self.escape(),
            KeyCode::BackTab => super::commands::cycle_thinking(self),
            _ => {}
        }
    }

    /// Esc without a completion list open.
    fn escape(&mut self) {
        if self.busy_since.is_some() {
            self.pull_back_queue();
            self.abort();
        } else if self.transcript.bash_mut().is_some() {
            self.controller.abort_bash();
        } else if self.editor.text().trim_start().starts_with('!') {
            self.editor.clear();
        } else if self.editor.text().trim().is_empty() {
            if self.last_esc.is_some_and(|t| t.elapsed() < DOUBLE_KEY) {
                self.last_esc = None;
                super::commands::builtin(self, "/tree");
            } else {
                self.last_esc = Some(Instant::now());
            }
        }
    }

    /// Alt+Up: the queued steering and follow-up messages come back into the editor.
    fn pull_back_queue(&mut self) {
        let q = self.controller.clear_queue();
        let all: Vec<String> = q.steering.into_iter().chain(q.follow_up).collect();
        if all.is_empty() {
            return;
        }
        let mut text = all.join("\n\n");
        if !self.editor.is_empty() {
            text = format!("{}\n\n{text}", self.editor.text());
        }
        self.editor.set_text(&text);
    }

    pub(super) fn abort(&mut self) {
        let c = self.controller.clone();
        tokio::spawn(async move {
            c.abort_bash();
            c.abort().await;
        });
    }

    /// Enter (or Alt+Enter) on the editor's text.
    fn submit(&mut self, text: String, alt: bool) {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        if let Some(rest) = trimmed.strip_prefix('!') {
            let (exclude, command) = match rest.strip_prefix('!') {
                Some(c) => (true, c.trim()),
                None => (false, rest.trim()),
            };
            super::commands::run_bash(self, command.to_string(), exclude);
            return;
        }
        if trimmed.starts_with('/') && super::commands::builtin(self, trimmed) {
            return;
        }
        let behavior = self.busy_since.map(|_| {
            if alt {
                StreamingBehavior::FollowUp
            } else {
                StreamingBehavior::Steer
            }
        });
        self.prompt(text, behavior);
    }
}
