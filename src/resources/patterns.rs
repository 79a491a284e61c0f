//! pi 1.6's resource patterns, one implementation for every list that selects resources (the
//! settings' `extensions` today; a package entry's filters share the rules): in a list, an
//! entry is a pattern when it starts with `!`, `+` or `-` or holds `*` or `?`, and a plain
//! path otherwise. Over the files the plain entries name, in 1.6's four steps
//! (`applyPatterns`): globs keep what they match (all, without any), `!glob` drops what it
//! matches, `+path` adds an exact file back, `-path` drops an exact file whatever came before.
//! Over files found by discovery only the three overrides apply (`isEnabledByOverrides`).
//!
//! A glob matches a file's path relative to the list's base directory, its name, or its
//! absolute path, `*` stopping at `/` as minimatch's does; an exact path compares the relative
//! path (a leading `./` dropped) or the absolute one. A `SKILL.md` also answers for its folder,
//! so `!legacy-skill` reaches the skill inside it.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

/// A pattern that cannot be compiled, with why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pattern:?} is not a glob: {why}")]
pub struct BadPattern {
    pub pattern: String,
    pub why: String,
}

/// 1.6's `isPattern`: an entry that selects rather than names.
pub fn is_pattern(entry: &str) -> bool {
    is_override(entry) || entry.contains(['*', '?'])
}

/// 1.6's `isOverridePattern`.
pub fn is_override(entry: &str) -> bool {
    entry.starts_with(['!', '+', '-'])
}

/// A list's patterns, compiled against its base directory.
#[derive(Debug, Clone, Default)]
pub struct Patterns {
    base: PathBuf,
    includes: Vec<GlobMatcher>,
    excludes: Vec<GlobMatcher>,
    force_in: Vec<String>,
    force_out: Vec<String>,
}

fn glob(pattern: &str) -> Result<GlobMatcher, BadPattern> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| BadPattern {
            pattern: pattern.to_string(),
            why: e.kind().to_string(),
        })
}

/// The names a file answers to: relative to the base, its own name, its absolute path — and,
/// for a `SKILL.md`, the same three of its folder.
fn names(file: &Path, base: &Path) -> Vec<String> {
    let mut out = Vec::with_capacity(6);
    let mut add = |p: &Path| {
        out.push(relative(p, base));
        if let Some(n) = p.file_name() {
            out.push(n.to_string_lossy().into_owned());
        }
        out.push(p.display().to_string());
    };
    add(file);
    if file.file_name().is_some_and(|n| n == "SKILL.md") {
        if let Some(dir) = file.parent() {
            add(dir);
        }
    }
    out
}

fn relative(p: &Path, base: &Path) -> String {
    p.strip_prefix(base)
        .map(|r| r.display().to_string())
        .unwrap_or_else(|_| p.display().to_string())
}

/// 1.6's `normalizeExactPattern`: a leading `./` is not part of the path.
fn exact(pattern: &str) -> String {
    pattern.strip_prefix("./").unwrap_or(pattern).to_string()
}

