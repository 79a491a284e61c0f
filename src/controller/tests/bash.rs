//! The user's own shell command: streamed output, the result in the next prompt's context,
//! abort, `user_bash` hooks (answering, failing closed), and a command that ends during a run.

use serde_json::json;

use super::*;
use crate::controller::{BashRequest, ControllerError, PromptRequest};

fn bash(command: &str) -> BashRequest {
    BashRequest {
        command: command.into(),
        exclude_from_context: false,
        id: Some("req-1".into()),
    }
}

fn deltas(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::BashExecutionUpdate { id, delta } => {
                assert_eq!(id.as_deref(), Some("req-1"));
                Some(delta.as_str())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn bash_streams_its_output_and_the_result_reaches_the_model_with_the_next_prompt() {
    let mut h = start(Opts {
        script: json!(["seen"]),
        ..Opts::default()
    })
    .await;
    let out = h
        .ctl
        .bash(bash("printf 'one\\n'; echo \"model=$PI_MODEL\"; exit 3"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&out).unwrap(),
        json!({"output": "one\nmodel=faux-1\n", "exitCode": 3, "cancelled": false,
               "truncated": false})
    );
    assert_eq!(deltas(&h.drain()), "one\nmodel=faux-1\n");
    let last = h.ctl.get_messages().messages.pop().unwrap();
    assert_eq!(last.role(), "bashExecution");
    h.ctl
        .prompt(PromptRequest::text("what happened?"))
        .await
        .unwrap();
    h.until(is_settled).await;
    let users = h.user_texts();
    assert!(users[0].starts_with("Ran `printf"), "{users:?}");
    assert!(users[0].contains("Command exited with code 3"), "{users:?}");
    assert_eq!(users[1], "what happened?");
    h.close().await;
}

#[tokio::test]
async fn output_excluded_from_the_context_is_stored_but_not_sent() {
    let h = start(Opts::default()).await;
    let mut req = bash("echo private");
    req.exclude_from_context = true;
    h.ctl.bash(req).await.unwrap();
    let stored = h.ctl.get_messages().messages;
    assert_eq!(stored.last().map(|m| m.role()), Some("bashExecution"));
    assert!(h.ctl.agent().messages().is_empty());
    h.close().await;
}

#[tokio::test]
async fn abort_bash_kills_the_command_and_it_comes_back_cancelled() {
    let mut h = start(Opts::default()).await;
    let ctl = h.ctl.clone();
    let running = tokio::spawn(async move { ctl.bash(bash("echo started; sleep 30")).await });
    h.until(
        |e| matches!(e, AgentEvent::BashExecutionUpdate { delta, .. } if delta.contains("started")),
    )
    .await;
    assert!(matches!(
        h.ctl.bash(bash("echo second")).await,
        Err(ControllerError::BashBusy)
    ));
    assert!(h.ctl.abort_bash());
    let out = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the command ended at once")
        .unwrap()
        .unwrap();
    assert!(out.cancelled);
    assert_eq!(out.exit_code, None);
    assert!(!h.ctl.abort_bash(), "nothing runs any more");
    h.close().await;
}

#[tokio::test]
async fn a_user_bash_hook_that_answers_runs_the_command_instead() {
    let h = start(Opts {
        hook: Some(json!({"user_bash": "ran"})),
        ..Opts::default()
    })
    .await;
    let out = h.ctl.bash(bash("touch should-not-exist")).await.unwrap();
    assert_eq!(out.output, "ran by hook");
    assert_eq!(out.exit_code, Some(0));
    assert!(!h.cwd().join("should-not-exist").exists());
    let (payload, _) = h.seen("user_bash").pop().expect("user_bash was asked");
    assert_eq!(payload["command"], "touch should-not-exist");
    assert_eq!(payload["exclude_from_context"], false);
    assert_eq!(payload["cwd"], json!(h.cwd().display().to_string()));
    h.close().await;
}

#[tokio::test]
async fn a_failing_user_bash_hook_means_the_command_does_not_run() {
    let h = start(Opts {
        hook: Some(json!({"user_bash": "fail"})),
        ..Opts::default()
    })
    .await;
    let refused = h.ctl.bash(bash("touch should-not-exist")).await;
    let Err(e @ ControllerError::BashRefused(_)) = refused else {
        panic!("the command was not refused: {refused:?}");
    };
    assert!(e.to_string().contains("controller-ops"), "{e}");
    assert!(!h.cwd().join("should-not-exist").exists());
    assert!(h.ctl.get_messages().messages.is_empty());
    h.close().await;
}

#[tokio::test]
async fn a_command_that_ends_during_a_run_joins_the_context_after_the_run() {
    let gate = Gate::new();
    let mut h = start(Opts {
        script: json!([call_wait(), "done"]),
        tools: vec![std::sync::Arc::new(WaitTool(gate.clone()))],
        ..Opts::default()
    })
    .await;
    h.ctl.prompt(PromptRequest::text("go")).await.unwrap();
    tokio::time::timeout(LONG, gate.started.notified())
        .await
        .expect("the tool started");
    let out = h.ctl.bash(bash("echo meanwhile")).await.unwrap();
    assert_eq!(out.output, "meanwhile\n");
    assert!(h
        .ctl
        .get_messages()
        .messages
        .iter()
        .all(|m| m.role() != "bashExecution"));
    gate.release.notify_one();
    h.until(is_settled).await;
    let roles: Vec<String> = h
        .ctl
        .get_messages()
        .messages
        .iter()
        .map(|m| m.role().to_string())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "bashExecution"
        ]
    );
    h.close().await;
}
