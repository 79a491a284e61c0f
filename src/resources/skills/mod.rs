//! Skills (the Agent Skills standard as pi implements it): finding `SKILL.md` packages and
//! plain-Markdown skills on disk, validating their frontmatter, resolving name collisions,
//! rendering the `<available_skills>` prompt index and expanding `/skill:name args`.
//!
//! Only metadata stays in memory (name, description, paths): a skill's body is read when the
//! user expands it or the model reads the file, so a changed body is seen without a reload.
//! Everything this module has to say about bad input comes back as [`Diagnostic`] data; it
//! never prints, so the caller decides how (and whether) to show warnings.
//!
//! Layout: `discover` walks directories, `frontmatter` parses the YAML header, `validate`
//! turns one file into a skill, `prompt` renders the index, `expand` handles `/skill:`.

mod discover;
mod expand;
mod frontmatter;
mod prompt;
mod validate;

#[cfg(test)]
mod fixture_tests;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

pub use expand::{expand_skill_command, SkillExpansion};
pub use frontmatter::FrontmatterError;
pub use prompt::{escape_xml, prompt_block, prompt_block_for, SkillReader};

/// How a directory is scanned (seeds 3.2). `Pi` (`~/.pi/agent/skills`, `.pi/skills`, settings
/// paths, `--skill` directories): root `.md` files are skills, and `SKILL.md` directories are
/// found recursively. `Agents` (`.agents/skills`): root `.md` files are not skills, but `.md`
/// files in subdirectories are candidates alongside `SKILL.md` directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoveryMode {
    Pi,
    Agents,
}

/// Where a skill path came from. Sources are processed in [`SkillOrigin::precedence`] order and
/// the first skill with a name wins, so this order decides every collision (seeds 3.1).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SkillOrigin {
    /// A path listed under `skills` in the project's `.pi/settings.json`.
    ProjectSetting,
    /// Auto-discovered in the project: `.pi/skills`, `.agents/skills` up to the git root.
    Project,
    /// A path listed under `skills` in the user's settings.
    UserSetting,
    /// Auto-discovered for the user: `~/.pi/agent/skills`, `~/.agents/skills`.
    User,
    /// A pi package's `skills/` directory.
    Package,
    /// `--skill <path>`: loaded after discovery, so it does not override a discovered name.
    Cli,
    /// Contributed by the named hook through `resources_discover` (seeds part 13).
    Hook(String),
}

impl SkillOrigin {
    /// Lower is processed first: project settings > project discovery > user settings > user
    /// discovery > packages, then `--skill` paths, then hook contributions.
    pub fn precedence(&self) -> u8 {
        match self {
            SkillOrigin::ProjectSetting => 0,
            SkillOrigin::Project => 1,
            SkillOrigin::UserSetting => 2,
            SkillOrigin::User => 3,
            SkillOrigin::Package => 4,
            SkillOrigin::Cli => 5,
            SkillOrigin::Hook(_) => 6,
        }
    }

    /// Auto-discovered locations are optional; a path someone named explicitly should exist.
    fn is_explicit(&self) -> bool {
        !matches!(self, SkillOrigin::Project | SkillOrigin::User)
    }
}

/// One place to look for skills: a directory scanned in `mode`, or a single `.md` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSource {
    pub path: PathBuf,
    pub mode: DiscoveryMode,
    pub origin: SkillOrigin,
}

impl SkillSource {
    pub fn new(path: impl Into<PathBuf>, mode: DiscoveryMode, origin: SkillOrigin) -> Self {
        Self {
            path: path.into(),
            mode,
            origin,
        }
    }
}

/// A loaded skill's metadata. The body is deliberately absent (progressive disclosure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// `…/SKILL.md` or the plain `.md` file; absolute when the source path was.
    pub file_path: PathBuf,
    /// The file's directory: relative references in the body resolve against it.
    pub base_dir: PathBuf,
    pub origin: SkillOrigin,
    /// `disable-model-invocation: true`: left out of the prompt, still usable as `/skill:name`.
    pub disable_model_invocation: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticLevel {
    Warning,
    Collision,
}

