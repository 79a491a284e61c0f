//! The controller's vocabulary: the typed requests its operations take and the results they
//! return. Plain serde types, no I/O. Names and fields are pi's RPC ones (reference/pi.md §8,
//! pi 1.6's `docs/rpc-commands.md`), camelCase on the wire, so `--mode rpc` serialises a
//! result as the response's `data` as it is — these are RPC's data types too, and the
//! recorded TypeScript pi 1.6 transcripts must read into them and write back unchanged
//! (`tests/it/rpc_reference.rs`): same keys, same nesting, same null-versus-absent. What
//! front ends need beyond pi's keys (the file of a new session, a hook command's text) is
//! carried in fields that are not serialised.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::message::Content;
use crate::session::Entry;

/// How a prompt sent while the agent is running is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamingBehavior {
    /// After the current turn's tool calls, before the next model call.
    Steer,
    /// Once the agent has nothing else to do.
    FollowUp,
}

/// An image attached to a prompt (`{type: "image", data, mimeType}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageInput {
    /// Base64.
    pub data: String,
    pub mime_type: String,
}

impl ImageInput {
    pub fn content(&self) -> Content {
        Content::Image {
            data: self.data.clone(),
            mime_type: self.mime_type.clone(),
        }
    }
}

/// `prompt {message, images?, streamingBehavior?}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptRequest {
    pub message: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageInput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming_behavior: Option<StreamingBehavior>,
}

impl PromptRequest {
    pub fn text(message: impl Into<String>) -> Self {
        PromptRequest {
            message: message.into(),
            ..Default::default()
        }
    }
}

/// What became of a submitted prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Disposition {
    /// A run started for it; `agent_settled` will follow.
    Started,
    /// Queued (steer or follow-up) for the run in progress.
    Queued,
    /// A hook's command or its `input` handler consumed it; no run started.
    Handled,
}

/// The result of `prompt`, `steer` and `follow_up`: `{disposition}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptOutcome {
    pub disposition: Disposition,
    /// The `text` a hook's command answered with, for front ends that show it (print mode
    /// prints it); not part of pi's response.
    #[serde(skip)]
    pub command_text: Option<String>,
}

impl PromptOutcome {
    pub(crate) fn of(disposition: Disposition) -> Self {
        PromptOutcome {
            disposition,
            command_text: None,
        }
    }
}

/// `clear_queue`: the queued messages' text, removed (also the `queue_update` event's body).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedMessages {
    pub steering: Vec<String>,
    pub follow_up: Vec<String>,
}

/// `new_session`, `switch_session`, `clone`: `{cancelled}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchOutcome {
    pub cancelled: bool,
    /// The session the run continues in (none when cancelled or kept in memory).
    #[serde(skip)]
    pub session_file: Option<String>,
    #[serde(skip)]
    pub session_id: Option<String>,
}

impl SwitchOutcome {
    pub(crate) fn cancelled() -> Self {
        SwitchOutcome {
            cancelled: true,
            ..Default::default()
        }
    }
}

/// `fork`: `{text, cancelled}` (`text` is the chosen user message's; absent when a hook
/// cancelled the fork).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkOutcome {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub cancelled: bool,
    #[serde(skip)]
    pub session_file: Option<String>,
    #[serde(skip)]
    pub session_id: Option<String>,
}

/// `navigate_tree`: where the leaf went, the editor text of a picked user message, and the
/// branch summary entry left behind, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateOutcome {
    pub cancelled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor_text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_entry_id: Option<String>,
}

/// `compact`: `{summary, firstKeptEntryId, tokensBefore, estimatedTokensAfter, usage?,
/// details}`; also a successful `compaction_end`'s `result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactOutcome {
    pub summary: String,
    pub first_kept_entry_id: Option<String>,
    pub tokens_before: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_tokens_after: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// A model as pi's RPC shows it: the configured definition, never a credential.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    pub id: String,
    pub name: String,
    pub api: String,
    pub provider: String,
    pub base_url: String,
    pub reasoning: bool,
    pub input: Vec<String>,
    pub context_window: u64,
    pub max_tokens: u64,
    pub cost: ModelRates,
    /// models.json's `compat` (the model's over its provider's), when either has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<Value>,
}

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRates {
    #[serde(serialize_with = "crate::message::js_number")]
    pub input: f64,
    #[serde(serialize_with = "crate::message::js_number")]
    pub output: f64,
    #[serde(serialize_with = "crate::message::js_number")]
    pub cache_read: f64,
    #[serde(serialize_with = "crate::message::js_number")]
    pub cache_write: f64,
}

/// `cycle_model`: `{model, thinkingLevel, isScoped}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CycledModel {
    pub model: ModelInfo,
    pub thinking_level: String,
    pub is_scoped: bool,
}

/// `get_available_models`: `{models}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelList {
    pub models: Vec<ModelInfo>,
}

/// `cycle_thinking_level`: `{level}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkingLevelOutcome {
    pub level: String,
}

/// `get_available_thinking_levels`: `{levels}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkingLevels {
    pub levels: Vec<String>,
}

