//! Tests against the pi-format fixtures in `fixtures/sessions/`, and the 100 MB load
//! benchmark (ignored; run with `cargo test --release --lib session::tests::bench -- --ignored --nocapture`).

use std::path::{Path, PathBuf};

use super::entry::{AgentMessage, EntryKind};
use super::load::{load_file, WarningKind};
use super::{NotSessionReason, Session, SessionError};
use crate::message::Message;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/sessions")
        .join(name)
}

/// A fixture copied into a temp dir (opening may rewrite it).
fn copy_fixture(name: &str, dir: &Path) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(fixture(name), &p).unwrap();
    p
}

#[test]
fn every_type_fixture_reserializes_byte_identically() {
    let original = std::fs::read_to_string(fixture("v3-every-type.jsonl")).unwrap();
    let loaded = load_file(&fixture("v3-every-type.jsonl")).unwrap().unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.migrated_from, None);
    let mut lines = original.lines();
    assert_eq!(loaded.header.to_line(), lines.next().unwrap());
    for (entry, line) in loaded.entries.iter().zip(lines) {
        assert_eq!(entry.to_line(), line);
        // The typed serializer itself produces pi's bytes for every entry type, messages
        // included (integer costs, `errorMessage` after `timestamp`).
        assert!(
            !entry.keeps_source(),
            "{}: {}",
            entry.id,
            entry.serialize_typed()
        );
    }
    assert_eq!(loaded.entries.len(), original.lines().count() - 1);
    let types: std::collections::BTreeSet<&str> =
        loaded.entries.iter().map(|e| e.type_name()).collect();
    for t in [
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "context_edit",
        "usage",
        "future_thing",
    ] {
        assert!(types.contains(t), "fixture lacks {t}");
    }
    // Typed for user/assistant/toolResult, raw JSON for pi-only roles.
    let msg = |id: &str| {
        loaded
            .entries
            .iter()
            .find(|e| e.id == id)
            .and_then(|e| e.message())
            .unwrap()
    };
    assert!(matches!(
        msg("a0000003"),
        AgentMessage::Typed(m) if matches!(**m, Message::User(_))
    ));
    assert!(matches!(
        msg("a0000006"),
        AgentMessage::Typed(m) if matches!(**m, Message::Assistant(_))
    ));
    assert!(matches!(
        msg("a0000004"),
        AgentMessage::Typed(m) if matches!(**m, Message::Assistant(_))
    ));
    assert!(matches!(msg("a0000008"), AgentMessage::Raw(_)));
    assert_eq!(msg("a0000007").role(), "bashExecution");
}

#[test]
fn every_type_fixture_context_on_both_branches() {
    let tmp = tempfile::tempdir().unwrap();
    let p = copy_fixture("v3-every-type.jsonl", tmp.path());
    let (mut s, warnings) = Session::open(&p, "/x").unwrap();
    assert!(warnings.is_empty());
    assert_eq!(s.leaf_id(), Some("a0000017"));
    assert_eq!(s.name(), Some("Fix main"));
    // The label on a0000003 was set, then cleared.
    assert_eq!(s.label("a0000003"), None);

    // Leaf branch: compaction with retainedTail.
    let ctx = s.context();
    let roles: Vec<&str> = ctx.messages.iter().map(|m| m.message.role()).collect();
    assert_eq!(roles, ["compactionSummary", "user", "assistant", "user"]);
    assert_eq!(ctx.thinking_level, "medium");
    assert_eq!(ctx.model.as_ref().unwrap().model_id, "claude-sonnet-4-5");
    assert_eq!(ctx.llm_messages().len(), 4);

    // The other branch: compaction keeping from a0000006, context edits applied.
    s.set_leaf(Some("a0000012")).unwrap();
    let ctx = s.context();
    let roles: Vec<&str> = ctx.messages.iter().map(|m| m.message.role()).collect();
    assert_eq!(
        roles,
        [
            "compactionSummary",
            "assistant",
            "bashExecution",
            "custom",
            "custom",
            "user"
        ]
    );
    let ids: Vec<&str> = ctx.messages.iter().map(|m| m.entry_id).collect();
    assert_eq!(
        ids,
        ["a000000d", "a0000006", "a0000007", "a0000008", "a0000009", "a000000e"]
    );
    // a000000e's content was replaced; a000000f was dropped but still sets the model.
    assert_eq!(ctx.messages[5].message.text(), "Add a test (edited).");
    assert_eq!(ctx.model.as_ref().unwrap().model_id, "gpt-4.1");
    let llm = ctx.llm_messages();
    assert_eq!(llm.len(), 6);
    assert!(
        matches!(&*llm[2], Message::User(u) if u.content.as_text().starts_with("Ran `cargo test`"))
    );

    // Appending continues the file; pi's bytes before it are untouched.
    let before = std::fs::read_to_string(&p).unwrap();
    s.append_message(Message::user("more")).unwrap();
    let after = std::fs::read_to_string(&p).unwrap();
    assert!(after.starts_with(&before));
    assert_eq!(after.lines().count(), before.lines().count() + 1);
}

