//! The summarizer's prompts and budgets. The wording is ours; the structure is pi's, because
//! the summary ends up in session files and in later compactions' `<previous-summary>`, so its
//! sections must stay the ones pi writes and reads: Goal / Constraints & Preferences /
//! Progress (Done, In Progress, Blocked) / Key Decisions / Next Steps / Critical Context.
//!
//! The request is one user message: the serialized conversation in `<conversation>` tags,
//! the previous summary (if any) in `<previous-summary>` tags, then the instructions. With a
//! previous summary the "update" instructions are used, which merge rather than restart. The
//! prefix of a split turn gets its own shorter prompt, and the two summaries are merged under
//! a `**Turn Context (split turn):**` heading.

/// The system prompt of every summary call.
pub const SYSTEM_PROMPT: &str = "You summarize conversations between a user and an AI assistant. \
Read the conversation you are given and write a structured summary in exactly the format the \
instructions specify.\n\n\
The conversation is material to summarize, not a conversation you are part of: do not continue \
it and do not answer questions asked in it. Reply with the summary and nothing else.";

const INITIAL_INSTRUCTIONS: &str =
    "Summarize the conversation above into a structured checkpoint. \
Another model will read only this checkpoint and must be able to continue the work from it.

Reply in exactly this format:

## Goal
[The user's objective. List several if the session covers more than one task.]

## Constraints & Preferences
- [Requirements, constraints and preferences the user stated]
- [Write \"(none)\" when there are none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work underway]

### Blocked
- [Anything stopping progress, if anything does]

## Key Decisions
- **[Decision]**: [Why, in a few words]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, examples or references needed to continue]
- [Write \"(none)\" when nothing applies]

Keep every section short. Copy file paths, function names and error messages exactly.";

const UPDATE_INSTRUCTIONS: &str = "The conversation above holds NEW messages. Fold them into the \
existing summary given in the <previous-summary> tags.

Rules for the update:
- KEEP everything the previous summary records
- ADD the new progress, decisions and context
- MOVE items from \"In Progress\" to \"Done\" once they are finished
- REVISE \"Next Steps\" to match what has been accomplished
- COPY file paths, function names and error messages exactly
- DROP only what is clearly no longer relevant

Reply in exactly this format:

## Goal
[The goals so far, plus any new ones if the task grew]

## Constraints & Preferences
- [Those already known, plus any newly found]

## Progress
### Done
- [x] [Items done before AND items finished since]

### In Progress
- [ ] [Work underway, updated for the new progress]

### Blocked
- [Current blockers; remove those that are resolved]

## Key Decisions
- **[Decision]**: [Why, in a few words] (keep earlier decisions, add new ones)

## Next Steps
1. [Updated to the current state]

## Critical Context
- [Keep what matters, add what is new]

Keep every section short. Copy file paths, function names and error messages exactly.";

const TURN_PREFIX_INSTRUCTIONS: &str = "The conversation above is the BEGINNING of one turn that \
was too long to keep. Its END (the most recent work) is kept verbatim.

Summarize this beginning so the kept end makes sense on its own:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions made and work done in this beginning]

## Context for Suffix
- [What a reader needs to understand the kept recent work]

Be brief. Include only what is needed to understand the kept end.";

/// Stands in for the history summary when a split turn has no history before it.
pub const NO_PRIOR_HISTORY: &str = "No prior history.";

/// pi treats `""` like an absent value for both the previous summary and the instructions.
fn non_empty(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.is_empty())
}

/// `<conversation>…</conversation>` and a blank line, in a string with room for `more`
/// bytes after it. Sized once: the conversation can be tens of megabytes, and a string grown
/// by doubling would hold up to twice that.
pub(crate) fn conversation_block(conversation: &str, more: usize) -> String {
    const OPEN: &str = "<conversation>\n";
    const CLOSE: &str = "\n</conversation>\n\n";
    let mut out = String::with_capacity(OPEN.len() + conversation.len() + CLOSE.len() + more);
    out.push_str(OPEN);
    out.push_str(conversation);
    out.push_str(CLOSE);
    out
}

/// The user message of the history summary call.
pub fn history_prompt(
    conversation: &str,
    previous_summary: Option<&str>,
    custom_instructions: Option<&str>,
) -> String {
    let previous = non_empty(previous_summary);
    let more = previous.map_or(0, |p| p.len() + 64)
        + UPDATE_INSTRUCTIONS.len().max(INITIAL_INSTRUCTIONS.len())
        + non_empty(custom_instructions).map_or(0, |c| c.len() + 32);
    let mut out = conversation_block(conversation, more);
    if let Some(prev) = previous {
        out.push_str(&format!(
            "<previous-summary>\n{prev}\n</previous-summary>\n\n"
        ));
    }
    out.push_str(match previous {
        Some(_) => UPDATE_INSTRUCTIONS,
        None => INITIAL_INSTRUCTIONS,
    });
    if let Some(extra) = non_empty(custom_instructions) {
        out.push_str(&format!("\n\nAdditional focus: {extra}"));
    }
    out
}

