//! Where to cut the path: pi's `findCutPoint`. Walking back from the leaf, message sizes are
//! summed until `keepRecentTokens` is reached; the cut goes to the first legal cut point at or
//! after that entry, so about that much recent conversation survives verbatim.
//!
//! A tool result is never a legal cut point: it must stay behind the assistant message that
//! called the tool, or the provider rejects the context. Every other context message is legal
//! (user, assistant, bashExecution, custom, branchSummary, compactionSummary). Cutting at an
//! assistant message splits its turn; then the turn's start (the nearest user-like message
//! before the cut) is found so the turn's prefix can be summarized separately.
//!
//! Entries are projected to context messages as pi's `sessionEntryToContextMessages` does:
//! `message` entries as stored, `custom_message` as role `custom`, a non-empty
//! `branch_summary` as `branchSummary`, a `compaction` as `compactionSummary`.

use std::borrow::Cow;

use serde_json::{json, Value};

use super::estimate::ContextItem;
use crate::session::entry::{AgentMessage, Entry, EntryKind};

/// The role of the context message an entry produces, if it produces one.
pub(crate) fn context_role(e: &Entry) -> Option<&str> {
    match &e.kind {
        EntryKind::Message(m) => Some(m.message.role()),
        EntryKind::CustomMessage(_) => Some("custom"),
        EntryKind::BranchSummary(b) if !b.summary.is_empty() => Some("branchSummary"),
        EntryKind::Compaction(_) => Some("compactionSummary"),
        _ => None,
    }
}

/// The context message an entry produces, if any.
pub(crate) fn context_message(e: &Entry) -> Option<Cow<'_, AgentMessage>> {
    let ts = e.timestamp_ms();
    let raw = |v: Value| Some(Cow::Owned(AgentMessage::Raw(v)));
    match &e.kind {
        EntryKind::Message(m) => Some(Cow::Borrowed(&m.message)),
        EntryKind::CustomMessage(c) => {
            let mut v = json!({
                "role": "custom",
                "customType": c.custom_type,
                "content": c.content,
                "display": c.display,
            });
            if let (Some(d), Some(obj)) = (&c.details, v.as_object_mut()) {
                obj.insert("details".into(), d.clone());
            }
            if let Some(obj) = v.as_object_mut() {
                obj.insert("timestamp".into(), Value::from(ts));
            }
            raw(v)
        }
        EntryKind::BranchSummary(b) if !b.summary.is_empty() => raw(json!({
            "role": "branchSummary",
            "summary": b.summary,
            "fromId": b.from_id,
            "timestamp": ts,
        })),
        EntryKind::Compaction(c) => raw(json!({
            "role": "compactionSummary",
            "summary": c.summary,
            "tokensBefore": c.tokens_before,
            "timestamp": ts,
        })),
        _ => None,
    }
}

fn is_compaction(e: &Entry) -> bool {
    matches!(e.kind, EntryKind::Compaction(_))
}

/// A legal place to start the kept part.
fn is_cut_point(e: &Entry) -> bool {
    !is_compaction(e)
        && matches!(
            context_role(e),
            Some(
                "user"
                    | "assistant"
                    | "bashExecution"
                    | "custom"
                    | "branchSummary"
                    | "compactionSummary"
            )
        )
}

/// A message that begins a turn: anything user-like (not an assistant reply or tool result).
fn starts_turn(e: &Entry) -> bool {
    !is_compaction(e)
        && matches!(
            context_role(e),
            Some("user" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary")
        )
}

/// pi's `CutPointResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// Index of the first entry kept.
    pub first_kept_index: usize,
    /// Where the split turn starts; `None` unless the cut splits a turn.
    pub turn_start_index: Option<usize>,
    pub is_split_turn: bool,
}

/// pi's `findTurnStartIndex`: the nearest turn-starting entry at or before `index`, not
/// before `start`.
pub fn find_turn_start(entries: &[&Entry], index: usize, start: usize) -> Option<usize> {
    (start..=index)
        .rev()
        .find(|&i| entries.get(i).is_some_and(|e| starts_turn(e)))
}

