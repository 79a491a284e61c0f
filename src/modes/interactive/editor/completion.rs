//! What completion the text around the cursor asks for, and the popup list it shows. Three
//! kinds open by themselves as one types: `@query` at the start of a word (files), `/prefix`
//! at the start of the editor (commands, with descriptions) and `/command args` (arguments,
//! from a provider the app supplies); Tab on a path-like word opens the fourth. The editor
//! only completes text: what a `/command` does is the app's business.

use std::ops::Range;

use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// One entry of a completion list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionItem {
    /// The text that replaces what was typed when the item is accepted.
    pub value: String,
    /// What the list shows.
    pub label: String,
    /// Shown dimmed after the label, cut to the width.
    pub description: Option<String>,
}

impl CompletionItem {
    pub fn new(value: impl Into<String>) -> CompletionItem {
        let value = value.into();
        CompletionItem {
            label: value.clone(),
            value,
            description: None,
        }
    }

    pub fn with_description(mut self, description: impl Into<String>) -> CompletionItem {
        self.description = Some(description.into());
        self
    }
}

/// A command the `/` list offers: built-in slash commands, prompt templates, skills
/// (`skill:name`), hook commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandInfo {
    /// Without the leading `/`.
    pub name: String,
    pub description: String,
}

impl CommandInfo {
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> CommandInfo {
        CommandInfo {
            name: name.into(),
            description: description.into(),
        }
    }
}

/// Argument completion for `/command …`, supplied by the app (built-in commands, and hook
/// commands answered through it). It is asked on the UI thread on every keystroke, so it
/// must answer from memory: an implementation waiting on a hook returns what it has (or
/// nothing), asks in the background, and has the app call `Editor::refresh_completions`
/// when the answer arrives.
pub trait ArgumentCompleter: Send {
    /// Items for the arguments of `/command`, given the text typed after `/command `.
    fn complete_args(&self, command: &str, prefix: &str) -> Vec<CompletionItem>;
}

/// What the text before the cursor asks to complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    Command { prefix: String },
    Argument { command: String, prefix: String },
    File { query: String },
}

/// A trigger and the bytes of the cursor's line an accepted item replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub trigger: Trigger,
    pub range: Range<usize>,
}

fn token_end(line: &str, from: usize) -> usize {
    line[from..]
        .find(char::is_whitespace)
        .map_or(line.len(), |i| from + i)
}

/// The completion the text before `cursor` asks for, if any.
pub fn context_at(lines: &[String], cursor: (usize, usize)) -> Option<Context> {
    let (row, col) = cursor;
    let line = lines.get(row)?;
    let before = line.get(..col)?;
    if let Some(ctx) = file_context(line, before) {
        return Some(ctx);
    }
    if row != 0 {
        return None;
    }
    let rest = before.strip_prefix('/')?;
    match rest.find(' ') {
        None if !rest.contains(char::is_whitespace) && !rest.contains('/') => Some(Context {
            trigger: Trigger::Command {
                prefix: rest.to_string(),
            },
            range: 0..token_end(line, col),
        }),
        Some(space) if space > 0 && !rest[..space].contains('/') => Some(Context {
            trigger: Trigger::Argument {
                command: rest[..space].to_string(),
                prefix: rest[space + 1..].to_string(),
            },
            range: space + 2..col,
        }),
        _ => None,
    }
}

fn at_word_start(before: &str, i: usize) -> bool {
    before[..i]
        .chars()
        .next_back()
        .is_none_or(char::is_whitespace)
}

fn file_context(line: &str, before: &str) -> Option<Context> {
    // `@"a dir/fi`: a quoted query may hold spaces, up to its closing quote.
    if let Some(q) = before.rfind("@\"") {
        let query = &before[q + 2..];
        if at_word_start(before, q) && !query.contains('"') {
            let col = before.len();
            let end = line[col..].find('"').map_or(col, |i| col + i + 1);
            return Some(Context {
                trigger: Trigger::File {
                    query: query.to_string(),
                },
                range: q..end,
            });
        }
    }
    let start = before.rfind(char::is_whitespace).map_or(0, |i| {
        i + before[i..].chars().next().map_or(1, char::len_utf8)
    });
    let query = before[start..].strip_prefix('@')?;
    Some(Context {
        trigger: Trigger::File {
            query: query.to_string(),
        },
        range: start..token_end(line, before.len()),
    })
}

