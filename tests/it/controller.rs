//! What print and JSON users see of the session controller through the real binary: each run
//! ends with `agent_settled`, and a session replacement a hook's command asks for restarts the
//! hooks with the new session (the hook that asked is answered first).

use serde_json::{json, Value};

use crate::common::hooks::fixture;
use crate::common::{of_type, process_gone, TestAgent};

/// `controller_ops.py` as the user's hook, recording into `record.jsonl` under the temp dir.
fn use_ops_hook(agent: &TestAgent) -> std::path::PathBuf {
    let record = agent.tmp.join("record.jsonl");
    agent.write_settings(&json!({"hooks": [{
        "command": format!("python3 {}", fixture("controller_ops.py")),
        "name": "controller-ops",
        "config": {"record": record.display().to_string()},
    }]}));
    record
}

fn recorded(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[tokio::test]
async fn json_mode_ends_every_run_with_agent_settled() {
    let agent = TestAgent::new();
    let out = agent
        .run_faux(
            json!(["one", "two"]),
            &["--mode", "json", "--hook-events", "first", "second"],
        )
        .await;
    out.assert_ok();
    let events = out.events();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    let settled: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == "agent_settled")
        .map(|(i, _)| i)
        .collect();
    let ends: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == "agent_end")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(settled.len(), 2, "{kinds:?}");
    assert_eq!(ends.len(), 2);
    // Each run settles after its end and before the next run starts.
    assert!(ends[0] < settled[0] && settled[0] < ends[1] && ends[1] < settled[1]);
    assert_eq!(kinds.last(), Some(&"agent_settled"));
    for s in of_type(&events, "agent_settled") {
        assert_eq!(s, &json!({"type": "agent_settled", "aborted": false}));
    }
}

#[tokio::test]
async fn a_new_session_from_a_hook_command_restarts_the_hooks_with_the_new_session_id() {
    let agent = TestAgent::new();
    let record = use_ops_hook(&agent);
    let out = agent
        .run_faux(
            json!(["first answer", "second answer"]),
            &["-p", "hello", "/op session.new {}", "again"],
        )
        .await;
    out.assert_ok();
    // The command's answer (printed by print mode) came from the hook that asked.
    let answer: Value = out
        .stdout
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no command answer on stdout\n{out}"));
    assert_eq!(answer["cancelled"], false, "{out}");
    let new_id = answer["session_id"]
        .as_str()
        .expect("session_id")
        .to_string();
    let lines = recorded(&record);
    let hellos: Vec<&Value> = lines.iter().filter(|l| l.get("hello").is_some()).collect();
    assert_eq!(hellos.len(), 2, "{lines:?}");
    assert_ne!(hellos[0]["hello"]["session_id"], json!(new_id));
    assert_eq!(hellos[1]["hello"]["session_id"], json!(new_id));
    assert_eq!(hellos[1]["hello"]["env_session_id"], json!(new_id));
    let (old, new) = (
        hellos[0]["pid"].as_i64().unwrap() as i32,
        hellos[1]["pid"].as_i64().unwrap() as i32,
    );
    // The old process ended its session; the new one started the new session and served the
    // rest of the run, to its end.
    let saw = |event: &str, reason: &str, pid: i32| {
        lines.iter().any(|l| {
            l["event"] == event && l["payload"]["reason"] == reason && l["pid"] == json!(pid)
        })
    };
    assert!(saw("session_shutdown", "new", old), "{lines:?}");
    assert!(saw("session_start", "new", new), "{lines:?}");
    assert!(saw("session_shutdown", "quit", new), "{lines:?}");
    assert!(!saw("session_shutdown", "quit", old), "{lines:?}");
    assert!(process_gone(old) && process_gone(new));
    assert_eq!(out.stdout.lines().last(), Some("second answer"));
}
