//! The controller's events as RPC writes them (TypeScript pi 1.6's set): `message_update` is
//! delta-only, with the message's latest `usage` beside the delta; `turn_start` carries
//! nothing; `tool_execution_end` gets the tool's `durationMs`; `agent_end` says whether a
//! retry follows. pi 1.6 sends no `start`/`done`/`error` deltas in RPC mode (`message_start`
//! and `message_end` carry those), so neither do we. JSON mode writes the same events (pi
//! 1.6 maps both with one function), so it uses this mapping too.
//!
//! pi's own events — `hook_decision`, `hook_error`, `hook_state`, `mcp_server` — are not in
//! 1.6's stream: a client that never asked for them (`--hook-events`) gets exactly 1.6's.
//!
//! The mapping keeps a little state (the usage of the message being streamed, when each tool
//! call started), so it is one [`EventMapper`] per connection, owned by the writer task.

use serde_json::Value;

use super::protocol::events::CompactionReason;
use super::protocol::{AssistantMessageEvent, RpcEvent};
use crate::agent::events::{AgentEvent, AssistantDelta};
use crate::controller::types::{CompactOutcome, QueuedMessages};
use crate::message::{Content, Message};

#[derive(Debug, Default)]
pub struct EventMapper {
    /// Whether pi's own events (not in pi 1.6's stream) are sent: `--hook-events`.
    hook_events: bool,
}

