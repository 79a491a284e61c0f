//! The hook protocol's messages as plain serde types, with no I/O. The host (pi) and hooks
//! written in Rust both use these, so neither side can drift from the other; `hook-protocol.md`
//! is the normative description, and a test in pi parses every JSON example in it into these
//! types, so the document cannot drift either.
//!
//! Every message is a JSON object with a `type`. Requests carry an `id` (unique per direction
//! and per hook process); the answer to a request names the same `id`. Unknown message types
//! and unknown fields are ignored (and logged by the host), never fatal, so either side can grow
//! new optional fields without breaking the other.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::reply_shape::{check_result, json_kind, parse_result, ShapeError};
use super::reply_shape::{objects, opt_object};

/// Protocol versions this host speaks. A hook picks one in `register`.
pub const PROTOCOL_VERSIONS: &[u32] = &[1];

/// Default maximum size of one frame's JSON payload, both directions.
pub const DEFAULT_MAX_FRAME: usize = 16 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Host → hook
// ---------------------------------------------------------------------------------------------

/// Messages the host sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HostMessage {
    Hello(Box<Hello>),
    Event(EventRequest),
    ToolExecute(ToolExecute),
    Command(CommandRequest),
    /// Argument completion for a command registered with `completions: true`.
    Complete(CompleteRequest),
    Cancel {
        id: u64,
    },
    /// The answer to a hook's `call`.
    Result(CallResult),
    /// Partial output of a hook's `call` still being served (`model.complete`'s deltas).
    CallProgress(CallProgress),
    Shutdown {
        reason: String,
    },
}

/// First frame the host writes. The hook must answer with `register` within the start-up
/// deadline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub protocol_versions: Vec<u32>,
    pub host: HostInfo,
    /// The name the host knows this hook by (from settings or the executable's file name).
    pub hook_name: String,
    pub cwd: String,
    /// `print`, `json`, `interactive` or `rpc`.
    pub mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    /// The `config` object of this hook's settings entry (`{}` when none).
    #[serde(default)]
    pub config: Value,
    pub capabilities: HostCapabilities,
    /// The model pi uses as the hook starts (as `model.get` answers); absent while it is not
    /// decided yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<HookModel>,
    /// Command-line flags `pi` did not know itself (`--name` → `true`, `--name=value` →
    /// `"value"`). A hook claims a flag by listing it in `register.flags`; an unclaimed flag
    /// is an error.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub flags: serde_json::Map<String, Value>,
}

/// A model as hooks see it (`model.get`, `model.set`, `model_select`): the fields of pi's
/// `ctx.model`, snake_case, and nothing that authenticates (no key, no headers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookModel {
    pub provider: String,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub api: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Whether the model offers thinking levels above `off`.
    #[serde(default)]
    pub reasoning: bool,
    /// Input kinds: `text`, `image`.
    #[serde(default)]
    pub input: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<ModelCost>,
}

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModelCost {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub name: String,
    pub version: String,
}

/// What the host can do for a hook in this mode. A UI method listed as `false` is answered
/// with an `unavailable` error, never a silent default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostCapabilities {
    #[serde(default)]
    pub ui: UiCapabilities,
    /// Host call methods this host implements.
    #[serde(default)]
    pub methods: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UiCapabilities {
    #[serde(default)]
    pub notify: bool,
    #[serde(default)]
    pub confirm: bool,
    #[serde(default)]
    pub select: bool,
    #[serde(default)]
    pub input: bool,
    #[serde(default)]
    pub editor: bool,
    #[serde(default)]
    pub set_status: bool,
    #[serde(default)]
    pub set_widget: bool,
    #[serde(default)]
    pub set_title: bool,
    #[serde(default)]
    pub set_editor_text: bool,
    /// `ui.set_theme` switches the terminal UI's theme (interactive mode only).
    #[serde(default)]
    pub set_theme: bool,
}

/// An event. `id` is present when the host waits for a `reply`; notify events have none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    pub name: String,
    pub payload: Value,
    /// Milliseconds the hook has to reply, from when it receives the frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
}

/// Run a tool the hook registered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolExecute {
    pub id: u64,
    pub tool: String,
    pub call_id: String,
    pub arguments: Value,
    /// Tool execution has no deadline of its own (only abort ends it); present if one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
}

/// Run a command the hook registered (`/name args`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandRequest {
    pub id: u64,
    pub name: String,
    #[serde(default)]
    pub args: String,
    /// Milliseconds the hook has to reply (its event deadline), from when it receives the frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
}

/// Completions for what follows `/name ` in the editor; answered `{items: [{value,
/// description?}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteRequest {
    pub id: u64,
    pub name: String,
    #[serde(default)]
    pub prefix: String,
}

/// Partial output of the hook's call `id` while the host serves it: for `model.complete`,
/// one of pi-ai's streaming events (`{type: "text_delta" | "thinking_delta", contentIndex,
/// delta}`). Progress is advisory: the call's `result` is authoritative.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallProgress {
    pub id: u64,
    pub event: Value,
}

