//! What of pi's environment a Claude Code hook runs with. A hook starts from the model's shell
//! environment (`shellEnvironment`: no variable whose name contains KEY, TOKEN, SECRET or
//! PASSWORD, none pi reads a credential from) — right by default, but a hook that needs a
//! token would have no way to get it. So a hook entry, or a whole `hooks` object beside its
//! events, may ask: `envPassthrough` (names or case-insensitive globs of pi's own variables)
//! and `env` (values set literally). pi's `CLAUDE_PROJECT_DIR` and a plugin's
//! `CLAUDE_PLUGIN_ROOT` / `CLAUDE_PLUGIN_DATA` come last and cannot be overridden.
//!
//! Who asks matters as it does for pi's own hooks: a trusted project's hook is given only what
//! the user's `projectEnv` grants the project ([`grant_project`]); the rest is withheld and
//! said at start-up. A managed hook keeps the fixed managed environment, to which its request
//! adds nothing the managed rules refuse (`managed_env`).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::Path;

use serde_json::{Map, Value};

use super::config::ClaudeSpec;
use crate::config::scope::ProjectGrant;
use crate::config::ForeignValueError;
use crate::hooks::managed_env::{self, MANAGED_BASE_ENV, SYSTEM_PATH};
use crate::hooks::protocol::json_kind;
use crate::hooks::spec::HookSource;
use crate::tools::shell_env::{NamePattern, ShellEnvironment, DEFAULT_EXCLUDES};

/// What a hook entry (or its `hooks` object) asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnvRequest {
    /// `env`, in order.
    pub set: Vec<(String, String)>,
    /// `envPassthrough`.
    pub passthrough: Vec<String>,
}

impl EnvRequest {
    /// The keys, beside a `hooks` object's events or in a hook entry.
    pub const KEYS: [&'static str; 2] = ["env", "envPassthrough"];

    /// The request in `map` (a hook entry or a `hooks` object); `Err` says what is wrong.
    pub fn parse(map: &Map<String, Value>) -> Result<Self, String> {
        let mut req = EnvRequest::default();
        match map.get("env") {
            None | Some(Value::Null) => {}
            Some(Value::Object(vars)) => {
                for (k, v) in vars {
                    if !is_var_name(k) {
                        return Err(format!("`env`: {k:?} is not a variable name"));
                    }
                    let Value::String(v) = v else {
                        return Err(format!("`env.{k}` must be a string, not {}", json_kind(v)));
                    };
                    req.set.push((k.clone(), v.clone()));
                }
            }
            Some(other) => {
                return Err(format!(
                    "`env` must be an object of variable names to strings, not {}",
                    json_kind(other)
                ))
            }
        }
        match map.get("envPassthrough") {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) => {
                for p in list {
                    let Value::String(p) = p else {
                        return Err(format!(
                            "`envPassthrough` must be a list of variable names or globs, not a list holding {}",
                            json_kind(p)
                        ));
                    };
                    NamePattern::new(p)
                        .map_err(|e| format!("`envPassthrough`: {p:?} is not a glob: {e}"))?;
                    req.passthrough.push(p.clone());
                }
            }
            Some(other) => {
                return Err(format!(
                    "`envPassthrough` must be a list of variable names or globs, not {}",
                    json_kind(other)
                ))
            }
        }
        Ok(req)
    }

    /// `self` (a `hooks` object's) with `own` (one entry's) over it.
    pub fn then(mut self, own: EnvRequest) -> Self {
        for (k, v) in own.set {
            self.set.retain(|(old, _)| *old != k);
            self.set.push((k, v));
        }
        for p in own.passthrough {
            if !self.passthrough.contains(&p) {
                self.passthrough.push(p);
            }
        }
        self
    }
}

fn is_var_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn patterns(list: &[String]) -> Vec<NamePattern> {
    list.iter()
        .filter_map(|p| NamePattern::new(p).ok())
        .collect()
}

/// The variables of `vars` that `spec`'s `envPassthrough` selects.
fn selected(spec: &ClaudeSpec, vars: &[(OsString, OsString)]) -> Vec<(OsString, OsString)> {
    let pats = patterns(&spec.env_passthrough);
    vars.iter()
        .filter(|(k, _)| pats.iter().any(|p| p.matches(k)))
        .cloned()
        .collect()
}

/// Whether the model's shell environment drops `name` whatever the user's policy says (the
/// default excludes): what a hook cannot have without asking.
fn is_secret_like(name: &OsStr) -> bool {
    DEFAULT_EXCLUDES
        .iter()
        .filter_map(|p| NamePattern::new(p).ok())
        .any(|p| p.matches(name))
}

