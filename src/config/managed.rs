//! The administrator's managed policy: `/etc/pi/managed-settings.json` (SPEC 4.5). It names
//! hooks every `pi` on the machine must run, whether other hooks may run at all
//! (`allowManagedHooksOnly`), and what happens when a required hook is not running
//! (`requiredHookFailure`).
//!
//! Unlike user settings, nothing here degrades quietly: a missing file means "no policy", but
//! an unreadable, empty, malformed or misspelt file is an error that stops start-up, because
//! an administrator's restriction must never vanish because of a typo or a truncated deploy.
//!
//! `PI_MANAGED_SETTINGS` relocates the file for tests and for machines without a system
//! policy. It is ignored while the system file exists: an environment variable is under the
//! user's control, and the user must not be able to point `pi` away from the administrator's
//! policy.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::Env;

/// Where administrators install the policy.
pub const MANAGED_SETTINGS_PATH: &str = "/etc/pi/managed-settings.json";
/// Relocates the policy file while no system policy exists (tests).
pub const MANAGED_SETTINGS_ENV: &str = "PI_MANAGED_SETTINGS";

/// What a required (managed) hook that is not running does to the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum RequiredHookFailure {
    /// `"block-tools"`: `pi` keeps running but refuses every tool call, saying which required
    /// hook is down and why.
    #[default]
    #[serde(rename = "block-tools")]
    BlockTools,
    /// `"exit"`: a required hook that cannot start makes start-up fail (exit code 1). Later
    /// outages (a crash, quarantine) block tools as with `block-tools`.
    #[serde(rename = "exit")]
    Exit,
}

impl RequiredHookFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            RequiredHookFailure::BlockTools => "block-tools",
            RequiredHookFailure::Exit => "exit",
        }
    }
}

/// The loaded policy. [`ManagedPolicy::default`] is "no policy".
#[derive(Debug, Clone, Default)]
pub struct ManagedPolicy {
    /// The file the policy came from; `None` when there is none.
    pub path: Option<PathBuf>,
    /// The `hooks` list, in the settings-entry format (`hooks::sources::from_settings`).
    pub hooks: Option<Value>,
    /// Claude Code command hooks (`commandHooks`: a Claude Code `hooks` object), required like
    /// the managed `hooks`.
    pub command_hooks: Option<Value>,
    /// Ignore every hook that is not managed.
    pub allow_managed_hooks_only: bool,
    pub required_hook_failure: RequiredHookFailure,
    /// `commandHooksStrictExit`: every Claude Code PreToolUse hook's exit other than 0 and 2
    /// is a failure, whatever the user's settings say.
    pub command_hooks_strict_exit: bool,
}

/// Why the policy could not be loaded. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum ManagedError {
    #[error("cannot read the managed policy {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the managed policy {} is empty; remove it or give it a JSON object", path.display())]
    Empty { path: PathBuf },
    #[error("the managed policy {} is not valid JSON: {source}", path.display())]
    InvalidJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("the managed policy {} is invalid: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

/// The file's shape. Unknown keys are errors: a misspelt `allowManagedHooksOnly` must not
/// silently allow every hook.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct File {
    #[serde(default, rename = "$schema")]
    _schema: Option<String>,
    #[serde(default)]
    hooks: Option<Value>,
    #[serde(default)]
    command_hooks: Option<Value>,
    #[serde(default)]
    allow_managed_hooks_only: bool,
    #[serde(default)]
    required_hook_failure: RequiredHookFailure,
    #[serde(default)]
    command_hooks_strict_exit: bool,
}

impl ManagedPolicy {
    /// Whether any policy file was found.
    pub fn is_present(&self) -> bool {
        self.path.is_some()
    }

    /// The policy for this machine: the system file if it exists, else `$PI_MANAGED_SETTINGS`
    /// if set, else none.
    pub fn load(env: &dyn Env) -> Result<ManagedPolicy, ManagedError> {
        match Self::located(env) {
            Some(path) => Self::load_from(&path),
            None => Ok(ManagedPolicy::default()),
        }
    }

    /// Where the policy for this machine would be read from, whether or not the file exists
    /// (for noticing that it appeared, changed or went away).
    pub fn located(env: &dyn Env) -> Option<PathBuf> {
        locate(env, Path::new(MANAGED_SETTINGS_PATH))
    }

