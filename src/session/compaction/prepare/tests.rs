use serde_json::json;

use super::*;
use crate::session::compaction::test_support::*;

fn settings(keep: u64) -> CompactionSettings {
    CompactionSettings {
        keep_recent_tokens: keep,
        ..CompactionSettings::default()
    }
}

fn ids(messages: &[AgentMessage]) -> Vec<String> {
    messages.iter().map(|m| m.text()).collect()
}

#[test]
fn summarizes_whole_turns_before_a_user_cut() {
    let entries = [
        user_text("u1", "first question"),
        assistant_text("a1", 4000),
        user("u2", 4000),
        assistant_text("a2", 4000),
    ];
    let path: Vec<&Entry> = entries.iter().collect();
    let p = prepare(&path, &settings(2000)).unwrap();
    assert_eq!(p.first_kept_entry_id, "u2");
    assert_eq!(p.messages_to_summarize.len(), 2);
    assert_eq!(p.messages_to_summarize[0].text(), "first question");
    assert!(!p.is_split_turn);
    assert!(p.turn_prefix_messages.is_empty());
    assert_eq!(p.previous_summary, None);
    // No usage anywhere: everything is estimated (14 chars → 4, then 3 × 1000).
    assert_eq!(p.tokens_before, 4 + 3000);
}

#[test]
fn a_split_turn_puts_its_beginning_in_the_prefix() {
    let entries = [
        user("u0", 400),
        assistant_text("a0", 400),
        user_text("u1", "do the big thing"),
        assistant_call("a1", "read", "src/lib.rs"),
        tool_result("t1", 4000),
        assistant_call("a2", "edit", "src/lib.rs"),
        tool_result("t2", 4000),
    ];
    let path: Vec<&Entry> = entries.iter().collect();
    let p = prepare(&path, &settings(1500)).unwrap();
    // t2 (1000) + a2 (~7) + t1 (1000) crosses 1500 at t1; the next cut point is a2.
    assert_eq!(p.first_kept_entry_id, "a2");
    assert!(p.is_split_turn);
    assert_eq!(p.messages_to_summarize.len(), 2);
    assert_eq!(p.turn_prefix_messages.len(), 3);
    assert_eq!(p.turn_prefix_messages[0].text(), "do the big thing");
    assert_eq!(p.turn_prefix_messages[2].role(), "toolResult");
    // File ops come from the prefix too (the kept a2 edit is not summarized).
    assert_eq!(p.file_ops.read, ["src/lib.rs"]);
    assert!(p.file_ops.edited.is_empty());
}

#[test]
fn refuses_when_compacted_empty_or_small() {
    let entries = [user("u1", 40), compaction("c1", "S", "u1", None)];
    let path: Vec<&Entry> = entries.iter().collect();
    assert_eq!(
        prepare(&path, &settings(10)),
        Err(CompactionError::AlreadyCompacted)
    );
    assert_eq!(
        prepare(&[], &settings(10)),
        Err(CompactionError::NothingToCompact)
    );
    let entries = [user("u1", 40), assistant_text("a1", 40)];
    let path: Vec<&Entry> = entries.iter().collect();
    assert_eq!(
        prepare(&path, &CompactionSettings::default()),
        Err(CompactionError::NothingToCompact)
    );
}

#[test]
fn a_previous_compaction_is_updated_and_its_files_carried_over() {
    let details = json!({"readFiles": ["old.rs"], "modifiedFiles": ["m.rs"]});
    let entries = [
        user("u1", 4000),
        assistant_text("a1", 4000),
        user_text("u2", "kept before"),
        assistant_call("a2", "write", "w.rs"),
        compaction("c1", "PREV", "u2", Some(details)),
        user("u3", 4000),
        assistant_text("a3", 4000),
        user("u4", 4000),
        assistant_text("a4", 4000),
    ];
    let path: Vec<&Entry> = entries.iter().collect();
    let p = prepare(&path, &settings(2000)).unwrap();
    assert_eq!(p.first_kept_entry_id, "u4");
    assert_eq!(p.previous_summary.as_deref(), Some("PREV"));
    // From the previous first kept entry on, the compaction itself left out.
    let summarized = ids(&p.messages_to_summarize);
    assert_eq!(summarized.len(), 4);
    assert_eq!(summarized[0], "kept before");
    assert_eq!(p.file_ops.read, ["old.rs"]);
    assert_eq!(p.file_ops.edited, ["m.rs"]);
    assert_eq!(p.file_ops.written, ["w.rs"]);
    // Context at the leaf: summary (1) + u2 (3) + a2 (~6) + four messages of 1000.
    let a2_tokens = crate::session::compaction::estimate_tokens(path[3].message().unwrap());
    assert_eq!(p.tokens_before, 1 + 3 + a2_tokens + 4000);
}

#[test]
fn hook_written_details_are_not_file_lists() {
    let mut c = compaction("c1", "PREV", "u2", Some(json!({"readFiles": ["hook.rs"]})));
    if let EntryKind::Compaction(comp) = &mut c.kind {
        comp.from_hook = Some(true);
    }
    let entries = [
        user("u1", 4000),
        c,
        user("u2", 4000),
        assistant_text("a2", 4000),
        user("u3", 4000),
    ];
    let path: Vec<&Entry> = entries.iter().collect();
    let p = prepare(&path, &settings(1000)).unwrap();
    assert!(p.file_ops.read.is_empty());
    // firstKeptEntryId "u2" comes after the compaction here, so the range starts there.
    assert_eq!(p.messages_to_summarize.len(), 2);
}

#[test]
fn tokens_before_starts_from_the_last_valid_usage() {
    let entries = [
        user("u1", 4000),
        assistant_with_usage("a1", 4000, 50_000),
        user("u2", 400),
        assistant_text("a2", 40),
    ];
    let path: Vec<&Entry> = entries.iter().collect();
    let p = prepare(&path, &settings(100)).unwrap();
    // a2 has no usage (all zero) and is estimated, as is u2.
    assert_eq!(p.tokens_before, 50_000 + 100 + 10);
}

#[test]
fn payloads_are_camel_case_for_json_and_snake_case_for_hooks() {
    let entries = [
        user("u1", 4000),
        assistant_call("a1", "read", "r.rs"),
        user("u2", 4000),
    ];
    let path: Vec<&Entry> = entries.iter().collect();
    let p = prepare(&path, &settings(1000)).unwrap();
    let camel = serde_json::to_value(&p).unwrap();
    assert_eq!(camel["firstKeptEntryId"], "u2");
    assert_eq!(camel["isSplitTurn"], false);
    assert_eq!(camel["fileOps"]["read"], json!(["r.rs"]));
    assert_eq!(camel["settings"]["keepRecentTokens"], 1000);
    assert!(camel.get("previousSummary").is_none());
    let hook = p.to_hook_payload();
    assert_eq!(hook["first_kept_entry_id"], "u2");
    assert_eq!(hook["tokens_before"], p.tokens_before);
    assert_eq!(hook["settings"]["keep_recent_tokens"], 1000);
    assert_eq!(hook["file_ops"]["written"], json!([]));
    // Messages keep pi's shape.
    assert_eq!(
        hook["messages_to_summarize"][1]["content"][0]["type"],
        "toolCall"
    );
    assert_eq!(hook["messages_to_summarize"].as_array().unwrap().len(), 2);
}
