//! The controller's vocabulary: the typed requests its operations take and the results they
//! return. Plain serde types, no I/O. Names and fields are pi's RPC ones (reference/pi.md §8,
//! pi 1.6's `docs/rpc-commands.md`), camelCase on the wire, so `--mode rpc` serialises a
//! result as the response's `data` as it is; what front ends need beyond pi's keys (the file
//! of a new session, a hook command's text) is carried in fields that are not serialised.

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

/// `clear_queue`: the queued messages' text, removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedMessages {
    pub steering: Vec<String>,
    pub follow_up: Vec<String>,
}

/// `new_session`, `switch_session`, `clone`: `{cancelled}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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

/// `fork`: `{text, cancelled}` (`text` is the chosen user message's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ForkOutcome {
    #[serde(skip_serializing_if = "Option::is_none")]
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
/// details}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactOutcome {
    pub summary: String,
    pub first_kept_entry_id: Option<String>,
    pub tokens_before: u64,
    pub estimated_tokens_after: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    pub details: Option<Value>,
}

/// A model as pi's RPC shows it: the configured definition, never a credential.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
}

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRates {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

/// `cycle_model`: `{model, thinkingLevel, isScoped}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CycledModel {
    pub model: ModelInfo,
    pub thinking_level: String,
    pub is_scoped: bool,
}

/// `get_available_models`: `{models}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelList {
    pub models: Vec<ModelInfo>,
}

/// `cycle_thinking_level`: `{level}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThinkingLevelOutcome {
    pub level: String,
}

/// `get_available_thinking_levels`: `{levels}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThinkingLevels {
    pub levels: Vec<String>,
}

/// `get_state`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StateSnapshot {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelInfo>,
    pub thinking_level: String,
    pub is_streaming: bool,
    pub is_compacting: bool,
    pub steering_mode: String,
    pub follow_up_mode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    pub session_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_name: Option<String>,
    pub auto_compaction_enabled: bool,
    pub message_count: usize,
    pub pending_message_count: usize,
}

/// `get_messages`: `{messages}` (pi's `AgentMessage`s of the current context).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Messages {
    pub messages: Vec<crate::session::AgentMessage>,
}

/// `get_entries {since?}`: the entries after the cursor, in append order, and the leaf.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntriesPage {
    pub entries: Vec<Entry>,
    pub leaf_id: Option<String>,
}

/// `get_tree`: `{tree: [{entry, children, label?}], leafId}`; the tree is written as JSON
/// once, iteratively (a long session is a very deep chain).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeView {
    pub tree: Box<RawValue>,
    pub leaf_id: Option<String>,
}

/// One user message a fork can start from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkMessage {
    pub entry_id: String,
    pub text: String,
}

/// `get_fork_messages`: `{messages}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForkMessages {
    pub messages: Vec<ForkMessage>,
}

/// `get_last_assistant_text`: `{text}` (`null` when there is none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LastAssistantText {
    pub text: Option<String>,
}

/// How full the context window is (`tokens`/`percent` are `null` right after a compaction,
/// until a reply reports usage again).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    pub tokens: Option<u64>,
    pub context_window: u64,
    pub percent: Option<f64>,
}

/// `get_session_stats`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    pub session_id: String,
    /// Messages, tool calls, tokens and cost, in pi's field order.
    #[serde(flatten)]
    pub counts: crate::session::stats::SessionStats,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_usage: Option<ContextUsage>,
}

/// What kind of thing a `/name` command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceInfo {
    pub path: String,
    /// How pi found it: `local`, `auto` or `cli`.
    pub source: String,
    /// `user`, `project` or `temporary`.
    pub scope: String,
    pub origin: String,
}

/// One entry of `get_commands`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandInfo {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub source: CommandSource,
    pub source_info: SourceInfo,
}

/// `get_commands`: `{commands}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

/// The user's shell command's result: `{output, exitCode, cancelled, truncated,
/// fullOutputPath?}` (`exitCode` is `null` when a signal ended it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BashOutcome {
    pub output: String,
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
}
