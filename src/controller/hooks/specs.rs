//! Which hooks a run loads: specs gathered from every source in load order under the managed
//! policy — managed hooks, user settings, the hooks directory, the user's TypeScript
//! extensions (settings `extensions`, `~/.pi/agent/extensions/`), `--hook`/`-e`, and (once the
//! project is trusted) the project's own hooks and extensions. Start-up and `reload` gather
//! them the same way. An extension is a hook that runs pi's extension bridge
//! (`hooks::extension`), so everything below applies to it unchanged.
//!
//! The managed policy is applied here, in one place, for `pi hooks` and for a run alike:
//! managed hooks come first and are required; no flag or user/project setting can remove them;
//! `allowManagedHooksOnly` drops every other source; and a required hook that cannot start
//! either refuses every tool call or stops start-up, as the policy says.

use std::path::Path;

use super::HookSet;
use crate::config::managed::{ManagedError, ManagedPolicy};
use crate::config::{ForeignValueError, ProjectGrant, Settings, SystemEnv};
use crate::hooks::protocol::FailPolicy;
use crate::hooks::sources::{self, SourceError};
use crate::hooks::spec::{HookSource, HookSpec};
use crate::hooks::{extension, managed_env};

/// Why the hook list could not be built; either stops start-up.
#[derive(Debug, thiserror::Error)]
pub enum SpecsError {
    #[error(transparent)]
    Managed(#[from] ManagedError),
    #[error(transparent)]
    Source(#[from] SourceError),
}

/// The hooks a run will start in its first phase, in load order, and what the user should be
/// told about the ones that were left out or changed.
#[derive(Debug, Default)]
pub struct HookPlan {
    pub specs: Vec<HookSpec>,
    pub warnings: Vec<String>,
}

/// The managed policy applied to the hooks of non-managed sources, given the managed specs
/// already loaded: under `allowManagedHooksOnly` none is kept (one warning says how many were
/// ignored and why); otherwise an entry that takes a managed hook's name is ignored with a
/// warning, since two hooks of one name would make "managed hook X is not running" ambiguous
/// and a user's hook must not pass for the administrator's. Used for every later source,
/// project hooks included.
pub fn admit(
    policy: &ManagedPolicy,
    managed: &[&HookSpec],
    specs: Vec<HookSpec>,
    warnings: &mut Vec<String>,
) -> Vec<HookSpec> {
    if specs.is_empty() {
        return specs;
    }
    if policy.allow_managed_hooks_only {
        warnings.extend(ignored_warning(policy, specs.len()));
        return Vec::new();
    }
    let mut kept = Vec::new();
    for spec in specs {
        match managed.iter().find(|m| m.name == spec.name) {
            Some(m) => warnings.push(format!(
                "the {} hook {:?} ({}) has the name of a managed hook ({}) and is ignored; managed hooks cannot be replaced",
                spec.source.as_str(),
                spec.name,
                spec.program.display(),
                m.program.display(),
            )),
            None => kept.push(spec),
        }
    }
    kept
}

/// The one warning for hooks dropped by `allowManagedHooksOnly` (none when nothing was).
fn ignored_warning(policy: &ManagedPolicy, ignored: usize) -> Option<String> {
    let path = policy
        .path
        .as_deref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    (ignored > 0).then(|| {
        format!(
            "{ignored} hook(s) ignored: the managed policy {path} sets allowManagedHooksOnly, so only managed hooks run"
        )
    })
}

/// [`admit`] for hooks that join after start-up (project hooks, once trusted): the managed
/// specs are those of the hooks already loaded.
pub fn admit_later(
    policy: &ManagedPolicy,
    loaded: &HookSet,
    specs: Vec<HookSpec>,
    warnings: &mut Vec<String>,
) -> Vec<HookSpec> {
    let managed: Vec<&HookSpec> = loaded
        .instances
        .iter()
        .map(|h| h.spec())
        .filter(|s| s.source == HookSource::Managed)
        .collect();
    admit(policy, &managed, specs, warnings)
}

/// The managed policy's hooks: required, first, relative paths resolved against the policy
/// file's directory, bare names on the fixed system `PATH`.
fn managed_specs(
    policy: &ManagedPolicy,
    warnings: &mut Vec<String>,
) -> Result<Vec<HookSpec>, SourceError> {
    let Some(list) = &policy.hooks else {
        return Ok(Vec::new());
    };
    let file = policy
        .path
        .as_deref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut specs = sources::from_settings(list, &file, &policy.base_dir(), HookSource::Managed)?;
    for spec in &mut specs {
        spec.required = true;
        spec.on_required_failure = policy.required_hook_failure;
        if spec.fail == Some(FailPolicy::Open) {
            warnings.push(format!(
                "managed hook {}: `fail: \"open\"` is ignored; a managed hook always fails closed",
                spec.name
            ));
            spec.fail = Some(FailPolicy::Closed);
        }
        // The hook's environment leaves these out (`managed_env`); the administrator is told.
        for name in &spec.env_passthrough {
            if let Some(why) = managed_env::passthrough_refusal(name) {
                warnings.push(format!(
                    "managed hook {}: `env_passthrough` name {name} is ignored: {why}",
                    spec.name
                ));
            }
        }
    }
    Ok(specs)
}

/// Every hook spec for this run, in load order: managed hooks, user settings, the hooks
/// directory, then `--hook`/`-e` in command-line order. `--no-hooks` drops user settings and
/// the hooks directory, never managed hooks. Project hooks join later, once the project is
/// trusted, through [`admit_later`].
pub fn specs_with_policy(
    cli_hooks: &[String],
    no_hooks: bool,
    settings: &Settings,
    agent_dir: &Path,
    cwd: &Path,
    policy: &ManagedPolicy,
) -> Result<HookPlan, SourceError> {
    let mut plan = HookPlan::default();
    plan.specs = managed_specs(policy, &mut plan.warnings)?;
    if policy.allow_managed_hooks_only {
        // Counted, not resolved: a broken entry that will not run must not stop start-up.
        let mut ignored = cli_hooks.len();
        if !no_hooks {
            ignored += settings
                .get("hooks")
                .and_then(|v| v.as_array())
                .map_or(0, Vec::len);
            ignored += sources::from_dir(&agent_dir.join("hooks"), HookSource::Discovered)
                .map_or(0, |d| d.len());
        }
        plan.warnings.extend(ignored_warning(policy, ignored));
        return Ok(plan);
    }
    let mut others = Vec::new();
    if !no_hooks {
        if let Some(list) = settings.get("hooks") {
            let file = agent_dir.join("settings.json").display().to_string();
            // Relative to the agent directory, where the file is: never to the directory pi
            // runs in, which may be any repository.
            others.extend(sources::from_settings(
                list,
                &file,
                agent_dir,
                HookSource::User,
            )?);
        }
        others.extend(sources::from_dir(
            &agent_dir.join("hooks"),
            HookSource::Discovered,
        )?);
        others.extend(user_extensions(settings, agent_dir, &mut plan.warnings));
    }
    for c in cli_hooks {
        // The user typed it here, so `./x` means the current directory.
        match cli_extension(c, cwd) {
            Some(found) => {
                for source in found {
                    let rt = extension::runtime(&source)?;
                    others.push(extension::spec(&source, HookSource::Cli, &rt));
                }
            }
            None => others.push(sources::from_command(c, cwd, HookSource::Cli)?),
        }
    }
    let managed: Vec<&HookSpec> = plan.specs.iter().collect();
    let others = admit(policy, &managed, others, &mut plan.warnings);
    plan.specs.extend(others);
    Ok(plan)
}

/// The user's extensions: the settings' `extensions` paths (relative to the agent
/// directory), then `~/.pi/agent/extensions/`. One that cannot run (no Node) is left out with a
/// warning, as pi 1.6 leaves out an extension that fails to load.
fn user_extensions(
    settings: &Settings,
    agent_dir: &Path,
    warnings: &mut Vec<String>,
) -> Vec<HookSpec> {
    let mut listed = extension::Listed::default();
    if let Some(list) = settings.get("extensions") {
        let file = agent_dir.join("settings.json").display().to_string();
        listed = extension::from_settings(list, &file, agent_dir, warnings);
    }
    let discovered: Vec<_> = dedup(extension::discover(&agent_dir.join("extensions")))
        .into_iter()
        .filter(|p| !listed.sources.contains(p) && listed.enables(p))
        .collect();
    let listed = dedup(listed.sources);
    let mut out = extension::specs(&listed, HookSource::User, warnings);
    out.extend(extension::specs(
        &discovered,
        HookSource::Discovered,
        warnings,
    ));
    out
}

/// Sources in first-seen order, each once (a path listed in settings and also discovered).
fn dedup(sources: Vec<std::path::PathBuf>) -> Vec<std::path::PathBuf> {
    let mut seen = std::collections::HashSet::new();
    sources
        .into_iter()
        .filter(|p| seen.insert(p.canonicalize().unwrap_or_else(|_| p.clone())))
        .collect()
}

/// A `-e`/`--hook` argument that names an extension (one word: a module file, as pi 1.6's
/// `-e ext.ts` does even without `./`, or an extension directory): its sources.
fn cli_extension(arg: &str, cwd: &Path) -> Option<Vec<std::path::PathBuf>> {
    let words = shell_words::split(arg).ok()?;
    let [word] = words.as_slice() else {
        return None;
    };
    extension::sources_at(&crate::tools::path::resolve(cwd, word))
}

/// [`specs_with_policy`] with the machine's managed policy (`ManagedPolicy::load`), printing
/// the plan's warnings to stderr. Kept for callers that do not load the policy themselves.
pub fn specs(
    cli_hooks: &[String],
    no_hooks: bool,
    settings: &Settings,
    agent_dir: &Path,
    cwd: &Path,
) -> Result<Vec<HookSpec>, SpecsError> {
    let policy = ManagedPolicy::load(&SystemEnv)?;
    let plan = specs_with_policy(cli_hooks, no_hooks, settings, agent_dir, cwd, &policy)?;
    for w in &plan.warnings {
        term_eprintln!("Warning: {w}");
    }
    Ok(plan.specs)
}

/// The project's hook specs, in load order: `.pi/settings.json` `hooks`, then `.pi/hooks/`.
/// `project` is the project file alone (not merged): the user's own `hooks` list is not the
/// project's, whatever a deep merge would make of the two arrays. They are gathered and
/// started only after the trust decision, so an untrusted repository never gets a process of
/// its own started (not even a handshake). Nothing of pi's environment is granted here: a
/// hook started from these specs gets no `env_passthrough` variable but the base ones (see
/// [`project_specs_granted`]).
pub fn project_specs(project: &Settings, cwd: &Path) -> Result<Vec<HookSpec>, SourceError> {
    let none = ProjectGrant::none(cwd, Path::new("settings.json"));
    project_specs_granted(project, cwd, &none)
}

/// [`project_specs`] with what the user's `projectEnv` grants the project: each hook's
/// `env_passthrough` keeps only the granted names (and the base variables every hook gets);
/// the rest move to `env_refused`.
pub fn project_specs_granted(
    project: &Settings,
    cwd: &Path,
    grant: &ProjectGrant,
) -> Result<Vec<HookSpec>, SourceError> {
    let dir = cwd.join(".pi");
    let mut out = Vec::new();
    if let Some(list) = project.get("hooks") {
        let file = dir.join("settings.json").display().to_string();
        // Paths in project settings are relative to `.pi`, as pi resolves them.
        out.extend(sources::from_settings(
            list,
            &file,
            &dir,
            HookSource::Project,
        )?);
    }
    out.extend(sources::from_dir(&dir.join("hooks"), HookSource::Project)?);
    let mut warnings = Vec::new();
    let mut listed = extension::Listed::default();
    if let Some(list) = project.get("extensions") {
        let file = dir.join("settings.json").display().to_string();
        listed = extension::from_settings(list, &file, &dir, &mut warnings);
    }
    let discovered = extension::discover(&dir.join("extensions"));
    let mut found = std::mem::take(&mut listed.sources);
    found.extend(discovered.into_iter().filter(|p| listed.enables(p)));
    out.extend(extension::specs(
        &dedup(found),
        HookSource::Project,
        &mut warnings,
    ));
    for w in &warnings {
        term_eprintln!("Warning: {w}");
    }
    for spec in &mut out {
        let (kept, refused) = std::mem::take(&mut spec.env_passthrough)
            .into_iter()
            .partition(|n| grant.allows(n));
        spec.env_passthrough = kept;
        spec.env_refused = refused;
    }
    Ok(out)
}

/// One warning per `env_passthrough` name a project hook was refused, saying how the user
/// grants it.
pub fn refused_env_warnings(specs: &[HookSpec], grant: &ProjectGrant) -> Vec<String> {
    specs
        .iter()
        .flat_map(|spec| {
            spec.env_refused.iter().map(move |name| {
                let why = ForeignValueError::ProjectVariable {
                    name: name.clone(),
                    dir: grant.dir.clone(),
                    settings: grant.settings.clone(),
                };
                format!(
                    "project hook {}: `env_passthrough` {name} is not passed: {why}",
                    spec.name
                )
            })
        })
        .collect()
}
