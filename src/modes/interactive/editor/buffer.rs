//! The editor's text and cursor, and every edit a key can make to them: pure, no terminal and
//! no layout, so each binding is a unit test. Text is a list of logical lines (never empty);
//! the cursor is a line index and a byte offset that always sits on a grapheme boundary, so
//! Left over an emoji or an accented letter moves over the whole thing.
//!
//! Some strings are "atoms" (the collapsed paste markers): the cursor never stops inside one
//! and a deletion that touches one removes all of it, so a marker can never be half-deleted
//! into text that no longer expands to its paste.

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

/// Text, cursor and the last killed text.
#[derive(Debug, Clone)]
pub struct Buffer {
    lines: Vec<String>,
    row: usize,
    col: usize,
    killed: String,
    /// Whether the previous edit was a kill, so consecutive kills collect into one yank as in
    /// readline.
    last_kill: bool,
    atoms: Vec<String>,
}

impl Default for Buffer {
    fn default() -> Self {
        Buffer::new()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Space,
    Punct,
    Word,
}

fn class_of(g: &str) -> Class {
    match g.chars().next() {
        Some(c) if c.is_whitespace() => Class::Space,
        Some(c) if c.is_alphanumeric() || c == '_' => Class::Word,
        _ => Class::Punct,
    }
}

/// Byte length of the grapheme just before `col` in `line`.
fn prev_grapheme_len(line: &str, col: usize) -> usize {
    line[..col].graphemes(true).next_back().map_or(0, str::len)
}

/// Byte length of the grapheme starting at `col` in `line`.
fn next_grapheme_len(line: &str, col: usize) -> usize {
    line[col..].graphemes(true).next().map_or(0, str::len)
}

impl Buffer {
    pub fn new() -> Buffer {
        Buffer {
            lines: vec![String::new()],
            row: 0,
            col: 0,
            killed: String::new(),
            last_kill: false,
            atoms: Vec::new(),
        }
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// (line index, byte offset in that line).
    pub fn cursor(&self) -> (usize, usize) {
        (self.row, self.col)
    }

    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.lines.len() == 1 && self.lines[0].is_empty()
    }

    /// Replace everything; the cursor goes to the end. The kill buffer survives, as it does
    /// across submissions in readline.
    pub fn set_text(&mut self, text: &str) {
        self.lines = text.split('\n').map(str::to_string).collect();
        self.row = self.lines.len() - 1;
        self.col = self.lines[self.row].len();
        self.last_kill = false;
    }

    pub fn clear(&mut self) {
        self.set_text("");
    }

    /// The killed text Ctrl+Y would insert.
    pub fn killed(&self) -> &str {
        &self.killed
    }

    /// Strings edited as one unit from now on.
    pub fn add_atom(&mut self, atom: String) {
        self.atoms.push(atom);
    }

    pub fn retain_atoms(&mut self, keep: impl Fn(&str) -> bool) {
        self.atoms.retain(|a| keep(a));
    }

    /// Byte ranges of atoms on line `row`.
    pub fn atom_ranges(&self, row: usize) -> Vec<Range<usize>> {
        let Some(line) = self.lines.get(row) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for atom in &self.atoms {
            let mut from = 0;
            while let Some(i) = line[from..].find(atom.as_str()) {
                out.push(from + i..from + i + atom.len());
                from += i + atom.len();
            }
        }
        out.sort_by_key(|r| r.start);
        out
    }

    /// Move the cursor to (row, col), clamped to the text and moved out of any atom (to its
    /// end when `forward`, else its start) and onto a grapheme boundary.
    pub fn set_cursor(&mut self, row: usize, col: usize, forward: bool) {
        self.row = row.min(self.lines.len() - 1);
        let line = &self.lines[self.row];
        let mut col = col.min(line.len());
        // The nearest grapheme boundary at or before `col`.
        let mut start = 0;
        for (i, g) in line.grapheme_indices(true) {
            if i + g.len() > col {
                break;
            }
            start = i + g.len();
        }
        if start < col {
            col = if forward {
                start + next_grapheme_len(line, start)
            } else {
                start
            };
        }
        for r in self.atom_ranges(self.row) {
            if r.start < col && col < r.end {
                col = if forward { r.end } else { r.start };
            }
        }
        self.col = col;
    }