/// The answer to a hook's `call`: exactly one of `value` and `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallResult {
    pub id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CallError>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallError {
    /// `unavailable`, `invalid_params`, `unknown_method`, `failed`, `cancelled`.
    pub code: String,
    pub message: String,
}

// ---------------------------------------------------------------------------------------------
// Hook → host
// ---------------------------------------------------------------------------------------------

/// Messages a hook sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HookMessage {
    Register(Register),
    Reply(Reply),
    Progress(Progress),
    Call(Call),
    Log(Log),
    /// Add or replace subscriptions after `register` (see `hooks::subscribe`).
    Subscribe(Subscribe),
    /// Drop subscriptions after `register`.
    Unsubscribe(Unsubscribe),
    /// Withdraw the hook's own call `id` (a `model.complete` it no longer needs): the host
    /// stops serving it and answers it with error `cancelled`.
    CallCancel {
        id: u64,
    },
}

/// The hook's answer to `hello`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Register {
    pub protocol_version: u32,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default)]
    pub subscriptions: Vec<Subscription>,
    #[serde(default)]
    pub tools: Vec<ToolDecl>,
    #[serde(default)]
    pub commands: Vec<CommandDecl>,
    #[serde(default)]
    pub flags: Vec<FlagDecl>,
    /// The hook's own failure policy; a settings entry's `fail` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail: Option<FailPolicy>,
}

/// One event a hook wants. `tools` filters tool events (`tool_call`, `tool_result`,
/// `tool_execution_*`) by tool name, exact or glob; a call that does not match costs no round
/// trip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subscription {
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Per-event reply deadline in milliseconds (overrides the hook's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDecl {
    pub name: String,
    pub description: String,
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_snippet: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_guidelines: Vec<String>,
    #[serde(default)]
    pub sequential: bool,
    /// `direct` (default), `model-only`, `deferred` or `hidden`: who may see and run the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposure: Option<String>,
    /// JSON Schema of the `structured_content` the tool returns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandDecl {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The hook answers `complete` requests for this command's arguments.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub completions: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlagDecl {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// `boolean` or `string`.
    #[serde(rename = "type", default = "flag_type_default")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
}

fn flag_type_default() -> String {
    "boolean".into()
}

/// What happens to a gated action when the hook fails (crash, timeout, bad reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FailPolicy {
    /// The action does not happen (the default for gates).
    #[default]
    Closed,
    /// The failure is reported and the action goes ahead.
    Open,
}

/// The answer to an `event`, `tool_execute` or `command`: `result` or `error`.
///
/// Parsed strictly (see `reply_shape`): `result` is an object or `null`, `error` a string,
/// and not both. Anything else is not a `reply` at all, so it fails the one request it names
/// (closed, for a gate) instead of passing as "no opinion".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "super::reply_shape::RawReply")]
pub struct Reply {
    pub id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Partial output of a running `tool_execute` (cumulative, replaces the previous one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub id: u64,
    #[serde(default)]
    pub content: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// A request from the hook to the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    pub id: u64,
    pub method: String,
    #[serde(default)]
    pub params: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Log {
    /// `debug`, `info`, `warn`, `error`.
    #[serde(default = "log_level_default")]
    pub level: String,
    pub message: String,
}

fn log_level_default() -> String {
    "info".into()
}

/// `subscribe`: subscriptions shaped as `register`'s, added to the hook's set (one with the
/// event of an existing subscription replaces it) for every event dispatched afterwards.
/// With an `id` (from the hook's call id space) the host answers `result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subscribe {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    pub subscriptions: Vec<Subscription>,
}

/// `unsubscribe`: events the hook no longer wants, from the next dispatch on. With an `id`
/// the host answers `result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unsubscribe {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    pub events: Vec<String>,
}

// ---------------------------------------------------------------------------------------------
// Event replies (the `result` of a `reply`), one shape per semantics kind.
// ---------------------------------------------------------------------------------------------

/// `tool_call` (gate): block, or patch the input (RFC 7386 merge patch), or neither.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateReply {
    #[serde(default)]
    pub block: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<Value>,
    /// With `block`: end the run after this batch (when every result of the batch asks so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminate: bool,
}

/// `input` (chain): `continue` (default), `transform` with new text, or `handled`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputReply {
    #[serde(default)]
    pub action: InputAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputAction {
    #[default]
    Continue,
    Transform,
    Handled,
}

/// `tool_result` (chain): a partial patch of the result. `content` without
/// `structured_content` drops the structured content (it may no longer match).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolResultReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// pi's usage shape (`input`, `output`, `cacheRead`, `cacheWrite`, `totalTokens`, `cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
}

/// `prepare_arguments` (chain): replacement arguments, before they are validated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrepareArgumentsReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

/// `before_agent_start` (chain): a new system prompt and/or a message to inject.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeforeAgentStartReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Edits of the prompt's named sections, instead of a whole `system_prompt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt_options: Option<SystemPromptOptions>,
    #[serde(
        default,
        deserialize_with = "opt_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub message: Option<InjectedMessage>,
}

/// `before_agent_start`'s structured prompt edits (pi's `systemPromptOptions`): `sections`
/// maps a section name to its new text (replaced, or added at the end) or to `null` (removed);
/// sections not named stay as they are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemPromptOptions {
    #[serde(default)]
    pub sections: serde_json::Map<String, Value>,
}