/// The two files behind a name collision; the winner is the one that was loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collision {
    pub name: String,
    pub winner_path: PathBuf,
    pub loser_path: PathBuf,
}

/// Something the user may want to fix; `path` is the file (or source path) concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub level: DiagnosticLevel,
    pub path: PathBuf,
    pub message: String,
    pub collision: Option<Collision>,
}

impl Diagnostic {
    fn warning(path: &Path, message: impl Into<String>) -> Self {
        Self {
            level: DiagnosticLevel::Warning,
            path: path.to_path_buf(),
            message: message.into(),
            collision: None,
        }
    }
}

/// The result of discovery: skills in load order, then warnings in discovery order followed by
/// collisions (pi reports them in that order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSet {
    pub skills: Vec<Skill>,
    pub diagnostics: Vec<Diagnostic>,
}

impl SkillSet {
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// Skills the model may choose by itself (shown in the prompt index).
    pub fn visible(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter().filter(|s| !s.disable_model_invocation)
    }
}

/// Loads every source, in precedence order (stable for equal ranks, so callers control the
/// order within a rank). The same real file reached twice (symlinks, overlapping sources) is
/// loaded once, silently; a second file with a taken name is reported as a collision.
pub fn discover(sources: &[SkillSource]) -> SkillSet {
    let mut ordered: Vec<&SkillSource> = sources.iter().collect();
    ordered.sort_by_key(|s| s.origin.precedence());

    let mut skills: Vec<Skill> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut real_paths: HashSet<PathBuf> = HashSet::new();
    let mut diagnostics = Vec::new();
    let mut collisions = Vec::new();

    for source in ordered {
        // Locations in the prompt must be absolute; `absolute` keeps symlinks as written.
        let root = std::path::absolute(&source.path).unwrap_or_else(|_| source.path.clone());
        for file in source_files(&root, source, &mut diagnostics) {
            let (skill, mut diags) = validate::load_skill_file(&file, &source.origin);
            diagnostics.append(&mut diags);
            let Some(skill) = skill else { continue };
            let real =
                std::fs::canonicalize(&skill.file_path).unwrap_or_else(|_| skill.file_path.clone());
            if real_paths.contains(&real) {
                continue;
            }
            if let Some(&winner) = by_name.get(&skill.name) {
                collisions.push(Diagnostic {
                    level: DiagnosticLevel::Collision,
                    path: skill.file_path.clone(),
                    message: format!("name \"{}\" collision", skill.name),
                    collision: Some(Collision {
                        name: skill.name.clone(),
                        winner_path: skills[winner].file_path.clone(),
                        loser_path: skill.file_path,
                    }),
                });
            } else {
                by_name.insert(skill.name.clone(), skills.len());
                real_paths.insert(real);
                skills.push(skill);
            }
        }
    }
    diagnostics.append(&mut collisions);
    SkillSet {
        skills,
        diagnostics,
    }
}

