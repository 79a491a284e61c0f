//! The loop's extension points (SPEC 4.3), as one trait with do-nothing defaults.
//!
//! The loop calls every method at the place its event fires, whether or not anything is
//! listening, so the extension host attaches by implementing this trait and nothing in the
//! loop changes shape. Each method's return value carries the combined decision of all hooks
//! (the host owns the per-event combination rules: gate, chain, boundary…).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::events::AgentEvent;
use crate::message::{Message, ToolCall, ToolResultMessage};
use crate::provider::{NoProviderHooks, ProviderHooks};

/// Checks tool arguments against the tool's schema; the error says what is wrong.
pub type Validate = dyn Fn(&Value) -> Result<(), String> + Send + Sync;

/// Where a piece of input came from: the `source` of the `input` event. Front ends give
/// their own (JSON mode counts as `print`, as in pi); text a hook sent is `extension`, so an
/// `input` hook can tell its own messages apart from the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSource {
    Interactive,
    Rpc,
    Print,
    Extension,
}

impl InputSource {
    /// The name hooks see.
    pub fn as_str(self) -> &'static str {
        match self {
            InputSource::Interactive => "interactive",
            InputSource::Rpc => "rpc",
            InputSource::Print => "print",
            InputSource::Extension => "extension",
        }
    }
}

/// What became of a user's input after the `input` chain.
#[derive(Debug, Clone, PartialEq)]
pub enum InputOutcome {
    /// Go on with this (possibly transformed) text.
    Continue(String),
    /// A hook handled the input; no turn runs.
    Handled,
}

/// The combined `before_agent_start` result: the chained system prompt and messages that hooks
/// asked to inject before the user's prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct BeforeAgentStart {
    pub system_prompt: String,
    pub messages: Vec<Message>,
}

/// The `tool_call` gate's decision for one call.
#[derive(Debug, Clone, PartialEq)]
pub enum GateOutcome {
    /// Run with these arguments. `patched_by` names the hooks whose patches changed them; the
    /// loop validates patched arguments against the schema again.
    Allow {
        args: Value,
        patched_by: Vec<String>,
    },
    /// Do not run; the model gets an error result with this reason.
    Block { reason: String },
}

/// The `turn_end` / `agent_before_settle` boundary decision.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Boundary {
    /// Messages to append to the context before deciding.
    pub messages: Vec<Message>,
    /// Run another turn even though the model stopped.
    pub continue_run: bool,
}

#[async_trait]
pub trait AgentHooks: Send + Sync {
    /// Every event the loop emits, in order (notify semantics; must not block).
    fn event(&self, _event: &AgentEvent) {}

    async fn input(&self, text: String, _source: InputSource) -> InputOutcome {
        InputOutcome::Continue(text)
    }

    async fn before_agent_start(&self, _prompt: &str, system_prompt: String) -> BeforeAgentStart {
        BeforeAgentStart {
            system_prompt,
            messages: Vec::new(),
        }
    }

    /// Before every model call: may replace the messages sent (not the stored context).
    async fn context(&self, messages: Vec<Arc<Message>>) -> Vec<Arc<Message>> {
        messages
    }

    /// The gate. `validate` checks arguments against the tool's schema, so an implementation
    /// can reject a patch at the hook that made it.
    async fn tool_call(&self, call: &ToolCall, _validate: &Validate) -> GateOutcome {
        GateOutcome::Allow {
            args: call.arguments.clone(),
            patched_by: Vec::new(),
        }
    }

    async fn tool_result(&self, _call: &ToolCall, result: ToolResultMessage) -> ToolResultMessage {
        result
    }

    /// `message_end` chain: may replace the message (same role).
    async fn message_end(&self, message: Message) -> Message {
        message
    }

    async fn turn_end(
        &self,
        _turn_index: usize,
        _message: &Message,
        _results: &[ToolResultMessage],
    ) -> Boundary {
        Boundary::default()
    }

    async fn agent_before_settle(&self, _messages: &[Arc<Message>]) -> Boundary {
        Boundary::default()
    }

    fn provider_hooks(&self) -> Arc<dyn ProviderHooks> {
        Arc::new(NoProviderHooks)
    }
}

/// No extensions loaded.
pub struct NoHooks;
impl AgentHooks for NoHooks {}
