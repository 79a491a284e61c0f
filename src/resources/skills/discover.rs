//! Walks one skills directory and returns the candidate files, following pi's
//! `collectSkillEntries` (seeds 3.2–3.4):
//!
//! - a directory holding a non-ignored `SKILL.md` file is a skill package: that file is its only
//!   candidate and nothing below it is looked at (its `references/`, `scripts/`… are resources);
//! - otherwise, in pi mode the root's `.md` files are candidates, in agents mode the `.md` files
//!   of every directory below the root are; subdirectories are searched the same way;
//! - names starting with `.` and `node_modules` are skipped; `.gitignore`, `.ignore` and
//!   `.fdignore` files found inside the scanned tree apply, never those above its root, with
//!   pi's scoping of nested rules (see `scoped_rule`);
//! - symlinks are followed (a broken one is skipped; a link back to a directory being walked
//!   is not entered again, so link loops end). De-duplication by real path is the caller's.
//!
//! A hand-written recursion rather than `ignore::WalkBuilder`: the package boundary depends on
//! whether `SKILL.md` is itself ignored, which must be known before any sibling is descended
//! into. Entries are sorted by name so results do not depend on the file system's order.
//! Only directory listings are read (plus a stat per symlink); files are opened by the caller,
//! and only the candidates.

use std::ffi::OsString;
use std::fs::{self, FileType};
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

use super::DiscoveryMode;

/// Within one directory, pi adds these in this order to one matcher, so a later file's rule
/// beats an earlier one's; deeper directories beat shallower ones (as in git).
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

pub(super) fn collect_candidates(root: &Path, mode: DiscoveryMode) -> Vec<PathBuf> {
    let mut walk = Walk {
        mode,
        ignores: Vec::new(),
        ancestors: Vec::new(),
        out: Vec::new(),
    };
    walk.dir(root);
    walk.out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    File,
    Other,
}

#[cfg(unix)]
type DirId = (u64, u64);

#[cfg(unix)]
fn dir_id(path: &Path) -> Option<DirId> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
type DirId = PathBuf;

#[cfg(not(unix))]
fn dir_id(path: &Path) -> Option<DirId> {
    fs::canonicalize(path).ok()
}

/// A directory on the current path from the root; its identity is looked up only when a
/// symlinked directory has to be checked against it, so plain trees cost no extra stat.
struct Ancestor {
    path: PathBuf,
    id: Option<Option<DirId>>,
}

struct Walk {
    mode: DiscoveryMode,
    /// One matcher per directory on the current path that has ignore files, rooted there.
    ignores: Vec<Gitignore>,
    ancestors: Vec<Ancestor>,
    out: Vec<PathBuf>,
}

impl Walk {
    fn dir(&mut self, dir: &Path) {
        // An unreadable directory is skipped like in pi (which swallows the error).
        let Ok(read) = fs::read_dir(dir) else { return };
        let mut entries: Vec<(OsString, FileType)> = read
            .filter_map(Result::ok)
            .filter_map(|e| e.file_type().ok().map(|t| (e.file_name(), t)))
            .collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));

        let pushed = self.push_ignores(dir, &entries);
        self.ancestors.push(Ancestor {
            path: dir.to_path_buf(),
            id: None,
        });
        self.scan(dir, &entries);
        self.ancestors.pop();
        if pushed {
            self.ignores.pop();
        }
    }

    fn scan(&mut self, dir: &Path, entries: &[(OsString, FileType)]) {
        if let Some((name, ft)) = entries.iter().find(|(n, _)| n == "SKILL.md") {
            let path = dir.join(name);
            if kind(&path, *ft) == Kind::File && !self.ignored(&path, false) {
                self.out.push(path);
                return;
            }
        }
        let at_root = self.ancestors.len() == 1;
        let root_files = match self.mode {
            DiscoveryMode::Pi => at_root,
            DiscoveryMode::Agents => !at_root,
        };
        for (name, ft) in entries {
            let lossy = name.to_string_lossy();
            if lossy.starts_with('.') || lossy == "node_modules" {
                continue;
            }
            let path = dir.join(name);
            match kind(&path, *ft) {
                Kind::Dir => {
                    if self.ignored(&path, true) || (ft.is_symlink() && self.is_loop(&path)) {
                        continue;
                    }
                    self.dir(&path);
                }
                Kind::File => {
                    if root_files && lossy.ends_with(".md") && !self.ignored(&path, false) {
                        self.out.push(path);
                    }
                }
                Kind::Other => {}
            }
        }
    }

    fn push_ignores(&mut self, dir: &Path, entries: &[(OsString, FileType)]) -> bool {
        let at_root = self.ancestors.is_empty();
        let mut builder = GitignoreBuilder::new(dir);
        let mut any = false;
        for file in IGNORE_FILES {
            if !entries.iter().any(|(n, _)| n == file) {
                continue;
            }
            // An unreadable ignore file is skipped, as pi does.
            let Ok(bytes) = fs::read(dir.join(file)) else {
                continue;
            };
            for line in String::from_utf8_lossy(&bytes).lines() {
                if let Some(rule) = scoped_rule(line, at_root) {
                    // A malformed glob drops that one rule, not the file.
                    any |= builder.add_line(None, &rule).is_ok();
                }
            }
        }
        match builder.build() {
            Ok(gi) if any && !gi.is_empty() => {
                self.ignores.push(gi);
                true
            }
            _ => false,
        }
    }

    fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        for gi in self.ignores.iter().rev() {
            match gi.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    /// A symlinked directory that is one of the directories being walked would recurse forever.
    fn is_loop(&mut self, path: &Path) -> bool {
        let Some(id) = dir_id(path) else { return true };
        self.ancestors.iter_mut().any(|a| {
            let known = a.id.get_or_insert_with(|| dir_id(&a.path));
            known.as_ref() == Some(&id)
        })
    }
}

