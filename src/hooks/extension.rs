//! pi 1.6's TypeScript extensions as hooks: every `.ts`/`.js` extension source — a `-e` path,
//! an entry of `~/.pi/agent/extensions/` or a trusted project's `.pi/extensions/`, a settings
//! `extensions` path — becomes one [`HookSpec`] that runs the extension bridge
//! (`bridge/main.mjs`, a Node program in this repository) on it. From there it is a hook like
//! any other: started through `process::spawn` below pi's watchdog, supervised, restarted and
//! quarantined by the same code, under the trust rules of the place it came from.
//!
//! This module owns only the questions that are particular to extensions: which paths are
//! extension sources (pi 1.6's discovery rules, `loader.js`), which Node runs them (found on
//! `PATH` as hooks' programs are), where the bridge is, and what to tell a user who lacks
//! either.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::exec_check::{is_extension_module, shebang_interpreter};
use super::lookup::{find_on, search_dirs};
use super::spec::{HookSource, HookSpec};
use crate::resources::patterns::{self, Patterns};

/// Overrides where the bridge is: the `bridge/` folder (holding `main.mjs` and its
/// `node_modules`).
pub const BRIDGE_DIR_ENV: &str = "PI_EXTENSION_BRIDGE_DIR";

/// Loading an extension compiles its TypeScript (jiti), which on a busy machine takes longer
/// than a hook's handshake usually may.
pub const START_TIMEOUT: Duration = Duration::from_secs(15);

/// Why an extension cannot be started; each names the extension and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtensionError {
    #[error(
        "extension {name} ({}) needs Node.js 20.6 or later, and `node` is not on PATH: install Node.js (https://nodejs.org, or your system's package manager)",
        path.display()
    )]
    NoNode { name: String, path: PathBuf },
    #[error(
        "extension {name} ({}) needs pi's extension bridge, which is not where pi looked ({}); set {BRIDGE_DIR_ENV} to the bridge/ folder of pi's source",
        path.display(), looked.display()
    )]
    NoBridge {
        name: String,
        path: PathBuf,
        looked: PathBuf,
    },
    #[error(
        "extension {name} ({}) needs the extension bridge's dependencies, which are not installed: run `npm ci --prefix {}`",
        path.display(), dir.display()
    )]
    NoDependencies {
        name: String,
        path: PathBuf,
        dir: PathBuf,
    },
}

/// A file pi 1.6 would load as an extension module, not run: named like one, and not an
/// executable script with a `#!` line (such a file is a hook, whatever its name).
fn is_module_file(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() || !is_extension_module(path) {
        return false;
    }
    let executable = meta.permissions().mode() & 0o111 != 0;
    let shebang = std::fs::read(path)
        .ok()
        .is_some_and(|head| shebang_interpreter(&head[..head.len().min(256)]).is_some());
    !(executable && shebang)
}

/// The entries pi 1.6 loads from an extension directory: its `package.json` `pi.extensions`
/// (those that exist), else `index.ts`, else `index.js`.
pub fn directory_entries(dir: &Path) -> Vec<PathBuf> {
    let manifest = dir.join("package.json");
    if let Ok(text) = std::fs::read_to_string(&manifest) {
        let listed: Vec<PathBuf> = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v["pi"]["extensions"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|p| p.as_str())
            .map(|p| dir.join(p))
            .filter(|p| p.exists())
            .collect();
        if !listed.is_empty() {
            return listed;
        }
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|i| dir.join(i))
        .find(|p| p.is_file())
        .into_iter()
        .collect()
}

/// The extension sources in an extensions directory (`~/.pi/agent/extensions/`,
/// `.pi/extensions/`), by name: its `.ts` and `.js` files, and its subdirectories that have
/// entries (each one source, however many entries its manifest lists). One level deep, as in
/// pi 1.6; a missing directory has none.
pub fn discover(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            if name.starts_with('.') {
                return false;
            }
            if p.is_dir() {
                return !directory_entries(p).is_empty();
            }
            (name.ends_with(".ts") || name.ends_with(".js")) && is_module_file(p)
        })
        .collect();
    found.sort();
    found
}

/// What a path given as an extension (`-e PATH`, a settings `extensions` entry) names: one
/// source (a module file, or a directory with entries), the sources of a directory of
/// extensions, or nothing an extension could be (`None`: the caller treats it as a command).
pub fn sources_at(path: &Path) -> Option<Vec<PathBuf>> {
    if is_module_file(path) {
        return Some(vec![path.to_path_buf()]);
    }
    if !path.is_dir() {
        return None;
    }
    if !directory_entries(path).is_empty() {
        return Some(vec![path.to_path_buf()]);
    }
    let inside = discover(path);
    (!inside.is_empty()).then_some(inside)
}

