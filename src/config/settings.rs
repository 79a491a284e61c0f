//! `settings.json`: the global file in the agent directory, deep-merged under the project's
//! `.pi/settings.json` (which the caller passes only once the project is trusted).
//!
//! The merged JSON is kept whole because many keys are read by later subsystems; the keys the
//! core needs now get typed accessors with pi's defaults. A key with the wrong type does not
//! stop the agent: it yields a warning naming the file and the key, and the default is used.
//! The exception is `shellEnvironment`, a security policy: it is read from the user's file
//! only, and a value that cannot be honoured is an error rather than a silent fallback.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::scope::ProjectGrant;
use super::{read_json_file, ConfigError};
use crate::provider::ThinkingLevel;
use crate::setting_types::shell_env::ShellEnvPolicy;
pub use crate::setting_types::QueueMode;

/// `retry` settings with pi's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySettings {
    pub enabled: bool,
    pub max_retries: u32,
    /// First backoff delay; doubled per attempt (2s, 4s, 8s).
    pub base_delay_ms: u64,
    /// `retry.provider.timeoutMs`: per-request timeout, if set.
    pub provider_timeout_ms: Option<u64>,
    /// `retry.provider.maxRetries`: retries inside the provider SDK (pi: 0).
    pub provider_max_retries: u32,
    /// `retry.provider.maxRetryDelayMs`: cap on a server-requested (Retry-After) delay.
    pub max_retry_delay_ms: u64,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            enabled: true,
            max_retries: 3,
            base_delay_ms: 2000,
            provider_timeout_ms: None,
            provider_max_retries: 0,
            max_retry_delay_ms: 60_000,
        }
    }
}

/// `thinkingBudgets`: per-level token budgets overriding the built-in ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThinkingBudgets {
    pub minimal: Option<u32>,
    pub low: Option<u32>,
    pub medium: Option<u32>,
    pub high: Option<u32>,
}

impl ThinkingBudgets {
    /// The budget for `level`: the configured one, else [`ThinkingLevel::budget_tokens`].
    pub fn budget_for(&self, level: ThinkingLevel) -> u32 {
        let configured = match level {
            ThinkingLevel::Off => None,
            ThinkingLevel::Minimal => self.minimal,
            ThinkingLevel::Low => self.low,
            ThinkingLevel::Medium => self.medium,
            ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => self.high,
        };
        configured.unwrap_or_else(|| level.budget_tokens())
    }
}

/// Keys read from the user's settings only: what the model's shell may see is the user's
/// decision, and a project — even a trusted one — must not loosen it, just as it cannot vouch
/// for itself through `defaultProjectTrust`.
/// `cacheWarming` is pi's global setting too: it spends the user's money on refreshes.
const USER_ONLY_KEYS: [(&str, &str); 3] = [
    (
        "shellEnvironment",
        "a project cannot change what the model's shell sees",
    ),
    (
        "cacheWarming",
        "a project cannot spend money on cache refreshes",
    ),
    (
        super::scope::PROJECT_ENV_KEY,
        "a project cannot grant itself your environment variables",
    ),
];

/// `cacheWarming`: when pi keeps a model's prompt cache warm with one-token refreshes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheWarmingMode {
    /// Never.
    Off,
    /// While a run is in progress (a long tool call) only.
    Streaming,
    /// During runs and for up to 30 minutes between them (pi's default).
    #[default]
    Idle,
}

impl CacheWarmingMode {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "off" => Some(Self::Off),
            "streaming" => Some(Self::Streaming),
            "idle" => Some(Self::Idle),
            _ => None,
        }
    }
}

/// Merged settings.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    raw: Value,
    warnings: Vec<String>,
    /// The user's settings file, which [`USER_ONLY_KEYS`] come from.
    user_file: Option<PathBuf>,
    /// One line per user-only key a project set (and that was ignored).
    ignored_project_keys: Vec<String>,
}

