//! What the recorded scenarios do not cover: line-size limits, the commands no scenario
//! sends (`export_html`, `switch_session`), steering order while a tool runs, `abort_bash`,
//! a prompt during compaction, and the end of the connection (stdin EOF).

use std::path::Path;
use std::time::Duration;

use nix::sys::stat::Mode;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe;

use crate::common::hooks::{assert_hook_gone, recorded_events, scripted, use_hooks};
use crate::common::rpc::RpcProcess;
use crate::common::{path_str, process_gone, wait_until, wire, MockModel, TestAgent, Turn};

const MOCK: [&str; 4] = ["--provider", "mock", "--model", "mock-model"];

async fn ours(turns: Vec<Turn>) -> (MockModel, TestAgent, RpcProcess) {
    let mock = MockModel::start(turns).await;
    let agent = TestAgent::with_mock(&mock);
    let rpc = agent.rpc(&MOCK);
    (mock, agent, rpc)
}

#[tokio::test]
async fn export_html_is_dressed_in_the_theme_the_settings_name() {
    let mock = MockModel::start(vec![Turn::text("themed answer")]).await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_settings(&json!({"theme": "light"}));
    let mut r = agent.rpc(&MOCK);
    r.request(json!({"id": "p", "type": "prompt", "message": "export me"}))
        .await;
    r.event("agent_settled").await;
    r.request(json!({"id": "e", "type": "export_html", "outputPath": "page.html"}))
        .await;
    let page = agent.read_string("page.html");
    // The light theme's userMessageBg, pinned to the light scheme.
    assert!(
        page.contains("color-scheme: light;") && page.contains("--user: #dfe7ec;"),
        "{page}"
    );
    assert_eq!(r.close().await, Some(0));
}

/// A FIFO at `path`, held open for writing (read-write, so opening never waits for a reader).
fn gate(path: &Path) -> pipe::Sender {
    nix::unistd::mkfifo(path, Mode::from_bits_truncate(0o600)).expect("mkfifo");
    pipe::OpenOptions::new()
        .read_write(true)
        .open_sender(path)
        .expect("open fifo")
}

#[tokio::test]
async fn a_one_megabyte_command_is_answered_whole() {
    let (_mock, _agent, mut r) = ours(vec![]).await;
    let name = "x".repeat(1024 * 1024);
    let set = r
        .request(json!({"id": "big", "type": "set_session_name", "name": name}))
        .await;
    assert_eq!(set["success"], true, "{set:.200}");
    let state = r.request(json!({"id": "s", "type": "get_state"})).await;
    assert_eq!(
        state["data"]["sessionName"].as_str().map(str::len),
        Some(1024 * 1024)
    );
    assert_eq!(r.close().await, Some(0));
}

#[tokio::test]
async fn a_line_over_64_mib_gets_a_parse_error_and_the_connection_survives() {
    let (_mock, _agent, mut r) = ours(vec![]).await;
    let pad = "x".repeat(64 * 1024 * 1024);
    let line = format!("{{\"id\":\"huge\",\"type\":\"get_state\",\"pad\":\"{pad}\"}}\n");
    drop(pad);
    r.send_raw(line.as_bytes(), "<get_state padded over 64 MiB>")
        .await;
    drop(line);
    let answer = r.until(|v| v["type"] == "response").await;
    assert_eq!(answer["command"], "parse", "{answer}");
    assert_eq!(answer["success"], false);
    assert!(
        answer["error"]
            .as_str()
            .is_some_and(|e| e.contains("over the 67108864-byte limit")),
        "the error names the limit: {answer}"
    );
    assert!(
        answer.get("id").is_none(),
        "the line was never read: {answer}"
    );
    let after = r.request(json!({"id": "after", "type": "get_state"})).await;
    assert_eq!(after["success"], true);
    assert_eq!(r.close().await, Some(0));
}

#[tokio::test]
async fn export_html_writes_the_session_page_and_answers_its_path() {
    let (_mock, agent, mut r) = ours(vec![Turn::text("exported answer")]).await;
    r.request(json!({"id": "p", "type": "prompt", "message": "export me"}))
        .await;
    r.event("agent_settled").await;
    let named = r
        .request(json!({"id": "e", "type": "export_html", "outputPath": "page.html"}))
        .await;
    assert_eq!(named["data"], json!({"path": "page.html"}), "{named}");
    let page = agent.read_string("page.html");
    assert!(page.contains("export me") && page.contains("exported answer"));
    let default = r.request(json!({"id": "d", "type": "export_html"})).await;
    let path = default["data"]["path"].as_str().expect("a path");
    assert!(
        path.ends_with(".html") && agent.cwd.join(path).is_file(),
        "{default}"
    );
    let refused = r
        .request(json!({"id": "bad", "type": "export_html", "outputPath": "no/such/dir/x.html"}))
        .await;
    assert_eq!(refused["success"], false, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .is_some_and(|e| e.contains("no/such/dir")),
        "the error names the path: {refused}"
    );
    assert_eq!(r.close().await, Some(0));
}

