//! Context files, `SYSTEM.md` / `APPEND_SYSTEM.md`, and the question of whether a directory
//! holds project resources that need trust (pi's `resource-loader.ts` and `trust-manager.ts`).
//!
//! Context files (`AGENTS.md`, `CLAUDE.md`, …) load regardless of trust: they are prompt text,
//! which a repository could inject anyway. `SYSTEM.md` and `APPEND_SYSTEM.md` from the project
//! replace or extend the whole prompt, so they are read only when the caller says the project
//! is trusted. Nothing here prints; unreadable files come back as warnings.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The per-directory candidates, in priority order: the first that exists as a file wins and
/// the others in the same directory are never read.
pub const CONTEXT_FILE_NAMES: [&str; 5] = [
    "AGENTS.override.md",
    "AGENTS.md",
    "AGENTS.MD",
    "CLAUDE.md",
    "CLAUDE.MD",
];

/// The project configuration directory name (`<cwd>/.pi`).
pub const PROJECT_DIR_NAME: &str = ".pi";

/// Entries of `<cwd>/.pi` whose presence means the project needs a trust decision: pi's list
/// plus `hooks` (ours: project hooks are executables). `mcp.json` is in pi's list because
/// project MCP servers are started processes.
pub const TRUST_REQUIRING_ENTRIES: [&str; 9] = [
    "settings.json",
    "mcp.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
    "hooks",
];

/// One loaded context file. `path` is the path as discovered (not canonicalized) because it is
/// shown to the model and the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    pub path: PathBuf,
    pub content: String,
}

/// Why a candidate file was skipped. Returned as data so the caller decides how to surface it.
#[derive(Debug, thiserror::Error)]
pub enum ContextWarning {
    #[error("could not read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Context files for `cwd`: the agent directory's file first, then one per ancestor from the
/// filesystem root down to `cwd`. Read failures are dropped; see [`load_context_files_reporting`].
pub fn load_context_files(agent_dir: &Path, cwd: &Path) -> Vec<ContextFile> {
    load_context_files_reporting(agent_dir, cwd).0
}

/// [`load_context_files`] plus the warnings for candidates that existed but could not be read.
pub fn load_context_files_reporting(
    agent_dir: &Path,
    cwd: &Path,
) -> (Vec<ContextFile>, Vec<ContextWarning>) {
    let mut warnings = Vec::new();
    let mut files = Vec::new();
    // Keyed by real path so a symlinked cwd, or an agent dir inside the project, cannot load
    // the same file twice under two names.
    let mut seen: HashSet<PathBuf> = HashSet::new();

    if let Some(global) = context_file_in(&absolute(agent_dir), &mut warnings) {
        seen.insert(real_path(&global.path));
        files.push(global);
    }

    let cwd = absolute(cwd);
    let shadowed = shadowed_context_file(&cwd);
    let mut ancestors = Vec::new();
    for dir in cwd.ancestors() {
        let Some(file) = context_file_in(dir, &mut warnings) else {
            continue;
        };
        let real = real_path(&file.path);
        if shadowed.as_ref() == Some(&real) || !seen.insert(real) {
            continue;
        }
        ancestors.push(file);
    }
    // Walked cwd → root; the prompt wants the broadest instructions first.
    ancestors.reverse();
    files.extend(ancestors);
    (files, warnings)
}

/// The first candidate in `dir` that is a readable file. A directory named like a candidate is
/// skipped, and so is an unreadable file (with a warning), so the next candidate gets a chance.
fn context_file_in(dir: &Path, warnings: &mut Vec<ContextWarning>) -> Option<ContextFile> {
    for name in CONTEXT_FILE_NAMES {
        let path = dir.join(name);
        match fs::metadata(&path) {
            Ok(meta) if meta.is_file() => {}
            _ => continue,
        }
        match read_text(&path) {
            Ok(content) => return Some(ContextFile { path, content }),
            Err(source) => warnings.push(ContextWarning::Read { path, source }),
        }
    }
    None
}

/// The main checkout's context file that a nested linked worktree's own copy shadows. Both are
/// the same tracked file, so loading both would repeat it. `None` for ordinary repositories,
/// sibling worktrees (the main checkout is not an ancestor), bare layouts and submodules.
fn shadowed_context_file(cwd: &Path) -> Option<PathBuf> {
    let git = find_git_paths(cwd)?;
    let common = real_path(&git.common_git_dir);
    let worktree_root = real_path(&git.repo_dir);
    let main_root = common.parent()?.to_path_buf();
    if worktree_root == main_root || !worktree_root.starts_with(&main_root) {
        return None;
    }
    // The parent of the common git dir is the main worktree only when its `.git` is that dir.
    if real_path(&main_root.join(".git")) != common {
        return None;
    }
    let own = context_file_in(&worktree_root, &mut Vec::new())?;
    let name = own.path.file_name()?;
    Some(main_root.join(name))
}

struct GitPaths {
    repo_dir: PathBuf,
    common_git_dir: PathBuf,
}

/// Walks up from `cwd` to the nearest `.git`: a directory (ordinary repository) or a file with
/// `gitdir: …` (linked worktree, whose `commondir` names the shared git directory).
fn find_git_paths(cwd: &Path) -> Option<GitPaths> {
    for dir in cwd.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = fs::metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            if !dot_git.join("HEAD").exists() {
                return None;
            }
            return Some(GitPaths {
                repo_dir: dir.to_path_buf(),
                common_git_dir: dot_git,
            });
        }
        let text = fs::read_to_string(&dot_git).ok()?;
        let git_dir = dir.join(text.trim().strip_prefix("gitdir: ")?.trim());
        if !git_dir.join("HEAD").exists() {
            return None;
        }
        let common_git_dir = match fs::read_to_string(git_dir.join("commondir")) {
            Ok(common) => git_dir.join(common.trim()),
            Err(_) => git_dir,
        };
        return Some(GitPaths {
            repo_dir: dir.to_path_buf(),
            common_git_dir,
        });
    }
    None
}

