//! What a value written by someone other than the user may read. The user's and the
//! administrator's own files (models.json, auth.json, `~/.pi/agent/mcp.json`) resolve `$VAR`
//! in pi's environment and run `!command`s: they are the user's credential helpers. A hook's
//! registrations (`provider.register`, `mcp.register`) and a trusted project's files do
//! neither: a hook's values resolve in the environment the hook itself was started with (what
//! its settings entry grants it), a project's in the few variables every hook gets plus what
//! the user's settings grant that project (`projectEnv`). So nothing a hook or a project
//! registers can obtain a secret it could not already read, and none runs a command as pi.
//!
//! [`ForeignEnv`] is such an environment, kept with what it was granted to, so a refusal says
//! exactly how the user grants the variable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::value::{referenced_vars, resolve_value};
use super::{ConfigError, Env};

/// The variables of pi's environment a project's files may always read: the ones every hook
/// is started with (`hooks::process::BASE_ENV`), none of them a secret.
pub const PROJECT_BASE_VARS: &[&str] = &["PATH", "HOME", "USER", "LANG", "TERM", "TMPDIR", "SHELL"];

/// The user-settings key that grants projects variables of pi's environment.
pub const PROJECT_ENV_KEY: &str = "projectEnv";

/// Who a [`ForeignEnv`] belongs to: what a refusal names and tells the user to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grantee {
    /// A hook, by the name its settings entry gives it.
    Hook(String),
    /// A trusted project, and the user settings file that grants it variables.
    Project { dir: PathBuf, settings: PathBuf },
}

/// Why a foreign value cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForeignValueError {
    #[error(
        "a value from hook {hook} cannot run a command (`!…`): only your own files \
         (models.json, auth.json, ~/.pi/agent/mcp.json) may; send the value itself, or `$NAME` \
         of a variable in the hook's own environment"
    )]
    HookCommand { hook: String },
    #[error(
        "`{name}` is not in hook {hook}'s environment: pi reads a hook's values from the \
         environment the hook was started with, never from its own; to grant it, add \
         \"{name}\" to `env_passthrough` in the hook's entry of your settings.json"
    )]
    HookVariable { hook: String, name: String },
    #[error(
        "a project's file cannot run a command (`!…`): only your own files (models.json, \
         auth.json, ~/.pi/agent/mcp.json) may"
    )]
    ProjectCommand,
    #[error(
        "`{name}` is not granted to the project {}: a project's files may read only {} and \
         what your settings grant it; to grant it, add \"{name}\" to `{PROJECT_ENV_KEY}` \
         {{\"{}\": [\"{name}\"]}} in {}",
        dir.display(),
        PROJECT_BASE_VARS.join(" "),
        dir.display(),
        settings.display()
    )]
    ProjectVariable {
        name: String,
        dir: PathBuf,
        settings: PathBuf,
    },
}

/// The environment a hook's or a project's values resolve in. Its values are secrets: `Debug`
/// shows the names only.
#[derive(Clone, PartialEq, Eq)]
pub struct ForeignEnv {
    grantee: Grantee,
    vars: BTreeMap<String, String>,
}

impl std::fmt::Debug for ForeignEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForeignEnv")
            .field("grantee", &self.grantee)
            .field("names", &self.vars.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Env for ForeignEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }
    fn home_dir(&self) -> Option<PathBuf> {
        None
    }
}

impl ForeignEnv {
    /// A hook's environment: exactly the variables it was started with.
    pub fn hook(name: &str, vars: impl IntoIterator<Item = (String, String)>) -> Self {
        ForeignEnv {
            grantee: Grantee::Hook(name.to_string()),
            vars: vars.into_iter().collect(),
        }
    }

    /// A project's environment: [`PROJECT_BASE_VARS`] and the `granted` names, from `parent`.
    pub fn project(grant: &ProjectGrant, parent: &dyn Env) -> Self {
        let names = PROJECT_BASE_VARS
            .iter()
            .copied()
            .chain(grant.names.iter().map(String::as_str));
        ForeignEnv {
            grantee: Grantee::Project {
                dir: grant.dir.clone(),
                settings: grant.settings.clone(),
            },
            vars: names
                .filter_map(|n| parent.var(n).map(|v| (n.to_string(), v)))
                .collect(),
        }
    }

    pub fn grantee(&self) -> &Grantee {
        &self.grantee
    }

    /// Whether `raw` can be resolved here, without resolving it: not a command, and every
    /// variable it names is present.
    pub fn check(&self, raw: &str) -> Result<(), ForeignValueError> {
        if raw.starts_with('!') {
            return Err(match &self.grantee {
                Grantee::Hook(hook) => ForeignValueError::HookCommand { hook: hook.clone() },
                Grantee::Project { .. } => ForeignValueError::ProjectCommand,
            });
        }
        match referenced_vars(raw)
            .into_iter()
            .find(|n| !self.vars.contains_key(n))
        {
            None => Ok(()),
            Some(name) => Err(match &self.grantee {
                Grantee::Hook(hook) => ForeignValueError::HookVariable {
                    hook: hook.clone(),
                    name,
                },
                Grantee::Project { dir, settings } => ForeignValueError::ProjectVariable {
                    name,
                    dir: dir.clone(),
                    settings: settings.clone(),
                },
            }),
        }
    }

    /// `raw` resolved here ([`check`](Self::check) first: nothing is ever run).
    pub fn resolve(&self, raw: &str) -> Result<String, ForeignValueError> {
        self.check(raw)?;
        // Checked: no command, every variable present, so this only interpolates.
        Ok(resolve_value(raw, self).ok().flatten().unwrap_or_default())
    }
}

