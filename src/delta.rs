//! The streaming deltas of one assistant message (pi's `AssistantMessageEvent`).
//!
//! Providers produce them and the agent forwards them in its events, so they live in this leaf
//! module: neither `provider` nor `agent` has to import the other to share them. RPC mode puts
//! the same type on the wire (`StreamDelta<Value>`): its `toolcall_end` carries the call as
//! JSON, so a recorded TypeScript call (with its `"type": "toolCall"`) survives a round trip.

use serde::{Deserialize, Serialize};

use crate::message::{StopReason, ToolCall, Usage};

/// Streaming deltas of one assistant message (pi's `AssistantMessageEvent`, delta-only).
pub type AssistantDelta = StreamDelta<ToolCall>;

/// The one streaming delta type. `C` is what `toolcall_end` carries: the typed call inside pi
/// ([`AssistantDelta`]), its JSON on RPC's wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamDelta<C> {
    Start,
    TextStart {
        #[serde(rename = "contentIndex")]
        content_index: usize,
    },
    TextDelta {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        delta: String,
    },
    TextEnd {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        content: String,
    },
    ThinkingStart {
        #[serde(rename = "contentIndex")]
        content_index: usize,
    },
    ThinkingDelta {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        delta: String,
    },
    ThinkingEnd {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        content: String,
    },
    /// Carries the call's id and tool name (pi's `partial` holds them; deltas do not).
    #[serde(rename = "toolcall_start")]
    ToolCallStart {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
    },
    #[serde(rename = "toolcall_delta")]
    ToolCallDelta {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        delta: String,
    },
    #[serde(rename = "toolcall_end")]
    ToolCallEnd {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        #[serde(rename = "toolCall")]
        tool_call: C,
    },
    Done {
        reason: StopReason,
    },
    /// The provider's running usage, sent before the deltas parsed with it: the deltas that
    /// follow carry it in their `message_update`. Never on a wire by itself.
    #[serde(skip)]
    Usage(Usage),
    Error {
        reason: StopReason,
        #[serde(rename = "errorMessage")]
        error_message: String,
    },
}

impl<C> StreamDelta<C> {
    /// The same delta with `toolcall_end`'s call turned by `f`; every other delta is unchanged.
    pub fn map_tool_call<D>(self, f: impl FnOnce(C) -> D) -> StreamDelta<D> {
        use StreamDelta as A;
        match self {
            A::Start => A::Start,
            A::TextStart { content_index } => A::TextStart { content_index },
            A::TextDelta {
                content_index,
                delta,
            } => A::TextDelta {
                content_index,
                delta,
            },
            A::TextEnd {
                content_index,
                content,
            } => A::TextEnd {
                content_index,
                content,
            },
            A::ThinkingStart { content_index } => A::ThinkingStart { content_index },
            A::ThinkingDelta {
                content_index,
                delta,
            } => A::ThinkingDelta {
                content_index,
                delta,
            },
            A::ThinkingEnd {
                content_index,
                content,
            } => A::ThinkingEnd {
                content_index,
                content,
            },
            A::ToolCallStart {
                content_index,
                id,
                tool_name,
            } => A::ToolCallStart {
                content_index,
                id,
                tool_name,
            },
            A::ToolCallDelta {
                content_index,
                delta,
            } => A::ToolCallDelta {
                content_index,
                delta,
            },
            A::ToolCallEnd {
                content_index,
                tool_call,
            } => A::ToolCallEnd {
                content_index,
                tool_call: f(tool_call),
            },
            A::Done { reason } => A::Done { reason },
            A::Usage(u) => A::Usage(u),
            A::Error {
                reason,
                error_message,
            } => A::Error {
                reason,
                error_message,
            },
        }
    }
}