/// The content of pi's `project_context` section (the prompt builder adds the tags): an intro
/// line, then one `<project_instructions>` element per file. `None` when there are no files,
/// so the prompt has no empty section.
pub fn render_project_context(files: &[ContextFile]) -> Option<String> {
    if files.is_empty() {
        return None;
    }
    let mut parts = vec!["Project-specific instructions and guidelines:".to_string()];
    for f in files {
        parts.push(format!(
            "<project_instructions path=\"{}\">\n{}\n</project_instructions>",
            f.path.display(),
            f.content
        ));
    }
    Some(parts.join("\n\n"))
}

/// The replacement system prompt file: `<cwd>/.pi/SYSTEM.md` when the project is trusted, else
/// `<agent_dir>/SYSTEM.md`. `--system-prompt` takes precedence; that is the caller's check.
pub fn system_md(agent_dir: &Path, cwd: &Path, trusted: bool) -> Option<(PathBuf, String)> {
    project_or_global(agent_dir, cwd, trusted, "SYSTEM.md")
}

/// The appended system prompt file: `<cwd>/.pi/APPEND_SYSTEM.md` when trusted, else the agent
/// directory's. Only one is used, as pi does.
pub fn append_system_md(agent_dir: &Path, cwd: &Path, trusted: bool) -> Option<(PathBuf, String)> {
    project_or_global(agent_dir, cwd, trusted, "APPEND_SYSTEM.md")
}

fn project_or_global(
    agent_dir: &Path,
    cwd: &Path,
    trusted: bool,
    name: &str,
) -> Option<(PathBuf, String)> {
    let project = absolute(cwd).join(PROJECT_DIR_NAME).join(name);
    if trusted {
        if let Some(found) = read_if_file(&project) {
            return Some(found);
        }
    }
    read_if_file(&absolute(agent_dir).join(name))
}

