//! [`Session`]: one session's header and entries in memory, the leaf pointer, and the file
//! they are written to.
//!
//! Appending makes the new entry a child of the leaf and moves the leaf to it. Writing is
//! lazy, as in pi: a new session stays in memory until the first assistant message (or a
//! `custom` or `usage` entry, which newer pi also persists at once), so sessions abandoned
//! before any reply leave no file. Then the header and buffered entries are written with an
//! exclusive create and each later entry is appended as it comes. A write error is returned
//! but the entry stays in memory, so the conversation goes on.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::context::{build_context, SessionContext};
use super::entry::{
    new_entry_id, now_iso, AgentMessage, BranchSummary, Compaction, ContextEdit, CustomEntry,
    CustomMessageEntry, Entry, EntryKind, Header, LabelEntry, MessageEntry, ModelChange,
    Replacement, SessionInfo, ThinkingLevelChange, UsageEntry,
};
use super::paths::session_file_name;
use super::store::Store;
use super::SessionError;

/// Options for a new session.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    /// The session id (`--session-id`); a UUIDv7 when `None`.
    pub id: Option<String>,
    /// The file this session came from (recorded in the header).
    pub parent_session: Option<String>,
}

/// One session: header, entries, leaf and (unless in memory) its file.
#[derive(Debug)]
pub struct Session {
    pub(crate) header: Header,
    pub(crate) entries: Vec<Entry>,
    pub(crate) by_id: HashMap<String, usize>,
    /// Resolved labels: target id → label (last label entry wins; empty clears).
    pub(crate) labels: HashMap<String, String>,
    /// Index of the leaf entry; `None` before the first entry (or after a reset).
    pub(crate) leaf: Option<usize>,
    pub(crate) store: Option<Store>,
    /// Where new files (forks, clones) go.
    pub(crate) session_dir: Option<PathBuf>,
    /// The run's sessions root, which hook session calls may not leave (see [`super::root`]);
    /// `None` when the run keeps no session files.
    sessions_root: Option<PathBuf>,
    /// Where the run works when it is not the header's directory (pi's `cwdOverride`: a
    /// session whose directory is gone, continued elsewhere). The file keeps its header.
    work_cwd: Option<String>,
    has_assistant: bool,
}

impl Session {
    pub(super) fn from_parts(
        header: Header,
        entries: Vec<Entry>,
        store: Option<Store>,
        dir: Option<PathBuf>,
    ) -> Self {
        let mut s = Session {
            header,
            entries,
            by_id: HashMap::new(),
            labels: HashMap::new(),
            leaf: None,
            store,
            work_cwd: None,
            session_dir: dir,
            sessions_root: None,
            has_assistant: false,
        };
        s.rebuild_index();
        s
    }

    fn rebuild_index(&mut self) {
        self.by_id.clear();
        self.labels.clear();
        self.has_assistant = false;
        for i in 0..self.entries.len() {
            self.index_entry(i);
        }
        // pi resumes at the last entry of the file.
        self.leaf = self.entries.len().checked_sub(1);
    }

    fn index_entry(&mut self, i: usize) {
        let e = &self.entries[i];
        self.by_id.insert(e.id.clone(), i);
        match &e.kind {
            EntryKind::Label(l) => match l.label.as_deref() {
                Some(label) if !label.is_empty() => {
                    self.labels.insert(l.target_id.clone(), label.to_string());
                }
                _ => {
                    self.labels.remove(&l.target_id);
                }
            },
            EntryKind::Message(m) if m.message.role() == "assistant" => self.has_assistant = true,
            _ => {}
        }
    }

    /// A new session whose file will be `<session_dir>/<timestamp>_<id>.jsonl` (written
    /// lazily).
    pub fn create(cwd: &str, session_dir: &Path, opts: NewSession) -> Session {
        let header = new_header(cwd, opts);
        let path = session_dir.join(session_file_name(&header.timestamp, &header.id));
        Session::from_parts(
            header,
            Vec::new(),
            Some(Store::pending(path)),
            Some(session_dir.to_path_buf()),
        )
    }

    /// A session that is never written (`--no-session`).
    pub fn in_memory(cwd: &str) -> Session {
        Session::from_parts(
            new_header(cwd, NewSession::default()),
            Vec::new(),
            None,
            None,
        )
    }

