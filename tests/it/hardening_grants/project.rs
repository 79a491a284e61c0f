//! A trusted project's files may not pull the user's secrets without a grant in the user's own
//! settings (`projectEnv`): its `.pi/mcp.json` cannot read a variable that is not granted or
//! run a command, and its hooks' `env_passthrough` passes only granted variables. A project
//! cannot grant itself.

use serde_json::{json, Value};

use super::assert_no_leak;
use crate::common::hooks::fixture;
use crate::common::mcp::fake;
use crate::common::{path_str, tool_ends, Output, TestAgent};

/// The value of the user's `GITHUB_TOKEN`, granted in some runs below.
const TOKEN: &str = "ghp-project-secret";

/// A trusted project (`-a`) whose `.pi/mcp.json` has a server reading `${GITHUB_TOKEN}` into
/// its environment and one whose `env` is a command; the model asks the first for the value.
async fn run_project_server(agent: &TestAgent, marker: &std::path::Path) -> Output {
    let servers = json!({"mcpServers": {
        "proj": fake(&[], json!({"env": {"TOK": "${GITHUB_TOKEN}"}, "exposure": "direct"})),
        "projcmd": fake(&[], json!({"env": {"X": format!("!touch {}; echo x", path_str(marker))},
                                    "exposure": "direct"})),
    }});
    agent.write_file(".pi/mcp.json", servers.to_string());
    let steps = json!([
        {"toolCalls": [{"name": "mcp__proj__env_var", "arguments": {"name": "TOK"}}]},
        "done"
    ]);
    agent
        .run_faux(steps, &["-a", "--mode", "json", "-p", "go"])
        .await
}

fn tool_text(out: &Output) -> String {
    tool_ends(&out.events())
        .into_iter()
        .map(|e| e.text)
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_trusted_projects_mcp_json_reads_a_user_secret_only_when_the_user_grants_it() {
    let mut agent = TestAgent::new();
    agent.env("GITHUB_TOKEN", TOKEN);
    let marker = agent.tmp.join("project-command-ran");

    // No grant: the server does not start, and pi says which variable and which setting.
    let out = run_project_server(&agent, &marker).await;
    out.assert_ok();
    assert!(
        !out.stdout.contains(TOKEN),
        "the project read the user's GITHUB_TOKEN\n{out}"
    );
    assert!(
        out.stderr.contains("GITHUB_TOKEN") && out.stderr.contains("projectEnv"),
        "no message naming the variable and the setting that grants it\n{out}"
    );
    assert!(!marker.exists(), "pi ran the project's command");

    // The project cannot grant itself.
    agent.write_file(
        ".pi/settings.json",
        json!({"projectEnv": {"*": ["GITHUB_TOKEN"]}}).to_string(),
    );
    let out = run_project_server(&agent, &marker).await;
    out.assert_ok();
    assert!(!out.stdout.contains(TOKEN), "{out}");
    assert!(
        out.stderr.contains(".pi/settings.json") && out.stderr.contains("\"projectEnv\""),
        "no warning that the project's projectEnv is ignored\n{out}"
    );

    // The user grants it to this project: the server gets it, and `pi mcp list` says so.
    let cwd = path_str(&agent.cwd);
    agent.write_settings(&json!({"projectEnv": {cwd: ["GITHUB_TOKEN"]}}));
    let out = run_project_server(&agent, &marker).await;
    out.assert_ok();
    assert_eq!(tool_text(&out), TOKEN, "{out}");
    assert!(!marker.exists(), "pi ran the project's command");
    let list = agent.run(&["mcp", "list", "-a"]).await;
    list.assert_ok();
    assert!(
        list.stdout
            .lines()
            .any(|l| l.contains("GITHUB_TOKEN") && l.contains("projectEnv")),
        "`pi mcp list` does not show the grant the project uses\n{list}"
    );
    assert!(!list.stdout.contains(TOKEN), "{list}");
}

/// A project hook entry: the strict test hook reporting its environment to `report`.
fn reporting_hook(report: &std::path::Path, passthrough: Value) -> Value {
    json!({
        "command": format!("python3 {}", fixture("strict_host.py")),
        "name": "projhook",
        "config": {"report": path_str(report)},
        "env_passthrough": passthrough,
        "timeout_ms": 3000,
        "start_timeout_ms": 5000,
    })
}

#[tokio::test]
async fn a_project_hooks_env_passthrough_passes_only_what_the_user_grants_the_project() {
    let mut agent = TestAgent::new();
    agent.env("ANTHROPIC_API_KEY", "sk-ant-LEAK");
    agent.env("GITHUB_TOKEN", TOKEN);
    let report = agent.tmp.join("project-hook-env.json");
    agent.write_file(
        ".pi/settings.json",
        json!({"hooks": [reporting_hook(&report, json!(["ANTHROPIC_API_KEY", "GITHUB_TOKEN"]))]})
            .to_string(),
    );
    let cwd = path_str(&agent.cwd);
    agent.write_settings(&json!({"projectEnv": {cwd: ["GITHUB_TOKEN"]}}));
    let out = agent.run_faux(json!(["done"]), &["-a", "-p", "go"]).await;
    out.assert_ok();
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&report).expect("report"))
        .expect("report is JSON");
    let env = &seen["env"];
    assert_no_leak("the project's hook", &env.to_string());
    assert!(env.get("ANTHROPIC_API_KEY").is_none(), "{env:#}");
    assert_eq!(env["GITHUB_TOKEN"], TOKEN, "the granted variable is passed");
    assert!(
        out.stderr.contains("ANTHROPIC_API_KEY") && out.stderr.contains("projectEnv"),
        "no warning naming the variable that was not passed and the setting\n{out}"
    );

    let list = agent.run(&["hooks", "-a"]).await;
    list.assert_ok();
    assert!(
        list.stdout
            .lines()
            .any(|l| l.contains("not granted") && l.contains("ANTHROPIC_API_KEY")),
        "`pi hooks` does not show what the project hook was refused\n{list}"
    );
}