/// pi's `findCutPoint` over `entries[start..end]`.
pub fn find_cut_point(
    entries: &[&Entry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPoint {
    let end = end.min(entries.len());
    let cut_points: Vec<usize> = (start..end).filter(|&i| is_cut_point(entries[i])).collect();
    let Some(&first_cut_point) = cut_points.first() else {
        return CutPoint {
            first_kept_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };

    let mut cut = first_cut_point;
    let mut accumulated = 0u64;
    for i in (start..end).rev() {
        let tokens = context_message(entries[i]).map_or(0, |m| m.estimate_tokens());
        if tokens == 0 {
            continue;
        }
        accumulated += tokens;
        if accumulated >= keep_recent_tokens {
            // Trailing tool results over the budget by themselves keep the call before them.
            cut = cut_points
                .iter()
                .copied()
                .find(|&c| c >= i)
                .or(cut_points.last().copied())
                .unwrap_or(first_cut_point);
            break;
        }
    }

    // Settings changes, labels and the like right before the cut go with the kept part, so
    // the kept conversation still replays its model and thinking level.
    while cut > start {
        let prev = entries[cut - 1];
        if is_compaction(prev) || context_role(prev).is_some() {
            break;
        }
        cut -= 1;
    }

    if starts_turn(entries[cut]) {
        return CutPoint {
            first_kept_index: cut,
            turn_start_index: None,
            is_split_turn: false,
        };
    }
    let turn_start = find_turn_start(entries, cut, start);
    CutPoint {
        first_kept_index: cut,
        turn_start_index: turn_start,
        is_split_turn: turn_start.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::compaction::test_support::*;

    #[test]
    fn never_cuts_at_a_tool_result() {
        // user(100 tok) assistant+call(small) toolResult(big) assistant(small)
        let entries = [
            user("u1", 400),
            assistant_call("a1", "read", "x.rs"),
            tool_result("t1", 4000),
            assistant_text("a2", 8),
        ];
        let refs: Vec<&Entry> = entries.iter().collect();
        // Budget reached inside the tool result: the cut moves forward to a2, not t1.
        let c = find_cut_point(&refs, 0, refs.len(), 500);
        assert_eq!(c.first_kept_index, 3);
        assert!(c.is_split_turn);
        assert_eq!(c.turn_start_index, Some(0));
    }

    #[test]
    fn cuts_at_user_messages_without_splitting() {
        let entries = [
            user("u1", 4000),
            assistant_text("a1", 4000),
            user("u2", 4000),
            assistant_text("a2", 4000),
        ];
        let refs: Vec<&Entry> = entries.iter().collect();
        // a2 (1000) + u2 (1000) reaches 2000 at u2.
        let c = find_cut_point(&refs, 0, refs.len(), 2000);
        assert_eq!(
            c,
            CutPoint {
                first_kept_index: 2,
                turn_start_index: None,
                is_split_turn: false
            }
        );
        // One more token of budget walks back to a1: an assistant cut, splitting turn u1.
        let c = find_cut_point(&refs, 0, refs.len(), 2001);
        assert_eq!(c.first_kept_index, 1);
        assert_eq!(c.turn_start_index, Some(0));
        assert!(c.is_split_turn);
    }

    #[test]
    fn keeps_everything_when_the_budget_is_never_reached() {
        let entries = [user("u1", 40), assistant_text("a1", 40)];
        let refs: Vec<&Entry> = entries.iter().collect();
        let c = find_cut_point(&refs, 0, refs.len(), 20_000);
        assert_eq!(c.first_kept_index, 0);
        assert!(!c.is_split_turn);
    }

    #[test]
    fn bash_custom_and_branch_summaries_are_turn_starting_cut_points() {
        for first in [
            bash("b1", 4000),
            custom_message("c1", 4000),
            branch_summary("s1", 4000),
        ] {
            let entries = [
                user("u0", 4000),
                assistant_text("a0", 40),
                first,
                assistant_text("a1", 4000),
            ];
            let refs: Vec<&Entry> = entries.iter().collect();
            let c = find_cut_point(&refs, 0, refs.len(), 1500);
            assert_eq!(c.first_kept_index, 2, "{:?}", entries[2].kind);
            assert!(!c.is_split_turn);
        }
    }

    #[test]
    fn metadata_before_the_cut_is_kept_with_it() {
        let entries = [
            user("u1", 4000),
            assistant_text("a1", 4000),
            model_change("m1"),
            user("u2", 4000),
        ];
        let refs: Vec<&Entry> = entries.iter().collect();
        let c = find_cut_point(&refs, 0, refs.len(), 1000);
        assert_eq!(c.first_kept_index, 2);
        // As in pi, the cut entry is then not a turn start, so the turn before is the
        // "prefix" of a split turn.
        assert!(c.is_split_turn);
        assert_eq!(c.turn_start_index, Some(0));
    }

    #[test]
    fn no_cut_points_keeps_from_the_start() {
        let entries = [model_change("m1"), tool_result("t1", 4000)];
        let refs: Vec<&Entry> = entries.iter().collect();
        let c = find_cut_point(&refs, 1, refs.len(), 10);
        assert_eq!(c.first_kept_index, 1);
        assert!(!c.is_split_turn);
    }

    #[test]
    fn empty_branch_summaries_are_not_context() {
        let e = branch_summary("s", 0);
        assert_eq!(context_role(&e), None);
        assert!(context_message(&e).is_none());
    }
}
