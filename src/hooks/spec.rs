//! What the host needs to know to start one hook: its command, environment, settings and
//! policies. Built from `--hook`, settings entries and discovered executables (see `sources`).
//!
//! It also owns the pins (`sha256`, `interpreter_sha256`, in `pin`), because they are part of
//! the spec and their check must run before every spawn of it (first start and each restart):
//! `process::spawn` runs it and executes exactly the files it verified.

mod pin;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::protocol::FailPolicy;
pub use crate::config::managed::RequiredHookFailure;
pub use pin::{
    is_interpreter, is_sha256_hex, script_index, sha256_file, PinError, Verified, PROGRAM_FD,
    SCRIPT_FD,
};

/// Where a hook came from; also its load-order class (managed first, project last).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HookSource {
    Managed,
    User,
    Discovered,
    Cli,
    Project,
}

impl HookSource {
    pub fn as_str(self) -> &'static str {
        match self {
            HookSource::Managed => "managed",
            HookSource::User => "user settings",
            HookSource::Discovered => "hooks dir",
            HookSource::Cli => "--hook",
            HookSource::Project => "project",
        }
    }
}

/// `enforce` applies a hook's blocks and patches; `shadow` computes and reports them only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HookMode {
    #[default]
    Enforce,
    Shadow,
}

#[derive(Debug, Clone)]
pub struct HookSpec {
    /// Display name until the hook registers its own.
    pub name: String,
    /// The resolved executable.
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Extra environment from the settings entry.
    pub env: Vec<(String, String)>,
    /// Names of parent environment variables passed through on purpose.
    pub env_passthrough: Vec<String>,
    /// `env_passthrough` names a project hook's entry asked for that the user's `projectEnv`
    /// does not grant the project: not passed, and shown (`pi hooks`, a start-up warning).
    pub env_refused: Vec<String>,
    /// The settings entry's `config` object, sent in `hello`.
    pub config: Value,
    pub start_timeout: Duration,
    pub event_timeout: Duration,
    /// The settings entry's failure policy; overrides what the hook registers.
    pub fail: Option<FailPolicy>,
    pub mode: HookMode,
    pub source: HookSource,
    /// Pinned SHA-256 of the executable, or of the script of an interpreter entry: 64
    /// lowercase hex digits (normalised by `sources`).
    pub sha256: Option<String>,
    /// Pinned SHA-256 of the interpreter of an interpreter entry.
    pub interpreter_sha256: Option<String>,
    /// Whether `pi` must refuse to run tools when this hook is not running (managed hooks). A
    /// required hook always fails closed, whatever its `fail` says.
    pub required: bool,
    /// For a required hook: what its failure to start does (the managed policy's
    /// `requiredHookFailure`).
    pub on_required_failure: RequiredHookFailure,
    /// The TypeScript extension source this hook runs through the extension bridge
    /// (`hooks::extension`); `program` is then Node.
    pub extension: Option<PathBuf>,
}

impl HookSpec {
    pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(5);
    pub const DEFAULT_EVENT_TIMEOUT: Duration = Duration::from_secs(30);

    pub fn new(name: impl Into<String>, program: PathBuf, source: HookSource) -> Self {
        HookSpec {
            name: name.into(),
            program,
            args: Vec::new(),
            env: Vec::new(),
            env_passthrough: Vec::new(),
            env_refused: Vec::new(),
            config: Value::Object(Default::default()),
            start_timeout: Self::DEFAULT_START_TIMEOUT,
            event_timeout: Self::DEFAULT_EVENT_TIMEOUT,
            fail: None,
            mode: HookMode::Enforce,
            source,
            sha256: None,
            interpreter_sha256: None,
            required: false,
            on_required_failure: RequiredHookFailure::default(),
            extension: None,
        }
    }

    /// What the user knows this hook as on disk: its extension source, or its executable.
    pub fn shown_path(&self) -> &std::path::Path {
        self.extension.as_deref().unwrap_or(&self.program)
    }

    /// The directory relative paths in this hook's replies resolve against.
    pub fn dir(&self) -> PathBuf {
        self.program
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_else(|| PathBuf::from("."))
    }
}
