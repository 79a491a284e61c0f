//! Item 2: MCP tools in Claude Code's spelling, in `tool_name` and in matchers, both ways.

use std::path::Path;

use serde_json::{json, Value};

use super::{hook, py, seen, settings, FLAG};
use crate::common::hooks::run_pi;
use crate::common::mcp::{fake, log_lines, write_mcp};
use crate::common::{path_str, tool_ends, TestAgent};

/// The hyphenated stdio MCP server of these tests, its calls logged to `log`.
fn seq_think(agent: &TestAgent, log: &Path) {
    write_mcp(
        agent,
        json!({"seq-think": fake(&["--log", &path_str(log)], json!({"exposure": "direct"}))}),
    );
}

fn tools_called(log: &Path) -> Vec<Value> {
    log_lines(log)
        .into_iter()
        .filter(|m| m["method"] == "tools/call")
        .collect()
}

#[tokio::test]
async fn a_hyphenated_mcp_server_is_gated_by_a_matcher_in_claude_codes_spelling() {
    let agent = TestAgent::new();
    let log = agent.tmp.join("seq-think.log");
    seq_think(&agent, &log);
    // As a Claude Code user writes it: the server's own name, hyphen and all.
    py(
        &agent,
        "mcp_guard.py",
        r#"
print("MCP tool " + data["tool_name"] + " is not allowed here", file=sys.stderr)
sys.exit(2)
"#,
    );
    settings(
        &agent,
        json!({"PreToolUse": [{"matcher": "mcp__seq-think__.*", "hooks": [hook("mcp_guard.py")]}]}),
    );
    let out = agent
        .run_tools(
            json!([{"name": "mcp__seq_think__ping", "arguments": {}, "id": "m1"}]),
            &FLAG,
        )
        .await;
    out.assert_ok();
    let ends = tool_ends(&out.events());
    assert!(
        ends[0].is_error
            && ends[0]
                .text
                .contains("MCP tool mcp__seq-think__ping is not allowed here"),
        "the gate ran and blocked the call\n{out}"
    );
    assert!(tools_called(&log).is_empty(), "the server was never called");
    let seen = seen(&agent, "mcp_guard.py");
    assert_eq!(seen.len(), 1, "{out}");
    assert_eq!(seen[0]["tool_name"], "mcp__seq-think__ping");
    assert_eq!(seen[0]["tool_input"], json!({}));
    assert_eq!(seen[0]["tool_use_id"], "m1");
}

#[tokio::test]
async fn a_matcher_in_pis_spelling_still_gates_a_hyphenated_mcp_server() {
    let agent = TestAgent::new();
    let log = agent.tmp.join("seq-think.log");
    seq_think(&agent, &log);
    py(&agent, "pi_spelt_guard.py", "sys.exit(2)");
    settings(
        &agent,
        json!({"PreToolUse": [{"matcher": "^mcp__seq_think__ping$", "hooks": [hook("pi_spelt_guard.py")]}]}),
    );
    let out = agent
        .run_tools(
            json!([{"name": "mcp__seq_think__ping", "arguments": {}, "id": "m1"}]),
            &FLAG,
        )
        .await;
    out.assert_ok();
    assert!(tool_ends(&out.events())[0].is_error, "blocked\n{out}");
    assert!(tools_called(&log).is_empty(), "the server was never called");
    assert_eq!(
        seen(&agent, "pi_spelt_guard.py")[0]["tool_name"],
        "mcp__seq-think__ping"
    );
}

#[tokio::test]
async fn an_mcp_call_a_claude_code_hook_rewrites_runs_with_the_rewritten_arguments() {
    let agent = TestAgent::new();
    let log = agent.tmp.join("seq-think.log");
    seq_think(&agent, &log);
    // An exact name (no regex characters but the hyphen), as Claude Code matches it.
    py(
        &agent,
        "redirect.py",
        r#"
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
    "permissionDecision": "allow", "updatedInput": {"name": "PI_TEST_TARGET"}}}))
"#,
    );
    py(&agent, "after.py", "");
    settings(
        &agent,
        json!({
            "PreToolUse": [{"matcher": "mcp__seq-think__env_var", "hooks": [hook("redirect.py")]}],
            "PostToolUse": [{"matcher": "mcp__seq-think__env_var|Bash", "hooks": [hook("after.py")]}]
        }),
    );
    let mut agent = agent;
    agent.env("PI_TEST_TARGET", "rewritten-by-the-hook");
    let out = agent
        .run_tools(
            json!([{"name": "mcp__seq_think__env_var", "arguments": {"name": "HOME"}, "id": "m1"}]),
            &FLAG,
        )
        .await;
    out.assert_ok();
    let calls = tools_called(&log);
    assert_eq!(calls.len(), 1, "{out}");
    assert_eq!(calls[0]["params"]["name"], "env_var");
    assert_eq!(
        calls[0]["params"]["arguments"],
        json!({"name": "PI_TEST_TARGET"})
    );
    let ends = tool_ends(&out.events());
    assert!(!ends[0].is_error, "{out}");
    assert_eq!(
        seen(&agent, "redirect.py")[0]["tool_name"],
        "mcp__seq-think__env_var"
    );
    let after = seen(&agent, "after.py");
    assert_eq!(
        after.len(),
        1,
        "PostToolUse matched the same spelling\n{out}"
    );
    assert_eq!(after[0]["tool_name"], "mcp__seq-think__env_var");
    assert_eq!(after[0]["tool_input"], json!({"name": "PI_TEST_TARGET"}));
}

#[tokio::test]
async fn a_matcher_naming_an_mcp_server_pi_does_not_know_is_warned_about_at_start_up() {
    let agent = TestAgent::new();
    seq_think(&agent, &agent.tmp.join("seq-think.log"));
    py(&agent, "memory_guard.py", "");
    py(&agent, "think_guard.py", "");
    settings(
        &agent,
        json!({"PreToolUse": [
            {"matcher": "mcp__memory__.*", "hooks": [hook("memory_guard.py")]},
            {"matcher": "mcp__seq-think__.*", "hooks": [hook("think_guard.py")]},
            {"matcher": "^mcp__seq_think__ping$", "hooks": [hook("think_guard.py")]}]}),
    );
    let mut args = agent.faux_args(json!(["ok"]));
    args.extend(FLAG.iter().map(|s| s.to_string()));
    args.extend(["-p".to_string(), "hi".to_string()]);
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("MCP server"))
        .collect();
    assert_eq!(warnings.len(), 1, "only the unknown server\n{out}");
    let w = warnings[0];
    for part in [
        "claude:PreToolUse:memory_guard.py",
        "mcp__memory__.*",
        "\"memory\"",
        "seq-think",
    ] {
        assert!(w.contains(part), "{part:?} missing in {w:?}");
    }
}
