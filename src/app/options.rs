//! The controller's start-up options from pi's command line: the one place the flags become
//! [`ControllerOptions`], so the controller never sees clap's struct.

use crate::cli::Cli;
use crate::controller::options::ControllerOptions;

/// What the flags ask of the controller. `--extension` is a `--hook` (pi's extension flag), so
/// both become the run's hook command lines, `--hook`s first.
pub fn controller_options(
    cli: &Cli,
    model_scope: Vec<crate::config::ScopedModel>,
) -> ControllerOptions {
    ControllerOptions {
        api_key: cli.api_key.clone(),
        faux_script: cli.faux_script.clone(),
        tools: cli.tools.clone(),
        exclude_tools: cli.exclude_tools.clone(),
        no_builtin_tools: cli.no_builtin_tools,
        no_tools: cli.no_tools,
        no_mcp: cli.no_mcp,
        approve: match (cli.approve, cli.no_approve) {
            (true, _) => Some(true),
            (false, true) => Some(false),
            _ => None,
        },
        model_scope,
        system_prompt: cli.system_prompt.clone(),
        append_system_prompt: cli.append_system_prompt.clone(),
        skills: cli.skills.clone(),
        no_skills: cli.no_skills,
        no_context_files: cli.no_context_files,
        prompt_templates: cli.prompt_templates.clone(),
        no_prompt_templates: cli.no_prompt_templates,
        themes: cli.theme_paths(),
        no_themes: cli.no_themes,
        hooks: cli.hooks.iter().chain(&cli.extensions).cloned().collect(),
        claude_hooks: cli.claude_hooks.clone(),
        no_hooks: cli.no_hooks,
        verbose: cli.verbose,
        setup_trigger: if cli.maintenance {
            Some("maintenance")
        } else if cli.init || cli.init_only {
            Some("init")
        } else {
            None
        },
    }
}
