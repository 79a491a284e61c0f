//! One tool call's pipeline, shared by the model's calls (a batch, `agent::batch`) and hooks'
//! nested `tools.execute`, so both pass the same steps in the same order (the seeds'
//! `runToolCall`): `tool_execution_start`; the tool's own argument normalisation, then the
//! hooks' `prepare_arguments` chain; validation against the tool's schema; the `tool_call`
//! gate and re-validation of patched arguments; execution (progress as
//! `tool_execution_update`); the `tool_result` chain; `tool_execution_end` with the final
//! result and `durationMs`. A nested call's events carry `parentToolCallId`.
//!
//! Who may reach a tool is the caller's decision (the model: what it was offered; a hook: the
//! tool's exposure); everything after that is decided here.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, ToolResultPayload};
use super::hooks::{AgentHooks, GateOutcome};
use crate::message::{now_ms, ToolCall, ToolResultMessage};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput, ToolRegistry};

/// Why a call did not run.
#[derive(Debug, Clone, PartialEq)]
pub enum Refused {
    /// The tool does not exist, or the caller may not reach it.
    Unknown(String),
    /// The (prepared) arguments fail the tool's schema.
    Invalid(String),
    /// A gate blocked it; `terminate` if the hook asked the run to end after the batch.
    Blocked { reason: String, terminate: bool },
    /// Arguments patched by the gate fail the schema.
    BadPatch(String),
    /// The run was aborted first.
    Aborted,
}

impl Refused {
    /// The error result the model (or the nested caller) reads.
    pub fn message(&self) -> String {
        match self {
            Refused::Unknown(m) | Refused::Invalid(m) | Refused::BadPatch(m) => m.clone(),
            Refused::Blocked { reason, .. } => reason.clone(),
            Refused::Aborted => "Operation aborted".into(),
        }
    }

    pub fn terminate(&self) -> bool {
        matches!(
            self,
            Refused::Blocked {
                terminate: true,
                ..
            }
        )
    }
}

/// A call that passed preflight: the tool and the arguments it runs with.
pub struct Cleared {
    pub tool: Arc<dyn Tool>,
    /// The call as it runs: `tool_result` hooks see these arguments, not the model's.
    pub call: ToolCall,
}

/// The steps of one call, over one registry and one set of hooks.
pub struct ToolRun<'a> {
    pub tools: &'a Arc<ToolRegistry>,
    pub hooks: &'a dyn AgentHooks,
    /// Where the call's events go (the stream and the hooks).
    pub emit: &'a (dyn Fn(AgentEvent) + Send + Sync),
    /// The call a nested call serves.
    pub parent: Option<String>,
}