fn read_if_file(path: &Path) -> Option<(PathBuf, String)> {
    if !path.is_file() {
        return None;
    }
    read_text(path).ok().map(|text| (path.to_path_buf(), text))
}

/// Whether `cwd` holds project resources gated by trust: any of [`TRUST_REQUIRING_ENTRIES`]
/// in `<cwd>/.pi` (only the cwd itself, and a bare `.pi/` does not count), or `.agents/skills`
/// in the cwd or any ancestor, except the user's own `<home>/.agents/skills`.
pub fn project_needs_trust(cwd: &Path, home: &Path) -> bool {
    let cwd = real_path(&absolute(cwd));
    let config = cwd.join(PROJECT_DIR_NAME);
    if TRUST_REQUIRING_ENTRIES
        .iter()
        .any(|entry| config.join(entry).exists())
    {
        return true;
    }
    let user_skills = real_path(&absolute(home)).join(".agents").join("skills");
    cwd.ancestors().any(|dir| {
        let skills = dir.join(".agents").join("skills");
        skills != user_skills && skills.exists()
    })
}

/// Reads a text file the way pi does: invalid UTF-8 is replaced rather than rejected, and a
/// leading byte-order mark is dropped so it never reaches the prompt.
pub(crate) fn read_text(path: &Path) -> io::Result<String> {
    let bytes = fs::read(path)?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(text.strip_prefix('\u{feff}').unwrap_or(&text).to_string())
}

/// An absolute path with `.` and `..` resolved lexically (as Node's `path.resolve`), so the
/// ancestor walk visits real directories only once.
fn absolute(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    crate::session::paths::resolve_path(Path::new("/"), &abs)
}

