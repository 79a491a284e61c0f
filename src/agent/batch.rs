//! Tool batches: preflight every call in source order (unknown tool, argument validation, the
//! `tool_call` gate and re-validation of patched arguments), run what passed — concurrently
//! unless a tool in the batch is sequential — pass each result through the `tool_result`
//! chain, and add exactly one result per call to the context in source order. A call that
//! preflight refused (unknown tool, invalid arguments, blocked) never ran, so it skips
//! `tool_result` and only reports its error in `tool_execution_end`, as the seeds do. An abort
//! ends the wait on a gate at once and no call starts after it.

use std::sync::Arc;

use futures_util::future::join_all;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, ToolResultPayload};
use super::hooks::GateOutcome;
use super::Agent;
use crate::message::{now_ms, Content, Message, ToolCall, ToolResultMessage};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

/// What one batch runs with, read once when it starts.
struct Batch<'a> {
    tools: &'a Arc<crate::tools::ToolRegistry>,
    cwd: &'a std::path::Path,
    env: &'a [(String, String)],
}

/// A call that passed preflight.
struct Ready {
    index: usize,
    call: ToolCall,
    args: Value,
    tool: Arc<dyn Tool>,
}

impl Ready {
    /// The call as it actually ran: `tool_result` hooks see the validated, possibly patched
    /// arguments, not the model's originals.
    fn ran(&self) -> ToolCall {
        ToolCall {
            arguments: self.args.clone(),
            ..self.call.clone()
        }
    }
}

impl Agent {
    pub(super) async fn run_batch(
        &mut self,
        calls: &[ToolCall],
        cancel: &CancellationToken,
        run: &mut Vec<Message>,
    ) -> Vec<ToolResultMessage> {
        let mut results: Vec<Option<ToolResultMessage>> = vec![None; calls.len()];
        // One registry and configuration for the whole batch, whatever changes meanwhile.
        let (config, _, tools) = self.handle.snapshot();
        let env = config.tool_env();
        let batch = Batch {
            tools: &tools,
            cwd: &config.cwd,
            env: &env,
        };
        let mut ready = Vec::new();
        for (index, call) in calls.iter().enumerate() {
            self.emit(AgentEvent::ToolExecutionStart {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                args: call.arguments.clone(),
            });
            match self.preflight(&batch, call, cancel).await {
                Ok((tool, args)) => ready.push(Ready {
                    index,
                    call: call.clone(),
                    args,
                    tool,
                }),
                Err(message) => {
                    let msg = result_message(call, ToolOutput::text(message), true);
                    results[index] = Some(self.end_call(call, msg));
                }
            }
        }

        let sequential = ready.iter().any(|r| r.tool.sequential());
        if sequential {
            for r in ready {
                let (out, is_error) = self.execute_unless_aborted(&batch, &r, cancel).await;
                results[r.index] = Some(self.finish_call(&r.ran(), out, is_error).await);
            }
        } else {
            let this = &*self;
            let batch = &batch;
            let outs = join_all(ready.iter().map(|r| async move {
                let (out, is_error) = this.execute_unless_aborted(batch, r, cancel).await;
                (r.index, this.finish_call(&r.ran(), out, is_error).await)
            }))
            .await;
            for (index, res) in outs {
                results[index] = Some(res);
            }
        }

        let mut ordered = Vec::with_capacity(calls.len());
        for (call, res) in calls.iter().zip(results) {
            // Every call gets exactly one result; the branches above fill every slot, and this
            // keeps the invariant even if that ever changes.
            let res = res.unwrap_or_else(|| error_result(call, "Tool call produced no result"));
            if let Message::ToolResult(r) = self
                .push_message(Message::ToolResult(res.clone()), run)
                .await
            {
                ordered.push(r);
            } else {
                ordered.push(res);
            }
        }
        ordered
    }

