//! The agent's event stream: pi's `AgentEvent` set, serialised with pi's names and fields.
//!
//! The loop only ever emits these; modes (print, json, later interactive and rpc) and the
//! extension host consume them. JSON mode writes them verbatim, one per line.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::message::{AssistantMessage, Content, Message, ToolResultMessage};

pub use crate::delta::AssistantDelta;

/// One agent event. Field names are pi's (camelCase). Messages are the very allocations the
/// context and the session hold: an event shares them, it does not copy them (a tool's 50 KB
/// output would otherwise be copied for every event that names it).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    AgentStart,
    AgentEnd {
        messages: Vec<Arc<Message>>,
    },
    TurnStart {
        #[serde(rename = "turnIndex")]
        turn_index: usize,
        timestamp: i64,
    },
    TurnEnd {
        #[serde(rename = "turnIndex")]
        turn_index: usize,
        message: Arc<Message>,
        #[serde(rename = "toolResults")]
        tool_results: Vec<ToolResultMessage>,
    },
    MessageStart {
        message: Arc<Message>,
    },
    /// `usage`: the provider's running counts as of this delta.
    MessageUpdate {
        usage: crate::message::Usage,
        #[serde(rename = "assistantMessageEvent")]
        assistant_message_event: AssistantDelta,
    },
    MessageEnd {
        message: Arc<Message>,
    },
    /// `parentToolCallId`: set on a nested call (a hook's `tools.execute`), naming the call
    /// it serves.
    ToolExecutionStart {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
        args: Value,
        #[serde(rename = "parentToolCallId", skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    ToolExecutionUpdate {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
        args: Value,
        #[serde(rename = "partialResult")]
        partial_result: ToolResultPayload,
        #[serde(rename = "parentToolCallId", skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    /// `durationMs`: from the call's `tool_execution_start` to its final result.
    ToolExecutionEnd {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
        result: ToolResultPayload,
        #[serde(rename = "isError")]
        is_error: bool,
        /// Absent for a call that never ran (refused, blocked), as in pi 1.6.
        #[serde(rename = "durationMs", skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        #[serde(rename = "parentToolCallId", skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    QueueUpdate {
        steering: Vec<String>,
        #[serde(rename = "followUp")]
        follow_up: Vec<String>,
    },
    AutoRetryStart {
        attempt: u32,
        #[serde(rename = "maxAttempts")]
        max_attempts: u32,
        #[serde(rename = "delayMs")]
        delay_ms: u64,
        #[serde(rename = "errorMessage")]
        error_message: String,
    },
    /// What the hooks decided about one gated or chained event (`--explain-hooks`).
    HookDecision(HookDecision),
    /// A hook failed (crash, timeout, bad reply…) while handling an event.
    HookError {
        hook: String,
        event: String,
        kind: String,
        message: String,
    },
    /// A hook's command (`/name args`) answered: its `text` is what the user is shown (JSON
    /// mode's record of it; print mode prints the text, RPC returns it in the response).
    HookCommand {
        hook: String,
        name: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// A hook's process state changed (running, restarting, quarantined, stopped).
    HookState {
        hook: String,
        state: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// Compaction began (`manual`, `threshold` or `overflow`).
    CompactionStart {
        reason: String,
    },
    /// Compaction finished: `result` is the compaction entry's fields, or null when it was
    /// cancelled or failed.
    CompactionEnd {
        reason: String,
        result: Option<Value>,
        aborted: bool,
        #[serde(rename = "willRetry")]
        will_retry: bool,
        #[serde(rename = "errorMessage", skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
    },
    AutoRetryEnd {
        success: bool,
        attempt: u32,
        #[serde(rename = "finalError", skip_serializing_if = "Option::is_none")]
        final_error: Option<String>,
    },
    /// Nothing more happens by itself after this run: its retries, compaction and queued
    /// messages are done (pi 1.6). `aborted` when the run ended because it was aborted.
    AgentSettled {
        aborted: bool,
    },
    /// Output of the user's own shell command as it arrives; `id` is the requester's tag.
    BashExecutionUpdate {
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        delta: String,
    },
    /// An MCP server's state changed: `connecting`, `connected` (with its tool count),
    /// `failed` (with the error), `unavailable` (the first prompt went on without it),
    /// `stopped`.
    McpServer {
        server: String,
        state: String,
        tools: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The thinking level was changed.
    ThinkingLevelChanged {
        level: String,
    },
    /// The session's display name changed (`None`: cleared).
    SessionInfoChanged {
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// An entry outside the conversation was added to the session (a cache refresh's
    /// `usage`), as the session file has it.
    EntryAppended {
        entry: serde_json::Value,
    },
}

/// One hook's answer to one event, as `hook_decision` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookAnswer {
    pub hook: String,
    /// `allow`, `block`, `patch`, `continue`, `transform`, `handled`, `cancel`, `error`,
    /// `would_block`, `would_patch` (shadow mode), `skipped`.
    pub outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<Value>,
    #[serde(rename = "latencyUs")]
    pub latency_us: u64,
}

/// The combined outcome of one event across hooks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookDecision {
    pub event: String,
    #[serde(rename = "toolCallId", skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(rename = "toolName", skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    pub answers: Vec<HookAnswer>,
    /// `allow`, `block`, `patched`, `unchanged`, `handled`, `cancelled`.
    pub outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The `{content, details, structuredContent?, usage?}` of a tool result as events carry it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResultPayload {
    pub content: Vec<Content>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::message::Usage>,
}

impl ToolResultPayload {
    /// A partial result (`tool_execution_update`): content and details only.
    pub fn partial(content: Vec<Content>, details: Option<Value>) -> Self {
        ToolResultPayload {
            content,
            details,
            structured_content: None,
            usage: None,
        }
    }

    /// A final result, as `tool_execution_end` reports it.
    pub fn of(msg: &crate::message::ToolResultMessage) -> Self {
        ToolResultPayload {
            content: msg.content.clone(),
            details: msg.details.clone(),
            structured_content: msg.structured_content.clone(),
            usage: msg.usage.clone(),
        }
    }
}

impl AgentEvent {
    /// The final assistant message carried by a `message_end`, if this is one.
    pub fn as_assistant_end(&self) -> Option<&AssistantMessage> {
        match self {
            AgentEvent::MessageEnd { message } => match message.as_ref() {
                Message::Assistant(m) => Some(m),
                _ => None,
            },
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialise_with_pi_names() {
        let e = AgentEvent::ToolExecutionStart {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            args: serde_json::json!({}),
            parent_tool_call_id: None,
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["type"], "tool_execution_start");
        assert_eq!(v["toolCallId"], "c");
        let d = AssistantDelta::ToolCallDelta {
            content_index: 1,
            delta: "{".into(),
        };
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["type"], "toolcall_delta");
        assert_eq!(v["contentIndex"], 1);
    }
}