/// The name pi knows an extension by: its file's stem, or its directory's name for a
/// directory and for a directory's `index.ts`.
pub fn name_of(source: &Path) -> String {
    let stem = source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "extension".into());
    let dir_name = || {
        source
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
    };
    if source.is_dir() {
        return source
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or(stem);
    }
    if stem == "index" {
        return dir_name().unwrap_or(stem);
    }
    stem
}

/// The bridge's folder: [`BRIDGE_DIR_ENV`], else a `bridge/` beside (or above) pi's
/// executable, else the one in the source tree pi was built from.
pub fn bridge_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(BRIDGE_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe()
        .ok()
        .and_then(|e| e.canonicalize().ok());
    if let Some(found) = exe.as_deref().and_then(Path::parent).and_then(|dir| {
        dir.ancestors()
            .map(|d| d.join("bridge"))
            .find(|b| b.join("main.mjs").is_file())
    }) {
        return found;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bridge")
}

/// Everything a bridge process needs that is the machine's, not the extension's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runtime {
    pub node: PathBuf,
    pub bridge: PathBuf,
}

/// Node (on `PATH`'s absolute entries, as hooks' programs are found) and the bridge, or why
/// the extension at `source` cannot run.
pub fn runtime(source: &Path) -> Result<Runtime, ExtensionError> {
    runtime_with(source, std::env::var_os("PATH").as_deref(), &bridge_dir())
}

fn runtime_with(
    source: &Path,
    path: Option<&std::ffi::OsStr>,
    bridge: &Path,
) -> Result<Runtime, ExtensionError> {
    let name = name_of(source);
    let node = find_on("node", &search_dirs(path)).ok_or_else(|| ExtensionError::NoNode {
        name: name.clone(),
        path: source.to_path_buf(),
    })?;
    if !bridge.join("main.mjs").is_file() {
        return Err(ExtensionError::NoBridge {
            name,
            path: source.to_path_buf(),
            looked: bridge.to_path_buf(),
        });
    }
    if !bridge.join("node_modules/jiti/package.json").is_file() {
        return Err(ExtensionError::NoDependencies {
            name,
            path: source.to_path_buf(),
            dir: bridge.to_path_buf(),
        });
    }
    Ok(Runtime {
        node,
        bridge: bridge.to_path_buf(),
    })
}

/// The hook that runs the extension `source` (absolute) through the bridge.
pub fn spec(source: &Path, origin: HookSource, runtime: &Runtime) -> HookSpec {
    let mut spec = HookSpec::new(name_of(source), runtime.node.clone(), origin);
    spec.args = vec![
        runtime.bridge.join("main.mjs").display().to_string(),
        source.display().to_string(),
    ];
    spec.start_timeout = START_TIMEOUT;
    spec.extension = Some(source.to_path_buf());
    // pi 1.6's `getAgentDir()` answers pi's own agent directory; a hook's environment would
    // otherwise not say which it is.
    if let Ok(dir) = crate::config::agent_dir(&crate::config::SystemEnv) {
        spec.env.push((
            crate::config::AGENT_DIR_ENV.into(),
            dir.display().to_string(),
        ));
    }
    spec
}

/// What a settings file's `extensions` list selects: the sources its plain paths name (paths
/// relative to `base`: the agent directory for the user's settings, `.pi/` for a project's),
/// narrowed by its patterns as pi 1.6 narrows them, and the overrides (`!glob`, `+path`,
/// `-path`) that also decide which discovered extensions load
/// ([`crate::resources::patterns`]).
#[derive(Debug, Default)]
pub struct Listed {
    pub sources: Vec<PathBuf>,
    overrides: Patterns,
}

impl Listed {
    /// Whether an extension found in the extensions folder loads.
    pub fn enables(&self, source: &Path) -> bool {
        self.overrides.enables(source)
    }
}

