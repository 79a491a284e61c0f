//! The interactive mode through the real binary in a pseudo-terminal, asserting what a person
//! sees on a parsed screen (80×24 and 120×40): the editor and footer at start, a prompt that
//! runs tools and streams the answer into the scrollback, `!` commands, slash commands, a
//! hook's dialog answered and timed out, abort, resize, and quitting without leaving a process.

use std::time::Duration;

use serde_json::json;

use crate::common::hooks::{assert_no_processes_left, fixture, pidfile, scripted, use_hooks};
use crate::common::pty::PLACEHOLDER;
use crate::common::{path_str, wait_until, TestAgent};

const EXIT: Duration = crate::common::pty::EXIT_TIMEOUT;

#[test]
fn start_shows_the_editor_and_the_footer_at_80x24() {
    let agent = TestAgent::new();
    let pi = agent.pty_faux(json!(["ok"]), 80, 24);
    let screen = pi.screen();
    let footer = screen
        .iter()
        .rposition(|r| r.contains("faux/faux-1"))
        .unwrap_or(0);
    assert!(screen[footer - 1].ends_with("project"), "{screen:#?}");
    assert!(screen[footer].starts_with("↑0 ↓0"), "{screen:#?}");
    assert_eq!(
        crate::common::pty::editor_row(&screen),
        Some(PLACEHOLDER),
        "{screen:#?}"
    );
    // The cursor sits in the editor, at its start.
    let (row, col) = pi.cursor();
    assert!(
        screen[row as usize] == PLACEHOLDER && col == 0,
        "cursor at {row},{col}"
    );
    pi.quit();
}

#[test]
fn a_typed_prompt_runs_a_tool_and_its_answer_lands_in_the_scrollback_at_120x40() {
    let agent = TestAgent::new();
    let steps = json!([
        {"text": "Let me look.", "toolCalls": [{"name": "bash", "arguments": {"command": "echo hello-from-tool"}}]},
        {"text": "All done: the tool said hello."}
    ]);
    let mut pi = agent.pty_faux(steps, 120, 40);
    pi.type_text("say hello");
    pi.wait_editor("say hello");
    pi.enter();
    pi.wait_transcript("All done: the tool said hello.");
    let all = pi.transcript();
    let pos = |needle: &str| {
        all.iter()
            .position(|r| r.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} not in {all:#?}"))
    };
    // In order: the person's message, the model's text, the tool call with its output, the answer.
    let (user, text, call, out, answer) = (
        pos("› say hello"),
        pos("Let me look."),
        pos("✓ $ echo hello-from-tool"),
        pos("  hello-from-tool"),
        pos("All done"),
    );
    assert!(
        user < text && text < call && call < out && out < answer,
        "{all:#?}"
    );
    // The footer counts the tokens the run used.
    pi.wait_screen("token counts in the footer", |s| {
        s.iter()
            .any(|r| r.starts_with('↑') && !r.starts_with("↑0 "))
    });
    pi.quit();
}

#[test]
fn ctrl_c_twice_on_an_empty_editor_quits_and_leaves_no_process() {
    let agent = TestAgent::new();
    use_hooks(&agent, vec![scripted(&agent, "watcher", json!({}))]);
    let mut pi = agent.pty_faux(json!(["ok"]), 80, 24);
    // pi 1.6: a second Ctrl+C within half a second quits (the two are sent back to back).
    pi.send(b"\x03\x03");
    assert_eq!(pi.wait_exit(EXIT), 0, "stderr: {}", pi.stderr());
    assert!(wait_until(Duration::from_secs(10), || pi.gone()));
    assert_no_processes_left(&pidfile(&agent, "watcher"));
}

#[test]
fn ctrl_c_with_text_in_the_editor_clears_it_instead_of_quitting() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["ok"]), 80, 24);
    pi.type_text("draft");
    pi.wait_editor("draft");
    pi.ctrl('c');
    pi.wait_editor(PLACEHOLDER);
    assert!(!pi.gone());
    pi.quit();
}

