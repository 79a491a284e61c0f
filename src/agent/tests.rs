//! Loop behaviour with the faux provider and small test tools: ordering, one result per call,
//! gating and re-validation, queues, abort.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::events::AgentEvent;
use super::hooks::{AgentHooks, GateOutcome, NoHooks};
use super::*;
use crate::message::{StopReason, ToolCall};
use crate::provider::faux::{Faux, FauxScript};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

/// Sleeps for `ms` then echoes its tag; records start order.
struct Slow {
    name: &'static str,
    sequential: bool,
    log: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl Tool for Slow {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "test tool"
    }
    fn parameters(&self) -> Value {
        json!({"type":"object","properties":{"tag":{"type":"string"},"ms":{"type":"integer"}},"required":["tag"]})
    }
    fn sequential(&self) -> bool {
        self.sequential
    }
    async fn execute(
        &self,
        _id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let tag = args["tag"].as_str().unwrap_or("").to_string();
        self.log.lock().unwrap().push(format!("start {tag}"));
        let ms = args["ms"].as_u64().unwrap_or(0);
        tokio::select! {
            _ = ctx.cancel.cancelled() => return Err(ToolError::Aborted),
            _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
        }
        self.log.lock().unwrap().push(format!("end {tag}"));
        Ok(ToolOutput::text(format!("tag={tag}")))
    }
}

/// The faux model every loop test runs against (shared with `abort_tests`).
pub(super) fn model() -> crate::provider::Model {
    crate::test_support::faux_model()
}

struct Harness {
    agent: Agent,
    events: mpsc::UnboundedReceiver<AgentEvent>,
    log: Arc<Mutex<Vec<String>>>,
}

fn harness(script: Value, sequential: bool, hooks: Arc<dyn AgentHooks>) -> Harness {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut tools = ToolRegistry::default();
    tools.register(Arc::new(Slow {
        name: "slow",
        sequential: false,
        log: log.clone(),
    }));
    tools.register(Arc::new(Slow {
        name: "seq",
        sequential,
        log: log.clone(),
    }));
    let script = FauxScript::parse(&script.to_string()).unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    let config = AgentConfig {
        model: model(),
        api_key: None,
        thinking: Default::default(),
        system_prompt: "sys".into(),
        retry: RetryPolicy::default(),
        cwd: std::env::temp_dir(),
        steering_mode: QueueMode::OneAtATime,
        follow_up_mode: QueueMode::OneAtATime,
    };
    let agent = Agent::new(
        config,
        Arc::new(Faux::new(script)),
        Arc::new(tools),
        hooks,
        tx,
    );
    Harness {
        agent,
        events: rx,
        log,
    }
}

fn drain(rx: &mut mpsc::UnboundedReceiver<AgentEvent>) -> Vec<AgentEvent> {
    let mut v = Vec::new();
    while let Ok(e) = rx.try_recv() {
        v.push(e);
    }
    v
}

