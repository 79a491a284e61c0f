//! `pi hook test` on everything a hook can register (a tool with progress and cancel, a command,
//! chain and boundary events) and `pi hook check`'s `shutdown` and `tool_execute` rows, through
//! the real binary and a Python hook built on `sample-hooks/pi_hook.py`.

use crate::common::hooks::{assert_no_hook_processes, fixture, run_pi};
use crate::common::TestAgent;

fn lines_starting<'a>(out: &'a str, prefix: &str) -> Vec<&'a str> {
    out.lines().filter(|l| l.starts_with(prefix)).collect()
}

#[tokio::test]
async fn hook_test_runs_a_tool_showing_its_progress_and_result() {
    let agent = TestAgent::new();
    let hook = fixture("author.py");
    let out = run_pi(
        &agent,
        &[
            "hook",
            "test",
            &hook,
            "--tool",
            "count",
            "--args",
            r#"{"to": 3}"#,
        ],
    )
    .await;
    out.assert_ok();
    let progress = lines_starting(&out.stdout, "progress");
    assert_eq!(progress.len(), 3, "{out}");
    assert!(progress[2].ends_with("counted 3"), "{out}");
    assert!(out.stdout.contains(r#""details":{"to":3}"#), "{out}");
    assert!(out.stdout.contains("output: counted to 3"), "{out}");

    // Arguments are checked against the tool's schema first, as the host does.
    let out = run_pi(
        &agent,
        &[
            "hook",
            "test",
            &hook,
            "--tool",
            "count",
            "--args",
            r#"{"to": 0}"#,
        ],
    )
    .await;
    out.assert_code(1);
    assert!(
        out.stdout.contains("do not match count's parameters"),
        "{out}"
    );
    assert!(
        lines_starting(&out.stdout, "progress").is_empty(),
        "it must not run\n{out}"
    );

    let out = run_pi(&agent, &["hook", "test", &hook, "--tool", "nope"]).await;
    out.assert_code(1);
    assert!(
        out.stdout
            .contains("registered no tool \"nope\" (it registers: count, wait)"),
        "{out}"
    );
    assert_no_hook_processes(&agent);
}

#[tokio::test]
async fn hook_test_cancel_after_sends_the_hook_cancel() {
    let agent = TestAgent::new();
    let out = run_pi(
        &agent,
        &[
            "hook",
            "test",
            &fixture("author.py"),
            "--tool",
            "wait",
            "--cancel-after",
            "200",
        ],
    )
    .await;
    out.assert_ok();
    assert!(
        out.stdout.contains("progress") && out.stdout.contains("waiting"),
        "{out}"
    );
    assert!(out.stdout.contains("cancelled after"), "{out}");
    // The hook saw the `cancel` (it writes this file when it does) before it was shut down.
    assert_eq!(agent.read_string("cancelled.txt"), "cancelled\n", "{out}");
    assert_no_hook_processes(&agent);
}

#[tokio::test]
async fn hook_test_runs_a_command_and_chain_and_boundary_events() {
    let agent = TestAgent::new();
    let hook = fixture("author.py");
    let out = run_pi(
        &agent,
        &["hook", "test", &hook, "--command", "/greet", "Ana"],
    )
    .await;
    out.assert_ok();
    assert!(out.stdout.contains("text: hello Ana"), "{out}");

    let payload = r#"{"text": "shout: quiet please", "source": "print"}"#;
    let out = run_pi(
        &agent,
        &[
            "hook",
            "test",
            &hook,
            "--event",
            "input",
            "--payload",
            payload,
        ],
    )
    .await;
    out.assert_ok();
    assert!(
        out.stdout.contains("decision: transform: QUIET PLEASE"),
        "{out}"
    );

    let out = run_pi(&agent, &["hook", "test", &hook, "--event", "turn_end"]).await;
    out.assert_ok();
    assert!(
        out.stdout
            .contains("decision: the proposal's entries, 1 message(s) added, continue: true"),
        "{out}"
    );

    let out = run_pi(&agent, &["hook", "test", &hook, "--command", "nope"]).await;
    out.assert_code(1);
    assert!(
        out.stdout
            .contains("registered no command /nope (it registers: /greet)"),
        "{out}"
    );
    // Something to test must be named.
    let out = run_pi(&agent, &["hook", "test", &hook]).await;
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("--event <EVENT>|--tool <TOOL>|--command"),
        "{out}"
    );
    assert_no_hook_processes(&agent);
}

#[tokio::test]
async fn hook_check_fails_a_hook_that_ignores_shutdown_and_tool_execute() {
    let agent = TestAgent::new();
    let cmd = format!("{} deaf", fixture("broken.py"));
    let out = run_pi(&agent, &["hook", "check", &cmd]).await;
    out.assert_code(1);
    let row = |check: &str| {
        out.stdout
            .lines()
            .find(|l| l[6..].starts_with(check))
            .unwrap_or_else(|| panic!("no {check:?} row\n{out}"))
            .to_string()
    };
    assert!(row("exits on shutdown").starts_with("FAIL"), "{out}");
    assert!(
        row("exits on shutdown").contains("still running 2 s after `shutdown`"),
        "{out}"
    );
    assert!(row("exits on stdin EOF").starts_with("PASS"), "{out}");
    assert!(row("answers tool_execute").starts_with("FAIL"), "{out}");
    assert!(row("replies to tool_call").starts_with("PASS"), "{out}");

    // A well-behaved hook passes both.
    let out = run_pi(&agent, &["hook", "check", &fixture("author.py")]).await;
    out.assert_ok();
    for check in [
        "exits on shutdown",
        "answers tool_execute",
        "command /greet",
    ] {
        assert!(
            out.stdout
                .lines()
                .any(|l| l.starts_with("PASS") && l[6..].starts_with(check)),
            "{check}\n{out}"
        );
    }
    assert_no_hook_processes(&agent);
}

#[tokio::test]
async fn hook_check_fails_a_command_named_like_a_built_in() {
    let agent = TestAgent::new();
    let cmd = format!("{} reserved", fixture("author.py"));
    let out = run_pi(&agent, &["hook", "check", &cmd]).await;
    out.assert_code(1);
    let failed: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("FAIL"))
        .collect();
    assert_eq!(failed.len(), 1, "{out}");
    assert!(
        failed[0].contains("command /model") && failed[0].contains("reserved"),
        "{out}"
    );
    assert_no_hook_processes(&agent);
}

