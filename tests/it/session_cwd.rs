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

/// What one program does after `switch_session` into a session of another project: the
/// response, then (prompting a `pwd` through the bash tool) the tool's output and the system
/// prompt the model got; then the same after `new_session`.
struct Switched {
    response: serde_json::Value,
    pwd: String,
    system: String,
    pwd_after_new: String,
}

async fn switch_and_look(
    rpc: &mut crate::common::rpc::RpcProcess,
    mock: &crate::common::MockModel,
    file: &std::path::Path,
) -> Switched {
    let response = rpc
        .request(json!({"id": "sw", "type": "switch_session", "sessionPath": path_str(file)}))
        .await;
    let pwd = prompt_pwd(rpc, "p1").await;
    let system = crate::common::wire::system_text(mock.bodies().last().expect("a request"));
    rpc.request(json!({"id": "new", "type": "new_session"}))
        .await;
    let pwd_after_new = prompt_pwd(rpc, "p2").await;
    Switched {
        response,
        pwd,
        system,
        pwd_after_new,
    }
}

/// A prompt whose scripted reply runs `pwd`: the tool's output, trimmed.
async fn prompt_pwd(rpc: &mut crate::common::rpc::RpcProcess, id: &str) -> String {
    rpc.send(json!({"id": id, "type": "prompt", "message": "where are you?"}))
        .await;
    let end = rpc.event("tool_execution_end").await;
    rpc.event("agent_end").await;
    crate::common::blocks_text(&end["result"]["content"])
        .trim()
        .to_string()
}

fn pwd_turns() -> Vec<crate::common::Turn> {
    use crate::common::Turn;
    let pwd = || Turn::tools(&[("bash", json!({"command": "pwd"}))]);
    vec![pwd(), Turn::text("there"), pwd(), Turn::text("still")]
}

/// A project with a context file of its own, and a session made there.
fn other_project(agent: &TestAgent) -> (std::path::PathBuf, std::path::PathBuf) {
    let other = agent.agent_dir.parent().unwrap().join("other-project");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("AGENTS.md"), "OTHER-PROJECT-RULES\n").unwrap();
    let file = session_made_in(agent, &path_str(&other));
    (other, file)
}

#[tokio::test]
async fn switch_session_into_another_project_works_there_as_pi_1_6_does() {
    let mock = crate::common::MockModel::start(pwd_turns()).await;
    let agent = TestAgent::with_mock(&mock);
    let (other, file) = other_project(&agent);
    let before = std::fs::read(&file).unwrap();
    let mut rpc = agent.rpc(&["--model", "mock/mock-model"]);
    let ours = switch_and_look(&mut rpc, &mock, &file).await;
    drop(rpc);
    let other_s = path_str(&other);
    assert_eq!(ours.response["success"], true, "{}", ours.response);
    assert_eq!(ours.pwd, other_s, "bash runs in the session's project");
    assert!(
        ours.system.contains(&format!("<cwd>\n{other_s}\n</cwd>")),
        "the prompt names the other directory:\n{}",
        ours.system
    );
    assert!(
        ours.system.contains("OTHER-PROJECT-RULES"),
        "the other project's AGENTS.md is in the prompt:\n{}",
        ours.system
    );
    assert!(
        !ours
            .system
            .contains(&format!("<cwd>\n{}\n</cwd>", path_str(&agent.cwd))),
        "{}",
        ours.system
    );
    assert_eq!(
        ours.pwd_after_new, other_s,
        "/new stays where the run moved"
    );

    // pi 1.6 on the same script and the same file.
    let Some(ts) = crate::common::ts_pi::TsPi::find_v1_6() else {
        return;
    };
    std::fs::write(&file, &before).unwrap();
    let mock = crate::common::MockModel::start(pwd_turns()).await;
    agent.write_models(&mock.models_json());
    let mut rpc = ts.rpc(&agent, &["--model", "mock/mock-model"]);
    let theirs = switch_and_look(&mut rpc, &mock, &file).await;
    assert_eq!(theirs.response["success"], true, "{}", theirs.response);
    assert_eq!(theirs.pwd, ours.pwd);
    assert_eq!(theirs.pwd_after_new, ours.pwd_after_new);
    assert!(theirs.system.contains(&format!("<cwd>\n{other_s}\n</cwd>")));
    assert!(theirs.system.contains("OTHER-PROJECT-RULES"));
}

