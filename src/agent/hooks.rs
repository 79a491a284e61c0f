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
use crate::resources::system_prompt::SystemPrompt;

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
    /// The text the run sends: the sections' text, or a whole prompt a hook returned.
    pub system_prompt: String,
    /// The run's sections after the hooks' edits: what the transcript declares (a whole
    /// prompt replaces the text sent, not the sections recorded, as in pi 1.6).
    pub sections: SystemPrompt,
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
    /// Do not run; the model gets an error result with this reason. `terminate`: the hook
    /// asks the run to end after this batch (it does if every result of the batch asks so).
    Block { reason: String, terminate: bool },
}

/// An entry the boundary hooks decided to add to the session.
// A few per boundary at most, moved once into the session: boxing the message buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum BoundaryEntry {
    /// A custom entry (state for hooks, not in the context).
    Custom {
        custom_type: String,
        data: Option<Value>,
    },
    /// A message for the context (an extension's own).
    Message(Message),
    /// A branch message replaced in the context (`None`: left out).
    ContextEdit {
        target_id: String,
        replacement: Option<Value>,
    },
    /// A compaction keeping the context from `first_kept_entry_id` on.
    Compaction {
        summary: String,
        first_kept_entry_id: String,
        details: Option<Value>,
    },
}

/// How the turn (or the run) that reached a boundary ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Completed,
    Error,
    Aborted,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Error => "error",
            Outcome::Aborted => "aborted",
        }
    }
}

/// The `turn_end` / `agent_before_settle` boundary decision.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Boundary {
    /// Entries to add before deciding.
    pub entries: Vec<BoundaryEntry>,
    /// Run another turn even though the model stopped.
    pub continue_run: bool,
}

/// Where boundary entries that are not messages go: the session. The loop adds messages
/// itself (they are recorded like any other); the rest only a session can hold.
pub trait BoundaryStore: Send + Sync {
    /// Whether every entry can be added (the entries they name are on the current branch);
    /// nothing is written.
    fn check(&self, entries: &[BoundaryEntry]) -> Result<(), crate::session::SessionError>;
    /// Add one entry that is not a message; returns it as the session file has it, for
    /// `entry_appended`.
    fn append(
        &self,
        entry: &BoundaryEntry,
    ) -> Result<Option<serde_json::Value>, crate::session::SessionError>;
    /// The context as the session now makes it (after edits and compactions).
    fn context(&self) -> Vec<Arc<Message>>;
}

/// What runs between two turns of a run, before the next model call (pi's `prepareNextTurn`):
/// the session side compacts a context past its threshold there, so a long run of tool calls
/// does not reach the model's window before the run ends. Whatever it changes reaches the
/// loop through the handle's context.
#[async_trait]
pub trait NextTurn: Send + Sync {
    async fn prepare(&self);
}

#[async_trait]
pub trait AgentHooks: Send + Sync {
    /// Every event the loop emits, in order (notify semantics; must not block).
    fn event(&self, _event: &AgentEvent) {}

    async fn input(&self, text: String, _source: InputSource) -> InputOutcome {
        InputOutcome::Continue(text)
    }

    /// The run's system prompt from pi's (named sections), and messages to inject.
    async fn before_agent_start(
        &self,
        _prompt: &str,
        system_prompt: SystemPrompt,
    ) -> BeforeAgentStart {
        BeforeAgentStart {
            system_prompt: system_prompt.text().to_string(),
            sections: system_prompt,
            messages: Vec::new(),
        }
    }

    /// Before every model call: may replace the messages sent (not the stored context).
    async fn context(&self, messages: Vec<Arc<Message>>) -> Vec<Arc<Message>> {
        messages
    }

    /// After [`Self::context`]: the whole transcript of this call, system prompt included;
    /// what comes back is sent as it is.
    async fn context_with_system(
        &self,
        system_prompt: String,
        messages: Vec<Arc<Message>>,
    ) -> (String, Vec<Arc<Message>>) {
        (system_prompt, messages)
    }

    /// The `prepare_arguments` chain: the model's arguments (after the tool's own
    /// normalisation) before they are validated against the tool's schema.
    async fn prepare_arguments(&self, _call: &ToolCall, args: Value) -> Value {
        args
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

    /// Feedback hooks add to a call the gate blocked (`reason`), for the model after the
    /// reason (Claude Code's PostToolUseFailure).
    async fn tool_blocked(&self, _call: &ToolCall, _reason: &str) -> Vec<String> {
        Vec::new()
    }

    /// `message_end` chain: may replace the message (same role). Unchanged, it returns the
    /// very allocation it was given.
    async fn message_end(&self, message: Arc<Message>) -> Arc<Message> {
        message
    }

    async fn turn_end(
        &self,
        _turn_index: usize,
        _message: &Message,
        _results: &[ToolResultMessage],
        _outcome: Outcome,
    ) -> Boundary {
        Boundary::default()
    }

    async fn agent_before_settle(&self, _messages: &[Arc<Message>], _outcome: Outcome) -> Boundary {
        Boundary::default()
    }

    fn provider_hooks(&self) -> Arc<dyn ProviderHooks> {
        Arc::new(NoProviderHooks)
    }
}

/// No extensions loaded.
pub struct NoHooks;
impl AgentHooks for NoHooks {}
