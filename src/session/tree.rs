//! Tree operations: `/tree` navigation, `/fork` and `/clone` into new files, and the tree
//! view RPC `get_tree` returns.
//!
//! Nothing here rewrites history: navigation moves the leaf (and may append a
//! `branch_summary` there, see [`Session::branch_with_summary`]); forks and clones write a
//! *new* file holding one path of this session, whose header records this file as
//! `parentSession`. The tree is returned flat (indices) and its JSON written with an explicit
//! stack, because a long linear session is a chain as deep as it is long and recursion (or
//! dropping nested nodes) would overflow the stack.

use super::entry::{now_iso, Entry, EntryKind, LabelEntry};
use super::manager::{new_header, NewSession, Session};
use super::paths::session_file_name;
use super::SessionError;

/// Where a fork starts relative to the chosen entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForkPosition {
    /// `/fork`: the path up to the chosen user message's parent; its text is returned for
    /// the editor.
    Before,
    /// `/clone`: the path up to and including the chosen entry.
    At,
}

/// A new session made by [`Session::fork`].
#[derive(Debug)]
pub struct Fork {
    pub session: Session,
    /// The chosen user message's text (position `Before`).
    pub text: Option<String>,
}

/// The outcome of picking an entry in `/tree`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Navigation {
    /// The new leaf (`None`: before the first entry).
    pub leaf: Option<String>,
    /// Text to put in the editor (when a user or custom message was picked).
    pub editor_text: Option<String>,
}

/// The session tree, flat: indices into [`Session::entries`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// Entries without a (known) parent: the first entry, entries appended after a leaf
    /// reset, and orphans of a damaged file.
    pub roots: Vec<usize>,
    /// Children of each entry, oldest first by timestamp (file order among equals).
    pub children: Vec<Vec<usize>>,
}

impl Session {
    /// `/tree` selection: a user message or custom message moves the leaf to its parent and
    /// returns its text (the root user message thus resets the leaf); anything else becomes
    /// the leaf. Use [`Session::branch_with_summary`] instead to also leave a summary.
    pub fn navigate(&mut self, entry_id: &str) -> Result<Navigation, SessionError> {
        let entry = self
            .entry(entry_id)
            .ok_or_else(|| SessionError::EntryNotFound(entry_id.into()))?;
        let text = match &entry.kind {
            EntryKind::Message(m) if matches!(m.message.role(), "user" | "custom") => {
                Some(m.message.text())
            }
            EntryKind::CustomMessage(c) => Some(super::entry::content_text(Some(&c.content))),
            _ => None,
        };
        let leaf = match text {
            Some(_) => entry.parent_id.clone(),
            None => Some(entry.id.clone()),
        };
        self.set_leaf(leaf.as_deref())?;
        Ok(Navigation {
            leaf,
            editor_text: text,
        })
    }

    /// `/fork` (`Before`) or `/clone` (`At`) from `entry_id` into a new session file next to
    /// this one (in memory when this session is). `Before` requires a user message; forking
    /// before the first message gives an empty (lazily written) session.
    pub fn fork(&self, entry_id: &str, position: ForkPosition) -> Result<Fork, SessionError> {
        let entry = self
            .entry(entry_id)
            .ok_or_else(|| SessionError::EntryNotFound(entry_id.into()))?;
        match position {
            ForkPosition::At => Ok(Fork {
                session: self.branched_session(entry_id)?,
                text: None,
            }),
            ForkPosition::Before => {
                let is_user = entry.message().is_some_and(|m| m.role() == "user");
                if !is_user {
                    return Err(SessionError::NotAUserMessage(entry_id.into()));
                }
                let text = entry.message().map(|m| m.text());
                let session = match entry.parent_id.as_deref() {
                    Some(parent) => self.branched_session(parent)?,
                    None => self.sibling(),
                };
                Ok(Fork { session, text })
            }
        }
    }

    /// `/clone`: the whole active path into a new file.
    pub fn clone_active_path(&self) -> Result<Session, SessionError> {
        match self.leaf_id() {
            Some(leaf) => self.branched_session(leaf),
            None => Ok(self.sibling()),
        }
    }