    fn touch(&mut self) {
        self.last_kill = false;
    }

    pub fn insert(&mut self, text: &str) {
        self.touch();
        let tail = self.lines[self.row].split_off(self.col);
        let mut parts = text.split('\n');
        if let Some(first) = parts.next() {
            self.lines[self.row].push_str(first);
        }
        for part in parts {
            self.row += 1;
            self.lines.insert(self.row, part.to_string());
        }
        self.col = self.lines[self.row].len();
        self.lines[self.row].push_str(&tail);
    }

    /// Remove `range` of line `row` (extended over any atom it touches) and put the cursor
    /// where it was.
    fn remove_in_line(&mut self, row: usize, range: Range<usize>) -> String {
        let range = self.expand_to_atoms(row, range);
        let removed: String = self.lines[row].drain(range.clone()).collect();
        self.row = row;
        self.col = range.start;
        removed
    }

    fn expand_to_atoms(&self, row: usize, mut range: Range<usize>) -> Range<usize> {
        for r in self.atom_ranges(row) {
            if r.start < range.end && range.start < r.end {
                range.start = range.start.min(r.start);
                range.end = range.end.max(r.end);
            }
        }
        range
    }

    /// Join line `row` with the next one.
    fn join_next(&mut self, row: usize) {
        if row + 1 < self.lines.len() {
            let next = self.lines.remove(row + 1);
            self.row = row;
            self.col = self.lines[row].len();
            self.lines[row].push_str(&next);
        }
    }

    pub fn backspace(&mut self) {
        self.touch();
        if self.col == 0 {
            if self.row > 0 {
                self.join_next(self.row - 1);
            }
            return;
        }
        let len = prev_grapheme_len(&self.lines[self.row], self.col);
        self.remove_in_line(self.row, self.col - len..self.col);
    }

    pub fn delete(&mut self) {
        self.touch();
        let line = &self.lines[self.row];
        if self.col == line.len() {
            self.join_next(self.row);
            return;
        }
        let len = next_grapheme_len(line, self.col);
        self.remove_in_line(self.row, self.col..self.col + len);
    }

    pub fn left(&mut self) {
        self.touch();
        if self.col == 0 {
            if self.row > 0 {
                self.row -= 1;
                self.col = self.lines[self.row].len();
            }
            return;
        }
        let len = prev_grapheme_len(&self.lines[self.row], self.col);
        self.set_cursor(self.row, self.col - len, false);
    }

    pub fn right(&mut self) {
        self.touch();
        let line = &self.lines[self.row];
        if self.col == line.len() {
            if self.row + 1 < self.lines.len() {
                self.row += 1;
                self.col = 0;
            }
            return;
        }
        let len = next_grapheme_len(line, self.col);
        self.set_cursor(self.row, self.col + len, true);
    }

    pub fn home(&mut self) {
        self.touch();
        self.col = 0;
    }

    pub fn end(&mut self) {
        self.touch();
        self.col = self.lines[self.row].len();
    }

    /// Start of the word before the cursor on this line: whitespace is skipped, then a run of
    /// word characters or a run of punctuation (an atom counts as one word).
    fn word_start_before(&self) -> usize {
        let line = &self.lines[self.row];
        let graphemes: Vec<(usize, &str)> = line[..self.col].grapheme_indices(true).collect();
        let mut i = graphemes.len();
        while i > 0 && class_of(graphemes[i - 1].1) == Class::Space {
            i -= 1;
        }
        if i > 0 {
            let class = class_of(graphemes[i - 1].1);
            while i > 0 && class_of(graphemes[i - 1].1) == class {
                i -= 1;
            }
        }
        let start = graphemes.get(i).map_or(self.col, |g| g.0);
        self.expand_to_atoms(self.row, start..start.max(self.col))
            .start
    }

