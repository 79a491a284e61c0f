//! Item 6: every variable pi's own configuration reads as a credential — in models.json and
//! auth.json, in the user's and a trusted project's mcp.json, in what hooks register — is
//! kept from the model's shell, and from MCP servers that do not ask for it themselves.

use std::collections::BTreeMap;

use serde_json::json;

use super::{assert_no_leak, call, registrar};
use crate::common::mcp::{fake, write_mcp};
use crate::common::{tool_ends, TestAgent};

/// Names that match none of the default patterns (`KEY`, `SECRET`, `TOKEN`, `PASSWORD`): only
/// pi's knowledge of its configuration can keep them from the shell.
const CREDENTIALS: [(&str, &str); 4] = [
    ("GITHUB_PAT", "pat-user-mcp-LEAK"),
    ("CORP_DB_CRED", "db-user-mcp-LEAK"),
    ("PROJECT_CRED", "project-mcp-LEAK"),
    ("TEAM_CRED", "team-hook-LEAK"),
];

#[tokio::test]
async fn variables_pis_configuration_reads_as_credentials_never_reach_the_models_shell() {
    let mut agent = TestAgent::new();
    for (k, v) in CREDENTIALS {
        agent.env(k, v);
    }
    agent.env("PLAIN_SETTING", "plain-visible");
    write_mcp(
        &agent,
        json!({
            // A header credential of a server that is off today still is one.
            "gh": {"type": "http", "url": "http://127.0.0.1:9/mcp", "enabled": false,
                   "headers": {"Authorization": "Bearer ${GITHUB_PAT}"}},
            "db": fake(&[], json!({"env": {"DB": "${CORP_DB_CRED}"}, "exposure": "direct"})),
        }),
    );
    agent.write_file(
        ".pi/mcp.json",
        json!({"mcpServers": {"proj": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                                       "enabled": false,
                                       "headers": {"x-proj": "${PROJECT_CRED}"}}}})
        .to_string(),
    );
    let cwd = crate::common::path_str(&agent.cwd);
    let mut hook = registrar(
        &agent,
        "team",
        vec![call(
            "provider.register",
            json!({"name": "team", "baseUrl": "http://127.0.0.1:9/v1",
                   "api": "openai-completions", "apiKey": "$TEAM_CRED",
                   "models": [{"id": "m"}]}),
        )],
        json!({}),
    );
    hook["env_passthrough"] = json!(["TEAM_CRED"]);
    let mut settings = json!({"hooks": [hook], "projectEnv": {}});
    settings["projectEnv"][cwd] = json!(["PROJECT_CRED"]);
    agent.write_settings(&settings);
    let steps = json!([
        {"toolCalls": [
            {"name": "bash", "arguments": {"command": "env"}, "id": "sh"},
            {"name": "mcp__db__env_var", "arguments": {"name": "GITHUB_PAT"}, "id": "db"}
        ]},
        "done"
    ]);
    let out = agent
        .run_faux(steps, &["-a", "--mode", "json", "-p", "go"])
        .await;
    out.assert_ok();
    let ends = tool_ends(&out.events());
    let shell = ends.iter().find(|e| e.id == "sh").expect("bash ran");
    let env: BTreeMap<&str, &str> = shell
        .text
        .lines()
        .filter_map(|l| l.split_once('='))
        .collect();
    for (name, _) in CREDENTIALS {
        assert!(
            !env.contains_key(name),
            "the model's shell sees {name}\n{}",
            shell.text
        );
    }
    assert_no_leak("the model's shell", &shell.text);
    assert_eq!(env.get("PLAIN_SETTING"), Some(&"plain-visible"));
    // An MCP server gets the same filtered environment plus only its own `env`.
    let db = ends.iter().find(|e| e.id == "db").expect("the server ran");
    assert_eq!(db.text, "(unset)", "{out}");
}
