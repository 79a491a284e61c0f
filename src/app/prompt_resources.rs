//! The resources that shape the prompt, gathered for one run: SYSTEM.md / APPEND_SYSTEM.md,
//! AGENTS.md-style context files, and prompt templates. Project-level files are only read
//! once the project is trusted; until trust lands every project counts as untrusted, so only
//! the global files apply (context files load regardless of trust, as in pi).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent::Expander;
use crate::cli::Cli;
use crate::resources::context;
use crate::resources::system_prompt::text_or_file;
use crate::resources::templates::{self, Origin, Template};

pub struct PromptResources {
    pub custom_prompt: Option<String>,
    pub append: Vec<String>,
    pub project_context: Option<String>,
    pub templates: Vec<Template>,
}

impl PromptResources {
    /// Template expansion for prompts (`/name args`), applied after the `input` hooks.
    pub fn expander(&self) -> Option<Expander> {
        if self.templates.is_empty() {
            return None;
        }
        let templates = self.templates.clone();
        Some(Arc::new(move |text: &str| {
            templates::expand_template(text, &templates)
        }))
    }
}

pub fn load(cli: &Cli, agent_dir: &Path, cwd: &Path) -> PromptResources {
    let trusted = false;
    let custom_prompt = match &cli.system_prompt {
        Some(v) => Some(text_or_file(v, cwd)),
        None => context::system_md(agent_dir, cwd, trusted).map(|(_, text)| text),
    };
    let mut append: Vec<String> = cli
        .append_system_prompt
        .iter()
        .map(|v| text_or_file(v, cwd))
        .collect();
    if let Some((_, text)) = context::append_system_md(agent_dir, cwd, trusted) {
        append.push(text);
    }
    let project_context = if cli.no_context_files {
        None
    } else {
        let (files, warnings) = context::load_context_files_reporting(agent_dir, cwd);
        for w in warnings {
            eprintln!("Warning: {w}");
        }
        context::render_project_context(&files)
    };
    let mut dirs: Vec<(PathBuf, Origin)> = Vec::new();
    if !cli.no_prompt_templates {
        dirs.push((agent_dir.join("prompts"), Origin::User));
    }
    dirs.extend(
        cli.prompt_templates
            .iter()
            .map(|p| (cwd.join(p), Origin::Cli)),
    );
    let (templates, diagnostics) = templates::discover_templates(&dirs);
    for d in diagnostics {
        eprintln!("Warning: {}: {}", d.path.display(), d.message);
    }
    PromptResources {
        custom_prompt,
        append,
        project_context,
        templates,
    }
}