impl Patterns {
    /// The patterns among `entries` (plain paths are left out), relative to `base`.
    pub fn new<'a>(
        entries: impl IntoIterator<Item = &'a str>,
        base: &Path,
    ) -> Result<Patterns, BadPattern> {
        let mut p = Patterns {
            base: base.to_path_buf(),
            ..Patterns::default()
        };
        for e in entries.into_iter().filter(|e| is_pattern(e)) {
            if let Some(rest) = e.strip_prefix('+') {
                p.force_in.push(exact(rest));
            } else if let Some(rest) = e.strip_prefix('-') {
                p.force_out.push(exact(rest));
            } else if let Some(rest) = e.strip_prefix('!') {
                p.excludes.push(glob(rest)?);
            } else {
                p.includes.push(glob(e)?);
            }
        }
        Ok(p)
    }

    pub fn is_empty(&self) -> bool {
        self.includes.is_empty()
            && self.excludes.is_empty()
            && self.force_in.is_empty()
            && self.force_out.is_empty()
    }

    fn any_glob(&self, globs: &[GlobMatcher], file: &Path) -> bool {
        let names = names(file, &self.base);
        globs.iter().any(|g| names.iter().any(|n| g.is_match(n)))
    }

    fn any_exact(&self, paths: &[String], file: &Path) -> bool {
        if paths.is_empty() {
            return false;
        }
        let mut candidates = vec![file.to_path_buf()];
        if file.file_name().is_some_and(|n| n == "SKILL.md") {
            candidates.extend(file.parent().map(Path::to_path_buf));
        }
        candidates.iter().any(|c| {
            let rel = relative(c, &self.base);
            let abs = c.display().to_string();
            paths.iter().any(|p| *p == rel || *p == abs)
        })
    }

    /// 1.6's `applyPatterns`: which of `all` (the files the plain entries name) load, in
    /// their order.
    pub fn apply(&self, all: &[PathBuf]) -> Vec<PathBuf> {
        let mut kept: Vec<PathBuf> = all
            .iter()
            .filter(|f| self.includes.is_empty() || self.any_glob(&self.includes, f))
            .filter(|f| !self.any_glob(&self.excludes, f))
            .cloned()
            .collect();
        for f in all {
            if !kept.contains(f) && self.any_exact(&self.force_in, f) {
                kept.push(f.clone());
            }
        }
        kept.retain(|f| !self.any_exact(&self.force_out, f));
        kept
    }

    /// 1.6's `isEnabledByOverrides`: whether a discovered `file` loads.
    pub fn enables(&self, file: &Path) -> bool {
        let mut on = !self.any_glob(&self.excludes, file);
        if self.any_exact(&self.force_in, file) {
            on = true;
        }
        if self.any_exact(&self.force_out, file) {
            on = false;
        }
        on
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(base: &Path, names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(|n| base.join(n)).collect()
    }

    #[test]
    fn the_four_steps_run_in_1_6s_order() {
        let base = Path::new("/agent");
        let all = files(
            base,
            &["ext/a.ts", "ext/b.ts", "ext/legacy.ts", "other/c.js"],
        );
        let p = Patterns::new(["ext/*.ts", "!legacy.ts"], base).unwrap();
        assert_eq!(p.apply(&all), files(base, &["ext/a.ts", "ext/b.ts"]));
        // `+` brings back what `!` dropped; `-` wins over both.
        let p = Patterns::new(["!ext/*", "+./ext/legacy.ts", "-other/c.js"], base).unwrap();
        assert_eq!(p.apply(&all), files(base, &["ext/legacy.ts"]));
        // No pattern: everything the plain entries named.
        assert_eq!(Patterns::new(["ext"], base).unwrap().apply(&all), all);
    }

    #[test]
    fn a_star_stops_at_a_slash_as_minimatchs_does() {
        let base = Path::new("/agent");
        let p = Patterns::new(["!*.ts"], base).unwrap();
        // `legacy.ts` is matched by its name, wherever it is; a relative path with a folder
        // is not matched by `*.ts` itself.
        assert!(!p.enables(&base.join("deep/legacy.ts")));
        let p = Patterns::new(["!deep/*.ts"], base).unwrap();
        assert!(!p.enables(&base.join("deep/x.ts")));
        assert!(p.enables(&base.join("deep/more/x.ts")));
    }

    #[test]
    fn discovered_files_answer_only_to_overrides() {
        let base = Path::new("/agent");
        let p = Patterns::new(["*.ts", "!noisy.ts", "-extensions/x.ts"], base).unwrap();
        assert!(
            p.enables(&base.join("extensions/a.ts")),
            "a plain glob does not filter discovery"
        );
        assert!(!p.enables(&base.join("extensions/noisy.ts")));
        assert!(!p.enables(&base.join("extensions/x.ts")));
        assert!(!p.enables(Path::new("/agent/extensions/x.ts")));
    }

    #[test]
    fn a_skill_answers_for_its_folder() {
        let base = Path::new("/agent");
        let p = Patterns::new(["!legacy-skill"], base).unwrap();
        assert!(!p.enables(&base.join("skills/legacy-skill/SKILL.md")));
        assert!(p.enables(&base.join("skills/other/SKILL.md")));
    }

    #[test]
    fn a_broken_glob_is_named() {
        let err = Patterns::new(["![oops"], Path::new("/")).unwrap_err();
        assert_eq!(err.pattern, "[oops");
        assert!(is_pattern("a?.ts") && is_pattern("-x") && !is_pattern("./plain.ts"));
    }
}
