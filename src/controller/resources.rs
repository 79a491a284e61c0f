//! The resources that shape the prompt, gathered at start-up and again on `reload`: SYSTEM.md / APPEND_SYSTEM.md,
//! AGENTS.md-style context files, skills (discovered, `--skill`, and contributed by hooks
//! through `resources_discover`), and prompt templates. Project-level files (`.pi/SYSTEM.md`,
//! `.pi/APPEND_SYSTEM.md`, `.pi/skills`, ancestor `.agents/skills`, `.pi/prompts`) are read
//! only when the project is trusted; context files load regardless of trust, as in pi.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;

use super::options::ControllerOptions;
use crate::agent::Expander;
use crate::hooks::runner::{Discovered, Moment, Runner};
use crate::resources::skills::{
    self, DiscoveryMode, SkillExpansion, SkillOrigin, SkillReader, SkillSet, SkillSource,
};
use crate::resources::system_prompt::{self, text_or_file, PromptOptions, SystemPrompt};
use crate::resources::templates::{self, Origin, Template};
use crate::resources::{context, prompt_docs};
use crate::tools::Exposure;
use crate::tools::ToolRegistry;

pub struct PromptResources {
    pub custom_prompt: Option<String>,
    pub append: Vec<String>,
    pub project_context: Option<String>,
    pub templates: Vec<Template>,
    pub skills: Arc<SkillSet>,
    /// The files the prompt was built from (SYSTEM.md, APPEND_SYSTEM.md, context files), in
    /// prompt order: what the interactive header lists under `[Context]`.
    pub context_paths: Vec<PathBuf>,
    /// What was wrong with the resources (an unreadable context file, a template conflict, a
    /// skill's problem), one line each, for the interactive header.
    pub warnings: Vec<String>,
}

impl PromptResources {
    /// The system prompt over these resources and the tools the model is offered (`active`:
    /// the narrowed list, if any): their snippets, and the `<available_skills>` block when a
    /// tool that can read a skill is among them.
    pub fn system_prompt(
        &self,
        tools: &ToolRegistry,
        active: Option<&[String]>,
        cwd: &Path,
    ) -> SystemPrompt {
        let hidden: Vec<&str> = ["read", "bash"]
            .into_iter()
            .filter(|n| tools.exposure(n) == Some(Exposure::Hidden))
            .collect();
        let skills_block = SkillReader::pick(&tools.offered_names(active), &hidden)
            .and_then(|r| skills::prompt_block_for(&self.skills, r));
        system_prompt::build(&PromptOptions {
            custom_prompt: self.custom_prompt.clone(),
            append: self.append.clone(),
            docs: prompt_docs::docs_root().map(prompt_docs::section),
            mcp_servers: tools.dynamic().and_then(|d| crate::mcp::prompt_section(d)),
            tools: super::tools::prompt_tools(tools, active),
            project_context: self.project_context.clone(),
            skills_block,
            cwd: cwd.display().to_string(),
        })
    }

    /// `/skill:name args` first, then `/template args`, as pi expands user input.
    pub fn expander(&self) -> Option<Expander> {
        if self.templates.is_empty() && self.skills.skills.is_empty() {
            return None;
        }
        let templates = self.templates.clone();
        let skills = self.skills.clone();
        Some(Arc::new(move |text: &str| {
            match skills::expand_skill_command(text, &skills) {
                SkillExpansion::Expanded(t) => return Some(t),
                SkillExpansion::Unknown(name) => {
                    term_eprintln!("Warning: unknown skill {name:?}; the text is sent as typed")
                }
                SkillExpansion::Unreadable { name, error } => term_eprintln!(
                    "Warning: cannot read skill {name:?} ({error}); the text is sent as typed"
                ),
                SkillExpansion::NotACommand => {}
            }
            templates::expand_template(text, &templates)
        }))
    }
}

fn git_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

fn load_skills(
    options: &ControllerOptions,
    agent_dir: &Path,
    cwd: &Path,
    trusted: bool,
    hook_paths: &[PathBuf],
) -> SkillSet {
    let mut sources = Vec::new();
    if !options.no_skills {
        let home = dirs::home_dir().unwrap_or_else(|| PathBuf::from("/"));
        let root = git_root(cwd);
        sources.extend(skills::default_sources(
            agent_dir,
            cwd,
            &home,
            trusted,
            root.as_deref(),
        ));
    }
    sources.extend(
        options
            .skills
            .iter()
            .map(|p| SkillSource::new(cwd.join(p), DiscoveryMode::Pi, SkillOrigin::Cli)),
    );
    sources.extend(hook_paths.iter().map(|p| {
        SkillSource::new(
            p.clone(),
            DiscoveryMode::Pi,
            SkillOrigin::Hook("hook".into()),
        )
    }));
    let set = skills::discover(&sources);
    for d in &set.diagnostics {
        term_eprintln!("Warning: {}: {}", d.path.display(), d.message);
    }
    set
}

