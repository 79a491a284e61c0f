//! Session replacement and reload with a real hook process: the old process gets
//! `session_shutdown` and is stopped, a new one sees the new session in `hello` and
//! `PI_SESSION_ID` and gets `session_start`; the hook whose command asked is answered first;
//! a generation that cannot start changes nothing; managed hooks never go missing.

use nix::sys::signal::kill;
use nix::unistd::Pid;
use serde_json::json;

use super::*;
use crate::controller::{ControllerError, Disposition, PromptRequest};

async fn exchange(h: &mut Harness, text: &str) {
    h.ctl.prompt(PromptRequest::text(text)).await.unwrap();
    h.until(is_settled).await;
}

fn pid_of(record: &Value) -> u64 {
    record["pid"].as_u64().expect("a pid")
}

fn gone(pid: u64) -> bool {
    kill(Pid::from_raw(pid as i32), None).is_err()
}

/// The index in the record of the first line satisfying `f`.
fn position(h: &Harness, f: impl Fn(&Value) -> bool) -> usize {
    h.recorded()
        .iter()
        .position(f)
        .unwrap_or_else(|| panic!("not recorded: {:?}", h.recorded()))
}

#[tokio::test]
async fn a_new_session_restarts_the_hooks_with_the_new_session_id() {
    let mut h = start(Opts {
        script: json!(["a1"]),
        hook: Some(json!({})),
        ..Opts::default()
    })
    .await;
    exchange(&mut h, "q1").await;
    let old_id = h.ctl.session_id();
    let first = h.hellos();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0]["hello"]["session_id"], json!(old_id));
    assert_eq!(first[0]["hello"]["env_session_id"], json!(old_id));
    let old_pid = pid_of(&first[0]);

    let out = h.ctl.new_session(None).await.unwrap();
    assert!(!out.cancelled);
    let new_id = h.ctl.session_id();
    assert_ne!(new_id, old_id);
    let hellos = h.hellos();
    assert_eq!(hellos.len(), 2, "{hellos:?}");
    let hello = &hellos[1]["hello"];
    assert_eq!(hello["session_id"], json!(new_id));
    assert_eq!(hello["env_session_id"], json!(new_id), "PI_SESSION_ID");
    assert_eq!(hello["session_file"], json!(h.ctl.get_state().session_file));
    let new_pid = pid_of(&hellos[1]);
    assert_ne!(new_pid, old_pid);
    // The old process saw the end of its session, then was stopped; the new one saw the start
    // of its own, after that.
    let shutdown = position(&h, |r| {
        r["event"] == "session_shutdown" && r["payload"]["reason"] == "new" && pid_of(r) == old_pid
    });
    let started = position(&h, |r| {
        r["event"] == "session_start" && r["payload"]["reason"] == "new" && pid_of(r) == new_pid
    });
    assert!(shutdown < started);
    assert!(gone(old_pid), "the old hook process is still running");
    assert!(!gone(new_pid));
    h.close().await;
    assert!(gone(new_pid));
}

#[tokio::test]
async fn a_hook_that_forks_from_its_command_is_answered_first_then_replaced() {
    let mut h = start(Opts {
        script: json!(["a1", "a2"]),
        hook: Some(json!({})),
        ..Opts::default()
    })
    .await;
    exchange(&mut h, "q1").await;
    exchange(&mut h, "q2").await;
    let old_pid = pid_of(&h.hellos()[0]);
    let q2 = h.ctl.get_fork_messages().messages[1].entry_id.clone();
    let out = h
        .ctl
        .prompt(PromptRequest::text(format!(
            "/op session.fork {}",
            json!({"entry_id": q2})
        )))
        .await
        .unwrap();
    assert_eq!(out.disposition, Disposition::Handled);
    // The old process got the fork's answer (its command returned it) ...
    let answer: Value = serde_json::from_str(out.command_text.as_deref().unwrap()).unwrap();
    assert_eq!(answer["cancelled"], false);
    assert_eq!(answer["text"], "q2");
    assert_eq!(answer["session_id"], json!(h.ctl.session_id()));
    // ... and was stopped once its command had returned; its successor sees the fork.
    assert!(gone(old_pid), "the caller's old process is still running");
    let hellos = h.hellos();
    assert_eq!(hellos.len(), 2);
    assert_eq!(hellos[1]["hello"]["session_id"], answer["session_id"]);
    let new_pid = pid_of(&hellos[1]);
    let (start, pid) = h
        .seen("session_start")
        .into_iter()
        .find(|(p, _)| p["reason"] == "fork")
        .expect("session_start for the fork");
    assert_eq!(pid, new_pid);
    assert!(start["previous_session_file"].is_string());
    h.close().await;
}

