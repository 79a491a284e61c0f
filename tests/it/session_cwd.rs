//! A session works where it was made, as in pi 1.6: `--session FILE` of another project runs
//! there (its files are the tools' relative paths), and a session whose directory is gone is
//! refused without a terminal, with pi's message, the file untouched.

use serde_json::json;

use crate::common::{only_tool_end, path_str, TestAgent};

/// A session file made in `cwd`, with one user message so it is a real continuation.
fn session_made_in(agent: &TestAgent, cwd: &str) -> std::path::PathBuf {
    let header = json!({"type": "session", "version": 3, "id": "0198a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        "timestamp": "2026-12-01T10:00:00.000Z", "cwd": cwd});
    let user = json!({"type": "message", "id": "a1b2c3d4", "parentId": null,
        "timestamp": "2026-12-01T10:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "earlier"}], "timestamp": 1}});
    let home = agent.agent_dir.parent().expect("root").to_path_buf();
    let file = home.join("elsewhere-session.jsonl");
    std::fs::write(&file, format!("{header}\n{user}\n")).unwrap();
    file
}

#[tokio::test]
async fn session_of_another_project_runs_in_that_project() {
    let agent = TestAgent::new();
    let other = agent.agent_dir.parent().unwrap().join("other-project");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("only-there.txt"), "the other project's file\n").unwrap();
    let file = session_made_in(&agent, &path_str(&other));
    let out = agent
        .run_tools(
            json!([{"name": "read", "arguments": {"path": "only-there.txt"}}]),
            &["--session", &path_str(&file)],
        )
        .await;
    out.assert_ok();
    let end = only_tool_end(&out);
    assert!(
        !end.is_error,
        "read resolved against the session's project\n{out}"
    );
    assert!(end.text.contains("the other project's file"), "{out}");
}

#[tokio::test]
async fn session_whose_directory_is_gone_is_refused_without_a_terminal() {
    let agent = TestAgent::new();
    let gone = agent.agent_dir.parent().unwrap().join("deleted-project");
    let file = session_made_in(&agent, &path_str(&gone));
    let before = std::fs::read(&file).unwrap();
    let out = agent
        .run_faux(
            json!([{"text": "never"}]),
            &["--session", &path_str(&file), "-p", "hi"],
        )
        .await;
    out.assert_code(1);
    assert!(
        out.stderr.contains(&format!(
            "Stored session working directory does not exist: {}",
            gone.display()
        )),
        "{out}"
    );
    assert!(
        out.stderr
            .contains(&format!("Session file: {}", file.display())),
        "{out}"
    );
    assert!(
        out.stderr.contains(&format!(
            "Current working directory: {}",
            agent.cwd.display()
        )),
        "{out}"
    );
    assert!(!out.stdout.contains("never"), "no run happened\n{out}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the file is as it was"
    );
}

#[test]
fn gone_directory_on_a_terminal_offers_to_continue_here_and_keeps_the_header() {
    let agent = TestAgent::new();
    let gone = agent.agent_dir.parent().unwrap().join("deleted-project");
    let file = session_made_in(&agent, &path_str(&gone));
    let before = std::fs::read(&file).unwrap();
    let mut args = agent.faux_args(json!(["answer"]));
    args.extend(["--session".to_string(), path_str(&file)]);
    let mut pi = agent.pty(&args, 100, 30);
    let asked = crate::common::wait_until(std::time::Duration::from_secs(10), || {
        pi.stderr().contains("Which? [1-3")
    });
    assert!(
        asked,
        "the choice is asked on the terminal\n{}",
        pi.stderr()
    );
    let asked = pi.stderr();
    assert!(asked.contains(&format!("Session cwd does not exist: {}", gone.display())));
    assert!(asked.contains(&format!(
        "Continue in {} (asks again next time)",
        agent.cwd.display()
    )));
    pi.type_text("1");
    pi.enter();
    pi.wait_text("faux/faux-1");
    pi.wait_text(&agent.cwd.file_name().unwrap().to_string_lossy());
    pi.quit();
    // The header still names the old directory (pi asks again next time); entries may follow.
    let after = std::fs::read(&file).unwrap();
    assert!(after.starts_with(&before), "the file was only appended to");
}
