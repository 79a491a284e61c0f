//! The command line as a user sees it: exit codes, `--version`/`--help`, print-mode output,
//! `@file` arguments, piped stdin, `--list-models`, and the system prompt flags.

use std::path::Path;

use serde_json::json;

use crate::common::wire;
use crate::common::{path_str, MockModel, TestAgent, Turn};

const OPENAI: &str = "mock/mock-model";

#[tokio::test]
async fn print_mode_prints_only_the_final_text() {
    let agent = TestAgent::new();
    let out = agent
        .run_faux(
            json!([{"thinking": "let me think", "text": "Hello there."}]),
            &["-p", "say hi"],
        )
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "Hello there.\n");
}

#[tokio::test]
async fn print_mode_prints_the_last_answer_after_tool_turns() {
    let agent = TestAgent::new();
    let steps = json!([
        {"text": "Let me look.", "toolCalls": [{"name": "bash", "arguments": {"command": "echo from-tool"}}]},
        "Final answer."
    ]);
    let out = agent.run_faux(steps, &["-p", "go"]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "Final answer.\n");
}

#[tokio::test]
async fn checked_in_demo_scripts_run() {
    let agent = TestAgent::new();
    for (file, answer) in [
        ("hello.json", "Hello from the faux model.\n"),
        ("tool-loop.json", "That is what is in this directory.\n"),
    ] {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/scripts")
            .join(file);
        let script = path_str(&script);
        let out = agent
            .run(&["--provider", "faux", "--faux-script", &script, "-p", "hi"])
            .await;
        out.assert_ok();
        assert_eq!(out.stdout, answer, "{file}");
    }
}

#[tokio::test]
async fn faux_script_from_environment_variable() {
    let mut agent = TestAgent::new();
    let script = agent.faux_script(json!(["via env"]));
    agent.env("PI_FAUX_SCRIPT", &path_str(&script));
    let out = agent.run(&["--provider", "faux", "-p", "hi"]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "via env\n");
}

#[tokio::test]
async fn unknown_flag_is_an_error() {
    let agent = TestAgent::new();
    let out = agent.run(&["--definitely-not-a-flag", "-p", "hi"]).await;
    out.assert_code(1);
    assert!(out.stderr.contains("--definitely-not-a-flag"), "{out}");
    assert_eq!(out.stdout, "");
}

#[tokio::test]
async fn no_model_configured_is_an_error() {
    let agent = TestAgent::new();
    let out = agent.run(&["-p", "hi"]).await;
    out.assert_code(1);
    assert!(out.stderr.to_lowercase().contains("model"), "{out}");
    assert_eq!(out.stdout, "");
}

#[tokio::test]
async fn model_error_exits_1_with_message_on_stderr() {
    let agent = TestAgent::new();
    let out = agent
        .run_faux(json!([{"error": "boom from the script"}]), &["-p", "hi"])
        .await;
    out.assert_code(1);
    assert!(out.stderr.contains("boom from the script"), "{out}");
    assert_eq!(out.stdout, "");
}

#[tokio::test]
async fn exhausted_faux_script_is_reported() {
    let agent = TestAgent::new();
    let out = agent.run_faux(json!([]), &["-p", "hi"]).await;
    out.assert_code(1);
    assert!(
        out.stderr.contains("No more faux responses queued"),
        "{out}"
    );
}

#[tokio::test]
async fn version_flag_prints_version() {
    let agent = TestAgent::new();
    for flag in ["--version", "-v"] {
        let out = agent.run(&[flag]).await;
        out.assert_ok();
        assert!(out.stdout.contains(env!("CARGO_PKG_VERSION")), "{out}");
    }
}

#[tokio::test]
async fn help_flag_lists_options() {
    let agent = TestAgent::new();
    let out = agent.run(&["--help"]).await;
    out.assert_ok();
    for flag in ["--print", "--model", "--tools", "--mode"] {
        assert!(out.stdout.contains(flag), "help lacks {flag}\n{out}");
    }
}

#[tokio::test]
async fn at_file_contents_reach_the_model() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_file("notes.txt", "the secret word is pineapple\n");
    agent
        .run(&["--model", OPENAI, "-p", "@notes.txt", "summarise the file"])
        .await
        .assert_ok();
    let text = wire::user_text(&mock.bodies()[0]);
    let start = text
        .find("<file name=\"")
        .unwrap_or_else(|| panic!("no <file> tag in {text:?}"))
        + 12;
    let name = &text[start..start + text[start..].find('"').expect("closing quote")];
    assert!(
        Path::new(name).is_absolute() && name.ends_with("/notes.txt"),
        "file name {name:?}"
    );
    assert!(text.contains("the secret word is pineapple"), "{text:?}");
    assert!(text.contains("</file>"), "{text:?}");
    assert!(text.contains("summarise the file"), "{text:?}");
}

