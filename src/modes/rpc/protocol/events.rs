//! The session events on RPC's stdout, as TypeScript pi 1.6.0 writes them: the JSON-mode set,
//! with `message_update` delta-only (its cumulative `message` and every
//! `assistantMessageEvent.partial` are removed; `usage` is the latest usage instead), and the
//! session-level events RPC clients rely on (`agent_settled`, `queue_update`, `compaction_*`,
//! `auto_retry_*`, `summarization_retry_*`, `bash_execution_update`, `extension_error`, …),
//! plus our own `hook_decision`, `hook_error` and `hook_state`.
//!
//! Agent messages, tool arguments and results, and session entries are `serde_json::Value`:
//! their shapes are the message and session types', not RPC's.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::data::Usage;
use crate::controller::types::{CompactOutcome, QueuedMessages};
use crate::delta::StreamDelta;
use crate::provider::ThinkingLevel;

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionReason {
    Manual,
    Threshold,
    Overflow,
}

/// One streaming delta of an assistant message: pi's own delta type, with the tool call of
/// `toolcall_end` as JSON. Clients rebuild content by `contentIndex` and replace it with the
/// `*_end` content and, finally, `message_end`'s message. RPC sends no `start`, `done` or
/// `error` deltas (`message_start` and `message_end` carry those).
pub type AssistantMessageEvent = StreamDelta<Value>;

/// One event on stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RpcEvent {
    AgentStart,
    AgentEnd {
        messages: Vec<Value>,
        #[serde(rename = "willRetry")]
        will_retry: bool,
    },
    /// No automatic work (retry, compaction recovery, queued messages) is left for this run.
    AgentSettled {
        aborted: bool,
    },
    TurnStart,
    TurnEnd {
        message: Value,
        #[serde(rename = "toolResults")]
        tool_results: Vec<Value>,
    },
    MessageStart {
        message: Value,
    },
    MessageUpdate {
        usage: Usage,
        #[serde(rename = "assistantMessageEvent")]
        assistant_message_event: AssistantMessageEvent,
    },
    MessageEnd {
        message: Value,
    },
    ToolExecutionStart {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
        args: Value,
        /// Set on calls a tool made through another tool.
        #[serde(
            rename = "parentToolCallId",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        parent_tool_call_id: Option<String>,
    },
    ToolExecutionUpdate {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
        args: Value,
        #[serde(rename = "partialResult")]
        partial_result: Value,
        #[serde(
            rename = "parentToolCallId",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        parent_tool_call_id: Option<String>,
    },
    ToolExecutionEnd {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
        result: Value,
        #[serde(rename = "isError")]
        is_error: bool,
        /// How long the tool's execution took; absent when it did not run.
        #[serde(
            rename = "durationMs",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        duration_ms: Option<u64>,
        #[serde(
            rename = "parentToolCallId",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        parent_tool_call_id: Option<String>,
    },
    /// Both queues in full, after any change.
    QueueUpdate(QueuedMessages),
    CompactionStart {
        reason: CompactionReason,
    },
    /// `result` is absent when the compaction was aborted or failed (`errorMessage` then).
    CompactionEnd {
        reason: CompactionReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<CompactOutcome>,
        aborted: bool,
        #[serde(rename = "willRetry")]
        will_retry: bool,
        #[serde(
            rename = "errorMessage",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        error_message: Option<String>,
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
    AutoRetryEnd {
        success: bool,
        attempt: u32,
        #[serde(
            rename = "finalError",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        final_error: Option<String>,
    },
    SummarizationRetryScheduled {
        attempt: u32,
        #[serde(rename = "maxAttempts")]
        max_attempts: u32,
        #[serde(rename = "delayMs")]
        delay_ms: u64,
        #[serde(rename = "errorMessage")]
        error_message: String,
    },
    /// `source` is `compaction` (with its `reason`) or `branchSummary`.
    SummarizationRetryAttemptStart {
        source: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<CompactionReason>,
    },
    SummarizationRetryFinished,
    /// Output of an RPC `bash` command; `id` is that command's id, when it had one.
    BashExecutionUpdate {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Value>,
        delta: String,
    },
    EntryAppended {
        entry: Value,
    },
    /// The session's display name changed; absent `name` means cleared.
    SessionInfoChanged {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    ThinkingLevelChanged {
        level: ThinkingLevel,
    },
    ExtensionError {
        #[serde(rename = "extensionPath")]
        extension_path: String,
        event: String,
        error: String,
    },
    /// Ours, not pi's: what the hooks decided about one gated or chained event (each hook's
    /// answer and latency, and the combined outcome).
    HookDecision {
        event: String,
        #[serde(
            rename = "toolCallId",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        tool_call_id: Option<String>,
        #[serde(rename = "toolName", default, skip_serializing_if = "Option::is_none")]
        tool_name: Option<String>,
        answers: Vec<Value>,
        outcome: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Ours: a hook failed (crash, timeout, bad reply, …) while handling an event.
    HookError {
        hook: String,
        event: String,
        kind: String,
        message: String,
    },
    /// Ours: a hook process's state changed (running, restarting, quarantined, stopped).
    HookState {
        hook: String,
        state: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// Ours: an MCP server's state changed (connecting, connected, failed, unavailable).
    McpServer {
        server: String,
        state: String,
        tools: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}
