//! Hook session calls (`session.switch`, `session.new`, `session.fork`, `session.clone`, driven
//! by `fixtures/hooks/it/session_ops.py`): only session files, only inside the run's session
//! directory, and a cancelled switch writes nothing.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::*;
use crate::common::path_str;

/// The session-ops test hook as the user's only hook.
fn use_ops_hook(agent: &TestAgent) {
    agent.write_settings(&json!({
        "hooks": [{
            "command": format!("python3 {}", fixture("session_ops.py")),
            "name": "session-ops",
            "config": {},
            "timeout_ms": 20000,
        }],
    }));
}

fn op(method: &str, params: Value) -> String {
    format!("/op {method} {params}")
}

/// The answers of `/op` commands, one JSON object per stdout line.
fn answers(out: &Output) -> Vec<Value> {
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect()
}

#[track_caller]
fn assert_call_error(answer: &Value, code: &str, mentions: &[&str], out: &Output) {
    assert_eq!(answer["error"]["code"], code, "{answer}\n{out}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    for m in mentions {
        assert!(message.contains(m), "{message:?} mentions {m:?}\n{out}");
    }
}

#[tokio::test]
async fn hook_switch_to_a_file_that_is_not_a_session_is_refused_and_leaves_it_untouched() {
    let agent = TestAgent::new();
    use_ops_hook(&agent);
    // As `/etc/passwd` would be: a text file outside the session directory...
    let passwd = agent.home.join("passwd");
    std::fs::write(&passwd, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    // ...and a stray text file inside it.
    let stray = project_sessions(&agent).join("notes.jsonl");
    std::fs::create_dir_all(stray.parent().unwrap()).unwrap();
    std::fs::write(&stray, "remember the milk\n").unwrap();
    let (pinned_passwd, pinned_stray) = (pin(&passwd), pin(&stray));

    let out = run(
        &agent,
        &[
            "-p",
            &op("session.switch", json!({"session_file": path_str(&passwd)})),
            &op("session.switch", json!({"session_file": path_str(&stray)})),
            "still here",
        ],
    )
    .await;
    out.assert_ok();
    let a = answers(&out);
    assert_eq!(a.len(), 2, "{out}");
    assert_call_error(&a[0], "invalid_params", &[&path_str(&passwd)], &out);
    assert_call_error(
        &a[1],
        "invalid_params",
        &[&path_str(&stray), "not a pi session file"],
        &out,
    );
    pinned_passwd.assert_unchanged(&out);
    pinned_stray.assert_unchanged(&out);
    // The run went on in its own new session.
    let saved: Vec<PathBuf> = files_under(&agent.agent_dir.join("sessions"))
        .into_iter()
        .filter(|p| *p != stray)
        .collect();
    assert_eq!(saved.len(), 1, "{out}");
    assert!(std::fs::read_to_string(&saved[0])
        .unwrap()
        .contains("still here"));
}

#[tokio::test]
async fn hook_switch_only_reaches_sessions_inside_the_session_directory() {
    let agent = TestAgent::new();
    use_ops_hook(&agent);
    let root = agent.agent_dir.join("sessions");
    let cwd = path_str(&agent.cwd);
    // A perfectly good session, but outside the session directory.
    let outside = write_session(&agent.cwd.join("kept/here.jsonl"), "outside", &cwd, "q out");
    // The same, reached with `..` from inside, and through a symlink inside.
    std::fs::create_dir_all(project_sessions(&agent)).unwrap();
    let dotdot = project_sessions(&agent).join("../../escape.jsonl");
    let escape = write_session(
        &agent.agent_dir.join("escape.jsonl"),
        "escape",
        &cwd,
        "q esc",
    );
    let link = project_sessions(&agent).join("2025-01-01T00-00-00-000Z_linked.jsonl");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let pinned: Vec<Pinned> = [&outside, &escape].iter().map(|p| pin(p)).collect();

    let out = run(
        &agent,
        &[
            "-p",
            &op(
                "session.switch",
                json!({"session_file": path_str(&outside)}),
            ),
            &op("session.switch", json!({"session_file": path_str(&dotdot)})),
            &op("session.switch", json!({"session_file": path_str(&link)})),
            &op("session.switch", json!({"session_file": "kept/here.jsonl"})),
        ],
    )
    .await;
    out.assert_ok();
    let a = answers(&out);
    assert_eq!(a.len(), 4, "{out}");
    for answer in &a {
        assert_call_error(
            answer,
            "invalid_params",
            &["outside the session directory", &path_str(&root)],
            &out,
        );
    }
    assert!(a[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains(&path_str(&outside)));
    for p in &pinned {
        p.assert_unchanged(&out);
    }

    // Another project's session inside the session directory is fine, as `/resume` allows.
    let other = write_session(
        &root.join("--other--/2025-01-01T00-00-00-000Z_other.jsonl"),
        "other",
        "/other",
        "the other project's question",
    );
    let out = run(
        &agent,
        &[
            "-p",
            &op("session.switch", json!({"session_file": path_str(&other)})),
            "continue over there",
        ],
    )
    .await;
    out.assert_ok();
    let a = answers(&out);
    assert_eq!(a[0]["cancelled"], false, "{out}");
    assert!(std::fs::read_to_string(&other)
        .unwrap()
        .contains("continue over there"));
}

#[tokio::test]
async fn hook_switch_is_confined_to_a_custom_session_directory_and_unavailable_without_one() {
    let agent = TestAgent::new();
    use_ops_hook(&agent);
    let custom = agent.home.join("my-sessions");
    std::fs::create_dir_all(&custom).unwrap();
    // A session in the default folder is outside the configured one.
    let default_one = write_session(
        &project_sessions(&agent).join("2025-01-01T00-00-00-000Z_d.jsonl"),
        "d",
        &path_str(&agent.cwd),
        "q",
    );
    let pinned = pin(&default_one);
    let out = run(
        &agent,
        &[
            "--session-dir",
            &path_str(&custom),
            "-p",
            &op(
                "session.switch",
                json!({"session_file": path_str(&default_one)}),
            ),
        ],
    )
    .await;
    out.assert_ok();
    assert_call_error(
        &answers(&out)[0],
        "invalid_params",
        &["outside the session directory", &path_str(&custom)],
        &out,
    );
    pinned.assert_unchanged(&out);

    let out = run(
        &agent,
        &[
            "--no-session",
            "-p",
            &op(
                "session.switch",
                json!({"session_file": path_str(&default_one)}),
            ),
        ],
    )
    .await;
    out.assert_ok();
    assert_call_error(&answers(&out)[0], "unavailable", &["--no-session"], &out);
    pinned.assert_unchanged(&out);
}

#[tokio::test]
async fn hook_new_fork_and_clone_create_nothing_outside_the_session_directory() {
    let agent = TestAgent::new();
    use_ops_hook(&agent);
    let mine = write_session(
        &agent.cwd.join("mine.jsonl"),
        "mine",
        &path_str(&agent.cwd),
        "my question",
    );
    let calls = [
        op("session.new", json!({})),
        op("session.fork", json!({"entry_id": "a0000001"})),
        op(
            "session.fork",
            json!({"entry_id": "a0000002", "position": "at"}),
        ),
        op("session.clone", json!({})),
    ];
    for call in &calls {
        let out = run(
            &agent,
            &["--session", &path_str(&mine), "-p", call, "and then"],
        )
        .await;
        out.assert_ok();
        assert_call_error(
            &answers(&out)[0],
            "invalid_params",
            &[
                "outside the session directory",
                &path_str(&agent.agent_dir.join("sessions")),
                &path_str(&agent.cwd),
            ],
            &out,
        );
        assert_eq!(
            files_under(&agent.cwd),
            vec![mine.clone()],
            "{call}: no file was created next to the session\n{out}"
        );
        assert!(
            files_under(&agent.agent_dir.join("sessions")).is_empty(),
            "{out}"
        );
    }
    let text = std::fs::read_to_string(&mine).unwrap();
    assert_eq!(text.matches("and then").count(), calls.len(), "{text}");
}

#[tokio::test]
async fn hook_switch_to_an_old_session_migrates_it_only_once_no_hook_cancels() {
    let agent = TestAgent::new();
    let old = project_sessions(&agent).join("2024-01-01T00-00-00-000Z_v2.jsonl");
    std::fs::create_dir_all(old.parent().unwrap()).unwrap();
    std::fs::copy(fixture_session("v2-tree.jsonl"), &old).unwrap();
    let original = std::fs::read(&old).unwrap();
    let backup = PathBuf::from(format!("{}.bak", old.display()));
    let switch = op("session.switch", json!({"session_file": path_str(&old)}));

    // A hook cancels the switch: the file was only read.
    agent.write_settings(&json!({
        "hooks": [{
            "command": format!("python3 {}", fixture("session_ops.py")),
            "name": "session-ops",
            "config": {"switch": "cancel"},
            "timeout_ms": 20000,
        }],
    }));
    let pinned = pin(&old);
    let out = run(&agent, &["-p", &switch]).await;
    out.assert_ok();
    assert_eq!(answers(&out), vec![json!({"cancelled": true})], "{out}");
    pinned.assert_unchanged(&out);
    assert!(!backup.exists(), "{out}");

    // Nobody cancels: migrated, with the original kept.
    use_ops_hook(&agent);
    let out = run(&agent, &["-p", &switch, "go on"]).await;
    out.assert_ok();
    assert_eq!(answers(&out)[0]["cancelled"], false, "{out}");
    assert_eq!(std::fs::read(&backup).unwrap(), original, "{out}");
    let text = std::fs::read_to_string(&old).unwrap();
    assert!(
        text.starts_with(r#"{"type":"session","version":3"#),
        "{text}"
    );
    assert!(text.contains("go on"), "{text}");
}
