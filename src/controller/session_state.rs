//! The model and thinking level a session carries: read back from a resumed session's path
//! (pi replays them from `model_change` / `thinking_level_change` entries and assistant
//! messages), and recorded as entries when a session starts or the run changes them, as the
//! TypeScript pi does, so either program resumes with the same settings.

use crate::provider::{Model, ThinkingLevel};
use crate::session::{EntryKind, ModelRef, Session, SharedSession};

#[derive(Default)]
pub struct Restored {
    /// The model on the resumed path, if any.
    pub model: Option<ModelRef>,
    /// The thinking level, when the path records one.
    pub thinking: Option<ThinkingLevel>,
    /// Whether the session already has entries (a new one gets both entries up front).
    pub resumed: bool,
}

pub fn restored(session: &Session) -> Restored {
    let ctx = session.context();
    let recorded = session
        .branch(None)
        .iter()
        .any(|e| matches!(e.kind, EntryKind::ThinkingLevelChange(_)));
    Restored {
        model: ctx.model.clone(),
        thinking: recorded
            .then(|| ThinkingLevel::parse(&ctx.thinking_level))
            .flatten(),
        resumed: !session.entries().is_empty(),
    }
}

/// Append `model_change` and `thinking_level_change` where the session does not already say
/// the same: both for a new session, and on resume whatever differs (or a thinking level the
/// path never recorded). Writes stay lazy: nothing reaches the disk before the first reply.
pub fn record(
    session: &SharedSession,
    restored: &Restored,
    model: &Model,
    thinking: ThinkingLevel,
) {
    let same_model = restored
        .model
        .as_ref()
        .is_some_and(|m| m.provider == model.provider && m.model_id == model.id);
    if !same_model {
        let _ = session.record(|s| s.append_model_change(&model.provider, &model.id));
    }
    if !restored.resumed || restored.thinking != Some(thinking) {
        let _ = session.record(|s| s.append_thinking_level_change(thinking.as_str()));
    }
}
