//! `pi mcp list|get|add|add-json|remove` through the real binary, in hermetic homes: the user's
//! `mcp.json` (in `PI_CODING_AGENT_DIR`) and the project's `.pi/mcp.json` edited without a
//! session, nothing else in the files lost, nothing written when the entry or the file is bad,
//! literal secrets masked in the text, and the project's entries shown as ignored until the
//! project is trusted.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::common::hooks::{record_file, scripted, use_hooks};
use crate::common::{path_str, Output, TestAgent};

fn user_file(agent: &TestAgent) -> PathBuf {
    agent.agent_dir.join("mcp.json")
}

fn project_file(agent: &TestAgent) -> PathBuf {
    agent.cwd.join(".pi").join("mcp.json")
}

fn read_json(p: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .expect("the file is JSON")
}

async fn mcp(agent: &TestAgent, args: &[&str]) -> Output {
    let mut all = vec!["mcp"];
    all.extend_from_slice(args);
    agent.run(&all).await
}

/// `pi mcp list --json`'s servers as (name, scope, status).
async fn statuses(agent: &TestAgent, extra: &[&str]) -> Vec<(String, String, String)> {
    let mut args = vec!["list", "--json"];
    args.extend_from_slice(extra);
    let out = mcp(agent, &args).await;
    out.assert_ok();
    let v: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{out}"));
    v["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .map(|s| {
            let f = |k: &str| s[k].as_str().unwrap_or_default().to_string();
            (f("name"), f("scope"), f("status"))
        })
        .collect()
}

fn row(name: &str, scope: &str, status: &str) -> (String, String, String) {
    (name.into(), scope.into(), status.into())
}

fn trust_project(agent: &TestAgent) {
    std::fs::write(
        agent.agent_dir.join("trust.json"),
        json!({ path_str(&agent.cwd): true }).to_string(),
    )
    .unwrap();
}

#[tokio::test]
async fn add_list_get_remove_round_trip_in_user_and_project_scope() {
    let agent = TestAgent::new();
    let out = mcp(
        &agent,
        &[
            "add",
            "fs",
            "--env",
            "TOKEN=${GH_TOKEN}",
            "--timeout",
            "90",
            "--",
            "npx",
            "-y",
            "server-fs",
            "/tmp/a b",
        ],
    )
    .await;
    out.assert_ok();
    assert!(
        out.stdout.contains("\"fs\"") && out.stdout.contains(&path_str(&user_file(&agent))),
        "the line says what was written where\n{out}"
    );
    let out = mcp(
        &agent,
        &[
            "add",
            "--scope",
            "project",
            "web",
            "https://example.com/mcp",
            "--header",
            "Authorization: Bearer ${API_TOKEN}",
            "--exposure",
            "direct",
        ],
    )
    .await;
    out.assert_ok();
    assert!(
        out.stdout.contains(&path_str(&project_file(&agent))),
        "{out}"
    );
    assert!(
        out.stderr.contains("ignored until this project is trusted"),
        "adding to an untrusted project says it is not used yet\n{out}"
    );
    assert_eq!(
        read_json(&user_file(&agent)),
        json!({"mcpServers": {"fs": {
            "command": "npx", "args": ["-y", "server-fs", "/tmp/a b"],
            "env": {"TOKEN": "${GH_TOKEN}"}, "timeout": 90000}}})
    );
    assert_eq!(
        read_json(&project_file(&agent)),
        json!({"mcpServers": {"web": {
            "type": "http", "url": "https://example.com/mcp",
            "headers": {"Authorization": "Bearer ${API_TOKEN}"}, "exposure": "direct"}}})
    );

    let out = mcp(&agent, &["list"]).await;
    out.assert_ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    let fs = lines.iter().find(|l| l.starts_with("fs ")).expect("fs row");
    for part in [
        "user",
        "enabled",
        "deferred",
        "90s",
        "npx -y server-fs '/tmp/a b'",
    ] {
        assert!(fs.contains(part), "{part} missing in {fs:?}\n{out}");
    }
    let web = lines
        .iter()
        .find(|l| l.starts_with("web "))
        .expect("web row");
    for part in [
        "project",
        "ignored",
        "direct",
        "60s",
        "https://example.com/mcp",
    ] {
        assert!(web.contains(part), "{part} missing in {web:?}\n{out}");
    }

    let out = mcp(&agent, &["get", "web", "--json"]).await;
    out.assert_ok();
    let web: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert_eq!(web["scope"], "project");
    assert_eq!(web["status"], "ignored");
    assert_eq!(web["transport"], "http");
    assert_eq!(web["url"], "https://example.com/mcp");
    assert_eq!(web["exposure"], "direct");
    assert_eq!(web["timeoutMs"], 60000);
    assert_eq!(web["headers"]["Authorization"], "Bearer ${API_TOKEN}");
    let out = mcp(&agent, &["get", "fs"]).await;
    out.assert_ok();
    assert!(out.stdout.contains("TOKEN=${GH_TOKEN}"), "{out}");

    mcp(&agent, &["remove", "web"]).await.assert_ok();
    let out = mcp(&agent, &["remove", "fs"]).await;
    out.assert_ok();
    assert!(
        out.stdout.contains("Removed") && out.stdout.contains(&path_str(&user_file(&agent))),
        "{out}"
    );
    assert_eq!(read_json(&user_file(&agent)), json!({"mcpServers": {}}));
    assert_eq!(read_json(&project_file(&agent)), json!({"mcpServers": {}}));
    let out = mcp(&agent, &["list"]).await;
    out.assert_ok();
    assert!(out.stdout.contains("No MCP servers configured"), "{out}");
}