/// `get_state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateSnapshot {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelInfo>,
    pub thinking_level: String,
    pub is_streaming: bool,
    pub is_compacting: bool,
    pub steering_mode: String,
    pub follow_up_mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_name: Option<String>,
    pub auto_compaction_enabled: bool,
    pub message_count: usize,
    pub pending_message_count: usize,
}

/// `get_messages`: `{messages}` (pi's `AgentMessage`s of the current context).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Messages {
    pub messages: Vec<crate::session::AgentMessage>,
}

/// `get_entries {since?}`: the entries after the cursor, in append order, and the leaf.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntriesPage {
    pub entries: Vec<WireEntry>,
    pub leaf_id: Option<String>,
}

/// A session entry on the wire: the session's own, written as the session file writes it, or
/// one read back from the wire, kept as its JSON (its shape is the session format's).
#[derive(Debug, Clone, PartialEq)]
pub enum WireEntry {
    Session(Box<Entry>),
    Json(Value),
}

impl WireEntry {
    /// The entry's id (a cursor for `get_entries {since}`).
    pub fn id(&self) -> Option<&str> {
        match self {
            WireEntry::Session(e) => Some(&e.id),
            WireEntry::Json(v) => v.get("id").and_then(Value::as_str),
        }
    }
}

impl Serialize for WireEntry {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WireEntry::Session(e) => e.serialize(s),
            WireEntry::Json(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for WireEntry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(WireEntry::Json)
    }
}

/// `get_tree`: `{tree: [{entry, children, label?}], leafId}`; the tree is written as JSON
/// once, iteratively (a long session is a very deep chain).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeView {
    pub tree: Box<RawValue>,
    pub leaf_id: Option<String>,
}

impl PartialEq for TreeView {
    fn eq(&self, other: &Self) -> bool {
        self.tree.get() == other.tree.get() && self.leaf_id == other.leaf_id
    }
}

impl<'de> Deserialize<'de> for TreeView {
    /// Through `Value`, so it reads from any deserializer (a `RawValue` reads only from text).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire {
            tree: Value,
            leaf_id: Option<String>,
        }
        let w = Wire::deserialize(d)?;
        let tree = serde_json::value::to_raw_value(&w.tree).map_err(serde::de::Error::custom)?;
        Ok(TreeView {
            tree,
            leaf_id: w.leaf_id,
        })
    }
}

/// One user message a fork can start from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkMessage {
    pub entry_id: String,
    pub text: String,
}

/// `get_fork_messages`: `{messages}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkMessages {
    pub messages: Vec<ForkMessage>,
}

/// `get_last_assistant_text`: `{text}`. TypeScript pi documents `text: null` when there is
/// none but sends `{}` (its `undefined` is dropped); this follows the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastAssistantText {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// How full the context window is (`tokens`/`percent` are `null` right after a compaction,
/// until a reply reports usage again).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    pub tokens: Option<u64>,
    pub context_window: u64,
    #[serde(serialize_with = "crate::message::js_number_opt")]
    pub percent: Option<f64>,
}

/// `get_session_stats`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    pub session_id: String,
    /// Messages, tool calls, tokens and cost, in pi's field order.
    #[serde(flatten)]
    pub counts: crate::session::stats::SessionStats,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_usage: Option<ContextUsage>,
}

/// What kind of thing a `/name` command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CommandSource {
    /// A hook's registered command.
    Extension,
    /// A prompt template.
    Prompt,
    /// A skill (`/skill:name`).
    Skill,
}

/// Where a command comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceInfo {
    pub path: String,
    /// How pi found it: `local`, `auto`, `cli` (`builtin` for pi 1.6's own).
    pub source: String,
    /// `user`, `project` or `temporary`.
    pub scope: String,
    /// `top-level` or `package`.
    pub origin: String,
    /// The directory the resource was found under (prompt templates and skills).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog_path: Option<String>,
}

/// One entry of `get_commands`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub source: CommandSource,
    pub source_info: SourceInfo,
}

/// `get_commands`: `{commands}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commands {
    pub commands: Vec<CommandInfo>,
}

/// `bash {command, excludeFromContext?}`; `id` tags its `bash_execution_update` events.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashRequest {
    pub command: String,
    #[serde(default)]
    pub exclude_from_context: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The user's shell command's result: `{output, exitCode?, cancelled, truncated,
/// fullOutputPath?}` (`exitCode` is absent when a signal ended it or it was cancelled, as
/// TypeScript pi sends it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashOutcome {
    pub output: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
}

/// `export_html`: `{path}`, the file written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportPath {
    pub path: String,
}

/// RPC `login` and `logout`, `/login` and `/logout`: how a sign-in or sign-out ended, in
/// the words to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthOutcome {
    /// The provider signed in to or out of (none when nothing was chosen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    pub message: String,
    /// The user cancelled or there was nothing to do; the message says which.
    pub cancelled: bool,
}

impl AuthOutcome {
    pub(crate) fn nothing(message: impl Into<String>) -> AuthOutcome {
        AuthOutcome {
            provider: None,
            message: message.into(),
            cancelled: true,
        }
    }
}
