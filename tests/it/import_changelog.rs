//! `/import` and `/changelog` through the real binary in a pseudo-terminal, with pi 1.6's
//! texts (checked side by side in tmux): the question before a session is replaced, the copy
//! kept in this project's session folder under the file's own name, the conversation shown,
//! the usage, cancel and missing-file lines; and the built-in changelog under `What's New`.

use serde_json::json;

use crate::common::pty::PtyPi;
use crate::common::TestAgent;
use crate::sessions::session_files;

fn command(pi: &mut PtyPi, line: &str) {
    pi.type_text(line);
    pi.enter();
}

/// A session file made by a run of another project, copied to `dest`.
/// The exporting project is returned so its directory outlives the import: pi 1.6 moves into
/// the imported session's project, and refuses one whose directory is gone.
fn exported_session(dest: &std::path::Path) -> TestAgent {
    let other = TestAgent::new();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let out = rt.block_on(other.run_faux(json!(["the old answer"]), &["-p", "the old question"]));
    out.assert_ok();
    let files = session_files(&other);
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::copy(&files[0], dest).expect("copy the session");
    other
}

#[test]
fn slash_import_asks_then_continues_in_a_copy_of_the_session_file() {
    let agent = TestAgent::new();
    let source = agent.tmp.join("exported.jsonl");
    let _exporter = exported_session(&source);
    let before = std::fs::read(&source).unwrap();
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 30);
    command(&mut pi, "/import");
    pi.wait_row("Error: Usage: /import <path.jsonl>");
    let missing = agent.tmp.join("nope.jsonl");
    command(&mut pi, &format!("/import {}", missing.display()));
    pi.wait_text("Import session");
    pi.type_text("y");
    pi.wait_row(&format!(
        "Error: Failed to import session: File not found: {}",
        missing.display()
    ));
    command(&mut pi, &format!("/import {}", source.display()));
    let screen = pi.wait_text("Import session");
    let question = format!("Replace current session with {}?", source.display());
    assert!(screen.iter().any(|r| r == &question), "{screen:#?}");
    pi.type_text("n");
    pi.wait_row("Import cancelled");
    assert!(session_files(&agent).is_empty());
    command(&mut pi, &format!("/import {}", source.display()));
    pi.wait_text("Import session");
    pi.type_text("y");
    pi.wait_row(&format!("Session imported from: {}", source.display()));
    pi.wait_row("› the old question");
    pi.wait_row("the old answer");
    // Stored under its own name in this project's folder; the original is untouched.
    let stored = session_files(&agent);
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0].file_name().unwrap(), "exported.jsonl");
    assert!(stored[0].starts_with(agent.agent_dir.join("sessions")));
    assert_eq!(std::fs::read(&source).unwrap(), before);
    // The same file again: a second copy beside the first.
    command(&mut pi, &format!("/import {}", source.display()));
    pi.wait_text("Import session");
    pi.type_text("y");
    pi.wait_screen("the second copy", |_| session_files(&agent).len() == 2);
    pi.wait_row(&format!("Session imported from: {}", source.display()));
    let mut names: Vec<String> = session_files(&agent)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["exported-1.jsonl", "exported.jsonl"]);
    pi.quit();
}

#[test]
fn slash_changelog_shows_whats_new_with_the_newest_entry_last() {
    let agent = TestAgent::new();
    // Tall enough for the whole changelog on one screen.
    let mut pi = agent.pty_faux(json!(["ok"]), 160, 300);
    command(&mut pi, "/changelog");
    let all = pi.wait_text("## 2026-12-06");
    let first = all.iter().position(|r| r == "## 2026-11-29");
    let later = all.iter().position(|r| r == "## 2026-12-06");
    assert!(
        matches!((first, later), (Some(a), Some(b)) if a < b),
        "{all:#?}"
    );
    assert!(all.iter().any(|r| r == "### First version"), "{all:#?}");
    assert!(all.iter().any(|r| r == "What's New"), "{all:#?}");
    pi.quit();
}