#[tokio::test]
async fn project_entries_are_ignored_until_the_project_is_trusted_then_replace_the_users() {
    let agent = TestAgent::new();
    std::fs::write(
        user_file(&agent),
        r#"{"mcpServers": {"gh": {"command": "user-gh"}, "solo": {"command": "s"}}}"#,
    )
    .unwrap();
    agent.write_file(
        ".pi/mcp.json",
        r#"{"mcpServers": {"gh": {"command": "project-gh"}, "off": {"command": "o", "enabled": false}}}"#,
    );
    let untrusted = vec![
        row("gh", "user", "enabled"),
        row("solo", "user", "enabled"),
        row("gh", "project", "ignored"),
        row("off", "project", "ignored"),
    ];
    assert_eq!(statuses(&agent, &[]).await, untrusted);
    let trusted = vec![
        row("gh", "user", "replaced"),
        row("solo", "user", "enabled"),
        row("gh", "project", "enabled"),
        row("off", "project", "disabled"),
    ];
    assert_eq!(statuses(&agent, &["--approve"]).await, trusted);
    assert!(
        !agent.agent_dir.join("trust.json").exists(),
        "--approve is not remembered"
    );
    let out = mcp(&agent, &["get", "gh"]).await;
    out.assert_ok();
    assert!(
        out.stdout.contains("user-gh") && out.stdout.contains("also:"),
        "untrusted, the user's entry is the one used; the project's is mentioned\n{out}"
    );
    trust_project(&agent);
    assert_eq!(statuses(&agent, &[]).await, trusted);
    let out = mcp(&agent, &["get", "gh", "--json"]).await;
    out.assert_ok();
    let gh: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(gh["command"], "project-gh", "{out}");
    let out = mcp(&agent, &["get", "gh", "--scope", "user", "--json"]).await;
    let gh: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        (&gh["command"], &gh["status"]),
        (&json!("user-gh"), &json!("replaced"))
    );
}

