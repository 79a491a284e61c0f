//! What a compaction asks the model for (pi's `compact`), and what it stores from the
//! answers: one summary of the history, or of the history and, separately, of a split turn's
//! beginning, merged. The file lists are appended to the summary so they survive even if the
//! model leaves them out.
//!
//! Storage makes no model calls: this module turns a [`Preparation`] into
//! [`SummaryRequest`]s and the replies into a [`CompactionResult`]; the controller makes the
//! calls in between (`controller::summarize`), as it does every other model call.

use super::files::format_file_lists;
use super::prepare::Preparation;
use super::prompt::{
    history_max_tokens, history_prompt, merge_split_turn, turn_prefix_max_tokens,
    turn_prefix_prompt, NO_PRIOR_HISTORY,
};
use super::serialize::serialize_agent_messages;
use super::{CompactionResult, SummaryStage};
use crate::message::{Cost, Usage};

/// One summary the model is asked to write: a plain one-message request without tools.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRequest {
    /// Which call this is, for the error that names it.
    pub stage: SummaryStage,
    /// The user message.
    pub prompt: String,
    /// The output cap.
    pub max_tokens: u64,
}

/// The calls of one compaction, in the order they are made (the history first, then the turn
/// prefix of a split turn, sequentially, as pi 0.84 does). At least one is present.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPlan {
    /// Absent only for a split turn with no earlier history.
    pub history: Option<SummaryRequest>,
    /// Present only for a split turn.
    pub turn_prefix: Option<SummaryRequest>,
}

/// The summary calls for `prep`; `model_max_tokens` is the summarizing model's output cap.
pub fn plan_compaction(
    prep: &Preparation,
    custom_instructions: Option<&str>,
    model_max_tokens: u64,
) -> CompactionPlan {
    let reserve = prep.settings.reserve_tokens;
    let history = || SummaryRequest {
        stage: SummaryStage::History,
        prompt: history_prompt(
            &serialize_agent_messages(&prep.messages_to_summarize),
            prep.previous_summary.as_deref(),
            custom_instructions,
        ),
        max_tokens: history_max_tokens(reserve, model_max_tokens),
    };
    if !split(prep) {
        return CompactionPlan {
            history: Some(history()),
            turn_prefix: None,
        };
    }
    CompactionPlan {
        history: (!prep.messages_to_summarize.is_empty()).then(history),
        turn_prefix: Some(SummaryRequest {
            stage: SummaryStage::TurnPrefix,
            prompt: turn_prefix_prompt(
                &serialize_agent_messages(&prep.turn_prefix_messages),
                custom_instructions,
            ),
            max_tokens: turn_prefix_max_tokens(reserve, model_max_tokens),
        }),
    }
}

fn split(prep: &Preparation) -> bool {
    prep.is_split_turn && !prep.turn_prefix_messages.is_empty()
}

fn add_usage(a: &Usage, b: &Usage) -> Usage {
    let cost = |x: &Cost, y: &Cost| Cost {
        input: x.input + y.input,
        output: x.output + y.output,
        cache_read: x.cache_read + y.cache_read,
        cache_write: x.cache_write + y.cache_write,
        total: x.total + y.total,
        total_from_provider: either(x.total_from_provider, y.total_from_provider, |p, q| p || q),
    };
    Usage {
        input: a.input + b.input,
        output: a.output + b.output,
        cache_read: a.cache_read + b.cache_read,
        cache_write: a.cache_write + b.cache_write,
        reasoning: either(a.reasoning, b.reasoning, |p, q| p + q),
        total_tokens: a.total_tokens + b.total_tokens,
        cost: cost(&a.cost, &b.cost),
        cache_write_1h: either(a.cache_write_1h, b.cache_write_1h, |p, q| p + q),
    }
}

/// Two optional figures combined: absent only when both are (pi writes a field once any part
/// reported it).
fn either<T: Copy + Default>(a: Option<T>, b: Option<T>, f: impl Fn(T, T) -> T) -> Option<T> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(f(a.unwrap_or_default(), b.unwrap_or_default())),
    }
}

/// The compaction to store from the answers to [`plan_compaction`]'s requests (text and usage
/// of each, `None` for a request the plan did not make).
pub fn finish_compaction(
    prep: &Preparation,
    history: Option<(String, Usage)>,
    turn_prefix: Option<(String, Usage)>,
) -> CompactionResult {
    let (mut summary, usage) = match (history, turn_prefix) {
        (Some((h, hu)), Some((p, pu))) => (merge_split_turn(&h, &p), add_usage(&hu, &pu)),
        (None, Some((p, pu))) => (merge_split_turn(NO_PRIOR_HISTORY, &p), pu),
        (Some(h), None) => h,
        (None, None) => (String::new(), Usage::default()),
    };
    let details = prep.file_ops.lists();
    summary.push_str(&format_file_lists(&details));
    CompactionResult {
        summary,
        first_kept_entry_id: prep.first_kept_entry_id.clone(),
        tokens_before: prep.tokens_before,
        usage: Some(usage),
        details,
    }
}
