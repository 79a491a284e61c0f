//! What a front end tells the controller at start-up, in the controller's own terms: which
//! tools, resources and hooks a run gets, the key the user gave for this run, the faux script.
//! The controller knows no command line; `app` turns pi's flags into these options, and any
//! other front end (a bridge, an embedding) fills them in without clap.
//!
//! The field names follow the flags they come from, so a reader can map one to the other.

use std::path::PathBuf;

/// The start-up options of one run; fixed for the controller's life (`reload` reads them
/// again, as it reads the flags again in pi).
#[derive(Debug, Clone, Default)]
pub struct ControllerOptions {
    /// The API key for the provider the front end chose (`--api-key`); never stored.
    pub api_key: Option<String>,
    /// The script of the offline faux provider (`--faux-script`; `PI_FAUX_SCRIPT` otherwise).
    pub faux_script: Option<PathBuf>,
    /// The tools allowlist (`--tools`).
    pub tools: Option<Vec<String>>,
    /// The tools denylist (`--exclude-tools`).
    pub exclude_tools: Option<Vec<String>>,
    /// No built-in tools; hook tools stay (`--no-builtin-tools`).
    pub no_builtin_tools: bool,
    /// No tools at all, and no MCP servers (`--no-tools`).
    pub no_tools: bool,
    /// No MCP servers: none from `mcp.json` connects and hooks cannot add any (`--no-mcp`).
    pub no_mcp: bool,
    /// The models Ctrl+P cycles through at start (`--models`, else `enabledModels`); empty:
    /// every model with auth. `/scoped-models` changes it for the rest of the run.
    pub model_scope: Vec<crate::config::ScopedModel>,
    /// Replaces the system prompt: text, or the file it names (`--system-prompt`).
    pub system_prompt: Option<String>,
    /// Appended to the system prompt: texts or files (`--append-system-prompt`).
    pub append_system_prompt: Vec<String>,
    /// Extra skill files or folders, loaded even with `no_skills` (`--skill`).
    pub skills: Vec<PathBuf>,
    /// No skill discovery (`--no-skills`).
    pub no_skills: bool,
    /// No AGENTS.md / CLAUDE.md context files (`--no-context-files`).
    pub no_context_files: bool,
    /// Extra prompt template files or folders (`--prompt-template`).
    pub prompt_templates: Vec<PathBuf>,
    /// No prompt template discovery (`--no-prompt-templates`).
    pub no_prompt_templates: bool,
    /// Theme files or folders for the interactive mode, loaded even with `no_themes`
    /// (`--theme PATH`).
    pub themes: Vec<PathBuf>,
    /// No theme discovery in the user's and the project's folders (`--no-themes`).
    pub no_themes: bool,
    /// Hooks for this run, as command lines (`--hook`, then `--extension`).
    pub hooks: Vec<String>,
    /// Claude Code settings files whose hooks run (`--claude-hooks`).
    pub claude_hooks: Vec<PathBuf>,
    /// No hooks from settings or the hooks folder; `hooks` still load (`--no-hooks`).
    pub no_hooks: bool,
    /// The project-trust decision the command line forces (`-a`: trusted, `-na`: not), for
    /// every project the run works in.
    pub approve: Option<bool>,
    /// Report more on stderr (`--verbose`).
    pub verbose: bool,
    /// Claude Code `Setup` hooks run before `session_start` with this trigger (`--init`,
    /// `--init-only`: `init`; `--maintenance`: `maintenance`).
    pub setup_trigger: Option<&'static str>,
}