#[tokio::test]
async fn switch_session_goes_back_to_an_earlier_session() {
    let (_mock, _agent, mut r) = ours(vec![Turn::text("first answer")]).await;
    r.request(json!({"id": "p", "type": "prompt", "message": "remember me"}))
        .await;
    r.event("agent_settled").await;
    let first = r.request(json!({"id": "s1", "type": "get_state"})).await;
    let file = first["data"]["sessionFile"]
        .as_str()
        .expect("a session file")
        .to_string();
    let new = r.request(json!({"id": "n", "type": "new_session"})).await;
    assert_eq!(new["data"], json!({"cancelled": false}));
    let empty = r.request(json!({"id": "m0", "type": "get_messages"})).await;
    assert_eq!(empty["data"]["messages"], json!([]));
    let back = r
        .request(json!({"id": "sw", "type": "switch_session", "sessionPath": file}))
        .await;
    assert_eq!(back["data"], json!({"cancelled": false}), "{back}");
    let state = r.request(json!({"id": "s2", "type": "get_state"})).await;
    assert_eq!(state["data"]["sessionId"], first["data"]["sessionId"]);
    let messages = r.request(json!({"id": "m", "type": "get_messages"})).await;
    // The session's system message first, then the conversation.
    assert_eq!(messages["data"]["messages"][0]["role"], "system");
    assert_eq!(
        messages["data"]["messages"][1]["content"][0]["text"],
        "remember me"
    );
    let missing = r
        .request(json!({"id": "bad", "type": "switch_session",
            "sessionPath": "/nonexistent/session.jsonl"}))
        .await;
    assert_eq!(missing["success"], false, "{missing}");
    assert_eq!(r.close().await, Some(0));
}

#[tokio::test]
async fn steering_reaches_the_model_after_the_running_tool_and_follow_ups_after_the_reply() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("bash", json!({"command": "read l < gate; echo got $l"}))]),
        Turn::text("after steering"),
        Turn::text("after the follow-up"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let mut open = gate(&agent.cwd.join("gate"));
    let mut r = agent.rpc(&MOCK);
    r.request(json!({"id": "p", "type": "prompt", "message": "start"}))
        .await;
    r.event("tool_execution_start").await;
    for (id, ty, text) in [("f", "follow_up", "FOLLOW"), ("s", "steer", "STEER")] {
        let q = r
            .request(json!({"id": id, "type": ty, "message": text}))
            .await;
        assert_eq!(q["data"], json!({"disposition": "queued"}), "{q}");
    }
    open.write_all(b"go\n").await.expect("open the gate");
    r.event("agent_settled").await;
    let bodies = mock.bodies();
    assert_eq!(bodies.len(), 3, "one request per turn");
    let second = wire::conversation(&bodies[1]);
    assert!(
        second.ends_with("got go\n|STEER") || second.ends_with("got go|STEER"),
        "steering follows the tool result: {second}"
    );
    assert!(!second.contains("FOLLOW"), "{second}");
    let third = wire::conversation(&bodies[2]);
    assert!(
        third.ends_with("after steering|FOLLOW"),
        "the follow-up waits for the reply: {third}"
    );
    assert_eq!(r.close().await, Some(0));
}

#[tokio::test]
async fn abort_bash_ends_the_running_command_and_its_answer_says_cancelled() {
    let (_mock, _agent, mut r) = ours(vec![]).await;
    r.send(json!({"id": "b", "type": "bash", "command": "echo started; exec sleep 300"}))
        .await;
    let update = r.event("bash_execution_update").await;
    assert_eq!(
        update,
        json!({"type": "bash_execution_update", "id": "b",
        "delta": "started\n"})
    );
    let abort = r.request(json!({"id": "a", "type": "abort_bash"})).await;
    assert_eq!(abort["success"], true);
    let done = r.response(&json!("b")).await;
    assert_eq!(done["data"]["cancelled"], true, "{done}");
    assert!(
        done["data"].get("exitCode").is_none(),
        "no exit code for a cancelled command: {done}"
    );
    assert_eq!(r.close().await, Some(0));
}

