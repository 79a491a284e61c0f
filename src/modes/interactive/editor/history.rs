//! Browsing previous submissions with Up/Down: the list (bounded, no entry equal to the one
//! before it), where the browse is, and the draft that was in the editor when it began, which
//! comes back when the browse goes past the newest entry. Persistence is
//! [`super::history_file`]'s; this part keeps working, for the session, when the file does not.

use std::collections::VecDeque;
use std::path::PathBuf;

use super::history_file::{self, HistoryError, MAX_ENTRIES, MAX_PERSISTED_BYTES};

#[derive(Debug, Default)]
pub struct History {
    entries: VecDeque<String>,
    /// Index of the entry shown, while browsing.
    at: Option<usize>,
    draft: String,
    file: Option<PathBuf>,
    problems: Vec<HistoryError>,
    write_failed: bool,
}

impl History {
    /// A history that lives for this process only.
    pub fn in_memory() -> History {
        History::default()
    }

    /// The history persisted at `path`; whatever goes wrong reading it is kept for
    /// [`History::take_problems`] and the history starts with what could be read.
    pub fn open(path: PathBuf) -> History {
        let loaded = history_file::load(&path);
        History {
            entries: loaded.entries.into(),
            problems: loaded.problems,
            file: Some(path),
            ..History::default()
        }
    }

    #[cfg(test)]
    pub fn entries(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(String::as_str)
    }

    /// Problems to show the user, each once.
    pub fn take_problems(&mut self) -> Vec<HistoryError> {
        std::mem::take(&mut self.problems)
    }

    /// Record a submission and end any browse.
    pub fn push(&mut self, text: &str) {
        self.reset();
        if text.trim().is_empty() || self.entries.back().is_some_and(|last| last == text) {
            return;
        }
        self.entries.push_back(text.to_string());
        while self.entries.len() > MAX_ENTRIES {
            self.entries.pop_front();
        }
        if let Some(path) = &self.file {
            if text.len() > MAX_PERSISTED_BYTES {
                return;
            }
            if let Err(e) = history_file::append(path, text) {
                // One report is enough; a full disk would otherwise complain on every prompt.
                if !self.write_failed {
                    self.write_failed = true;
                    self.problems.push(e);
                }
            }
        }
    }

    #[cfg(test)]
    pub fn is_browsing(&self) -> bool {
        self.at.is_some()
    }

    /// End a browse (the editor's text was edited, submitted or replaced); the text now in
    /// the editor is the new draft.
    pub fn reset(&mut self) {
        self.at = None;
        self.draft.clear();
    }

    /// Up: the entry before the one shown (the newest when not browsing yet, keeping
    /// `current` as the draft). `None` when there is nothing older.
    pub fn older(&mut self, current: &str) -> Option<&str> {
        let next = match self.at {
            None if self.entries.is_empty() => return None,
            None => {
                self.draft = current.to_string();
                self.entries.len() - 1
            }
            Some(0) => return None,
            Some(i) => i - 1,
        };
        self.at = Some(next);
        self.entries.get(next).map(String::as_str)
    }

    /// Down: the entry after the one shown, or the draft after the newest. `None` when not
    /// browsing.
    pub fn newer(&mut self) -> Option<String> {
        let i = self.at?;
        if i + 1 < self.entries.len() {
            self.at = Some(i + 1);
            self.entries.get(i + 1).cloned()
        } else {
            self.at = None;
            Some(std::mem::take(&mut self.draft))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(entries: &[&str]) -> History {
        let mut h = History::in_memory();
        for e in entries {
            h.push(e);
        }
        h
    }

    #[test]
    fn up_walks_back_and_down_returns_to_the_draft() {
        let mut h = with(&["one", "two", "three"]);
        assert_eq!(h.older("my draft"), Some("three"));
        assert_eq!(h.older("three"), Some("two"));
        assert_eq!(h.older("two"), Some("one"));
        assert_eq!(h.older("one"), None, "nothing older: stays");
        assert_eq!(h.newer().as_deref(), Some("two"));
        assert_eq!(h.newer().as_deref(), Some("three"));
        assert_eq!(h.newer().as_deref(), Some("my draft"));
        assert_eq!(h.newer(), None, "not browsing any more");
    }

    #[test]
    fn an_empty_history_has_nothing_to_show() {
        let mut h = History::in_memory();
        assert_eq!(h.older("x"), None);
        assert!(!h.is_browsing());
    }

    #[test]
    fn a_repeat_of_the_previous_entry_is_not_stored_but_older_repeats_are() {
        let h = with(&["a", "a", "b", "a", "  "]);
        assert_eq!(h.entries().collect::<Vec<_>>(), ["a", "b", "a"]);
    }

    #[test]
    fn the_list_is_bounded_dropping_the_oldest() {
        let mut h = History::in_memory();
        for i in 0..MAX_ENTRIES + 3 {
            h.push(&format!("p{i}"));
        }
        assert_eq!(h.entries().count(), MAX_ENTRIES);
        assert_eq!(h.entries().next(), Some("p3"));
    }

    #[test]
    fn a_submission_ends_the_browse() {
        let mut h = with(&["a", "b"]);
        h.older("");
        h.push("c");
        assert!(!h.is_browsing());
        assert_eq!(h.older(""), Some("c"));
    }

    #[test]
    fn submissions_persist_and_a_new_history_sees_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        let mut h = History::open(path.clone());
        h.push("saved");
        h.push(&"x".repeat(MAX_PERSISTED_BYTES + 1));
        assert_eq!(
            h.entries().count(),
            2,
            "a huge entry is still browsable now"
        );
        let again = History::open(path);
        assert_eq!(again.entries().collect::<Vec<_>>(), ["saved"]);
    }

    #[test]
    fn a_failing_file_is_reported_once_and_history_still_works() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("blocker");
        std::fs::write(&blocker, "").unwrap();
        let mut h = History::open(blocker.join("h.jsonl"));
        assert_eq!(h.take_problems().len(), 1, "the read");
        h.push("a");
        h.push("b");
        let problems = h.take_problems();
        assert_eq!(problems.len(), 1, "one write report: {problems:?}");
        assert!(h.take_problems().is_empty());
        assert_eq!(h.older(""), Some("b"));
    }
}
