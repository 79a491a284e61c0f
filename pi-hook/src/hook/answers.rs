//! What handlers take and give back: the `tool_call` payload as a type, the gate's decision,
//! a tool's output, a command's text, and the errors a handler or a host call ends with.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::content::ContentBlock;
use crate::protocol::GateReply;

/// The payload of a `tool_call` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub tool_call_id: String,
    pub tool_name: String,
    /// The arguments the model sent (patched by the gates before this one).
    #[serde(default)]
    pub input: Value,
}

impl ToolCall {
    /// A string argument, e.g. `command` of `bash` or `path` of `write`.
    pub fn str_arg(&self, name: &str) -> Option<&str> {
        self.input.get(name).and_then(Value::as_str)
    }
}

/// A gate's decision about one tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    /// No objection.
    Allow,
    /// The tool does not run; the reason goes to the model.
    Block(String),
    /// Run it with the input changed by this RFC 7386 merge patch (`null` deletes a key).
    Patch(Value),
}

impl Gate {
    pub fn allow() -> Gate {
        Gate::Allow
    }

    pub fn block(reason: impl Into<String>) -> Gate {
        Gate::Block(reason.into())
    }

    pub fn patch(patch: Value) -> Gate {
        Gate::Patch(patch)
    }

    /// The reply `result` this decision is: `{}`, `{block, reason}` or `{patch}`.
    pub fn to_result(&self) -> Value {
        match self {
            Gate::Allow => json!({}),
            Gate::Block(reason) => json!({"block": true, "reason": reason}),
            Gate::Patch(p) => json!({"patch": p}),
        }
    }

    /// The decision a gate reply amounts to.
    pub fn from_reply(r: GateReply) -> Gate {
        match (r.block, r.patch) {
            (true, _) => Gate::Block(r.reason.unwrap_or_default()),
            (false, Some(p)) => Gate::Patch(p),
            (false, None) => Gate::Allow,
        }
    }
}

/// What a tool returns: content for the model, details kept with the result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    pub content: Vec<ContentBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default)]
    pub is_error: bool,
}

impl ToolOutput {
    /// One text block.
    pub fn text(s: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: vec![ContentBlock::text(s)],
            ..ToolOutput::default()
        }
    }

    pub fn with_details(mut self, details: Value) -> ToolOutput {
        self.details = Some(details);
        self
    }

    /// Marks the result as an error the model sees (the tool ran and failed).
    pub fn error(mut self) -> ToolOutput {
        self.is_error = true;
        self
    }
}

impl From<&str> for ToolOutput {
    fn from(s: &str) -> Self {
        ToolOutput::text(s)
    }
}

impl From<String> for ToolOutput {
    fn from(s: String) -> Self {
        ToolOutput::text(s)
    }
}

/// What a command returns: text shown to the user, or nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommandOutput {
    pub text: Option<String>,
}

impl CommandOutput {
    pub(crate) fn to_result(&self) -> Value {
        match &self.text {
            Some(t) => json!({"text": t}),
            None => json!({}),
        }
    }
}

impl From<()> for CommandOutput {
    fn from(_: ()) -> Self {
        CommandOutput::default()
    }
}

impl From<&str> for CommandOutput {
    fn from(s: &str) -> Self {
        CommandOutput {
            text: Some(s.to_string()),
        }
    }
}

impl From<String> for CommandOutput {
    fn from(s: String) -> Self {
        CommandOutput { text: Some(s) }
    }
}

/// Why a handler failed: sent to the host as the request's `error` (for a gate, the hook's
/// failure policy applies). Any error type converts with `?`.
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerError(pub String);

impl HandlerError {
    pub fn new(message: impl Into<String>) -> HandlerError {
        HandlerError(message.into())
    }
}

impl std::fmt::Display for HandlerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

// Not `std::error::Error` itself, so that every error type can convert into it.
impl<E: std::error::Error> From<E> for HandlerError {
    fn from(e: E) -> Self {
        HandlerError(e.to_string())
    }
}

/// The host answered a `call` with an error, or could not answer it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct HostError {
    /// The host's code (`unavailable`, `invalid_params`, `unknown_method`, `not_found`,
    /// `failed`, `cancelled`, `busy`, `too_large`), or `closed` when the connection ended first, or
    /// `timeout` when the caller's own timeout passed.
    pub code: String,
    pub message: String,
}

impl HostError {
    pub(crate) fn new(code: &str, message: impl Into<String>) -> HostError {
        HostError {
            code: code.to_string(),
            message: message.into(),
        }
    }
}

/// Why [`Hook::serve`](crate::Hook::serve) stopped before a clean end.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the host sent {0} before hello")]
    NoHello(String),
    #[error("the host offers protocol versions {offered:?}; this hook speaks {supported:?}")]
    NoCommonVersion {
        offered: Vec<u32>,
        supported: Vec<u32>,
    },
    #[error(transparent)]
    Frame(#[from] crate::framing::FrameError),
}
