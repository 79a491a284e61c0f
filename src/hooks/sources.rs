//! Turning each hook source into [`HookSpec`]s: settings `hooks` lists (managed policy, user
//! and project settings share one entry format), `--hook` command lines, and hooks
//! directories. Which sources load, in which order, and what the managed policy allows is
//! decided by the caller (`app::hooks`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::protocol::FailPolicy;
use super::spec::{is_sha256_hex, HookMode, HookSource, HookSpec};

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot parse hook command {command:?}: {source}")]
    Split {
        command: String,
        source: shell_words::ParseError,
    },
    #[error("hook command is empty")]
    Empty,
    #[error("cannot find hook executable {program:?}{}", if *from_path { " on PATH" } else { "" })]
    NotFound { program: String, from_path: bool },
    #[error("invalid hook entry #{index} in {file}: {message}")]
    Entry {
        file: String,
        index: usize,
        message: String,
    },
    #[error("cannot read hooks directory {dir}: {source}")]
    Dir { dir: String, source: std::io::Error },
}

/// One `hooks` entry of a settings file.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Entry {
    Command(String),
    Full(Box<FullEntry>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FullEntry {
    command: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    env_passthrough: Vec<String>,
    #[serde(default)]
    config: Option<Value>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    start_timeout_ms: Option<u64>,
    #[serde(default)]
    fail: Option<FailPolicy>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    sha256: Option<String>,
    #[serde(default)]
    interpreter_sha256: Option<String>,
}

/// Resolve a program: a path with a `/` is relative to `cwd`; a bare name is looked up on PATH.
pub fn resolve_program(program: &str, cwd: &Path) -> Result<PathBuf, SourceError> {
    if program.contains('/') {
        let p = crate::tools::path::resolve(cwd, program);
        if p.is_file() {
            return Ok(p);
        }
        return Err(SourceError::NotFound {
            program: program.to_string(),
            from_path: false,
        });
    }
    which::which(program).map_err(|_| SourceError::NotFound {
        program: program.to_string(),
        from_path: true,
    })
}

fn default_name(program: &Path) -> String {
    program
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "hook".into())
}

/// A `--hook CMD` (or a settings string): shell-words split, first word resolved.
pub fn from_command(
    command: &str,
    cwd: &Path,
    source: HookSource,
) -> Result<HookSpec, SourceError> {
    let words = shell_words::split(command).map_err(|e| SourceError::Split {
        command: command.to_string(),
        source: e,
    })?;
    let (first, rest) = words.split_first().ok_or(SourceError::Empty)?;
    let program = resolve_program(first, cwd)?;
    let mut spec = HookSpec::new(default_name(&program), program, source);
    spec.args = rest.to_vec();
    Ok(spec)
}

/// The `hooks` list of a settings file.
pub fn from_settings(
    hooks: &Value,
    file: &str,
    cwd: &Path,
    source: HookSource,
) -> Result<Vec<HookSpec>, SourceError> {
    let Value::Array(list) = hooks else {
        return Err(SourceError::Entry {
            file: file.to_string(),
            index: 0,
            message: "`hooks` must be a list".into(),
        });
    };
    let mut out = Vec::new();
    for (index, raw) in list.iter().enumerate() {
        let bad = |message: String| SourceError::Entry {
            file: file.to_string(),
            index,
            message,
        };
        let entry: Entry = serde_json::from_value(raw.clone()).map_err(|e| bad(e.to_string()))?;
        let spec = match entry {
            Entry::Command(c) => from_command(&c, cwd, source)?,
            Entry::Full(f) => {
                let f = *f;
                let mut spec = from_command(&f.command, cwd, source)?;
                spec.args.extend(f.args);
                if let Some(n) = f.name {
                    spec.name = n;
                }
                spec.env = f.env.into_iter().collect();
                spec.env_passthrough = f.env_passthrough;
                if let Some(c) = f.config {
                    spec.config = c;
                }
                if let Some(t) = f.timeout_ms {
                    spec.event_timeout = Duration::from_millis(t);
                }
                if let Some(t) = f.start_timeout_ms {
                    spec.start_timeout = Duration::from_millis(t);
                }
                spec.fail = f.fail;
                spec.mode = match f.mode.as_deref() {
                    None | Some("enforce") => HookMode::Enforce,
                    Some("shadow") => HookMode::Shadow,
                    Some(other) => {
                        return Err(bad(format!(
                            "mode must be \"enforce\" or \"shadow\", not {other:?}"
                        )))
                    }
                };
                spec.sha256 = match f.sha256 {
                    None => None,
                    Some(h) if is_sha256_hex(&h) => Some(h.to_ascii_lowercase()),
                    Some(h) => {
                        return Err(bad(format!(
                            "sha256 must be 64 hexadecimal digits, not {h:?}"
                        )))
                    }
                };
                spec.interpreter_sha256 = match f.interpreter_sha256 {
                    None => None,
                    Some(h) if is_sha256_hex(&h) => Some(h.to_ascii_lowercase()),
                    Some(h) => {
                        return Err(bad(format!(
                            "interpreter_sha256 must be 64 hexadecimal digits, not {h:?}"
                        )))
                    }
                };
                spec.check_pins().map_err(|e| bad(e.to_string()))?;
                spec
            }
        };
        out.push(spec);
    }
    Ok(out)
}

