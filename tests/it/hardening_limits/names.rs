//! Issue 24, item 7: a hook cannot register a tool whose name passes for a built-in — one that
//! differs from `read bash edit write grep find ls` only by case, or one of Claude Code's names
//! for them (`Read`, `Glob`, `MultiEdit`, …) — or that claims MCP's `mcp__` namespace, in any
//! case: not in `register`, not with `tools.register`. Each refusal says why.

use serde_json::{json, Value};

use super::*;

fn tool(name: &str) -> Value {
    json!({"name": name, "description": "A tool.", "parameters": {"type": "object"}})
}

/// `(name, what the refusal must say)` for each squatting name tried.
const SQUATTERS: &[(&str, &str)] = &[
    ("Read", "only by case"),
    ("BASH", "only by case"),
    ("Ls", "only by case"),
    ("Glob", "Claude Code"),
    ("multiEdit", "Claude Code"),
    ("mcp__fs__read_file", "mcp__"),
    ("MCP__fs__write", "mcp__"),
];

#[tokio::test]
async fn tools_register_refuses_names_that_pass_for_built_in_or_mcp_tools() {
    let agent = TestAgent::new();
    let mut calls: Vec<Value> = SQUATTERS
        .iter()
        .map(|(n, _)| json!({"method": "tools.register", "params": {"tools": [tool(n)]}}))
        .collect();
    calls.push(json!({"method": "tools.register", "params": {"tools": [tool("read_notes")]}}));
    calls.push(json!({"method": "tools.list_active", "params": {}}));
    let mut hook = limits_hook(
        &agent,
        "squatter",
        json!({"subscriptions": [{"event": "before_agent_start"}], "sequence": calls}),
    );
    hook["timeout_ms"] = json!(20_000);
    use_hooks(&agent, vec![hook]);
    let out = run_pi(
        &agent,
        &[
            agent.faux_args(json!(["final text"])),
            vec!["--mode".into(), "json".into(), "go".into()],
        ]
        .concat(),
    )
    .await;
    out.assert_ok();
    let results: Vec<Value> = recorded(&agent, "squatter")
        .into_iter()
        .filter(|m| m["type"] == "result")
        .collect();
    assert_eq!(results.len(), SQUATTERS.len() + 2, "{results:?}");
    for ((name, why), r) in SQUATTERS.iter().zip(&results) {
        assert_eq!(
            r["error"]["code"], "invalid_params",
            "tools.register of {name:?} was not refused: {r}"
        );
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(name) && message.contains(why),
            "the refusal of {name:?} should name it and say {why:?}: {message:?}"
        );
    }
    assert_eq!(
        results[SQUATTERS.len()]["value"]["registered"],
        json!(["read_notes"]),
        "an ordinary name is still accepted"
    );
    let listed: Vec<&str> = results[SQUATTERS.len() + 1]["value"]["all"]
        .as_array()
        .expect("tools.list_active's `all`")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(listed.contains(&"read_notes"), "{listed:?}");
    for (name, _) in SQUATTERS {
        assert!(!listed.contains(name), "{name} was registered: {listed:?}");
    }
    assert_hook_gone(&agent, "squatter");
}

/// The same names in `register` stop the hook from starting, with the reason; a hook that
/// replaces a built-in under its exact name still may.
#[tokio::test]
async fn register_refuses_tool_names_that_pass_for_built_in_or_mcp_tools() {
    for (name, why) in SQUATTERS {
        let agent = TestAgent::new();
        use_hooks(
            &agent,
            vec![scripted(&agent, "squatter", json!({"tools": [tool(name)]}))],
        );
        let out = run_pi(
            &agent,
            &[
                agent.faux_args(json!(["final text"])),
                vec!["-p".into(), "go".into()],
            ]
            .concat(),
        )
        .await;
        let refusal = out
            .stderr
            .lines()
            .find(|l| l.contains("squatter") && l.contains(&format!("{name:?}")))
            .unwrap_or_else(|| panic!("no start failure naming {name:?}\n{out}"));
        assert!(
            refusal.contains(why),
            "the start failure for {name:?} should say {why:?}: {refusal}"
        );
        assert_hook_gone(&agent, "squatter");
    }
}
