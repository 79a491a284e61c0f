//! Prompts and runs: a prompt answers at once while its run streams; a prompt during a run
//! needs a streaming behaviour; steering and follow-ups arrive in pi's order; abort ends a
//! run during a tool and during a hook's gate; queries are answered during a run.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::controller::{ControllerError, Disposition, PromptRequest, StreamingBehavior};
use crate::message::StopReason;

fn with(how: StreamingBehavior, message: &str) -> PromptRequest {
    PromptRequest {
        message: message.into(),
        images: Vec::new(),
        streaming_behavior: Some(how),
    }
}

#[tokio::test]
async fn a_prompt_answers_at_once_and_queries_are_answered_while_its_run_streams() {
    let gate = Gate::new();
    let mut h = start(Opts {
        script: json!([call_wait(), "done"]),
        tools: vec![Arc::new(WaitTool(gate.clone()))],
        ..Opts::default()
    })
    .await;
    let out = h.ctl.prompt(PromptRequest::text("go")).await.unwrap();
    assert_eq!(out.disposition, Disposition::Started);
    assert_eq!(
        serde_json::to_value(&out).unwrap(),
        json!({"disposition": "started"})
    );
    tokio::time::timeout(LONG, gate.started.notified())
        .await
        .expect("the tool started");
    // The run is blocked in its tool: every query still answers.
    let state = h.ctl.get_state();
    assert!(state.is_streaming);
    assert_eq!(
        state.message_count, 3,
        "the system message, the prompt and the reply calling the tool"
    );
    let messages = h.ctl.get_messages().messages;
    assert_eq!(messages[0].role(), "system");
    assert_eq!(messages[1].role(), "user");
    assert_eq!(messages[1].text(), "go");
    assert_eq!(
        h.ctl.get_entries(None).unwrap().entries.len(),
        messages.len() + 2
    );
    assert!(h.ctl.get_tree().is_ok());
    assert_eq!(h.ctl.get_session_stats().counts.tool_calls, 1);
    gate.release.notify_one();
    let events = h.until(is_settled).await;
    let kinds: Vec<String> = events.iter().map(kind).collect();
    let end = kinds
        .iter()
        .position(|k| k == "agent_end")
        .expect("agent_end");
    assert_eq!(kinds.last().map(String::as_str), Some("agent_settled"));
    assert!(end < kinds.len() - 1);
    assert!(matches!(
        events.last(),
        Some(AgentEvent::AgentSettled { aborted: false })
    ));
    assert!(!h.ctl.get_state().is_streaming);
    assert_eq!(
        h.ctl.get_last_assistant_text().text.as_deref(),
        Some("done")
    );
    h.close().await;
}

#[tokio::test]
async fn a_prompt_during_a_run_needs_a_streaming_behavior() {
    let gate = Gate::new();
    let mut h = start(Opts {
        script: json!([call_wait(), "after steering", "after the follow-up"]),
        tools: vec![Arc::new(WaitTool(gate.clone()))],
        ..Opts::default()
    })
    .await;
    h.ctl.prompt(PromptRequest::text("go")).await.unwrap();
    tokio::time::timeout(LONG, gate.started.notified())
        .await
        .expect("the tool started");
    let refused = h.ctl.prompt(PromptRequest::text("interrupt")).await;
    let Err(e @ ControllerError::Busy) = refused else {
        panic!("a prompt without streamingBehavior was not refused: {refused:?}");
    };
    assert!(e.to_string().contains("streamingBehavior"), "{e}");
    // Queued in the order sent; the follow-up first, to show steering overtakes it.
    let f = h
        .ctl
        .prompt(with(StreamingBehavior::FollowUp, "and then this"))
        .await
        .unwrap();
    let s = h
        .ctl
        .queue_message(StreamingBehavior::Steer, "change course".into(), Vec::new())
        .await
        .unwrap();
    assert_eq!(f.disposition, Disposition::Queued);
    assert_eq!(s.disposition, Disposition::Queued);
    let state = h.ctl.get_state();
    assert_eq!(state.pending_message_count, 2);
    let queued: Vec<AgentEvent> = h
        .drain()
        .into_iter()
        .filter(|e| matches!(e, AgentEvent::QueueUpdate { .. }))
        .collect();
    assert!(
        matches!(queued.last(), Some(AgentEvent::QueueUpdate { steering, follow_up })
            if steering == &["change course"] && follow_up == &["and then this"]),
        "{queued:?}"
    );
    gate.release.notify_one();
    h.until(is_settled).await;
    // Steering after the running tool's batch, before the next model call; the follow-up
    // only once the model stopped.
    assert_eq!(h.user_texts(), vec!["go", "change course", "and then this"]);
    let texts: Vec<String> = h
        .ctl
        .get_messages()
        .messages
        .iter()
        .filter(|m| m.role() != "system")
        .map(|m| format!("{}:{}", m.role(), m.text()))
        .collect();
    assert_eq!(
        texts,
        vec![
            "user:go",
            "assistant:",
            "toolResult:released",
            "user:change course",
            "assistant:after steering",
            "user:and then this",
            "assistant:after the follow-up",
        ]
    );
    assert_eq!(h.ctl.get_state().pending_message_count, 0);
    h.close().await;
}

