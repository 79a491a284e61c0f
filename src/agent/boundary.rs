//! The loop's boundaries (`turn_end`, and `agent_before_settle` which the session controller
//! reaches through [`Agent::settle_boundary`] once a run has really ended): the hooks'
//! combined proposal is checked as a whole, then applied — messages through the loop like any
//! other, the rest through the session ([`BoundaryStore`]) — and a `continue` is honoured only
//! when the model has something to answer. An invalid proposal is dropped whole and reported
//! as a `hook_error` (hook `<boundary>`), as pi 1.6 does.

use super::events::AgentEvent;
use super::hooks::{BoundaryEntry, Outcome};
use super::Agent;
use crate::message::Message;

impl Agent {
    /// Apply the entries the boundary hooks agreed on; false when the proposal was refused.
    pub(super) async fn apply_boundary(
        &mut self,
        event: &str,
        entries: Vec<BoundaryEntry>,
        run: &mut Vec<std::sync::Arc<Message>>,
    ) -> bool {
        if entries.is_empty() {
            return true;
        }
        if let Some(store) = &self.boundary_store {
            if let Err(e) = store.check(&entries) {
                self.boundary_error(event, format!("Invalid boundary entries: {e}"));
                return false;
            }
        }
        let mut context_changed = false;
        for entry in entries {
            if let BoundaryEntry::Message(m) = entry {
                self.push_message(m, run).await;
                continue;
            }
            let Some(store) = self.boundary_store.clone() else {
                tracing::warn!(event, ?entry, "no session to add a boundary entry to");
                continue;
            };
            context_changed |= !matches!(entry, BoundaryEntry::Custom { .. });
            match store.append(&entry) {
                // Announced as pi 1.6 announces a boundary's entries.
                Ok(Some(entry)) => self.emit(AgentEvent::EntryAppended { entry }),
                Ok(None) => {}
                Err(e) => self.boundary_error(event, format!("boundary entry not added: {e}")),
            }
        }
        if context_changed {
            if let Some(store) = &self.boundary_store {
                self.handle.replace_messages(store.context());
            }
        }
        true
    }

    /// Whether another model call has something to answer: the context does not end with the
    /// model's own message, or messages wait in the queues.
    pub(super) fn can_continue(&self, event: &str) -> bool {
        let messages = self.handle.messages();
        let ok = matches!(messages.last().map(|m| m.as_ref()), Some(m) if !matches!(m, Message::Assistant(_)))
            || self.handle.pending_count() > 0;
        if !ok {
            self.boundary_error(
                event,
                format!("{event} requested continuation without runnable model context"),
            );
        }
        ok
    }

    fn boundary_error(&self, event: &str, message: String) {
        tracing::warn!(event, %message, "boundary");
        self.emit(AgentEvent::HookError {
            hook: "<boundary>".into(),
            event: event.into(),
            kind: "bad_reply".into(),
            message,
        });
    }

    /// `agent_before_settle`, the last actionable boundary: after the run's end, its
    /// compaction and retries, with nothing queued. True when the hooks asked to go on (and
    /// the context allows it); the caller then continues the run.
    pub async fn settle_boundary(&mut self, outcome: Outcome) -> bool {
        let settle = self
            .hooks
            .agent_before_settle(&self.messages(), outcome)
            .await;
        let mut run = Vec::new();
        let applied = self
            .apply_boundary("agent_before_settle", settle.entries, &mut run)
            .await;
        settle.continue_run && applied && self.can_continue("agent_before_settle")
    }
}
