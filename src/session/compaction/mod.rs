//! Compaction: replacing the older part of a long conversation with an LLM-written summary,
//! as pi's `core/compaction` does, so a session can go on past the model's context window.
//!
//! This module is a library; the app decides *when* to compact and writes the result. The
//! pieces, in the order the app uses them:
//! - [`estimate`]: how full the context is ([`context_tokens`]: the last valid assistant usage
//!   plus a chars/4 estimate of later messages) and [`should_compact`] (`tokens > window −
//!   reserveTokens`).
//! - [`prepare()`]: over the active path, where to cut ([`cut`]: keep about `keepRecentTokens`,
//!   never starting at a tool result, possibly splitting a turn), what to summarize, and the
//!   files read and modified so far ([`files`]). Its [`Preparation`] is what hooks see in
//!   `session_before_compact`.
//! - [`plan_compaction()`]: one summary request (two when a turn is split), the conversation
//!   serialized as text ([`serialize`]) inside pi's prompt structure ([`prompt`]); the
//!   controller makes the calls (storage makes none) and [`finish_compaction()`] merges the
//!   answers and appends the file lists; the [`CompactionResult`] becomes a `compaction` entry.
//! - [`overflow`]: recognizing a provider's "context too long" error, which triggers a
//!   compaction and a retry of the turn.

pub mod branch;
pub mod cut;
pub mod estimate;
pub mod files;
pub mod overflow;
pub mod plan;
pub mod prepare;
pub mod prompt;
pub mod serialize;
mod settings;

use serde::Serialize;

pub use branch::{plan_branch_summary, BranchPlan, BranchSummaryResult};
pub use estimate::{
    calculate_context_tokens, context_tokens, estimate_context, estimate_messages_tokens,
    estimate_tokens, should_compact, ContextEstimate, ContextItem,
};
pub use files::{format_file_lists, FileOps};
pub use overflow::{is_context_overflow, is_context_overflow_error, is_recoverable_length};
pub use plan::{finish_compaction, plan_compaction, CompactionPlan, SummaryRequest};
pub use prepare::{prepare, Preparation};
pub use serialize::{serialize_agent_messages, serialize_conversation};
pub use settings::CompactionSettings;

use crate::message::Usage;
use crate::session::entry::Compaction;

/// The default compaction's `details`: the files the summarized history read (and did not
/// modify) and modified, cumulative over earlier compactions. Sorted.
pub type CompactionDetails = crate::session::entry::FileDetails;

/// What [`finish_compaction`] produced; the app stores it as a `compaction` entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    /// The model's summary with the `<read-files>` / `<modified-files>` blocks appended.
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    /// The summary calls' usage (summed when a split turn needed two calls).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    pub details: CompactionDetails,
}

impl CompactionResult {
    /// The entry pi appends for a compaction it generated itself (`fromHook: false`).
    pub fn to_entry(&self) -> Compaction {
        Compaction {
            summary: self.summary.clone(),
            first_kept_entry_id: Some(self.first_kept_entry_id.clone()),
            tokens_before: self.tokens_before,
            details: serde_json::to_value(&self.details).ok(),
            from_hook: Some(false),
            usage: self
                .usage
                .as_ref()
                .and_then(|u| serde_json::to_value(u).ok()),
            retained_tail: None,
            system_message: None,
            extra: Default::default(),
        }
    }
}

/// Which summary call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryStage {
    /// The history (or the update of the previous summary).
    History,
    /// The prefix of a split turn.
    TurnPrefix,
}

impl std::fmt::Display for SummaryStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // pi's error prefixes: "Summarization failed" / "Turn prefix summarization failed".
        f.write_str(match self {
            SummaryStage::History => "Summarization",
            SummaryStage::TurnPrefix => "Turn prefix summarization",
        })
    }
}

/// Why compaction did not happen. The messages of the first two are pi's.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompactionError {
    /// The leaf is a compaction already.
    #[error("Already compacted")]
    AlreadyCompacted,
    /// Everything on the path fits in `keepRecentTokens`, or the path is empty.
    #[error("Nothing to compact (session too small)")]
    NothingToCompact,
    #[error("Compaction cancelled")]
    Cancelled,
    /// The provider failed (after retries) or answered with an error.
    #[error("{stage} failed: {message}")]
    Provider {
        stage: SummaryStage,
        message: String,
    },
    /// The model answered without any text, which would erase the history.
    #[error("{stage} failed: the model returned an empty summary")]
    EmptySummary { stage: SummaryStage },
}

#[cfg(test)]
pub(crate) mod test_support;