fn json<T: serde::Serialize>(v: &T) -> Value {
    // Our message and event types always serialise (string keys, finite numbers).
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn reason(r: &str) -> Option<CompactionReason> {
    match r {
        "manual" => Some(CompactionReason::Manual),
        "threshold" => Some(CompactionReason::Threshold),
        "overflow" => Some(CompactionReason::Overflow),
        _ => None,
    }
}

fn delta(d: AssistantDelta) -> Option<AssistantMessageEvent> {
    match d {
        AssistantDelta::Start | AssistantDelta::Done { .. } | AssistantDelta::Error { .. } => None,
        AssistantDelta::Usage(_) => None,
        // The call as a content block (`"type": "toolCall"` first), as pi 1.6 sends it.
        d => Some(d.map_tool_call(|call| json(&Content::ToolCall(call)))),
    }
}

impl EventMapper {
    pub fn new() -> Self {
        Self::default()
    }

    /// A mapper that also sends pi's own events (`hook_*`, `mcp_server`) when `on`.
    pub fn with_hook_events(on: bool) -> Self {
        EventMapper { hook_events: on }
    }

    /// The RPC event for `ev`, or `None` for what RPC does not send.
    pub fn map(&mut self, ev: AgentEvent) -> Option<RpcEvent> {
        let ours = matches!(
            ev,
            AgentEvent::HookDecision(_)
                | AgentEvent::HookError { .. }
                | AgentEvent::HookState { .. }
                | AgentEvent::McpServer { .. }
        );
        if ours && !self.hook_events {
            return None;
        }
        Some(match ev {
            AgentEvent::AgentStart => RpcEvent::AgentStart,
            AgentEvent::AgentEnd { messages } => RpcEvent::AgentEnd {
                messages: messages.iter().map(json).collect(),
                // Our retries happen inside the run, before `agent_end`.
                will_retry: false,
            },
            AgentEvent::TurnStart { .. } => RpcEvent::TurnStart,
            AgentEvent::TurnEnd {
                message,
                tool_results,
                ..
            } => RpcEvent::TurnEnd {
                message: json(&message),
                // Each result as the message it is, `role` included.
                tool_results: tool_results
                    .iter()
                    .map(|r| json(&Message::ToolResult(r.clone())))
                    .collect(),
            },
            AgentEvent::MessageStart { message } => RpcEvent::MessageStart {
                message: json(&message),
            },
            AgentEvent::MessageUpdate {
                usage,
                assistant_message_event,
            } => RpcEvent::MessageUpdate {
                usage,
                assistant_message_event: delta(assistant_message_event)?,
            },
            AgentEvent::MessageEnd { message } => RpcEvent::MessageEnd {
                message: json(&message),
            },
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
                parent_tool_call_id,
            } => RpcEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
                parent_tool_call_id,
            },
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial_result,
                parent_tool_call_id,
            } => RpcEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial_result: json(&partial_result),
                parent_tool_call_id,
            },
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
                duration_ms,
                parent_tool_call_id,
            } => RpcEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result: json(&result),
                is_error,
                duration_ms,
                parent_tool_call_id,
            },
            AgentEvent::QueueUpdate {
                steering,
                follow_up,
            } => RpcEvent::QueueUpdate(QueuedMessages {
                steering,
                follow_up,
            }),
            AgentEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => RpcEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            },
            AgentEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } => RpcEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            },
            AgentEvent::CompactionStart { reason: r } => RpcEvent::CompactionStart {
                reason: reason(&r)?,
            },
            AgentEvent::CompactionEnd {
                reason: r,
                result,
                aborted,
                will_retry,
                error_message,
            } => RpcEvent::CompactionEnd {
                reason: reason(&r)?,
                result: result.and_then(|v| serde_json::from_value::<CompactOutcome>(v).ok()),
                aborted,
                will_retry,
                error_message,
            },
            AgentEvent::AgentSettled { aborted } => RpcEvent::AgentSettled { aborted },
            AgentEvent::BashExecutionUpdate { id, delta } => RpcEvent::BashExecutionUpdate {
                id: id.map(Value::String),
                delta,
            },
            AgentEvent::ThinkingLevelChanged { level } => RpcEvent::ThinkingLevelChanged {
                level: crate::provider::ThinkingLevel::parse(&level)?,
            },
            AgentEvent::SessionInfoChanged { name } => RpcEvent::SessionInfoChanged { name },
            AgentEvent::EntryAppended { entry } => RpcEvent::EntryAppended { entry },
            AgentEvent::HookDecision(d) => RpcEvent::HookDecision {
                event: d.event,
                tool_call_id: d.tool_call_id,
                tool_name: d.tool_name,
                answers: d.answers.iter().map(json).collect(),
                outcome: d.outcome,
                reason: d.reason,
            },
            AgentEvent::HookError {
                hook,
                event,
                kind,
                message,
            } => RpcEvent::HookError {
                hook,
                event,
                kind,
                message,
            },
            // The text is in the prompt command's response already.
            AgentEvent::HookCommand { .. } => return None,
            AgentEvent::HookState {
                hook,
                state,
                detail,
            } => RpcEvent::HookState {
                hook,
                state,
                detail,
            },
            AgentEvent::McpServer {
                server,
                state,
                tools,
                error,
            } => RpcEvent::McpServer {
                server,
                state,
                tools,
                error,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_and_done_deltas_are_not_sent_and_tool_call_starts_name_the_call() {
        let mut m = EventMapper::new();
        let ev = |d| AgentEvent::MessageUpdate {
            usage: crate::message::Usage::default(),
            assistant_message_event: d,
        };
        assert_eq!(m.map(ev(AssistantDelta::Start)), None);
        let start = m
            .map(ev(AssistantDelta::ToolCallStart {
                content_index: 0,
                id: "call_1".into(),
                tool_name: "bash".into(),
            }))
            .map(|e| serde_json::to_value(e).unwrap());
        let start = start.expect("a toolcall_start is sent");
        assert_eq!(start["assistantMessageEvent"]["id"], "call_1");
        assert_eq!(start["assistantMessageEvent"]["toolName"], "bash");
        assert!(start.get("usage").is_some(), "{start}");
        assert!(start.get("message").is_none(), "delta-only: {start}");
    }

    #[test]
    fn a_tool_end_reports_how_long_the_call_ran() {
        let mut m = EventMapper::new();
        m.map(AgentEvent::ToolExecutionStart {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            args: Value::Null,
            parent_tool_call_id: None,
        });
        let end = m.map(AgentEvent::ToolExecutionEnd {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            result: crate::agent::events::ToolResultPayload::partial(vec![], None),
            is_error: false,
            duration_ms: Some(12),
            parent_tool_call_id: Some("call_0".into()),
        });
        let Some(RpcEvent::ToolExecutionEnd {
            duration_ms,
            parent_tool_call_id,
            ..
        }) = end
        else {
            panic!("{end:?}")
        };
        assert_eq!(duration_ms, Some(12), "the loop's own measure");
        assert_eq!(parent_tool_call_id.as_deref(), Some("call_0"));
    }
}