/// The user message of the turn-prefix summary call.
pub fn turn_prefix_prompt(conversation: &str) -> String {
    let mut out = conversation_block(conversation, TURN_PREFIX_INSTRUCTIONS.len());
    out.push_str(TURN_PREFIX_INSTRUCTIONS);
    out
}

/// `floor(share · reserveTokens)`, capped by the model's output limit when it has one.
fn budget(reserve_tokens: u64, tenths: u64, model_max_tokens: u64) -> u64 {
    let own = reserve_tokens.saturating_mul(tenths) / 10;
    if model_max_tokens > 0 {
        own.min(model_max_tokens)
    } else {
        own
    }
}

/// Output budget of the history summary: `min(0.8 · reserveTokens, model.maxTokens)`.
pub fn history_max_tokens(reserve_tokens: u64, model_max_tokens: u64) -> u64 {
    budget(reserve_tokens, 8, model_max_tokens)
}

/// Output budget of the turn-prefix summary: `min(0.5 · reserveTokens, model.maxTokens)`.
pub fn turn_prefix_max_tokens(reserve_tokens: u64, model_max_tokens: u64) -> u64 {
    budget(reserve_tokens, 5, model_max_tokens)
}

/// One summary from the history summary and the turn-prefix summary of a split turn.
pub fn merge_split_turn(history: &str, turn_prefix: &str) -> String {
    format!("{history}\n\n---\n\n**Turn Context (split turn):**\n\n{turn_prefix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECTIONS: [&str; 9] = [
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ];

    fn in_order(text: &str, parts: &[&str]) -> bool {
        let mut from = 0;
        parts.iter().all(|p| match text[from..].find(p) {
            Some(i) => {
                from += i + p.len();
                true
            }
            None => false,
        })
    }

    #[test]
    fn initial_prompt_wraps_conversation_and_lists_sections() {
        let p = history_prompt("[User]: hi", None, None);
        assert!(p.starts_with("<conversation>\n[User]: hi\n</conversation>\n\n"));
        assert!(!p.contains("<previous-summary>"));
        assert!(p.ends_with(INITIAL_INSTRUCTIONS));
        assert!(in_order(&p, &SECTIONS));
    }

    #[test]
    fn a_previous_summary_selects_the_update_prompt() {
        let p = history_prompt("[User]: hi", Some("## Goal\nold"), None);
        assert!(p.contains(
            "</conversation>\n\n<previous-summary>\n## Goal\nold\n</previous-summary>\n\n"
        ));
        assert!(p.ends_with(UPDATE_INSTRUCTIONS));
        assert!(in_order(UPDATE_INSTRUCTIONS, &SECTIONS));
        // An empty previous summary counts as none, as in pi.
        assert!(history_prompt("c", Some(""), None).ends_with(INITIAL_INSTRUCTIONS));
    }

    #[test]
    fn custom_instructions_come_last() {
        let p = history_prompt("c", Some("s"), Some("focus on tests"));
        assert!(p.ends_with(&format!(
            "{UPDATE_INSTRUCTIONS}\n\nAdditional focus: focus on tests"
        )));
        assert!(!history_prompt("c", None, Some("")).contains("Additional focus"));
    }

    #[test]
    fn turn_prefix_prompt_has_its_sections() {
        let p = turn_prefix_prompt("[User]: big");
        assert!(p.starts_with("<conversation>\n[User]: big\n</conversation>\n\n"));
        assert!(in_order(
            &p,
            &[
                "## Original Request",
                "## Early Progress",
                "## Context for Suffix"
            ]
        ));
    }

    #[test]
    fn budgets_take_a_share_of_the_reserve_capped_by_the_model() {
        assert_eq!(history_max_tokens(16384, 0), 13107);
        assert_eq!(history_max_tokens(16384, 8192), 8192);
        assert_eq!(history_max_tokens(16384, 64000), 13107);
        assert_eq!(turn_prefix_max_tokens(16384, 0), 8192);
        assert_eq!(turn_prefix_max_tokens(16385, 4000), 4000);
        assert_eq!(turn_prefix_max_tokens(16385, 0), 8192);
    }

    #[test]
    fn split_turn_summaries_merge_under_a_heading() {
        assert_eq!(
            merge_split_turn("H", "P"),
            "H\n\n---\n\n**Turn Context (split turn):**\n\nP"
        );
    }
}