    // ---- reading ----

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn id(&self) -> &str {
        &self.header.id
    }

    /// The directory the session works in: its header's, unless [`Session::work_in`] moved it.
    pub fn cwd(&self) -> &str {
        self.work_cwd.as_deref().unwrap_or(&self.header.cwd)
    }

    /// Works in `cwd` from now on without rewriting the header, as pi continues a session
    /// whose directory no longer exists (it asks again next time); new sessions made from this
    /// one (`/new`, forks) start there.
    pub fn work_in(&mut self, cwd: &str) {
        self.work_cwd = Some(cwd.to_string());
    }

    /// The session file (which may not exist yet: writing is lazy). `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.store.as_ref().map(Store::path)
    }

    /// Whether the file has been written (or was loaded).
    pub fn is_written(&self) -> bool {
        self.store.as_ref().is_some_and(Store::is_created)
    }

    /// Where forks and clones of this session are created.
    pub fn session_dir(&self) -> Option<&Path> {
        self.session_dir.as_deref()
    }

    /// The run's sessions root: hook session calls open and create files only inside it.
    pub fn sessions_root(&self) -> Option<&Path> {
        self.sessions_root.as_deref()
    }

    /// Sets the run's sessions root (`None`: the run keeps no session files).
    pub fn set_sessions_root(&mut self, root: Option<PathBuf>) {
        self.sessions_root = root;
    }

    /// Whether forks, clones and new sessions made from this one are written to files (in
    /// [`Session::session_dir`]) rather than kept in memory.
    pub fn makes_files(&self) -> bool {
        self.store.is_some() && self.session_dir.is_some()
    }

    /// All entries in file order (no header).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.map(|i| self.entries[i].id.as_str())
    }

    pub fn leaf_entry(&self) -> Option<&Entry> {
        self.leaf.map(|i| &self.entries[i])
    }

    /// The resolved label of an entry.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(String::as_str)
    }

    /// The display name from the latest `session_info` entry; a blank name clears it.
    pub fn name(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| match &e.kind {
            EntryKind::SessionInfo(i) => {
                Some(i.name.as_deref().map(str::trim).filter(|n| !n.is_empty()))
            }
            _ => None,
        })?
    }

    /// The path from the root to `from` (the leaf when `None`), every entry type included.
    pub fn branch(&self, from: Option<&str>) -> Vec<&Entry> {
        let start = match from {
            Some(id) => self.by_id.get(id).copied(),
            None => self.leaf,
        };
        self.path_indices(start)
            .into_iter()
            .map(|i| &self.entries[i])
            .collect()
    }

    /// Indices root → `start`, following `parentId`. A cycle (a corrupt file) stops the walk.
    pub(crate) fn path_indices(&self, start: Option<usize>) -> Vec<usize> {
        let mut path = Vec::new();
        let mut current = start;
        while let Some(i) = current {
            if path.len() > self.entries.len() {
                break;
            }
            path.push(i);
            current = self.entries[i]
                .parent_id
                .as_deref()
                .and_then(|p| self.by_id.get(p).copied());
        }
        path.reverse();
        path
    }

    /// Direct children of an entry, in file order.
    pub fn children(&self, id: &str) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|e| e.parent_id.as_deref() == Some(id))
            .collect()
    }

    /// Entries after the cursor `since` (all when `None`), for RPC `get_entries`; ids are
    /// durable cursors because entries are only ever appended.
    pub fn entries_since(&self, since: Option<&str>) -> Result<&[Entry], SessionError> {
        match since {
            None => Ok(&self.entries),
            Some(id) => match self.by_id.get(id) {
                Some(&i) => Ok(&self.entries[i + 1..]),
                None => Err(SessionError::EntryNotFound(id.to_string())),
            },
        }
    }

    /// What the model sees from the current leaf.
    pub fn context(&self) -> SessionContext<'_> {
        build_context(self, self.leaf)
    }

    /// Keep going in memory only: after a write error, later entries would chain onto an
    /// entry the file does not have, so nothing more is written to it.
    pub fn stop_writing(&mut self) {
        self.store = None;
    }

    // ---- appending ----

    /// Appends an entry as a child of the leaf and moves the leaf to it. Returns its id.
    /// On a write error the entry is still in memory.
    pub fn append(&mut self, kind: EntryKind) -> Result<String, SessionError> {
        let id = new_entry_id(|id| self.by_id.contains_key(id));
        self.push_entry(id, kind)
    }

    /// Adds an entry with a chosen id under the leaf, moves the leaf, persists.
    fn push_entry(&mut self, id: String, kind: EntryKind) -> Result<String, SessionError> {
        let forces_write = matches!(kind, EntryKind::Custom(_) | EntryKind::Usage(_));
        let parent_id = self.leaf_id().map(str::to_string);
        self.entries
            .push(Entry::new(id.clone(), parent_id, now_iso(), kind));
        let i = self.entries.len() - 1;
        self.index_entry(i);
        self.leaf = Some(i);
        self.persist(i, forces_write)?;
        Ok(id)
    }

    fn persist(&mut self, i: usize, forces_write: bool) -> Result<(), SessionError> {
        let Some(store) = self.store.as_mut() else {
            return Ok(());
        };
        if store.is_created() {
            return store.append(&self.entries[i].to_line());
        }
        if !(self.has_assistant || forces_write) {
            return Ok(());
        }
        let lines =
            std::iter::once(self.header.to_line()).chain(self.entries.iter().map(Entry::to_line));
        store.create_with(lines)
    }

    /// Appends a conversation message (typed, or raw JSON for pi's other roles such as
    /// `bashExecution` and `custom`).
    /// A context message. An extension's message (`role: "custom"`) is stored as pi stores
    /// it, as a `custom_message` entry, not a `message` entry.
    pub fn append_message(
        &mut self,
        message: impl Into<AgentMessage>,
    ) -> Result<String, SessionError> {
        let message = message.into();
        if let AgentMessage::Typed(m) = &message {
            if let crate::message::Message::Custom(c) = m.as_ref() {
                let content = serde_json::to_value(&c.content).unwrap_or(Value::Null);
                return self.append_custom_message(
                    &c.custom_type,
                    content,
                    c.display,
                    c.details.clone(),
                );
            }
        }
        self.append(EntryKind::Message(MessageEntry {
            message,
            extra: Default::default(),
        }))
    }

    pub fn append_model_change(
        &mut self,
        provider: &str,
        model_id: &str,
    ) -> Result<String, SessionError> {
        self.append(EntryKind::ModelChange(ModelChange {
            provider: provider.into(),
            model_id: model_id.into(),
            extra: Default::default(),
        }))
    }

    pub fn append_thinking_level_change(&mut self, level: &str) -> Result<String, SessionError> {
        self.append(EntryKind::ThinkingLevelChange(ThinkingLevelChange {
            thinking_level: level.into(),
            extra: Default::default(),
        }))
    }

    /// Appends a compaction. `first_kept_entry_id: None` keeps nothing before it (pi writes
    /// the compaction's own id there, which this does too).
    pub fn append_compaction(
        &mut self,
        mut compaction: Compaction,
    ) -> Result<String, SessionError> {
        let id = new_entry_id(|id| self.by_id.contains_key(id));
        if compaction.first_kept_entry_id.is_none() && compaction.retained_tail.is_none() {
            compaction.first_kept_entry_id = Some(id.clone());
        }
        if compaction.system_message.is_none() {
            let context = super::context::build_context(self, self.leaf).llm_messages();
            compaction.system_message =
                crate::message::system::current(context.iter().map(|m| m.as_ref())).map(|mut s| {
                    s.timestamp = crate::message::now_ms();
                    AgentMessage::from(crate::message::Message::System(s))
                });
        }
        self.push_entry(id, EntryKind::Compaction(Box::new(compaction)))
    }

    /// Extension state (`custom`); never enters context. Forces the first write.
    pub fn append_custom(
        &mut self,
        custom_type: &str,
        data: Option<Value>,
    ) -> Result<String, SessionError> {
        self.append(EntryKind::Custom(Box::new(CustomEntry {
            custom_type: custom_type.into(),
            data,
            extra: Default::default(),
        })))
    }

    /// An extension message that enters context (`content`: a string or text/image blocks).
    pub fn append_custom_message(
        &mut self,
        custom_type: &str,
        content: Value,
        display: bool,
        details: Option<Value>,
    ) -> Result<String, SessionError> {
        self.append(EntryKind::CustomMessage(Box::new(CustomMessageEntry {
            custom_type: custom_type.into(),
            content,
            display,
            details,
            extra: Default::default(),
        })))
    }

    /// Sets (or with `None`/empty, clears) the label of an existing entry.
    pub fn append_label(
        &mut self,
        target_id: &str,
        label: Option<&str>,
    ) -> Result<String, SessionError> {
        if !self.by_id.contains_key(target_id) {
            return Err(SessionError::EntryNotFound(target_id.into()));
        }
        self.append(EntryKind::Label(LabelEntry {
            target_id: target_id.into(),
            label: label.map(str::to_string),
            extra: Default::default(),
        }))
    }

    /// Names the session: newlines become spaces, then the name is trimmed.
    pub fn append_session_info(&mut self, name: &str) -> Result<String, SessionError> {
        let name = name.replace(['\r', '\n'], " ").trim().to_string();
        self.append(EntryKind::SessionInfo(SessionInfo {
            name: Some(name),
            extra: Default::default(),
        }))
    }

    /// Replaces (`Some(content)`) or drops (`None`) a message in future context on this
    /// branch. The target must be on the current branch and be a user, assistant or tool
    /// result message or a custom message; string content for assistant and tool result
    /// messages becomes one text block, as pi normalizes it.
    /// The role of the entry a context edit would target: a message (user, assistant, tool
    /// result) or custom message on the current branch; anything else is `NotEditable`.
    pub fn editable_role(&self, target_id: &str) -> Result<String, SessionError> {
        let on_branch = self.branch(None).iter().any(|e| e.id == target_id);
        let role = self.entry(target_id).map(|e| match &e.kind {
            EntryKind::Message(m) => m.message.role().to_string(),
            EntryKind::CustomMessage(_) => "custom_message".to_string(),
            _ => String::new(),
        });
        match role {
            Some(r)
                if on_branch
                    && matches!(
                        r.as_str(),
                        "user" | "assistant" | "toolResult" | "custom_message"
                    ) =>
            {
                Ok(r)
            }
            _ => Err(SessionError::NotEditable(target_id.into())),
        }
    }

    pub fn append_context_edit(
        &mut self,
        target_id: &str,
        replacement: Option<Value>,
    ) -> Result<String, SessionError> {
        let role = Some(self.editable_role(target_id)?);
        let replacement = replacement.map(|content| {
            let content = match (role.as_deref(), content) {
                (Some("assistant" | "toolResult"), Value::String(text)) => {
                    serde_json::json!([{"type": "text", "text": text}])
                }
                (_, c) => c,
            };
            Replacement {
                content,
                extra: Default::default(),
            }
        });
        self.append(EntryKind::ContextEdit(Box::new(ContextEdit {
            target_id: target_id.into(),
            replacement,
            extra: Default::default(),
        })))
    }

    /// Usage outside the conversation (e.g. `cache_warm`), with an optional `note` (why it
    /// was spent, e.g. `extension override`). Forces the first write.
    pub fn append_usage(
        &mut self,
        kind: &str,
        provider: &str,
        model: &str,
        usage: Value,
        note: Option<&str>,
    ) -> Result<String, SessionError> {
        let mut extra = serde_json::Map::new();
        if let Some(note) = note {
            extra.insert("note".into(), Value::String(note.into()));
        }
        self.append(EntryKind::Usage(Box::new(UsageEntry {
            kind: kind.into(),
            provider: provider.into(),
            model: model.into(),
            usage,
            extra,
        })))
    }

    /// Moves the leaf to `from` (`None`: before the first entry) and appends a
    /// `branch_summary` there describing the abandoned path (`fromId` is `from` or `"root"`).
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: &str,
        details: Option<Value>,
        from_hook: Option<bool>,
        usage: Option<Value>,
    ) -> Result<String, SessionError> {
        self.set_leaf(from)?;
        self.append(EntryKind::BranchSummary(Box::new(BranchSummary {
            from_id: from.unwrap_or("root").to_string(),
            summary: summary.into(),
            details,
            from_hook,
            usage,
            extra: Default::default(),
        })))
    }

    /// Moves the leaf (pi's `branch`; `None` is `resetLeaf`). The next append becomes a child
    /// of it, starting a new branch; nothing is written.
    pub fn set_leaf(&mut self, id: Option<&str>) -> Result<(), SessionError> {
        self.leaf = match id {
            None => None,
            Some(id) => Some(
                *self
                    .by_id
                    .get(id)
                    .ok_or_else(|| SessionError::EntryNotFound(id.into()))?,
            ),
        };
        Ok(())
    }

    /// A session holding `header` and `entries`, written at once to `path` (exclusive
    /// create), or in memory when `path` is `None`.
    pub(crate) fn new_written(
        header: Header,
        entries: Vec<Entry>,
        path: Option<PathBuf>,
        dir: Option<PathBuf>,
    ) -> Result<Session, SessionError> {
        let store = match path {
            Some(p) => {
                let mut store = Store::pending(p);
                let lines =
                    std::iter::once(header.to_line()).chain(entries.iter().map(Entry::to_line));
                store.create_with(lines)?;
                Some(store)
            }
            None => None,
        };
        Ok(Session::from_parts(header, entries, store, dir))
    }

    /// pi's `createBranchedSession` rule: a session holding `header` and `entries` whose file
    /// at `path` is written at once only when `entries` hold a conversation (a user or
    /// assistant message); otherwise it is written lazily, as a new session is, so a fork
    /// from the first message leaves no file behind until it has a message of its own.
    pub(crate) fn new_branched(
        header: Header,
        entries: Vec<Entry>,
        path: Option<PathBuf>,
        dir: Option<PathBuf>,
    ) -> Result<Session, SessionError> {
        let conversation = entries.iter().any(|e| {
            e.message()
                .is_some_and(|m| matches!(m.role(), "user" | "assistant"))
        });
        match path {
            Some(p) if !conversation => Ok(Session::from_parts(
                header,
                entries,
                Some(Store::pending(p)),
                dir,
            )),
            path => Session::new_written(header, entries, path, dir),
        }
    }

    /// A fresh lazily-written session next to this one, recording this file as its parent.
    pub(crate) fn sibling(&self) -> Session {
        let opts = NewSession {
            id: None,
            parent_session: self.path().map(|p| p.to_string_lossy().into_owned()),
        };
        match &self.session_dir {
            Some(dir) if self.store.is_some() => Session::create(&self.header.cwd, dir, opts),
            _ => {
                let mut s = Session::in_memory(&self.header.cwd);
                s.header.parent_session = opts.parent_session;
                s
            }
        }
    }
}