fn real_path(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// A temp root with `agent/` and `home/` kept apart from the project tree `proj/`.
    struct Fixture {
        _tmp: TempDir,
        root: PathBuf,
    }

    impl Fixture {
        fn new() -> Self {
            let tmp = TempDir::new().unwrap();
            let root = fs::canonicalize(tmp.path()).unwrap();
            Fixture { _tmp: tmp, root }
        }
        fn p(&self, rel: &str) -> PathBuf {
            self.root.join(rel)
        }
        fn dir(&self, rel: &str) -> PathBuf {
            let p = self.p(rel);
            fs::create_dir_all(&p).unwrap();
            p
        }
    }

    fn paths(files: &[ContextFile]) -> Vec<PathBuf> {
        files.iter().map(|f| f.path.clone()).collect()
    }

    #[test]
    fn global_first_then_root_down_to_cwd() {
        let fx = Fixture::new();
        write(&fx.p("agent/AGENTS.md"), "global");
        write(&fx.p("proj/AGENTS.md"), "proj");
        write(&fx.p("proj/a/CLAUDE.md"), "a");
        write(&fx.p("proj/a/b/AGENTS.md"), "b");
        let cwd = fx.dir("proj/a/b");
        let files = load_context_files(&fx.p("agent"), &cwd);
        assert_eq!(
            paths(&files),
            vec![
                fx.p("agent/AGENTS.md"),
                fx.p("proj/AGENTS.md"),
                fx.p("proj/a/CLAUDE.md"),
                fx.p("proj/a/b/AGENTS.md"),
            ]
        );
        let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(contents, ["global", "proj", "a", "b"]);
    }

    #[test]
    fn dot_dot_in_cwd_is_resolved_before_walking() {
        let fx = Fixture::new();
        write(&fx.p("proj/AGENTS.md"), "p");
        write(&fx.p("proj/x/AGENTS.md"), "x");
        fx.dir("proj/y");
        let files = load_context_files(&fx.dir("agent"), &fx.p("proj/x/../y"));
        assert_eq!(paths(&files), vec![fx.p("proj/AGENTS.md")]);
    }

    #[test]
    fn first_candidate_wins_within_a_directory() {
        let fx = Fixture::new();
        write(&fx.p("proj/AGENTS.override.md"), "override");
        write(&fx.p("proj/AGENTS.md"), "agents");
        write(&fx.p("proj/CLAUDE.md"), "claude");
        let files = load_context_files(&fx.dir("agent"), &fx.p("proj"));
        assert_eq!(paths(&files), vec![fx.p("proj/AGENTS.override.md")]);

        fs::remove_file(fx.p("proj/AGENTS.override.md")).unwrap();
        let files = load_context_files(&fx.p("agent"), &fx.p("proj"));
        assert_eq!(files[0].content, "agents");

        fs::remove_file(fx.p("proj/AGENTS.md")).unwrap();
        let files = load_context_files(&fx.p("agent"), &fx.p("proj"));
        assert_eq!(files[0].content, "claude");
    }

    #[test]
    fn upper_case_md_variants_are_found() {
        let fx = Fixture::new();
        write(&fx.p("proj/CLAUDE.MD"), "shout");
        let files = load_context_files(&fx.dir("agent"), &fx.p("proj"));
        // On a case-insensitive filesystem an earlier spelling may match the same file.
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].content, "shout");
    }

    #[test]
    fn a_directory_named_like_a_candidate_is_skipped() {
        let fx = Fixture::new();
        fx.dir("proj/AGENTS.md");
        write(&fx.p("proj/CLAUDE.md"), "claude");
        let files = load_context_files(&fx.dir("agent"), &fx.p("proj"));
        assert_eq!(paths(&files), vec![fx.p("proj/CLAUDE.md")]);
    }

    #[test]
    fn cwd_equal_to_agent_dir_loads_the_file_once() {
        let fx = Fixture::new();
        write(&fx.p("agent/AGENTS.md"), "g");
        let files = load_context_files(&fx.p("agent"), &fx.p("agent"));
        assert_eq!(paths(&files), vec![fx.p("agent/AGENTS.md")]);
    }

    #[test]
    fn a_file_reachable_under_two_names_loads_once() {
        let fx = Fixture::new();
        write(&fx.p("proj/AGENTS.md"), "p");
        fx.dir("agent");
        std::os::unix::fs::symlink(fx.p("proj/AGENTS.md"), fx.p("agent/AGENTS.md")).unwrap();
        let files = load_context_files(&fx.p("agent"), &fx.p("proj"));
        assert_eq!(paths(&files), vec![fx.p("agent/AGENTS.md")]);
    }

    #[test]
    fn symlinked_cwd_keeps_the_path_as_given() {
        let fx = Fixture::new();
        write(&fx.p("real/AGENTS.md"), "r");
        std::os::unix::fs::symlink(fx.p("real"), fx.p("link")).unwrap();
        let files = load_context_files(&fx.dir("agent"), &fx.p("link"));
        assert_eq!(paths(&files), vec![fx.p("link/AGENTS.md")]);
    }

    #[test]
    fn bom_is_stripped_and_bad_utf8_replaced() {
        let fx = Fixture::new();
        fx.dir("proj");
        fs::write(fx.p("proj/AGENTS.md"), b"\xef\xbb\xbfhi \xff").unwrap();
        let files = load_context_files(&fx.dir("agent"), &fx.p("proj"));
        assert_eq!(files[0].content, "hi \u{fffd}");
    }

    #[test]
    fn unreadable_candidate_warns_and_falls_through() {
        use std::os::unix::fs::PermissionsExt;
        let fx = Fixture::new();
        write(&fx.p("proj/AGENTS.md"), "secret");
        write(&fx.p("proj/CLAUDE.md"), "claude");
        let locked = fx.p("proj/AGENTS.md");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
        if fs::read(&locked).is_ok() {
            return; // running as root: permissions do not bind
        }
        let (files, warnings) = load_context_files_reporting(&fx.dir("agent"), &fx.p("proj"));
        assert_eq!(paths(&files), vec![fx.p("proj/CLAUDE.md")]);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].to_string().contains("AGENTS.md"));
    }

    fn git(args: &[&str], dir: &Path) -> bool {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }

    #[test]
    fn nested_worktree_shadows_the_main_checkout_copy() {
        let fx = Fixture::new();
        let main = fx.dir("repo");
        write(&main.join("AGENTS.md"), "main copy");
        let ok = git(&["init", "-q"], &main)
            && git(&["add", "AGENTS.md"], &main)
            && git(
                &[
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "commit",
                    "-qm",
                    "x",
                ],
                &main,
            )
            && git(&["worktree", "add", "-q", "wt/feat"], &main);
        if !ok {
            return; // no git on this machine; the walk itself is covered elsewhere
        }
        let files = load_context_files(&fx.dir("agent"), &main.join("wt/feat"));
        assert_eq!(paths(&files), vec![main.join("wt/feat/AGENTS.md")]);

        // From the main checkout itself nothing is shadowed.
        let files = load_context_files(&fx.p("agent"), &main);
        assert_eq!(paths(&files), vec![main.join("AGENTS.md")]);
    }

    #[test]
    fn sibling_worktree_keeps_ancestor_inheritance() {
        let fx = Fixture::new();
        write(&fx.p("AGENTS.md"), "outer");
        let main = fx.dir("repo");
        write(&main.join("AGENTS.md"), "main");
        // A hand-made sibling worktree: `.git` file pointing into the main repo's worktrees.
        fx.dir("repo/.git/worktrees/sib");
        write(&main.join(".git/HEAD"), "ref: refs/heads/main\n");
        write(
            &main.join(".git/worktrees/sib/HEAD"),
            "ref: refs/heads/sib\n",
        );
        write(&main.join(".git/worktrees/sib/commondir"), "../..\n");
        let sib = fx.dir("sib");
        write(
            &sib.join(".git"),
            &format!("gitdir: {}\n", main.join(".git/worktrees/sib").display()),
        );
        write(&sib.join("AGENTS.md"), "sib");
        let files = load_context_files(&fx.dir("agent"), &sib);
        let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(contents, ["outer", "sib"]);
    }

    #[test]
    fn hand_made_nested_worktree_is_shadowed() {
        let fx = Fixture::new();
        let main = fx.dir("repo");
        write(&main.join("AGENTS.md"), "main");
        write(&main.join(".git/HEAD"), "ref: refs/heads/main\n");
        write(&main.join(".git/worktrees/n/HEAD"), "ref: refs/heads/n\n");
        write(&main.join(".git/worktrees/n/commondir"), "../..\n");
        let nested = fx.dir("repo/trees/n");
        write(&nested.join(".git"), "gitdir: ../../.git/worktrees/n\n");
        write(&nested.join("AGENTS.md"), "nested");
        let files = load_context_files(&fx.dir("agent"), &nested);
        let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(contents, ["nested"]);
    }

    #[test]
    fn render_lists_files_as_project_instructions() {
        assert_eq!(render_project_context(&[]), None);
        let out = render_project_context(&[
            ContextFile {
                path: "/g/AGENTS.md".into(),
                content: "G".into(),
            },
            ContextFile {
                path: "/p/CLAUDE.md".into(),
                content: "P\n".into(),
            },
        ])
        .unwrap();
        assert_eq!(
            out,
            "Project-specific instructions and guidelines:\n\n\
             <project_instructions path=\"/g/AGENTS.md\">\nG\n</project_instructions>\n\n\
             <project_instructions path=\"/p/CLAUDE.md\">\nP\n\n</project_instructions>"
        );
    }

    #[test]
    fn system_md_prefers_trusted_project_then_global() {
        let fx = Fixture::new();
        let agent = fx.dir("agent");
        let cwd = fx.dir("proj");
        assert_eq!(system_md(&agent, &cwd, true), None);

        write(&agent.join("SYSTEM.md"), "global");
        write(&cwd.join(".pi/SYSTEM.md"), "project");
        assert_eq!(
            system_md(&agent, &cwd, true),
            Some((cwd.join(".pi/SYSTEM.md"), "project".into()))
        );
        assert_eq!(
            system_md(&agent, &cwd, false),
            Some((agent.join("SYSTEM.md"), "global".into()))
        );
        fs::remove_file(agent.join("SYSTEM.md")).unwrap();
        assert_eq!(system_md(&agent, &cwd, false), None);
    }

    #[test]
    fn append_system_md_prefers_trusted_project_then_global() {
        let fx = Fixture::new();
        let agent = fx.dir("agent");
        let cwd = fx.dir("proj");
        write(&agent.join("APPEND_SYSTEM.md"), "global");
        assert_eq!(
            append_system_md(&agent, &cwd, true),
            Some((agent.join("APPEND_SYSTEM.md"), "global".into()))
        );
        write(&cwd.join(".pi/APPEND_SYSTEM.md"), "\u{feff}project");
        assert_eq!(
            append_system_md(&agent, &cwd, true),
            Some((cwd.join(".pi/APPEND_SYSTEM.md"), "project".into()))
        );
        assert_eq!(append_system_md(&agent, &cwd, false).unwrap().1, "global");
        // SYSTEM.md in an ancestor's .pi is not the project's.
        let sub = fx.dir("proj/sub");
        assert_eq!(append_system_md(&agent, &sub, true).unwrap().1, "global");
    }

    #[test]
    fn trust_needed_for_each_gated_entry() {
        for entry in TRUST_REQUIRING_ENTRIES {
            let fx = Fixture::new();
            let cwd = fx.dir("proj");
            let home = fx.dir("home");
            assert!(!project_needs_trust(&cwd, &home), "{entry}");
            if entry.ends_with(".json") || entry.ends_with(".md") {
                write(&cwd.join(".pi").join(entry), "x");
            } else {
                fx.dir(&format!("proj/.pi/{entry}"));
            }
            assert!(project_needs_trust(&cwd, &home), "{entry}");
        }
    }

    #[test]
    fn bare_pi_dir_and_other_entries_do_not_need_trust() {
        let fx = Fixture::new();
        let cwd = fx.dir("proj/.pi");
        let cwd = cwd.parent().unwrap().to_path_buf();
        write(&cwd.join(".pi/notes.md"), "x");
        fx.dir("proj/.pi/sessions");
        assert!(!project_needs_trust(&cwd, &fx.dir("home")));
    }

    #[test]
    fn gated_entries_count_only_in_the_cwd_itself() {
        let fx = Fixture::new();
        write(&fx.p("proj/.pi/settings.json"), "{}");
        let sub = fx.dir("proj/sub");
        assert!(!project_needs_trust(&sub, &fx.dir("home")));
    }

    #[test]
    fn agents_skills_in_any_ancestor_need_trust() {
        let fx = Fixture::new();
        fx.dir("proj/.agents/skills");
        let sub = fx.dir("proj/a/b");
        let home = fx.dir("home");
        assert!(project_needs_trust(&sub, &home));
        // `.agents` without `skills` does not count.
        let fx2 = Fixture::new();
        fx2.dir("proj/.agents/other");
        assert!(!project_needs_trust(&fx2.dir("proj"), &fx2.dir("home")));
    }

    #[test]
    fn users_own_agents_skills_is_not_a_project_resource() {
        let fx = Fixture::new();
        let home = fx.dir("home");
        fx.dir("home/.agents/skills");
        assert!(!project_needs_trust(&home, &home));
        assert!(!project_needs_trust(&fx.dir("home/code/proj"), &home));
        // …but a project's own .agents/skills below home still counts.
        fx.dir("home/code/proj/.agents/skills");
        assert!(project_needs_trust(&fx.p("home/code/proj"), &home));
    }

    #[test]
    fn trust_check_follows_symlinked_cwd() {
        let fx = Fixture::new();
        write(&fx.p("real/.pi/settings.json"), "{}");
        std::os::unix::fs::symlink(fx.p("real"), fx.p("link")).unwrap();
        assert!(project_needs_trust(&fx.p("link"), &fx.dir("home")));
    }
}
