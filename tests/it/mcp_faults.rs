//! MCP servers that misbehave, through the real binary, with `fixtures/mcp/fake_server.py`: one
//! that never answers `initialize`, one that dies during it, one that crashes mid-session
//! (reconnected on the next call), an abort mid-call (`notifications/cancelled` reaches the
//! server), pi's secrets kept from a server's environment, and no server process left after pi
//! exits or is killed with `kill -9`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::mcp::{fake, log_lines, write_mcp};
use crate::common::{of_type, path_str, process_gone, read_pid, tool_ends, wait_until, TestAgent};

fn mcp_states(events: &[Value]) -> Vec<(String, String)> {
    of_type(events, "mcp_server")
        .iter()
        .map(|e| {
            (
                e["state"].as_str().unwrap_or_default().to_string(),
                e["error"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_server_that_never_answers_initialize_fails_and_the_run_goes_on() {
    let agent = TestAgent::new();
    let pidfile = agent.tmp.join("fake.pid");
    write_mcp(
        &agent,
        json!({"mute": fake(&["--hang-initialize", "--pidfile", &path_str(&pidfile)], json!({"timeout": 1500, "exposure": "direct"}))}),
    );
    let started = std::time::Instant::now();
    let out = agent
        .run_faux(
            json!([{"text": "fine without it"}]),
            &["--mode", "json", "--hook-events", "-p", "hi"],
        )
        .await;
    out.assert_ok();
    assert!(started.elapsed() < Duration::from_secs(30), "bounded wait");
    let states = mcp_states(&out.events());
    assert!(
        states
            .iter()
            .any(|(s, e)| s == "failed" && e.contains("did not answer initialize within 1 s")),
        "{states:?}\n{out}"
    );
    let pid = read_pid(&pidfile);
    assert!(
        wait_until(Duration::from_secs(5), || process_gone(pid)),
        "the mute server was stopped"
    );
    assert!(
        crate::common::hooks::final_text(&out.events()).contains("fine without it"),
        "{out}"
    );
}

#[tokio::test]
async fn a_server_that_dies_during_initialize_is_reported_and_its_tools_are_absent() {
    let agent = TestAgent::new();
    write_mcp(
        &agent,
        json!({"dead": fake(&["--exit-on-init"], json!({"exposure": "direct"}))}),
    );
    let out = agent
        .run_tools(json!([{"name": "mcp__dead__ping", "arguments": {}}]), &[])
        .await;
    out.assert_ok();
    let states = mcp_states(&out.events());
    assert!(
        states
            .iter()
            .any(|(s, e)| (s == "failed" || s == "unavailable") && e.contains("initialize")),
        "{states:?}\n{out}"
    );
    let end = &tool_ends(&out.events())[0];
    assert!(end.is_error && end.text.contains("not found"), "{out}");
    // Print mode says so on stderr.
    let printed = agent.run_faux(json!([{"text": "ok"}]), &["-p", "hi"]).await;
    assert!(
        printed.stderr.contains("MCP server dead") && printed.stderr.contains("initialize"),
        "{printed}"
    );
}

#[tokio::test]
async fn a_server_that_crashes_is_started_again_on_the_next_call() {
    let agent = TestAgent::new();
    let log = agent.tmp.join("fake.log");
    write_mcp(
        &agent,
        json!({"flaky": fake(&["--log", &path_str(&log)], json!({"exposure": "direct"}))}),
    );
    let steps = json!([
        {"toolCalls": [{"name": "mcp__flaky__crash", "arguments": {}}]},
        {"toolCalls": [{"name": "mcp__flaky__ping", "arguments": {}}]},
        {"text": "done"}
    ]);
    let out = agent
        .run_faux(steps, &["--mode", "json", "--hook-events", "-p", "go"])
        .await;
    out.assert_ok();
    let ends = tool_ends(&out.events());
    assert!(
        ends[0].is_error && ends[0].text.contains("MCP server flaky"),
        "{out}"
    );
    assert!(
        !ends[1].is_error && ends[1].text == "pong #1",
        "a fresh process answered: {out}"
    );
    let starts = log_lines(&log)
        .iter()
        .filter(|l| l.get("started").is_some())
        .count();
    assert_eq!(starts, 2, "started once, and again after the crash");
    let mcp_log = std::fs::read_to_string(agent.agent_dir.join("mcp.log")).unwrap_or_default();
    assert!(
        mcp_log.contains("[flaky] connection lost; reconnecting"),
        "{mcp_log}"
    );
}

#[tokio::test]
async fn an_abort_mid_call_cancels_the_request_at_the_server() {
    let agent = TestAgent::new();
    let log = agent.tmp.join("fake.log");
    let pidfile = agent.tmp.join("fake.pid");
    write_mcp(
        &agent,
        json!({"fake": fake(&["--log", &path_str(&log), "--pidfile", &path_str(&pidfile)], json!({"exposure": "direct"}))}),
    );
    let mut args = agent.faux_args(json!([
        {"toolCalls": [{"name": "mcp__fake__slow", "arguments": {}}]},
        {"text": "after"}
    ]));
    args.push("--verbose".into());
    let mut r = agent.rpc(&args);
    r.request(json!({"id": "p", "type": "prompt", "message": "go"}))
        .await;
    r.until(|e| e["type"] == "tool_execution_start").await;
    // The request is at the server before the abort.
    assert!(
        wait_until(Duration::from_secs(10), || log_lines(&log)
            .iter()
            .any(|l| l["method"] == "tools/call")),
        "the call reached the server"
    );
    r.send(json!({"id": "a", "type": "abort"})).await;
    let end = r.until(|e| e["type"] == "tool_execution_end").await;
    assert_eq!(end["isError"], true, "{end}");
    r.until(|e| e["type"] == "agent_settled").await;
    let call_id = log_lines(&log)
        .iter()
        .find(|l| l["method"] == "tools/call")
        .map(|l| l["id"].clone())
        .unwrap_or_default();
    assert!(
        wait_until(Duration::from_secs(10), || log_lines(&log).iter().any(
            |l| { l["method"] == "notifications/cancelled" && l["params"]["requestId"] == call_id }
        )),
        "notifications/cancelled for request {call_id} reached the server: {:?}",
        log_lines(&log)
    );
    let pid = read_pid(&pidfile);
    assert_eq!(r.close().await, Some(0));
    assert!(
        wait_until(Duration::from_secs(10), || process_gone(pid)),
        "the server is stopped when pi exits"
    );
}

#[tokio::test]
async fn no_server_process_outlives_pi_killed_with_sigkill() {
    let agent = TestAgent::new();
    let log = agent.tmp.join("fake.log");
    let pidfile = agent.tmp.join("fake.pid");
    write_mcp(
        &agent,
        json!({"fake": fake(&["--log", &path_str(&log), "--pidfile", &path_str(&pidfile)], json!({"exposure": "direct"}))}),
    );
    let args =
        agent.faux_args(json!([{"toolCalls": [{"name": "mcp__fake__slow", "arguments": {}}]}]));
    let mut r = agent.rpc(&args);
    r.request(json!({"id": "p", "type": "prompt", "message": "go"}))
        .await;
    r.until(|e| e["type"] == "tool_execution_start").await;
    let server = read_pid(&pidfile);
    assert!(!process_gone(server));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(r.pid()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill -9 pi");
    assert!(
        wait_until(Duration::from_secs(10), || process_gone(server)),
        "the MCP server died with pi"
    );
}

#[tokio::test]
async fn a_stdio_server_sees_none_of_pis_secrets_unless_its_env_names_them() {
    let mut agent = TestAgent::new();
    agent.env("OPENAI_API_KEY", "sk-secret-openai");
    agent.env("MY_SERVICE_TOKEN", "tok-123");
    agent.env("PLAIN_SETTING", "visible");
    write_mcp(
        &agent,
        json!({"fake": fake(&[], json!({"exposure": "direct", "env": {"SERVICE_TOKEN": "${MY_SERVICE_TOKEN}"}}))}),
    );
    let calls: Vec<Value> = [
        "OPENAI_API_KEY",
        "MY_SERVICE_TOKEN",
        "SERVICE_TOKEN",
        "PLAIN_SETTING",
    ]
    .iter()
    .map(|n| json!({"name": "mcp__fake__env_var", "arguments": {"name": n}}))
    .collect();
    let out = agent.run_tools(json!(calls), &[]).await;
    out.assert_ok();
    let mut ends = tool_ends(&out.events());
    ends.sort_by(|a, b| a.id.cmp(&b.id));
    let texts: Vec<&str> = ends.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(texts, ["(unset)", "(unset)", "tok-123", "visible"], "{out}");
}

#[tokio::test]
async fn a_changed_tool_list_is_offered_from_the_next_request() {
    let agent = TestAgent::new();
    write_mcp(
        &agent,
        json!({"fake": fake(&[], json!({"exposure": "direct"}))}),
    );
    let steps = json!([
        {"toolCalls": [{"name": "mcp__fake__extra", "arguments": {}}]},
        {"toolCalls": [{"name": "mcp__fake__grow", "arguments": {}}]},
        {"toolCalls": [{"name": "mcp__fake__extra", "arguments": {}}]},
        {"text": "done"}
    ]);
    let out = agent
        .run_faux(steps, &["--mode", "json", "--hook-events", "-p", "go"])
        .await;
    out.assert_ok();
    let ends = tool_ends(&out.events());
    assert!(
        ends[0].is_error && ends[0].text.contains("not found"),
        "{out}"
    );
    assert_eq!(ends[1].text, "grown");
    assert!(
        !ends[2].is_error && ends[2].text == "extra!",
        "listed again after list_changed: {out}"
    );
}

#[tokio::test]
async fn the_timeout_ends_a_silent_call_and_progress_keeps_a_long_one_alive() {
    let agent = TestAgent::new();
    let mut servers = json!({"fake": fake(&[], json!({"exposure": "direct", "timeout": 3000}))});
    let long = crate::common::mcp::everything(json!({"exposure": "direct", "timeout": 3000}));
    if let Some(e) = &long {
        servers["everything"] = e.clone();
    }
    write_mcp(&agent, servers);
    let mut calls = vec![json!({"name": "mcp__fake__slow", "arguments": {}})];
    if long.is_some() {
        // Seven seconds in fourteen steps: never three seconds without a progress notification.
        // (Three, not one: the timeout bounds `initialize` too, and a loaded machine may take
        // more than a second to start a Node server.)
        calls.push(json!({"name": "mcp__everything__trigger_long_running_operation", "arguments": {"duration": 7, "steps": 14}}));
    }
    let out = agent.run_tools(json!(calls), &[]).await;
    out.assert_ok();
    let mut ends = tool_ends(&out.events());
    ends.sort_by(|a, b| a.id.cmp(&b.id));
    assert!(
        ends[0].is_error && ends[0].text.contains("no answer within 3 s"),
        "{out}"
    );
    if long.is_some() {
        assert!(
            !ends[1].is_error && ends[1].text.contains("completed"),
            "{out}"
        );
    }
}

#[tokio::test]
async fn a_hook_adds_a_server_with_mcp_register_and_its_tools_are_gated_like_any() {
    use crate::common::hooks::{recorded, scripted, use_hooks};
    let agent = TestAgent::new();
    let server = fake(&[], json!({"exposure": "direct"}));
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "adder",
            json!({
                "subscriptions": [{"event": "session_start"}, {"event": "tool_call", "tools": ["mcp__fromhook__crash"]}],
                "on": {
                    "session_start": {"call": [
                        {"method": "mcp.register", "params": {"name": "fromhook", "server": server}},
                        {"method": "mcp.register", "params": {"name": "bad name!", "server": {"command": "x"}}}
                    ], "reply": {}},
                    "tool_call": {"reply": {"block": true, "reason": "not that one"}}
                }
            }),
        )],
    );
    let steps = json!([
        {"toolCalls": [
            {"name": "mcp__fromhook__ping", "arguments": {}},
            {"name": "mcp__fromhook__crash", "arguments": {}}
        ]},
        {"text": "done"}
    ]);
    let out = agent
        .run_faux(steps, &["--mode", "json", "--hook-events", "-p", "go"])
        .await;
    out.assert_ok();
    let mut ends = tool_ends(&out.events());
    ends.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(ends[0].text, "pong #1", "{out}");
    assert!(
        ends[1].is_error && ends[1].text.contains("not that one"),
        "{out}"
    );
    let results: Vec<Value> = recorded(&agent, "adder")
        .into_iter()
        .filter(|m| m["type"] == "result")
        .collect();
    assert!(
        results
            .iter()
            .any(|r| r["value"]["state"] == "connected" && r["value"]["tools"] == 5),
        "{results:?}"
    );
    assert!(
        results
            .iter()
            .any(|r| r["error"]["code"] == "invalid_params"),
        "a bad entry is refused: {results:?}"
    );
}

#[tokio::test]
async fn a_server_that_ignores_stdin_closing_and_sigterm_is_killed_at_exit() {
    let agent = TestAgent::new();
    let pidfile = agent.tmp.join("fake.pid");
    write_mcp(
        &agent,
        json!({"stubborn": fake(&["--stubborn", "--pidfile", &path_str(&pidfile)], json!({"exposure": "direct"}))}),
    );
    let out = agent
        .run_tools(
            json!([{"name": "mcp__stubborn__ping", "arguments": {}}]),
            &[],
        )
        .await;
    out.assert_ok();
    assert_eq!(tool_ends(&out.events())[0].text, "pong #1", "{out}");
    let pid = read_pid(&pidfile);
    assert!(process_gone(pid), "pi waited for it to die before exiting");
    let mcp_log = std::fs::read_to_string(agent.agent_dir.join("mcp.log")).unwrap_or_default();
    assert!(
        mcp_log.contains("[stubborn] killed by SIGKILL"),
        "{mcp_log}"
    );
}