impl Settings {
    /// Loads the global file and, if given, the project file over it. Missing files are empty;
    /// invalid JSON, or a file whose top level is not an object, is an error naming the file.
    pub fn load(global_path: &Path, project_path: Option<&Path>) -> Result<Self, ConfigError> {
        let mut merged = Value::Object(Map::new());
        let mut warnings = Vec::new();
        let mut ignored_project_keys = Vec::new();
        for (index, path) in std::iter::once(global_path).chain(project_path).enumerate() {
            let is_project = index > 0;
            let Some(mut value) = read_json_file(path)? else {
                continue;
            };
            if !value.is_object() {
                return Err(ConfigError::Invalid {
                    path: path.to_path_buf(),
                    message: "settings must be a JSON object".to_string(),
                });
            }
            warnings.extend(
                validate(&value)
                    .into_iter()
                    .map(|w| format!("{}: {w}; using the default", path.display())),
            );
            if is_project {
                if let Value::Object(project) = &mut value {
                    for (key, why) in USER_ONLY_KEYS {
                        if project.remove(key).is_some() {
                            ignored_project_keys.push(format!(
                                "{}: \"{key}\" is read from the user's settings only ({}); \
                                 {why}; ignored",
                                path.display(),
                                global_path.display()
                            ));
                        }
                    }
                }
            }
            deep_merge(&mut merged, value);
        }
        Ok(Settings {
            raw: merged,
            warnings,
            user_file: Some(global_path.to_path_buf()),
            ignored_project_keys,
        })
    }

    /// Settings from an in-memory value (no validation warnings are recorded).
    pub fn from_value(raw: Value) -> Self {
        Settings {
            raw,
            ..Settings::default()
        }
    }

    /// User-only keys the project's settings set, which were ignored: one line each, for
    /// stderr.
    pub fn ignored_project_keys(&self) -> &[String] {
        &self.ignored_project_keys
    }

    /// `shellEnvironment` (from the user's settings only). A value that cannot be honoured is
    /// an error naming the file and the key rather than a fallback: it is a security policy.
    pub fn shell_environment(&self) -> Result<ShellEnvPolicy, ConfigError> {
        let Some(v) = self.raw.get("shellEnvironment") else {
            return Ok(ShellEnvPolicy::default());
        };
        ShellEnvPolicy::from_setting(v).map_err(|e| ConfigError::Invalid {
            path: self
                .user_file
                .clone()
                .unwrap_or_else(|| PathBuf::from("settings.json")),
            message: e.to_string(),
        })
    }

    /// What `projectEnv` (the user's settings only) grants the project in `dir`. A value pi
    /// cannot read is an error naming the file and the key; callers grant nothing then.
    pub fn project_grant(&self, dir: &Path) -> Result<ProjectGrant, ConfigError> {
        let file = self
            .user_file
            .clone()
            .unwrap_or_else(|| PathBuf::from("settings.json"));
        ProjectGrant::read(self.raw.get(super::scope::PROJECT_ENV_KEY), dir, &file)
    }

    /// [`project_grant`](Self::project_grant), or nothing granted and the reason (for stderr)
    /// when the setting cannot be read: a grant pi cannot read grants nothing.
    pub fn project_grant_or_none(&self, dir: &Path) -> (ProjectGrant, Option<String>) {
        match self.project_grant(dir) {
            Ok(g) => (g, None),
            Err(e) => {
                let file = self
                    .user_file
                    .clone()
                    .unwrap_or_else(|| PathBuf::from("settings.json"));
                let why = format!("{e}; nothing is granted to the project");
                (ProjectGrant::none(dir, &file), Some(why))
            }
        }
    }

