//! Built-in tools through the real binary: a faux model makes the calls and the JSON event
//! stream shows the results the model would see; files on disk show the effects.

use std::time::Duration;

use serde_json::json;

use crate::common::{only_tool_end, process_gone, read_pid, tool_ends, wait_until, TestAgent};

fn edit(path: &str, old: &str, new: &str) -> serde_json::Value {
    json!([{"name": "edit", "arguments": {"path": path, "edits": [{"oldText": old, "newText": new}]}}])
}

#[tokio::test]
async fn edit_preserves_bom_and_crlf() {
    let agent = TestAgent::new();
    agent.write_file("win.txt", "\u{feff}line one\r\nline two\r\nline three\r\n");
    let out = agent
        .run_tools(edit("win.txt", "line two", "line 2"), &[])
        .await;
    out.assert_ok();
    let r = only_tool_end(&out);
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.text.contains("Successfully replaced 1 block(s) in"),
        "{r:?}"
    );
    assert_eq!(
        agent.read_string("win.txt"),
        "\u{feff}line one\r\nline 2\r\nline three\r\n"
    );
}

#[tokio::test]
async fn edit_matches_smart_quotes_fuzzily_and_keeps_untouched_lines() {
    let agent = TestAgent::new();
    agent.write_file(
        "q.js",
        "// \u{201c}untouched\u{201d}\nlet s = \u{201c}hello\u{201d};\nend();\n",
    );
    let out = agent
        .run_tools(edit("q.js", "let s = \"hello\";", "let s = \"bye\";"), &[])
        .await;
    let r = only_tool_end(&out);
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        agent.read_string("q.js"),
        "// \u{201c}untouched\u{201d}\nlet s = \"bye\";\nend();\n"
    );
}

#[tokio::test]
async fn edit_refuses_ambiguous_match() {
    let agent = TestAgent::new();
    agent.write_file("dup.txt", "foo\nbar\nfoo\n");
    let out = agent.run_tools(edit("dup.txt", "foo", "baz"), &[]).await;
    out.assert_ok();
    let r = only_tool_end(&out);
    assert!(r.is_error, "{r:?}");
    assert!(
        r.text.contains("Found 2 occurrences of the text in"),
        "{r:?}"
    );
    assert_eq!(
        agent.read_string("dup.txt"),
        "foo\nbar\nfoo\n",
        "file must be unchanged"
    );
    // The model sees the same error as a toolResult message.
    let events = out.events();
    let result_msg = events
        .iter()
        .find(|e| e["type"] == "message_end" && e["message"]["role"] == "toolResult")
        .expect("toolResult message");
    assert_eq!(result_msg["message"]["isError"], true);
    assert_eq!(result_msg["message"]["toolName"], "edit");
}

#[tokio::test]
async fn edit_reports_text_not_found() {
    let agent = TestAgent::new();
    agent.write_file("a.txt", "alpha\n");
    let r = only_tool_end(&agent.run_tools(edit("a.txt", "omega", "x"), &[]).await);
    assert!(
        r.is_error && r.text.contains("Could not find the exact text"),
        "{r:?}"
    );
}

#[tokio::test]
async fn bash_nonzero_exit_is_an_error_result() {
    let agent = TestAgent::new();
    let calls = json!([{"name": "bash", "arguments": {"command": "echo oops; exit 3"}}]);
    let r = only_tool_end(&agent.run_tools(calls, &[]).await);
    assert!(r.is_error, "{r:?}");
    assert!(r.text.contains("oops"), "{r:?}");
    assert!(
        r.text.trim_end().ends_with("Command exited with code 3"),
        "{r:?}"
    );
}

#[tokio::test]
async fn bash_without_output_says_so() {
    let agent = TestAgent::new();
    let calls = json!([{"name": "bash", "arguments": {"command": "true"}}]);
    let r = only_tool_end(&agent.run_tools(calls, &[]).await);
    assert!(!r.is_error && r.text.trim() == "(no output)", "{r:?}");
}

#[tokio::test]
async fn bash_merges_stderr_and_runs_in_project_dir() {
    let agent = TestAgent::new();
    let calls = json!([{"name": "bash", "arguments": {"command": "echo to-err >&2; pwd"}}]);
    let r = only_tool_end(&agent.run_tools(calls, &[]).await);
    assert!(!r.is_error, "{r:?}");
    assert!(r.text.contains("to-err"), "{r:?}");
    assert!(r.text.contains(agent.cwd.to_str().unwrap()), "{r:?}");
}

#[tokio::test]
async fn bash_timeout_kills_background_grandchild() {
    let agent = TestAgent::new();
    let calls = json!([{"name": "bash", "arguments": {"command": "sleep 30 & echo $! > pid; sleep 30", "timeout": 1}}]);
    let out = agent.run_tools(calls, &[]).await;
    out.assert_ok();
    let r = only_tool_end(&out);
    assert!(r.is_error, "{r:?}");
    assert!(r.text.contains("Command timed out after 1 second"), "{r:?}");
    let pid = read_pid(&agent.cwd.join("pid"));
    assert!(
        wait_until(Duration::from_secs(5), || process_gone(pid)),
        "background sleep {pid} survived the timeout"
    );
}

