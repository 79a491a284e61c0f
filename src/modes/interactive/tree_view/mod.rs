//! `/tree`'s selector, as 1.6's: every entry of the session (messages, tool results, bash
//! runs, compactions, branch summaries, model and thinking changes, labels, titles, hook
//! entries and messages) in its tree, the branch you are on first and marked `•`, with 1.6's
//! filters (Ctrl+D default, Ctrl+T no tools, Ctrl+U user only, Ctrl+L labelled only, Ctrl+A
//! all, Ctrl+O cycles), type-to-search over the entries' text, and folding of branches
//! (Ctrl/Alt+←/→), and labels edited in place (Shift+L) with their times (Shift+T). It is
//! pure state: keys in, lines out, the chosen entry's id as the answer, and the labels to
//! write for the app to take.

mod flat;
mod label;
#[cfg(test)]
mod tests;
mod text;

use std::collections::{HashMap, HashSet};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;

pub use flat::Filter;
use flat::{Node, Shape};

use super::text::Line;
use super::theme::Theme;

pub struct TreeView {
    nodes: Vec<Node>,
    /// Indices into `nodes` of the rows shown, in order.
    shown: Vec<usize>,
    selected: usize,
    /// The entry last selected, kept while a filter shows nothing.
    last_selected: Option<String>,
    leaf: Option<String>,
    active: HashSet<String>,
    calls: text::Calls,
    filter: Filter,
    search: String,
    folded: HashSet<String>,
    shape: Shape,
    /// Rows of the tree shown at once (half the window, at least 5, as 1.6).
    max_lines: usize,
    label_edit: Option<label::LabelEdit>,
    /// When each label was set, and whether the rows show it (Shift+T).
    label_times: HashMap<String, String>,
    show_label_times: bool,
    /// Labels saved here that the session has yet to record: (entry, label or removal).
    saved_labels: Vec<(String, Option<String>)>,
}

/// What a key did to the selector.
#[derive(Debug, PartialEq, Eq)]
pub enum TreeKey {
    /// Still choosing.
    Stay,
    /// This entry was chosen.
    Chose(String),
    Cancelled,
}