/// A custom message a hook puts into the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InjectedMessage {
    pub custom_type: String,
    /// A string, or text and image blocks.
    pub content: crate::content::UserContent,
    #[serde(default = "default_true")]
    pub display: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

fn default_true() -> bool {
    true
}

/// `context` (chain): replacement messages for this model call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<Value>>,
}

/// `before_provider_request` (chain): a replacement payload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderRequestReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
}

/// `before_provider_headers` (chain): header edits; `null` deletes a header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeadersReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<serde_json::Map<String, Value>>,
}

/// `message_end` (chain): a replacement message with the same role.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageEndReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Value>,
}

/// `project_trust` (first decider).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustReply {
    #[serde(default)]
    pub trusted: TrustAnswer,
    #[serde(default)]
    pub remember: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustAnswer {
    Yes,
    No,
    #[default]
    Undecided,
}

/// `cache_warming_decision` (last override): whether this prompt-cache refresh is sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheWarmingReply {
    /// Absent: no opinion (pi's decision, or an earlier hook's, stands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<CacheWarmingAction>,
}

/// Refresh the cache entry now, or stop warming until the next real request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheWarmingAction {
    Warm,
    Stop,
}

impl CacheWarmingAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Warm => "warm",
            Self::Stop => "stop",
        }
    }
}

/// `user_bash` (first decider): the hook ran the command itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserBashReply {
    #[serde(
        default,
        deserialize_with = "opt_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub result: Option<UserBashResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserBashResult {
    pub output: String,
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub cancelled: bool,
    #[serde(default)]
    pub truncated: bool,
}

/// `session_before_*` (cancelable): cancel, or supply a result that replaces the host's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CancelableReply {
    #[serde(default)]
    pub cancel: bool,
    /// Event-specific fields (`compaction`, `summary`, `skip_conversation_restore`, …).
    #[serde(flatten)]
    pub rest: serde_json::Map<String, Value>,
}

/// `resources_discover` (collect): paths are absolute or relative to the hook's directory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscoverReply {
    #[serde(default)]
    pub skill_paths: Vec<String>,
    #[serde(default)]
    pub prompt_paths: Vec<String>,
    #[serde(default)]
    pub theme_paths: Vec<String>,
}

/// An entry a boundary hook proposes to add to the session (pi's boundary drafts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BoundaryDraft {
    /// A custom entry: state for hooks, not in the model's context.
    Custom {
        custom_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    /// The hook's own message, in the context.
    CustomMessage(InjectedMessage),
    /// Replace a message of the current branch in the context (`replacement`: its new
    /// content), or leave it out (`replacement` absent or `null`).
    ContextEdit {
        target_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replacement: Option<Value>,
    },
    /// A compaction: `summary` stands for everything before `first_kept_entry_id`.
    Compaction {
        summary: String,
        first_kept_entry_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
}

/// The proposal a boundary hook sees: the entries the hooks before it proposed and whether
/// the run goes on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundaryProposal {
    #[serde(default, deserialize_with = "objects")]
    pub entries: Vec<BoundaryDraft>,
    #[serde(default, rename = "continue")]
    pub continue_run: bool,
}

/// `turn_end` / `agent_before_settle` (boundary): `entries` replaces the proposal's entries,
/// `messages` appends custom messages to them, `continue` replaces the decision; what a reply
/// leaves out stays as proposed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundaryReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<BoundaryDraft>>,
    #[serde(default, deserialize_with = "objects")]
    pub messages: Vec<InjectedMessage>,
    #[serde(default, rename = "continue", skip_serializing_if = "Option::is_none")]
    pub continue_run: Option<bool>,
}

impl BoundaryProposal {
    /// A hook's reply applied to the proposal so far.
    pub fn apply(&mut self, reply: BoundaryReply) {
        if let Some(entries) = reply.entries {
            self.entries = entries;
        }
        self.entries
            .extend(reply.messages.into_iter().map(BoundaryDraft::CustomMessage));
        if let Some(c) = reply.continue_run {
            self.continue_run = c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_with_type_tags() {
        let m: HookMessage = serde_json::from_str(
            r#"{"type":"reply","id":7,"result":{"block":true,"reason":"no"}}"#,
        )
        .unwrap();
        let HookMessage::Reply(r) = &m else { panic!() };
        let g: GateReply = serde_json::from_value(r.result.clone().unwrap()).unwrap();
        assert!(g.block);
        let out = serde_json::to_value(HostMessage::Cancel { id: 7 }).unwrap();
        assert_eq!(out, serde_json::json!({"type":"cancel","id":7}));
    }

    #[test]
    fn unknown_fields_in_envelopes_are_ignored() {
        let m: HookMessage =
            serde_json::from_str(r#"{"type":"log","level":"warn","message":"x","extra":1}"#)
                .unwrap();
        assert!(matches!(m, HookMessage::Log(_)));
    }

    #[test]
    fn gate_reply_rejects_misspelled_fields() {
        assert!(serde_json::from_str::<GateReply>(r#"{"blok":true}"#).is_err());
    }
}
