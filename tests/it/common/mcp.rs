//! MCP test support: where the pinned reference servers are (installed by `.ci/run` into
//! `tests/mcp-servers`), `mcp.json` entries for them and for the misbehaving stdlib server
//! `fixtures/mcp/fake_server.py`.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::{path_str, write_json, TestAgent};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The entry script of an installed reference server package, or `None` (the test skips)
/// when the packages are not installed — which `.ci/run` turns into a failure by setting
/// `PI_MCP_SERVERS_REQUIRED`.
pub fn reference_server(package: &str) -> Option<PathBuf> {
    let p = repo()
        .join("tests/mcp-servers/node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    if p.is_file() {
        return Some(p);
    }
    let how = "npm ci --prefix tests/mcp-servers --ignore-scripts";
    if std::env::var_os("PI_MCP_SERVERS_REQUIRED").is_some() {
        panic!("{} is missing: run `{how}`", p.display());
    }
    eprintln!("skipped: {} is not installed (run `{how}`)", p.display());
    None
}

/// `server-everything` over stdio, with `extra` keys merged into the entry.
pub fn everything(extra: Value) -> Option<Value> {
    let js = reference_server("server-everything")?;
    let mut entry = json!({"command": "node", "args": [path_str(&js), "stdio"]});
    merge(&mut entry, extra);
    Some(entry)
}

/// The fake server with `args`, logging what it receives to `log` (a path) and its pid to
/// `pidfile`.
pub fn fake(args: &[&str], extra: Value) -> Value {
    let script = repo().join("fixtures/mcp/fake_server.py");
    let mut all = vec![path_str(&script)];
    all.extend(args.iter().map(|a| a.to_string()));
    let mut entry = json!({"command": "python3", "args": all});
    merge(&mut entry, extra);
    entry
}

fn merge(entry: &mut Value, extra: Value) {
    if let (Some(e), Value::Object(x)) = (entry.as_object_mut(), extra) {
        e.extend(x);
    }
}

/// Write the user's `mcp.json`.
pub fn write_mcp(agent: &TestAgent, servers: Value) {
    write_json(
        &agent.agent_dir.join("mcp.json"),
        &json!({ "mcpServers": servers }),
    );
}

/// The lines of the fake server's log as JSON.
pub fn log_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