pub(crate) fn new_header(cwd: &str, opts: NewSession) -> Header {
    let id = opts.id.unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    Header::new(id, now_iso(), cwd.to_string(), opts.parent_session)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::message::Message;
    use crate::session::test_util::{assistant, lines};

    #[test]
    fn nothing_is_written_before_the_first_assistant_message() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = Session::create("/w", tmp.path(), NewSession::default());
        let path = s.path().unwrap().to_path_buf();
        s.append_model_change("faux", "m1").unwrap();
        s.append_message(Message::user("hi")).unwrap();
        assert!(!path.exists());
        assert!(!s.is_written());
        s.append_message(assistant("hello")).unwrap();
        assert!(s.is_written());
        let l = lines(&path);
        assert_eq!(l.len(), 4);
        assert!(l[0].starts_with(r#"{"type":"session","version":3,"id":""#));
        s.append_message(Message::user("again")).unwrap();
        assert_eq!(lines(&path).len(), 5);
        // What we wrote loads back identically.
        let (back, warnings) = Session::open(&path, "/elsewhere").unwrap();
        assert!(warnings.is_empty());
        assert_eq!(back.entries(), s.entries());
        assert_eq!(back.leaf_id(), s.leaf_id());
        assert_eq!(back.cwd(), "/w");
    }

    #[test]
    fn custom_and_usage_entries_force_the_write() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = Session::create("/w", tmp.path(), NewSession::default());
        s.append_custom("ext", Some(serde_json::json!({"n": 1})))
            .unwrap();
        assert!(s.is_written());
        let mut u = Session::create("/w", tmp.path(), NewSession::default());
        u.append_usage("cache_warm", "p", "m", serde_json::json!({}), None)
            .unwrap();
        assert!(u.is_written());
    }

    #[test]
    fn in_memory_sessions_never_write_and_ids_are_unique() {
        let mut s = Session::in_memory("/w");
        let a = s.append_message(Message::user("a")).unwrap();
        let b = s.append_message(assistant("b")).unwrap();
        assert_ne!(a, b);
        assert_eq!(s.entry(&b).unwrap().parent_id.as_deref(), Some(a.as_str()));
        assert!(s.path().is_none());
    }

    #[test]
    fn labels_last_wins_and_empty_clears() {
        let mut s = Session::in_memory("/w");
        let a = s.append_message(Message::user("a")).unwrap();
        s.append_label(&a, Some("one")).unwrap();
        s.append_label(&a, Some("two")).unwrap();
        assert_eq!(s.label(&a), Some("two"));
        s.append_label(&a, None).unwrap();
        assert_eq!(s.label(&a), None);
        assert!(matches!(
            s.append_label("nope", Some("x")),
            Err(SessionError::EntryNotFound(_))
        ));
        let EntryKind::Label(l) = &s.leaf_entry().unwrap().kind else {
            panic!()
        };
        assert!(l.label.is_none());
        assert!(!s.leaf_entry().unwrap().to_line().contains("\"label\":"));
    }

    #[test]
    fn session_name_is_the_last_session_info() {
        let mut s = Session::in_memory("/w");
        assert_eq!(s.name(), None);
        s.append_session_info("  first\nname ").unwrap();
        assert_eq!(s.name(), Some("first name"));
        s.append_session_info("second").unwrap();
        assert_eq!(s.name(), Some("second"));
        s.append_session_info("   ").unwrap();
        assert_eq!(s.name(), None);
    }

    #[test]
    fn opening_a_missing_path_starts_a_session_there() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("mine.jsonl");
        let (mut s, _) = Session::open(&p, "/w").unwrap();
        assert_eq!(s.path(), Some(p.as_path()));
        s.append_message(Message::user("a")).unwrap();
        s.append_message(assistant("b")).unwrap();
        assert_eq!(lines(&p).len(), 3);
    }

    #[test]
    fn opening_a_foreign_file_is_an_error_and_leaves_it_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("x.jsonl");
        std::fs::write(&p, "{\"hello\":1}\n").unwrap();
        assert!(matches!(
            Session::open(&p, "/w"),
            Err(SessionError::NotASession { .. })
        ));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"hello\":1}\n");
    }

    #[test]
    fn continue_recent_takes_the_newest_or_creates() {
        let tmp = tempfile::tempdir().unwrap();
        let (s, _) = Session::continue_recent("/w", tmp.path()).unwrap();
        assert!(!s.is_written());
        let mut a = Session::create("/w", tmp.path(), NewSession::default());
        a.append_message(Message::user("q")).unwrap();
        a.append_message(assistant("r")).unwrap();
        let (c, _) = Session::continue_recent("/w", tmp.path()).unwrap();
        assert_eq!(c.id(), a.id());
        assert_eq!(c.entries().len(), 2);
    }

    #[test]
    fn context_edit_targets_must_be_messages_on_the_branch() {
        let mut s = Session::in_memory("/w");
        let u = s.append_message(Message::user("a")).unwrap();
        let r = s.append_message(assistant("b")).unwrap();
        let m = s.append_model_change("p", "m").unwrap();
        assert!(s.append_context_edit(&m, None).is_err());
        s.append_context_edit(&r, Some(Value::String("short".into())))
            .unwrap();
        let EntryKind::ContextEdit(e) = &s.leaf_entry().unwrap().kind else {
            panic!()
        };
        assert_eq!(e.replacement.as_ref().unwrap().content[0]["text"], "short");
        s.set_leaf(None).unwrap();
        s.append_message(Message::user("other branch")).unwrap();
        assert!(matches!(
            s.append_context_edit(&u, None),
            Err(SessionError::NotEditable(_))
        ));
    }
}
