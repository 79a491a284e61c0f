//! Turning each hook source into [`HookSpec`]s: settings `hooks` lists (managed policy, user
//! and project settings share one entry format), `--hook` command lines, and hooks
//! directories. Which sources load, in which order, and against which directory a source's
//! relative paths resolve is decided by the caller (`app::hooks`); how a program is found is
//! `lookup`'s (managed entries search the fixed system `PATH`, others only the absolute
//! entries of pi's `PATH`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::lookup::{resolve_program, LookupError, SearchPath};
use super::protocol::{json_kind, FailPolicy};
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
    #[error("cannot find hook executable {program:?}{}", searched.as_deref().map(|s| format!(" on {s}")).unwrap_or_default())]
    NotFound {
        program: String,
        /// Where a bare name was looked for; `None` for a path.
        searched: Option<String>,
    },
    #[error(transparent)]
    Lookup(LookupError),
    /// `index` counts from 1, as people do.
    #[error("invalid hook entry #{index} in {file}: {message}")]
    Entry {
        file: String,
        index: usize,
        message: String,
    },
    #[error("`hooks` in {file} must be a list of commands or hook entries, not {got}")]
    NotAList { file: String, got: &'static str },
    #[error("cannot read hooks directory {dir}: {source}")]
    Dir { dir: String, source: std::io::Error },
    /// An extension the user named (`-e`) that cannot run here.
    #[error(transparent)]
    Extension(#[from] super::extension::ExtensionError),
}

impl From<LookupError> for SourceError {
    fn from(e: LookupError) -> SourceError {
        match e {
            LookupError::NotFound { program, searched } => {
                SourceError::NotFound { program, searched }
            }
            other => SourceError::Lookup(other),
        }
    }
}

/// One `hooks` entry of a settings file.
#[derive(Debug)]
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

/// An entry of a `hooks` list. Dispatched by hand rather than with `#[serde(untagged)]`, which
/// would replace serde's message (naming the misspelt key) with "did not match any variant".
fn parse_entry(raw: &Value) -> Result<Entry, String> {
    match raw {
        Value::String(c) => Ok(Entry::Command(c.clone())),
        Value::Object(map) => full_entry(map).map(|f| Entry::Full(Box::new(f))),
        other => Err(format!(
            "a hook entry is a command string or an object, not {}",
            json_kind(other)
        )),
    }
}

/// Parses an object entry; an error names the key at fault. serde names an unknown or missing
/// key itself, but not the key whose value has the wrong type, so on failure each key is
/// tried alone to find it.
fn full_entry(map: &Map<String, Value>) -> Result<FullEntry, String> {
    let whole = match serde_json::from_value::<FullEntry>(Value::Object(map.clone())) {
        Ok(f) => return Ok(f),
        Err(e) => e.to_string(),
    };
    for (k, v) in map {
        let mut one = Map::new();
        one.insert("command".into(), Value::String("x".into()));
        one.insert(k.clone(), v.clone());
        if let Err(e) = serde_json::from_value::<FullEntry>(Value::Object(one)) {
            let e = e.to_string();
            return Err(if e.contains(&format!("`{k}`")) {
                e
            } else {
                format!("`{k}`: {e}")
            });
        }
    }
    Err(whole)
}

/// Where a source's bare command names are looked up: managed entries on the fixed system
/// `PATH` (or the one their `env` sets), everything else on pi's `PATH`.
fn search_path(source: HookSource, entry_path: Option<&str>) -> SearchPath {
    if source == HookSource::Managed {
        SearchPath::managed(entry_path)
    } else {
        SearchPath::from_env()
    }
}

fn default_name(program: &Path) -> String {
    program
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "hook".into())
}

/// A command line: shell-words split, first word resolved (a path against `base`, a bare
/// name on `search`).
fn from_words(
    command: &str,
    base: &Path,
    search: &SearchPath,
    source: HookSource,
) -> Result<HookSpec, SourceError> {
    let words = shell_words::split(command).map_err(|e| SourceError::Split {
        command: command.to_string(),
        source: e,
    })?;
    let (first, rest) = words.split_first().ok_or(SourceError::Empty)?;
    let program = resolve_program(first, base, search, source != HookSource::Managed)?;
    let mut spec = HookSpec::new(default_name(&program), program, source);
    spec.args = rest.to_vec();
    Ok(spec)
}