    /// pi's `createBranchedSession`: the path to `leaf_id` without its label entries, then
    /// fresh label entries for the labels resolved on that path, written at once when the path
    /// holds a conversation ([`Session::new_branched`]).
    fn branched_session(&self, leaf_id: &str) -> Result<Session, SessionError> {
        // Labels are tree entries, so a kept entry may be a label's child: the path is chained
        // again without them (and a compaction kept from a label keeps from what follows it).
        let mut path: Vec<Entry> = Vec::new();
        let mut pending_labels: Vec<&str> = Vec::new();
        let mut replaced: std::collections::HashMap<&str, String> = Default::default();
        for e in self.branch(Some(leaf_id)) {
            if matches!(e.kind, EntryKind::Label(_)) {
                pending_labels.push(&e.id);
                continue;
            }
            for l in pending_labels.drain(..) {
                replaced.insert(l, e.id.clone());
            }
            let mut kept = e.clone();
            let parent = path.last().map(|p: &Entry| p.id.clone());
            if kept.parent_id != parent {
                kept.reparent(parent);
            }
            if let EntryKind::Compaction(c) = &mut kept.kind {
                if let Some(to) = c
                    .first_kept_entry_id
                    .as_deref()
                    .and_then(|f| replaced.get(f))
                {
                    c.first_kept_entry_id = Some(to.clone());
                    kept.source = None;
                }
            }
            path.push(kept);
        }
        let on_path: std::collections::HashSet<&str> = path.iter().map(|e| e.id.as_str()).collect();
        // Labels in the order their targets were first labelled (pi iterates a Map).
        let mut label_targets: Vec<&str> = Vec::new();
        for e in &self.entries {
            if let EntryKind::Label(l) = &e.kind {
                let t = l.target_id.as_str();
                if on_path.contains(t) && !label_targets.contains(&t) {
                    label_targets.push(t);
                }
            }
        }
        let mut taken: std::collections::HashSet<String> =
            path.iter().map(|e| e.id.clone()).collect();
        let mut parent = path.last().map(|e| e.id.clone());
        let mut entries = path.clone();
        for target in label_targets {
            let Some(label) = self.label(target) else {
                continue;
            };
            let id = super::entry::new_entry_id(|id| taken.contains(id));
            taken.insert(id.clone());
            entries.push(Entry::new(
                id.clone(),
                parent.replace(id),
                now_iso(),
                EntryKind::Label(LabelEntry {
                    target_id: target.to_string(),
                    label: Some(label.to_string()),
                    extra: Default::default(),
                }),
            ));
        }
        let header = new_header(
            &self.header.cwd,
            NewSession {
                id: None,
                parent_session: self.path().map(|p| p.to_string_lossy().into_owned()),
            },
        );
        let file = match (&self.store, &self.session_dir) {
            (Some(_), Some(dir)) => {
                Some(dir.join(session_file_name(&header.timestamp, &header.id)))
            }
            _ => None,
        };
        Session::new_branched(header, entries, file, self.session_dir.clone())
    }

    /// The tree of all entries (see [`Tree`]).
    pub fn tree(&self) -> Tree {
        let n = self.entries.len();
        let mut roots = Vec::new();
        let mut children = vec![Vec::new(); n];
        for (i, e) in self.entries.iter().enumerate() {
            match e.parent_id.as_deref().and_then(|p| self.by_id.get(p)) {
                Some(&p) if p != i => children[p].push(i),
                _ => roots.push(i),
            }
        }
        for c in &mut children {
            c.sort_by_key(|&i| self.entries[i].timestamp_ms());
        }
        Tree { roots, children }
    }