/// The instruction files [`load`] would read (SYSTEM.md, APPEND_SYSTEM.md, context files),
/// each with Claude Code's `memory_type`: `User` in the agent directory, else `Project`.
fn instruction_files(
    options: &ControllerOptions,
    agent_dir: &Path,
    cwd: &Path,
    trusted: bool,
) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if options.system_prompt.is_none() {
        files.extend(context::system_md(agent_dir, cwd, trusted).map(|(p, _)| p));
    }
    if options.append_system_prompt.is_empty() {
        files.extend(context::append_system_md(agent_dir, cwd, trusted).map(|(p, _)| p));
    }
    if !options.no_context_files {
        files.extend(
            context::load_context_files(agent_dir, cwd)
                .into_iter()
                .map(|f| f.path),
        );
    }
    files
}

/// Claude Code's InstructionsLoaded, for each instruction file about to be loaded: the files
/// a hook blocked, which [`load`] leaves out (pi says which and why on stderr).
pub async fn refused_instructions(
    runner: &Runner,
    options: &ControllerOptions,
    agent_dir: &Path,
    cwd: &Path,
    trusted: bool,
) -> HashSet<PathBuf> {
    let mut refused = HashSet::new();
    if !runner.any_at(Moment::InstructionsLoaded) {
        return refused;
    }
    for path in instruction_files(options, agent_dir, cwd, trusted) {
        let memory_type = if path.starts_with(agent_dir) {
            "User"
        } else {
            "Project"
        };
        let payload = json!({"file_path": path.display().to_string(),
                             "memory_type": memory_type, "load_reason": "session_start"});
        let verdict = runner.moment(Moment::InstructionsLoaded, &payload).await;
        if let Some((by, why)) = verdict.blocked {
            term_eprintln!(
                "Warning: {} was not loaded: hook {by} blocked it: {why}",
                path.display()
            );
            refused.insert(path);
        }
    }
    refused
}

pub fn load(
    options: &ControllerOptions,
    agent_dir: &Path,
    cwd: &Path,
    trusted: bool,
    discovered: &Discovered,
    refused: &HashSet<PathBuf>,
) -> PromptResources {
    let mut context_paths = Vec::new();
    let mut warnings = Vec::new();
    let mut allowed = |(path, text): (PathBuf, String)| {
        (!refused.contains(&path)).then(|| {
            context_paths.push(path);
            text
        })
    };
    let custom_prompt = match &options.system_prompt {
        Some(v) => Some(text_or_file(v, cwd)),
        None => context::system_md(agent_dir, cwd, trusted).and_then(&mut allowed),
    };
    // As pi 1.6: `--append-system-prompt` takes the place of APPEND_SYSTEM.md.
    let append: Vec<String> = if options.append_system_prompt.is_empty() {
        context::append_system_md(agent_dir, cwd, trusted)
            .and_then(&mut allowed)
            .into_iter()
            .collect()
    } else {
        options
            .append_system_prompt
            .iter()
            .map(|v| text_or_file(v, cwd))
            .collect()
    };
    let project_context = if options.no_context_files {
        None
    } else {
        let (mut files, found_warnings) = context::load_context_files_reporting(agent_dir, cwd);
        for w in found_warnings {
            term_eprintln!("Warning: {w}");
            warnings.push(w.to_string());
        }
        files.retain(|f| !refused.contains(&f.path));
        context_paths.extend(files.iter().map(|f| f.path.clone()));
        context::render_project_context(&files)
    };
    let mut dirs: Vec<(PathBuf, Origin)> = Vec::new();
    if !options.no_prompt_templates {
        // A trusted project's templates come first, as its skills do: the nearer source wins.
        if trusted {
            dirs.push((cwd.join(".pi").join("prompts"), Origin::Project));
        }
        dirs.push((agent_dir.join("prompts"), Origin::User));
    }
    dirs.extend(
        options
            .prompt_templates
            .iter()
            .map(|p| (cwd.join(p), Origin::Cli)),
    );
    // What hooks contributed (`resources_discover`) comes last, as pi merges extension paths
    // after the configured ones: a hook cannot shadow the user's own templates.
    dirs.extend(
        discovered
            .prompt_paths
            .iter()
            .map(|p| (p.clone(), Origin::Hook)),
    );
    let (templates, diagnostics) = templates::discover_templates(&dirs);
    for d in diagnostics {
        term_eprintln!("Warning: {}: {}", d.path.display(), d.message);
        warnings.push(format!("{}: {}", d.path.display(), d.message));
    }
    let skills = load_skills(options, agent_dir, cwd, trusted, &discovered.skill_paths);
    warnings.extend(
        skills
            .diagnostics
            .iter()
            .map(|d| format!("{}: {}", d.path.display(), d.message)),
    );
    PromptResources {
        custom_prompt,
        append,
        project_context,
        templates,
        skills: Arc::new(skills),
        context_paths,
        warnings,
    }
}