/// A trusted project's hook under the user's `grant`: its `envPassthrough` becomes the names
/// of `vars` (pi's environment) it selects that the grant allows; the secret-like ones it
/// selects that the grant does not allow are `env_withheld`. Names it selects that are no
/// secret reach it through the shell environment anyway, and are not reported.
pub fn grant_project(spec: &mut ClaudeSpec, grant: &ProjectGrant, vars: &[(OsString, OsString)]) {
    if spec.env_passthrough.is_empty() {
        return;
    }
    let mut kept = Vec::new();
    let mut withheld = Vec::new();
    for (k, _) in selected(spec, vars) {
        let name = k.to_string_lossy().into_owned();
        if grant.allows(&name) {
            kept.push(name);
        } else if is_secret_like(&k) {
            withheld.push(name);
        }
    }
    kept.sort();
    withheld.sort();
    spec.env_passthrough = kept;
    spec.env_withheld = withheld;
}

/// One start-up line per variable withheld from a project hook, saying how to grant it.
pub fn withheld_warnings(spec: &ClaudeSpec, grant: &ProjectGrant) -> Vec<String> {
    spec.env_withheld
        .iter()
        .map(|name| {
            let why = ForeignValueError::ProjectVariable {
                name: name.clone(),
                dir: grant.dir.clone(),
                settings: grant.settings.clone(),
            };
            format!(
                "{}: `envPassthrough` {name} is withheld from this project hook: {why}",
                spec.origin
            )
        })
        .collect()
}

/// One start-up line per variable a managed hook asked for that the managed rules keep out
/// (`managed_env`): the administrator is told, as for pi's own managed hooks.
pub fn managed_refusals(spec: &ClaudeSpec, vars: &[(OsString, OsString)]) -> Vec<String> {
    let mut names: Vec<String> = spec
        .env_passthrough
        .iter()
        .filter(|p| is_var_name(p))
        .cloned()
        .chain(
            selected(spec, vars)
                .into_iter()
                .map(|(k, _)| k.to_string_lossy().into_owned()),
        )
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            managed_env::passthrough_refusal(&name).map(|why| {
                format!(
                    "{}: `envPassthrough` {name} is not passed to this managed hook: {why}",
                    spec.origin
                )
            })
        })
        .collect()
}

/// Where a hook runs and what pi adds for it.
pub struct RunPlace<'a> {
    pub project_dir: &'a Path,
    /// The model's shell environment policy (a default one until the tools are built).
    pub shell: Option<&'a ShellEnvironment>,
    /// A managed hook's `HOME`.
    pub managed_home: Option<&'a Path>,
    /// For `${CLAUDE_PLUGIN_DATA}`.
    pub agent_dir: Option<&'a Path>,
}

/// pi's variables for a hook, by name.
pub type OwnVars = Vec<(String, String)>;

/// pi's variables for the hook: `CLAUDE_PROJECT_DIR`, and a plugin's root and data directory
/// (created here: a plugin writes to it without checking).
pub fn own_vars(spec: &ClaudeSpec, place: &RunPlace<'_>) -> OwnVars {
    let mut own = vec![(
        "CLAUDE_PROJECT_DIR".to_string(),
        place.project_dir.display().to_string(),
    )];
    if let Some(p) = &spec.plugin {
        own.push(("CLAUDE_PLUGIN_ROOT".into(), p.root.display().to_string()));
        if let Some(agent_dir) = place.agent_dir {
            let data = p.data_dir(agent_dir);
            if let Err(e) = std::fs::create_dir_all(&data) {
                tracing::warn!(dir = %data.display(), error = %e, "cannot create CLAUDE_PLUGIN_DATA");
            }
            own.push(("CLAUDE_PLUGIN_DATA".into(), data.display().to_string()));
        }
    }
    own
}

