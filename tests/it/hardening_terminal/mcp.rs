//! MCP: a server's name and version (`/mcp`), its tool's result and the tool call's
//! arguments in the transcript, and `pi mcp list` of an untrusted project's `.pi/mcp.json` —
//! as text, and as JSON that decodes to the same strings but holds no C1 byte.

use serde_json::{json, Value};

use super::*;
use crate::common::hooks::repo;
use crate::common::mcp::write_mcp;
use crate::common::{path_str, TestAgent};

fn escape_server(texts: Value) -> Value {
    let script = repo().join("fixtures/mcp/escape_server.py");
    json!({"command": "python3", "args": [path_str(&script), texts.to_string()],
           "exposure": "direct"})
}

#[test]
fn an_mcp_servers_name_version_and_results_are_shown_not_obeyed() {
    let agent = TestAgent::new();
    write_mcp(
        &agent,
        json!({"evil": escape_server(json!({
            "name": payload("srv"), "version": format!("v[{TITLE}]"), "result": payload("res"),
        }))}),
    );
    let steps = json!([
        {"toolCalls": [{"name": "mcp__evil__echo", "arguments": {"n": C1_CLEAR}}]},
        "Echoed."
    ]);
    let mut pi = agent.pty_faux(steps, 250, 50);
    pi.type_text("echo");
    pi.enter();
    let all = pi.wait_transcript("Echoed.");
    assert!(has_row(&all, &shown("res")), "the result: {all:#?}");
    // The arguments' JSON shows the C1 control escaped, as JSON writes other controls.
    assert!(
        has_row(&all, r#"mcp__evil__echo {"n":"\u009b2J"}"#),
        "the arguments: {all:#?}"
    );
    pi.type_text("/mcp");
    pi.enter();
    pi.wait_transcript(&format!("[{} v[␛]0;PWNED␇]]", shown("srv")));
    assert_pty_inert(&pi);
    pi.quit();
}

/// An untrusted project's servers, one carrying every payload in its command and arguments
/// and one whose name is not a valid server name.
fn untrusted_project(agent: &TestAgent) {
    let servers = json!({"mcpServers": {
        "evil": {"command": payload("cmd"), "args": [payload("arg")]},
        format!("bad{C1_CLEAR}name"): {"command": "true"},
    }});
    agent.write_file(".pi/mcp.json", ascii_json(&servers));
}

#[tokio::test]
async fn pi_mcp_list_of_an_untrusted_project_prints_no_sequence() {
    let agent = TestAgent::new();
    untrusted_project(&agent);
    let out = agent
        .command(&["mcp", "list"])
        .output()
        .await
        .expect("run pi mcp list");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("evil"), "{text}");
    assert!(text.contains(&sent("cmd")), "{text}");
    assert_plain_lines(&out.stdout);
    assert_plain_lines(&out.stderr);

    let out = agent
        .command(&["mcp", "list", "--json"])
        .output()
        .await
        .expect("run pi mcp list --json");
    assert_plain_lines(&out.stdout);
    assert_plain_lines(&out.stderr);
    // The same data: the escapes are JSON's, and decode to the project's own strings.
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(holds(&v, &payload("cmd")), "{v:#}");
}

/// Whether some string in `v` is `s`.
fn holds(v: &Value, s: &str) -> bool {
    match v {
        Value::String(t) => t == s,
        Value::Array(a) => a.iter().any(|x| holds(x, s)),
        Value::Object(o) => o.values().any(|x| holds(x, s)),
        _ => false,
    }
}