    /// RPC `get_tree`'s `tree` value: `[{entry, children, label?}]`, written iteratively.
    pub fn tree_json(&self) -> String {
        let tree = self.tree();
        let mut out = String::from("[");
        // Each frame: the sibling list being written and the next position in it.
        let mut stack: Vec<(&[usize], usize)> = vec![(&tree.roots, 0)];
        while let Some((list, pos)) = stack.pop() {
            if pos == list.len() {
                out.push(']');
                // Close the node that owned this child list.
                if let Some(&(parent_list, parent_pos)) = stack.last() {
                    let owner = parent_list[parent_pos - 1];
                    if let Some(label) = self.label(&self.entries[owner].id) {
                        out.push_str(",\"label\":");
                        out.push_str(&serde_json::to_string(label).unwrap_or_default());
                    }
                    out.push('}');
                }
                continue;
            }
            if pos > 0 {
                out.push(',');
            }
            let i = list[pos];
            stack.push((list, pos + 1));
            out.push_str("{\"entry\":");
            out.push_str(&serde_json::to_string(&self.entries[i]).unwrap_or_default());
            out.push_str(",\"children\":[");
            stack.push((&tree.children[i], 0));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{AssistantMessage, Content, Message};
    use crate::session::manager::NewSession;
    use serde_json::Value;

    fn assistant(text: &str) -> Message {
        let mut a = AssistantMessage::empty("faux", "faux", "m");
        a.content.push(Content::text(text));
        Message::Assistant(a)
    }

    /// u1 → a1 → u2 → a2, labels on u1 and a2.
    fn sample(dir: &std::path::Path) -> (Session, Vec<String>) {
        let mut s = Session::create("/w", dir, NewSession::default());
        let ids = vec![
            s.append_message(Message::user("one")).unwrap(),
            s.append_message(assistant("r1")).unwrap(),
            s.append_message(Message::user("two")).unwrap(),
            s.append_message(assistant("r2")).unwrap(),
        ];
        s.append_label(&ids[0], Some("start")).unwrap();
        s.append_label(&ids[3], Some("end")).unwrap();
        (s, ids)
    }

    #[test]
    fn navigate_user_message_goes_to_parent_with_text() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut s, ids) = sample(tmp.path());
        let n = s.navigate(&ids[2]).unwrap();
        assert_eq!(n.leaf.as_deref(), Some(ids[1].as_str()));
        assert_eq!(n.editor_text.as_deref(), Some("two"));
        let n = s.navigate(&ids[0]).unwrap();
        assert_eq!(n.leaf, None);
        assert_eq!(s.leaf_id(), None);
        let n = s.navigate(&ids[1]).unwrap();
        assert_eq!(n.leaf.as_deref(), Some(ids[1].as_str()));
        assert!(n.editor_text.is_none());
        // A new branch from there.
        s.append_message(Message::user("alt")).unwrap();
        assert_eq!(s.children(&ids[1]).len(), 2);
    }

    #[test]
    fn fork_before_copies_up_to_the_parent_and_returns_the_text() {
        let tmp = tempfile::tempdir().unwrap();
        let (s, ids) = sample(tmp.path());
        let f = s.fork(&ids[2], ForkPosition::Before).unwrap();
        assert_eq!(f.text.as_deref(), Some("two"));
        let ns = f.session;
        assert!(ns.is_written());
        let kept: Vec<&str> = ns.entries().iter().map(|e| e.id.as_str()).collect();
        // u1, a1, then a fresh label for u1 (a2 is not on the path).
        assert_eq!(&kept[..2], &[ids[0].as_str(), ids[1].as_str()]);
        assert_eq!(ns.entries().len(), 3);
        assert_eq!(ns.label(&ids[0]), Some("start"));
        assert_eq!(
            ns.header().parent_session.as_deref(),
            s.path().map(|p| p.to_str().unwrap())
        );
        let (reloaded, w) = Session::open(ns.path().unwrap(), "/w").unwrap();
        assert!(w.is_empty());
        assert_eq!(reloaded.entries(), ns.entries());
        assert!(matches!(
            s.fork(&ids[1], ForkPosition::Before),
            Err(SessionError::NotAUserMessage(_))
        ));
        // Before the first message: an empty session, not yet written.
        let f = s.fork(&ids[0], ForkPosition::Before).unwrap();
        assert!(f.session.entries().is_empty());
        assert!(!f.session.is_written());
        assert!(f.session.header().parent_session.is_some());
    }

