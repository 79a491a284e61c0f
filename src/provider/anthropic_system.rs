//! The transcript's system messages in a Messages request, for models that take them in place
//! (see [`super::transcript`]), as pi 1.6's `anthropic-messages.js` sends them.
//!
//! The first system message is the request's `system`; each later one becomes a `system`
//! message of the conversation, held back until just before the next assistant message (see
//! [`super::anthropic_body`]). Models that also take tool changes natively
//! (`compat.supportsMidConvoToolChanges`) keep the request's tool list as the first message
//! declared it, followed by a deferred placeholder, so the cached prefix survives every change:
//! a later tool is a `tool_addition` block defining it, a withdrawn one a `tool_removal` (none
//! for a tool redefined, which the new definition replaces). Otherwise the list is the current
//! set and the updates carry only text.

use std::sync::Arc;

use serde_json::Value;

use super::anthropic_params::{self as params, Compat};
use super::anthropic_wire::{
    Block, BlockKind, CacheControl, EmptyObject, EmptySchema, Schema, ToolDefinition,
    ToolReference, WireMessage, WireTool,
};
use super::transcript::{self, ToolSupport};
use super::{ProviderError, Request};
use crate::message::system::{SystemMessage, ToolDeclaration};
use crate::message::Message;

/// The beta that lets tools change inside the conversation.
pub const INLINE_TOOLS_BETA: &str = "inline-tools-2026-09-15";

/// The placeholder that keeps a tool list whose later tools are all deferred acceptable.
const PLACEHOLDER: &str = "__pi_deferred_placeholder__";
const PLACEHOLDER_DESCRIPTION: &str = "Reserved placeholder. Never available. Never call this.";

/// A request whose system messages go in place.
pub(super) struct InPlace<'a> {
    /// The system message that opens the conversation, if one does.
    pub leading: Option<&'a SystemMessage>,
    /// Its text, the request's `system`.
    pub leading_text: String,
    native: bool,
    /// The tools after every system message.
    current: Vec<&'a ToolDeclaration>,
}

fn compat_true(req: &Request, key: &str) -> bool {
    req.model.compat.get(key) == Some(&Value::Bool(true))
}

fn leading(messages: &[Arc<Message>]) -> Option<&SystemMessage> {
    match messages.first().map(|m| m.as_ref()) {
        Some(Message::System(s)) => Some(s),
        _ => None,
    }
}

/// Whether tool changes travel natively: the model takes them and the first system message
/// declares a tool to anchor the placeholder (Anthropic rejects a list of deferred tools only).
pub fn native_tool_changes(req: &Request) -> bool {
    transcript::in_place(req)
        && compat_true(req, "supportsMidConvoToolChanges")
        && leading(&req.messages)
            .and_then(|s| s.tools_added.as_ref())
            .is_some_and(|t| !t.is_empty())
}

impl<'a> InPlace<'a> {
    /// `None` when the request is collapsed. `replayed` is the request's replayed messages.
    pub fn of(req: &'a Request, replayed: &'a [Arc<Message>]) -> Option<Self> {
        if !transcript::in_place(req) {
            return None;
        }
        let leading = leading(replayed);
        Some(InPlace {
            leading,
            leading_text: leading.map(SystemMessage::text).unwrap_or_default(),
            native: native_tool_changes(req),
            current: transcript::transcript_tools(&req.messages, ToolSupport::None).request_tools,
        })
    }

    /// The request's tool list; the last of the tools (not the placeholder) takes `cache`.
    pub fn tools(
        &self,
        name: &dyn Fn(&'a str) -> &'a str,
        compat: Compat,
        cache: Option<CacheControl>,
    ) -> Result<Vec<WireTool<'a>>, ProviderError> {
        if !self.native {
            return params::tools(&self.current, compat, name, cache);
        }
        let initial: Vec<&ToolDeclaration> = self
            .leading
            .and_then(|s| s.tools_added.as_ref())
            .into_iter()
            .flatten()
            .collect();
        let mut tools = params::tools(&initial, compat, name, cache)?;
        tools.push(WireTool {
            name: PLACEHOLDER,
            description: PLACEHOLDER_DESCRIPTION,
            eager_input_streaming: None,
            strict: None,
            input_schema: Schema::Empty(EmptySchema {
                ty: "object",
                properties: EmptyObject {},
                required: [],
            }),
            cache_control: None,
            defer_loading: Some(true),
        });
        Ok(tools)
    }

    /// A later system message as the conversation's `system` message, if it says anything.
    pub fn update(
        &self,
        s: &'a SystemMessage,
        name: &dyn Fn(&'a str) -> &'a str,
        compat: Compat,
    ) -> Result<Option<WireMessage<'a>>, ProviderError> {
        let text = transcript::update_text(s);
        let mut blocks: Vec<Block<'a>> = Vec::new();
        if !text.is_empty() {
            blocks.push(BlockKind::Text { text: text.into() }.into());
        }
        if self.native {
            let added: Vec<&ToolDeclaration> = s.tools_added.iter().flatten().collect();
            for t in s.tools_removed.iter().flatten() {
                if added.iter().any(|a| a.name == t.name) {
                    continue;
                }
                let tool = ToolReference {
                    ty: "tool_reference",
                    name: name(&t.name),
                };
                blocks.push(BlockKind::ToolRemoval { tool }.into());
            }
            for definition in params::tools(&added, compat, name, None)? {
                let tool = ToolDefinition {
                    ty: "tool_definition",
                    definition,
                };
                blocks.push(BlockKind::ToolAddition { tool }.into());
            }
        }
        Ok((!blocks.is_empty()).then(|| WireMessage::blocks("system", blocks)))
    }
}