#[tokio::test]
async fn bash_long_output_is_tail_truncated_with_full_output_file() {
    let agent = TestAgent::new();
    let calls = json!([{"name": "bash", "arguments": {"command": "seq 100000"}}]);
    let r = only_tool_end(&agent.run_tools(calls, &[]).await);
    assert!(
        !r.is_error,
        "{}",
        &r.text[r.text.len().saturating_sub(300)..]
    );
    let lines: Vec<&str> = r.text.lines().collect();
    assert!(
        lines.len() <= 2010,
        "result not truncated: {} lines",
        lines.len()
    );
    assert!(lines.contains(&"100000"), "tail kept");
    assert_ne!(lines.first(), Some(&"1"), "head dropped");
    let start = r.text.find("Full output: ").expect("spill file notice") + "Full output: ".len();
    let path = r.text[start..].split(']').next().expect("path").trim();
    let full = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("spill file {path}: {e}"));
    assert_eq!(full.lines().count(), 100000);
    assert_eq!(full.lines().next(), Some("1"));
}

#[tokio::test]
async fn write_then_read_round_trip() {
    let agent = TestAgent::new();
    let steps = json!([
        {"toolCalls": [{"name": "write", "arguments": {"path": "sub/dir/new.txt", "content": "alpha\nbeta\n"}}]},
        {"toolCalls": [{"name": "read", "arguments": {"path": "sub/dir/new.txt"}}]},
        "done"
    ]);
    let out = agent.run_faux(steps, &["--mode", "json", "go"]).await;
    out.assert_ok();
    let ends = tool_ends(&out.events());
    assert_eq!(ends.len(), 2, "{out}");
    assert!(
        ends[0].text == "Successfully wrote to sub/dir/new.txt",
        "{:?}",
        ends[0]
    );
    assert_eq!(agent.read_string("sub/dir/new.txt"), "alpha\nbeta\n");
    assert!(
        !ends[1].is_error && ends[1].text.contains("alpha\nbeta"),
        "{:?}",
        ends[1]
    );
}

#[tokio::test]
async fn read_with_offset_and_limit_says_how_to_continue() {
    let agent = TestAgent::new();
    agent.write_file(
        "ten.txt",
        (1..=10).map(|i| format!("line{i}\n")).collect::<String>(),
    );
    let calls =
        json!([{"name": "read", "arguments": {"path": "ten.txt", "offset": 3, "limit": 2}}]);
    let r = only_tool_end(&agent.run_tools(calls, &[]).await);
    assert!(r.text.contains("line3\nline4"), "{r:?}");
    assert!(!r.text.contains("line5"), "{r:?}");
    assert!(r.text.contains("offset=5"), "{r:?}");
}

#[tokio::test]
async fn read_missing_file_is_an_error_result() {
    let agent = TestAgent::new();
    let calls = json!([{"name": "read", "arguments": {"path": "nope.txt"}}]);
    let r = only_tool_end(&agent.run_tools(calls, &[]).await);
    assert!(r.is_error && r.text.contains("nope.txt"), "{r:?}");
}

fn search_project(agent: &TestAgent) {
    agent.write_file("src/a.rs", "fn main() {}\nfn needle() {}\n");
    agent.write_file("src/b.txt", "haystack\n");
    agent.write_file(".hidden", "dot\n");
}

#[tokio::test]
async fn grep_find_ls_work_when_enabled() {
    let agent = TestAgent::new();
    search_project(&agent);
    let calls = json!([
        {"name": "grep", "arguments": {"pattern": "needle"}},
        {"name": "find", "arguments": {"pattern": "*.rs"}},
        {"name": "ls", "arguments": {}},
        {"name": "grep", "arguments": {"pattern": "absent-word-xyz"}},
    ]);
    let out = agent.run_tools(calls, &["--tools", "grep,find,ls"]).await;
    out.assert_ok();
    let ends = tool_ends(&out.events());
    assert_eq!(ends.len(), 4, "{out}");
    let by_name = |n: &str| {
        ends.iter()
            .filter(|e| e.name == n)
            .cloned()
            .collect::<Vec<_>>()
    };
    let grep = by_name("grep");
    assert!(
        grep.iter()
            .any(|g| g.text.contains("a.rs:2:") && g.text.contains("fn needle()")),
        "{grep:?}"
    );
    assert!(
        grep.iter().any(|g| g.text.contains("No matches found")),
        "{grep:?}"
    );
    let find = &by_name("find")[0];
    assert!(
        find.text.lines().any(|l| l.trim() == "src/a.rs"),
        "{find:?}"
    );
    assert!(!find.text.contains("b.txt"), "{find:?}");
    let ls = &by_name("ls")[0];
    let entries: Vec<&str> = ls.text.lines().collect();
    assert!(
        entries.contains(&"src/") && entries.contains(&".hidden"),
        "{ls:?}"
    );
}

#[tokio::test]
async fn tool_not_enabled_gets_an_error_result() {
    let agent = TestAgent::new();
    search_project(&agent);
    let calls = json!([{"name": "grep", "arguments": {"pattern": "needle"}}]);
    let out = agent.run_tools(calls, &[]).await;
    out.assert_ok();
    let r = only_tool_end(&out);
    assert!(r.is_error && r.name == "grep", "{r:?}");
}

#[tokio::test]
async fn invalid_arguments_get_an_error_result() {
    let agent = TestAgent::new();
    let calls = json!([{"name": "bash", "arguments": {"cmd": "echo hi"}}]);
    let r = only_tool_end(&agent.run_tools(calls, &[]).await);
    assert!(r.is_error, "{r:?}");
    assert!(
        r.text.contains("command"),
        "error should name the missing field: {r:?}"
    );
}
