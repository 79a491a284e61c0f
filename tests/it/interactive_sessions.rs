//! What the terminal shows after each session operation, as pi 1.6 shows it (its texts,
//! checked side by side in tmux): `/tree` clears the screen and redraws the branch it moved
//! to, and says so; `/fork`, `/resume`, `/name`, `/new` each say one line; `/fork` lists
//! every user message and writes no file before the fork has a message; `/tree` offers a
//! summary with custom instructions, which the summary request carries.

use serde_json::json;

use crate::common::pty::PtyPi;
use crate::common::{MockModel, TestAgent, Turn};
use crate::sessions::session_files;

fn command(pi: &mut PtyPi, line: &str) {
    pi.type_text(line);
    pi.enter();
}

/// Send `text` and wait for the model's `answer` row and the run's end.
fn converse(pi: &mut PtyPi, text: &str, answer: &str) {
    command(pi, text);
    pi.wait_row(answer);
    pi.wait_screen("the run settled", |s| {
        !s.iter().any(|r| r.contains("Working…"))
    });
}

fn jsonl_files(agent: &TestAgent) -> usize {
    session_files(agent)
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .count()
}

#[test]
fn tree_navigation_clears_the_screen_and_shows_only_the_new_branch() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["answer one", "answer two"]), 100, 30);
    converse(&mut pi, "first question", "answer one");
    converse(&mut pi, "second question", "answer two");
    command(&mut pi, "/tree");
    let screen = pi.wait_text("Session Tree");
    assert!(
        screen.iter().any(|r| r == "› • assistant: answer two"),
        "{screen:#?}"
    );
    // The system message declaring the prompt opens the branch, as in pi 1.6.
    assert!(screen.iter().any(|r| r == "  • [system]"), "{screen:#?}");
    assert!(screen.iter().any(|r| r == "  (5/5)"), "{screen:#?}");
    // Up to `answer one`: the branch there holds only the first exchange.
    pi.send(b"\x1b[A\x1b[A");
    pi.wait_text("› • assistant: answer one");
    pi.enter();
    let screen = pi.wait_text("Summarize branch?");
    assert!(screen
        .iter()
        .any(|r| r.contains("Summarize with custom prompt")));
    pi.enter();
    pi.wait_row("Navigated to selected point");
    // Scrollback and screen alike: the first exchange, not the one left behind.
    let all = pi.transcript();
    assert!(all.iter().any(|r| r == "answer one"), "{all:#?}");
    assert!(
        !all.iter()
            .any(|r| r.contains("answer two") || r.contains("second question")),
        "{all:#?}"
    );
    pi.quit();
}

#[test]
fn fork_resume_name_and_new_each_say_one_line_as_pi() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["one", "two", "three"]), 100, 30);
    converse(&mut pi, "question one", "one");
    command(&mut pi, "/name");
    pi.wait_row("Usage: /name <name>");
    command(&mut pi, "/name  my work ");
    pi.wait_row("Session name set: my work");
    command(&mut pi, "/name");
    pi.wait_row("Session name: my work");
    command(&mut pi, "/new");
    pi.wait_row("✓ New session started");
    converse(&mut pi, "question two", "two");
    command(&mut pi, "/resume");
    pi.wait_text("Resume session");
    pi.type_text("my work");
    pi.enter();
    pi.wait_row("Resumed session");
    let all = pi.transcript();
    assert!(!all.iter().any(|r| r.contains("question two")), "{all:#?}");
    command(&mut pi, "/fork");
    let screen = pi.wait_text("Fork from Message");
    assert!(
        screen.iter().any(|r| r.contains("1. question one")),
        "{screen:#?}"
    );
    pi.enter();
    pi.wait_row("Forked to new session");
    pi.wait_editor("question one");
    pi.ctrl('u');
    pi.quit();
}

#[test]
fn fork_lists_user_messages_of_every_branch() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["one", "two", "three"]), 100, 30);
    converse(&mut pi, "question one", "one");
    converse(&mut pi, "question two", "two");
    // Back to `one` and a different second question: `question two` is on another branch.
    command(&mut pi, "/tree");
    pi.wait_text("Session Tree");
    pi.send(b"\x1b[A\x1b[A");
    pi.wait_text("› • assistant: one");
    pi.enter();
    pi.wait_text("Summarize branch?");
    pi.enter();
    pi.wait_row("Navigated to selected point");
    converse(&mut pi, "question three", "three");
    command(&mut pi, "/fork");
    let screen = pi.wait_text("Fork from Message");
    for row in ["1. question one", "2. question two", "› 3. question three"] {
        assert!(screen.iter().any(|r| r.contains(row)), "{row}: {screen:#?}");
    }
    pi.esc();
    pi.wait_screen("the list closed", |s| {
        !s.iter().any(|r| r.contains("Fork from Message"))
    });
    pi.quit();
}

#[test]
fn a_fork_from_the_first_message_writes_no_file_until_it_has_a_message() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["one", "again"]), 100, 30);
    converse(&mut pi, "question one", "one");
    assert_eq!(jsonl_files(&agent), 1);
    command(&mut pi, "/fork");
    pi.wait_text("Fork from Message");
    pi.enter();
    pi.wait_row("Forked to new session");
    pi.wait_editor("question one");
    assert_eq!(jsonl_files(&agent), 1, "{:?}", session_files(&agent));
    pi.enter();
    pi.wait_row("again");
    assert!(crate::common::wait_until(
        std::time::Duration::from_secs(10),
        || jsonl_files(&agent) == 2
    ));
    pi.quit();
}

#[test]
fn tree_summary_with_a_custom_prompt_sends_the_instructions() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mock = rt.block_on(MockModel::start(vec![
        Turn::text("answer one"),
        Turn::text("answer two"),
        Turn::text("## Goal\nThe summary."),
    ]));
    let agent = TestAgent::with_mock(&mock);
    let mut pi = agent.pty(&["--model", "mock/mock-model"], 100, 30);
    pi.wait_text("mock/mock-model");
    converse(&mut pi, "first question", "answer one");
    converse(&mut pi, "second question", "answer two");
    command(&mut pi, "/tree");
    pi.wait_text("Session Tree");
    pi.send(b"\x1b[A\x1b[A");
    pi.wait_text("› • assistant: answer one");
    pi.enter();
    pi.wait_text("Summarize branch?");
    pi.send(b"\x1b[B\x1b[B");
    pi.enter();
    pi.wait_text("Custom summarization instructions");
    pi.type_text("focus on the second question");
    pi.enter();
    pi.wait_row("Navigated to selected point");
    let bodies = mock.bodies();
    let summary = bodies.last().expect("the summary request").to_string();
    assert!(
        summary.contains("focus on the second question"),
        "{summary}"
    );
    pi.quit();
}

#[test]
fn tree_shift_l_labels_an_entry_and_the_session_records_it() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["answer one"]), 100, 30);
    converse(&mut pi, "first question", "answer one");
    command(&mut pi, "/tree");
    pi.wait_text("Session Tree");
    pi.send(b"L");
    pi.wait_text("Label (empty to remove):");
    pi.type_text("milestone");
    pi.enter();
    pi.wait_text("› • [milestone] assistant: answer one");
    pi.esc();
    pi.wait_editor(crate::common::pty::PLACEHOLDER);
    pi.quit();
    let file = crate::sessions::only_session_file(&agent);
    let text = std::fs::read_to_string(&file).unwrap();
    let label = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["type"] == "label")
        .unwrap_or_else(|| panic!("a label entry in {text}"));
    assert_eq!(label["label"], "milestone");
}