/// The complete environment of one run of `spec`; `parent` is pi's environment, `own` pi's
/// variables for it ([`own_vars`]).
pub fn environment(
    spec: &ClaudeSpec,
    place: &RunPlace<'_>,
    parent: &[(OsString, OsString)],
    own: &OwnVars,
) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = if spec.source == HookSource::Managed {
        // The administrator's hooks get the fixed environment of managed hooks (SPEC 4.9).
        let mut env: BTreeMap<OsString, OsString> = parent
            .iter()
            .filter(|(k, _)| MANAGED_BASE_ENV.iter().any(|m| OsStr::new(m) == k))
            .cloned()
            .collect();
        env.insert("PATH".into(), SYSTEM_PATH.into());
        if let Some(home) = place.managed_home {
            env.insert("HOME".into(), home.as_os_str().to_owned());
        }
        env.insert("PYTHONNOUSERSITE".into(), "1".into());
        env
    } else {
        let default = ShellEnvironment::default();
        let shell = place.shell.unwrap_or(&default);
        shell
            .build(parent.iter().cloned(), &[])
            .into_iter()
            .collect()
    };
    for (k, v) in selected(spec, parent) {
        let refused = spec.source == HookSource::Managed
            && managed_env::passthrough_refusal(&k.to_string_lossy()).is_some();
        if !refused {
            env.insert(k, v);
        }
    }
    for (k, v) in spec.env.iter().chain(own.iter()) {
        env.insert(k.into(), v.into());
    }
    env.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    fn spec(v: Value, source: HookSource) -> ClaudeSpec {
        let (mut specs, _) = super::super::config::from_value(&v, "s.json", source).unwrap();
        specs.remove(0)
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    fn get(env: &[(OsString, OsString)], k: &str) -> Option<String> {
        env.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    }

    const PARENT: &[(&str, &str)] = &[
        ("PATH", "/bin"),
        ("GITHUB_TOKEN", "t"),
        ("DEPLOY_SECRET", "s"),
        ("DEPLOY_REGION", "eu"),
        ("NODE_OPTIONS", "--require x"),
    ];

    #[test]
    fn a_request_adds_to_the_filtered_environment_and_cannot_fake_pis_own() {
        let s = spec(
            json!({"envPassthrough": ["deploy_*"], "env": {"TEAM": "a"},
                   "Stop": [{"hooks": [{"command": "x", "envPassthrough": ["GITHUB_TOKEN"],
                                        "env": {"TEAM": "b", "CLAUDE_PROJECT_DIR": "/fake"}}]}]}),
            HookSource::User,
        );
        let place = RunPlace {
            project_dir: Path::new("/p"),
            shell: None,
            managed_home: None,
            agent_dir: None,
        };
        let env = environment(&s, &place, &vars(PARENT), &own_vars(&s, &place));
        assert_eq!(get(&env, "GITHUB_TOKEN").as_deref(), Some("t"));
        assert_eq!(get(&env, "DEPLOY_SECRET").as_deref(), Some("s"));
        assert_eq!(get(&env, "TEAM").as_deref(), Some("b"));
        assert_eq!(get(&env, "CLAUDE_PROJECT_DIR").as_deref(), Some("/p"));

        // Without a request the secrets stay out.
        let plain = spec(
            json!({"Stop": [{"hooks": [{"command": "x"}]}]}),
            HookSource::User,
        );
        let env = environment(&plain, &place, &vars(PARENT), &own_vars(&plain, &place));
        assert_eq!(get(&env, "GITHUB_TOKEN"), None);
        assert_eq!(get(&env, "DEPLOY_REGION").as_deref(), Some("eu"));

        // A managed hook: fixed PATH, no runtime variables even when asked for.
        let managed = spec(
            json!({"Stop": [{"hooks": [{"command": "x", "envPassthrough": ["NODE_OPTIONS", "GITHUB_TOKEN"]}]}]}),
            HookSource::Managed,
        );
        let env = environment(&managed, &place, &vars(PARENT), &own_vars(&managed, &place));
        assert_eq!(get(&env, "NODE_OPTIONS"), None);
        assert_eq!(get(&env, "GITHUB_TOKEN").as_deref(), Some("t"));
        assert_eq!(get(&env, "PATH").as_deref(), Some(SYSTEM_PATH));
        let told = managed_refusals(&managed, &vars(PARENT));
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(told[0].contains("NODE_OPTIONS"), "{told:?}");
    }

    #[test]
    fn a_project_hook_gets_what_the_user_grants_and_the_rest_is_withheld() {
        let mut s = spec(
            json!({"Stop": [{"hooks": [{"command": "x",
                   "envPassthrough": ["GITHUB_TOKEN", "DEPLOY_*", "PATH"]}]}]}),
            HookSource::Project,
        );
        let grant = ProjectGrant {
            dir: PathBuf::from("/p"),
            settings: PathBuf::from("/home/u/.pi/agent/settings.json"),
            names: vec!["DEPLOY_SECRET".into()],
        };
        grant_project(&mut s, &grant, &vars(PARENT));
        // DEPLOY_REGION is no secret: the shell environment gives it to every hook anyway.
        assert_eq!(s.env_passthrough, ["DEPLOY_SECRET", "PATH"]);
        assert_eq!(s.env_withheld, ["GITHUB_TOKEN"]);
        let w = withheld_warnings(&s, &grant);
        assert!(
            w[0].contains("GITHUB_TOKEN") && w[0].contains("projectEnv"),
            "{w:?}"
        );
    }

    #[test]
    fn malformed_requests_say_what_is_wrong() {
        let parse = |v: Value| EnvRequest::parse(v.as_object().unwrap());
        assert!(parse(json!({"envPassthrough": "X"}))
            .unwrap_err()
            .contains("list"));
        assert!(parse(json!({"env": {"A B": "1"}}))
            .unwrap_err()
            .contains("variable name"));
        assert!(parse(json!({"env": {"A": 1}}))
            .unwrap_err()
            .contains("`env.A`"));
        assert!(parse(json!({"envPassthrough": ["[x"]}))
            .unwrap_err()
            .contains("glob"));
    }
}
