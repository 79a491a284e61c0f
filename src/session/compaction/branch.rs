//! Branch summaries (pi's `branch-summarization`): when `/tree` leaves a branch behind, the
//! abandoned entries can be summarized into a `branch_summary` at the new position, so what
//! was tried there is not lost to the conversation that continues elsewhere. Same model call,
//! serialization and file lists as a compaction; a prompt about a path not taken. As for a
//! compaction, this module says what to ask and stores the answer; the controller asks.

use super::files::{format_file_lists, FileOps};
use super::plan::SummaryRequest;
use super::prompt::history_max_tokens;
use super::serialize::serialize_agent_messages;
use super::{CompactionDetails, CompactionError, SummaryStage};
use crate::message::Usage;
use crate::session::AgentMessage;

/// pi 1.6's `BRANCH_SUMMARY_PROMPT`.
const INSTRUCTIONS: &str = "Create a structured summary of this conversation branch for context \
when returning later.

Use this EXACT format:

## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or \"(none)\" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]

Keep each section concise. Preserve exact file paths, function names, and error messages.";

/// pi 1.6's `BRANCH_SUMMARY_PREAMBLE`: the stored summary starts with it, so the model reading
/// it later knows it describes a path not taken.
pub const PREAMBLE: &str = "The user explored a different conversation branch before returning \
here.\nSummary of that exploration:\n\n";

/// The user message of the branch summary call.
pub fn branch_prompt(conversation: &str, custom_instructions: Option<&str>) -> String {
    let more = INSTRUCTIONS.len() + custom_instructions.map_or(0, |c| c.len() + 32);
    let mut out = super::prompt::conversation_block(conversation, more);
    out.push_str(INSTRUCTIONS);
    if let Some(extra) = custom_instructions.filter(|s| !s.is_empty()) {
        out.push_str(&format!("\n\nAdditional focus: {extra}"));
    }
    out
}

/// A branch summary, ready to become a `branch_summary` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSummaryResult {
    /// [`PREAMBLE`], the model's summary, and the file lists.
    pub summary: String,
    pub usage: Usage,
    pub details: CompactionDetails,
}

/// The one call of a branch summary, and the file lists its answer gets.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchPlan {
    pub request: SummaryRequest,
    pub details: CompactionDetails,
}

impl BranchPlan {
    /// The summary to store from the model's answer to [`Self::request`].
    pub fn finish(self, answer: String, usage: Usage) -> BranchSummaryResult {
        let mut summary = format!("{PREAMBLE}{answer}");
        summary.push_str(&format_file_lists(&self.details));
        BranchSummaryResult {
            summary,
            usage,
            details: self.details,
        }
    }
}

/// What to ask about the abandoned `messages` (oldest first). `reserve_tokens` sizes the output
/// budget as for compaction (pi's `branchSummary.reserveTokens`); `model_max_tokens` is the
/// summarizing model's output cap.
pub fn plan_branch_summary(
    messages: &[AgentMessage],
    reserve_tokens: u64,
    custom_instructions: Option<&str>,
    model_max_tokens: u64,
) -> Result<BranchPlan, CompactionError> {
    if messages.is_empty() {
        return Err(CompactionError::NothingToCompact);
    }
    let mut files = FileOps::default();
    for m in messages {
        files.record(m);
    }
    Ok(BranchPlan {
        request: SummaryRequest {
            stage: SummaryStage::History,
            prompt: branch_prompt(&serialize_agent_messages(messages), custom_instructions),
            max_tokens: history_max_tokens(reserve_tokens, model_max_tokens),
        },
        details: files.lists(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_wraps_the_conversation_and_adds_the_focus() {
        let p = branch_prompt("[User]: hi", Some("the failing test"));
        assert!(p.starts_with("<conversation>\n[User]: hi\n</conversation>"));
        assert!(p.contains(
            "</conversation>\n\nCreate a structured summary of this conversation branch"
        ));
        assert!(p.contains(&format!("{INSTRUCTIONS}\n\nAdditional focus: ")));
        assert!(p.ends_with("Additional focus: the failing test"));
        assert!(!branch_prompt("x", Some("")).contains("Additional focus"));
    }
}
