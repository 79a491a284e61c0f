//! Branch summaries (pi's `branch-summarization`): when `/tree` leaves a branch behind, the
//! abandoned entries can be summarized into a `branch_summary` at the new position, so what
//! was tried there is not lost to the conversation that continues elsewhere. Same model call,
//! serialization and file lists as a compaction; a prompt about a path not taken.

use tokio_util::sync::CancellationToken;

use super::files::{format_file_lists, FileOps};
use super::prompt::history_max_tokens;
use super::serialize::serialize_agent_messages;
use super::summarize::SummaryModel;
use super::{CompactionDetails, CompactionError, SummaryStage};
use crate::message::Usage;
use crate::session::AgentMessage;

const INSTRUCTIONS: &str = "The conversation above is a branch the user is leaving: the work \
will continue from an earlier point, without these messages. Write a summary that lets the \
assistant keep what this branch learned. Use this format:

## Goal
[What the branch was trying to do]

## Progress
- [What was done, with file names and results]

## Key Decisions
- [Choices made and why]

## Outcome
[Where the branch ended: finished, abandoned, or blocked, and on what]

Be concise; keep names, paths and error messages exact.";

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
    /// The model's summary with the file lists appended.
    pub summary: String,
    pub usage: Usage,
    pub details: CompactionDetails,
}

/// Summarize the abandoned `messages` (oldest first). `reserve_tokens` sizes the output
/// budget as for compaction (pi's `branchSummary.reserveTokens`).
pub async fn summarize_branch(
    summarizer: &SummaryModel<'_>,
    messages: &[AgentMessage],
    reserve_tokens: u64,
    custom_instructions: Option<&str>,
    cancel: CancellationToken,
) -> Result<BranchSummaryResult, CompactionError> {
    if messages.is_empty() {
        return Err(CompactionError::NothingToCompact);
    }
    let mut files = FileOps::default();
    for m in messages {
        files.record(m);
    }
    let prompt = branch_prompt(&serialize_agent_messages(messages), custom_instructions);
    let budget = history_max_tokens(reserve_tokens, summarizer.model.max_tokens);
    let (mut summary, usage) = summarizer
        .summarize(SummaryStage::History, prompt, budget, &cancel)
        .await?;
    let details = files.lists();
    summary.push_str(&format_file_lists(&details));
    Ok(BranchSummaryResult {
        summary,
        usage,
        details,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_wraps_the_conversation_and_adds_the_focus() {
        let p = branch_prompt("[User]: hi", Some("the failing test"));
        assert!(p.starts_with("<conversation>\n[User]: hi\n</conversation>"));
        assert!(p.contains("## Outcome"));
        assert!(p.ends_with("Additional focus: the failing test"));
        assert!(!branch_prompt("x", Some("")).contains("Additional focus"));
    }
}