#[tokio::test]
async fn an_invalid_existing_file_is_left_byte_identical() {
    let agent = TestAgent::new();
    let cases: [&[u8]; 3] = [
        b"{\"mcpServers\": {\"a\": {\"command\": \"a\"},}}\n// a comment\n",
        b"{\"mcpServers\": [\"a\"]}",
        b"",
    ];
    for bytes in cases {
        std::fs::write(user_file(&agent), bytes).unwrap();
        for args in [
            &["add", "new", "--", "srv"][..],
            &["add-json", "new", r#"{"command": "srv"}"#],
            &["remove", "a"],
            &["remove", "a", "--scope", "user"],
        ] {
            let out = mcp(&agent, args).await;
            out.assert_code(1);
            assert!(
                out.stderr.contains(&path_str(&user_file(&agent))),
                "the error names the file\n{out}"
            );
            assert_eq!(
                std::fs::read(user_file(&agent)).unwrap(),
                bytes,
                "pi mcp {args:?} changed the file"
            );
        }
        let out = mcp(&agent, &["list"]).await;
        out.assert_ok();
        assert!(
            out.stdout.contains(&path_str(&user_file(&agent))),
            "the list reports the broken file\n{out}"
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(&agent.agent_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["mcp.json"], "no temporary file is left behind");
}

#[tokio::test]
async fn unknown_keys_and_other_servers_are_kept_in_their_order() {
    let agent = TestAgent::new();
    let original = r#"{
  "$schema": "https://example.com/schema.json",
  "mcpServers": {
    "zeta": {"command": "z", "args": ["--port", "8080"], "futureOption": {"x": [1, 2.5, null]}},
    "legacy": {"type": "sse", "url": "https://old.example.com/sse"},
    "alpha": {"url": "https://a.example.com/mcp", "enabled": false}
  },
  "otherTool": {"keep": true, "nested": ["a", "b"]}
}"#;
    agent.write_file(".pi/mcp.json", original);
    let file = project_file(&agent);
    mcp(&agent, &["add", "-s", "project", "new", "--", "srv"])
        .await
        .assert_ok();
    mcp(&agent, &["remove", "zeta"]).await.assert_ok();
    mcp(
        &agent,
        &[
            "add-json",
            "-s",
            "project",
            "--force",
            "alpha",
            r#"{"command": "a2"}"#,
        ],
    )
    .await
    .assert_ok();
    let text = std::fs::read_to_string(&file).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    assert_eq!(keys(&v), ["$schema", "mcpServers", "otherTool"], "{text}");
    assert_eq!(
        keys(&v["mcpServers"]),
        ["legacy", "alpha", "new"],
        "a replaced entry keeps its place\n{text}"
    );
    let before: Value = serde_json::from_str(original).unwrap();
    assert_eq!(v["mcpServers"]["legacy"], before["mcpServers"]["legacy"]);
    assert_eq!(v["otherTool"], before["otherTool"]);
    assert_eq!(v["$schema"], before["$schema"]);
    assert_eq!(v["mcpServers"]["alpha"], json!({"command": "a2"}));
    // The entry a session skips is still listed, with the session's reason.
    let out = mcp(&agent, &["list", "-a"]).await;
    out.assert_ok();
    let legacy = out
        .stdout
        .lines()
        .find(|l| l.starts_with("legacy "))
        .unwrap_or_else(|| panic!("no legacy row\n{out}"));
    assert!(
        legacy.contains("invalid") && legacy.contains("SSE transport is not supported"),
        "{legacy}"
    );
}

#[tokio::test]
async fn literal_header_and_env_values_are_masked_and_references_shown_as_written() {
    let agent = TestAgent::new();
    let marker = agent.tmp.join("ran");
    let cmd = format!("!touch {}", path_str(&marker));
    std::fs::write(
        user_file(&agent),
        json!({"mcpServers": {
            "s": {"command": "srv", "env": {"LIT": "hunter2-secret", "REF": "${TOKEN}", "CMD": cmd}},
            "h": {"type": "http", "url": "https://h.example/mcp",
                  "headers": {"Authorization": "Bearer sk-live-123", "X-Ref": "Bearer ${T}"}},
            "bad": {"type": "sse", "url": "https://x", "headers": {"Authorization": "Bearer sk-bad-456"}}
        }})
        .to_string(),
    )
    .unwrap();
    let mut text = String::new();
    for args in [&["list"][..], &["get", "s"], &["get", "h"], &["get", "bad"]] {
        let out = mcp(&agent, args).await;
        out.assert_ok();
        text.push_str(&out.stdout);
    }
    for secret in ["hunter2-secret", "sk-live-123", "sk-bad-456"] {
        assert!(!text.contains(secret), "{secret} shown\n{text}");
    }
    for shown in [
        "LIT=***",
        "REF=${TOKEN}",
        &format!("CMD={cmd}"),
        "Authorization: ***",
        "X-Ref: Bearer ${T}",
    ] {
        assert!(text.contains(shown), "{shown} missing\n{text}");
    }
    assert!(!marker.exists(), "a !command value was run");
    let out = mcp(&agent, &["get", "h", "--json"]).await;
    out.assert_ok();
    let h: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        h["headers"]["Authorization"], "Bearer sk-live-123",
        "JSON is the file as written"
    );
}

#[tokio::test]
async fn remove_needs_a_scope_when_both_files_have_the_name_and_names_what_exists() {
    let agent = TestAgent::new();
    std::fs::write(
        user_file(&agent),
        r#"{"mcpServers": {"both": {"command": "u"}, "mine": {"command": "m"}}}"#,
    )
    .unwrap();
    agent.write_file(
        ".pi/mcp.json",
        r#"{"mcpServers": {"both": {"command": "p"}}}"#,
    );
    let user_before = std::fs::read(user_file(&agent)).unwrap();
    let project_before = std::fs::read(project_file(&agent)).unwrap();
    let out = mcp(&agent, &["remove", "both"]).await;
    out.assert_code(1);
    assert!(
        out.stderr.contains("--scope")
            && out.stderr.contains(&path_str(&user_file(&agent)))
            && out.stderr.contains(&path_str(&project_file(&agent))),
        "{out}"
    );
    assert_eq!(std::fs::read(user_file(&agent)).unwrap(), user_before);
    assert_eq!(std::fs::read(project_file(&agent)).unwrap(), project_before);
    let out = mcp(&agent, &["remove", "nothing"]).await;
    out.assert_code(1);
    assert!(
        out.stderr.contains("\"nothing\"") && out.stderr.contains("known: both, mine"),
        "{out}"
    );
    let out = mcp(&agent, &["get", "nothing"]).await;
    out.assert_code(1);
    assert!(out.stderr.contains("known: both, mine"), "{out}");
    mcp(&agent, &["remove", "both", "--scope", "project"])
        .await
        .assert_ok();
    assert_eq!(std::fs::read(user_file(&agent)).unwrap(), user_before);
    // Now only the user's file has it: no scope needed.
    mcp(&agent, &["remove", "both"]).await.assert_ok();
    assert_eq!(
        read_json(&user_file(&agent)),
        json!({"mcpServers": {"mine": {"command": "m"}}})
    );
}

#[tokio::test]
async fn a_bad_entry_is_rejected_with_the_reason_and_nothing_is_written() {
    let agent = TestAgent::new();
    let cases: [(&[&str], &str); 8] = [
        (
            &["add-json", "old", r#"{"type": "sse", "url": "https://x"}"#],
            "SSE",
        ),
        (
            &["add-json", "t", r#"{"command": "x", "timeout": -1}"#],
            "`timeout`",
        ),
        (&["add-json", "j", r#"{"command": "x""#], "not valid JSON"),
        (&["add", "bad name", "--", "srv"], "letters, digits"),
        (&["add", "h", "--transport", "http", "srv"], "URL"),
        (&["add", "h", "https://x", "extra"], "extra"),
        (&["add", "s", "--header", "A: b", "--", "srv"], "--header"),
        (&["add", "s", "--env", "NOEQUALS", "--", "srv"], "NOEQUALS"),
    ];
    for scope in ["user", "project"] {
        for (args, why) in cases {
            // Right after the subcommand: after `--` it would be the command's.
            let all = [&[args[0], "--scope", scope][..], &args[1..]].concat();
            let out = mcp(&agent, &all).await;
            out.assert_code(1);
            assert!(out.stderr.contains(why), "{all:?}: {why} missing\n{out}");
        }
    }
    assert!(!user_file(&agent).exists());
    assert!(
        !agent.cwd.join(".pi").exists(),
        "a refused add created the project's .pi directory"
    );
    // An existing name is refused unless --force.
    mcp(&agent, &["add", "dup", "--", "one"]).await.assert_ok();
    let before = std::fs::read(user_file(&agent)).unwrap();
    let out = mcp(&agent, &["add", "dup", "--", "two"]).await;
    out.assert_code(1);
    assert!(out.stderr.contains("--force"), "{out}");
    assert_eq!(std::fs::read(user_file(&agent)).unwrap(), before);
    mcp(&agent, &["add", "dup", "--force", "--", "two"])
        .await
        .assert_ok();
    assert_eq!(
        read_json(&user_file(&agent))["mcpServers"]["dup"]["command"],
        "two"
    );
}

#[tokio::test]
async fn a_servers_own_arguments_are_kept_and_reported_as_typed() {
    // pi's own multi-letter spellings (`-np`, `-na`) are rewritten for pi's flags; a server's
    // command line is not pi's, so errors name what was typed.
    let agent = TestAgent::new();
    let out = mcp(&agent, &["add", "srv", "tool", "-np"]).await;
    out.assert_code(1);
    assert!(
        out.stderr.contains("'-n'") && !out.stderr.contains("no-prompt-templates"),
        "{out}"
    );
    mcp(
        &agent,
        &["add", "srv", "--", "tool", "-np", "-na", "--", "x"],
    )
    .await
    .assert_ok();
    assert_eq!(
        read_json(&user_file(&agent))["mcpServers"]["srv"]["args"],
        json!(["-np", "-na", "--", "x"])
    );
}

#[tokio::test]
async fn managing_servers_starts_no_hook_no_server_and_runs_no_value_command() {
    let agent = TestAgent::new();
    use_hooks(&agent, vec![scripted(&agent, "h", json!({}))]);
    let ran = agent.tmp.join("server-started");
    mcp(
        &agent,
        &[
            "add",
            "--env",
            &format!("K=!touch {}", path_str(&agent.tmp.join("value-ran"))),
            "srv",
            "--",
            "touch",
            &path_str(&ran),
        ],
    )
    .await
    .assert_ok();
    for args in [
        &["list"][..],
        &["get", "srv"],
        &["list", "--json"],
        &["remove", "srv"],
    ] {
        mcp(&agent, args).await.assert_ok();
    }
    assert!(!ran.exists(), "an MCP server was started");
    assert!(
        !agent.tmp.join("value-ran").exists(),
        "a value's command ran"
    );
    assert!(!record_file(&agent, "h").exists(), "a hook was started");
}

#[tokio::test]
async fn concurrent_adds_all_land() {
    let agent = TestAgent::new();
    let names: Vec<String> = (0..8).map(|i| format!("s{i}")).collect();
    let runs = names.iter().map(|n| {
        let agent = &agent;
        async move { mcp(agent, &["add", n, "--", "srv", n]).await }
    });
    for out in futures_util::future::join_all(runs).await {
        out.assert_ok();
    }
    let mut got: Vec<String> = read_json(&user_file(&agent))["mcpServers"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    got.sort();
    assert_eq!(got, names, "an add was lost");
}

#[tokio::test]
async fn usage_without_a_subcommand_and_clear_errors_for_bad_arguments() {
    let agent = TestAgent::new();
    for args in [&[][..], &["--help"]] {
        let out = mcp(&agent, args).await;
        out.assert_ok();
        for sub in ["list", "get", "add", "add-json", "remove"] {
            assert!(out.stdout.contains(sub), "{sub} missing from usage\n{out}");
        }
    }
    let out = mcp(&agent, &["add", "x"]).await;
    out.assert_code(1);
    assert!(out.stderr.contains("URL | -- COMMAND"), "{out}");
    let out = mcp(&agent, &["add", "x", "--transport", "sse", "https://x"]).await;
    out.assert_code(1);
    assert!(
        out.stderr.contains("SSE transport is not supported"),
        "{out}"
    );
    let out = mcp(&agent, &["add", "x", "--timeout", "0", "--", "srv"]).await;
    out.assert_code(1);
    assert!(out.stderr.contains("--timeout"), "{out}");
    assert!(!user_file(&agent).exists());
}