    /// The merged JSON, for keys without a typed accessor.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// A top-level key of the merged JSON.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.raw.get(key)
    }

    /// Problems found while loading (wrong types), one line each, for stderr.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn str_key(&self, key: &str) -> Option<&str> {
        self.raw
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }

    pub fn default_provider(&self) -> Option<&str> {
        self.str_key("defaultProvider")
    }

    pub fn default_model(&self) -> Option<&str> {
        self.str_key("defaultModel")
    }

    /// `defaultThinkingLevel`, if set to a valid level.
    pub fn default_thinking_level(&self) -> Option<ThinkingLevel> {
        self.str_key("defaultThinkingLevel")
            .and_then(ThinkingLevel::parse)
    }

    pub fn shell_path(&self) -> Option<&str> {
        self.str_key("shellPath")
    }

    pub fn shell_command_prefix(&self) -> Option<&str> {
        self.str_key("shellCommandPrefix")
    }

    pub fn steering_mode(&self) -> QueueMode {
        self.str_key("steeringMode")
            .and_then(QueueMode::parse)
            .unwrap_or_default()
    }

    pub fn follow_up_mode(&self) -> QueueMode {
        self.str_key("followUpMode")
            .and_then(QueueMode::parse)
            .unwrap_or_default()
    }

    pub fn retry(&self) -> RetrySettings {
        let d = RetrySettings::default();
        let r = self.raw.get("retry");
        let p = r.and_then(|r| r.get("provider"));
        let u64_at = |v: Option<&Value>, k: &str| v.and_then(|v| v.get(k)).and_then(Value::as_u64);
        RetrySettings {
            enabled: r
                .and_then(|r| r.get("enabled"))
                .and_then(Value::as_bool)
                .unwrap_or(d.enabled),
            max_retries: u64_at(r, "maxRetries")
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(d.max_retries),
            base_delay_ms: u64_at(r, "baseDelayMs").unwrap_or(d.base_delay_ms),
            provider_timeout_ms: u64_at(p, "timeoutMs"),
            provider_max_retries: u64_at(p, "maxRetries")
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(d.provider_max_retries),
            max_retry_delay_ms: u64_at(p, "maxRetryDelayMs").unwrap_or(d.max_retry_delay_ms),
        }
    }

    /// `cacheWarming` (the user's file only), `idle` when unset or not a mode.
    pub fn cache_warming(&self) -> CacheWarmingMode {
        self.str_key("cacheWarming")
            .and_then(CacheWarmingMode::parse)
            .unwrap_or_default()
    }

    pub fn thinking_budgets(&self) -> ThinkingBudgets {
        let b = self.raw.get("thinkingBudgets");
        let get = |k: &str| {
            b.and_then(|b| b.get(k))
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
        };
        ThinkingBudgets {
            minimal: get("minimal"),
            low: get("low"),
            medium: get("medium"),
            high: get("high"),
        }
    }
}