    #[test]
    fn a_fork_with_no_message_yet_writes_no_file_until_it_has_one() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = Session::create("/w", tmp.path(), NewSession::default());
        s.append_model_change("faux", "m").unwrap();
        let u1 = s.append_message(Message::user("one")).unwrap();
        s.append_message(assistant("r1")).unwrap();
        // The fork keeps the model change before the first message, but no conversation.
        let f = s.fork(&u1, ForkPosition::Before).unwrap();
        let mut ns = f.session;
        assert_eq!(ns.entries().len(), 1);
        assert!(!ns.is_written());
        let file = ns.path().unwrap().to_path_buf();
        assert!(!file.exists());
        ns.append_message(Message::user("again")).unwrap();
        ns.append_message(assistant("r2")).unwrap();
        assert!(ns.is_written());
        let (reloaded, _) = Session::open(&file, "/w").unwrap();
        assert_eq!(reloaded.entries(), ns.entries());
    }

    #[test]
    fn clone_copies_the_whole_active_path_with_labels() {
        let tmp = tempfile::tempdir().unwrap();
        let (s, ids) = sample(tmp.path());
        let c = s.clone_active_path().unwrap();
        assert_eq!(c.entries().len(), 4 + 2);
        assert_eq!(c.label(&ids[3]), Some("end"));
        let at = s.fork(&ids[1], ForkPosition::At).unwrap();
        assert_eq!(at.session.entries().len(), 2 + 1);
        assert_ne!(at.session.id(), s.id());
    }

    #[test]
    fn fork_from_copies_the_entire_file() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut s, ids) = sample(tmp.path());
        s.set_leaf(Some(&ids[1])).unwrap();
        s.append_message(Message::user("side")).unwrap();
        let target = tmp.path().join("other");
        let (f, _) = Session::fork_from(s.path().unwrap(), "/other", &target).unwrap();
        assert_eq!(f.entries(), s.entries());
        assert_eq!(f.cwd(), "/other");
        let text = std::fs::read_to_string(f.path().unwrap()).unwrap();
        let orig = std::fs::read_to_string(s.path().unwrap()).unwrap();
        // Same entry lines, different header.
        assert_eq!(
            text.split_once('\n').unwrap().1,
            orig.split_once('\n').unwrap().1
        );
    }

    #[test]
    fn tree_json_nests_children_and_labels() {
        let mut s = Session::in_memory("/w");
        let a = s.append_message(Message::user("a")).unwrap();
        let b = s.append_message(assistant("b")).unwrap();
        s.set_leaf(Some(&a)).unwrap();
        let c = s.append_message(assistant("c")).unwrap();
        s.append_label(&b, Some("lbl")).unwrap();
        let v: Value = serde_json::from_str(&s.tree_json()).unwrap();
        let roots = v.as_array().unwrap();
        assert_eq!(roots.len(), 1);
        assert_eq!(roots[0]["entry"]["id"], Value::String(a.clone()));
        let kids = roots[0]["children"].as_array().unwrap();
        assert_eq!(kids.len(), 2);
        assert_eq!(kids[0]["entry"]["id"], Value::String(b));
        assert_eq!(kids[0]["label"], "lbl");
        assert_eq!(kids[1]["entry"]["id"], Value::String(c));
        // The label entry hangs under c (it was appended at the leaf).
        assert_eq!(kids[1]["children"].as_array().unwrap().len(), 1);
        assert!(kids[1].get("label").is_none());
    }

    #[test]
    fn tree_json_survives_a_very_deep_chain() {
        let mut s = Session::in_memory("/w");
        for i in 0..50_000 {
            s.append_message(Message::user(format!("m{i}"))).unwrap();
        }
        let json = s.tree_json();
        assert!(json.starts_with("[{\"entry\":"));
        assert!(json.ends_with("]}]"));
    }
}
