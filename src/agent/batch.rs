//! Tool batches: preflight every call in source order (a tool the model was not offered,
//! `prepare_arguments`, validation, the `tool_call` gate and re-validation of patched
//! arguments: [`super::tool_run`]), run what passed — concurrently unless a tool in the batch
//! is sequential — pass each result through the `tool_result` chain, and add exactly one
//! result per call to the context in source order. A call that preflight refused (unknown
//! tool, invalid arguments, blocked) never ran, so it skips `tool_result` and only reports its
//! error in `tool_execution_end`, as the seeds do (a blocked call's result carries the
//! feedback of Claude Code PostToolUseFailure hooks after the reason). An abort ends the wait on a gate at once and
//! no call starts after it. When every result of the batch asks to `terminate` (a gate's
//! block, a tool's result), the run makes no follow-up model call for it.

use std::sync::Arc;
use std::time::Instant;

use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use super::events::AgentEvent;
use super::tool_run::{result_message, Cleared, Refused, ToolRun};
use super::Agent;
use crate::message::{now_ms, Content, Message, ToolCall, ToolResultMessage};
use crate::tools::{ToolContext, ToolOutput};

/// What one batch runs with, read once when it starts.
struct Batch<'a> {
    run: ToolRun<'a>,
    cwd: &'a std::path::Path,
    env: &'a [(String, String)],
    active: Option<Vec<String>>,
}

/// A call that passed preflight.
struct Ready {
    index: usize,
    cleared: Cleared,
    started: Instant,
}

/// A batch's results in source order, and whether every one asked the run to end.
pub(super) struct BatchResults {
    pub results: Vec<ToolResultMessage>,
    pub terminate: bool,
}

impl Agent {
    pub(super) async fn run_batch(
        &mut self,
        calls: &[&ToolCall],
        cancel: &CancellationToken,
        run: &mut Vec<Arc<Message>>,
    ) -> BatchResults {
        let (results, terminate) = self.run_calls(calls, cancel).await;
        let mut ordered = Vec::with_capacity(calls.len());
        for (call, res) in calls.iter().zip(results) {
            // Every call gets exactly one result; the branches above fill every slot, and this
            // keeps the invariant even if that ever changes.
            let res = res.unwrap_or_else(|| error_result(call, "Tool call produced no result"));
            // `message_end` keeps the role, so this is the result as the context holds it.
            if let Message::ToolResult(r) = self
                .push_message(Message::ToolResult(res), run)
                .await
                .as_ref()
            {
                ordered.push(r.clone());
            }
        }
        BatchResults {
            results: ordered,
            terminate: !terminate.is_empty() && terminate.iter().all(|t| *t),
        }
    }

    /// Preflight in source order, then execution; each call's result (by index) and whether
    /// it asked to terminate.
    async fn run_calls(
        &self,
        calls: &[&ToolCall],
        cancel: &CancellationToken,
    ) -> (Vec<Option<ToolResultMessage>>, Vec<bool>) {
        let mut results: Vec<Option<ToolResultMessage>> = vec![None; calls.len()];
        let mut terminate = vec![false; calls.len()];
        // One registry and configuration for the whole batch, whatever changes meanwhile.
        let ((env, cwd), tools) = self.handle.tools_with(|c| (c.tool_env(), c.cwd.clone()));
        let emit = |e: AgentEvent| self.emit(e);
        let batch = Batch {
            run: ToolRun {
                tools: &tools,
                hooks: self.hooks.as_ref(),
                emit: &emit,
                parent: None,
            },
            cwd: &cwd,
            env: &env,
            active: self.handle.active_tools(),
        };
        let mut ready = Vec::new();
        for (index, call) in calls.iter().enumerate() {
            let started = batch.run.start(call);
            match self.preflight(&batch, call, cancel).await {
                Ok(cleared) => ready.push(Ready {
                    index,
                    cleared,
                    started,
                }),
                Err(refused) => {
                    terminate[index] = refused.terminate();
                    let mut out = ToolOutput::text(refused.message());
                    if matches!(refused, Refused::Blocked { .. }) {
                        let feedback = self.hooks.tool_blocked(call, &refused.message()).await;
                        out.content.extend(feedback.into_iter().map(Content::text));
                    }
                    let msg = result_message(call, out, true);
                    results[index] = Some(batch.run.end(call, msg, None));
                }
            }
        }

        let sequential = ready.iter().any(|r| r.cleared.tool.sequential());
        let batch = &batch;
        let outs = if sequential {
            let mut outs = Vec::with_capacity(ready.len());
            for r in &ready {
                outs.push(self.run_ready(batch, r, cancel).await);
            }
            outs
        } else {
            join_all(ready.iter().map(|r| self.run_ready(batch, r, cancel))).await
        };
        for (index, res, ends) in outs {
            results[index] = Some(res);
            terminate[index] = ends;
        }
        (results, terminate)
    }

    /// A tool the model was not offered is unknown to it; the rest is the shared pipeline.
    async fn preflight(
        &self,
        batch: &Batch<'_>,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> Result<Cleared, Refused> {
        if cancel.is_cancelled() {
            return Err(Refused::Aborted);
        }
        if !batch.run.tools.offers(&call.name, batch.active.as_deref()) {
            return Err(Refused::Unknown(format!("Tool {} not found", call.name)));
        }
        batch.run.preflight(call, cancel).await
    }

    /// One cleared call: executed, then through `tool_result` to `tool_execution_end`.
    async fn run_ready(
        &self,
        batch: &Batch<'_>,
        r: &Ready,
        cancel: &CancellationToken,
    ) -> (usize, ToolResultMessage, bool) {
        let (out, is_error) = self.execute_unless_aborted(batch, r, cancel).await;
        let ends = out.terminate;
        let msg = batch
            .run
            .finish(&r.cleared.call, out, is_error, r.started)
            .await;
        (r.index, msg, ends)
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
        let ctx = ToolContext {
            cwd: batch.cwd.to_path_buf(),
            cancel: cancel.child_token(),
            updates: None,
            mutations: self.handle.mutations(),
            lock_owner: None,
            env: batch.env.to_vec(),
        };
        batch.run.execute(&r.cleared, ctx).await
    }
}

fn error_result(call: &ToolCall, text: &str) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: vec![Content::text(text)],
        details: None,
        is_error: true,
        structured_content: None,
        usage: None,
        duration_ms: None,
        timestamp: now_ms(),
    }
}
