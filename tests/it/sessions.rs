//! Sessions as a user sees them: a run is saved in pi's JSONL v3 layout, `-c` continues it with
//! its history sent to the model, `--session` opens one by id, `--no-session` saves nothing.

use crate::common::wire;
use crate::common::{MockModel, TestAgent, Turn};

const OPENAI: &str = "mock/mock-model";

pub(crate) fn session_files(agent: &TestAgent) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(agent.agent_dir.join("sessions")) else {
        return out;
    };
    for d in dirs.flatten() {
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            out.push(f.path());
        }
    }
    out
}

/// The only session file (`.jsonl`) under the agent's sessions directory.
#[track_caller]
pub(crate) fn only_session_file(agent: &TestAgent) -> std::path::PathBuf {
    let mut files: Vec<_> = session_files(agent)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1, "expected one session file: {files:?}");
    files.pop().unwrap_or_default()
}

#[tokio::test]
async fn a_run_is_saved_and_continue_sends_its_history() {
    let mock = MockModel::start(vec![Turn::text("noted"), Turn::text("banana")]).await;
    let agent = TestAgent::with_mock(&mock);
    agent
        .run(&["--model", OPENAI, "-p", "remember the word banana"])
        .await
        .assert_ok();
    let files = session_files(&agent);
    assert_eq!(files.len(), 1, "one session file");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["version"], 3);
    // As the TypeScript pi: the model and thinking level first, then the system message
    // declaring the prompt and tools, then the conversation.
    assert_eq!(lines[1]["type"], "model_change");
    assert_eq!(lines[1]["modelId"], "mock-model");
    assert_eq!(lines[2]["type"], "thinking_level_change");
    assert_eq!(lines[3]["message"]["role"], "system");
    assert_eq!(lines[4]["message"]["role"], "user");
    for pair in lines[1..].windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"]);
    }
    assert!(files[0]
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("--"));

    let out = agent
        .run(&["--model", OPENAI, "-c", "-p", "which word?"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "banana\n");
    let body = &mock.bodies()[1];
    let all = wire::conversation(body);
    assert!(all.contains("remember the word banana"), "{all}");
    assert!(all.contains("noted"));
    assert_eq!(
        session_files(&agent).len(),
        1,
        "-c appends to the same file"
    );

    // --session by id prefix opens the same session.
    let id = lines[0]["id"].as_str().unwrap().to_string();
    let json = agent
        .run(&[
            "--model",
            OPENAI,
            "--session",
            &id[..13],
            "--mode",
            "json",
            "again",
        ])
        .await;
    let header = &json.events()[0];
    assert_eq!(header["id"], id.as_str());
}

/// pi 1.6 keeps the prompt in the conversation: the first run declares it once, a resumed
/// session that still has it declares nothing again, and a change (here, the tools offered)
/// is declared as a patch of just what changed. The model always gets one leading prompt.
#[tokio::test]
async fn the_prompt_is_declared_once_and_a_change_as_a_patch() {
    let mock = MockModel::start(vec![
        Turn::text("one"),
        Turn::text("two"),
        Turn::text("three"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    agent
        .run(&["--model", OPENAI, "-p", "first"])
        .await
        .assert_ok();
    agent
        .run(&["--model", OPENAI, "-c", "-p", "second"])
        .await
        .assert_ok();
    let systems = |agent: &TestAgent| -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(only_session_file(agent)).unwrap();
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|l| l["message"]["role"] == "system")
            .map(|l| l["message"].clone())
            .collect()
    };
    let first = systems(&agent);
    assert_eq!(
        first.len(),
        1,
        "resuming declares nothing again: {first:#?}"
    );
    let tools: Vec<&str> = first[0]["toolsAdded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read", "bash", "edit", "write"]);
    assert!(first[0]["sections"]["cwd"]
        .as_str()
        .unwrap()
        .starts_with("<cwd>\n"));

    agent
        .run(&["--model", OPENAI, "-c", "--tools", "read", "-p", "third"])
        .await
        .assert_ok();
    let all = systems(&agent);
    assert_eq!(all.len(), 2, "{all:#?}");
    let patch = &all[1];
    let removed: Vec<&str> = patch["toolsRemoved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(removed, ["bash", "edit", "write"]);
    assert!(patch.get("toolsAdded").is_none(), "{patch:#}");
    // Only the sections that name the tools changed; the rest is not repeated.
    let changed: Vec<&String> = patch["sections"].as_object().unwrap().keys().collect();
    assert!(
        !changed.is_empty() && !changed.iter().any(|k| *k == "preamble" || *k == "cwd"),
        "{changed:?}"
    );
    for body in mock.bodies() {
        let roles: Vec<String> = wire::messages(&body)
            .iter()
            .map(|m| m["role"].as_str().unwrap_or("").to_string())
            .collect();
        assert_eq!(
            roles.iter().filter(|r| *r == "system").count(),
            1,
            "{roles:?}"
        );
        assert_eq!(roles[0], "system");
    }
    assert!(!wire::system_text(&mock.bodies()[2]).contains("- bash:"));
}

#[tokio::test]
async fn no_session_keeps_nothing_and_starts_fresh() {
    let mock = MockModel::start(vec![Turn::text("a"), Turn::text("b")]).await;
    let agent = TestAgent::with_mock(&mock);
    agent
        .run(&["--model", OPENAI, "--no-session", "-p", "zanzibar"])
        .await
        .assert_ok();
    assert!(session_files(&agent).is_empty());
    agent
        .run(&["--model", OPENAI, "-c", "-p", "two"])
        .await
        .assert_ok();
    let all = wire::conversation(&mock.bodies()[1]);
    assert!(
        !all.contains("zanzibar"),
        "nothing was saved to continue: {all}"
    );
}

/// SPEC §11: a `kill -9` in the middle of a run loses at most the entry being written; the
/// file loads and its history reaches the model when the session is resumed.
#[tokio::test]
async fn a_session_killed_mid_run_loads_and_resumes() {
    let mock = MockModel::start(vec![
        Turn::text("first answer"),
        Turn::tools(&[(
            "bash",
            serde_json::json!({"command": "echo started > hold; exec sleep 5"}),
        )]),
        Turn::text("recovered"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let fifo = agent.cwd.join("hold");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo")
        .success());
    let mut child = agent
        .command(&[
            "--model",
            OPENAI,
            "-p",
            "say something",
            "now run the command",
        ])
        .spawn()
        .expect("spawn pi");
    let pid = child.id().expect("pid") as i32;
    // The tool is running once it writes to the FIFO: the conversation so far is on disk.
    let reader = fifo.clone();
    tokio::task::spawn_blocking(move || std::fs::read(reader))
        .await
        .expect("join")
        .expect("read fifo");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill -9");
    let _ = child.wait().await;
    crate::common::kill_group(pid);

    let files = session_files(&agent);
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("every line is whole JSON");
    }
    let session = files[0].display().to_string();
    let out = agent
        .run(&[
            "--model",
            OPENAI,
            "--session",
            &session,
            "-p",
            "are you back?",
        ])
        .await;
    out.assert_ok();
    assert!(!out.stderr.contains("Warning"), "{out}");
    assert_eq!(out.stdout, "recovered\n");
    let sent = wire::conversation(&mock.bodies()[2]);
    let order = [
        "say something",
        "first answer",
        "now run the command",
        "are you back?",
    ];
    let mut at = 0;
    for want in order {
        let found = sent[at..]
            .find(want)
            .unwrap_or_else(|| panic!("{want:?} missing or out of order in {sent}"));
        at += found + want.len();
    }
}
