//! Where Claude Code hooks come from, in pi's load order and under the managed policy: the
//! managed policy's `commandHooks` (first, always failing closed, never removable), the
//! user's settings `commandHooks`, `--claude-hooks FILE` in command-line order, and — once the
//! project is trusted — the project's `.pi/settings.json` `commandHooks`.
//! `allowManagedHooksOnly` keeps only the managed ones; `--no-hooks` drops the user's
//! settings (as it does for pi's own hooks), never the managed policy's or the command line's.
//!
//! `commandHooksStrictExit` (the user's settings, or forced by the managed policy so that no
//! setting turns it off) makes every exit other than 0 and 2 of a PreToolUse hook a failure
//! under its `fail` policy, so a gate that crashes blocks instead of allowing; a project's
//! settings cannot change it. A trusted project's hooks get of pi's environment only what the
//! user's `projectEnv` grants (`hook_env`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::config::{self, ClaudeConfigError, ClaudeEvent, ClaudeSpec, StrictExit};
use super::hook_env;
use crate::config::managed::ManagedPolicy;
use crate::config::{ProjectGrant, Settings};
use crate::hooks::protocol::FailPolicy;
use crate::hooks::spec::HookSource;

/// The settings key holding a Claude Code `hooks` object.
pub const SETTINGS_KEY: &str = "commandHooks";

/// The setting (user settings, managed policy) that makes an unexpected exit of a PreToolUse
/// hook a failure.
pub const STRICT_EXIT_KEY: &str = "commandHooksStrictExit";

/// The Claude Code hooks of a run's first phase, and what the user should be told.
#[derive(Debug, Default)]
pub struct ClaudePlan {
    pub specs: Vec<ClaudeSpec>,
    pub warnings: Vec<String>,
    /// `commandHooksStrictExit`, for the project's hooks too.
    pub strict_exit: Option<StrictExit>,
}

impl ClaudePlan {
    fn extend(&mut self, (specs, warnings): (Vec<ClaudeSpec>, Vec<String>)) {
        self.specs.extend(specs);
        self.warnings.extend(warnings);
    }
}

/// Managed, user and command-line Claude Code hooks (`files` relative to `cwd`).
pub fn first_phase(
    files: &[PathBuf],
    no_hooks: bool,
    user: &Settings,
    agent_dir: &Path,
    cwd: &Path,
    policy: &ManagedPolicy,
) -> Result<ClaudePlan, ClaudeConfigError> {
    let mut plan = ClaudePlan {
        strict_exit: strict_exit(user, agent_dir, policy)?,
        ..ClaudePlan::default()
    };
    if let Some(v) = &policy.command_hooks {
        let file = policy
            .path
            .as_deref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let (mut specs, mut warnings) = config::from_value(v, &file, HookSource::Managed)?;
        let vars: Vec<_> = std::env::vars_os().collect();
        for s in &mut specs {
            warnings.extend(hook_env::managed_refusals(s, &vars));
            if s.fail == Some(FailPolicy::Open) {
                plan.warnings.push(format!(
                    "{}: `fail: \"open\"` is ignored; a managed hook always fails closed",
                    s.origin
                ));
            }
            s.fail = Some(FailPolicy::Closed);
        }
        plan.extend((specs, warnings));
    }
    let mut others = ClaudePlan::default();
    if !no_hooks {
        if let Some(v) = user.get(SETTINGS_KEY) {
            let file = agent_dir.join("settings.json").display().to_string();
            others.extend(config::from_value(v, &file, HookSource::User)?);
        }
    }
    for f in files {
        others.extend(config::from_file(&cwd.join(f), HookSource::Cli)?);
    }
    admit(policy, others, &mut plan);
    apply_strict(&mut plan.specs, plan.strict_exit.as_ref());
    Ok(plan)
}

