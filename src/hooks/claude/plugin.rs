//! Claude Code plugins: what `--claude-hooks PATH` names when PATH is a plugin directory or a
//! plugin's `hooks/hooks.json`, and the plugin a hook belongs to. A plugin's commands find
//! their own files through `${CLAUDE_PLUGIN_ROOT}` and keep state in `${CLAUDE_PLUGIN_DATA}`;
//! without them `node "${CLAUDE_PLUGIN_ROOT}/x.js"` runs `node "/x.js"`, which exits 1 — a
//! non-blocking error to Claude Code — so the plugin's gate would silently never run.
//!
//! The root is the directory holding `.claude-plugin/` (the file's directory or the one above
//! it), else — for a file named `hooks.json` — the file's parent's parent, where Claude Code's
//! layout puts it. A settings file (`.claude/settings.json`) is no plugin's.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::config::ClaudeConfigError;

/// The directory of a plugin's manifest.
pub const MANIFEST_DIR: &str = ".claude-plugin";
/// Where pi keeps a plugin's `${CLAUDE_PLUGIN_DATA}`, under the agent directory.
pub const DATA_DIR: &str = "claude-plugins/data";

/// The plugin a hook comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    /// The manifest's `name`, else the root directory's name.
    pub name: String,
    /// `${CLAUDE_PLUGIN_ROOT}`.
    pub root: PathBuf,
}

impl Plugin {
    /// `${CLAUDE_PLUGIN_DATA}`: a directory of the agent directory named after the plugin,
    /// which survives the plugin's updates (its root is replaced by each version).
    pub fn data_dir(&self, agent_dir: &Path) -> PathBuf {
        let id: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let id = id.trim_start_matches('.');
        agent_dir
            .join(DATA_DIR)
            .join(if id.is_empty() { "plugin" } else { id })
    }
}

/// Where a `--claude-hooks` argument's hooks are.
#[derive(Debug)]
pub enum HooksAt {
    /// A settings or hooks file with a `hooks` object.
    File(PathBuf),
    /// The manifest's own `hooks` object (`plugin.json` `{"hooks": {...}}`).
    Inline { manifest: PathBuf, hooks: Value },
}

/// What `path` names: its hooks and, if it is a plugin's, the plugin.
pub fn locate(path: &Path) -> Result<(HooksAt, Option<Plugin>), ClaudeConfigError> {
    if path.is_dir() {
        return plugin_dir(path);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let root = [Some(dir), dir.parent()]
        .into_iter()
        .flatten()
        .find(|d| d.join(MANIFEST_DIR).is_dir())
        .map(Path::to_path_buf)
        .or_else(|| {
            (path.file_name().and_then(|n| n.to_str()) == Some("hooks.json"))
                .then(|| dir.parent().map(Path::to_path_buf))
                .flatten()
        });
    let plugin = match root {
        Some(root) => Some(plugin_at(&root)?.0),
        None => None,
    };
    Ok((HooksAt::File(path.to_path_buf()), plugin))
}

/// A plugin directory: its manifest's `hooks` (a path relative to the root, or the object
/// itself), else `hooks/hooks.json`.
fn plugin_dir(root: &Path) -> Result<(HooksAt, Option<Plugin>), ClaudeConfigError> {
    let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let (plugin, manifest) = plugin_at(&root)?;
    let manifest_file = root.join(MANIFEST_DIR).join("plugin.json");
    let at = match manifest.as_ref().and_then(|m| m.get("hooks")) {
        Some(Value::String(rel)) => HooksAt::File(root.join(rel)),
        Some(hooks @ Value::Object(_)) => HooksAt::Inline {
            manifest: manifest_file,
            hooks: hooks.clone(),
        },
        Some(other) => {
            return Err(ClaudeConfigError::Entry {
                file: manifest_file.display().to_string(),
                at: "hooks".into(),
                message: format!(
                    "must be a path to a hooks file or a hooks object, not {}",
                    crate::hooks::protocol::json_kind(other)
                ),
            })
        }
        None => {
            let file = root.join("hooks").join("hooks.json");
            if !file.is_file() {
                return Err(ClaudeConfigError::NotAPlugin {
                    dir: root.display().to_string(),
                });
            }
            HooksAt::File(file)
        }
    };
    Ok((at, Some(plugin)))
}

/// The plugin rooted at `root`, and its manifest if it has one.
fn plugin_at(root: &Path) -> Result<(Plugin, Option<Value>), ClaudeConfigError> {
    let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let file = root.join(MANIFEST_DIR).join("plugin.json");
    let manifest = match std::fs::read_to_string(&file) {
        Ok(text) => {
            Some(
                serde_json::from_str::<Value>(&text).map_err(|e| ClaudeConfigError::Json {
                    file: file.display().to_string(),
                    source: e,
                })?,
            )
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(ClaudeConfigError::Read {
                file: file.display().to_string(),
                source: e,
            })
        }
    };
    let name = manifest
        .as_ref()
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .filter(|n| !n.trim().is_empty())
        .map(str::to_string)
        .or_else(|| root.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "plugin".into());
    Ok((Plugin { name, root }, manifest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_plugins_root_is_where_its_manifest_is_else_above_its_hooks_directory() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("gate");
        write(
            &root.join(".claude-plugin/plugin.json"),
            r#"{"name": "safety gate"}"#,
        );
        write(&root.join("hooks/hooks.json"), r#"{"hooks": {}}"#);
        let (at, p) = locate(&root.join("hooks/hooks.json")).unwrap();
        let p = p.unwrap();
        assert_eq!(
            (p.name.as_str(), p.root.as_path()),
            ("safety gate", root.as_path())
        );
        assert!(matches!(at, HooksAt::File(f) if f == root.join("hooks/hooks.json")));
        assert_eq!(
            p.data_dir(Path::new("/a")),
            Path::new("/a/claude-plugins/data/safety-gate")
        );
        // The directory itself.
        let (at, p) = locate(&root).unwrap();
        assert_eq!(p.unwrap().root, root);
        assert!(matches!(at, HooksAt::File(f) if f == root.join("hooks/hooks.json")));

        // No manifest: a `hooks.json` belongs to the directory above its own.
        let bare = t.path().join("bare");
        write(&bare.join("hooks/hooks.json"), r#"{"hooks": {}}"#);
        let (_, p) = locate(&bare.join("hooks/hooks.json")).unwrap();
        assert_eq!(
            p.unwrap(),
            Plugin {
                name: "bare".into(),
                root: bare
            }
        );

        // A settings file is no plugin's.
        let settings = t.path().join("proj/.claude/settings.json");
        write(&settings, r#"{"hooks": {}}"#);
        assert!(locate(&settings).unwrap().1.is_none());
    }

    #[test]
    fn a_directory_without_hooks_is_an_error_and_a_manifest_may_hold_them() {
        let t = tempfile::tempdir().unwrap();
        let e = locate(t.path()).unwrap_err();
        assert!(e.to_string().contains("hooks/hooks.json"), "{e}");
        write(
            &t.path().join(".claude-plugin/plugin.json"),
            r#"{"name": "x", "hooks": {"Stop": []}}"#,
        );
        assert!(matches!(
            locate(t.path()).unwrap().0,
            HooksAt::Inline { .. }
        ));
        write(
            &t.path().join(".claude-plugin/plugin.json"),
            r#"{"hooks": 3}"#,
        );
        let e = locate(t.path()).unwrap_err();
        assert!(e.to_string().contains("hooks"), "{e}");
    }
}