#[tokio::test]
async fn hooks_that_cannot_start_for_the_new_session_leave_everything_as_it_was() {
    // A `--hook`: one that must start (a settings hook that cannot is reported and skipped).
    let mut h = start(Opts {
        script: json!(["a1"]),
        hook: Some(json!({"fail_if_exists": "../refuse"})),
        cli_hook: true,
        ..Opts::default()
    })
    .await;
    exchange(&mut h, "q1").await;
    let before = h.ctl.get_state();
    std::fs::write(h.cwd().join("../refuse"), "").unwrap();
    let refused = h.ctl.new_session(None).await;
    let Err(e @ ControllerError::HookStart(_)) = refused else {
        panic!("the replacement did not fail: {refused:?}");
    };
    assert!(e.to_string().contains("nothing was changed"), "{e}");
    let after = h.ctl.get_state();
    assert_eq!(after.session_id, before.session_id);
    assert_eq!(after.session_file, before.session_file);
    assert_eq!(h.user_texts(), ["q1"]);
    // The old hook still serves.
    let out = h
        .ctl
        .prompt(PromptRequest::text("/op session.get_tree {}"))
        .await
        .unwrap();
    assert_eq!(out.disposition, Disposition::Handled);
    assert_eq!(h.hellos().len(), 1);
    h.close().await;
}

#[tokio::test]
async fn a_managed_hook_that_cannot_restart_refuses_every_tool_call_in_the_new_session() {
    let mut h = start(Opts {
        script: json!([{"toolCalls": [{"name": "bash", "arguments": {"command": "echo ran"}}]},
                       "done"]),
        hook: Some(json!({"fail_if_exists": "../refuse"})),
        managed: Some(RequiredHookFailure::BlockTools),
        ..Opts::default()
    })
    .await;
    std::fs::write(h.cwd().join("../refuse"), "").unwrap();
    h.ctl.new_session(None).await.unwrap();
    h.ctl.prompt(PromptRequest::text("run it")).await.unwrap();
    let events = h.until(is_settled).await;
    let end = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolExecutionEnd {
                result, is_error, ..
            } => Some((crate::message::text_of(&result.content), *is_error)),
            _ => None,
        })
        .expect("a tool result");
    assert!(end.1, "{end:?}");
    assert!(
        end.0
            .contains("policy degraded: managed hook controller-ops is not running"),
        "{}",
        end.0
    );
    h.close().await;
}

#[tokio::test]
async fn a_managed_hook_that_must_run_keeps_the_old_session_when_it_cannot_restart() {
    let mut h = start(Opts {
        script: json!(["a1"]),
        hook: Some(json!({"fail_if_exists": "../refuse"})),
        managed: Some(RequiredHookFailure::Exit),
        ..Opts::default()
    })
    .await;
    let id = h.ctl.session_id();
    std::fs::write(h.cwd().join("../refuse"), "").unwrap();
    assert!(matches!(
        h.ctl.new_session(None).await,
        Err(ControllerError::HookStart(_))
    ));
    assert_eq!(h.ctl.session_id(), id);
    exchange(&mut h, "still here").await;
    assert_eq!(h.user_texts(), ["still here"]);
    h.close().await;
}

#[tokio::test]
async fn reload_restarts_the_hooks_and_reads_settings_and_resources_again() {
    let h = start(Opts {
        hook: Some(json!({})),
        ..Opts::default()
    })
    .await;
    let old_pid = pid_of(&h.hellos()[0]);
    assert!(h
        .ctl
        .get_commands()
        .commands
        .iter()
        .all(|c| c.name != "later"));
    std::fs::create_dir_all(h.agent_dir().join("prompts")).unwrap();
    std::fs::write(
        h.agent_dir().join("prompts/later.md"),
        "---\ndescription: Written after start\n---\nLater.\n",
    )
    .unwrap();
    // The same hook, now from the user's settings: a reload gathers the hook list again.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hooks/it/controller_ops.py");
    std::fs::write(
        h.agent_dir().join("settings.json"),
        json!({
            "retry": {"enabled": true, "maxRetries": 7},
            "hooks": [{"command": format!("{} {}", python().display(), script.display()),
                       "name": "controller-ops",
                       "config": {"record": h.record.display().to_string()}}],
        })
        .to_string(),
    )
    .unwrap();
    h.ctl.reload().await.unwrap();
    assert!(h
        .ctl
        .get_commands()
        .commands
        .iter()
        .any(|c| c.name == "later"));
    assert_eq!(h.ctl.agent().config().retry.max_retries, 7);
    let hellos = h.hellos();
    assert_eq!(hellos.len(), 2);
    assert_eq!(
        hellos[1]["hello"]["session_id"],
        json!(h.ctl.session_id()),
        "a reload keeps the session"
    );
    let new_pid = pid_of(&hellos[1]);
    let saw = |event: &str, pid: u64| {
        h.seen(event)
            .iter()
            .any(|(p, who)| p["reason"] == "reload" && *who == pid)
    };
    assert!(saw("session_shutdown", old_pid));
    assert!(saw("session_start", new_pid));
    assert!(saw("resources_discover", new_pid));
    assert!(gone(old_pid));
    h.close().await;
}