#[tokio::test]
async fn a_commands_text_is_a_hook_command_event_in_json_mode() {
    let agent = TestAgent::new();
    let hook = fixture("author.py");
    let mut args = agent.faux_args(serde_json::json!(["unused"]));
    args.extend(
        [
            "--mode",
            "json",
            "--hook-events",
            "--hook",
            &hook,
            "/greet Ana",
        ]
        .map(String::from),
    );
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    let events = out.events();
    let cmd: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "hook_command")
        .collect();
    assert_eq!(cmd.len(), 1, "{out}");
    assert_eq!(cmd[0]["hook"], "author");
    assert_eq!(cmd[0]["name"], "greet");
    assert_eq!(cmd[0]["text"], "hello Ana");
    assert!(
        !out.stderr.contains("hello Ana"),
        "not on stderr any more\n{out}"
    );

    // Print mode prints the text on stdout.
    let mut args = agent.faux_args(serde_json::json!(["unused"]));
    args.extend(["-p", "--hook", &hook, "/greet Bo"].map(String::from));
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    assert_eq!(out.stdout.trim_end(), "hello Bo", "{out}");
    assert_no_hook_processes(&agent);
}

/// The "first hook in any language" of hook-protocol.md, as printed there.
fn first_hook_from_the_doc() -> String {
    let doc =
        std::fs::read_to_string(crate::common::hooks::repo().join("hook-protocol.md")).unwrap();
    let section = doc
        .split("## First hook in any language")
        .nth(1)
        .expect("the section exists");
    let code = section
        .split("```python\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a python block");
    assert!(code.lines().count() <= 30, "the example stays short");
    code.to_string()
}

#[tokio::test]
async fn the_protocol_docs_first_hook_passes_check_and_blocks_sudo() {
    use std::os::unix::fs::PermissionsExt;
    let agent = TestAgent::new();
    let path = agent.write_file("no-sudo.py", first_hook_from_the_doc());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run_pi(&agent, &["hook", "check", "./no-sudo.py"]).await;
    out.assert_ok();
    assert!(!out.stdout.contains("FAIL"), "{out}");
    let payload = r#"{"tool_call_id": "c1", "tool_name": "bash", "input": {"command": "sudo ls"}}"#;
    let out = run_pi(
        &agent,
        &[
            "hook",
            "test",
            "./no-sudo.py",
            "--event",
            "tool_call",
            "--payload",
            payload,
        ],
    )
    .await;
    out.assert_ok();
    assert!(
        out.stdout.contains("decision: block: no sudo here"),
        "{out}"
    );
    assert_no_hook_processes(&agent);
}
