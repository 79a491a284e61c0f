//! The Messages API request body as plain serde types that borrow from the [`Request`].
//!
//! The conversation is the bulk of a request; building the body as a `serde_json::Value`
//! would copy every message's text before serializing it again. These types point into the
//! request's messages instead, so the body is written straight from them (a `Value` is made
//! only when a hook's `before_provider_request` must see and may rewrite it). Field order is
//! pi 1.6's, which is what the bytes on the wire show and what its recorded requests are
//! compared with.
//!
//! [`Request`]: super::Request

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

/// `{"type": "ephemeral"}`, with `"ttl": "1h"` for a long retention.
#[derive(Debug, Clone, Copy, Serialize)]
pub(super) struct CacheControl {
    #[serde(rename = "type")]
    pub ty: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<&'static str>,
}

#[derive(Debug, Serialize)]
pub(super) struct SystemBlock<'a> {
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub text: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

#[derive(Debug, Serialize)]
pub(super) struct ImageSource<'a> {
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub media_type: &'a str,
    pub data: &'a str,
}

/// `{}`: the input of a tool call whose arguments are not an object.
#[derive(Debug, Serialize)]
pub(super) struct EmptyObject {}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum Input<'a> {
    Args(&'a Value),
    Empty(EmptyObject),
}

/// A tool result's content: its text joined when it has no images (as 1.6 sends it), else
/// its blocks.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum ResultContent<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum BlockKind<'a> {
    Text {
        text: Cow<'a, str>,
    },
    Image {
        source: ImageSource<'a>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    ToolUse {
        id: String,
        name: &'a str,
        input: Input<'a>,
    },
    ToolResult {
        tool_use_id: String,
        content: ResultContent<'a>,
        is_error: bool,
    },
    /// A tool withdrawn inside the conversation (native tool changes).
    ToolRemoval {
        tool: ToolReference<'a>,
    },
    /// A tool defined inside the conversation (native tool changes).
    ToolAddition {
        tool: ToolDefinition<'a>,
    },
}

impl<'a> BlockKind<'a> {
    pub fn text(text: &'a str) -> Self {
        BlockKind::Text {
            text: Cow::Borrowed(text),
        }
    }
}

#[derive(Debug, Serialize)]
pub(super) struct ToolReference<'a> {
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub name: &'a str,
}

#[derive(Debug, Serialize)]
pub(super) struct ToolDefinition<'a> {
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub definition: WireTool<'a>,
}

/// A content block; the newest user turn's last block carries `cache_control` after its own
/// fields.
#[derive(Debug, Serialize)]
pub(super) struct Block<'a> {
    #[serde(flatten)]
    pub kind: BlockKind<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl<'a> From<BlockKind<'a>> for Block<'a> {
    fn from(kind: BlockKind<'a>) -> Self {
        Block {
            kind,
            cache_control: None,
        }
    }
}

/// A message's content: a user's plain text as a string (as 1.6 sends it), else blocks.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum MessageContent<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

/// `{"effort": …}`.
#[derive(Debug, Clone, Serialize)]
pub(super) struct OutputConfig {
    pub effort: String,
}

#[derive(Debug, Serialize)]
pub(super) struct WireMessage<'a> {
    pub role: &'static str,
    pub content: MessageContent<'a>,
    /// An effort marker's level (a `system` message with no content).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_config: Option<OutputConfig>,
}

impl<'a> WireMessage<'a> {
    pub fn blocks(role: &'static str, blocks: Vec<Block<'a>>) -> Self {
        WireMessage {
            role,
            content: MessageContent::Blocks(blocks),
            output_config: None,
        }
    }
}

#[derive(Debug, Serialize)]
pub(super) struct WireTool<'a> {
    pub name: &'a str,
    pub description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eager_input_streaming: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    pub input_schema: Schema,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defer_loading: Option<bool>,
}

/// A tool's schema as sent, or the empty one of the deferred placeholder.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum Schema {
    Of(Value),
    Empty(EmptySchema),
}

/// `{"type": "object", "properties": {}, "required": []}`.
#[derive(Debug, Serialize)]
pub(super) struct EmptySchema {
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub properties: EmptyObject,
    pub required: [(); 0],
}

/// `{"prefix_mismatch_behavior": "drop_block"}`.
#[derive(Debug, Clone, Serialize)]
pub(super) struct BlockBinding {
    pub prefix_mismatch_behavior: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Thinking {
    Disabled,
    Adaptive {
        display: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        block_binding: Option<BlockBinding>,
    },
    Enabled {
        budget_tokens: u64,
        display: &'static str,
    },
}

/// `{"model": …}`: a model the service may fall back to.
#[derive(Debug, Serialize)]
pub(super) struct Fallback<'a> {
    pub model: &'a str,
}

/// The request body (before `before_provider_request`).
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    pub(super) model: &'a str,
    pub(super) messages: Vec<WireMessage<'a>>,
    pub(super) max_tokens: u64,
    pub(super) stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) system: Vec<SystemBlock<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) output_config: Option<OutputConfig>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) fallbacks: Vec<Fallback<'a>>,
}