#[test]
fn damaged_fixture_loads_with_warnings_and_appends_on_a_fresh_line() {
    let tmp = tempfile::tempdir().unwrap();
    let p = copy_fixture("v3-damaged.jsonl", tmp.path());
    let (mut s, warnings) = Session::open(&p, "/x").unwrap();
    let kinds: Vec<WarningKind> = warnings.iter().map(|w| w.kind).collect();
    assert_eq!(
        kinds,
        [WarningKind::Malformed, WarningKind::TruncatedLastLine]
    );
    assert_eq!(warnings[0].line, 4);
    assert_eq!(s.entries().len(), 4);
    let unknown = s.entry("b0000004").unwrap();
    assert!(matches!(&unknown.kind, EntryKind::Unknown(u) if u.type_name == "mystery"));
    assert_eq!(s.label("b0000001"), Some("first"));
    // The unknown entry is on the path but adds nothing to context.
    assert_eq!(s.context().messages.len(), 2);

    let id = s.append_message(Message::user("after the crash")).unwrap();
    let (again, warnings) = Session::open(&p, "/x").unwrap();
    // The cut-off fragment is now an ordinary malformed line; the new entry survives.
    assert_eq!(warnings.len(), 2);
    assert!(warnings.iter().all(|w| w.kind == WarningKind::Malformed));
    assert_eq!(again.leaf_id(), Some(id.as_str()));
}