/// The candidate files of one source: a directory's discovered entries, or the file itself.
fn source_files(
    root: &Path,
    source: &SkillSource,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<PathBuf> {
    match std::fs::metadata(root) {
        Ok(meta) if meta.is_dir() => discover::collect_candidates(root, source.mode),
        Ok(meta) if meta.is_file() && root.extension().is_some_and(|e| e == "md") => {
            vec![root.to_path_buf()]
        }
        Ok(_) => {
            diagnostics.push(Diagnostic::warning(
                root,
                "skill path is not a markdown file",
            ));
            Vec::new()
        }
        Err(_) if source.origin.is_explicit() => {
            diagnostics.push(Diagnostic::warning(root, "skill path does not exist"));
            Vec::new()
        }
        Err(_) => Vec::new(),
    }
}

/// The standard locations, in precedence order (seeds 3.1–3.2): project `.pi/skills` (pi
/// mode), then `.agents/skills` in `cwd` and each ancestor up to `git_root` (or the filesystem
/// root), nearest first (agents mode) — both only when the project is trusted — then
/// `<agent_dir>/skills` (pi mode) and `~/.agents/skills` (agents mode). A project ancestor's
/// `.agents/skills` that is the user's own `~/.agents/skills` is left to the user entry.
pub fn default_sources(
    agent_dir: &Path,
    cwd: &Path,
    home: &Path,
    project_trusted: bool,
    git_root: Option<&Path>,
) -> Vec<SkillSource> {
    let user_agents = home.join(".agents").join("skills");
    let mut sources = Vec::new();
    if project_trusted {
        sources.push(SkillSource::new(
            cwd.join(".pi").join("skills"),
            DiscoveryMode::Pi,
            SkillOrigin::Project,
        ));
        for dir in cwd.ancestors() {
            let candidate = dir.join(".agents").join("skills");
            if candidate != user_agents {
                sources.push(SkillSource::new(
                    candidate,
                    DiscoveryMode::Agents,
                    SkillOrigin::Project,
                ));
            }
            if git_root == Some(dir) {
                break;
            }
        }
    }
    sources.push(SkillSource::new(
        agent_dir.join("skills"),
        DiscoveryMode::Pi,
        SkillOrigin::User,
    ));
    sources.push(SkillSource::new(
        user_agents,
        DiscoveryMode::Agents,
        SkillOrigin::User,
    ));
    sources
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(sources: &[SkillSource]) -> Vec<(String, DiscoveryMode, SkillOrigin)> {
        sources
            .iter()
            .map(|s| (s.path.display().to_string(), s.mode, s.origin.clone()))
            .collect()
    }

    #[test]
    fn default_sources_trusted_project_stops_at_git_root() {
        let got = default_sources(
            Path::new("/home/u/.pi/agent"),
            Path::new("/work/repo/pkg/sub"),
            Path::new("/home/u"),
            true,
            Some(Path::new("/work/repo")),
        );
        use DiscoveryMode::*;
        use SkillOrigin::*;
        assert_eq!(
            paths(&got),
            vec![
                ("/work/repo/pkg/sub/.pi/skills".into(), Pi, Project),
                ("/work/repo/pkg/sub/.agents/skills".into(), Agents, Project),
                ("/work/repo/pkg/.agents/skills".into(), Agents, Project),
                ("/work/repo/.agents/skills".into(), Agents, Project),
                ("/home/u/.pi/agent/skills".into(), Pi, User),
                ("/home/u/.agents/skills".into(), Agents, User),
            ]
        );
    }

    #[test]
    fn default_sources_without_git_root_reach_the_filesystem_root_but_skip_user_agents() {
        let got = default_sources(
            Path::new("/home/u/.pi/agent"),
            Path::new("/home/u/proj"),
            Path::new("/home/u"),
            true,
            None,
        );
        let got: Vec<String> = paths(&got).into_iter().map(|p| p.0).collect();
        assert_eq!(
            got,
            vec![
                "/home/u/proj/.pi/skills",
                "/home/u/proj/.agents/skills",
                "/home/.agents/skills",
                "/.agents/skills",
                "/home/u/.pi/agent/skills",
                "/home/u/.agents/skills",
            ]
        );
    }

    #[test]
    fn untrusted_project_contributes_no_sources() {
        let got = default_sources(
            Path::new("/a"),
            Path::new("/p"),
            Path::new("/h"),
            false,
            None,
        );
        assert!(got.iter().all(|s| s.origin == SkillOrigin::User));
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn precedence_follows_the_seeds_order() {
        let order = [
            SkillOrigin::ProjectSetting,
            SkillOrigin::Project,
            SkillOrigin::UserSetting,
            SkillOrigin::User,
            SkillOrigin::Package,
            SkillOrigin::Cli,
            SkillOrigin::Hook("h".into()),
        ];
        assert!(order
            .windows(2)
            .all(|w| w[0].precedence() < w[1].precedence()));
    }
}