#[test]
fn bang_runs_a_shell_command_and_shows_its_output() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 30);
    pi.type_text("!echo from-the-shell; exit 3");
    pi.enter();
    pi.wait_row("  from-the-shell");
    pi.wait_row("  exit 3");
    let all = pi.transcript();
    assert!(
        all.iter().any(|r| r == "! echo from-the-shell; exit 3"),
        "{all:#?}"
    );
    pi.type_text("!!echo private");
    pi.enter();
    pi.wait_row("  private");
    assert!(pi.transcript().iter().any(|r| r == "!! echo private"));
    pi.quit();
}

#[test]
fn esc_aborts_a_running_tool() {
    let agent = TestAgent::new();
    let marker = agent.tmp.join("sleep-started");
    let cmd = format!("touch {} && sleep 30", path_str(&marker));
    let steps = json!([{"toolCalls": [{"name": "bash", "arguments": {"command": cmd}}]}, "never"]);
    let mut pi = agent.pty_faux(steps, 100, 30);
    pi.type_text("go");
    pi.enter();
    pi.wait_text("Working…");
    assert!(wait_until(Duration::from_secs(10), || marker.exists()));
    pi.esc();
    pi.wait_transcript("Aborted");
    pi.wait_screen("the spinner gone", |s| {
        !s.iter().any(|r| r.contains("Working…"))
    });
    pi.quit();
}

/// The `ui-dialogs` test hook in the user settings; returns its record file.
fn ui_hook(agent: &TestAgent) -> std::path::PathBuf {
    let record = agent.tmp.join("ui-dialogs.jsonl");
    agent.write_settings(&json!({"hooks": [{
        "command": format!("python3 {}", fixture("ui_dialogs.py")),
        "name": "ui-dialogs",
        "config": {"record": path_str(&record)},
        "timeout_ms": 60000,
        "start_timeout_ms": 10000,
    }]}));
    record
}

fn recorded_answer(record: &std::path::Path, method: &str) -> Option<serde_json::Value> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|r| r["method"] == method)
        .map(|r| r["answer"].clone())
}

#[test]
fn a_hooks_confirm_is_answered_at_the_terminal() {
    let agent = TestAgent::new();
    let record = ui_hook(&agent);
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 30);
    pi.type_text(r#"/ask ui.confirm {"title": "Deploy now?", "message": "to production"}"#);
    pi.enter();
    let screen = pi.wait_text("Deploy now?  (ui-dialogs)");
    assert!(
        screen.iter().any(|r| r.contains("to production")),
        "{screen:#?}"
    );
    assert!(
        screen.iter().any(|r| r.contains("(ui-dialogs)")),
        "{screen:#?}"
    );
    pi.type_text("y");
    assert!(wait_until(Duration::from_secs(10), || recorded_answer(
        &record,
        "ui.confirm"
    )
    .is_some()));
    assert_eq!(
        recorded_answer(&record, "ui.confirm"),
        Some(json!({"confirmed": true}))
    );
    pi.wait_screen("the dialog gone", |s| {
        !s.iter().any(|r| r.contains("Deploy now?"))
    });
    pi.quit();
}

#[test]
fn a_hooks_confirm_times_out_with_a_countdown_and_counts_as_no() {
    let agent = TestAgent::new();
    let record = ui_hook(&agent);
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 30);
    pi.type_text(r#"/ask ui.confirm {"title": "Proceed?", "message": "m", "timeout_ms": 2500}"#);
    pi.enter();
    let screen = pi.wait_text("Proceed?  (ui-dialogs)");
    assert!(
        screen
            .iter()
            .any(|r| r.contains("Proceed?") && (r.ends_with("3s") || r.ends_with("2s"))),
        "no countdown: {screen:#?}"
    );
    assert!(wait_until(Duration::from_secs(15), || recorded_answer(
        &record,
        "ui.confirm"
    )
    .is_some()));
    assert_eq!(
        recorded_answer(&record, "ui.confirm"),
        Some(json!({"confirmed": false}))
    );
    pi.wait_screen("the dialog gone", |s| {
        !s.iter().any(|r| r.contains("Proceed?"))
    });
    pi.quit();
}