/// What the user's settings grant one project (`projectEnv`): the names, and where that is
/// written (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectGrant {
    pub dir: PathBuf,
    pub settings: PathBuf,
    pub names: Vec<String>,
}

impl ProjectGrant {
    /// Nothing granted to `dir`.
    pub fn none(dir: &Path, settings: &Path) -> Self {
        ProjectGrant {
            dir: dir.to_path_buf(),
            settings: settings.to_path_buf(),
            names: Vec::new(),
        }
    }

    /// Whether `name` may be read by the project: granted, or one of [`PROJECT_BASE_VARS`].
    pub fn allows(&self, name: &str) -> bool {
        PROJECT_BASE_VARS.contains(&name) || self.names.iter().any(|n| n == name)
    }

    /// The grant of `projectEnv` (the user's settings only) to the project in `dir`: the
    /// names listed under `"*"` (every trusted project) and under `dir` or any directory
    /// above it, which must be absolute. A value of the wrong shape is an error naming the
    /// key: a grant pi cannot read grants nothing.
    pub fn read(raw: Option<&Value>, dir: &Path, settings: &Path) -> Result<Self, ConfigError> {
        let mut grant = ProjectGrant::none(dir, settings);
        let Some(raw) = raw else {
            return Ok(grant);
        };
        let invalid = |message: String| ConfigError::Invalid {
            path: settings.to_path_buf(),
            message,
        };
        let Value::Object(map) = raw else {
            return Err(invalid(format!(
                "\"{PROJECT_ENV_KEY}\" must be an object of project directories (or \"*\") to \
                 lists of variable names, got {raw}"
            )));
        };
        for (key, names) in map {
            let applies = key == "*" || {
                let scope = Path::new(key);
                if !scope.is_absolute() {
                    return Err(invalid(format!(
                        "\"{PROJECT_ENV_KEY}\": \"{key}\" must be an absolute directory or \"*\""
                    )));
                }
                dir.starts_with(scope)
            };
            let list = names.as_array().ok_or_else(|| {
                invalid(format!(
                    "\"{PROJECT_ENV_KEY}.{key}\" must be a list of variable names, got {names}"
                ))
            })?;
            for n in list {
                let name = n.as_str().filter(|s| is_var_name(s)).ok_or_else(|| {
                    invalid(format!(
                        "\"{PROJECT_ENV_KEY}.{key}\": {n} is not a variable name"
                    ))
                })?;
                if applies && !grant.names.iter().any(|g| g == name) {
                    grant.names.push(name.to_string());
                }
            }
        }
        Ok(grant)
    }
}

fn is_var_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MapEnv;
    use serde_json::json;

    fn hook_env() -> ForeignEnv {
        ForeignEnv::hook("h", [("TEAM".to_string(), "t".to_string())])
    }

    #[test]
    fn a_hooks_values_resolve_in_its_own_environment_only_and_never_run() {
        let env = hook_env();
        assert_eq!(env.resolve("Bearer ${TEAM}").unwrap(), "Bearer t");
        assert_eq!(env.resolve("literal $$X").unwrap(), "literal $X");
        let e = env.resolve("$OPENAI_API_KEY").unwrap_err();
        assert!(
            e.to_string().contains("OPENAI_API_KEY") && e.to_string().contains("env_passthrough"),
            "{e}"
        );
        let e = env.check("!cat ~/.ssh/id_rsa").unwrap_err();
        assert!(matches!(e, ForeignValueError::HookCommand { .. }), "{e}");
        assert!(!format!("{env:?}").contains("\"t\""), "{env:?}");
    }

    #[test]
    fn a_project_reads_the_base_variables_and_what_is_granted() {
        let parent = MapEnv::new()
            .with_var("HOME", "/home/u")
            .with_var("GITHUB_TOKEN", "ghp")
            .with_var("OTHER", "o");
        let grant = ProjectGrant {
            dir: "/p".into(),
            settings: "/s.json".into(),
            names: vec!["GITHUB_TOKEN".into()],
        };
        let env = ForeignEnv::project(&grant, &parent);
        assert_eq!(
            env.resolve("${HOME}/x:$GITHUB_TOKEN").unwrap(),
            "/home/u/x:ghp"
        );
        let e = env.check("$OTHER").unwrap_err().to_string();
        assert!(
            e.contains("`OTHER`") && e.contains("projectEnv") && e.contains("/s.json"),
            "{e}"
        );
        assert!(matches!(
            env.check("!x"),
            Err(ForeignValueError::ProjectCommand)
        ));
    }

    #[test]
    fn project_env_grants_apply_to_the_directory_and_below_and_to_every_project() {
        let s = Path::new("/home/u/.pi/agent/settings.json");
        let raw = json!({"*": ["A"], "/work": ["B"], "/work/app": ["C", "A"], "/other": ["D"]});
        let g = ProjectGrant::read(Some(&raw), Path::new("/work/app/sub"), s).unwrap();
        assert_eq!(g.names, ["A", "B", "C"]);
        assert!(g.allows("PATH") && g.allows("C") && !g.allows("D"));
        let g = ProjectGrant::read(Some(&raw), Path::new("/workshop"), s).unwrap();
        assert_eq!(g.names, ["A"]);
        for bad in [
            json!(["A"]),
            json!({"rel/dir": ["A"]}),
            json!({"*": "A"}),
            json!({"*": ["A B"]}),
        ] {
            let e = ProjectGrant::read(Some(&bad), Path::new("/w"), s).unwrap_err();
            assert!(e.to_string().contains("projectEnv"), "{e}");
        }
    }
}
