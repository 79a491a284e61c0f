//! User configuration: the agent directory, `settings.json`, `models.json`, `auth.json`, and
//! the model selection that turns `--provider`/`--model` (or the settings, or whatever has a key)
//! into one [`Model`](crate::provider::Model) plus an API key.
//!
//! Everything that reads the process environment goes through the [`Env`] trait so tests can run
//! against an in-memory environment and a temporary agent directory, never the user's real
//! `~/.pi`. The library never prints: recoverable problems (a skipped provider, a bad `:thinking`
//! suffix) come back as warning strings for the caller to show on stderr; everything else is a
//! [`ConfigError`] whose message names the file and what is wrong with it.

mod auth;
pub mod auth_store;
pub mod catalog;
mod collate;
pub(crate) mod hook_providers;
pub mod managed;
mod model_list;
mod model_scope;
pub(crate) mod models;
mod registry;
mod resolve;
pub mod scope;
mod settings;
pub mod settings_file;
mod value;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use auth::{AuthEntry, AuthFile};
pub use hook_providers::{Applied, HookProviderError};
pub use model_scope::{resolve_scope, ScopedModel};
pub use models::{env_vars_for_provider, ModelEntry, ProviderConfig, SUPPORTED_APIS};
pub use registry::ModelRegistry;
pub use resolve::{resolve_model, ModelSelection};
pub use scope::{ForeignEnv, ForeignValueError, Grantee, ProjectGrant};
pub use settings::{
    deep_merge, CacheWarmingMode, QueueMode, RetrySettings, Settings, ThinkingBudgets,
};
pub use value::{
    referenced_vars, resolve_value, value_is_configured, value_origin, ValueError, ValueOrigin,
};

/// Environment variable that relocates the agent directory (pi's name, kept for compatibility).
pub const AGENT_DIR_ENV: &str = "PI_CODING_AGENT_DIR";

/// Read access to the environment. Injected so tests stay hermetic.
pub trait Env: Send + Sync {
    /// The variable's value, or `None` when unset.
    fn var(&self, name: &str) -> Option<String>;
    /// The user's home directory.
    fn home_dir(&self) -> Option<PathBuf>;
}

/// The real process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemEnv;

impl Env for SystemEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
    fn home_dir(&self) -> Option<PathBuf> {
        dirs::home_dir()
    }
}

/// An in-memory environment: for tests, and for callers that want to pin the environment.
#[derive(Debug, Clone, Default)]
pub struct MapEnv {
    vars: BTreeMap<String, String>,
    home: Option<PathBuf>,
}

impl MapEnv {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn with_var(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }
}

impl Env for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }
    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }
}

/// Everything that can go wrong while loading configuration or choosing a model.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot find the agent directory: {AGENT_DIR_ENV} is not set and there is no home directory")]
    NoHomeDir,

    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{} is not valid JSON: {source}", path.display())]
    InvalidJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    /// The file parses but its content has the wrong shape.
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },

    /// A `!command` / `$VAR` value could not be resolved.
    #[error("{context}: {source}")]
    Value {
        context: String,
        #[source]
        source: ValueError,
    },

    #[error("{message}")]
    NoModel { message: String },

    #[error("model \"{pattern}\" is ambiguous: it matches {}. Use provider/id to pick one.", candidates.join(", "))]
    AmbiguousModel {
        pattern: String,
        candidates: Vec<String>,
    },

    #[error("model \"{pattern}\" not found. Use --list-models to see available models.")]
    ModelNotFound { pattern: String },

    #[error("unknown provider \"{provider}\" (known: {}). Use --list-models to see available models.", known.join(", "))]
    UnknownProvider {
        provider: String,
        known: Vec<String>,
    },

    /// A provider of pi 1.6's catalog whose wire API this pi does not speak yet.
    #[error(
        "provider \"{provider}\" uses the {api} API, which this pi does not speak yet; \
         choose another provider (--list-models shows the ones that work)"
    )]
    UnsupportedProvider { provider: String, api: String },

    #[error("no API key for provider \"{provider}\". {hint}")]
    MissingApiKey { provider: String, hint: String },

    /// A provider whose endpoint names variables (`{CLOUDFLARE_ACCOUNT_ID}`) nobody set.
    #[error(
        "provider \"{provider}\" needs {}: set {} or store {} in {}'s entry's \"env\" object \
         (pi auth login {provider})",
        vars.join(" and "), vars.join(" and "), if vars.len() == 1 { "it" } else { "them" },
        auth_path.display()
    )]
    MissingProviderVars {
        provider: String,
        vars: Vec<String>,
        auth_path: PathBuf,
    },

    /// A hook's value that cannot be resolved in the hook's environment.
    #[error("{context}: {source}")]
    Foreign {
        context: String,
        #[source]
        source: ForeignValueError,
    },

    /// `--api-key` for a provider a hook owns: the user's key is not sent to a server the hook
    /// chose.
    #[error(
        "--api-key is not sent to provider \"{provider}\": hook {hook} defined it (or took it \
         over with a key of its own), so its server is the hook's choice. Use the hook's own \
         key, or grant the hook a variable through `env_passthrough` in its settings entry"
    )]
    KeyForHookProvider { provider: String, hook: String },
}