/// Reads a settings file's `extensions` list; an entry that cannot be used is reported (and
/// the rest is used).
pub fn from_settings(
    list: &serde_json::Value,
    file: &str,
    base: &Path,
    warnings: &mut Vec<String>,
) -> Listed {
    let Some(items) = list.as_array() else {
        warnings.push(format!(
            "`extensions` in {file} must be a list of paths; it is ignored"
        ));
        return Listed::default();
    };
    let mut entries: Vec<&str> = Vec::new();
    for item in items {
        match item.as_str() {
            Some(raw) => entries.push(raw),
            None => warnings.push(format!(
                "`extensions` in {file}: {item} is not a path; it is ignored"
            )),
        }
    }
    let patterns = match Patterns::new(entries.iter().copied(), base) {
        Ok(p) => p,
        Err(e) => {
            warnings.push(format!(
                "`extensions` in {file}: {e}; the list's patterns are ignored"
            ));
            Patterns::default()
        }
    };
    let mut all = Vec::new();
    for raw in entries.iter().filter(|e| !patterns::is_pattern(e)) {
        let path = crate::tools::path::resolve(base, raw);
        match sources_at(&path) {
            Some(found) => all.extend(found),
            None => warnings.push(format!(
                "`extensions` in {file}: {} is not an extension (a .ts or .js file, or a folder with index.ts or a package.json `pi.extensions`)",
                path.display()
            )),
        }
    }
    let overrides = Patterns::new(
        entries.iter().copied().filter(|e| patterns::is_override(e)),
        base,
    )
    .unwrap_or_default();
    Listed {
        sources: patterns.apply(&all),
        overrides,
    }
}

/// Specs for `sources`, and a warning for each that cannot run (it is left out, as pi 1.6
/// leaves out an extension that fails to load).
pub fn specs(sources: &[PathBuf], origin: HookSource, warnings: &mut Vec<String>) -> Vec<HookSpec> {
    let mut out = Vec::new();
    for source in sources {
        match runtime(source) {
            Ok(rt) => out.push(spec(source, origin, &rt)),
            Err(e) => warnings.push(e.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn discovery_follows_pi_1_6() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        write(&dir.join("b-gate.ts"), "export default () => {}");
        write(&dir.join("a-tool.js"), "module.exports = () => {}");
        write(&dir.join("notes.md"), "x");
        write(&dir.join(".hidden.ts"), "x");
        write(
            &dir.join("pkg/package.json"),
            r#"{"pi": {"extensions": ["./one.ts", "./gone.ts"]}}"#,
        );
        write(&dir.join("pkg/one.ts"), "x");
        write(&dir.join("plain/index.ts"), "x");
        write(&dir.join("empty/readme.md"), "x");
        let names: Vec<String> = discover(dir).iter().map(|p| name_of(p)).collect();
        assert_eq!(names, ["a-tool", "b-gate", "pkg", "plain"]);
        assert_eq!(
            directory_entries(&dir.join("pkg")),
            [dir.join("pkg/one.ts")]
        );
        assert_eq!(name_of(&dir.join("plain/index.ts")), "plain");
        assert!(discover(&dir.join("missing")).is_empty());
    }

    #[test]
    fn an_executable_script_is_a_hook_not_an_extension() {
        let d = tempfile::tempdir().unwrap();
        let script = d.path().join("gate.ts");
        write(&script, "#!/usr/bin/env tsx\n");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(sources_at(&script), None);
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(sources_at(&script), Some(vec![script.clone()]));
        assert_eq!(sources_at(&d.path().join("gate.py")), None);
        // A folder of extensions is its sources; a folder with an index is one.
        assert_eq!(sources_at(d.path()), Some(vec![script]));
    }

    #[test]
    fn a_missing_node_or_bridge_is_named_with_what_to_install() {
        let d = tempfile::tempdir().unwrap();
        let ext = d.path().join("permission-gate.ts");
        write(&ext, "x");
        let bridge = d.path().join("bridge");
        let e =
            runtime_with(&ext, Some(std::ffi::OsStr::new("/nonexistent")), &bridge).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("extension permission-gate ("), "{msg}");
        assert!(
            msg.contains("`node` is not on PATH: install Node.js"),
            "{msg}"
        );
        assert!(!msg.contains('\n'));
        let bin = d.path().join("bin");
        write(&bin.join("node"), "#!/bin/sh\n");
        std::fs::set_permissions(bin.join("node"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = runtime_with(&ext, Some(bin.as_os_str()), &bridge).unwrap_err();
        assert!(matches!(e, ExtensionError::NoBridge { .. }), "{e}");
        write(&bridge.join("main.mjs"), "x");
        let e = runtime_with(&ext, Some(bin.as_os_str()), &bridge).unwrap_err();
        assert!(e.to_string().contains("run `npm ci --prefix"), "{e}");
        write(&bridge.join("node_modules/jiti/package.json"), "{}");
        let rt = runtime_with(&ext, Some(bin.as_os_str()), &bridge).unwrap();
        let s = spec(&ext, HookSource::Cli, &rt);
        assert_eq!(s.name, "permission-gate");
        assert_eq!(s.program, bin.join("node"));
        assert_eq!(s.args[1], ext.display().to_string());
        assert!(s.args[0].ends_with("bridge/main.mjs"));
    }
}
