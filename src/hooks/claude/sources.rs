//! Where Claude Code hooks come from, in pi's load order and under the managed policy: the
//! managed policy's `commandHooks` (first, always failing closed, never removable), the
//! user's settings `commandHooks`, `--claude-hooks FILE` in command-line order, and — once the
//! project is trusted — the project's `.pi/settings.json` `commandHooks`.
//! `allowManagedHooksOnly` keeps only the managed ones; `--no-hooks` drops the user's
//! settings (as it does for pi's own hooks), never the managed policy's or the command line's.

use std::path::{Path, PathBuf};

use super::config::{self, ClaudeConfigError, ClaudeSpec};
use crate::config::managed::ManagedPolicy;
use crate::config::Settings;
use crate::hooks::protocol::FailPolicy;
use crate::hooks::spec::HookSource;

/// The settings key holding a Claude Code `hooks` object.
pub const SETTINGS_KEY: &str = "commandHooks";

/// The Claude Code hooks of a run's first phase, and what the user should be told.
#[derive(Debug, Default)]
pub struct ClaudePlan {
    pub specs: Vec<ClaudeSpec>,
    pub warnings: Vec<String>,
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
    let mut plan = ClaudePlan::default();
    if let Some(v) = &policy.command_hooks {
        let file = policy
            .path
            .as_deref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let (mut specs, warnings) = config::from_value(v, &file, HookSource::Managed)?;
        for s in &mut specs {
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
    Ok(plan)
}

/// A trusted project's Claude Code hooks (`.pi/settings.json` `commandHooks`), under the
/// managed policy.
pub fn project(
    project: &Settings,
    cwd: &Path,
    policy: &ManagedPolicy,
) -> Result<ClaudePlan, ClaudeConfigError> {
    let mut plan = ClaudePlan::default();
    if let Some(v) = project.get(SETTINGS_KEY) {
        let file = cwd.join(".pi").join("settings.json").display().to_string();
        let found = config::from_value(v, &file, HookSource::Project)?;
        admit(
            policy,
            ClaudePlan {
                specs: found.0,
                warnings: found.1,
            },
            &mut plan,
        );
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