    /// Loads one file. A missing file is no policy; anything else that is wrong is an error.
    pub fn load_from(path: &Path) -> Result<ManagedPolicy, ManagedError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ManagedPolicy::default())
            }
            Err(source) => {
                return Err(ManagedError::Io {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        Self::parse(&text, path)
    }

    /// Parses the file's text; `path` is where it came from (for messages, and as the base of
    /// relative hook paths).
    pub fn parse(text: &str, path: &Path) -> Result<ManagedPolicy, ManagedError> {
        if text.trim().is_empty() {
            return Err(ManagedError::Empty {
                path: path.to_path_buf(),
            });
        }
        let value: Value =
            serde_json::from_str(text).map_err(|source| ManagedError::InvalidJson {
                path: path.to_path_buf(),
                source,
            })?;
        let invalid = |message: String| ManagedError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        if !value.is_object() {
            return Err(invalid("the top level must be a JSON object".into()));
        }
        let file: File = serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
        if let Some(h) = &file.hooks {
            if !h.is_array() {
                return Err(invalid(
                    "`hooks` must be a list of commands or hook entries".into(),
                ));
            }
        }
        Ok(ManagedPolicy {
            path: Some(path.to_path_buf()),
            hooks: file.hooks,
            command_hooks: file.command_hooks,
            allow_managed_hooks_only: file.allow_managed_hooks_only,
            required_hook_failure: file.required_hook_failure,
            command_hooks_strict_exit: file.command_hooks_strict_exit,
        })
    }

    /// The directory relative hook commands resolve against: the policy file's own, never the
    /// project's (a repository must not be able to supply a "managed" binary).
    pub fn base_dir(&self) -> PathBuf {
        self.path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"))
    }
}

/// Which file to read: `system` when it exists (or exists but cannot be inspected), else the
/// non-empty `$PI_MANAGED_SETTINGS`, else none.
fn locate(env: &dyn Env, system: &Path) -> Option<PathBuf> {
    // `symlink_metadata` succeeding, or failing for any reason but absence, means a system
    // policy is (or may be) there; reading it will then report what is wrong.
    match std::fs::symlink_metadata(system) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => env
            .var(MANAGED_SETTINGS_ENV)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from),
        _ => Some(system.to_path_buf()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MapEnv;

    fn parse(text: &str) -> Result<ManagedPolicy, ManagedError> {
        ManagedPolicy::parse(text, Path::new("/etc/pi/managed-settings.json"))
    }

    #[test]
    fn full_policy_parses() {
        let p = parse(
            r#"{"hooks": ["/opt/acme/policy", {"command": "/opt/acme/audit", "sha256": "ab"}],
                "allowManagedHooksOnly": true, "requiredHookFailure": "exit"}"#,
        )
        .unwrap();
        assert!(p.is_present());
        assert!(p.allow_managed_hooks_only);
        assert_eq!(p.required_hook_failure, RequiredHookFailure::Exit);
        assert_eq!(
            p.hooks.as_ref().and_then(Value::as_array).map(Vec::len),
            Some(2)
        );
        assert_eq!(p.base_dir(), PathBuf::from("/etc/pi"));
    }

    #[test]
    fn defaults_are_block_tools_and_other_hooks_allowed() {
        let p = parse("{}").unwrap();
        assert!(p.is_present());
        assert!(p.hooks.is_none());
        assert!(!p.allow_managed_hooks_only);
        assert_eq!(p.required_hook_failure, RequiredHookFailure::BlockTools);
        assert_eq!(
            parse(r#"{"requiredHookFailure": "block-tools"}"#)
                .unwrap()
                .required_hook_failure,
            RequiredHookFailure::BlockTools
        );
        assert!(!ManagedPolicy::default().is_present());
    }

    #[test]
    fn every_malformed_policy_is_an_error_naming_the_file() {
        let cases = [
            ("", "is empty"),
            ("  \n", "is empty"),
            ("{ nope", "not valid JSON"),
            ("[]", "top level"),
            (r#"{"hooks": "/opt/policy"}"#, "`hooks` must be a list"),
            (r#"{"allowManagedHooksOnly": "yes"}"#, "invalid type"),
            (r#"{"requiredHookFailure": "crash"}"#, "unknown variant"),
            // A typo must not quietly drop the restriction.
            (r#"{"allowManagedHookOnly": true}"#, "unknown field"),
        ];
        for (text, needle) in cases {
            let e = parse(text).expect_err(text).to_string();
            assert!(e.contains("/etc/pi/managed-settings.json"), "{text}: {e}");
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn a_missing_file_is_no_policy_and_an_unreadable_one_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let p = ManagedPolicy::load_from(&d.path().join("none.json")).unwrap();
        assert!(!p.is_present());
        // A directory where the file should be cannot be read.
        let e = ManagedPolicy::load_from(d.path()).unwrap_err();
        assert!(matches!(e, ManagedError::Io { .. }), "{e}");
    }

    #[test]
    fn the_env_override_applies_only_without_a_system_policy() {
        let d = tempfile::tempdir().unwrap();
        let system = d.path().join("system.json");
        let env = MapEnv::new().with_var(MANAGED_SETTINGS_ENV, "/tmp/test-policy.json");
        assert_eq!(
            locate(&env, &system),
            Some(PathBuf::from("/tmp/test-policy.json"))
        );
        assert_eq!(locate(&MapEnv::new(), &system), None);
        let empty = MapEnv::new().with_var(MANAGED_SETTINGS_ENV, "");
        assert_eq!(locate(&empty, &system), None);
        std::fs::write(&system, "{}").unwrap();
        assert_eq!(locate(&env, &system), Some(system.clone()));
    }

    #[test]
    fn the_documented_example_parses() {
        let doc = include_str!("../../hook-protocol.md");
        let marker = "<!-- example: managed-settings -->";
        let start = doc
            .find(marker)
            .expect("hook-protocol.md has the managed example");
        let body = doc[start + marker.len()..]
            .split("```")
            .nth(1)
            .expect("a fenced block follows the marker");
        let p = parse(body).unwrap_or_else(|e| panic!("{e}"));
        assert!(p.hooks.is_some());
    }
}
