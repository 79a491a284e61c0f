//! How the editor drives its completion popup: which keys an open list takes, what
//! accepting an item writes into the text, keeping the list in step with the text after every
//! edit or cursor move, and Tab, which opens a list or completes a path. The list's contents
//! come from [`super::completion`], [`super::files`] and [`super::paths`].

use super::completion::{
    context_at, file_insertion, rank_commands, Popup, PopupKind, PopupNote, Trigger,
};
use super::keys::Action;
use super::{paths, CompletionItem, Editor, EditorOutcome, MAX_FILE_RESULTS, MAX_POPUP_ITEMS};

impl Editor {
    /// Keys an open popup takes; `None` lets the key through to the text.
    pub(super) fn popup_key(&mut self, action: &Action) -> Option<EditorOutcome> {
        let popup = self.popup.as_mut()?;
        if *action == Action::Escape {
            self.popup = None;
            self.dismissed = true;
            return Some(EditorOutcome::Handled);
        }
        if popup.items.is_empty() {
            return None;
        }
        match action {
            Action::Up => popup.step(-1),
            Action::Down => popup.step(1),
            Action::PageUp => popup.page(-(MAX_POPUP_ITEMS as isize)),
            Action::PageDown => popup.page(MAX_POPUP_ITEMS as isize),
            Action::Tab => self.accept(),
            Action::Submit => {
                // Picking a command (or its argument) with Enter runs it, as in pi; picking
                // a file only inserts it, the prompt is still being written.
                let runs = matches!(popup.kind, PopupKind::Command | PopupKind::Argument);
                self.accept();
                if runs {
                    return Some(self.submit(false));
                }
            }
            _ => return None,
        }
        Some(EditorOutcome::Handled)
    }

    pub(super) fn accept(&mut self) {
        let Some(popup) = self.popup.take() else {
            return;
        };
        let Some(item) = popup.selected_item() else {
            return;
        };
        if popup.row != self.buf.cursor().0 {
            return;
        }
        // Values can come from a hook: they go into one line, without control characters.
        let value: String = item
            .value
            .chars()
            .map(|c| if c == '\n' { ' ' } else { c })
            .filter(|c| !c.is_control())
            .collect();
        let text = match popup.kind {
            PopupKind::File => file_insertion(&value),
            PopupKind::Command => format!("{value} "),
            PopupKind::Argument | PopupKind::Path => value,
        };
        self.buf.replace_in_line(popup.range.clone(), &text);
        self.edited();
    }

    pub(super) fn update_completion(&mut self) {
        let cursor = self.buf.cursor();
        let Some(ctx) = context_at(self.buf.lines(), cursor) else {
            self.popup = None;
            return;
        };
        let (kind, items, note, generation) = match &ctx.trigger {
            Trigger::Command { prefix } => (
                PopupKind::Command,
                rank_commands(&self.commands, prefix),
                None,
                0,
            ),
            Trigger::Argument { command, prefix } => {
                let items = self
                    .args
                    .as_ref()
                    .map(|a| a.complete_args(command, prefix))
                    .unwrap_or_default();
                (PopupKind::Argument, items, None, 0)
            }
            Trigger::File { query } => {
                let m = self.files.search(query, MAX_FILE_RESULTS);
                let note = if !m.done {
                    Some(PopupNote::Searching)
                } else if m.paths.is_empty() {
                    Some(PopupNote::NoMatches)
                } else if m.truncated {
                    Some(PopupNote::Truncated)
                } else {
                    None
                };
                let items = m.paths.into_iter().map(CompletionItem::new).collect();
                (PopupKind::File, items, note, m.generation)
            }
        };
        if items.is_empty() && kind != PopupKind::File {
            self.popup = None;
            return;
        }
        match &mut self.popup {
            Some(p) if p.kind == kind && p.row == cursor.0 && p.range.start == ctx.range.start => {
                p.replace_items(items);
                // As in pi 1.6, a command list starts again on its best match (the exact
                // name, else the first that starts with what was typed) as the text changes.
                if kind == PopupKind::Command {
                    p.selected = 0;
                }
                p.range = ctx.range;
                p.note = note;
                p.generation = generation;
            }
            _ => {
                let mut p = Popup::new(kind, cursor.0, ctx.range, items);
                p.note = note;
                p.generation = generation;
                self.popup = Some(p);
            }
        }
    }

    /// Tab without a popup: open the completion the text asks for, or complete a path.
    pub(super) fn tab(&mut self) {
        if context_at(self.buf.lines(), self.buf.cursor()).is_some() {
            self.dismissed = false;
            self.update_completion();
            return;
        }
        let before = self.buf.before_cursor();
        let start = before
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word = &before[start..];
        if !paths::looks_like_path(word) {
            return;
        }
        let Some(done) = paths::complete(word, &self.cwd, self.home.as_deref()) else {
            return;
        };
        let col = self.buf.cursor().1;
        self.buf.replace_in_line(start..col, &done.word);
        self.edited();
        if done.candidates.len() > 1 {
            let items = done
                .candidates
                .iter()
                .map(|c| {
                    let name = c.trim_end_matches('/').rsplit('/').next().unwrap_or(c);
                    let slash = if c.ends_with('/') { "/" } else { "" };
                    CompletionItem {
                        value: c.clone(),
                        label: format!("{name}{slash}"),
                        description: None,
                    }
                })
                .collect();
            let row = self.buf.cursor().0;
            self.popup = Some(Popup::new(
                PopupKind::Path,
                row,
                start..start + done.word.len(),
                items,
            ));
        }
    }
}

#[cfg(test)]
#[path = "completing_tests.rs"]
mod tests;
