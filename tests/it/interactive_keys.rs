//! pi 1.6's keys and start-up/exit feedback in the interactive mode, through the real binary
//! in a pseudo-terminal (issue 27, §3): Ctrl+O expanding a truncated command to its full
//! output, Ctrl+G's external editor, Ctrl+Z and `fg` in a job-control shell, Ctrl+C and Esc
//! as 1.6 has them, the start-up header, the footer's git branch, tools' times, the line that
//! says how to resume, and `-e ext.ts`.

use std::time::Duration;

use serde_json::json;

use crate::common::pty::{PtyPi, PLACEHOLDER};
use crate::common::{path_str, wait_until, TestAgent};

const EXIT: Duration = crate::common::pty::EXIT_TIMEOUT;

fn settled(pi: &PtyPi) {
    pi.wait_screen("the run settled", |s| {
        !s.iter().any(|r| r.contains("Working…"))
    });
}

fn executable(agent: &TestAgent, name: &str, script: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let p = agent.tmp.join(name);
    std::fs::write(&p, script).expect("write the script");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path_str(&p)
}

#[test]
fn ctrl_o_shows_a_truncated_commands_full_output_and_collapses_it_again() {
    let agent = TestAgent::new();
    let steps = json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": "seq 1 3000"}}]},
        "counted"
    ]);
    let mut pi = agent.pty_faux(steps, 100, 30);
    pi.type_text("count");
    pi.enter();
    pi.wait_row("counted");
    settled(&pi);
    // The count is of the real output (3000 lines), not of the 2000 the model was sent; the
    // command stands apart from its output, and the notice and the time come after it.
    pi.wait_row("  ... (2994 earlier lines, ctrl+o to expand)");
    let all = pi.transcript();
    let at = all
        .iter()
        .position(|r| r == "✓ $ seq 1 3000")
        .expect("the call");
    assert_eq!(all[at + 1], "", "{all:#?}");
    // The notice may wrap at this width: its rows read as one.
    let joined = all.iter().map(|r| r.trim()).collect::<Vec<_>>().join(" ");
    assert!(joined.contains("[Full output: "), "{all:#?}");
    assert!(
        joined.contains("Truncated: showing 2000 of 3000 lines]"),
        "{all:#?}"
    );
    assert!(all
        .iter()
        .any(|r| r.starts_with("  Took ") && r.ends_with('s')));
    assert!(
        !all.iter().any(|r| r == "  1"),
        "line 1 is not in the collapsed view"
    );
    pi.ctrl('o');
    pi.wait_text("Tool output: expanded");
    // Line 1 exists only in the full output file: the model's text starts at line 1001.
    pi.wait_row("  1");
    pi.wait_row("  1000");
    pi.ctrl('o');
    pi.wait_text("Tool output: collapsed");
    pi.wait_screen("the collapsed view again", |s| {
        s.iter()
            .any(|r| r == "  ... (2994 earlier lines, ctrl+o to expand)")
    });
    pi.quit();
}

#[test]
fn ctrl_g_edits_the_message_in_the_external_editor_and_loads_it_back() {
    let mut agent = TestAgent::new();
    let editor = executable(
        &agent,
        "editor.sh",
        "#!/bin/sh\n{ cat \"$1\"; printf ' plus edits\\n'; } > \"$1.new\" && mv \"$1.new\" \"$1\"\n",
    );
    agent.env("VISUAL", &editor);
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 30);
    pi.type_text("my draft");
    pi.wait_editor("my draft");
    pi.ctrl('g');
    pi.wait_editor("my draft plus edits");
    // The whole screen is pi's again: footer and editor redrawn.
    pi.wait_text("faux/faux-1");
    pi.ctrl('e');
    pi.ctrl('u');
    pi.wait_editor(PLACEHOLDER);
    pi.quit();
}

#[test]
fn a_failing_external_editor_leaves_the_message_as_it_was() {
    let mut agent = TestAgent::new();
    let editor = executable(&agent, "bad-editor.sh", "#!/bin/sh\nexit 3\n");
    agent.env("VISUAL", &editor);
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 30);
    pi.type_text("keep me");
    pi.wait_editor("keep me");
    pi.ctrl('g');
    pi.wait_text("External editor exited with code 3; prompt unchanged");
    pi.wait_editor("keep me");
    pi.ctrl('e');
    pi.ctrl('u');
    pi.wait_editor(PLACEHOLDER);
    pi.quit();
}

