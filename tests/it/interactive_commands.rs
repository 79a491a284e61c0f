//! The interactive mode's slash commands and hook UI through the real binary in a
//! pseudo-terminal: each command is a controller operation, and what it changes shows on the
//! screen (the footer, the transcript, the editor, a picker).

use std::time::Duration;

use serde_json::json;

use crate::common::hooks::{fixture, scripted, use_hooks};
use crate::common::pty::{PtyPi, PLACEHOLDER};
use crate::common::{path_str, wait_until, TestAgent};

const EXIT: Duration = crate::common::pty::EXIT_TIMEOUT;

fn command(pi: &mut PtyPi, line: &str) {
    pi.type_text(line);
    pi.enter();
}

/// Send `text` and wait for the model's `answer` row.
fn converse(pi: &mut PtyPi, text: &str, answer: &str) {
    command(pi, text);
    pi.wait_row(answer);
    pi.wait_screen("the run settled", |s| {
        !s.iter().any(|r| r.contains("Working…"))
    });
}

#[test]
fn slash_model_filters_the_models_and_the_footer_follows() {
    let agent = TestAgent::new();
    agent.write_models(&json!({"providers": {"other": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "unused",
        "models": [{"id": "alpha-model"}, {"id": "beta-model"}]
    }}}));
    let mut pi = agent.pty_faux(json!(["ok"]), 120, 40);
    command(&mut pi, "/model");
    let screen = pi.wait_text("alpha-model [other]");
    assert!(
        screen.iter().any(|r| r == "    beta-model [other]"),
        "{screen:#?}"
    );
    pi.type_text("beta");
    pi.wait_screen("only beta left", |s| {
        !s.iter().any(|r| r.contains("alpha-model"))
            && s.iter().any(|r| r.contains("›   beta-model [other]"))
    });
    pi.enter();
    pi.wait_screen("the footer on the new model", |s| {
        s.iter()
            .any(|r| r.starts_with("↑0") && r.ends_with("other/beta-model"))
    });
    pi.quit();
}

#[test]
fn slash_name_names_the_session_in_the_footer() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 30);
    converse(&mut pi, "hello", "ok");
    command(&mut pi, "/name release prep");
    pi.wait_text("project • release prep");
    pi.quit();
}

#[test]
fn slash_new_then_resume_brings_the_earlier_conversation_back() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["first answer", "second answer"]), 120, 40);
    converse(&mut pi, "the first conversation", "first answer");
    command(&mut pi, "/new");
    pi.wait_row("✓ New session started");
    pi.wait_screen("the footer reset", |s| {
        s.iter().any(|r| r.starts_with("↑0 ↓0"))
    });
    converse(&mut pi, "the second conversation", "second answer");
    command(&mut pi, "/resume");
    pi.wait_text("Resume session");
    pi.type_text("first conv");
    pi.wait_screen("one session left", |s| {
        s.iter().filter(|r| r.contains("conversation  (")).count() == 1
    });
    pi.enter();
    // The resumed session's messages are shown again, newest at the bottom.
    pi.wait_screen("the first conversation on screen", |s| {
        let user = s.iter().rposition(|r| r == "› the first conversation");
        let answer = s.iter().rposition(|r| r == "first answer");
        matches!((user, answer), (Some(u), Some(a)) if u < a)
    });
    pi.quit();
}

#[test]
fn slash_fork_puts_the_chosen_message_in_the_editor() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["one", "two"]), 120, 40);
    converse(&mut pi, "question one", "one");
    converse(&mut pi, "question two", "two");
    command(&mut pi, "/fork");
    pi.wait_text("Fork from Message");
    pi.type_text("question one");
    pi.enter();
    pi.wait_editor("question one");
    pi.ctrl('u');
    pi.quit();
}

#[test]
fn slash_tree_moves_back_to_an_earlier_message() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["one", "two"]), 120, 40);
    converse(&mut pi, "question one", "one");
    converse(&mut pi, "question two", "two");
    command(&mut pi, "/label checkpoint");
    pi.wait_text("Labelled this point");
    command(&mut pi, "/tree");
    let screen = pi.wait_text("Session Tree");
    assert!(
        screen
            .iter()
            .any(|r| r == "› • [checkpoint] assistant: two"),
        "{screen:#?}"
    );
    pi.type_text("question two");
    pi.enter();
    pi.wait_text("Summarize branch?");
    pi.enter();
    // Moving to a user message puts its text back in the editor to edit and resend.
    pi.wait_editor("question two");
    pi.ctrl('u');
    pi.quit();
}

