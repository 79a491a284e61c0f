//! The prompt editor at the bottom of the interactive screen: multi-line editing with readline
//! keys, history per project, bracketed paste (large pastes collapsed to a marker), and
//! completion of `@files`, `/commands` with their arguments, and paths on Tab.
//!
//! It is a state machine with no terminal I/O: the app feeds it keys
//! ([`Editor::handle_key`]) and pastes ([`Editor::handle_paste`]), asks it for lines to draw
//! ([`Editor::render`]) and acts on what comes back ([`EditorOutcome`]). It never decides
//! what a submission means (`/cmd`, `!cmd`, steer or prompt): it hands over the text, and
//! whether it came with Enter or Alt+Enter.
//!
//! Work that could make a keystroke wait (walking the project for `@`) runs on a background
//! thread; when it has news it calls the app's `notify`, and the app then calls
//! [`Editor::poll_background`] on its own thread and redraws.

mod buffer;
mod completing;
mod completion;
mod files;
mod history;
mod history_file;
mod keys;
mod layout;
pub(crate) mod paste;
mod paths;
mod render;

use std::cell::Cell;
use std::path::{Path, PathBuf};

use crossterm::event::KeyEvent;

pub use completion::{ArgumentCompleter, CommandInfo, CompletionItem};
pub use files::{Notify, MAX_FILES};
pub use history_file::{history_path, HistoryError, MAX_ENTRIES as MAX_HISTORY};
pub use paste::{COLLAPSE_CHARS, COLLAPSE_LINES};
pub use render::{EditorView, MAX_POPUP_ITEMS, MAX_ROWS};

use buffer::Buffer;
use completion::{Popup, PopupKind};
use files::FileIndex;
use history::History;
use keys::Action;
use paste::Pastes;

use super::theme::Theme;

/// File matches ranked for one `@` query.
const MAX_FILE_RESULTS: usize = 50;

pub const DEFAULT_PLACEHOLDER: &str = "Message pi · / for commands · @ for files";

/// What a key meant, for the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorOutcome {
    /// The editor used the key (redraw).
    Handled,
    /// Not an editor key: Ctrl+C, Ctrl+D on an empty editor, Esc with no popup open,
    /// Shift+Tab, function keys… The app decides.
    Ignored,
    /// Enter: the full text (pastes expanded, trimmed), never empty. The editor is now empty
    /// and the text is in the history. While the agent works, the app treats it as steering.
    Submit(String),
    /// Alt+Enter: as `Submit`, marked as a follow-up (queued until the run ends).
    FollowUp(String),
}

/// Where the editor lives.
pub struct EditorOptions {
    /// The working directory `@` and Tab complete against.
    pub cwd: PathBuf,
    /// What `~/` means for Tab completion.
    pub home: Option<PathBuf>,
    /// The history file ([`history_path`]); `None` keeps history in memory only.
    pub history_file: Option<PathBuf>,
    /// Called from a background thread when `poll_background` has something new.
    pub notify: Option<Notify>,
}

impl EditorOptions {
    /// The options for a project: history under `agent_dir`, keyed by `cwd`.
    pub fn for_project(agent_dir: &Path, cwd: &Path, notify: Option<Notify>) -> EditorOptions {
        EditorOptions {
            cwd: cwd.to_path_buf(),
            home: dirs::home_dir(),
            // Keyed by the same string session directories are (`cwd.display()`).
            history_file: Some(history_path(agent_dir, &cwd.display().to_string())),
            notify,
        }
    }
}

pub struct Editor {
    buf: Buffer,
    pastes: Pastes,
    history: History,
    popup: Option<Popup>,
    /// Esc closed the popup; it stays closed until the text changes.
    dismissed: bool,
    commands: Vec<CommandInfo>,
    args: Option<Box<dyn ArgumentCompleter>>,
    files: FileIndex,
    cwd: PathBuf,
    home: Option<PathBuf>,
    placeholder: String,
    /// The column Up/Down aim for, kept across consecutive vertical moves.
    goal: Option<usize>,
    /// The width of the last render: Up/Down move over the rows drawn at it.
    width: Cell<Option<usize>>,
    scroll: Cell<usize>,
}