#[test]
fn hotkeys_and_session_commands_show_their_tables() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["ok"]), 120, 40);
    pi.type_text("/hotkeys");
    pi.enter();
    pi.wait_transcript("Keyboard Shortcuts");
    for row in [
        "Toggle tool output expansion",
        "Edit message in external editor",
        "Suspend to background",
        "Clear editor (first) / exit (second)",
    ] {
        pi.wait_transcript(row);
    }
    pi.type_text("/session");
    pi.enter();
    let all = pi.wait_transcript("Messages 0");
    let _ = all;
    pi.quit();
}

#[test]
fn resize_mid_run_reflows_without_leaving_old_rows_behind() {
    let agent = TestAgent::new();
    let marker = agent.tmp.join("started");
    let cmd = format!("touch {} && sleep 30", path_str(&marker));
    let long = "word ".repeat(40);
    let steps = json!([
        {"text": long.trim(), "toolCalls": [{"name": "bash", "arguments": {"command": cmd}}]},
        "never"
    ]);
    let mut pi = agent.pty_faux(steps, 120, 40);
    pi.type_text("go");
    pi.enter();
    pi.wait_text("Working…");
    assert!(wait_until(Duration::from_secs(10), || marker.exists()));
    pi.resize(80, 24);
    let screen = pi.wait_screen("the footer redrawn at 80 columns", |s| {
        s.iter().filter(|r| r.contains("faux/faux-1")).count() == 1
    });
    // Exactly one editor, one spinner and one footer: no copies of the old frame.
    assert_eq!(
        screen.iter().filter(|r| r.contains("Working…")).count(),
        1,
        "{screen:#?}"
    );
    let all = pi.transcript();
    assert_eq!(
        all.iter().filter(|r| r.contains("faux/faux-1")).count(),
        1,
        "{all:#?}"
    );
    // The text was reflowed to the new width.
    assert!(all
        .iter()
        .all(|r| unicode_width::UnicodeWidthStr::width(r.as_str()) <= 80));
    assert!(all.iter().any(|r| r.starts_with("word word")), "{all:#?}");
    pi.esc();
    pi.wait_transcript("Aborted");
    pi.quit();
}

#[test]
fn enter_steers_and_alt_enter_follows_up_while_a_tool_runs() {
    let agent = TestAgent::new();
    let go = agent.tmp.join("go");
    let cmd = format!(
        "while [ ! -f {0} ]; do sleep 0.02; done; echo released",
        path_str(&go)
    );
    let steps = json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": cmd}}]},
        "answer after the steer",
        "answer to the follow-up"
    ]);
    let mut pi = agent.pty_faux(steps, 120, 40);
    pi.type_text("start");
    pi.enter();
    pi.wait_text("Working…");
    pi.type_text("steer this way");
    pi.enter();
    pi.wait_text("↳ steer: steer this way");
    pi.type_text("and then this");
    pi.alt_enter();
    let screen = pi.wait_text("↳ follow-up: and then this");
    assert!(screen.iter().any(|r| r.contains("Alt+Up")), "{screen:#?}");
    std::fs::write(&go, "").expect("release the tool");
    pi.wait_transcript("answer to the follow-up");
    let all = pi.transcript();
    let pos = |needle: &str| {
        all.iter()
            .position(|r| r == needle)
            .unwrap_or_else(|| panic!("{needle:?} missing: {all:#?}"))
    };
    // The steer reaches the model after the tool, the follow-up after that answer.
    let released = pos("  released");
    let steer = pos("› steer this way");
    let first = pos("answer after the steer");
    let follow = pos("› and then this");
    let second = pos("answer to the follow-up");
    assert!(
        released < steer && steer < first && first < follow && follow < second,
        "{all:#?}"
    );
    pi.wait_screen("the queue emptied", |s| !s.iter().any(|r| r.contains('↳')));
    pi.quit();
}