#[test]
fn slash_clone_compact_export_session_hooks_and_copy() {
    let agent = TestAgent::new();
    use_hooks(&agent, vec![scripted(&agent, "watcher", json!({}))]);
    // Keep almost nothing verbatim, so even this short session has something to compact.
    let mut settings: serde_json::Value = serde_json::from_slice(
        &std::fs::read(agent.agent_dir.join("settings.json")).expect("settings"),
    )
    .expect("json");
    settings["compaction"] = json!({"keepRecentTokens": 1});
    crate::common::write_json(&agent.agent_dir.join("settings.json"), &settings);
    let steps = json!(["the answer", "## Goal\nSummary of the work so far."]);
    let mut pi = agent.pty_faux(steps, 120, 40);
    converse(&mut pi, "do something", "the answer");
    command(&mut pi, "/clone");
    pi.wait_transcript("Cloned to new session");
    command(&mut pi, "/session");
    pi.wait_transcript("Messages 3 (1 user, 1 assistant, 0 tool calls)");
    command(&mut pi, "/hooks");
    pi.wait_transcript("watcher");
    let out = agent.tmp.join("export.html");
    command(&mut pi, &format!("/export {}", path_str(&out)));
    pi.wait_transcript("Exported to");
    assert!(std::fs::read_to_string(&out)
        .expect("the export")
        .contains("do something"));
    command(&mut pi, "/copy");
    pi.wait_text("Copied last agent message to clipboard");
    command(&mut pi, "/compact");
    pi.wait_transcript("Compacted from");
    pi.quit();
}

#[test]
fn slash_reload_and_quit() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 30);
    command(&mut pi, "/reload");
    pi.wait_transcript("Reloaded settings, resources and hooks");
    command(&mut pi, "/quit");
    assert_eq!(pi.wait_exit(EXIT), 0);
}

