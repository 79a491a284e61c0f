//! Claude Code's `async: true`: the hook is started and not waited for, so it cannot block or
//! change anything; when it ends, what it said is logged as a `hook_decision` with outcome
//! `async` (its answer summarised), and its `additionalContext` (and plain-text context where
//! the event has it) goes to the model with the next prompt, as Claude Code delivers it on the
//! next turn. Runs still going at shutdown are finished or killed with the Notification runs.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use super::{input, ClaudeEvent, ClaudeHook, Decision};
use crate::agent::events::{AgentEvent, HookAnswer, HookDecision};

impl ClaudeHook {
    /// The stdin of this hook for pi's `event`, if it runs there (its matcher agrees), and
    /// the tool call it is about.
    fn background_stdin(
        &self,
        event: &str,
        payload: &Value,
    ) -> Option<(Value, Option<[String; 2]>)> {
        let e = self.spec.event;
        let mut stdin = self.base();
        let call = || {
            Some([
                payload["tool_call_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                payload["tool_name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            ])
        };
        match event {
            "tool_call" | "tool_result" => {
                let failed = payload["is_error"].as_bool().unwrap_or(false);
                if event == "tool_result" && failed != (e == ClaudeEvent::PostToolUseFailure) {
                    return None;
                }
                let (tool, stdin) = input::tool_event(&self.shared.session(), e, payload);
                return self.spec.matcher.matches(&tool).then(|| (stdin, call()));
            }
            "input" => {
                stdin.insert("prompt".into(), payload["text"].clone());
            }
            "session_start" => {
                let source = input::session_source(payload["reason"].as_str().unwrap_or("startup"));
                stdin.insert("source".into(), json!(source));
            }
            "session_shutdown" => {
                let reason = input::session_end_reason(
                    payload["reason"].as_str().unwrap_or("other"),
                    &self.shared.ctx.mode,
                );
                stdin.insert("reason".into(), json!(reason));
            }
            "agent_before_settle" => {
                stdin.insert("stop_hook_active".into(), json!(false));
            }
            "session_before_compact" => {
                let trigger = input::compact_trigger(payload["reason"].as_str().unwrap_or(""));
                stdin.insert("trigger".into(), json!(trigger));
                let instructions = payload["custom_instructions"].as_str().unwrap_or("");
                stdin.insert("custom_instructions".into(), json!(instructions));
            }
            _ => return None,
        }
        let stdin = Value::Object(stdin);
        if let Some(subject) = input::matcher_subject(e, &stdin) {
            if !self.spec.matcher.matches(&subject) {
                return None;
            }
        }
        Some((stdin, None))
    }

    /// Starts the hook for `event` without waiting for it.
    pub(super) fn start_background(self: &Arc<Self>, event: &str, payload: &Value) {
        let Some((stdin, call)) = self.background_stdin(event, payload) else {
            return;
        };
        let me = self.clone();
        let event = event.to_string();
        let task = tokio::spawn(async move {
            let t0 = Instant::now();
            let ran = me.execute(&stdin, me.spec.timeout).await;
            let latency_us = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
            let reason = match ran {
                Ok(d) => {
                    let said = summary(&d);
                    me.pending().extend(d.context);
                    said
                }
                Err(e) => {
                    me.report(&event, &e.kind, &e.message);
                    Some(format!("failed: {}", e.message))
                }
            };
            let _ = me
                .shared
                .events
                .send(AgentEvent::HookDecision(HookDecision {
                    event: event.clone(),
                    tool_call_id: call.as_ref().map(|c| c[0].clone()),
                    tool_name: call.as_ref().map(|c| c[1].clone()),
                    answers: vec![HookAnswer {
                        hook: me.spec.name.clone(),
                        outcome: "async".into(),
                        reason: reason.clone(),
                        patch: None,
                        latency_us,
                    }],
                    outcome: "async".into(),
                    reason,
                }));
        });
        self.shared.keep_background(task);
    }
}

/// What an async hook said, for the log: what it would have done had it been waited for.
fn summary(d: &Decision) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(b) = &d.block {
        parts.push(format!("it would block ({b}), but an async hook cannot"));
    }
    if let Some(s) = &d.stop {
        parts.push(format!("it asks to stop ({s}), but an async hook cannot"));
    }
    if !d.context.is_empty() {
        parts.push("context for the next prompt".to_string());
    }
    if let Some(e) = &d.error {
        parts.push(e.clone());
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}