#[tokio::test]
async fn missing_at_file_is_an_error() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let out = agent
        .run(&["--model", OPENAI, "-p", "@does-not-exist.txt", "hi"])
        .await;
    out.assert_code(1);
    assert!(out.stderr.contains("does-not-exist.txt"), "{out}");
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn piped_stdin_is_merged_into_the_prompt() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let out = agent
        .run_with_stdin(
            &["--model", OPENAI, "-p", "what does the log say?"],
            Some("log line: disk full\n"),
        )
        .await;
    out.assert_ok();
    let text = wire::user_text(&mock.bodies()[0]);
    let piped = text
        .find("log line: disk full")
        .unwrap_or_else(|| panic!("stdin missing: {text:?}"));
    let asked = text
        .find("what does the log say?")
        .unwrap_or_else(|| panic!("prompt missing: {text:?}"));
    assert!(
        piped < asked,
        "stdin should come before the prompt: {text:?}"
    );
}

#[tokio::test]
async fn piped_stdin_alone_is_the_prompt() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let out = agent
        .run_with_stdin(&["--model", OPENAI, "-p"], Some("only from stdin\n"))
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "ok\n");
    assert!(wire::user_text(&mock.bodies()[0]).contains("only from stdin"));
}

#[tokio::test]
async fn list_models_shows_configured_models() {
    let mock = MockModel::start(vec![]).await;
    let agent = TestAgent::with_mock(&mock);
    let out = agent.run(&["--list-models"]).await;
    out.assert_ok();
    assert!(out.stdout.contains("mock-model"), "{out}");
    assert!(out.stdout.contains("mock-claude"), "{out}");

    let out = agent.run(&["--list-models", "claude"]).await;
    out.assert_ok();
    assert!(out.stdout.contains("mock-claude"), "{out}");
    assert!(
        !out.stdout.contains("mock-model"),
        "search should filter\n{out}"
    );
    assert!(
        mock.requests().is_empty(),
        "listing models must not call a model"
    );
}

#[tokio::test]
async fn system_prompt_flags_reach_the_request() {
    let mock = MockModel::start(vec![Turn::text("ok"), Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    agent
        .run(&[
            "--model",
            OPENAI,
            "--system-prompt",
            "You are a test double.",
            "-p",
            "hi",
        ])
        .await
        .assert_ok();
    agent
        .run(&[
            "--model",
            "mock-anthropic/mock-claude",
            "--append-system-prompt",
            "Always say banana.",
            "-p",
            "hi",
        ])
        .await
        .assert_ok();
    let bodies = mock.bodies();
    assert!(
        wire::system_text(&bodies[0]).contains("You are a test double."),
        "{:#}",
        bodies[0]
    );
    let appended = wire::system_text(&bodies[1]);
    assert!(appended.contains("Always say banana."), "{:#}", bodies[1]);
    assert!(
        appended.len() > "Always say banana.".len(),
        "append keeps the default prompt"
    );
}

#[tokio::test]
async fn system_prompt_flag_reads_a_file() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_file("PROMPT.md", "Prompt loaded from a file.");
    agent
        .run(&[
            "--model",
            OPENAI,
            "--system-prompt",
            "PROMPT.md",
            "-p",
            "hi",
        ])
        .await
        .assert_ok();
    assert!(wire::system_text(&mock.bodies()[0]).contains("Prompt loaded from a file."));
}

#[tokio::test]
async fn verbose_and_offline_do_not_change_stdout() {
    let agent = TestAgent::new();
    let out = agent
        .run_faux(
            json!(["just this"]),
            &["--verbose", "--offline", "-p", "hi"],
        )
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "just this\n");
}

#[tokio::test]
async fn invalid_thinking_level_warns_but_runs() {
    let agent = TestAgent::new();
    let out = agent
        .run_faux(json!(["fine"]), &["--thinking", "extreme", "-p", "hi"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "fine\n");
    assert!(
        out.stderr.contains("extreme"),
        "warning should name the bad level\n{out}"
    );
}

#[tokio::test]
async fn no_session_writes_no_session_files() {
    let agent = TestAgent::new();
    agent
        .run_faux(json!(["ok"]), &["--no-session", "-p", "hi"])
        .await
        .assert_ok();
    let sessions = agent.agent_dir.join("sessions");
    let files = walk_files(&sessions);
    assert!(files.is_empty(), "session files written: {files:?}");
}

fn walk_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .flat_map(|e| {
            if e.path().is_dir() {
                walk_files(&e.path())
            } else {
                vec![e.path()]
            }
        })
        .collect()
}