#[test]
fn prompt_templates_expand_and_hook_commands_answer() {
    let agent = TestAgent::new();
    std::fs::create_dir_all(agent.agent_dir.join("prompts")).expect("prompts dir");
    std::fs::write(
        agent.agent_dir.join("prompts").join("greet.md"),
        "---\ndescription: say hello\n---\nSay hello to $1 please",
    )
    .expect("template");
    let record = agent.tmp.join("ui.jsonl");
    agent.write_settings(&json!({"hooks": [{
        "command": format!("python3 {}", fixture("ui_dialogs.py")),
        "name": "ui-dialogs",
        "config": {"record": path_str(&record)},
    }]}));
    let mut pi = agent.pty_faux(json!(["hello there"]), 120, 40);
    converse(&mut pi, "/greet world", "hello there");
    assert!(pi
        .transcript()
        .iter()
        .any(|r| r == "› Say hello to world please"));
    // A hook's command answers with text shown in the transcript.
    command(&mut pi, r#"/ask ui.notify {"message": "hi from the hook"}"#);
    pi.wait_text("[ui-dialogs] hi from the hook");
    // The hook was told it runs in interactive mode with every UI call served.
    let hello = std::fs::read_to_string(&record).expect("record");
    let first: serde_json::Value =
        serde_json::from_str(hello.lines().next().unwrap_or("{}")).expect("json");
    assert_eq!(first["hello"]["mode"], "interactive", "{first}");
    assert_eq!(
        first["hello"]["capabilities"]["ui"]["confirm"], true,
        "{first}"
    );
    pi.quit();
}

#[test]
fn every_hook_ui_call_shows_at_the_terminal() {
    let agent = TestAgent::new();
    let record = agent.tmp.join("ui.jsonl");
    agent.write_settings(&json!({"hooks": [{
        "command": format!("python3 {}", fixture("ui_dialogs.py")),
        "name": "ui-dialogs",
        "config": {"record": path_str(&record)},
        "timeout_ms": 60000,
    }]}));
    let mut pi = agent.pty_faux(json!(["ok"]), 120, 40);
    command(&mut pi, "/dialogs");
    pi.wait_text("Pick one  (ui-dialogs)");
    pi.send(b"\x1b[B");
    pi.enter();
    pi.wait_text("Sure?  (ui-dialogs)");
    pi.type_text("y");
    pi.wait_text("Name  (ui-dialogs)");
    pi.type_text("Ada");
    pi.enter();
    let screen = pi.wait_text("Edit  (ui-dialogs)");
    assert!(screen.iter().any(|r| r.ends_with("line 2")), "{screen:#?}");
    pi.type_text(" more");
    pi.enter();
    // The fire-and-forget calls: a notification, a status, a widget, the editor's text.
    pi.wait_screen("the updates", |s| {
        s.iter().any(|r| r.contains("[ui-dialogs] done"))
            && s.iter().any(|r| r == "busy")
            && s.iter().any(|r| r == "below")
            && crate::common::pty::editor_row(s) == Some("prefilled")
    });
    assert!(wait_until(Duration::from_secs(10), || {
        std::fs::read_to_string(&record)
            .unwrap_or_default()
            .contains("ui.set_editor_text")
    }));
    let answers: Vec<serde_json::Value> = std::fs::read_to_string(&record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|v: &serde_json::Value| v.get("method").is_some())
        .map(|v| json!([v["method"], v["answer"]]))
        .collect();
    pi.ctrl('u');
    pi.wait_editor(PLACEHOLDER);
    assert_eq!(
        answers[..4],
        [
            json!(["ui.select", {"value": "b"}]),
            json!(["ui.confirm", {"confirmed": true}]),
            json!(["ui.input", {"value": "Ada"}]),
            json!(["ui.editor", {"value": "line 1\nline 2 more"}]),
        ]
    );
    pi.quit();
}

#[test]
fn continue_shows_the_previous_conversation() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["remembered answer"]), 100, 30);
    converse(&mut pi, "remember me", "remembered answer");
    pi.quit();
    let mut args = agent.faux_args(json!(["again"]));
    args.push("-c".into());
    let pi = agent.pty(&args, 100, 30);
    let screen = pi.wait_text("remembered answer");
    assert!(screen.iter().any(|r| r == "› remember me"), "{screen:#?}");
    pi.quit();
}

#[test]
fn resume_flag_opens_the_session_picker_in_the_tui() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["an earlier answer"]), 100, 30);
    converse(&mut pi, "an earlier question", "an earlier answer");
    pi.quit();
    let mut args = agent.faux_args(json!(["again"]));
    args.push("-r".into());
    let mut pi = agent.pty(&args, 100, 30);
    let screen = pi.wait_text("Resume session");
    assert!(
        screen.iter().any(|r| r.contains("an earlier question")),
        "{screen:#?}"
    );
    pi.enter();
    pi.wait_screen("the resumed conversation", |s| {
        s.iter().any(|r| r == "› an earlier question") && s.iter().any(|r| r == "an earlier answer")
    });
    pi.quit();
}

#[test]
fn slash_mcp_shows_each_server_with_its_state_tools_and_last_error() {
    let agent = TestAgent::new();
    crate::common::mcp::write_mcp(
        &agent,
        json!({
            "fake": crate::common::mcp::fake(&[], json!({"exposure": "direct"})),
            "dead": crate::common::mcp::fake(&["--exit-on-init"], json!({}))
        }),
    );
    let mut pi = agent.pty_faux(json!(["ok"]), 120, 30);
    pi.wait_transcript("MCP server dead failed");
    // The fake server connects in the background; its line in mcp.log says when it has.
    let log = agent.agent_dir.join("mcp.log");
    assert!(
        wait_until(Duration::from_secs(60), || std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("[fake] connected; 5 tools")),
        "the fake server connected"
    );
    command(&mut pi, "/mcp");
    pi.wait_transcript("Log: ");
    let screen = pi.screen().join("\n");
    let row = |needle: &str| {
        screen
            .lines()
            .rev()
            .find(|l| l.contains(needle))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        row("fake  ").contains("connected") && row("fake  ").contains("5 tools"),
        "{screen}"
    );
    assert!(row("dead ").contains("failed"), "{screen}");
    assert!(screen.contains("last error: initialize failed"), "{screen}");
    assert!(screen.contains("mcp.log"), "{screen}");
    pi.quit();
}
