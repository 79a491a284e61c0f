//! The session side of the boundary hooks' entries ([`BoundaryStore`]): custom entries,
//! context edits and compactions a `turn_end` or `agent_before_settle` hook proposed are
//! checked against the current branch as a whole, then appended, and the agent's context is
//! rebuilt from the session, which stays the one truth about what the model sees.

use std::sync::Arc;

use crate::agent::hooks::{BoundaryEntry, BoundaryStore};
use crate::message::Message;
use crate::session::compaction::estimate::estimate_messages_tokens;
use crate::session::{Compaction, SessionError, SharedSession};

pub(super) struct SessionBoundary {
    pub session: Arc<SharedSession>,
}

impl BoundaryStore for SessionBoundary {
    fn check(&self, entries: &[BoundaryEntry]) -> Result<(), SessionError> {
        let s = self.session.lock();
        for entry in entries {
            match entry {
                BoundaryEntry::ContextEdit { target_id, .. } => {
                    s.editable_role(target_id)?;
                }
                BoundaryEntry::Compaction {
                    first_kept_entry_id,
                    ..
                } if !s.branch(None).iter().any(|e| e.id == *first_kept_entry_id) => {
                    return Err(SessionError::EntryNotFound(first_kept_entry_id.clone()));
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn append(&self, entry: &BoundaryEntry) -> Result<Option<serde_json::Value>, SessionError> {
        let id = match entry {
            BoundaryEntry::Custom { custom_type, data } => self
                .session
                .record(|s| s.append_custom(custom_type, data.clone())),
            BoundaryEntry::Message(m) => self
                .session
                .record(|s| s.append_message(Arc::new(m.clone()))),
            BoundaryEntry::ContextEdit {
                target_id,
                replacement,
            } => self
                .session
                .record(|s| s.append_context_edit(target_id, replacement.clone())),
            BoundaryEntry::Compaction {
                summary,
                first_kept_entry_id,
                details,
            } => {
                let context = self.context();
                let messages: Vec<&Message> = context.iter().map(|m| m.as_ref()).collect();
                let tokens_before = estimate_messages_tokens(&messages);
                self.session.record(|s| {
                    s.append_compaction(Compaction {
                        summary: summary.clone(),
                        first_kept_entry_id: Some(first_kept_entry_id.clone()),
                        tokens_before,
                        details: details.clone(),
                        usage: None,
                        from_hook: Some(true),
                        retained_tail: None,
                        system_message: None,
                        extra: Default::default(),
                    })
                })
            }
        }?;
        let s = self.session.lock();
        Ok(s.entry(&id).and_then(|e| serde_json::to_value(e).ok()))
    }

    fn context(&self) -> Vec<Arc<Message>> {
        self.session.lock().context().llm_messages()
    }
}
