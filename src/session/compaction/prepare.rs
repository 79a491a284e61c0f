//! pi's `prepareCompaction`: everything decided before the model is asked, over the active
//! path (root → leaf). The result is also what hooks get in `session_before_compact`, so a
//! hook can write its own summary from the same cut.
//!
//! The range considered starts at the previous compaction's first kept entry (its kept
//! messages were never summarized) or, without one, at the root. Within it the cut keeps
//! about `keepRecentTokens`; before the cut is the history to summarize, and when the cut
//! splits a turn, the turn's beginning is summarized on its own. `tokensBefore` is the
//! context size at the leaf as the model sees it (the previous summary included).

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::cut::{context_message, find_cut_point};
use super::estimate::estimate_context;
use super::files::FileOps;
use super::settings::CompactionSettings;
use super::CompactionError;
use crate::session::entry::{AgentMessage, Entry, EntryKind};

/// What to summarize and where to cut.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preparation {
    /// The entry the kept part starts at.
    pub first_kept_entry_id: String,
    /// History before the cut (or before the split turn), summarized then dropped.
    pub messages_to_summarize: Vec<AgentMessage>,
    /// The split turn's messages before the cut; empty unless `is_split_turn`.
    pub turn_prefix_messages: Vec<AgentMessage>,
    pub is_split_turn: bool,
    pub tokens_before: u64,
    /// The latest compaction's summary, updated rather than rewritten.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_summary: Option<String>,
    pub file_ops: FileOps,
    pub settings: CompactionSettings,
}

impl Preparation {
    /// The `preparation` of a `session_before_compact` hook payload: snake_case keys, pi's
    /// message shapes inside.
    pub fn to_hook_payload(&self) -> Value {
        let mut v = Map::new();
        v.insert(
            "first_kept_entry_id".into(),
            json!(self.first_kept_entry_id),
        );
        v.insert(
            "messages_to_summarize".into(),
            messages_json(&self.messages_to_summarize),
        );
        v.insert(
            "turn_prefix_messages".into(),
            messages_json(&self.turn_prefix_messages),
        );
        v.insert("is_split_turn".into(), json!(self.is_split_turn));
        v.insert("tokens_before".into(), json!(self.tokens_before));
        if let Some(s) = &self.previous_summary {
            v.insert("previous_summary".into(), json!(s));
        }
        v.insert(
            "file_ops".into(),
            serde_json::to_value(&self.file_ops).unwrap_or(Value::Null),
        );
        v.insert("settings".into(), self.settings.to_hook_value());
        Value::Object(v)
    }
}

fn messages_json(messages: &[AgentMessage]) -> Value {
    Value::Array(messages.iter().map(AgentMessage::to_value).collect())
}

/// A message to summarize: what the entry puts in context, except compaction summaries
/// (the previous summary is passed separately) and system messages (prompt state, not
/// conversation: the compaction entry carries their replay, as in pi 1.6).
fn summarizable(e: &Entry) -> Option<AgentMessage> {
    if matches!(e.kind, EntryKind::Compaction(_)) || super::cut::context_role(e) == Some("system") {
        return None;
    }
    context_message(e).map(|m| m.into_owned())
}

/// The context the model sees at the end of `path` (pi's `buildSessionContext`), for
/// `tokensBefore`. A compaction's `retainedTail` stands in for its kept range, as in this
/// project's context builder.
fn path_context(path: &[&Entry], last_compaction: Option<usize>) -> Vec<AgentMessage> {
    let own = |e: &Entry| context_message(e).map(|m| m.into_owned());
    let Some(ci) = last_compaction else {
        return path.iter().filter_map(|e| own(e)).collect();
    };
    let EntryKind::Compaction(c) = &path[ci].kind else {
        return Vec::new();
    };
    let mut out: Vec<AgentMessage> = own(path[ci]).into_iter().collect();
    match &c.retained_tail {
        Some(tail) => out.extend(tail.iter().cloned()),
        None => {
            let first_kept = c.first_kept_entry_id.as_deref();
            if let Some(start) = path[..ci]
                .iter()
                .position(|e| Some(e.id.as_str()) == first_kept)
            {
                out.extend(path[start..ci].iter().filter_map(|e| own(e)));
            }
        }
    }
    out.extend(path[ci + 1..].iter().filter_map(|e| own(e)));
    out
}

/// pi's `prepareCompaction`. Fails with [`CompactionError::AlreadyCompacted`] when the leaf is
/// a compaction and [`CompactionError::NothingToCompact`] when the path is empty or all of it
/// fits in `keepRecentTokens`.
pub fn prepare(
    path: &[&Entry],
    settings: &CompactionSettings,
) -> Result<Preparation, CompactionError> {
    if path
        .last()
        .is_some_and(|e| matches!(e.kind, EntryKind::Compaction(_)))
    {
        return Err(CompactionError::AlreadyCompacted);
    }

    let prev_index = path
        .iter()
        .rposition(|e| matches!(e.kind, EntryKind::Compaction(_)));
    let prev = prev_index.and_then(|i| match &path[i].kind {
        EntryKind::Compaction(c) => Some(c),
        _ => None,
    });
    let boundary_start = match (prev_index, prev) {
        (Some(i), Some(c)) => c
            .first_kept_entry_id
            .as_deref()
            .and_then(|id| path.iter().position(|e| e.id == id))
            .unwrap_or(i + 1),
        _ => 0,
    };
    let boundary_end = path.len();

    let tokens_before = estimate_context(&path_context(path, prev_index)).tokens;
    let cut = find_cut_point(
        path,
        boundary_start,
        boundary_end,
        settings.keep_recent_tokens,
    );
    let first_kept_entry_id = match path.get(cut.first_kept_index) {
        Some(e) if !e.id.is_empty() => e.id.clone(),
        _ => return Err(CompactionError::NothingToCompact),
    };

    let turn_start = cut.turn_start_index.filter(|_| cut.is_split_turn);
    let history_end = turn_start.unwrap_or(cut.first_kept_index);
    let messages_to_summarize: Vec<AgentMessage> = path[boundary_start..history_end]
        .iter()
        .filter_map(|e| summarizable(e))
        .collect();
    let turn_prefix_messages: Vec<AgentMessage> = match turn_start {
        Some(t) => path[t..cut.first_kept_index]
            .iter()
            .filter_map(|e| summarizable(e))
            .collect(),
        None => Vec::new(),
    };
    if messages_to_summarize.is_empty() && turn_prefix_messages.is_empty() {
        return Err(CompactionError::NothingToCompact);
    }

    let mut file_ops = FileOps::default();
    // A hook's details are its own format; only pi-written ones carry file lists.
    if let Some(details) = prev
        .filter(|c| c.from_hook != Some(true))
        .and_then(|c| c.details.as_ref())
    {
        file_ops.seed_from_details(details);
    }
    for m in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.record(m);
    }

    Ok(Preparation {
        first_kept_entry_id,
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary: prev.map(|c| c.summary.clone()),
        file_ops,
        settings: *settings,
    })
}

#[cfg(test)]
mod tests;
