//! What this run loaded, for a front end's start-up header (pi 1.6's `[Context]`,
//! `[Skills]`, `[Prompts]`, `[Extensions]` sections): the files the prompt was built from,
//! skills, prompt templates, hooks and MCP servers, and what was wrong with any of them.
//! A query like the others, answered from the current environment and hook generation.

use std::path::PathBuf;

use super::SessionController;

/// One run's resources as a person would name them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    /// SYSTEM.md, APPEND_SYSTEM.md and the context files, in prompt order.
    pub context_files: Vec<PathBuf>,
    /// Skill names, with the file each was read from.
    pub skills: Vec<(String, PathBuf)>,
    /// Prompt template names (without the slash), with their files.
    pub templates: Vec<(String, PathBuf)>,
    /// Hook names in load order (out-of-process hooks, then Claude Code command hooks).
    pub hooks: Vec<String>,
    /// MCP server names.
    pub mcp_servers: Vec<String>,
    /// One line per problem found while loading the resources.
    pub warnings: Vec<String>,
}

impl SessionController {
    /// What this run loaded (see [`Loaded`]).
    pub fn loaded_resources(&self) -> Loaded {
        let env = self.core.env();
        let r = &env.resources;
        let hooks = self.core.hooks();
        let mut hook_names: Vec<String> = hooks.instances.iter().map(|h| h.name()).collect();
        hook_names.extend(hooks.claude.names());
        Loaded {
            context_files: r.context_paths.clone(),
            skills: r
                .skills
                .skills
                .iter()
                .map(|s| (s.name.clone(), s.file_path.clone()))
                .collect(),
            templates: r
                .templates
                .iter()
                .map(|t| (t.name.clone(), t.path.clone()))
                .collect(),
            hooks: hook_names,
            mcp_servers: self
                .mcp()
                .map(|hub| hub.views().into_iter().map(|v| v.name).collect())
                .unwrap_or_default(),
            warnings: r.warnings.clone(),
        }
    }
}