impl Editor {
    pub fn new(options: EditorOptions) -> Editor {
        let history = match options.history_file {
            Some(path) => History::open(path),
            None => History::in_memory(),
        };
        Editor {
            buf: Buffer::new(),
            pastes: Pastes::default(),
            history,
            popup: None,
            dismissed: false,
            commands: Vec::new(),
            args: None,
            files: FileIndex::new(options.cwd.clone(), options.notify),
            cwd: options.cwd,
            home: options.home,
            placeholder: DEFAULT_PLACEHOLDER.into(),
            goal: None,
            width: Cell::new(None),
            scroll: Cell::new(0),
        }
    }

    /// The commands `/` offers, in the order to list them.
    pub fn set_commands(&mut self, commands: Vec<CommandInfo>) {
        self.commands = commands;
        if self
            .popup
            .as_ref()
            .is_some_and(|p| p.kind == PopupKind::Command)
        {
            self.update_completion();
        }
    }

    pub fn set_argument_completer(&mut self, completer: Box<dyn ArgumentCompleter>) {
        self.args = Some(completer);
    }

    pub fn set_placeholder(&mut self, text: impl Into<String>) {
        self.placeholder = text.into();
    }

    /// The full text (pastes expanded), as it would be submitted.
    pub fn text(&self) -> String {
        self.pastes.expand(&self.buf.text())
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Replace the text (a hook's `ui.set_editor_text`, a queued message pulled back); the
    /// cursor goes to the end and no popup opens. Control characters are dropped as from a
    /// paste: a hook's text must not reach the terminal as escape sequences.
    pub fn set_text(&mut self, text: &str) {
        self.buf.set_text(&paste::sanitize(text));
        self.reset_state();
    }

    pub fn clear(&mut self) {
        self.set_text("");
    }

    /// Problems with the history file, each reported once; the app shows them as notices.
    pub fn take_problems(&mut self) -> Vec<HistoryError> {
        self.history.take_problems()
    }

    pub fn has_popup(&self) -> bool {
        self.popup.is_some()
    }

    /// Start listing files now, so the first `@` finds them ready.
    pub fn prefetch_files(&self) {
        self.files.ensure_started();
    }

    /// Files changed (a run wrote some): the next `@` walks again.
    pub fn invalidate_files(&mut self) {
        self.files.invalidate();
    }

    /// Apply what background work brought (new file matches for an open `@` list). True when
    /// the view changed and should be redrawn.
    pub fn poll_background(&mut self) -> bool {
        match &self.popup {
            Some(p) if p.kind == PopupKind::File && p.generation != self.files.generation() => {
                self.update_completion();
                true
            }
            _ => false,
        }
    }

    /// Ask the completion sources again (an argument completer got its answer).
    pub fn refresh_completions(&mut self) {
        if !self.dismissed
            && self
                .popup
                .as_ref()
                .is_none_or(|p| p.kind != PopupKind::Path)
        {
            self.update_completion();
        }
    }

    pub fn render(&self, width: usize, theme: &Theme) -> EditorView {
        self.width.set(Some(width.max(1)));
        let (lines, cursor) =
            render::render_box(&self.buf, &self.placeholder, width, theme, &self.scroll);
        let popup = self
            .popup
            .as_ref()
            .map(|p| render::render_popup(p, width, theme))
            .unwrap_or_default();
        EditorView {
            lines,
            cursor,
            popup,
        }
    }

    /// Bracketed paste: inserted as is (see [`paste::sanitize`]), collapsed to a marker when
    /// large.
    pub fn handle_paste(&mut self, text: &str) {
        let clean = paste::sanitize(text);
        if clean.is_empty() {
            return;
        }
        let (shown, marker) = self.pastes.add(clean);
        if let Some(m) = marker {
            self.buf.add_atom(m);
        }
        self.buf.insert(&shown);
        self.edited();
    }

    pub fn handle_key(&mut self, key: &KeyEvent) -> EditorOutcome {
        let Some(action) = keys::action_for(key) else {
            return EditorOutcome::Ignored;
        };
        if let Some(outcome) = self.popup_key(&action) {
            return outcome;
        }
        if !matches!(
            action,
            Action::Up | Action::Down | Action::PageUp | Action::PageDown
        ) {
            self.goal = None;
        }
        match action {
            Action::Insert(c) => self.edit(|b| b.insert(c.encode_utf8(&mut [0; 4]))),
            Action::Newline => self.edit(|b| b.insert("\n")),
            Action::Submit if self.buf.before_cursor().ends_with('\\') => self.edit(|b| {
                b.backspace();
                b.insert("\n");
            }),
            Action::Submit => return self.submit(false),
            Action::FollowUp => return self.submit(true),
            Action::Backspace => self.edit(Buffer::backspace),
            Action::Delete => self.edit(Buffer::delete),
            Action::DeleteOrEof if self.buf.is_empty() => return EditorOutcome::Ignored,
            Action::DeleteOrEof => self.edit(Buffer::delete),
            Action::KillWordBack => self.edit(Buffer::kill_word_back),
            Action::KillWordForward => self.edit(Buffer::kill_word_forward),
            Action::KillToLineStart => self.edit(Buffer::kill_to_line_start),
            Action::KillToLineEnd => self.edit(Buffer::kill_to_line_end),
            Action::Yank => self.edit(Buffer::yank),
            Action::Left => self.moved(Buffer::left),
            Action::Right => self.moved(Buffer::right),
            Action::Home => self.moved(Buffer::home),
            Action::End => self.moved(Buffer::end),
            Action::WordLeft => self.moved(Buffer::word_left),
            Action::WordRight => self.moved(Buffer::word_right),
            Action::Up => self.vertical(-1, true),
            Action::Down => self.vertical(1, true),
            Action::PageUp => self.vertical(-(MAX_ROWS as isize), false),
            Action::PageDown => self.vertical(MAX_ROWS as isize, false),
            Action::Tab => self.tab(),
            Action::Escape => return EditorOutcome::Ignored,
        }
        EditorOutcome::Handled
    }

    pub(super) fn submit(&mut self, follow_up: bool) -> EditorOutcome {
        let full = self.text();
        let text = full.trim();
        if text.is_empty() {
            return EditorOutcome::Handled;
        }
        let text = text.to_string();
        self.history.push(&text);
        self.buf.clear();
        self.reset_state();
        // Keep only pastes a yank could still bring back.
        let killed = self.buf.killed().to_string();
        self.pastes.retain(|m| killed.contains(m));
        self.buf.retain_atoms(|m| killed.contains(m));
        if follow_up {
            EditorOutcome::FollowUp(text)
        } else {
            EditorOutcome::Submit(text)
        }
    }

    fn reset_state(&mut self) {
        self.history.reset();
        self.popup = None;
        self.dismissed = false;
        self.goal = None;
    }

    fn edit(&mut self, f: impl FnOnce(&mut Buffer)) {
        f(&mut self.buf);
        self.edited();
    }

    /// After the text changed: a history browse ends (the text is the new draft) and the
    /// completion follows the text.
    pub(super) fn edited(&mut self) {
        self.history.reset();
        self.dismissed = false;
        self.update_completion();
    }

    fn moved(&mut self, f: impl FnOnce(&mut Buffer)) {
        f(&mut self.buf);
        if !self.dismissed {
            self.update_completion();
        }
    }

    /// Up/Down over the rows as drawn; past the first or last row, through the history when
    /// `history` (Page keys stop at the ends).
    fn vertical(&mut self, delta: isize, history: bool) {
        let width = self.width.get().unwrap_or(usize::MAX);
        let rows = layout::rows(self.buf.lines(), width, self.buf.cursor());
        let (row, col) = layout::locate(&rows, self.buf.lines(), self.buf.cursor(), width);
        let last = rows.len() - 1;
        if history && delta < 0 && row == 0 {
            if let Some(entry) = self.history.older(&self.buf.text()) {
                let entry = entry.to_string();
                self.show_history(&entry);
            }
            return;
        }
        if history && delta > 0 && row == last {
            if let Some(entry) = self.history.newer() {
                self.show_history(&entry);
            }
            return;
        }
        let goal = *self.goal.get_or_insert(col);
        let target = (row as isize + delta).clamp(0, last as isize) as usize;
        let (line, byte) = layout::position_at(&rows, self.buf.lines(), target, goal, width);
        self.buf.set_cursor(line, byte, delta > 0);
        if !self.dismissed {
            self.update_completion();
        }
    }

    /// Show a history entry (or the draft) without ending the browse. The file is anyone's
    /// to edit, so its text is cleaned like a paste.
    fn show_history(&mut self, text: &str) {
        self.buf.set_text(&paste::sanitize(text));
        self.popup = None;
        self.goal = None;
    }
}

#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;
