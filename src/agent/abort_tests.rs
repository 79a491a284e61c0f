//! Abort and the run's cancellation token: an abort ends the wait on a gate even when the
//! hooks do not watch the token, nothing starts after it, it does not leak past its run, and
//! `stop` aborts every later run too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::{mpsc, Notify};

use super::hooks::{AgentHooks, GateOutcome, Validate};
use super::*;
use crate::message::{StopReason, ToolCall};
use crate::provider::faux::{Faux, FauxScript};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

/// A gate that never decides and never looks at the run's token.
struct DeafGate {
    asked: Arc<Notify>,
}

#[async_trait]
impl AgentHooks for DeafGate {
    async fn tool_call(&self, _call: &ToolCall, _validate: &Validate) -> GateOutcome {
        self.asked.notify_one();
        std::future::pending().await
    }
}

/// Records whether it ran.
struct Marker(Arc<AtomicBool>);

#[async_trait]
impl Tool for Marker {
    fn name(&self) -> &str {
        "mark"
    }
    fn description(&self) -> &str {
        "test tool"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(&self, _: &str, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.0.store(true, Ordering::SeqCst);
        Ok(ToolOutput::text("marked"))
    }
}

fn agent(script: Value, hooks: Arc<dyn AgentHooks>, ran: Arc<AtomicBool>) -> Agent {
    let mut tools = ToolRegistry::default();
    tools.register(Arc::new(Marker(ran)));
    let model = super::tests::model();
    let config = AgentConfig {
        model,
        api_key: None,
        thinking: Default::default(),
        system_prompt: "sys".into(),
        retry: RetryPolicy::default(),
        cwd: std::env::temp_dir(),
        steering_mode: QueueMode::OneAtATime,
        follow_up_mode: QueueMode::OneAtATime,
    };
    let script = FauxScript::parse(&script.to_string()).expect("script");
    let (tx, _rx) = mpsc::unbounded_channel();
    Agent::new(
        config,
        Arc::new(Faux::new(script)),
        Arc::new(tools),
        hooks,
        tx,
    )
}

fn mark_then(text: &str) -> Value {
    json!([{"toolCalls": [{"name": "mark", "arguments": {}}]}, text])
}

#[tokio::test]
async fn an_abort_ends_the_wait_on_a_gate_that_ignores_it_and_not_what_follows_the_run() {
    let asked = Arc::new(Notify::new());
    let ran = Arc::new(AtomicBool::new(false));
    let hooks = Arc::new(DeafGate {
        asked: asked.clone(),
    });
    let mut a = agent(mark_then("never"), hooks, ran.clone());
    let handle = a.handle();
    let abort = async {
        asked.notified().await;
        handle.abort();
    };
    let run = async { tokio::join!(a.prompt(UserContent::Text("go".into())), abort).0 };
    let last = tokio::time::timeout(std::time::Duration::from_secs(10), run)
        .await
        .expect("the agent kept waiting on the gate after the abort")
        .expect("a turn ran");
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert!(!ran.load(Ordering::SeqCst), "the tool ran after the abort");
    let results: Vec<_> = a
        .messages()
        .into_iter()
        .filter_map(|m| match std::sync::Arc::unwrap_or_clone(m) {
            Message::ToolResult(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 1);
    assert!(results[0].is_error);
    assert_eq!(
        crate::message::text_of(&results[0].content),
        "Operation aborted"
    );
    // What happens before the next run (hook commands, compaction) is not aborted with it.
    assert!(!handle.cancel_token().is_cancelled());
}

#[tokio::test]
async fn stop_aborts_the_current_run_and_every_later_one() {
    let ran = Arc::new(AtomicBool::new(false));
    let mut a = agent(
        mark_then("never"),
        Arc::new(super::hooks::NoHooks),
        ran.clone(),
    );
    a.handle().stop();
    let last = a.prompt(UserContent::Text("go".into())).await.expect("ran");
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert!(!ran.load(Ordering::SeqCst));
    assert!(a.handle().cancel_token().is_cancelled());
}
