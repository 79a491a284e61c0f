//! The git branch the footer shows, read as pi 1.6 reads it: the nearest `.git` above the
//! cwd (a directory, or a worktree's `gitdir:` file), then its `HEAD`: `ref: refs/heads/NAME`
//! is the branch, anything else a detached HEAD. No git process is started; the footer reads
//! it again whenever it refreshes, so a checkout made meanwhile shows after the next run.

use std::path::{Path, PathBuf};

/// The `HEAD` file of the repository `cwd` is in.
fn head_path(cwd: &Path) -> Option<PathBuf> {
    for dir in cwd.ancestors() {
        let git = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&git) else {
            continue;
        };
        if meta.is_dir() {
            return Some(git.join("HEAD"));
        }
        let text = std::fs::read_to_string(&git).ok()?;
        let gitdir = text.trim().strip_prefix("gitdir: ")?;
        return Some(dir.join(gitdir.trim()).join("HEAD"));
    }
    None
}

/// What `HEAD` says: the branch name, or `detached`.
pub fn branch_of_head(head: &str) -> Option<String> {
    match head.trim().strip_prefix("ref: refs/heads/") {
        // The reftable format's placeholder: the branch is not in the file.
        Some(".invalid") => None,
        Some(branch) => Some(branch.to_string()),
        None if head.trim().is_empty() => None,
        None => Some("detached".to_string()),
    }
}

/// The branch of the repository `cwd` is in; `None` outside one.
pub fn current(cwd: &Path) -> Option<String> {
    let head = std::fs::read_to_string(head_path(cwd)?).ok()?;
    branch_of_head(&head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_read_as_branches() {
        assert_eq!(
            branch_of_head("ref: refs/heads/feature-x\n").as_deref(),
            Some("feature-x")
        );
        assert_eq!(branch_of_head("4f2a9c\n").as_deref(), Some("detached"));
        assert_eq!(branch_of_head("ref: refs/heads/.invalid\n"), None);
    }

    #[test]
    fn a_worktree_is_followed_to_its_head() {
        let d = tempfile::tempdir().unwrap();
        let gitdir = d.path().join("main/.git/worktrees/w");
        std::fs::create_dir_all(&gitdir).unwrap();
        std::fs::write(gitdir.join("HEAD"), "ref: refs/heads/topic\n").unwrap();
        let wt = d.path().join("w");
        std::fs::create_dir_all(wt.join("src")).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
        assert_eq!(current(&wt.join("src")).as_deref(), Some("topic"));
        assert_eq!(current(Path::new("/")), None);
    }
}
