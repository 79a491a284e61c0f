//! Item 1: tool filters are globs compiled once at `register` (`{a,b}` alternation included),
//! a filter that cannot compile or can never match is a start failure that says which filter
//! and why, `pi hook check` shows what each filter matches among the built-ins, and a hook's
//! `deadline_ms` never makes the host wait longer than the entry's event timeout.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{
    assert_start_failure_reported, gate, gate_config, managed, run_bash, run_print, strict, NO, RAN,
};
use crate::common::hooks::{fixture, hook_errors, run_json, run_pi, use_hooks};
use crate::common::{only_tool_end, tool_ends, TestAgent};

#[tokio::test]
async fn an_alternation_filter_gates_every_tool_it_names() {
    let agent = TestAgent::new();
    use_hooks(&agent, vec![gate(json!(["{bash,write}"]))]);
    let calls = json!([
        {"name": "bash", "arguments": {"command": format!("touch {RAN}")}, "id": "c1"},
        {"name": "write", "arguments": {"path": "written.txt", "content": "x"}, "id": "c2"},
        {"name": "ls", "arguments": {}, "id": "c3"},
    ]);
    let (out, events) = run_json(&agent, json!([{"toolCalls": calls}, "final text"]), &[]).await;
    out.assert_ok();
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 3, "{out}");
    for end in &ends {
        let gated = end.is_error && end.text == NO;
        assert_eq!(gated, end.name != "ls", "{}: {}\n{out}", end.name, end.text);
    }
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
    assert!(!agent.cwd.join("written.txt").exists(), "write ran\n{out}");
}

#[tokio::test]
async fn tool_filters_are_case_sensitive() {
    let agent = TestAgent::new();
    use_hooks(&agent, vec![gate(json!(["Bash", "BASH*"]))]);
    let (out, _) = run_bash(&agent).await;
    out.assert_ok();
    assert!(
        agent.cwd.join(RAN).exists(),
        "\"Bash\" gated bash: filters are case-sensitive\n{out}"
    );
    use_hooks(&agent, vec![gate(json!(["Bash", "b[a]sh"]))]);
    let (out, _) = run_bash(&agent).await;
    assert!(only_tool_end(&out).text == NO, "{out}");
}

#[tokio::test]
async fn a_filter_that_cannot_compile_or_never_matches_stops_the_hook_from_starting() {
    let cases = [
        (json!(["[bash"]), "\"[bash\" is not a valid glob"),
        (
            json!(["bash", ""]),
            "\"\" can never match a tool name: it is empty",
        ),
        (
            json!(["  "]),
            "\"  \" can never match a tool name: it contains whitespace",
        ),
        (
            json!(["bash, write"]),
            "\"bash, write\" can never match a tool name: it contains whitespace",
        ),
        (
            json!(["bash,write"]),
            "\"bash,write\" can never match a tool name: a comma outside `{…}`",
        ),
        (json!([]), "an empty list of tool filters matches no tool"),
    ];
    for (filter, why) in cases {
        let agent = TestAgent::new();
        use_hooks(&agent, vec![gate(filter.clone())]);
        let out = run_print(&agent).await;
        assert_start_failure_reported(
            &agent,
            &out,
            &["hook guard", "subscription to tool_call", why],
        );
    }
}

#[tokio::test]
async fn a_managed_hook_with_a_bad_filter_blocks_every_tool() {
    let mut agent = TestAgent::new();
    managed(&mut agent, json!({"hooks": [gate(json!(["{bash,write"]))]}));
    let (out, events) = run_bash(&agent).await;
    out.assert_ok();
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 1, "{out}");
    assert!(
        ends[0].is_error
            && ends[0]
                .text
                .starts_with("Blocked: policy degraded: managed hook guard is not running: ")
            && ends[0].text.contains("\"{bash,write\" is not a valid glob"),
        "{out}"
    );
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
}

/// `pi hook check` runs the strict hook configured through its argument.
async fn hook_check(agent: &TestAgent, config: serde_json::Value) -> crate::common::Output {
    let cmd = format!("python3 {} '{}'", fixture("strict_host.py"), config);
    run_pi(agent, &["hook", "check", cmd.as_str()]).await
}

#[tokio::test]
async fn hook_check_shows_the_built_in_tools_each_filter_matches() {
    let agent = TestAgent::new();
    let config = json!({"register": {"subscriptions": [
        {"event": "tool_call", "tools": ["{bash,write}", "mcp__*", "Bash"]},
        {"event": "tool_result", "tools": ["*"]},
    ]}});
    let out = hook_check(&agent, config).await;
    out.assert_ok();
    let line = |needle: &str| {
        out.stdout
            .lines()
            .find(|l| l.starts_with("PASS") && l.contains(needle))
            .unwrap_or_else(|| panic!("no PASS row for {needle}\n{out}"))
            .to_string()
    };
    assert!(
        line("tool_call filter {bash,write}").ends_with("matches bash, write"),
        "{out}"
    );
    assert!(
        line("tool_call filter mcp__*").contains("matches none of the built-ins"),
        "{out}"
    );
    assert!(
        line("tool_call filter Bash").contains("filters are case-sensitive"),
        "{out}"
    );
    assert!(
        line("tool_result filter *").ends_with("matches read, bash, edit, write, grep, find, ls"),
        "{out}"
    );

    let bad = hook_check(&agent, gate_config(json!(["[bash"]))).await;
    bad.assert_code(1);
    assert!(
        bad.stdout.lines().any(|l| l.starts_with("FAIL")
            && l.contains("starts and registers")
            && l.contains("\"[bash\" is not a valid glob")),
        "{bad}"
    );
}

#[tokio::test]
async fn a_subscription_deadline_never_exceeds_the_entry_timeout() {
    let agent = TestAgent::new();
    let mut entry = strict(
        "guard",
        json!({
            "register": {"subscriptions": [
                {"event": "tool_call", "tools": ["bash"], "deadline_ms": 60000}]},
            "on": {"tool_call": null},
        }),
    );
    entry["timeout_ms"] = json!(300);
    use_hooks(&agent, vec![entry]);
    let t0 = Instant::now();
    let (out, events) = run_bash(&agent).await;
    let took = t0.elapsed();
    out.assert_ok();
    assert!(
        took < Duration::from_secs(10),
        "the host waited for the hook's 60 s deadline ({took:?})\n{out}"
    );
    let errors = hook_errors(&events);
    assert!(
        errors
            .iter()
            .any(|e| e["kind"] == "timeout"
                && e["message"] == "hook guard did not reply within 300 ms"),
        "{errors:?}"
    );
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
}

#[tokio::test]
async fn a_zero_deadline_is_a_register_error() {
    let agent = TestAgent::new();
    use_hooks(
        &agent,
        vec![strict(
            "guard",
            json!({"register": {"subscriptions": [{"event": "tool_call", "deadline_ms": 0}]}}),
        )],
    );
    let out = run_print(&agent).await;
    assert_start_failure_reported(
        &agent,
        &out,
        &[
            "hook guard",
            "subscription to tool_call",
            "deadline_ms of 0",
        ],
    );
}
