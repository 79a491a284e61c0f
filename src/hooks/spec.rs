//! What the host needs to know to start one hook: its command, environment, settings and
//! policies. Built from `--hook`, settings entries and discovered executables (see `sources`).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::protocol::FailPolicy;

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
    /// The settings entry's `config` object, sent in `hello`.
    pub config: Value,
    pub start_timeout: Duration,
    pub event_timeout: Duration,
    /// The settings entry's failure policy; overrides what the hook registers.
    pub fail: Option<FailPolicy>,
    pub mode: HookMode,
    pub source: HookSource,
    /// Pinned SHA-256 of the executable (managed hooks).
    pub sha256: Option<String>,
    /// Whether `pi` must refuse to run tools when this hook is not running.
    pub required: bool,
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
            config: Value::Object(Default::default()),
            start_timeout: Self::DEFAULT_START_TIMEOUT,
            event_timeout: Self::DEFAULT_EVENT_TIMEOUT,
            fail: None,
            mode: HookMode::Enforce,
            source,
            sha256: None,
            required: false,
        }
    }

    /// The directory relative paths in this hook's replies resolve against.
    pub fn dir(&self) -> PathBuf {
        self.program
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_else(|| PathBuf::from("."))
    }
}