/// A `--hook CMD` (or a settings string): shell-words split, first word resolved — a path
/// against `base`, a bare name on the source's `PATH`.
pub fn from_command(
    command: &str,
    base: &Path,
    source: HookSource,
) -> Result<HookSpec, SourceError> {
    from_words(command, base, &search_path(source, None), source)
}

/// The `hooks` list of a settings file; relative paths resolve against `base`.
pub fn from_settings(
    hooks: &Value,
    file: &str,
    base: &Path,
    source: HookSource,
) -> Result<Vec<HookSpec>, SourceError> {
    let Value::Array(list) = hooks else {
        return Err(SourceError::NotAList {
            file: file.to_string(),
            got: json_kind(hooks),
        });
    };
    let mut out = Vec::new();
    for (i, raw) in list.iter().enumerate() {
        let bad = |message: String| SourceError::Entry {
            file: file.to_string(),
            index: i + 1,
            message,
        };
        let spec = match parse_entry(raw).map_err(bad)? {
            Entry::Command(c) => from_command(&c, base, source)?,
            Entry::Full(f) => {
                let f = *f;
                let search = search_path(source, f.env.get("PATH").map(String::as_str));
                let mut spec = from_words(&f.command, base, &search, source)?;
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
        let v = serde_json::json!(["./gate", {"command": "./gate", "timout_ms": 1}]);
        let e = from_settings(&v, "s.json", d.path(), HookSource::User).unwrap_err();
        let e = e.to_string();
        assert!(
            e.starts_with("invalid hook entry #2 in s.json: unknown field `timout_ms`"),
            "{e}"
        );
        assert!(e.contains("expected one of `command`"), "{e}");
        let v = serde_json::json!([{"command": "./gate", "env": {"A": 1}}]);
        let e = from_settings(&v, "s.json", d.path(), HookSource::User).unwrap_err();
        assert!(
            e.to_string().contains("#1 in s.json: `env`: invalid type"),
            "{e}"
        );
        let v = serde_json::json!([{"name": "x"}]);
        let e = from_settings(&v, "s.json", d.path(), HookSource::User).unwrap_err();
        assert!(e.to_string().contains("missing field `command`"), "{e}");
        let v = serde_json::json!([7]);
        let e = from_settings(&v, "s.json", d.path(), HookSource::User).unwrap_err();
        assert!(e.to_string().contains("not a number"), "{e}");
        let e = from_settings(&serde_json::json!({}), "s.json", d.path(), HookSource::User)
            .unwrap_err();
        assert!(e.to_string().contains("must be a list"), "{e}");
        let v = serde_json::json!([{"command": "./gate", "sha256": "abc"}]);
        let e = from_settings(&v, "s.json", d.path(), HookSource::User).unwrap_err();
        assert!(e.to_string().contains("64 hexadecimal"), "{e}");
    }

    #[test]
    fn managed_bare_names_resolve_on_the_system_path_or_the_entrys_own() {
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        exe(&bin, "acme-policy");
        let v = serde_json::json!(["acme-policy"]);
        let e = from_settings(&v, "m.json", d.path(), HookSource::Managed).unwrap_err();
        assert!(
            e.to_string()
                .contains("on the managed hooks' PATH /usr/local/sbin:"),
            "{e}"
        );
        let path = format!("{}:/usr/bin", bin.display());
        let v = serde_json::json!([{"command": "acme-policy", "env": {"PATH": path}}]);
        let specs = from_settings(&v, "m.json", d.path(), HookSource::Managed).unwrap();
        assert_eq!(specs[0].program, bin.join("acme-policy"));
        let s = from_command("sh -c true", Path::new("/"), HookSource::Managed).unwrap();
        assert!(s.program.starts_with("/usr") || s.program.starts_with("/bin"));
        let v = serde_json::json!(["~/bin/acme-policy"]);
        let e = from_settings(&v, "m.json", d.path(), HookSource::Managed).unwrap_err();
        assert!(e.to_string().contains("cannot start with `~`"), "{e}");
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
