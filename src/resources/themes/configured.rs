//! The `themes` setting: theme files and folders listed in the user's `settings.json` (paths
//! relative to the agent directory) and a trusted project's `.pi/settings.json` (relative to
//! the project's `.pi`), `~` for the home directory, as 1.6 resolves them. An entry is a path
//! to load (`path` or `+path`), a path not to load (`-path`), or a glob of files not to load
//! (`!pattern`, matched against the file's full path and its file name). Exclusions apply to
//! every theme file pi finds but the ones `--theme` names explicitly.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::Value;

/// What the `themes` settings say.
#[derive(Debug, Clone, Default)]
pub struct Configured {
    /// Files and folders to load, absolute, in order (the project's, then the user's).
    pub paths: Vec<PathBuf>,
    /// Exact files (or folders) not to load.
    excluded: Vec<PathBuf>,
    globs: Option<GlobSet>,
    /// Entries that could not be used: one line each.
    pub problems: Vec<String>,
}

impl Configured {
    /// Reads `themes` from the user's settings (`user`, under `agent_dir`) and, when given, a
    /// trusted project's (`project`, under `project_dir`, the project's `.pi`).
    pub fn read(
        user: Option<&Value>,
        agent_dir: &Path,
        project: Option<(&Value, &Path)>,
        home: Option<&Path>,
    ) -> Configured {
        let mut c = Configured::default();
        let mut globs = GlobSetBuilder::new();
        let mut any_glob = false;
        let scopes = project
            .into_iter()
            .map(|(v, dir)| (v, dir, "project"))
            .chain(user.map(|v| (v, agent_dir, "user")));
        for (settings, base, scope) in scopes {
            let Some(list) = settings.get("themes") else {
                continue;
            };
            let Some(items) = list.as_array() else {
                c.problems.push(format!(
                    "the {scope} setting \"themes\" must be a list of paths; it is ignored"
                ));
                continue;
            };
            for item in items {
                let Some(entry) = item.as_str().map(str::trim).filter(|s| !s.is_empty()) else {
                    c.problems.push(format!(
                        "the {scope} setting \"themes\" has {item}, not a path; it is ignored"
                    ));
                    continue;
                };
                if let Some(pattern) = entry.strip_prefix('!') {
                    match Glob::new(pattern) {
                        Ok(g) => {
                            globs.add(g);
                            any_glob = true;
                        }
                        Err(e) => c.problems.push(format!(
                            "the {scope} setting \"themes\": {entry:?} is not a glob: {e}"
                        )),
                    }
                } else if let Some(path) = entry.strip_prefix('-') {
                    c.excluded.push(resolve(path, base, home));
                } else {
                    let path = entry.strip_prefix('+').unwrap_or(entry);
                    c.paths.push(resolve(path, base, home));
                }
            }
        }
        if any_glob {
            match globs.build() {
                Ok(set) => c.globs = Some(set),
                Err(e) => c.problems.push(format!(
                    "the setting \"themes\": the globs cannot be used: {e}"
                )),
            }
        }
        c
    }

    /// Whether the settings say not to load `file`.
    pub fn excludes(&self, file: &Path) -> bool {
        if self
            .excluded
            .iter()
            .any(|x| file == x || file.starts_with(x))
        {
            return true;
        }
        let Some(globs) = &self.globs else {
            return false;
        };
        globs.is_match(file) || file.file_name().is_some_and(|n| globs.is_match(n))
    }
}

/// `path` as 1.6 resolves a settings resource path: `~` is the home directory, a relative
/// path is under `base`.
fn resolve(path: &str, base: &Path, home: Option<&Path>) -> PathBuf {
    if let (Some(rest), Some(home)) = (path.strip_prefix('~'), home) {
        if rest.is_empty() {
            return home.to_path_buf();
        }
        if let Some(rest) = rest.strip_prefix('/') {
            return home.join(rest);
        }
    }
    base.join(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_resolve_per_scope_and_exclusions_match() {
        let user = json!({"themes": ["mine", "+~/t/x.json", "-mine/old.json", "!*-draft.json"]});
        let project = json!({"themes": ["themes/p.json"]});
        let c = Configured::read(
            Some(&user),
            Path::new("/agent"),
            Some((&project, Path::new("/proj/.pi"))),
            Some(Path::new("/home/u")),
        );
        assert_eq!(
            c.paths,
            [
                PathBuf::from("/proj/.pi/themes/p.json"),
                "/agent/mine".into(),
                "/home/u/t/x.json".into()
            ]
        );
        assert!(c.excludes(Path::new("/agent/mine/old.json")));
        assert!(c.excludes(Path::new("/anywhere/ocean-draft.json")));
        assert!(!c.excludes(Path::new("/agent/mine/ocean.json")));
        assert!(c.problems.is_empty());
    }

    #[test]
    fn entries_that_are_not_paths_are_named() {
        let user = json!({"themes": "mine.json"});
        let project = json!({"themes": [3, "![bad"]});
        let c = Configured::read(
            Some(&user),
            Path::new("/agent"),
            Some((&project, Path::new("/p/.pi"))),
            None,
        );
        assert!(c.paths.is_empty());
        assert_eq!(c.problems.len(), 3, "{:?}", c.problems);
        assert!(c.problems[0].contains("has 3, not a path"));
        assert!(c.problems[1].contains("\"![bad\" is not a glob"));
        assert!(c.problems[2].contains("user setting \"themes\" must be a list"));
    }
}