#[tokio::test]
async fn a_prompt_during_compaction_runs_after_it_on_the_compacted_context() {
    let mock = MockModel::start(vec![
        Turn::text("first answer"),
        Turn::text("second answer"),
        Turn::text("SUMMARY"),
        Turn::text("TURN CONTEXT"),
        Turn::text("after compaction"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    // The hook never answers `session_before_compact`: the compaction waits for its deadline,
    // so the prompt below surely arrives while it runs.
    let mut hook = scripted(
        &agent,
        "holder",
        json!({"subscriptions": [{"event": "session_before_compact"}],
            "on": {"session_before_compact": {"on_cancel_touch": path_str(&agent.tmp.join("x"))}}}),
    );
    hook["timeout_ms"] = json!(1500);
    let mut settings = json!({"hooks": [hook], "compaction": {"keepRecentTokens": 1}});
    settings["compaction"]["enabled"] = json!(true);
    agent.write_settings(&settings);
    let mut r = agent.rpc(&MOCK);
    for (id, text) in [("one", "one"), ("two", "two")] {
        r.request(json!({"id": id, "type": "prompt", "message": text}))
            .await;
        r.event("agent_settled").await;
    }
    r.send(json!({"id": "c", "type": "compact"})).await;
    r.event("compaction_start").await;
    let state = r.request(json!({"id": "s", "type": "get_state"})).await;
    assert_eq!(state["data"]["isCompacting"], true, "{state}");
    r.send(json!({"id": "p", "type": "prompt", "message": "three"}))
        .await;
    let compacted = r.response(&json!("c")).await;
    assert_eq!(compacted["success"], true, "{compacted}");
    let prompt = r.response(&json!("p")).await;
    assert_eq!(
        prompt["data"],
        json!({"disposition": "started"}),
        "{prompt}"
    );
    r.event("agent_settled").await;
    let order: Vec<String> = r
        .transcript
        .iter()
        .filter_map(|s| match s {
            crate::common::rpc::Step::Out(v) => v["type"].as_str().map(str::to_string),
            _ => None,
        })
        .filter(|t| t.starts_with("compaction_") || t == "agent_start")
        .collect();
    assert_eq!(
        order[order.len() - 3..],
        ["compaction_start", "compaction_end", "agent_start"],
        "the run starts once the compaction has ended"
    );
    let last = mock.bodies().pop().expect("the prompt's request");
    let seen = wire::conversation(&last);
    assert!(
        seen.contains("SUMMARY") && seen.ends_with("three"),
        "the prompt runs on the compacted context: {seen}"
    );
    assert_eq!(r.close().await, Some(0));
}

#[tokio::test]
async fn stdin_eof_ends_with_0_after_session_shutdown_and_leaves_no_process() {
    let mock = MockModel::start(vec![]).await;
    let agent = TestAgent::with_mock(&mock);
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "watcher",
            json!({"subscriptions": [{"event": "session_shutdown"}]}),
        )],
    );
    let mut r = agent.rpc(&MOCK);
    let pidfile = agent.tmp.join("shell.pid");
    let command = format!(
        "echo $$ > {}; echo started; exec sleep 300",
        path_str(&pidfile)
    );
    r.send(json!({"id": "b", "type": "bash", "command": command}))
        .await;
    r.event("bash_execution_update").await;
    let shell: i32 = std::fs::read_to_string(&pidfile)
        .expect("the shell wrote its pid before its output")
        .trim()
        .parse()
        .expect("a pid");
    assert_eq!(r.close().await, Some(0), "{}", r.tail());
    let cancelled = crate::rpc_reference::response(&r.transcript, "b");
    assert_eq!(
        cancelled["data"]["cancelled"], true,
        "the running command is answered before exit"
    );
    let shutdowns = recorded_events(&agent, "watcher", "session_shutdown");
    assert_eq!(shutdowns.len(), 1, "{shutdowns:?}");
    assert_eq!(shutdowns[0]["payload"]["reason"], "quit");
    assert_hook_gone(&agent, "watcher");
    assert!(
        wait_until(Duration::from_secs(3), || process_gone(shell)),
        "the shell command outlived pi"
    );
}

/// `examples/rpc_client.py`, the README's client, runs against ours and prints the reply.
#[tokio::test]
async fn the_readme_python_client_runs() {
    let mock = MockModel::start(vec![Turn::text("Hello from the mock.")]).await;
    let agent = TestAgent::with_mock(&mock);
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/rpc_client.py");
    let pi = [env!("CARGO_BIN_EXE_pi")]
        .into_iter()
        .chain(MOCK)
        .map(String::from)
        .collect::<Vec<_>>()
        .join(" ");
    let out = tokio::process::Command::new("python3")
        .arg(&example)
        .arg("Say hello")
        .current_dir(&agent.cwd)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &agent.home)
        .env("TMPDIR", &agent.tmp)
        .env("PI_CODING_AGENT_DIR", &agent.agent_dir)
        .env("PI", pi)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(crate::common::RUN_TIMEOUT, out)
        .await
        .expect("the example finishes")
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout, "Hello from the mock.\n");
}

#[tokio::test]
async fn rpc_mode_refuses_prompts_on_the_command_line() {
    let agent = TestAgent::new();
    let out = agent.run(&["--mode", "rpc", "hello"]).await;
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("--mode rpc takes its prompts as `prompt` commands on stdin")
            && out.stderr.contains("hello"),
        "{out}"
    );
}