#[test]
fn ctrl_z_suspends_to_the_shell_and_fg_redraws_the_screen() {
    let agent = TestAgent::new();
    let mut sh = agent.pty_shell(100, 30);
    let args = agent.faux_args(json!(["ok"]));
    sh.type_text(&agent.pi_command_line(&args));
    sh.enter();
    sh.wait_text("faux/faux-1");
    sh.type_text("unsent draft");
    sh.wait_editor("unsent draft");
    sh.ctrl('z');
    // The shell has the terminal: its job report, and pi's editor is gone from the screen.
    let screen = sh.wait_text("Stopped");
    assert!(
        !screen.iter().any(|r| r.contains("faux/faux-1")),
        "{screen:#?}"
    );
    sh.type_text("fg");
    sh.enter();
    sh.wait_editor("unsent draft");
    sh.wait_text("faux/faux-1");
    // pi works as before: Ctrl+D quits it and the shell prompt is back.
    sh.ctrl('u');
    sh.wait_editor(PLACEHOLDER);
    sh.ctrl('d');
    sh.wait_screen("the shell prompt", |s| {
        s.iter()
            .rev()
            .find(|r| !r.is_empty())
            .is_some_and(|r| r == "$")
    });
}

#[test]
fn ctrl_c_clears_the_editor_while_the_agent_works_and_esc_aborts_bringing_the_queue_back() {
    let agent = TestAgent::new();
    let marker = agent.tmp.join("started");
    let cmd = format!("touch {} && sleep 30", path_str(&marker));
    let steps = json!([{"toolCalls": [{"name": "bash", "arguments": {"command": cmd}}]}, "never"]);
    let mut pi = agent.pty_faux(steps, 100, 30);
    pi.type_text("go");
    pi.enter();
    assert!(wait_until(Duration::from_secs(20), || marker.exists()));
    pi.type_text("steer later");
    pi.enter();
    pi.wait_text("steer: steer later");
    pi.type_text("scratch");
    pi.wait_editor("scratch");
    // Ctrl+C clears the editor and leaves the run alone (pi 1.6).
    pi.ctrl('c');
    pi.wait_editor(PLACEHOLDER);
    assert!(pi.screen().iter().any(|r| r.contains("Working…")));
    // Esc aborts, and the queued message comes back into the editor.
    pi.esc();
    pi.wait_transcript("Aborted");
    settled(&pi);
    pi.wait_editor("steer later");
    pi.ctrl('e');
    pi.ctrl('u');
    pi.wait_editor(PLACEHOLDER);
    pi.quit();
}

#[test]
fn esc_twice_on_an_empty_editor_opens_the_session_tree() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["first answer"]), 100, 30);
    pi.type_text("hello");
    pi.enter();
    pi.wait_row("first answer");
    settled(&pi);
    pi.esc();
    // Two reads, as two key presses are: ESC ESC in one read is one Esc (Alt+Esc).
    std::thread::sleep(Duration::from_millis(50));
    pi.esc();
    pi.wait_text("Session Tree");
    pi.esc();
    pi.wait_editor(PLACEHOLDER);
    pi.quit();
}

#[test]
fn start_up_shows_the_header_with_what_loaded_and_the_footer_the_git_branch() {
    let agent = TestAgent::new();
    agent.write_file("AGENTS.md", "Be brief.\n");
    agent.write_file(".git/HEAD", "ref: refs/heads/feature-x\n");
    let tpl = agent.agent_dir.join("prompts");
    std::fs::create_dir_all(&tpl).expect("prompts dir");
    std::fs::write(tpl.join("review.md"), "Review this.\n").expect("template");
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 30);
    let screen = pi.wait_text("[Context]");
    assert!(screen.iter().any(|r| r.starts_with("pi v")), "{screen:#?}");
    assert!(screen
        .iter()
        .any(|r| r
            == "escape interrupt · ctrl+c/ctrl+d clear/exit · / commands · ! bash · ctrl+o more"));
    let at = |rows: &[String], name: &str| rows.iter().position(|r| r == name);
    let c = at(&screen, "[Context]").expect("context");
    assert_eq!(screen[c + 1], "  AGENTS.md");
    let p = at(&screen, "[Prompts]").expect("prompts");
    assert_eq!(screen[p + 1], "  /review");
    assert!(
        screen.iter().any(|r| r.ends_with("project (feature-x)")),
        "{screen:#?}"
    );
    // Ctrl+O shows every key and the files' whole paths.
    pi.ctrl('o');
    let all = pi.wait_transcript("ctrl+z to suspend");
    assert!(all.iter().any(|r| r == "ctrl+g for external editor"));
    assert!(all
        .iter()
        .any(|r| r.ends_with("/AGENTS.md") && r.len() > "  AGENTS.md".len()));
    pi.quit();
}

#[test]
fn quitting_says_how_to_resume_the_session() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["the answer"]), 100, 30);
    pi.type_text("hi");
    pi.enter();
    pi.wait_row("the answer");
    settled(&pi);
    pi.ctrl('d');
    assert_eq!(pi.wait_exit(EXIT), 0, "stderr: {}", pi.stderr());
    let all = pi.transcript();
    let at = all
        .iter()
        .position(|r| r == "To resume this session:")
        .unwrap_or_else(|| panic!("{all:#?}"));
    let command = &all[at + 1];
    let id = command.strip_prefix("pi --session ").expect("the command");
    let sessions = crate::sessions::session_files(&agent);
    assert!(
        sessions.iter().any(|f| path_str(f).contains(id)),
        "{id} among {sessions:?}"
    );
}
