//! The `shellEnvironment` setting (SPEC 4.9): which of pi's variables a shell the model runs
//! inherits, as Codex's `shell_environment_policy` says it. Only the setting's type and its
//! parsing live here, beside the other setting types, so settings need not know the tools;
//! `tools::shell_env` applies the policy to an environment.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::OnceLock;

use globset::{Glob, GlobBuilder, GlobMatcher};
use serde_json::{Map, Value};

/// Name patterns every shell drops unless `ignore_default_excludes` is set.
pub const DEFAULT_EXCLUDES: [&str; 4] = ["*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*"];

/// What `inherit: core` keeps (Codex's list).
pub const CORE_VARS: [&str; 9] = [
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP",
];

/// Where the shell's variables start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Inherit {
    /// Everything pi has (then filtered).
    #[default]
    All,
    /// Only [`CORE_VARS`].
    Core,
    /// Nothing: only `set` and pi's own variables.
    None,
}

/// A case-insensitive glob over variable names (`*`, `?`, `[…]`, `{a,b}`).
///
/// Compiling a glob builds a regular expression, which costs more than everything else `pi`
/// does before its first model request; and every shell pi starts filters its whole
/// environment through the default excludes. So a `*WORD*` pattern (the default excludes are
/// all of that form) matches an ASCII name by a substring test, and the regular expression is
/// built only for the names and patterns that need it, on first use.
#[derive(Debug, Clone)]
pub struct NamePattern {
    source: String,
    glob: Glob,
    /// `WORD` upper-cased, for a `*WORD*` pattern whose `WORD` is ASCII without glob syntax.
    contains: Option<Vec<u8>>,
    matcher: OnceLock<GlobMatcher>,
}

impl NamePattern {
    pub fn new(pattern: &str) -> Result<Self, globset::Error> {
        let glob = GlobBuilder::new(pattern)
            .case_insensitive(true)
            .literal_separator(false)
            .build()?;
        let contains = pattern
            .strip_prefix('*')
            .and_then(|p| p.strip_suffix('*'))
            .filter(|w| {
                !w.is_empty()
                    && w.bytes().all(|b| {
                        b.is_ascii() && !b.is_ascii_control() && !b"*?[]{}\\,!".contains(&b)
                    })
            })
            .map(|w| w.to_ascii_uppercase().into_bytes());
        Ok(NamePattern {
            source: pattern.to_string(),
            glob,
            contains,
            matcher: OnceLock::new(),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    pub fn matches(&self, name: &OsStr) -> bool {
        let bytes = name.as_bytes();
        // Only an all-ASCII name takes the substring test; any other goes through the glob
        // itself, so the shortcut never has to agree with its case folding beyond ASCII.
        if let (Some(word), true) = (&self.contains, bytes.is_ascii()) {
            return bytes
                .windows(word.len())
                .any(|w| w.eq_ignore_ascii_case(word));
        }
        self.matcher
            .get_or_init(|| self.glob.compile_matcher())
            .is_match(std::path::Path::new(name))
    }
}

/// The `shellEnvironment` setting.
#[derive(Debug, Clone, Default)]
pub struct ShellEnvPolicy {
    pub inherit: Inherit,
    pub ignore_default_excludes: bool,
    pub exclude: Vec<NamePattern>,
    /// Empty means "no include filter".
    pub include_only: Vec<NamePattern>,
    pub set: BTreeMap<String, String>,
}

/// A `shellEnvironment` value that cannot be honoured. `key` is the setting's path as the user
/// wrote it (`shellEnvironment.includeOnly`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("\"{key}\" {problem}")]
pub struct PolicyError {
    pub key: String,
    pub problem: String,
}

const SETTING: &str = "shellEnvironment";
const KNOWN_KEYS: &str =
    "inherit, exclude, include_only (includeOnly), set, ignore_default_excludes (ignoreDefaultExcludes)";

fn problem(key: &str, problem: String) -> PolicyError {
    PolicyError {
        key: if key.is_empty() {
            SETTING.to_string()
        } else {
            format!("{SETTING}.{key}")
        },
        problem,
    }
}

fn patterns(key: &str, v: &Value) -> Result<Vec<NamePattern>, PolicyError> {
    let not_list = || problem(key, format!("must be an array of name patterns, got {v}"));
    let list = v.as_array().ok_or_else(not_list)?;
    list.iter()
        .map(|p| {
            let s = p.as_str().ok_or_else(not_list)?;
            NamePattern::new(s).map_err(|e| problem(key, format!("has an invalid pattern: {e}")))
        })
        .collect()
}

fn set_vars(v: &Value) -> Result<BTreeMap<String, String>, PolicyError> {
    let map = v.as_object().ok_or_else(|| {
        problem(
            "set",
            format!("must be an object of variable names to string values, got {v}"),
        )
    })?;
    let mut out = BTreeMap::new();
    for (name, value) in map {
        let key = format!("set.{name}");
        if name.is_empty() || name.contains(['=', '\0']) {
            return Err(problem(
                &key,
                "is not a variable name (empty, or contains '=' or NUL)".to_string(),
            ));
        }
        let value = value
            .as_str()
            .ok_or_else(|| problem(&key, format!("must be a string, got {value}")))?;
        if value.contains('\0') {
            return Err(problem(&key, "must not contain a NUL byte".to_string()));
        }
        out.insert(name.clone(), value.to_string());
    }
    Ok(out)
}

impl ShellEnvPolicy {
    /// Parses the setting. Unknown keys and wrong types are errors naming the key: a typo in a
    /// security policy must not quietly fall back to something the user did not ask for.
    /// `null` for a key means "not set".
    pub fn from_setting(v: &Value) -> Result<Self, PolicyError> {
        let obj: &Map<String, Value> = v
            .as_object()
            .ok_or_else(|| problem("", format!("must be an object with {KNOWN_KEYS}, got {v}")))?;
        let mut policy = ShellEnvPolicy::default();
        let mut include_key: Option<&str> = None;
        for (key, value) in obj {
            if value.is_null() {
                continue;
            }
            match key.as_str() {
                "inherit" => {
                    policy.inherit = match value.as_str() {
                        Some("all") => Inherit::All,
                        Some("core") => Inherit::Core,
                        Some("none") => Inherit::None,
                        _ => {
                            return Err(problem(
                                key,
                                format!("must be \"all\", \"core\" or \"none\", got {value}"),
                            ))
                        }
                    }
                }
                "exclude" => policy.exclude = patterns(key, value)?,
                "include_only" | "includeOnly" => {
                    if let Some(other) = include_key {
                        return Err(problem(
                            key,
                            format!("and \"{other}\" are the same setting; use one"),
                        ));
                    }
                    include_key = Some(key);
                    policy.include_only = patterns(key, value)?;
                }
                "set" => policy.set = set_vars(value)?,
                "ignore_default_excludes" | "ignoreDefaultExcludes" => {
                    policy.ignore_default_excludes = value.as_bool().ok_or_else(|| {
                        problem(key, format!("must be true or false, got {value}"))
                    })?;
                }
                _ => {
                    return Err(problem(
                        key,
                        format!("is not a {SETTING} setting (known: {KNOWN_KEYS})"),
                    ))
                }
            }
        }
        Ok(policy)
    }
}