/// pi's `prefixIgnorePattern`: pi prefixes each rule of a nested ignore file with that file's
/// directory (after dropping a leading `/`) and matches every rule against paths relative to
/// the scan root. A prefixed rule contains a slash, so it is anchored: `SKILL.md` in `a/.ignore`
/// means `a/SKILL.md` only, not `a/b/SKILL.md` as in git. In a matcher rooted at that
/// directory the same rule is `/SKILL.md`. Rules of the root's own files get no prefix, so
/// they stay unanchored (even one written `/x`, since pi drops the slash).
fn scoped_rule(line: &str, at_root: bool) -> Option<String> {
    let trimmed = line.trim();
    // pi also tests for `\#`, which a line starting with `#` can never match.
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return None;
    }
    let (negated, pattern) = match line.strip_prefix('!') {
        Some(rest) => (true, rest),
        // pi drops the escaping backslash of `\!`; what follows is a literal `!` below the
        // root (after the prefix) but a negation at the root, exactly as in pi.
        None => (
            false,
            line.strip_prefix('\\')
                .filter(|r| r.starts_with('!'))
                .unwrap_or(line),
        ),
    };
    let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
    let scoped = if at_root {
        pattern.to_string()
    } else {
        format!("/{pattern}")
    };
    Some(if negated {
        format!("!{scoped}")
    } else {
        scoped
    })
}

/// The entry's type, following a symlink; a broken link is `Other` and gets skipped.
fn kind(path: &Path, ft: FileType) -> Kind {
    let (is_dir, is_file) = if ft.is_symlink() {
        match fs::metadata(path) {
            Ok(m) => (m.is_dir(), m.is_file()),
            Err(_) => return Kind::Other,
        }
    } else {
        (ft.is_dir(), ft.is_file())
    };
    if is_dir {
        Kind::Dir
    } else if is_file {
        Kind::File
    } else {
        Kind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for f in files {
            let p = t.path().join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "x").unwrap();
        }
        t
    }

    fn rel(root: &Path, mode: DiscoveryMode) -> Vec<String> {
        collect_candidates(root, mode)
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn pi_mode_takes_root_markdown_and_skill_dirs() {
        let t = tree(&["a.md", "b.txt", "sub/x.md", "sub/s/SKILL.md", "s2/SKILL.md"]);
        assert_eq!(
            rel(t.path(), DiscoveryMode::Pi),
            vec!["a.md", "s2/SKILL.md", "sub/s/SKILL.md"]
        );
    }

    #[test]
    fn agents_mode_takes_nested_markdown_but_not_root_markdown() {
        let t = tree(&[
            "a.md",
            "sub/x.md",
            "sub/deep/y.md",
            "s/SKILL.md",
            "s/ref/z.md",
        ]);
        assert_eq!(
            rel(t.path(), DiscoveryMode::Agents),
            vec!["s/SKILL.md", "sub/deep/y.md", "sub/x.md"]
        );
    }

    #[test]
    fn skill_md_at_the_root_makes_the_root_one_package() {
        let t = tree(&["SKILL.md", "a.md", "sub/SKILL.md"]);
        assert_eq!(rel(t.path(), DiscoveryMode::Pi), vec!["SKILL.md"]);
    }

    #[test]
    fn an_ignored_skill_md_is_not_a_boundary() {
        let t = tree(&["p/SKILL.md", "p/inner/SKILL.md"]);
        fs::write(t.path().join("p/.ignore"), "SKILL.md\n!inner/SKILL.md\n").unwrap();
        assert_eq!(rel(t.path(), DiscoveryMode::Pi), vec!["p/inner/SKILL.md"]);
    }

    #[test]
    fn ignore_files_above_the_root_do_not_apply() {
        let t = tree(&["skills/s/SKILL.md"]);
        fs::write(t.path().join(".gitignore"), "s/\n").unwrap();
        assert_eq!(
            rel(&t.path().join("skills"), DiscoveryMode::Pi),
            vec!["s/SKILL.md"]
        );
    }

    #[test]
    fn nested_rules_are_anchored_to_their_directory_and_root_rules_are_not() {
        let t = tree(&[
            "a/SKILL.md",
            "a/b/SKILL.md",
            "c/x/d/SKILL.md",
            "e/x/SKILL.md",
        ]);
        fs::write(t.path().join("a/.ignore"), "SKILL.md\n").unwrap();
        fs::write(t.path().join(".gitignore"), "/x/\n").unwrap();
        assert_eq!(rel(t.path(), DiscoveryMode::Pi), vec!["a/b/SKILL.md"]);
        assert_eq!(
            scoped_rule("!/keep.md", false).as_deref(),
            Some("!/keep.md")
        );
        assert_eq!(scoped_rule("\\!bang", false).as_deref(), Some("/!bang"));
        assert_eq!(scoped_rule("  # note", false), None);
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_and_broken_links_end() {
        let t = tree(&["a/s/SKILL.md"]);
        std::os::unix::fs::symlink("..", t.path().join("a/up")).unwrap();
        std::os::unix::fs::symlink("nowhere", t.path().join("a/broken.md")).unwrap();
        std::os::unix::fs::symlink("a", t.path().join("b")).unwrap();
        assert_eq!(
            rel(t.path(), DiscoveryMode::Pi),
            vec!["a/s/SKILL.md", "b/s/SKILL.md"]
        );
    }
}