/// Merges `over` into `base`: objects merge key by key, recursively; anything else (arrays,
/// scalars, null) in `over` replaces what `base` had.
pub fn deep_merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(existing) => deep_merge(existing, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

/// Type checks for the keys with typed accessors, so a typo does not silently fall back.
fn validate(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut require = |path: &str, val: Option<&Value>, ok: fn(&Value) -> bool, what: &str| {
        if let Some(val) = val {
            if !ok(val) {
                out.push(format!("\"{path}\" must be {what}, got {val}"));
            }
        }
    };
    let is_str: fn(&Value) -> bool = Value::is_string;
    let is_u32: fn(&Value) -> bool = |v| v.as_u64().is_some_and(|n| n <= u64::from(u32::MAX));
    let is_u64: fn(&Value) -> bool = |v| v.as_u64().is_some();
    let is_obj: fn(&Value) -> bool = Value::is_object;
    for key in [
        "defaultProvider",
        "defaultModel",
        "shellPath",
        "shellCommandPrefix",
    ] {
        require(key, v.get(key), is_str, "a string");
    }
    require(
        "defaultThinkingLevel",
        v.get("defaultThinkingLevel"),
        |v| v.as_str().and_then(ThinkingLevel::parse).is_some(),
        "one of off, minimal, low, medium, high, xhigh, max",
    );
    for key in ["steeringMode", "followUpMode"] {
        require(
            key,
            v.get(key),
            |v| v.as_str().and_then(QueueMode::parse).is_some(),
            "\"one-at-a-time\" or \"all\"",
        );
    }
    require(
        "cacheWarming",
        v.get("cacheWarming"),
        |v| v.as_str().and_then(CacheWarmingMode::parse).is_some(),
        "\"off\", \"streaming\" or \"idle\"",
    );
    let retry = v.get("retry");
    require("retry", retry, is_obj, "an object");
    require(
        "retry.enabled",
        retry.and_then(|r| r.get("enabled")),
        Value::is_boolean,
        "true or false",
    );
    require(
        "retry.maxRetries",
        retry.and_then(|r| r.get("maxRetries")),
        is_u32,
        "a non-negative integer",
    );
    require(
        "retry.baseDelayMs",
        retry.and_then(|r| r.get("baseDelayMs")),
        is_u64,
        "a non-negative integer",
    );
    let provider = retry.and_then(|r| r.get("provider"));
    require("retry.provider", provider, is_obj, "an object");
    for (key, check) in [
        ("timeoutMs", is_u64),
        ("maxRetries", is_u32),
        ("maxRetryDelayMs", is_u64),
    ] {
        require(
            &format!("retry.provider.{key}"),
            provider.and_then(|p| p.get(key)),
            check,
            "a non-negative integer",
        );
    }
    let budgets = v.get("thinkingBudgets");
    require("thinkingBudgets", budgets, is_obj, "an object");
    for key in ["minimal", "low", "medium", "high"] {
        require(
            &format!("thinkingBudgets.{key}"),
            budgets.and_then(|b| b.get(key)),
            is_u32,
            "a non-negative integer",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setting_types::shell_env::Inherit;
    use serde_json::json;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn cache_warming_is_idle_by_default_and_read_from_the_users_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let none = Settings::load(&dir.path().join("settings.json"), None).unwrap();
        assert_eq!(none.cache_warming(), CacheWarmingMode::Idle);
        let user = write(
            dir.path(),
            "settings.json",
            r#"{"cacheWarming":"streaming"}"#,
        );
        let project = write(dir.path(), "project.json", r#"{"cacheWarming":"off"}"#);
        let s = Settings::load(&user, Some(&project)).unwrap();
        assert_eq!(s.cache_warming(), CacheWarmingMode::Streaming);
        assert!(s.ignored_project_keys()[0].contains("\"cacheWarming\""));
        let bad = write(dir.path(), "bad.json", r#"{"cacheWarming":"always"}"#);
        let s = Settings::load(&bad, None).unwrap();
        assert_eq!(s.cache_warming(), CacheWarmingMode::Idle);
        assert!(
            s.warnings()[0].contains("\"cacheWarming\" must be"),
            "{:?}",
            s.warnings()
        );
    }

    #[test]
    fn missing_files_give_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let s = Settings::load(&dir.path().join("settings.json"), None).unwrap();
        assert_eq!(s.retry(), RetrySettings::default());
        let r = s.retry();
        assert!(r.enabled);
        assert_eq!(
            (r.max_retries, r.base_delay_ms, r.max_retry_delay_ms),
            (3, 2000, 60_000)
        );
        assert_eq!(s.steering_mode(), QueueMode::OneAtATime);
        assert_eq!(s.follow_up_mode(), QueueMode::OneAtATime);
        assert_eq!(s.default_provider(), None);
        assert_eq!(s.default_thinking_level(), None);
        assert_eq!(s.thinking_budgets().budget_for(ThinkingLevel::Low), 2048);
        assert!(s.warnings().is_empty());
    }

    #[test]
    fn project_deep_merges_over_global() {
        let dir = tempfile::tempdir().unwrap();
        let g = write(
            dir.path(),
            "g.json",
            r#"{"defaultProvider":"anthropic","defaultModel":"claude-opus-4-8",
                "retry":{"maxRetries":5,"provider":{"maxRetryDelayMs":1000}},
                "thinkingBudgets":{"low":100,"high":9000},
                "extensions":["a","b"],"other":{"keep":1}}"#,
        );
        let p = write(
            dir.path(),
            "p.json",
            r#"{"defaultModel":"claude-sonnet-4-5","retry":{"enabled":false},
                "thinkingBudgets":{"low":200},"steeringMode":"all",
                "extensions":["c"],"shellPath":"/bin/zsh","defaultThinkingLevel":"high"}"#,
        );
        let s = Settings::load(&g, Some(&p)).unwrap();
        assert_eq!(s.default_provider(), Some("anthropic"));
        assert_eq!(s.default_model(), Some("claude-sonnet-4-5"));
        assert_eq!(s.default_thinking_level(), Some(ThinkingLevel::High));
        let r = s.retry();
        assert!(!r.enabled);
        assert_eq!(r.max_retries, 5);
        assert_eq!(r.base_delay_ms, 2000);
        assert_eq!(r.max_retry_delay_ms, 1000);
        let b = s.thinking_budgets();
        assert_eq!((b.low, b.high, b.medium), (Some(200), Some(9000), None));
        assert_eq!(b.budget_for(ThinkingLevel::Medium), 8192);
        assert_eq!(s.steering_mode(), QueueMode::All);
        assert_eq!(s.shell_path(), Some("/bin/zsh"));
        // Arrays are replaced, not concatenated; untouched objects survive.
        assert_eq!(s.get("extensions"), Some(&json!(["c"])));
        assert_eq!(s.raw()["other"]["keep"], 1);
    }

    #[test]
    fn invalid_json_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let g = write(dir.path(), "settings.json", "{\"retry\": }");
        let err = Settings::load(&g, None).unwrap_err();
        assert!(matches!(err, ConfigError::InvalidJson { .. }));
        assert!(err.to_string().contains("settings.json"), "{err}");

        let g = write(dir.path(), "arr.json", "[1,2]");
        let err = Settings::load(&g, None).unwrap_err();
        assert!(err.to_string().contains("arr.json"), "{err}");
    }

    #[test]
    fn wrong_types_warn_and_fall_back() {
        let dir = tempfile::tempdir().unwrap();
        let g = write(
            dir.path(),
            "settings.json",
            r#"{"retry":{"maxRetries":"three"},"followUpMode":"some","defaultThinkingLevel":"huge"}"#,
        );
        let s = Settings::load(&g, None).unwrap();
        assert_eq!(s.retry().max_retries, 3);
        assert_eq!(s.follow_up_mode(), QueueMode::OneAtATime);
        assert_eq!(s.default_thinking_level(), None);
        let w = s.warnings().join("\n");
        assert_eq!(s.warnings().len(), 3, "{w}");
        assert!(
            w.contains("settings.json") && w.contains("retry.maxRetries"),
            "{w}"
        );
    }

    #[test]
    fn shell_environment_comes_from_the_user_only() {
        let dir = tempfile::tempdir().unwrap();
        let g = write(
            dir.path(),
            "settings.json",
            r#"{"shellEnvironment":{"inherit":"core","exclude":["A*"]}}"#,
        );
        let p = write(
            dir.path(),
            "project.json",
            r#"{"shellEnvironment":{"inherit":"all","ignoreDefaultExcludes":true},"shellPath":"/bin/sh"}"#,
        );
        let s = Settings::load(&g, Some(&p)).unwrap();
        let policy = s.shell_environment().unwrap();
        assert_eq!(policy.inherit, Inherit::Core);
        assert!(!policy.ignore_default_excludes);
        assert_eq!(policy.exclude[0].as_str(), "A*");
        assert_eq!(
            s.shell_path(),
            Some("/bin/sh"),
            "other project keys still apply"
        );
        let notes = s.ignored_project_keys().join("\n");
        assert!(
            notes.contains("project.json") && notes.contains("\"shellEnvironment\""),
            "{notes}"
        );

        // Without a user setting a project still sets nothing.
        let empty = write(dir.path(), "empty.json", "{}");
        let s = Settings::load(&empty, Some(&p)).unwrap();
        assert!(s.shell_environment().unwrap().exclude.is_empty());
        assert_eq!(s.shell_environment().unwrap().inherit, Inherit::All);
        assert!(!s.shell_environment().unwrap().ignore_default_excludes);
    }

    #[test]
    fn bad_shell_environment_is_an_error_naming_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let g = write(
            dir.path(),
            "settings.json",
            r#"{"shellEnvironment":{"inherit":"most"}}"#,
        );
        let err = Settings::load(&g, None)
            .unwrap()
            .shell_environment()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("settings.json") && err.contains("\"shellEnvironment.inherit\""),
            "{err}"
        );
    }

    #[test]
    fn deep_merge_replaces_non_objects() {
        let mut a = json!({"a":{"b":1,"c":[1]},"d":1});
        deep_merge(&mut a, json!({"a":{"c":[2],"e":null},"d":{"x":1}}));
        assert_eq!(a, json!({"a":{"b":1,"c":[2],"e":null},"d":{"x":1}}));
    }
}