fn call(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

fn tool_results(agent: &Agent) -> Vec<(String, String, bool)> {
    agent
        .messages()
        .iter()
        .filter_map(|m| match m.as_ref() {
            Message::ToolResult(r) => Some((
                r.tool_call_id.clone(),
                crate::message::text_of(&r.content),
                r.is_error,
            )),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn parallel_batch_results_enter_context_in_source_order() {
    let script = json!([{"toolCalls":[
        call("slow", json!({"tag":"a","ms":60})),
        call("slow", json!({"tag":"b","ms":0})),
    ]}, "done"]);
    let mut h = harness(script, false, Arc::new(NoHooks));
    let last = h
        .agent
        .prompt(UserContent::Text("go".into()))
        .await
        .unwrap();
    assert_eq!(last.text(), "done");
    let results = tool_results(&h.agent);
    assert_eq!(results[0].1, "tag=a");
    assert_eq!(results[1].1, "tag=b");
    // Both started before either finished: they ran concurrently, b finished first.
    let log = h.log.lock().unwrap().clone();
    assert_eq!(log, vec!["start a", "start b", "end b", "end a"]);
    // tool_execution_end follows completion order.
    let ends: Vec<String> = drain(&mut h.events)
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd { result, .. } => {
                Some(crate::message::text_of(&result.content))
            }
            _ => None,
        })
        .collect();
    assert_eq!(ends, vec!["tag=b", "tag=a"]);
}

#[tokio::test]
async fn a_sequential_tool_makes_the_whole_batch_sequential() {
    let script = json!([{"toolCalls":[
        call("slow", json!({"tag":"a","ms":30})),
        call("seq", json!({"tag":"b","ms":0})),
    ]}, "done"]);
    let mut h = harness(script, true, Arc::new(NoHooks));
    h.agent.prompt(UserContent::Text("go".into())).await;
    let log = h.log.lock().unwrap().clone();
    assert_eq!(log, vec!["start a", "end a", "start b", "end b"]);
}

#[tokio::test]
async fn every_call_gets_exactly_one_result_even_when_unknown_or_invalid() {
    let script = json!([{"toolCalls":[
        call("nope", json!({})),
        call("slow", json!({"ms": 1})),
        call("slow", json!({"tag":"ok"})),
    ]}, "done"]);
    let mut h = harness(script, false, Arc::new(NoHooks));
    h.agent.prompt(UserContent::Text("go".into())).await;
    let r = tool_results(&h.agent);
    assert_eq!(r.len(), 3);
    assert!(r[0].2 && r[0].1.contains("Tool nope not found"));
    assert!(
        r[1].2 && r[1].1.contains("Validation failed for tool \"slow\""),
        "{}",
        r[1].1
    );
    assert!(!r[2].2);
    let ids: Vec<_> = r.iter().map(|x| x.0.clone()).collect();
    assert_eq!(ids, vec!["faux_1_0", "faux_1_1", "faux_1_2"]);
}

struct Gate {
    calls: AtomicUsize,
}

#[async_trait]
impl AgentHooks for Gate {
    async fn tool_call(&self, call: &ToolCall, _validate: &super::hooks::Validate) -> GateOutcome {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match call.arguments["tag"].as_str() {
            Some("block") => GateOutcome::Block {
                reason: "blocked by policy".into(),
                terminate: false,
            },
            Some("bad-patch") => GateOutcome::Allow {
                args: json!({"tag": 42}),
                patched_by: vec!["patcher".into()],
            },
            Some("good-patch") => GateOutcome::Allow {
                args: json!({"tag": "patched"}),
                patched_by: vec!["patcher".into()],
            },
            _ => GateOutcome::Allow {
                args: call.arguments.clone(),
                patched_by: vec![],
            },
        }
    }
}

#[tokio::test]
async fn gate_blocks_and_patched_arguments_are_validated_again() {
    let script = json!([{"toolCalls":[
        call("slow", json!({"tag":"block"})),
        call("slow", json!({"tag":"bad-patch"})),
        call("slow", json!({"tag":"good-patch"})),
    ]}, "done"]);
    let gate = Arc::new(Gate {
        calls: AtomicUsize::new(0),
    });
    let mut h = harness(script, false, gate.clone());
    h.agent.prompt(UserContent::Text("go".into())).await;
    let r = tool_results(&h.agent);
    assert_eq!(gate.calls.load(Ordering::SeqCst), 3);
    assert_eq!(r[0].1, "blocked by policy");
    assert!(r[0].2);
    assert!(
        r[1].2 && r[1].1.contains("patched by hook patcher"),
        "{}",
        r[1].1
    );
    assert_eq!(r[2].1, "tag=patched");
    // Blocked and invalid calls never ran.
    assert_eq!(
        h.log.lock().unwrap().clone(),
        vec!["start patched", "end patched"]
    );
}

#[tokio::test]
async fn steering_is_delivered_after_the_batch_and_follow_up_after_the_stop() {
    let script = json!([{"toolCalls":[call("slow", json!({"tag":"a"}))]}, "first", "second"]);
    let mut h = harness(script, false, Arc::new(NoHooks));
    let handle = h.agent.handle();
    handle.follow_up(UserContent::Text("later".into()));
    handle.steer(UserContent::Text("now".into()));
    h.agent.prompt(UserContent::Text("go".into())).await;
    let users: Vec<String> = h
        .agent
        .messages()
        .iter()
        .filter_map(|m| match m.as_ref() {
            Message::User(u) => Some(u.content.as_text()),
            _ => None,
        })
        .collect();
    assert_eq!(users, vec!["go", "now", "later"]);
}

#[tokio::test]
async fn abort_during_a_tool_ends_the_run_with_an_aborted_message() {
    let script = json!([{"toolCalls":[call("slow", json!({"tag":"a","ms":60000}))]}, "never"]);
    let mut h = harness(script, false, Arc::new(NoHooks));
    let handle = h.agent.handle();
    let mut events = std::mem::replace(&mut h.events, mpsc::unbounded_channel().1);
    let waiter = tokio::spawn(async move {
        while let Some(e) = events.recv().await {
            if matches!(e, AgentEvent::ToolExecutionStart { .. }) {
                handle.abort();
                break;
            }
        }
    });
    let last = h
        .agent
        .prompt(UserContent::Text("go".into()))
        .await
        .unwrap();
    waiter.await.unwrap();
    assert_eq!(last.stop_reason, StopReason::Aborted);
    let r = tool_results(&h.agent);
    assert_eq!(r.len(), 1);
    assert!(r[0].2);
}

#[tokio::test]
async fn provider_error_becomes_an_error_message() {
    let mut h = harness(json!([{"error":"boom"}]), false, Arc::new(NoHooks));
    let last = h
        .agent
        .prompt(UserContent::Text("go".into()))
        .await
        .unwrap();
    assert_eq!(last.stop_reason, StopReason::Error);
    assert_eq!(last.error_message.as_deref(), Some("boom"));
    assert!(matches!(
        h.agent.messages().last().map(|m| m.as_ref()),
        Some(Message::Assistant(_))
    ));
}

/// Keeps the messages the `context` chain was given before each model call.
struct SeesContext(Mutex<Vec<Vec<Arc<Message>>>>);

#[async_trait]
impl AgentHooks for SeesContext {
    async fn context(&self, messages: Vec<Arc<Message>>) -> Vec<Arc<Message>> {
        self.0.lock().unwrap().push(messages.clone());
        messages
    }
}

#[tokio::test]
async fn the_context_the_recorder_and_the_request_share_one_allocation_per_message() {
    let seen = Arc::new(SeesContext(Mutex::default()));
    let script = json!([{"toolCalls": [call("slow", json!({"tag": "x"}))]}, "done"]);
    let mut h = harness(script, false, seen.clone());
    let recorded: Arc<Mutex<Vec<Arc<Message>>>> = Arc::default();
    let sink = recorded.clone();
    h.agent
        .record(Arc::new(move |m| sink.lock().unwrap().push(Arc::clone(m))));
    let history = vec![Arc::new(Message::user("earlier"))];
    h.agent.load_messages(history.clone());
    h.agent.prompt(UserContent::Text("go".into())).await;

    let context = h.agent.messages();
    // earlier, the system message declaring the prompt and tools, go, the tool call, its
    // result, done.
    assert_eq!(context.len(), 6);
    assert!(
        Arc::ptr_eq(&context[0], &history[0]),
        "the loaded history was copied"
    );
    let recorded = recorded.lock().unwrap();
    assert_eq!(recorded.len(), 5);
    for (kept, stored) in context[1..].iter().zip(recorded.iter()) {
        assert!(
            Arc::ptr_eq(kept, stored),
            "{stored:?} was recorded as a copy"
        );
    }
    let calls = seen.0.lock().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].len(), 5);
    for (sent, kept) in calls[1].iter().zip(context.iter()) {
        assert!(
            Arc::ptr_eq(sent, kept),
            "{sent:?} was copied into the request"
        );
    }
}