/// Executables in a hooks directory, by file name. A missing directory is no hooks.
pub fn from_dir(dir: &Path, source: HookSource) -> Result<Vec<HookSpec>, SourceError> {
    use std::os::unix::fs::PermissionsExt;
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(SourceError::Dir {
                dir: dir.display().to_string(),
                source: e,
            })
        }
    };
    let mut paths: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            let hidden = p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            let exec = std::fs::metadata(p)
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false);
            !hidden && exec
        })
        .collect();
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|p| HookSpec::new(default_name(&p), p, source))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn exe(dir: &Path, name: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn command_is_split_and_resolved_relative_to_cwd() {
        let d = tempfile::tempdir().unwrap();
        let p = exe(d.path(), "policy.py");
        let s = from_command("./policy.py --strict 'a b'", d.path(), HookSource::Cli).unwrap();
        assert_eq!(s.program, p);
        assert_eq!(s.args, vec!["--strict", "a b"]);
        assert_eq!(s.name, "policy");
        let e = from_command("./missing.py", d.path(), HookSource::Cli).unwrap_err();
        assert!(e.to_string().contains("missing.py"));
        assert!(from_command("sh -c 'unterminated", d.path(), HookSource::Cli).is_err());
    }

    #[test]
    fn bare_names_are_found_on_path() {
        let s = from_command("sh -c true", Path::new("/"), HookSource::Cli).unwrap();
        assert!(s.program.is_absolute());
    }

    #[test]
    fn settings_entries_take_every_field() {
        let d = tempfile::tempdir().unwrap();
        exe(d.path(), "gate");
        let v = serde_json::json!([
            "./gate",
            {"command": "./gate", "args": ["x"], "env": {"A": "1"}, "env_passthrough": ["TOKEN"],
             "config": {"k": 1}, "timeout_ms": 250, "fail": "open", "mode": "shadow", "name": "g2"}
        ]);
        let specs = from_settings(&v, "settings.json", d.path(), HookSource::User).unwrap();
        assert_eq!(specs.len(), 2);
        let s = &specs[1];
        assert_eq!(s.name, "g2");
        assert_eq!(s.args, vec!["x"]);
        assert_eq!(s.env, vec![("A".to_string(), "1".to_string())]);
        assert_eq!(s.event_timeout, Duration::from_millis(250));
        assert_eq!(s.fail, Some(FailPolicy::Open));
        assert_eq!(s.mode, HookMode::Shadow);
        assert_eq!(s.config["k"], 1);
    }

    #[test]
    fn bad_settings_entries_name_the_file_and_index() {
        let d = tempfile::tempdir().unwrap();
        exe(d.path(), "gate");
        let v = serde_json::json!([{"command": "./gate", "mode": "loud"}]);
        let e = from_settings(&v, "settings.json", d.path(), HookSource::User).unwrap_err();
        assert!(
            e.to_string().contains("settings.json") && e.to_string().contains("loud"),
            "{e}"
        );
        let v = serde_json::json!([{"command": "./gate", "timout_ms": 1}]);
        assert!(from_settings(&v, "s.json", d.path(), HookSource::User).is_err());
        let v = serde_json::json!([{"command": "./gate", "sha256": "abc"}]);
        let e = from_settings(&v, "s.json", d.path(), HookSource::User).unwrap_err();
        assert!(e.to_string().contains("64 hexadecimal"), "{e}");
    }

    #[test]
    fn sha256_pins_are_kept_in_lowercase() {
        let d = tempfile::tempdir().unwrap();
        exe(d.path(), "gate");
        let pin = "AB".repeat(32);
        let v = serde_json::json!([{"command": "./gate", "sha256": pin}]);
        let specs = from_settings(&v, "s.json", d.path(), HookSource::Managed).unwrap();
        assert_eq!(specs[0].sha256.as_deref(), Some("ab".repeat(32).as_str()));
    }

    #[test]
    fn hooks_dir_lists_executables_in_name_order() {
        let d = tempfile::tempdir().unwrap();
        exe(d.path(), "b-hook");
        exe(d.path(), "a-hook");
        exe(d.path(), ".hidden");
        std::fs::write(d.path().join("notes.txt"), "x").unwrap();
        let specs = from_dir(d.path(), HookSource::Discovered).unwrap();
        let names: Vec<_> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["a-hook", "b-hook"]);
        assert!(from_dir(&d.path().join("none"), HookSource::Discovered)
            .unwrap()
            .is_empty());
    }
}