    /// End of the word after the cursor on this line (the mirror of `word_start_before`).
    fn word_end_after(&self) -> usize {
        let line = &self.lines[self.row];
        let mut it = line[self.col..].grapheme_indices(true).peekable();
        let mut end = self.col;
        while let Some(&(i, g)) = it.peek() {
            if class_of(g) != Class::Space {
                break;
            }
            end = self.col + i + g.len();
            it.next();
        }
        if let Some(&(_, g)) = it.peek() {
            let class = class_of(g);
            while let Some(&(i, g)) = it.peek() {
                if class_of(g) != class {
                    break;
                }
                end = self.col + i + g.len();
                it.next();
            }
        }
        self.expand_to_atoms(self.row, self.col..end).end
    }

    pub fn word_left(&mut self) {
        self.touch();
        if self.col == 0 {
            self.left();
            return;
        }
        self.col = self.word_start_before();
    }

    pub fn word_right(&mut self) {
        self.touch();
        if self.col == self.lines[self.row].len() {
            self.right();
            return;
        }
        self.col = self.word_end_after();
    }

    fn kill(&mut self, removed: String, backward: bool) {
        if self.last_kill {
            if backward {
                self.killed.insert_str(0, &removed);
            } else {
                self.killed.push_str(&removed);
            }
        } else {
            self.killed = removed;
        }
        self.last_kill = true;
    }

    /// Ctrl+W / Alt+Backspace. At the start of a line it joins the line to the previous one.
    pub fn kill_word_back(&mut self) {
        if self.col == 0 {
            if self.row > 0 {
                self.join_next(self.row - 1);
                self.kill("\n".into(), true);
            }
            return;
        }
        let start = self.word_start_before();
        let removed = self.remove_in_line(self.row, start..self.col);
        self.kill(removed, true);
    }

    /// Alt+D.
    pub fn kill_word_forward(&mut self) {
        if self.col == self.lines[self.row].len() {
            if self.row + 1 < self.lines.len() {
                self.join_next(self.row);
                self.kill("\n".into(), false);
            }
            return;
        }
        let end = self.word_end_after();
        let removed = self.remove_in_line(self.row, self.col..end);
        self.kill(removed, false);
    }

    /// Ctrl+U: to the start of the line, or the line break before it when already there.
    pub fn kill_to_line_start(&mut self) {
        if self.col == 0 {
            if self.row > 0 {
                self.join_next(self.row - 1);
                self.kill("\n".into(), true);
            }
            return;
        }
        let removed = self.remove_in_line(self.row, 0..self.col);
        self.kill(removed, true);
    }

    /// Ctrl+K: to the end of the line, or the line break after it when already there.
    pub fn kill_to_line_end(&mut self) {
        let len = self.lines[self.row].len();
        if self.col == len {
            if self.row + 1 < self.lines.len() {
                self.join_next(self.row);
                self.kill("\n".into(), false);
            }
            return;
        }
        let removed = self.remove_in_line(self.row, self.col..len);
        self.kill(removed, false);
    }

    /// Ctrl+Y: insert the last killed text.
    pub fn yank(&mut self) {
        let killed = self.killed.clone();
        self.insert(&killed);
    }

    /// Replace `range` of the cursor's line with `text` and put the cursor after it (how a
    /// completion is applied).
    pub fn replace_in_line(&mut self, range: Range<usize>, text: &str) {
        self.touch();
        let line = &mut self.lines[self.row];
        let start = range.start.min(line.len());
        let end = range.end.clamp(start, line.len());
        if !line.is_char_boundary(start) || !line.is_char_boundary(end) {
            // A range computed for other text: replacing it would split a character.
            return;
        }
        line.replace_range(start..end, text);
        self.col = start + text.len();
    }

    /// The cursor's line up to the cursor.
    pub fn before_cursor(&self) -> &str {
        &self.lines[self.row][..self.col]
    }
}

#[cfg(test)]
#[path = "buffer_tests.rs"]
mod tests;