#[tokio::test]
async fn a_queued_prompt_after_the_run_settled_starts_the_next_run() {
    let mut h = start(Opts {
        script: json!(["one", "two"]),
        ..Opts::default()
    })
    .await;
    h.ctl.prompt(PromptRequest::text("first")).await.unwrap();
    h.until(is_settled).await;
    let out = h
        .ctl
        .prompt(with(StreamingBehavior::FollowUp, "second"))
        .await
        .unwrap();
    assert_eq!(out.disposition, Disposition::Started);
    h.until(is_settled).await;
    assert_eq!(h.user_texts(), vec!["first", "second"]);
    h.close().await;
}

#[tokio::test]
async fn steering_and_follow_ups_sent_while_idle_wait_for_the_next_run() {
    let mut h = start(Opts {
        script: json!(["first", "second"]),
        ..Opts::default()
    })
    .await;
    let out = h
        .ctl
        .queue_message(StreamingBehavior::FollowUp, "later".into(), Vec::new())
        .await
        .unwrap();
    assert_eq!(out.disposition, Disposition::Queued);
    assert!(!h.ctl.get_state().is_streaming);
    assert_eq!(h.ctl.get_state().pending_message_count, 1);
    h.ctl.prompt(PromptRequest::text("now")).await.unwrap();
    h.until(is_settled).await;
    assert_eq!(h.user_texts(), vec!["now", "later"]);
    h.close().await;
}

#[tokio::test]
async fn an_aborted_run_does_not_go_on_with_queued_messages() {
    let gate = Gate::new();
    let mut h = start(Opts {
        script: json!([call_wait(), "for again", "for the follow-up"]),
        tools: vec![Arc::new(WaitTool(gate.clone()))],
        ..Opts::default()
    })
    .await;
    h.ctl.prompt(PromptRequest::text("go")).await.unwrap();
    tokio::time::timeout(LONG, gate.started.notified())
        .await
        .expect("the tool started");
    h.ctl
        .prompt(with(StreamingBehavior::FollowUp, "afterwards"))
        .await
        .unwrap();
    h.ctl.abort().await;
    h.until(is_settled).await;
    assert_eq!(h.user_texts(), vec!["go"]);
    assert_eq!(h.ctl.get_state().pending_message_count, 1, "still queued");
    // The next run delivers it.
    h.ctl.prompt(PromptRequest::text("again")).await.unwrap();
    h.until(is_settled).await;
    assert_eq!(h.user_texts(), vec!["go", "again", "afterwards"]);
    h.close().await;
}

#[tokio::test]
async fn clear_queue_returns_and_removes_the_queued_messages() {
    let gate = Gate::new();
    let mut h = start(Opts {
        script: json!([call_wait(), "done"]),
        tools: vec![Arc::new(WaitTool(gate.clone()))],
        ..Opts::default()
    })
    .await;
    h.ctl.prompt(PromptRequest::text("go")).await.unwrap();
    tokio::time::timeout(LONG, gate.started.notified())
        .await
        .expect("the tool started");
    h.ctl
        .prompt(with(StreamingBehavior::Steer, "s1"))
        .await
        .unwrap();
    h.ctl
        .prompt(with(StreamingBehavior::FollowUp, "f1"))
        .await
        .unwrap();
    let cleared = h.ctl.clear_queue();
    assert_eq!(
        serde_json::to_value(&cleared).unwrap(),
        json!({"steering": ["s1"], "followUp": ["f1"]})
    );
    gate.release.notify_one();
    h.until(is_settled).await;
    assert_eq!(h.user_texts(), vec!["go"]);
    h.close().await;
}

#[tokio::test]
async fn abort_during_a_tool_ends_the_run_at_once_and_it_settles_aborted() {
    let gate = Gate::new();
    let mut h = start(Opts {
        script: json!([call_wait(), "never"]),
        tools: vec![Arc::new(WaitTool(gate.clone()))],
        ..Opts::default()
    })
    .await;
    h.ctl.prompt(PromptRequest::text("go")).await.unwrap();
    tokio::time::timeout(LONG, gate.started.notified())
        .await
        .expect("the tool started");
    tokio::time::timeout(LONG, h.ctl.abort())
        .await
        .expect("abort waits only for the run to end");
    assert!(!h.ctl.get_state().is_streaming);
    let events = h.until(is_settled).await;
    assert!(matches!(
        events.last(),
        Some(AgentEvent::AgentSettled { aborted: true })
    ));
    let last = h.ctl.agent().messages();
    assert!(matches!(
        last.last().map(|m| m.as_ref()),
        Some(Message::Assistant(a)) if a.stop_reason == StopReason::Aborted
    ));
    // A prompt after the abort runs normally: the abort does not leak into it.
    h.close().await;
}

