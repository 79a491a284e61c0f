//! A crafted session file opened with `--session`: its messages, thinking, tool calls and
//! results, custom messages and name reach the screen — the transcript, the footer and the
//! `/resume` list — as visible text.

use serde_json::{json, Value};

use super::*;
use crate::common::{path_str, TestAgent};

fn entry(id: &str, parent: Option<&str>, kind: &str, body: Value) -> Value {
    let mut e = json!({"type": kind, "id": id, "parentId": parent,
                       "timestamp": "2026-01-01T00:00:00.000Z"});
    if let (Some(e), Value::Object(b)) = (e.as_object_mut(), body) {
        e.extend(b);
    }
    e
}

fn assistant(content: Value) -> Value {
    json!({"message": {"role": "assistant", "content": content, "api": "faux",
        "provider": "faux", "model": "faux-1", "usage": {"input": 1, "output": 1,
        "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": {"input": 0, "output": 0,
        "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "toolUse", "timestamp": 1}})
}

/// A session whose every shown text carries the payloads, in a session folder of its own.
fn crafted(agent: &TestAgent) -> std::path::PathBuf {
    let lines = [
        json!({"type": "session", "version": 3, "id": "01900000-0000-7000-8000-000000000001",
               "timestamp": "2026-01-01T00:00:00.000Z", "cwd": path_str(&agent.cwd)}),
        entry(
            "a1",
            None,
            "message",
            json!({"message": {"role": "user",
            "content": [{"type": "text", "text": payload("user")}], "timestamp": 1}}),
        ),
        entry(
            "a2",
            Some("a1"),
            "message",
            assistant(json!([
                {"type": "thinking", "thinking": payload("thought")},
                {"type": "toolCall", "id": "t1", "name": "bash",
                 "arguments": {"command": payload("cmd")}},
            ])),
        ),
        entry(
            "a3",
            Some("a2"),
            "message",
            json!({"message": {"role": "toolResult",
            "toolCallId": "t1", "toolName": "bash",
            "content": [{"type": "text", "text": payload("result")}],
            "isError": false, "timestamp": 1}}),
        ),
        entry(
            "a4",
            Some("a3"),
            "custom_message",
            json!({"customType": "note",
            "content": payload("custom"), "display": true}),
        ),
        entry(
            "a5",
            Some("a4"),
            "session_info",
            json!({"name": format!("name[{TITLE}{C1_CLEAR}]")}),
        ),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let dir = agent.tmp.join("sessions");
    std::fs::create_dir_all(&dir).expect("session dir");
    let path = dir.join("2026-01-01T00-00-00-000Z_01900000-0000-7000-8000-000000000001.jsonl");
    std::fs::write(&path, text).expect("write the session");
    path
}

#[test]
fn a_crafted_session_file_is_shown_not_obeyed() {
    let agent = TestAgent::new();
    let file = crafted(&agent);
    let mut args = agent.faux_args(json!(["ok"]));
    let dir = file.parent().expect("its folder");
    args.extend(
        [
            "--session-dir",
            &path_str(dir),
            "--session",
            &path_str(&file),
        ]
        .map(String::from),
    );
    let mut pi = agent.pty(&args, 200, 50);
    pi.wait_text("faux/faux-1");
    let all = pi.wait_transcript(&shown("result"));
    for tag in ["user", "thought", "cmd", "custom"] {
        assert!(has_row(&all, &shown(tag)), "{tag} not shown: {all:#?}");
    }
    let name = "name[␛]0;PWNED␇2J]";
    pi.wait_text(name);
    pi.type_text("/resume");
    pi.enter();
    pi.wait_screen("the session in the /resume list", |s| {
        s.iter()
            .any(|r| r.starts_with("› ") && r.contains(name) && r.contains("user[␛]52;c;"))
    });
    pi.esc();
    pi.wait_screen("the list gone", |s| !has_row(s, "Resume session"));
    assert_sent(&pi, &sent("result"));
    assert_pty_inert(&pi);
    pi.quit();
}