#[test]
fn alt_up_pulls_queued_messages_back_into_the_editor() {
    let agent = TestAgent::new();
    let go = agent.tmp.join("go");
    let cmd = format!("while [ ! -f {0} ]; do sleep 0.02; done", path_str(&go));
    let steps = json!([{"toolCalls": [{"name": "bash", "arguments": {"command": cmd}}]}, "done"]);
    let mut pi = agent.pty_faux(steps, 100, 30);
    pi.type_text("start");
    pi.enter();
    pi.wait_text("Working…");
    pi.type_text("second thoughts");
    pi.enter();
    pi.wait_text("↳ steer: second thoughts");
    // Alt+Up as xterm sends it.
    pi.send(b"\x1b[1;3A");
    pi.wait_editor("second thoughts");
    pi.wait_screen("the queue emptied", |s| !s.iter().any(|r| r.contains('↳')));
    // Ctrl+U empties the line (Ctrl+C would abort the run).
    pi.ctrl('u');
    pi.wait_editor(PLACEHOLDER);
    std::fs::write(&go, "").expect("release the tool");
    pi.wait_row("done");
    // Taken back, so never sent: no user message with that text in the transcript.
    let all = pi.transcript();
    assert!(!all.iter().any(|r| r == "› second thoughts"), "{all:#?}");
    pi.quit();
}

/// A project whose `.pi/settings.json` starts a hook (recording its pid when it starts).
fn project_with_a_hook(agent: &TestAgent) -> std::path::PathBuf {
    let pids = agent.tmp.join("project-hook.pids");
    let entry = json!({
        "command": format!("python3 {}", fixture("scripted.py")),
        "name": "project-hook",
        "config": {"pidfile": path_str(&pids)},
    });
    agent.write_file(
        ".pi/settings.json",
        serde_json::to_vec(&json!({"hooks": [entry]})).expect("json"),
    );
    pids
}

#[test]
fn the_trust_prompt_lists_the_projects_hooks_and_trusting_once_loads_them() {
    let agent = TestAgent::new();
    let pids = project_with_a_hook(&agent);
    let mut pi = agent.pty(&agent.faux_args(json!(["ok"])), 120, 40);
    let screen = pi.wait_text("Trust this project?");
    assert!(
        screen
            .iter()
            .any(|r| r.contains("hook") && r.contains("scripted.py")),
        "{screen:#?}"
    );
    assert!(
        !pids.exists(),
        "the project's hook started before the answer"
    );
    pi.enter();
    pi.wait_text("faux/faux-1");
    assert!(
        wait_until(Duration::from_secs(10), || pids.exists()),
        "the trusted project's hook never started"
    );
    assert!(
        !agent.agent_dir.join("trust.json").exists(),
        "a one-time answer was remembered"
    );
    // The question erased itself.
    assert!(!pi
        .transcript()
        .iter()
        .any(|r| r.contains("Trust this project?")));
    pi.quit();
}

#[test]
fn not_now_at_the_trust_prompt_loads_nothing_and_always_is_remembered() {
    let agent = TestAgent::new();
    let pids = project_with_a_hook(&agent);
    let mut pi = agent.pty(&agent.faux_args(json!(["ok"])), 120, 40);
    pi.wait_text("Trust this project?");
    pi.esc();
    pi.wait_text("faux/faux-1");
    pi.quit();
    assert!(!pids.exists(), "an untrusted project's hook started");

    let mut pi = agent.pty(&agent.faux_args(json!(["ok"])), 120, 40);
    pi.wait_text("Trust this project?");
    pi.send(b"\x1b[B");
    pi.enter();
    pi.wait_text("faux/faux-1");
    assert!(wait_until(Duration::from_secs(10), || pids.exists()));
    let trust = std::fs::read_to_string(agent.agent_dir.join("trust.json")).expect("trust.json");
    assert!(trust.contains("true"), "{trust}");
    pi.quit();
    // Remembered: no question the next time.
    let mut pi = agent.pty(&agent.faux_args(json!(["ok"])), 120, 40);
    let screen = pi.wait_text("faux/faux-1");
    assert!(
        !screen.iter().any(|r| r.contains("Trust this project?")),
        "{screen:#?}"
    );
    pi.ctrl('d');
    assert_eq!(pi.wait_exit(EXIT), 0);
}