impl ToolRun<'_> {
    /// `tool_execution_start`; returns when it was, for `durationMs`.
    pub fn start(&self, call: &ToolCall) -> Instant {
        (self.emit)(AgentEvent::ToolExecutionStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.arguments.clone(),
            parent_tool_call_id: self.parent.clone(),
        });
        Instant::now()
    }

    /// Preparation, validation, the gate and re-validation after a patch. The caller has
    /// already decided the tool may be reached.
    pub async fn preflight(
        &self,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> Result<Cleared, Refused> {
        if cancel.is_cancelled() {
            return Err(Refused::Aborted);
        }
        let tool = self
            .tools
            .get(&call.name)
            .ok_or_else(|| Refused::Unknown(format!("Tool {} not found", call.name)))?;
        // The tool's own normalisation first (edit's legacy shapes), then the hooks'.
        let args = tool.prepare_arguments(call.arguments.clone());
        let args = tokio::select! {
            biased;
            a = self.hooks.prepare_arguments(call, args) => a,
            _ = cancel.cancelled() => return Err(Refused::Aborted),
        };
        self.tools
            .check(&call.name, &args)
            .map_err(|e| Refused::Invalid(e.to_string()))?;
        let gated = ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: args,
            thought_signature: call.thought_signature.clone(),
        };
        let tools = self.tools.clone();
        let name = call.name.clone();
        let validate = move |v: &Value| tools.check(&name, v).map_err(|e| e.to_string());
        // The hooks' own abort handling comes first (it names the hook that was deciding);
        // the token is the backstop for hooks that do not watch it.
        let verdict = tokio::select! {
            biased;
            v = self.hooks.tool_call(&gated, &validate) => v,
            _ = cancel.cancelled() => return Err(Refused::Aborted),
        };
        match verdict {
            GateOutcome::Block { reason, terminate } => Err(Refused::Blocked { reason, terminate }),
            GateOutcome::Allow { args, patched_by } => {
                if !patched_by.is_empty() {
                    if let Err(e) = self.tools.check(&call.name, &args) {
                        return Err(Refused::BadPatch(format!(
                            "Blocked: arguments patched by hook {} are invalid: {e}",
                            patched_by.join(", ")
                        )));
                    }
                }
                Ok(Cleared {
                    tool,
                    call: ToolCall {
                        arguments: args,
                        ..gated
                    },
                })
            }
        }
    }

    /// Run the tool, forwarding its progress as `tool_execution_update` events. Returns its
    /// output and whether it failed.
    pub async fn execute(&self, c: &Cleared, mut ctx: ToolContext) -> (ToolOutput, bool) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        ctx.updates = Some(tx);
        let fut = c.tool.execute(&c.call.id, c.call.arguments.clone(), &ctx);
        tokio::pin!(fut);
        let update = |partial: ToolOutput| {
            (self.emit)(AgentEvent::ToolExecutionUpdate {
                tool_call_id: c.call.id.clone(),
                tool_name: c.call.name.clone(),
                args: c.call.arguments.clone(),
                partial_result: ToolResultPayload::partial(partial.content, partial.details),
                parent_tool_call_id: self.parent.clone(),
            })
        };
        let result = loop {
            tokio::select! {
                res = &mut fut => break res,
                Some(partial) = rx.recv() => update(partial),
            }
        };
        // Updates queued just before the tool finished still go out, in order.
        while let Ok(partial) = rx.try_recv() {
            update(partial);
        }
        match result {
            Ok(out) => (out, false),
            Err(ToolError::FailedWithOutput(out)) => (*out, true),
            // A thrown error's result has `details: {}` in pi 1.6.
            Err(e) => (
                ToolOutput {
                    details: Some(serde_json::json!({})),
                    ..ToolOutput::text(e.to_string())
                },
                true,
            ),
        }
    }

    /// The `tool_result` chain, then `tool_execution_end`: for calls that reached execution.
    pub async fn finish(
        &self,
        call: &ToolCall,
        out: ToolOutput,
        is_error: bool,
        started: Instant,
    ) -> ToolResultMessage {
        let msg = self
            .hooks
            .tool_result(call, result_message(call, out, is_error))
            .await;
        self.end(call, msg, Some(started))
    }

    /// `tool_execution_end` with the final result; `started` when the tool ran, so the event
    /// and the result say how long it took.
    pub fn end(
        &self,
        call: &ToolCall,
        mut msg: ToolResultMessage,
        started: Option<Instant>,
    ) -> ToolResultMessage {
        msg.duration_ms = started.map(|s| s.elapsed().as_millis().min(u128::from(u64::MAX)) as u64);
        (self.emit)(AgentEvent::ToolExecutionEnd {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            result: ToolResultPayload::of(&msg),
            is_error: msg.is_error,
            duration_ms: msg.duration_ms,
            parent_tool_call_id: self.parent.clone(),
        });
        msg
    }
}

/// A tool's output as the result message the context keeps.
pub fn result_message(call: &ToolCall, out: ToolOutput, is_error: bool) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: out.content,
        details: out.details,
        is_error,
        structured_content: out.structured_content,
        usage: out.usage,
        duration_ms: None,
        timestamp: now_ms(),
    }
}