/// `commandHooksStrictExit`: forced by the managed policy, else the user's settings.
fn strict_exit(
    user: &Settings,
    agent_dir: &Path,
    policy: &ManagedPolicy,
) -> Result<Option<StrictExit>, ClaudeConfigError> {
    if policy.command_hooks_strict_exit {
        let path = policy
            .path
            .as_deref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        return Ok(Some(StrictExit::Setting(format!(
            "forced by the managed policy {path}"
        ))));
    }
    let file = agent_dir.join("settings.json").display().to_string();
    match user.get(STRICT_EXIT_KEY) {
        None | Some(Value::Null) | Some(Value::Bool(false)) => Ok(None),
        Some(Value::Bool(true)) => Ok(Some(StrictExit::Setting(format!("set in {file}")))),
        Some(other) => Err(ClaudeConfigError::Entry {
            file,
            at: STRICT_EXIT_KEY.into(),
            message: format!(
                "must be true or false, not {}",
                crate::hooks::protocol::json_kind(other)
            ),
        }),
    }
}

fn apply_strict(specs: &mut [ClaudeSpec], strict: Option<&StrictExit>) {
    let Some(strict) = strict else { return };
    for s in specs
        .iter_mut()
        .filter(|s| s.event == ClaudeEvent::PreToolUse && s.strict_exit.is_none())
    {
        s.strict_exit = Some(strict.clone());
    }
}

/// The start-up line naming the hooks `commandHooksStrictExit` applies to (named specs).
pub fn strict_line(specs: &[ClaudeSpec]) -> Option<String> {
    let mut by = None;
    let names: Vec<&str> = specs
        .iter()
        .filter_map(|s| match &s.strict_exit {
            Some(StrictExit::Setting(why)) => {
                by = Some(why.as_str());
                Some(s.name.as_str())
            }
            _ => None,
        })
        .collect();
    let by = by?;
    Some(format!(
        "{STRICT_EXIT_KEY} ({by}): an exit other than 0 and 2 of these PreToolUse hooks is a \
         failure under their `fail` policy (closed unless \"open\"), not Claude Code's \
         non-blocking error: {}",
        names.join(", ")
    ))
}

/// A trusted project's Claude Code hooks (`.pi/settings.json` `commandHooks`), under the
/// managed policy, given of pi's environment what the user's `grant` allows (what it asked
/// for beyond that is withheld, and said), and under the first phase's `strict_exit`.
pub fn project(
    project: &Settings,
    cwd: &Path,
    policy: &ManagedPolicy,
    grant: &ProjectGrant,
    strict_exit: Option<&StrictExit>,
) -> Result<ClaudePlan, ClaudeConfigError> {
    let mut plan = ClaudePlan::default();
    if let Some(v) = project.get(SETTINGS_KEY) {
        let file = cwd.join(".pi").join("settings.json").display().to_string();
        let (mut specs, warnings) = config::from_value(v, &file, HookSource::Project)?;
        let vars: Vec<_> = std::env::vars_os().collect();
        let mut withheld = Vec::new();
        for s in &mut specs {
            hook_env::grant_project(s, grant, &vars);
            withheld.extend(hook_env::withheld_warnings(s, grant));
        }
        apply_strict(&mut specs, strict_exit);
        admit(
            policy,
            ClaudePlan {
                specs,
                warnings,
                strict_exit: None,
            },
            &mut plan,
        );
        if !plan.specs.is_empty() {
            plan.warnings.extend(withheld);
        }
    }
    Ok(plan)
}

fn admit(policy: &ManagedPolicy, others: ClaudePlan, plan: &mut ClaudePlan) {
    if policy.allow_managed_hooks_only && !others.specs.is_empty() {
        let path = policy
            .path
            .as_deref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        plan.warnings.push(format!(
            "{} Claude Code hook(s) ignored: the managed policy {path} sets allowManagedHooksOnly, so only managed hooks run",
            others.specs.len()
        ));
        return;
    }
    plan.specs.extend(others.specs);
    plan.warnings.extend(others.warnings);
}