/// The agent directory: `$PI_CODING_AGENT_DIR` if set (a leading `~/` is expanded), else
/// `~/.pi/agent`.
pub fn agent_dir(env: &dyn Env) -> Result<PathBuf, ConfigError> {
    if let Some(dir) = env.var(AGENT_DIR_ENV).filter(|d| !d.is_empty()) {
        if dir == "~" {
            return env.home_dir().ok_or(ConfigError::NoHomeDir);
        }
        if let Some(rest) = dir.strip_prefix("~/") {
            let home = env.home_dir().ok_or(ConfigError::NoHomeDir)?;
            return Ok(home.join(rest));
        }
        return Ok(PathBuf::from(dir));
    }
    let home = env.home_dir().ok_or(ConfigError::NoHomeDir)?;
    Ok(home.join(".pi").join("agent"))
}

/// `<agent dir>/settings.json`.
pub fn settings_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("settings.json")
}

/// `<agent dir>/models.json`.
pub fn models_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("models.json")
}

/// `<agent dir>/auth.json`.
pub fn auth_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("auth.json")
}

/// Reads and parses a JSON file. A missing file is `Ok(None)`: every config file is optional.
pub(crate) fn read_json_file(path: &Path) -> Result<Option<serde_json::Value>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    // An empty file is what `touch` leaves behind; treat it as "nothing configured".
    if text.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|source| ConfigError::InvalidJson {
            path: path.to_path_buf(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_dir_prefers_env_override() {
        let env = MapEnv::new()
            .with_var(AGENT_DIR_ENV, "/tmp/x")
            .with_home("/home/u");
        assert_eq!(agent_dir(&env).unwrap(), PathBuf::from("/tmp/x"));
    }

    #[test]
    fn agent_dir_expands_tilde_and_defaults_to_home() {
        let env = MapEnv::new()
            .with_var(AGENT_DIR_ENV, "~/cfg")
            .with_home("/home/u");
        assert_eq!(agent_dir(&env).unwrap(), PathBuf::from("/home/u/cfg"));
        let env = MapEnv::new().with_home("/home/u");
        assert_eq!(agent_dir(&env).unwrap(), PathBuf::from("/home/u/.pi/agent"));
        let env = MapEnv::new().with_var(AGENT_DIR_ENV, "");
        assert!(matches!(agent_dir(&env), Err(ConfigError::NoHomeDir)));
    }

    #[test]
    fn read_json_file_missing_and_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        assert!(read_json_file(&p).unwrap().is_none());
        std::fs::write(&p, "{ nope").unwrap();
        let err = read_json_file(&p).unwrap_err();
        assert!(matches!(err, ConfigError::InvalidJson { .. }));
        assert!(err.to_string().contains("x.json"), "{err}");
    }
}
