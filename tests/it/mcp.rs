//! MCP through the real binary against the pinned reference servers (`tests/mcp-servers`):
//! tools declared under normalised names, deferred tools found by `tool_search`, images,
//! structured content, resource links, resources, progress, streamable HTTP, a gate hook on an
//! MCP tool, and a project's `mcp.json` ignored until the project is trusted.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::hooks::{scripted, use_hooks};
use crate::common::mcp::{everything, write_mcp};
use crate::common::{of_type, tool_ends, MockModel, TestAgent, Turn};

/// Tool results in call order (they end in completion order).
fn ends_in_call_order(out: &crate::common::Output) -> Vec<crate::common::ToolEnd> {
    let mut ends = tool_ends(&out.events());
    ends.sort_by(|a, b| a.id.cmp(&b.id));
    ends
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn system_prompt(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn direct_tools_reach_the_model_under_normalised_names_and_answer() {
    let Some(entry) = everything(json!({"exposure": "direct"})) else {
        return;
    };
    let mock = MockModel::start(vec![
        Turn::tools(&[("mcp__everything__get_sum", json!({"a": 2, "b": 40}))]),
        Turn::text("done"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    write_mcp(&agent, json!({ "everything": entry }));
    let out = agent
        .run(&[
            "--model",
            "mock/mock-model",
            "--mode",
            "json",
            "--hook-events",
            "-p",
            "add",
        ])
        .await;
    out.assert_ok();
    let first = &mock.bodies()[0];
    let names = tool_names(first);
    assert!(
        names.contains(&"mcp__everything__get_sum".to_string()),
        "the first request declares the server's tools (get-sum normalised): {names:?}\n{out}"
    );
    let spec = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__everything__get_sum")
        .unwrap();
    assert!(
        spec["function"]["parameters"]["properties"]["a"].is_object(),
        "the server's input schema: {spec}"
    );
    assert!(
        system_prompt(first).contains("</cwd>\n\n<mcp_servers>\nConnected MCP servers")
            && system_prompt(first).contains("everything ("),
        "the system prompt lists the server:\n{}",
        system_prompt(first)
    );
    let ends = tool_ends(&out.events());
    assert_eq!(ends.len(), 1, "{out}");
    assert!(!ends[0].is_error, "{out}");
    assert_eq!(ends[0].text, "The sum of 2 and 40 is 42.");
    let events = out.events();
    let states: Vec<&str> = of_type(&events, "mcp_server")
        .iter()
        .filter_map(|e| e["state"].as_str())
        .collect();
    assert!(states.contains(&"connected"), "{states:?}");
}

#[tokio::test]
async fn deferred_tools_are_declared_only_after_tool_search_finds_them() {
    // No exposure: pi's default (codemode) is deferred here.
    let Some(entry) = everything(json!({})) else {
        return;
    };
    let mock = MockModel::start(vec![
        Turn::tools(&[("tool_search", json!({"query": "sum of two numbers"}))]),
        Turn::tools(&[("mcp__everything__get_sum", json!({"a": 1, "b": 2}))]),
        Turn::text("done"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    write_mcp(&agent, json!({ "everything": entry }));
    let out = agent
        .run(&[
            "--model",
            "mock/mock-model",
            "--mode",
            "json",
            "--hook-events",
            "-p",
            "add",
        ])
        .await;
    out.assert_ok();
    let bodies = mock.bodies();
    let before = tool_names(&bodies[0]);
    assert!(before.contains(&"tool_search".to_string()), "{before:?}");
    assert!(
        !before.iter().any(|n| n.starts_with("mcp__")),
        "deferred tools are not declared at first: {before:?}"
    );
    let after = tool_names(&bodies[1]);
    assert!(
        after.contains(&"mcp__everything__get_sum".to_string()),
        "tool_search activated get-sum for the next request: {after:?}"
    );
    let ends = tool_ends(&out.events());
    assert!(
        ends[0].text.contains("mcp__everything__get_sum"),
        "{}",
        ends[0].text
    );
    assert_eq!(ends[1].text, "The sum of 1 and 2 is 3.", "{out}");
    assert!(
        system_prompt(&bodies[0]).contains("tool_search"),
        "the prompt says how to reach deferred tools"
    );
}

#[tokio::test]
async fn a_deferred_tool_called_without_search_is_not_found() {
    let Some(entry) = everything(json!({})) else {
        return;
    };
    let agent = TestAgent::new();
    write_mcp(&agent, json!({ "everything": entry }));
    let out = agent
        .run_tools(
            json!([{"name": "mcp__everything__echo", "arguments": {"message": "hi"}}]),
            &[],
        )
        .await;
    out.assert_ok();
    let end = &tool_ends(&out.events())[0];
    assert!(end.is_error && end.text.contains("not found"), "{out}");
}

#[tokio::test]
async fn results_carry_images_structured_content_and_resource_links() {
    let Some(entry) = everything(json!({"exposure": "direct"})) else {
        return;
    };
    let agent = TestAgent::new();
    write_mcp(&agent, json!({ "everything": entry }));
    let out = agent
        .run_tools(
            json!([
                {"name": "mcp__everything__get_tiny_image", "arguments": {}},
                {"name": "mcp__everything__get_structured_content", "arguments": {"location": "Chicago"}},
                {"name": "mcp__everything__get_resource_links", "arguments": {"count": 2}}
            ]),
            &[],
        )
        .await;
    out.assert_ok();
    let events = out.events();
    let mut ends = of_type(&events, "tool_execution_end");
    ends.sort_by_key(|e| e["toolCallId"].as_str().unwrap_or_default().to_string());
    assert_eq!(ends.len(), 3, "{out}");
    let image = &ends[0]["result"]["content"];
    assert!(
        image
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "image" && b["mimeType"] == "image/png"),
        "the image reaches pi as an image block: {image}"
    );
    let structured = &ends[1]["result"]["details"]["structuredContent"];
    assert!(structured["temperature"].is_number(), "{}", ends[1]);
    let links = crate::common::blocks_text(&ends[2]["result"]["content"]);
    assert_eq!(
        links.matches("[resource link: demo://resource/").count(),
        2,
        "{links}"
    );
}

#[tokio::test]
async fn progress_notifications_become_tool_updates() {
    let Some(entry) = everything(json!({"exposure": "direct"})) else {
        return;
    };
    let agent = TestAgent::new();
    write_mcp(&agent, json!({ "everything": entry }));
    let out = agent
        .run_tools(
            json!([{"name": "mcp__everything__trigger_long_running_operation", "arguments": {"duration": 1, "steps": 3}}]),
            &[],
        )
        .await;
    out.assert_ok();
    let events = out.events();
    let updates: Vec<String> = of_type(&events, "tool_execution_update")
        .iter()
        .map(|u| crate::common::blocks_text(&u["partialResult"]["content"]))
        .collect();
    assert!(
        updates.iter().any(|u| u == "progress 1/3"),
        "progress arrives as updates: {updates:?}\n{out}"
    );
    assert!(!tool_ends(&events)[0].is_error, "{out}");
}

#[tokio::test]
async fn resources_are_listed_and_read() {
    let Some(entry) = everything(json!({})) else {
        return;
    };
    let agent = TestAgent::new();
    write_mcp(&agent, json!({ "everything": entry }));
    let out = agent
        .run_tools(
            json!([
                {"name": "list_mcp_resources", "arguments": {}},
                {"name": "list_mcp_resource_templates", "arguments": {"server": "everything"}},
                {"name": "read_mcp_resource", "arguments": {"server": "everything", "uri": "demo://resource/static/document/features.md"}},
                {"name": "read_mcp_resource", "arguments": {"server": "nowhere", "uri": "x://y"}}
            ]),
            &[],
        )
        .await;
    out.assert_ok();
    let ends = ends_in_call_order(&out);
    assert!(
        ends[0]
            .text
            .contains("everything: demo://resource/static/document/features.md"),
        "{}",
        ends[0].text
    );
    assert!(
        ends[1].text.contains("demo://resource/dynamic/"),
        "{}",
        ends[1].text
    );
    assert!(
        !ends[2].is_error && ends[2].text.len() > 100,
        "{}",
        ends[2].text
    );
    assert!(
        ends[3].is_error && ends[3].text.contains("no MCP server named \"nowhere\""),
        "{}",
        ends[3].text
    );
}

#[tokio::test]
async fn a_gate_hook_blocks_an_mcp_tool_by_its_filter() {
    let Some(entry) = everything(json!({"exposure": "direct"})) else {
        return;
    };
    let agent = TestAgent::new();
    write_mcp(&agent, json!({ "everything": entry }));
    use_hooks(
        &agent,
        vec![scripted(
            &agent,
            "gate",
            json!({"subscriptions": [{"event": "tool_call", "tools": ["mcp__everything__get_*"]}],
                   "on": {"tool_call": {"reply": {"block": true, "reason": "no remote sums"}}}}),
        )],
    );
    let out = agent
        .run_tools(
            json!([
                {"name": "mcp__everything__get_sum", "arguments": {"a": 1, "b": 1}},
                {"name": "mcp__everything__echo", "arguments": {"message": "through"}}
            ]),
            &[],
        )
        .await;
    out.assert_ok();
    let ends = ends_in_call_order(&out);
    assert!(
        ends[0].is_error && ends[0].text.contains("no remote sums"),
        "{out}"
    );
    assert!(
        !ends[1].is_error && ends[1].text.contains("through"),
        "the filter does not match echo: {out}"
    );
    let asked = crate::common::hooks::recorded_events(&agent, "gate", "tool_call");
    assert_eq!(asked.len(), 1, "only the filtered tool is asked: {asked:?}");
}

#[tokio::test]
async fn a_project_mcp_json_is_ignored_until_the_project_is_trusted() {
    let Some(entry) = everything(json!({"exposure": "direct"})) else {
        return;
    };
    let agent = TestAgent::new();
    agent.write_file(
        ".pi/mcp.json",
        serde_json::to_vec(&json!({"mcpServers": {"proj": entry}})).unwrap(),
    );
    let call = json!([{"name": "mcp__proj__echo", "arguments": {"message": "hi"}}]);
    let untrusted = agent.run_tools(call.clone(), &[]).await;
    untrusted.assert_ok();
    let end = &tool_ends(&untrusted.events())[0];
    assert!(
        end.is_error && end.text.contains("not found"),
        "{untrusted}"
    );
    assert!(
        of_type(&untrusted.events(), "mcp_server").is_empty(),
        "no server started: {untrusted}"
    );
    let trusted = agent.run_tools(call, &["--approve"]).await;
    trusted.assert_ok();
    let end = &tool_ends(&trusted.events())[0];
    assert!(!end.is_error && end.text.contains("hi"), "{trusted}");
}

/// A free port on loopback (bound, then released for the server to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

#[tokio::test]
async fn streamable_http_servers_are_called_like_stdio_ones() {
    use tokio::io::AsyncBufReadExt;
    let Some(js) = crate::common::mcp::reference_server("server-everything") else {
        return;
    };
    let port = free_port();
    let mut server = tokio::process::Command::new("node")
        .arg(&js)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start server-everything streamableHttp");
    let mut lines = tokio::io::BufReader::new(server.stderr.take().unwrap()).lines();
    let listening = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(l)) = lines.next_line().await {
            if l.contains("listening on port") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(listening, Ok(true), "the HTTP server did not start");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let agent = TestAgent::new();
    write_mcp(
        &agent,
        json!({"web": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp"), "exposure": "direct"}}),
    );
    let out = agent
        .run_tools(
            json!([{"name": "mcp__web__get_sum", "arguments": {"a": 20, "b": 22}}]),
            &[],
        )
        .await;
    out.assert_ok();
    assert_eq!(
        tool_ends(&out.events())[0].text,
        "The sum of 20 and 22 is 42.",
        "{out}"
    );
    let _ = server.kill().await;
}

#[tokio::test]
async fn the_filesystem_server_reads_and_writes_inside_its_roots_only() {
    let Some(js) = crate::common::mcp::reference_server("server-filesystem") else {
        return;
    };
    let agent = TestAgent::new();
    agent.write_file("notes.txt", "the project's notes\n");
    write_mcp(
        &agent,
        json!({"fs": {"command": "node", "args": [crate::common::path_str(&js), crate::common::path_str(&agent.cwd)], "exposure": "direct"}}),
    );
    let inside = crate::common::path_str(&agent.cwd.join("notes.txt"));
    let written = crate::common::path_str(&agent.cwd.join("out.txt"));
    let outside = crate::common::path_str(&agent.home.join("stolen.txt"));
    let out = agent
        .run_tools(
            json!([
                {"name": "mcp__fs__read_text_file", "arguments": {"path": inside}},
                {"name": "mcp__fs__write_file", "arguments": {"path": written, "content": "from pi"}},
                {"name": "mcp__fs__write_file", "arguments": {"path": outside, "content": "no"}}
            ]),
            &[],
        )
        .await;
    out.assert_ok();
    let ends = ends_in_call_order(&out);
    assert!(ends[0].text.contains("the project's notes"), "{out}");
    assert!(!ends[1].is_error, "{out}");
    assert_eq!(agent.read_string("out.txt"), "from pi");
    assert!(
        ends[2].is_error,
        "the server refuses a path outside its root: {out}"
    );
    assert!(!agent.home.join("stolen.txt").exists());
}