#[test]
fn v1_fixture_is_migrated_and_rewritten_as_v3() {
    let tmp = tempfile::tempdir().unwrap();
    let p = copy_fixture("v1-linear.jsonl", tmp.path());
    let (s, warnings) = Session::open(&p, "/x").unwrap();
    let kinds: Vec<WarningKind> = warnings.iter().map(|w| w.kind).collect();
    assert_eq!(kinds, [WarningKind::Migrated]);
    let backup = tmp.path().join("v1-linear.jsonl.bak");
    assert!(warnings[0].message.contains(&backup.display().to_string()));
    assert_eq!(
        std::fs::read(&backup).unwrap(),
        std::fs::read(fixture("v1-linear.jsonl")).unwrap()
    );
    assert_eq!(s.header().version, 3);
    assert_eq!(s.entries().len(), 6);
    // firstKeptEntryIndex 3 (the header is 0) is the third message, "second".
    let EntryKind::Compaction(c) = &s.entries()[4].kind else {
        panic!()
    };
    assert_eq!(
        c.first_kept_entry_id.as_deref(),
        Some(s.entries()[2].id.as_str())
    );
    let texts: Vec<String> = s
        .context()
        .messages
        .iter()
        .map(|m| m.message.text())
        .collect();
    assert_eq!(texts[1..], ["second", "two", "third"]);
    // Rewritten: loads as v3 with the same ids.
    let loaded = load_file(&p).unwrap().unwrap();
    assert_eq!(loaded.migrated_from, None);
    assert_eq!(loaded.entries, s.entries());
    assert!(std::fs::read_to_string(&p)
        .unwrap()
        .starts_with(r#"{"type":"session","version":3,"id":"v1-session""#));
}

#[test]
fn v2_fixture_renames_hook_messages() {
    let tmp = tempfile::tempdir().unwrap();
    let p = copy_fixture("v2-tree.jsonl", tmp.path());
    let (s, _) = Session::open(&p, "/x").unwrap();
    assert_eq!(
        s.entry("c0000002").unwrap().message().unwrap().role(),
        "custom"
    );
    let llm = s.context().llm_messages();
    // Kept as the hook's message; the model receives it as a user message.
    assert!(matches!(&*llm[1], Message::Custom(c) if c.content.as_text() == "Injected by a hook"));
    assert_eq!(
        llm[1].user_content().map(|c| c.as_text()).as_deref(),
        Some("Injected by a hook")
    );
    assert!(std::fs::read_to_string(&p)
        .unwrap()
        .contains(r#""role":"custom""#));
}

#[test]
fn a_non_session_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("notes.jsonl");
    std::fs::write(&p, "{\"a\":1}\n").unwrap();
    assert!(matches!(
        load_file(&p),
        Err(SessionError::NotASession { path, reason: NotSessionReason::NotAHeader(_) }) if path == p
    ));
}

/// Peak resident set size of this process in KiB (Linux; 0 elsewhere).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Generates a session file of about `target_bytes` (user / assistant-with-tool-call /
/// tool-result turns with ~2 KB of text each, as a coding session looks) without holding it
/// in memory.
pub(crate) fn generate_session(path: &Path, target_bytes: u64) -> std::io::Result<usize> {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        w,
        r#"{{"type":"session","version":3,"id":"bench","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/bench"}}"#
    )?;
    let filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit ".repeat(36);
    let (mut written, mut n, mut parent) = (0u64, 0usize, String::from("null"));
    while written < target_bytes {
        let id = format!("{n:08x}");
        let msg = match n % 3 {
            0 => format!(r#"{{"role":"user","content":"question {n}: {filler}","timestamp":{n}}}"#),
            1 => format!(
                r#"{{"role":"assistant","content":[{{"type":"text","text":"{filler}"}},{{"type":"toolCall","id":"c{n}","name":"read","arguments":{{"path":"src/f{n}.rs"}}}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{{"input":1000,"output":100,"cacheRead":0,"cacheWrite":0,"totalTokens":1100,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"toolUse","timestamp":{n}}}"#
            ),
            _ => format!(
                r#"{{"role":"toolResult","toolCallId":"c{}","toolName":"read","content":[{{"type":"text","text":"{filler}"}}],"isError":false,"timestamp":{n}}}"#,
                n - 1
            ),
        };
        let line = format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:00.000Z","message":{msg}}}"#
        );
        writeln!(w, "{line}")?;
        written += line.len() as u64 + 1;
        parent = format!("\"{id}\"");
        n += 1;
    }
    w.flush()?;
    Ok(n)
}

#[test]
#[ignore = "benchmark: generates a 100 MB file; run in release with --ignored --nocapture"]
fn bench_load_100mb() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("big.jsonl");
    let n = generate_session(&p, 100 * 1024 * 1024).unwrap();
    let size = std::fs::metadata(&p).unwrap().len();
    // Reset the high-water mark so it measures the load only (Linux ≥ 4.0).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let base = peak_rss_kib();
    let t = std::time::Instant::now();
    let (s, warnings) = Session::open(&p, "/bench").unwrap();
    let load = t.elapsed();
    let after_load = peak_rss_kib();
    let t = std::time::Instant::now();
    let ctx = s.context();
    let llm = ctx.llm_messages();
    let ctx_time = t.elapsed();
    let after_ctx = peak_rss_kib();
    assert!(warnings.is_empty());
    assert_eq!(s.entries().len(), n);
    assert_eq!(llm.len(), n);
    term_println!(
        "file {:.1} MB, {n} entries: load {:.2?}, peak RSS +{:.1} MB (base {:.1} MB); \
         context+llm conversion {:.2?}, peak RSS then +{:.1} MB",
        size as f64 / 1e6,
        load,
        (after_load.saturating_sub(base)) as f64 / 1024.0,
        base as f64 / 1024.0,
        ctx_time,
        (after_ctx.saturating_sub(base)) as f64 / 1024.0,
    );
}

/// The typed messages of the context at the leaf that the session's entries hold (not those
/// made for the context: summaries, edited messages).
fn stored_typed(s: &Session) -> Vec<std::sync::Arc<Message>> {
    s.context()
        .messages
        .iter()
        .filter_map(|m| match &m.message {
            std::borrow::Cow::Borrowed(AgentMessage::Typed(t)) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_resumed_context_shares_the_entries_messages_instead_of_copying_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_fixture("v3-every-type.jsonl", dir.path());
    let (mut s, _) = Session::open(&p, "/x").unwrap();
    for leaf in [
        s.leaf_id().map(str::to_string),
        Some("a0000012".to_string()),
    ] {
        s.set_leaf(leaf.as_deref()).unwrap();
        let stored = stored_typed(&s);
        assert!(
            !stored.is_empty(),
            "the context at {leaf:?} has typed messages"
        );
        let llm = s.context().llm_messages();
        for m in &stored {
            assert!(
                llm.iter().any(|l| std::sync::Arc::ptr_eq(l, m)),
                "{m:?} was copied into the model's messages"
            );
        }
    }
    // Appending a shared message stores that allocation, not a copy.
    let m = std::sync::Arc::new(Message::user("shared"));
    let id = s.append_message(m.clone()).unwrap();
    let entry = s.entries().iter().find(|e| e.id == id).unwrap();
    assert!(
        matches!(entry.message(), Some(AgentMessage::Typed(t)) if std::sync::Arc::ptr_eq(t, &m))
    );
}