    /// Unknown tool, invalid arguments, the gate, and re-validation after a patch.
    async fn preflight(
        &self,
        batch: &Batch<'_>,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> Result<(Arc<dyn Tool>, Value), String> {
        if cancel.is_cancelled() {
            return Err("Operation aborted".into());
        }
        let tool = batch
            .tools
            .get(&call.name)
            .filter(|_| self.is_active(&call.name))
            .ok_or_else(|| format!("Tool {} not found", call.name))?;
        let args = batch
            .tools
            .validate(&call.name, call.arguments.clone())
            .map_err(|e| e.to_string())?;
        let gated = ToolCall {
            arguments: args,
            ..call.clone()
        };
        let tools = batch.tools.clone();
        let name = call.name.clone();
        let validate = move |v: &Value| tools.check(&name, v).map_err(|e| e.to_string());
        // The hooks' own abort handling comes first (it names the hook that was deciding);
        // the token is the backstop for hooks that do not watch it.
        let verdict = tokio::select! {
            biased;
            v = self.hooks.tool_call(&gated, &validate) => v,
            _ = cancel.cancelled() => return Err("Operation aborted".into()),
        };
        match verdict {
            GateOutcome::Block { reason } => Err(reason),
            GateOutcome::Allow { args, patched_by } => {
                if !patched_by.is_empty() {
                    if let Err(e) = batch.tools.check(&call.name, &args) {
                        return Err(format!(
                            "Blocked: arguments patched by hook {} are invalid: {e}",
                            patched_by.join(", ")
                        ));
                    }
                }
                Ok((tool, args))
            }
        }
    }

    /// A call that passed preflight before the run was aborted does not start after it.
    async fn execute_unless_aborted(
        &self,
        batch: &Batch<'_>,
        r: &Ready,
        cancel: &CancellationToken,
    ) -> (ToolOutput, bool) {
        if cancel.is_cancelled() {
            return (ToolOutput::text("Operation aborted"), true);
        }
        self.execute(batch, r, cancel).await
    }

    /// Run one tool, forwarding its progress as `tool_execution_update` events.
    async fn execute(
        &self,
        batch: &Batch<'_>,
        r: &Ready,
        cancel: &CancellationToken,
    ) -> (ToolOutput, bool) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let ctx = ToolContext {
            cwd: batch.cwd.to_path_buf(),
            cancel: cancel.child_token(),
            updates: Some(tx),
            mutations: self.mutations.clone(),
            env: batch.env.to_vec(),
        };
        let fut = r.tool.execute(&r.call.id, r.args.clone(), &ctx);
        tokio::pin!(fut);
        let update = |partial: ToolOutput| {
            self.emit(AgentEvent::ToolExecutionUpdate {
                tool_call_id: r.call.id.clone(),
                tool_name: r.call.name.clone(),
                args: r.args.clone(),
                partial_result: ToolResultPayload {
                    content: partial.content,
                    details: partial.details,
                },
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
            Err(ToolError::FailedWithOutput(out)) => (out, true),
            Err(e) => (ToolOutput::text(e.to_string()), true),
        }
    }

    /// The `tool_result` chain, then `tool_execution_end`: for calls that reached execution.
    async fn finish_call(
        &self,
        call: &ToolCall,
        out: ToolOutput,
        is_error: bool,
    ) -> ToolResultMessage {
        let msg = self
            .hooks
            .tool_result(call, result_message(call, out, is_error))
            .await;
        self.end_call(call, msg)
    }

    /// `tool_execution_end` with the final result.
    fn end_call(&self, call: &ToolCall, msg: ToolResultMessage) -> ToolResultMessage {
        self.emit(AgentEvent::ToolExecutionEnd {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            result: ToolResultPayload {
                content: msg.content.clone(),
                details: msg.details.clone(),
            },
            is_error: msg.is_error,
        });
        msg
    }
}

fn result_message(call: &ToolCall, out: ToolOutput, is_error: bool) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: out.content,
        details: out.details,
        is_error,
        timestamp: now_ms(),
    }
}

fn error_result(call: &ToolCall, text: &str) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: vec![Content::text(text)],
        details: None,
        is_error: true,
        timestamp: now_ms(),
    }
}
