//! Which tools a run gets: the built-ins active by default, `--tools` as an allowlist,
//! `--exclude-tools` as a denylist, `--no-builtin-tools` and `--no-tools`; and the environment
//! the `bash` tool's shell gets (`shellEnvironment` and the credential variables pi knows).

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

/// The run's tools: selected built-ins plus every hook tool (a hook tool named like a built-in
/// replaces it), then `--tools` as an allowlist over both. The shell environment comes with
/// them: the user's own shell commands get the same one as the model's.
pub fn build(
    options: &ControllerOptions,
    settings: &Settings,
    credential_vars: &BTreeSet<String>,
    hook_tools: Vec<Arc<dyn tools::Tool>>,
    mcp: Option<&McpHub>,
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
    let allow: Option<Vec<String>> = match &options.tools {
        Some(list) => {
            let list: Vec<String> = list
                .iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            check(&list, "--tools")?;
            Some(list)
        }
        None => None,
    };
    let mut active: Vec<String> = match &allow {
        Some(list) => list.clone(),
        None => DEFAULT_ACTIVE.iter().map(|s| s.to_string()).collect(),
    };
    if options.no_builtin_tools {
        active.clear();
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