#[tokio::test]
async fn abort_during_a_hook_gate_ends_the_wait_and_the_tool_never_runs() {
    let gate = Gate::new();
    let mut h = start(Opts {
        script: json!([call_wait(), "never"]),
        tools: vec![Arc::new(WaitTool(gate.clone()))],
        hook: Some(json!({"gate": "hang"})),
        ..Opts::default()
    })
    .await;
    h.ctl.prompt(PromptRequest::text("go")).await.unwrap();
    h.until_recorded("the gate being asked", |r| r["gate_asked"] == true)
        .await;
    // The hook would wait 60 s; the abort must not.
    tokio::time::timeout(Duration::from_secs(10), h.ctl.abort())
        .await
        .expect("the abort did not end the wait on the gate");
    let events = h.until(is_settled).await;
    assert!(matches!(
        events.last(),
        Some(AgentEvent::AgentSettled { aborted: true })
    ));
    assert_eq!(gate.runs(), 0, "the tool ran after the abort");
    h.until_recorded("the cancel of its gate request", |r| {
        r["gate_cancelled"] == true
    })
    .await;
    h.close().await;
}

#[tokio::test]
async fn input_a_hook_handles_is_handled_and_starts_no_run() {
    let mut h = start(Opts {
        script: json!(["reply"]),
        hook: Some(json!({"input": "handle"})),
        ..Opts::default()
    })
    .await;
    let out = h
        .ctl
        .prompt(PromptRequest::text("!handled by the hook"))
        .await
        .unwrap();
    assert_eq!(out.disposition, Disposition::Handled);
    assert!(!h.ctl.get_state().is_streaming);
    assert!(h.drain().iter().all(|e| kind(e) != "agent_start"));
    let out = h.ctl.prompt(PromptRequest::text("hello")).await.unwrap();
    assert_eq!(out.disposition, Disposition::Started);
    h.until(is_settled).await;
    assert_eq!(h.user_texts(), vec!["hello"]);
    h.close().await;
}

#[tokio::test]
async fn a_hook_command_runs_during_a_run_and_cannot_be_queued() {
    let gate = Gate::new();
    let mut h = start(Opts {
        script: json!([call_wait(), "done"]),
        tools: vec![Arc::new(WaitTool(gate.clone()))],
        hook: Some(json!({})),
        ..Opts::default()
    })
    .await;
    h.ctl.prompt(PromptRequest::text("go")).await.unwrap();
    tokio::time::timeout(LONG, gate.started.notified())
        .await
        .expect("the tool started");
    // Commands run at once, even during a run.
    let out = h
        .ctl
        .prompt(PromptRequest::text(r#"/op session.get_tree {}"#))
        .await
        .unwrap();
    assert_eq!(out.disposition, Disposition::Handled);
    let answer: Value = serde_json::from_str(out.command_text.as_deref().unwrap()).unwrap();
    assert!(answer["tree"].is_array(), "{answer}");
    let queued = h
        .ctl
        .queue_message(StreamingBehavior::Steer, "/op x".into(), Vec::new())
        .await;
    assert!(matches!(queued, Err(ControllerError::CommandNotQueueable(ref n)) if n == "op"));
    gate.release.notify_one();
    h.until(is_settled).await;
    h.close().await;
}

#[tokio::test]
async fn images_are_sent_with_the_prompt_text() {
    let mut h = start(Opts {
        script: json!(["seen"]),
        ..Opts::default()
    })
    .await;
    let req = PromptRequest {
        message: "what is this".into(),
        images: vec![crate::controller::ImageInput {
            data: "aGk=".into(),
            mime_type: "image/png".into(),
        }],
        streaming_behavior: None,
    };
    h.ctl.prompt(req).await.unwrap();
    h.until(is_settled).await;
    // After the system message declaring the prompt.
    let first = h.ctl.agent().messages().remove(1);
    let Message::User(u) = first.as_ref() else {
        panic!("not a user message")
    };
    let v = serde_json::to_value(&u.content).unwrap();
    assert_eq!(v[0]["text"], "what is this");
    assert_eq!(
        v[1],
        json!({"type": "image", "data": "aGk=", "mimeType": "image/png"})
    );
    h.close().await;
}
