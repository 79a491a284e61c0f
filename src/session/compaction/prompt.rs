//! The summarizer's prompts and budgets, pi 1.6's word for word (so the same model writes the
//! same summaries): the summary ends up in session files and in later compactions'
//! `<previous-summary>`, so its sections are the ones pi writes and reads: Goal / Constraints &
//! Preferences / Progress (Done, In Progress, Blocked) / Key Decisions / Next Steps / Critical
//! Context.
//!
//! The history request is one user message: the serialized conversation in `<conversation>`
//! tags, the previous summary (if any) in `<previous-summary>` tags, then the instructions.
//! With a previous summary the "update" instructions are used, which merge rather than
//! restart. The prefix of a split turn gets its own prompt (`# Conversation` /
//! `# Instructions`), and the two summaries are merged under a `**Turn Context (split
//! turn):**` heading.

/// The system prompt of every summary call (pi's `SUMMARIZATION_SYSTEM_PROMPT`).
pub const SYSTEM_PROMPT: &str = "You are a context summarization assistant. Your task is to read \
a conversation between a user and an AI assistant, then produce a structured summary following \
the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY \
output the structured summary.";

const INITIAL_INSTRUCTIONS: &str = "The messages above are a conversation to summarize. Create a \
structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or \"(none)\" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or \"(none)\" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages.";

const UPDATE_INSTRUCTIONS: &str = "The messages above are NEW conversation messages to \
incorporate into the existing summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from \"In Progress\" to \"Done\" when completed
- UPDATE \"Next Steps\" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages.";

const TURN_PREFIX_INSTRUCTIONS: &str = "The messages above are earlier context from an ongoing \
conversation. Later messages are stored separately and do not need to be reconstructed.

Create a concise checkpoint of the user's request and the progress shown above. This checkpoint \
will be placed before the later messages so the conversation can continue with the necessary \
context.

## Original Request
[What did the user ask for?]

## Progress So Far
- [Key decisions and work completed in these messages]

## Context Needed to Continue
- [Information from these messages needed to understand the later work]

Only summarize information explicitly present above. Do not infer or recreate later messages.";

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

/// The user message of the turn-prefix summary call: pi 1.6 frames it with headings rather
/// than tags, and adds the custom focus here too.
pub fn turn_prefix_prompt(conversation: &str, custom_instructions: Option<&str>) -> String {
    const HEAD: &str = "# Conversation\n";
    const INSTRUCTIONS: &str = "\n\n# Instructions\n";
    let extra = non_empty(custom_instructions);
    let mut out = String::with_capacity(
        HEAD.len()
            + conversation.len()
            + INSTRUCTIONS.len()
            + TURN_PREFIX_INSTRUCTIONS.len()
            + extra.map_or(0, |c| c.len() + 32),
    );
    out.push_str(HEAD);
    out.push_str(conversation);
    out.push_str(INSTRUCTIONS);
    out.push_str(TURN_PREFIX_INSTRUCTIONS);
    if let Some(extra) = extra {
        out.push_str(&format!("\n\nAdditional focus: {extra}"));
    }
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
    fn turn_prefix_prompt_has_its_sections_and_the_focus() {
        let p = turn_prefix_prompt("[User]: big", None);
        assert!(p.starts_with("# Conversation\n[User]: big\n\n# Instructions\n"));
        assert!(in_order(
            &p,
            &[
                "## Original Request",
                "## Progress So Far",
                "## Context Needed to Continue"
            ]
        ));
        assert!(p.ends_with(TURN_PREFIX_INSTRUCTIONS));
        let focused = turn_prefix_prompt("c", Some("tests"));
        assert!(focused.ends_with(&format!(
            "{TURN_PREFIX_INSTRUCTIONS}\n\nAdditional focus: tests"
        )));
        assert_eq!(
            turn_prefix_prompt("c", Some("")),
            turn_prefix_prompt("c", None)
        );
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
