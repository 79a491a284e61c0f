//! Which configuration files changed since pi last read them, for Claude Code's
//! `ConfigChange` hooks at `/reload`. pi reads its settings, MCP files, the managed policy, the
//! Claude Code hook files named on the command line and its skills once, at start-up or at the
//! last `/reload`; a change takes effect only at the next `/reload`, so that is where a hook may
//! refuse it (and where a refusal keeps the configuration in effect). Only the files' metadata
//! is kept — length, modification time and inode — so watching costs a `stat` per file and
//! never reads a file's contents. A file that appears or disappears is a change too.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::config::managed::ManagedPolicy;
use crate::config::SystemEnv;
use crate::resources::skills::SkillSet;

/// Claude Code's `source` for a configuration file (its ConfigChange matcher).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    UserSettings,
    ProjectSettings,
    LocalSettings,
    PolicySettings,
    Skills,
}

impl ConfigSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigSource::UserSettings => "user_settings",
            ConfigSource::ProjectSettings => "project_settings",
            ConfigSource::LocalSettings => "local_settings",
            ConfigSource::PolicySettings => "policy_settings",
            ConfigSource::Skills => "skills",
        }
    }
}

/// What `stat` said about a file when pi read it; `None` inside [`Watched`]: it did not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Some(Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            inode,
        })
    }
}

#[derive(Debug, Clone)]
struct Watched {
    source: ConfigSource,
    path: PathBuf,
    stamp: Option<Stamp>,
}

/// The configuration files in effect, as they were when pi read them.
#[derive(Debug, Clone, Default)]
pub struct ConfigFiles {
    files: Vec<Watched>,
}

/// Where pi's configuration comes from, for one run.
pub struct ConfigPlaces<'a> {
    pub agent_dir: &'a Path,
    pub cwd: &'a Path,
    pub trusted: bool,
    /// `--claude-hooks` files, relative to `cwd`.
    pub claude_hook_files: &'a [PathBuf],
    pub skills: &'a SkillSet,
}

impl ConfigFiles {
    /// Stamps every configuration file of `places` as it is now.
    pub fn take(places: &ConfigPlaces<'_>) -> ConfigFiles {
        let files = paths(places)
            .into_iter()
            .map(|(source, path)| Watched {
                stamp: Stamp::of(&path),
                source,
                path,
            })
            .collect();
        ConfigFiles { files }
    }

    /// The files whose stamp differs now, in the order they were listed.
    pub fn changed(&self) -> Vec<(ConfigSource, PathBuf)> {
        self.files
            .iter()
            .filter(|w| Stamp::of(&w.path) != w.stamp)
            .map(|w| (w.source, w.path.clone()))
            .collect()
    }
}

/// Every configuration file of a run, with its Claude Code source.
fn paths(places: &ConfigPlaces<'_>) -> Vec<(ConfigSource, PathBuf)> {
    let mut out = vec![
        (
            ConfigSource::UserSettings,
            crate::config::settings_path(places.agent_dir),
        ),
        (
            ConfigSource::UserSettings,
            places.agent_dir.join("mcp.json"),
        ),
    ];
    if places.trusted {
        let project = places.cwd.join(".pi");
        out.push((ConfigSource::ProjectSettings, project.join("settings.json")));
        out.push((ConfigSource::ProjectSettings, project.join("mcp.json")));
    }
    if let Some(policy) = ManagedPolicy::located(&SystemEnv) {
        out.push((ConfigSource::PolicySettings, policy));
    }
    for f in places.claude_hook_files {
        let path = places.cwd.join(f);
        out.push((claude_file_source(&path, places.cwd), path));
    }
    for s in &places.skills.skills {
        out.push((ConfigSource::Skills, s.file_path.clone()));
    }
    out
}

/// A Claude Code hooks file named on the command line, by where it lives: the project's local
/// settings, the project's, else the user's.
fn claude_file_source(path: &Path, cwd: &Path) -> ConfigSource {
    let local = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".local.json"));
    if local {
        ConfigSource::LocalSettings
    } else if path.starts_with(cwd) {
        ConfigSource::ProjectSettings
    } else {
        ConfigSource::UserSettings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places<'a>(dir: &'a Path, skills: &'a SkillSet, files: &'a [PathBuf]) -> ConfigPlaces<'a> {
        ConfigPlaces {
            agent_dir: dir,
            cwd: dir,
            trusted: true,
            claude_hook_files: files,
            skills,
        }
    }

    #[test]
    fn a_rewritten_created_or_removed_file_is_a_change_and_an_untouched_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let skills = SkillSet::default();
        let files = [PathBuf::from("hooks.local.json")];
        std::fs::write(dir.path().join("settings.json"), "{}").unwrap();
        std::fs::write(dir.path().join("hooks.local.json"), "{}").unwrap();
        let before = ConfigFiles::take(&places(dir.path(), &skills, &files));
        assert!(before.changed().is_empty());

        std::fs::write(dir.path().join("settings.json"), "{\"a\": 1}").unwrap();
        std::fs::create_dir(dir.path().join(".pi")).unwrap();
        std::fs::write(dir.path().join(".pi").join("mcp.json"), "{}").unwrap();
        std::fs::remove_file(dir.path().join("hooks.local.json")).unwrap();
        let changed = before.changed();
        assert_eq!(
            changed,
            vec![
                (ConfigSource::UserSettings, dir.path().join("settings.json")),
                (
                    ConfigSource::ProjectSettings,
                    dir.path().join(".pi").join("mcp.json")
                ),
                (
                    ConfigSource::LocalSettings,
                    dir.path().join("hooks.local.json")
                ),
            ]
        );
    }

    #[test]
    fn a_same_length_rewrite_through_a_rename_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let skills = SkillSet::default();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, "{\"a\": 1}").unwrap();
        let before = ConfigFiles::take(&places(dir.path(), &skills, &[]));
        let tmp = dir.path().join("settings.json.tmp");
        std::fs::write(&tmp, "{\"a\": 2}").unwrap();
        std::fs::rename(&tmp, &file).unwrap();
        assert_eq!(before.changed().len(), 1);
    }
}