/// The `/` list for `prefix`: the command named exactly that, the others starting with it in
/// the app's order, then the rest that match it fuzzily, best first.
pub fn rank_commands(commands: &[CommandInfo], prefix: &str) -> Vec<CompletionItem> {
    let item = |c: &CommandInfo| {
        CompletionItem::new(format!("/{}", c.name)).with_description(c.description.clone())
    };
    let lower = prefix.to_lowercase();
    let mut starting: Vec<&CommandInfo> = commands
        .iter()
        .filter(|c| c.name.to_lowercase().starts_with(&lower))
        .collect();
    // The command typed in full comes first, so Enter runs what was typed.
    starting.sort_by_key(|c| c.name.to_lowercase() != lower);
    let mut out: Vec<CompletionItem> = starting.into_iter().map(item).collect();
    if prefix.is_empty() {
        return out;
    }
    let pattern = Pattern::new(
        prefix,
        CaseMatching::Ignore,
        Normalization::Smart,
        AtomKind::Fuzzy,
    );
    let mut matcher = Matcher::new(Config::DEFAULT);
    let mut buf = Vec::new();
    let mut fuzzy: Vec<(u32, &CommandInfo)> = commands
        .iter()
        .filter(|c| !c.name.to_lowercase().starts_with(&lower))
        .filter_map(|c| {
            Some((
                pattern.score(Utf32Str::new(&c.name, &mut buf), &mut matcher)?,
                c,
            ))
        })
        .collect();
    fuzzy.sort_by_key(|f| std::cmp::Reverse(f.0));
    out.extend(fuzzy.into_iter().map(|(_, c)| item(c)));
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopupKind {
    Command,
    Argument,
    File,
    Path,
}

/// A line the popup shows instead of, or after, its items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopupNote {
    /// The file walk is still running.
    Searching,
    /// Nothing matched (the walk is done).
    NoMatches,
    /// The walk stopped at its bound; some files are not offered.
    Truncated,
}

/// An open completion list.
#[derive(Debug, Clone)]
pub struct Popup {
    pub kind: PopupKind,
    pub items: Vec<CompletionItem>,
    pub selected: usize,
    /// The line and bytes an accepted item replaces.
    pub row: usize,
    pub range: Range<usize>,
    pub note: Option<PopupNote>,
    /// The file index generation the items were ranked at.
    pub generation: u64,
}

impl Popup {
    pub fn new(
        kind: PopupKind,
        row: usize,
        range: Range<usize>,
        items: Vec<CompletionItem>,
    ) -> Popup {
        Popup {
            kind,
            items,
            selected: 0,
            row,
            range,
            note: None,
            generation: 0,
        }
    }

    pub fn selected_item(&self) -> Option<&CompletionItem> {
        self.items.get(self.selected)
    }

    /// Move the selection by `delta`, wrapping around at either end.
    pub fn step(&mut self, delta: isize) {
        let n = self.items.len() as isize;
        if n == 0 {
            return;
        }
        self.selected = (self.selected as isize + delta).rem_euclid(n) as usize;
    }

    /// Move by a page, stopping at the ends.
    pub fn page(&mut self, delta: isize) {
        let last = self.items.len().saturating_sub(1) as isize;
        self.selected = (self.selected as isize + delta).clamp(0, last) as usize;
    }

    /// Keep the selected item's label across a re-rank, if it is still there.
    pub fn replace_items(&mut self, items: Vec<CompletionItem>) {
        let keep = self.selected_item().map(|i| i.value.clone());
        self.items = items;
        self.selected = keep
            .and_then(|v| self.items.iter().position(|i| i.value == v))
            .unwrap_or(0);
    }
}

/// `@path ` as inserted for a chosen file: quoted when it has a space, and no trailing space
/// for a directory, so completion can go on inside it.
pub fn file_insertion(path: &str) -> String {
    let quoted = if path.contains(char::is_whitespace) {
        format!("@\"{path}\"")
    } else {
        format!("@{path}")
    };
    if path.ends_with('/') {
        // A quoted directory stays open for the rest of its path.
        quoted
            .strip_suffix('"')
            .map_or(quoted.clone(), str::to_string)
    } else {
        format!("{quoted} ")
    }
}

#[cfg(test)]
#[path = "completion_tests.rs"]
mod tests;