#[tokio::test]
async fn switch_session_into_a_gone_directory_is_refused_with_pi_1_6s_error() {
    let mock = crate::common::MockModel::start(vec![]).await;
    let agent = TestAgent::with_mock(&mock);
    let gone = agent.agent_dir.parent().unwrap().join("deleted-project");
    let file = session_made_in(&agent, &path_str(&gone));
    let before = std::fs::read(&file).unwrap();
    let command = json!({"id": "sw", "type": "switch_session", "sessionPath": path_str(&file)});
    let mut rpc = agent.rpc(&["--model", "mock/mock-model"]);
    let ours = rpc.request(command.clone()).await;
    let state = rpc.request(json!({"id": "st", "type": "get_state"})).await;
    drop(rpc);
    let want = format!(
        "Stored session working directory does not exist: {}\nSession file: {}\n\
         Current working directory: {}",
        gone.display(),
        file.display(),
        agent.cwd.display()
    );
    assert_eq!(ours["success"], false, "{ours}");
    assert_eq!(ours["error"], want.as_str());
    assert_ne!(
        state["data"]["sessionFile"],
        path_str(&file).as_str(),
        "the run stays in its session"
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the file is as it was"
    );

    let Some(ts) = crate::common::ts_pi::TsPi::find_v1_6() else {
        return;
    };
    let mut rpc = ts.rpc(&agent, &["--model", "mock/mock-model"]);
    let theirs = rpc.request(command).await;
    assert_eq!(theirs["success"], false, "{theirs}");
    assert_eq!(theirs["error"], ours["error"]);
    assert_eq!(theirs["command"], ours["command"]);
}

#[test]
fn resume_into_another_projects_session_shows_its_directory_in_the_footer() {
    let agent = TestAgent::new();
    let (other, _) = other_project(&agent);
    let mut pi = agent.pty_faux(json!(["here first"]), 100, 30);
    pi.type_text("hello");
    pi.enter();
    pi.wait_row("here first");
    let footer_has = |s: &[String], dir: &std::path::Path| {
        // The footer names the directory as a path, `~`-relative under the home.
        let name = format!("/{}", dir.file_name().unwrap().to_string_lossy());
        s.iter()
            .rev()
            .filter(|r| !r.trim().is_empty())
            .take(2)
            .any(|r| r.ends_with(&name))
    };
    assert!(footer_has(&pi.screen(), &agent.cwd), "{:#?}", pi.screen());
    // The other project's session, listed beside this project's by the picker.
    let dir = crate::sessions::session_files(&agent)[0]
        .parent()
        .unwrap()
        .to_path_buf();
    let file = session_made_in(&agent, &path_str(&other));
    std::fs::rename(&file, dir.join("other.jsonl")).unwrap();
    pi.type_text("/resume");
    pi.enter();
    pi.wait_text("Resume session");
    pi.type_text("earlier");
    pi.enter();
    pi.wait_row("Resumed session");
    let screen = pi.wait_screen("the footer names the other project", |s| {
        footer_has(s, &other)
    });
    assert!(!footer_has(&screen, &agent.cwd), "{screen:#?}");
    pi.quit();
}

#[test]
fn resume_into_a_gone_directory_asks_as_pi_1_6_and_continues_here() {
    let agent = TestAgent::new();
    let gone = agent.agent_dir.parent().unwrap().join("deleted-project");
    let mut pi = agent.pty_faux(json!(["here first"]), 100, 30);
    pi.type_text("hello");
    pi.enter();
    pi.wait_row("here first");
    let dir = crate::sessions::session_files(&agent)[0]
        .parent()
        .unwrap()
        .to_path_buf();
    let file = session_made_in(&agent, &path_str(&gone));
    let stored = dir.join("gone.jsonl");
    std::fs::rename(&file, &stored).unwrap();
    let before = std::fs::read(&stored).unwrap();
    pi.type_text("/resume");
    pi.enter();
    pi.wait_text("Resume session");
    pi.type_text("earlier");
    pi.enter();
    let screen = pi.wait_text(&format!("Session cwd does not exist: {}", gone.display()));
    let here = agent.cwd.display().to_string();
    for option in [
        format!("Continue in {here} (asks again next time)"),
        format!("Fork into {here} (new session ID, original kept)"),
        "Cancel".to_string(),
    ] {
        assert!(
            screen.iter().any(|r| r.contains(&option)),
            "{option}: {screen:#?}"
        );
    }
    pi.enter();
    pi.wait_row(&format!("Resumed session in {here}"));
    pi.quit();
    let after = std::fs::read(&stored).unwrap();
    assert!(
        after.starts_with(&before),
        "the header is kept: pi asks again"
    );
}