impl TreeView {
    /// The tree (`get_tree`'s shape), the current leaf, the window's height, and the entry to
    /// start on (the leaf when `None`).
    pub fn new(tree: &Value, leaf: Option<&str>, height: usize, start: Option<&str>) -> TreeView {
        let nodes = flat::flatten(tree, leaf);
        let active = flat::active_path(&nodes, leaf);
        let calls = text::calls(nodes.iter().map(|n| &n.entry));
        let label_times = label::label_times(&nodes);
        let mut v = TreeView {
            nodes,
            shown: Vec::new(),
            selected: 0,
            last_selected: None,
            leaf: leaf.map(str::to_string),
            active,
            calls,
            filter: Filter::Default,
            search: String::new(),
            folded: HashSet::new(),
            shape: Shape::default(),
            max_lines: (height / 2).max(5),
            label_edit: None,
            label_times,
            show_label_times: false,
            saved_labels: Vec::new(),
        };
        v.apply(start.or(leaf).map(str::to_string));
        v
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The labels saved since the last call, for the session to record in this order.
    pub fn take_saved_labels(&mut self) -> Vec<(String, Option<String>)> {
        std::mem::take(&mut self.saved_labels)
    }

    /// The chosen entry's label is now `label`: shown at once, recorded by the app.
    fn save_label(&mut self, target: String, label: Option<String>) {
        if let Some(node) = self.nodes.iter_mut().find(|n| n.id == target) {
            node.label = label.clone();
        }
        match &label {
            Some(_) => {
                let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
                self.label_times.insert(target.clone(), now);
            }
            None => {
                self.label_times.remove(&target);
            }
        }
        self.saved_labels.push((target, label));
    }

    /// A key while a label is typed: it all goes to the label.
    fn edit_key(&mut self, key: KeyEvent) -> TreeKey {
        let Some(edit) = self.label_edit.as_mut() else {
            return TreeKey::Stay;
        };
        match edit.handle_key(key) {
            label::EditKey::Typing => {}
            label::EditKey::Cancel => self.label_edit = None,
            label::EditKey::Save(label) => {
                let target = edit.target.clone();
                self.label_edit = None;
                self.save_label(target, label);
            }
        }
        TreeKey::Stay
    }

    fn selected_id(&self) -> Option<String> {
        self.shown
            .get(self.selected)
            .map(|&i| self.nodes[i].id.clone())
    }

    /// Filter, search and folds applied; the selection stays on `keep` or its nearest shown
    /// ancestor, else on the last row.
    fn apply(&mut self, keep: Option<String>) {
        let tokens: Vec<String> = self
            .search
            .to_lowercase()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let leaf = self.leaf.as_deref();
        let mut shown: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                let n = &self.nodes[i];
                flat::passes(n, self.filter, leaf) && {
                    let hay = text::searchable(&n.entry, n.label.as_deref()).to_lowercase();
                    tokens.iter().all(|t| hay.contains(t.as_str()))
                }
            })
            .collect();
        if !self.folded.is_empty() {
            let mut hidden: HashSet<&str> = HashSet::new();
            for n in &self.nodes {
                if let Some(p) = n.parent.as_deref() {
                    if self.folded.contains(p) || hidden.contains(p) {
                        hidden.insert(n.id.as_str());
                    }
                }
            }
            let hidden: HashSet<String> = hidden.into_iter().map(str::to_string).collect();
            shown.retain(|&i| !hidden.contains(&self.nodes[i].id));
        }
        self.shape = flat::lay_out(&mut self.nodes, &shown);
        self.shown = shown;
        self.selected = self.nearest(keep.as_deref());
        self.last_selected = self.selected_id().or(keep);
    }

    /// The row of `id` or of its nearest shown ancestor; the last row otherwise.
    fn nearest(&self, id: Option<&str>) -> usize {
        let mut at = id.map(str::to_string);
        while let Some(id) = at {
            if let Some(k) = self.shown.iter().position(|&i| self.nodes[i].id == id) {
                return k;
            }
            at = self
                .nodes
                .iter()
                .find(|n| n.id == id)
                .and_then(|n| n.parent.clone());
        }
        self.shown.len().saturating_sub(1)
    }

    fn refilter(&mut self) {
        let keep = self.selected_id().or_else(|| self.last_selected.clone());
        self.folded.clear();
        self.apply(keep);
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> TreeKey {
        if self.label_edit.is_some() {
            return self.edit_key(key);
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let n = self.shown.len();
        match key.code {
            KeyCode::Up if !alt => {
                self.selected = if self.selected == 0 {
                    n.saturating_sub(1)
                } else {
                    self.selected - 1
                }
            }
            KeyCode::Down if !alt => {
                self.selected = if self.selected + 1 >= n {
                    0
                } else {
                    self.selected + 1
                }
            }
            KeyCode::Left if ctrl || alt => self.fold_or_up(),
            KeyCode::Right if ctrl || alt => self.unfold_or_down(),
            KeyCode::Left | KeyCode::PageUp => {
                self.selected = self.selected.saturating_sub(self.max_lines)
            }
            KeyCode::Right | KeyCode::PageDown => {
                self.selected = (self.selected + self.max_lines).min(n.saturating_sub(1))
            }
            KeyCode::Enter => {
                if let Some(id) = self.selected_id() {
                    return TreeKey::Chose(id);
                }
            }
            KeyCode::Esc if !self.search.is_empty() => {
                self.search.clear();
                self.refilter();
            }
            KeyCode::Esc => return TreeKey::Cancelled,
            KeyCode::Char('c') if ctrl => return TreeKey::Cancelled,
            KeyCode::Char(c) if ctrl => {
                let to = match c {
                    'd' => Filter::Default,
                    't' => self.toggle(Filter::NoTools),
                    'u' => self.toggle(Filter::UserOnly),
                    'l' => self.toggle(Filter::LabeledOnly),
                    'a' => self.toggle(Filter::All),
                    'o' | 'O' => self.cycle(if shift { -1 } else { 1 }),
                    _ => return TreeKey::Stay,
                };
                self.filter = to;
                self.refilter();
            }
            // Shift+L and Shift+T are 1.6's label keys, so those capitals do not search.
            KeyCode::Char('L') if !alt => {
                if let Some(id) = self.selected_id() {
                    let current = self.nodes.iter().find(|n| n.id == id);
                    let current = current.and_then(|n| n.label.as_deref());
                    self.label_edit = Some(label::LabelEdit::new(id, current));
                }
            }
            KeyCode::Char('T') if !alt => self.show_label_times = !self.show_label_times,
            KeyCode::Backspace if !self.search.is_empty() => {
                self.search.pop();
                self.refilter();
            }
            KeyCode::Char(c) if !alt && !c.is_control() => {
                self.search.push(c);
                self.refilter();
            }
            _ => {}
        }
        TreeKey::Stay
    }

    fn toggle(&self, f: Filter) -> Filter {
        if self.filter == f {
            Filter::Default
        } else {
            f
        }
    }

    fn cycle(&self, by: isize) -> Filter {
        let all = Filter::CYCLE;
        let at = all.iter().position(|f| *f == self.filter).unwrap_or(0) as isize;
        all[(at + by).rem_euclid(all.len() as isize) as usize]
    }

    /// A branch's first row or a root, with shown children: it can fold.
    fn foldable(&self, id: &str) -> bool {
        let has_kids = self
            .shape
            .children
            .get(&Some(id.to_string()))
            .is_some_and(|k| !k.is_empty());
        if !has_kids {
            return false;
        }
        match self.shape.parent.get(id).cloned().flatten() {
            None => true,
            Some(p) => self
                .shape
                .children
                .get(&Some(p))
                .is_some_and(|s| s.len() > 1),
        }
    }

    fn fold_or_up(&mut self) {
        let Some(id) = self.selected_id() else { return };
        if self.foldable(&id) && !self.folded.contains(&id) {
            self.folded.insert(id.clone());
            self.apply(Some(id));
            return;
        }
        // Up to the start of this branch segment (or the one above).
        let mut at = id;
        while let Some(Some(parent)) = self.shape.parent.get(&at).cloned() {
            let siblings = self
                .shape
                .children
                .get(&Some(parent.clone()))
                .map_or(0, Vec::len);
            if siblings > 1 && self.row_of(&at).is_some_and(|r| r < self.selected) {
                break;
            }
            at = parent;
        }
        if let Some(r) = self.row_of(&at) {
            self.selected = r;
        }
    }

    fn unfold_or_down(&mut self) {
        let Some(id) = self.selected_id() else { return };
        if self.folded.remove(&id) {
            self.apply(Some(id));
            return;
        }
        let mut at = id;
        loop {
            let kids = self
                .shape
                .children
                .get(&Some(at.clone()))
                .cloned()
                .unwrap_or_default();
            match kids.len() {
                0 => break,
                1 => at = kids[0].clone(),
                _ => {
                    at = kids[0].clone();
                    break;
                }
            }
        }
        if let Some(r) = self.row_of(&at) {
            self.selected = r;
        }
    }

    fn row_of(&self, id: &str) -> Option<usize> {
        self.shown.iter().position(|&i| self.nodes[i].id == id)
    }

    /// The selector: title, keys, search line, the rows around the selection, the count.
    pub fn render(&self, width: usize, theme: &Theme) -> Vec<Line> {
        let rule = || Line::styled("─".repeat(width), theme.border);
        let mut out = vec![Line::new(), rule()];
        out.push(Line::styled("   Session Tree", theme.bold));
        for l in help(width) {
            out.push(Line::styled(l, theme.muted));
        }
        let mut search = Line::styled("  Type to search:", theme.muted);
        search.push(format!(" {}", self.search), theme.accent);
        out.push(search.truncated(width));
        out.push(rule());
        out.push(Line::new());
        match &self.label_edit {
            Some(edit) => out.extend(edit.render(width, theme)),
            None => out.extend(self.rows(width, theme)),
        }
        out.push(Line::new());
        out.push(rule());
        out
    }

    fn rows(&self, width: usize, theme: &Theme) -> Vec<Line> {
        let mut status = self.filter.status().to_string();
        if self.show_label_times {
            status.push_str(" [+label time]");
        }
        if self.shown.is_empty() {
            return vec![
                Line::styled("  No entries found", theme.muted),
                Line::styled(format!("  (0/0){status}"), theme.muted),
            ];
        }
        let n = self.shown.len();
        let start = self
            .selected
            .saturating_sub(self.max_lines / 2)
            .min(n.saturating_sub(self.max_lines));
        let end = (start + self.max_lines).min(n);
        let mut out = Vec::new();
        for k in start..end {
            out.push(self.row(k, theme).truncated(width));
        }
        out.push(
            Line::styled(
                format!("  ({}/{n}){status}", self.selected + 1),
                theme.muted,
            )
            .truncated(width),
        );
        out
    }

    /// One row: cursor, the tree's lines, fold mark, `•` on the current branch, the label,
    /// the entry's text.
    fn row(&self, k: usize, theme: &Theme) -> Line {
        let node = &self.nodes[self.shown[k]];
        let sel = k == self.selected;
        let mut l = Line::new();
        l.push(if sel { "› " } else { "  " }, theme.accent);
        let multi = self.shape.multiple_roots;
        let display = if multi {
            node.indent.saturating_sub(1)
        } else {
            node.indent
        };
        let connector = node.connector && !node.virtual_root_child;
        let folded = self.folded.contains(&node.id);
        let mut prefix = String::new();
        for level in 0..display {
            if let Some(&(_, drawn)) = node.gutters.iter().find(|g| g.0 == level) {
                prefix.push_str(if drawn { "│  " } else { "   " });
            } else if connector && level + 1 == display {
                prefix.push(if node.last { '└' } else { '├' });
                prefix.push(if folded {
                    '⊞'
                } else if self.foldable(&node.id) {
                    '⊟'
                } else {
                    '─'
                });
                prefix.push(' ');
            } else {
                prefix.push_str("   ");
            }
        }
        l.push(prefix, theme.muted.dim());
        if folded && !connector {
            l.push("⊞ ", theme.accent);
        }
        if self.active.contains(&node.id) {
            l.push("• ", theme.accent);
        }
        if let Some(label) = &node.label {
            l.push(format!("[{label}] "), theme.warning);
            let at = self
                .label_times
                .get(&node.id)
                .filter(|_| self.show_label_times);
            if let Some(at) = at.and_then(|t| label::short_time(t, chrono::Local::now())) {
                l.push(format!("{at} "), theme.muted);
            }
        }
        // The chosen row's text is bold, as 1.6 draws it.
        for span in text::describe(&node.entry, &self.calls, theme).spans {
            let style = if sel {
                span.style.patch(theme.bold)
            } else {
                span.style
            };
            l.push(span.text().to_string(), style);
        }
        l
    }
}

/// The key help under the title, wrapped as 1.6 wraps it (items joined by ` · `), naming
/// only the keys this selector has.
fn help(width: usize) -> Vec<String> {
    let items = [
        "↑/↓ move",
        "←/→ page",
        "ctrl+←/→ branch",
        "shift+l label",
        "shift+t label time",
        "filters ctrl+d/t/u/l/a",
        "cycle ctrl+o/shift+ctrl+o",
    ];
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for item in items {
        let candidate = if cur.is_empty() {
            format!("  {item}")
        } else {
            format!("{cur} · {item}")
        };
        if cur.is_empty() || candidate.chars().count() <= width {
            cur = candidate;
        } else {
            lines.push(std::mem::take(&mut cur));
            cur = format!("  {item}");
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}
