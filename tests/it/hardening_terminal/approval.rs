//! Item 3: an approval shows the exact command it asks about, in the dialog itself. A Claude
//! Code PreToolUse hook answers `ask` for a destructive command whose escape sequences
//! (erase the line, return, move up; ESC and C1 forms) would redraw the transcript above to
//! show a harmless one: the dialog shows the whole command with the sequences visible, and a
//! command taller than the window can be scrolled to its end with the answer still at hand.

use serde_json::json;

use super::*;
use crate::common::pty::PtyPi;
use crate::common::{path_str, TestAgent};

/// A PreToolUse hook for Bash that asks the user about every command.
fn asking_hook(agent: &TestAgent) -> Vec<String> {
    agent.write_file(
        ".claude/hooks/ask.sh",
        "#!/bin/sh\ncat >/dev/null\nprintf '%s' '{\"hookSpecificOutput\": {\"hookEventName\": \
         \"PreToolUse\", \"permissionDecision\": \"ask\", \"permissionDecisionReason\": \
         \"this deletes files\"}}'\n",
    );
    let settings = agent.write_file(
        ".claude/settings.json",
        serde_json::to_vec(
            &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "sh \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/ask.sh"}
            ]}]}}),
        )
        .expect("json"),
    );
    vec!["--claude-hooks".into(), path_str(&settings)]
}

/// pi asked to run `command` through the asking hook; a file `~/important` to lose.
fn ask_about(agent: &TestAgent, command: &str, cols: u16, rows: u16) -> PtyPi {
    std::fs::write(agent.home.join("important"), "keep me").expect("the file");
    let steps = json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]},
        "Finished."
    ]);
    let mut args = agent.faux_args(steps);
    args.extend(asking_hook(agent));
    let mut pi = agent.pty(&args, cols, rows);
    pi.wait_text("faux/faux-1");
    pi.type_text("tidy up");
    pi.enter();
    pi
}

fn declined(pi: &mut PtyPi, agent: &TestAgent) {
    pi.type_text("n");
    pi.wait_transcript("Finished.");
    assert!(
        agent.home.join("important").exists(),
        "the declined command ran"
    );
}

#[test]
fn a_claude_code_ask_shows_the_exact_command_whatever_its_escapes_draw() {
    let agent = TestAgent::new();
    let command = "rm -rf ~/important\x1b[2K\r\x1b[1A\u{9b}2K ls -la";
    let mut pi = ask_about(&agent, command, 120, 30);
    let screen = pi.wait_text("Allow Bash?");
    let seen = "rm -rf ~/important␛[2K␍␛[1A2K ls -la";
    assert!(
        has_row(&screen, seen),
        "the dialog does not show the command: {screen:#?}"
    );
    assert_sent(&pi, "␛[1A\u{FFFD}2K ls -la");
    // `ls -la` appears only as the tail of the real command, never as a command of its own.
    for row in screen.iter().filter(|r| r.contains("ls -la")) {
        assert!(row.contains("rm -rf ~/important"), "{row:?} in {screen:#?}");
    }
    assert_pty_inert(&pi);
    declined(&mut pi, &agent);
    pi.quit();
}

#[test]
fn a_command_taller_than_the_window_scrolls_to_its_end_and_can_still_be_answered() {
    let agent = TestAgent::new();
    let mut command: String = (1..200).map(|i| format!("echo step {i}\n")).collect();
    command.push_str("rm -rf ~/important");
    let mut pi = ask_about(&agent, &command, 100, 24);
    let screen = pi.wait_text("Allow Bash?");
    let row_is = |s: &[String], want: &str| s.iter().any(|r| r.trim() == want);
    assert!(row_is(&screen, "echo step 1"), "{screen:#?}");
    assert!(!has_row(&screen, "rm -rf ~/important"), "{screen:#?}");
    assert!(
        has_row(&screen, "y/n"),
        "the answer is out of reach: {screen:#?}"
    );
    // Page down to the end: the last line shows, and so do the title and the answer.
    for _ in 0..30 {
        pi.send(b"\x1b[6~");
    }
    let screen = pi.wait_screen("the end of the command", |s| {
        row_is(s, "rm -rf ~/important") && row_is(s, "echo step 199")
    });
    assert!(has_row(&screen, "Allow Bash?"), "{screen:#?}");
    assert!(has_row(&screen, "y/n"), "{screen:#?}");
    // And back to the top with Home.
    pi.send(b"\x1b[H");
    pi.wait_screen("the start again", |s| row_is(s, "echo step 1"));
    declined(&mut pi, &agent);
    pi.quit();
}
