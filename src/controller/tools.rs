//! Which tools a run gets: the built-ins active by default, `--tools` as an allowlist or as
//! `+name`/`-name` changes to the default set, `--exclude-tools` as a denylist,
//! `--no-builtin-tools` and `--no-tools`; and the environment the `bash` tool's shell gets
//! (`shellEnvironment` and the credential variables pi knows).

use std::collections::BTreeSet;
use std::sync::Arc;

use super::options::ControllerOptions;
use crate::config::{ConfigError, Settings};
use crate::mcp::hub::McpHub;
use crate::resources::system_prompt::PromptTool;
use crate::tools::shell_env::ShellEnvironment;
use crate::tools::{self, ToolRegistry, BUILTIN_NAMES, DEFAULT_ACTIVE};

#[derive(Debug, thiserror::Error)]
pub enum ToolSelectionError {
    #[error("unknown tool \"{name}\" in {flag} (available: {})", BUILTIN_NAMES.join(", "))]
    Unknown { name: String, flag: &'static str },
    /// pi 1.6's `getToolListError`: a list is names or changes, not both.
    #[error("--tools: tool names cannot be mixed with +name or -name entries")]
    MixedModifiers,
    #[error("--tools: +name and -name entries take exact tool names, not patterns: {0}")]
    PatternModifier(String),
    /// `shellEnvironment` is invalid, or the configuration naming the credential variables
    /// cannot be read.
    #[error(transparent)]
    ShellEnvironment(#[from] ConfigError),
}

/// Every variable pi's configuration reads a credential from, which the model's shell must
/// not see: the registry's (models.json, auth.json, the providers hooks registered) and the
/// MCP servers' (`env` and header values of the user's and a trusted project's mcp.json).
pub fn credential_vars(
    registry: &crate::config::ModelRegistry,
    mcp: Option<&McpHub>,
) -> BTreeSet<String> {
    let mut names = registry.credential_env_vars();
    if let Some(hub) = mcp {
        names.extend(hub.credential_vars());
    }
    names
}

/// The environment policy of the model's shell, keeping `credential_vars` (see
/// [`credential_vars`]) out of it.
fn shell_environment(
    settings: &Settings,
    credential_vars: &BTreeSet<String>,
) -> Result<ShellEnvironment, ConfigError> {
    for notice in settings.ignored_project_keys() {
        term_eprintln!("Warning: {notice}");
    }
    let policy = settings.shell_environment()?;
    Ok(ShellEnvironment::new(policy, credential_vars.clone()))
}

/// pi 1.6's `isToolModifier`.
fn is_modifier(entry: &str) -> bool {
    entry.starts_with('+') || entry.starts_with('-')
}

/// The `--tools` entries, trimmed, empty ones dropped.
fn tool_list(options: &ControllerOptions) -> Option<Vec<String>> {
    let list = options.tools.as_ref()?;
    Some(
        list.iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
    )
}

/// `--tools` when it changes the default set (only `+name`/`-name` entries), else `None`.
pub fn tool_modifiers(options: &ControllerOptions) -> Option<Vec<String>> {
    tool_list(options).filter(|l| !l.is_empty() && l.iter().all(|e| is_modifier(e)))
}

/// pi 1.6's `applyToolModifiers`: in order, `+name` adds a tool not there yet and `-name`
/// removes one; other entries are ignored.
pub fn apply_modifiers(mut base: Vec<String>, entries: &[String]) -> Vec<String> {
    for entry in entries {
        let (add, name) = match (entry.strip_prefix('+'), entry.strip_prefix('-')) {
            (Some(n), _) => (true, n),
            (_, Some(n)) => (false, n),
            _ => continue,
        };
        let at = base.iter().position(|t| t == name);
        match at {
            None if add && !name.is_empty() => base.push(name.to_string()),
            Some(i) if !add => {
                base.remove(i);
            }
            _ => {}
        }
    }
    base
}

/// Whether the session's own record decides the loadout a resumed session starts with (pi
/// 1.6's `usesDefaultTools`): no `--tools` allowlist (changes to the default set are applied
/// to the restored one), no `--no-tools`, no `--no-builtin-tools`.
pub fn follows_transcript(options: &ControllerOptions) -> bool {
    !options.no_tools
        && !options.no_builtin_tools
        && (options.tools.is_none() || tool_modifiers(options).is_some())
}

/// The `--tools` allowlist (`None` without one, or when it only changes the default set),
/// checked as pi 1.6's `getToolListError` checks it.
fn allowlist(options: &ControllerOptions) -> Result<Option<Vec<String>>, ToolSelectionError> {
    let Some(list) = tool_list(options) else {
        return Ok(None);
    };
    let modifiers: Vec<&String> = list.iter().filter(|e| is_modifier(e)).collect();
    if modifiers.is_empty() {
        return Ok(Some(list));
    }
    if modifiers.len() < list.len() {
        return Err(ToolSelectionError::MixedModifiers);
    }
    if let Some(p) = modifiers.iter().find(|e| e.contains('*')) {
        return Err(ToolSelectionError::PatternModifier(p.to_string()));
    }
    Ok(None)
}

/// The run's tools: selected built-ins plus every hook tool (a hook tool named like a built-in
/// replaces it), then `--tools` as an allowlist over both. `restored` names the built-ins a
/// resumed session's loadout activates, which are registered as well (pi registers every
/// built-in; we hold the ones a run may offer). The shell environment comes with them: the
/// user's own shell commands get the same one as the model's.
pub fn build(
    options: &ControllerOptions,
    settings: &Settings,
    credential_vars: &BTreeSet<String>,
    hook_tools: Vec<Arc<dyn tools::Tool>>,
    mcp: Option<&McpHub>,
    restored: &[String],
) -> Result<(ToolRegistry, ShellEnvironment), ToolSelectionError> {
    let mut reg = ToolRegistry::default();
    // Checked even when no shell will run, so a broken policy is found at once.
    let environment = shell_environment(settings, credential_vars)?;
    if options.no_tools {
        return Ok((reg, environment));
    }
    let hook_names: Vec<String> = hook_tools.iter().map(|t| t.name().to_string()).collect();
    let check = |names: &[String], flag: &'static str| -> Result<(), ToolSelectionError> {
        for n in names {
            if !BUILTIN_NAMES.contains(&n.as_str()) && !hook_names.contains(n) {
                return Err(ToolSelectionError::Unknown {
                    name: n.clone(),
                    flag,
                });
            }
        }
        Ok(())
    };
    let allow = allowlist(options)?;
    let defaults: Vec<String> = DEFAULT_ACTIVE.iter().map(|s| s.to_string()).collect();
    let mut active: Vec<String> = match (&allow, tool_modifiers(options)) {
        (Some(list), _) => {
            check(list, "--tools")?;
            list.clone()
        }
        (None, Some(changes)) => {
            let named: Vec<String> = changes.iter().map(|e| e[1..].to_string()).collect();
            check(&named, "--tools")?;
            apply_modifiers(defaults, &changes)
        }
        (None, None) => defaults,
    };
    if options.no_builtin_tools {
        active.clear();
    } else if allow.is_none() {
        for name in restored {
            if BUILTIN_NAMES.contains(&name.as_str()) && !active.contains(name) {
                active.push(name.clone());
            }
        }
    }
    let excluded = options.exclude_tools.clone().unwrap_or_default();
    check(&excluded, "--exclude-tools")?;
    active.retain(|n| !excluded.contains(n));
    for name in BUILTIN_NAMES {
        if !active.iter().any(|a| a == name) {
            continue;
        }
        let tool = if name == "bash" {
            Some(Arc::new(tools::bash::BashTool::new(
                settings.shell_path().map(Into::into),
                settings.shell_command_prefix().map(Into::into),
                environment.clone(),
            )) as Arc<dyn tools::Tool>)
        } else {
            tools::builtin(name)
        };
        if let Some(t) = tool {
            reg.register(t);
        }
    }
    for t in hook_tools {
        let name = t.name().to_string();
        let allowed = allow.as_ref().is_none_or(|a| a.contains(&name));
        if allowed && !excluded.contains(&name) {
            reg.register(t);
        }
    }
    // MCP tools (the servers' and pi's own for them) come and go as servers connect; an
    // allowlist names what the user wants, and it cannot name them, so with `--tools` they
    // stay out. Hooks' tools registered later join the same layer (one of their own with
    // `--tools`), held to the allowlist and the exclusions.
    match (mcp, &allow) {
        (Some(hub), None) => reg.attach_dynamic(hub.tools().clone()),
        _ => reg.attach_dynamic(Default::default()),
    }
    reg.set_selection(allow, excluded);
    Ok((reg, environment))
}

/// The prompt's view of the tools the model is offered (`active`: the narrowed list, if any):
/// a tool's snippet and guidelines are in the prompt only while it is offered.
pub fn prompt_tools(reg: &ToolRegistry, active: Option<&[String]>) -> Vec<PromptTool> {
    reg.offered_names(active)
        .iter()
        .filter_map(|n| reg.get(n))
        .map(|t| PromptTool {
            name: t.name().to_string(),
            snippet: t.prompt_snippet(),
            guidelines: t.prompt_guidelines(),
        })
        .collect()
}
