//! Why an operation of the controller did not happen. Front ends branch on the variant (print
//! mode exits 1 on a failed command; RPC answers `success: false` with the message), and the
//! message names what was wrong.

use crate::config::ConfigError;
use crate::hooks::instance::StartError;
use crate::hooks::protocol::CallError;
use crate::session::SessionError;

use super::session_ops::OpError;
use super::tools::ToolSelectionError;

#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// A prompt while a run is in progress, without saying how to deliver it.
    #[error(
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to \
         queue the message."
    )]
    Busy,
    /// `message.send_user` with `deliver_as: next_turn`, which only an extension's own
    /// message can have (a user message starts or joins a run).
    #[error("deliver_as next_turn is for message.send; a user message is steer or follow_up")]
    NextTurnUserMessage,
    /// A hook's `/name` command failed.
    #[error("/{name} failed: {message}")]
    CommandFailed { name: String, message: String },
    /// `steer` and `follow_up` take messages for the model, not commands.
    #[error("/{0} is a hook command; commands cannot be queued (send it with prompt)")]
    CommandNotQueueable(String),
    #[error(transparent)]
    Operation(#[from] OpError),
    #[error(transparent)]
    Session(#[from] SessionError),
    /// `/login` or RPC `login` failed at the provider or on the way (not a cancel).
    #[error("Failed to log in to {name}: {source}")]
    LoginFailed {
        name: &'static str,
        #[source]
        source: crate::oauth::login::LoginError,
    },
    #[error("Unknown provider \"{0}\".")]
    UnknownProvider(String),
    /// A key for a provider a hook owns would never be sent: only the hook supplies it.
    #[error("Provider \"{provider}\" belongs to hook {hook}, which supplies its key; pi stores none for it.")]
    HookOwnedProvider { provider: String, hook: String },
    #[error(transparent)]
    AuthStore(#[from] crate::config::auth_store::AuthStoreError),
    #[error("Model not found: {provider}/{id}")]
    ModelNotFound { provider: String, id: String },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("model {model} uses api \"{api}\", which this build does not support")]
    UnsupportedApi { model: String, api: String },
    #[error("Compaction cancelled by hook {0}")]
    CompactionCancelled(String),
    #[error("a shell command is already running; abort it first (abort_bash)")]
    BashBusy,
    /// A `user_bash` hook failed or the run was aborted while it decided (fail closed).
    #[error("{0}")]
    BashRefused(String),
    #[error("cannot run the shell command: {0}")]
    Bash(#[from] crate::tools::process::ProcessError),
    /// The hooks of the new session (or of a reload) could not start; nothing was changed.
    #[error("the hooks could not be started, so nothing was changed: {0}")]
    HookStart(#[from] StartError),
    #[error("the tools could not be set up, so nothing was changed: {0}")]
    Tools(#[from] ToolSelectionError),
    /// `get_entries {since}` with an id the session does not have.
    #[error("Entry not found: {0}")]
    EntryNotFound(String),
    /// `fork {entryId}` with an id that is not a user message of the session.
    #[error("Invalid entry ID for forking")]
    InvalidForkEntry,
    /// `fork`/`clone` before the session's file exists (pi writes it with the first reply).
    #[error("This session has not been saved yet. Send a message before cloning or forking it.")]
    Unsaved,
    #[error("Session name cannot be empty")]
    EmptyName,
    /// The session tree did not serialise.
    #[error("the session tree could not be written as JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Export(#[from] crate::export::ExportError),
    /// A default (model, thinking level, scope) could not be saved in settings.json.
    #[error(transparent)]
    SettingsWrite(#[from] crate::config::settings_file::SettingsFileError),
    /// The session to switch to names a directory that is gone (1.6's MissingSessionCwdError).
    #[error(transparent)]
    MissingCwd(#[from] super::MissingCwd),
    /// `reload` could not read the settings or the hook list.
    #[error("reload failed, nothing was changed: {0}")]
    Reload(#[from] super::reload::ReloadError),
}

impl From<ControllerError> for CallError {
    fn from(e: ControllerError) -> CallError {
        match e {
            ControllerError::Operation(op) => op.into(),
            ControllerError::Session(s) => OpError::Session(s).into(),
            other => CallError {
                code: "failed".into(),
                message: other.to_string(),
            },
        }
    }
}
