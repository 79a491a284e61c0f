//! Themes as resources: pi 1.6's JSON theme files found where 1.6 looks — `--theme` paths,
//! a trusted project's `.pi/themes/`, `~/.pi/agent/themes/`, and the `theme_paths` hooks
//! return from `resources_discover` — read into [`ThemeSpec`]s (a colour per token), next to
//! the built-in `system`, `dark` and `light`. This module only finds and reads them; the
//! interactive mode turns a spec into the styles it draws with. Nothing here prints: every
//! file that cannot be used is a line in [`Catalog::problems`], and the caller shows them.

mod builtin;
pub mod color;
mod configured;
mod file;
pub mod tokens;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use builtin::SYSTEM;
pub use color::Color;
pub use configured::Configured;
pub use file::{parse, Appearance, ExportColors, ThemeError, ThemeSpec};

/// Where themes come from for one run (or one `/reload`).
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    /// The project is trusted: its `.pi/themes/` loads.
    pub trusted: bool,
    /// `--theme` paths (files or folders), relative to `cwd`.
    pub cli: Vec<PathBuf>,
    /// What hooks contributed (`resources_discover`'s `theme_paths`), already absolute.
    pub hooks: Vec<PathBuf>,
    /// The `themes` settings (user and trusted project).
    pub configured: Configured,
    /// `--no-themes`: the user's and the project's folders and the `themes` settings are not
    /// read (`--theme` paths and hooks' still are, as in 1.6).
    pub no_themes: bool,
}

/// Where a theme was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Builtin,
    Cli,
    Project,
    User,
    /// The `themes` setting.
    Settings,
    Hook,
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    /// The file (none for a built-in).
    pub path: Option<PathBuf>,
    pub origin: Origin,
    /// Read at discovery for files; built-ins are read when first used.
    spec: Option<Arc<ThemeSpec>>,
}

impl Entry {
    pub fn spec(&self) -> Arc<ThemeSpec> {
        match &self.spec {
            Some(s) => s.clone(),
            None => builtin_spec(&self.name),
        }
    }
}

impl Configured {
    /// The `themes` settings from the user's `settings.json` in `agent_dir` and, when the
    /// project is trusted, `cwd/.pi/settings.json`. A file that cannot be read adds nothing
    /// here (reading the settings at start-up already said why).
    pub fn from_files(agent_dir: &Path, cwd: &Path, trusted: bool) -> Configured {
        use crate::config::settings_file::read_object;
        let user = read_object(&crate::config::settings_path(agent_dir))
            .ok()
            .map(serde_json::Value::Object);
        let project_dir = cwd.join(".pi");
        let project = trusted
            .then(|| read_object(&project_dir.join("settings.json")).ok())
            .flatten()
            .map(serde_json::Value::Object);
        let home = dirs::home_dir();
        Configured::read(
            user.as_ref(),
            agent_dir,
            project.as_ref().map(|v| (v, project_dir.as_path())),
            home.as_deref(),
        )
    }
}

/// A built-in theme (`system` for a name that is none of them).
pub fn builtin_spec(name: &str) -> Arc<ThemeSpec> {
    builtin::get(name)
        .or_else(|| builtin::get(SYSTEM))
        .unwrap_or_else(|| Arc::new(ThemeSpec::from_table(SYSTEM, &[], &[])))
}

/// Every theme a run can use, and why the files that cannot be used were left out.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
    pub problems: Vec<String>,
}

impl Catalog {
    /// The built-ins only.
    pub fn builtin() -> Catalog {
        let mut c = Catalog::default();
        for name in builtin::NAMES {
            c.entries.push(Entry {
                name: name.to_string(),
                path: None,
                origin: Origin::Builtin,
                spec: None,
            });
        }
        c
    }

    /// The built-ins and every theme file `sources` names, in 1.6's order: `--theme` paths,
    /// the project's folder, the user's, the `themes` settings' paths, then the hooks'. Of
    /// two themes with one name the first is used and the other reported; a file may replace
    /// a built-in, except `system`. The settings' exclusions apply to all but `--theme`'s.
    pub fn load(sources: &Sources) -> Catalog {
        let mut c = Catalog::builtin();
        let mut found: Vec<(PathBuf, Origin)> = Vec::new();
        for p in &sources.cli {
            found.extend(c.files_at(&sources.cwd.join(p), Origin::Cli, true));
        }
        let mut rest: Vec<(PathBuf, Origin)> = Vec::new();
        if !sources.no_themes {
            if sources.trusted {
                let dir = sources.cwd.join(".pi").join("themes");
                rest.extend(c.files_at(&dir, Origin::Project, false));
            }
            rest.extend(c.files_at(&sources.agent_dir.join("themes"), Origin::User, false));
            c.problems
                .extend(sources.configured.problems.iter().cloned());
            for p in &sources.configured.paths {
                rest.extend(c.files_at(p, Origin::Settings, true));
            }
        }
        for p in &sources.hooks {
            rest.extend(c.files_at(p, Origin::Hook, true));
        }
        found.extend(
            rest.into_iter()
                .filter(|(p, _)| !sources.configured.excludes(p)),
        );
        // A file reached twice (a settings path into a folder already read) loads once.
        let mut seen: Vec<PathBuf> = Vec::new();
        found.retain(|(p, _)| {
            let key = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            let new = !seen.contains(&key);
            seen.push(key);
            new
        });
        let mut replaced_builtins: Vec<String> = Vec::new();
        for (path, origin) in found {
            c.add_file(&path, origin, &mut replaced_builtins);
        }
        c
    }

    /// The `.json` files at `path` (a file or a folder, sorted by name). A missing `path` is
    /// a problem only when it was named explicitly.
    fn files_at(&mut self, path: &Path, origin: Origin, explicit: bool) -> Vec<(PathBuf, Origin)> {
        let Ok(meta) = std::fs::metadata(path) else {
            if explicit {
                self.problems
                    .push(format!("{}: theme path does not exist", path.display()));
            }
            return Vec::new();
        };
        if meta.is_file() {
            if path.extension().is_some_and(|e| e == "json") {
                return vec![(path.to_path_buf(), origin)];
            }
            self.problems.push(format!(
                "{}: theme path is not a .json file",
                path.display()
            ));
            return Vec::new();
        }
        let mut files: Vec<PathBuf> = match std::fs::read_dir(path) {
            Ok(rd) => rd
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
                .collect(),
            Err(e) => {
                self.problems
                    .push(format!("{}: cannot read the folder: {e}", path.display()));
                Vec::new()
            }
        };
        files.sort();
        files.into_iter().map(|p| (p, origin)).collect()
    }

    fn add_file(&mut self, path: &Path, origin: Origin, replaced: &mut Vec<String>) {
        let label = path.display().to_string();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                self.problems.push(format!("{label}: cannot read it: {e}"));
                return;
            }
        };
        let spec = match file::parse(&text, &label) {
            Ok(s) => s,
            Err(e) => {
                self.problems.extend(e.problems);
                return;
            }
        };
        if spec.name == SYSTEM {
            self.problems.push(format!(
                "{label}: the name \"system\" is the built-in theme's; this theme is ignored"
            ));
            return;
        }
        if let Some(i) = self.entries.iter().position(|e| e.name == spec.name) {
            let builtin = self.entries[i].origin == Origin::Builtin;
            if builtin && !replaced.contains(&spec.name) {
                replaced.push(spec.name.clone());
                self.entries[i] = Entry {
                    name: spec.name.clone(),
                    path: Some(path.to_path_buf()),
                    origin,
                    spec: Some(Arc::new(spec)),
                };
                return;
            }
            let first = self.entries[i]
                .path
                .as_ref()
                .map_or("the built-in one".to_string(), |p| p.display().to_string());
            self.problems.push(format!(
                "{label}: another theme is named {:?} ({first}); this one is ignored",
                spec.name
            ));
            return;
        }
        self.entries.push(Entry {
            name: spec.name.clone(),
            path: Some(path.to_path_buf()),
            origin,
            spec: Some(Arc::new(spec)),
        });
    }

    /// Reads the file of the theme called `name` again (it was saved while pi runs) and keeps
    /// what it now says; the catalog is unchanged when the file cannot be used — it is gone,
    /// does not parse, or now names another theme — and the reason comes back.
    pub fn reread(&mut self, name: &str) -> Result<Arc<ThemeSpec>, String> {
        let Some(entry) = self.entries.iter_mut().find(|e| e.name == name) else {
            return Err(format!("theme {name:?} is no longer known"));
        };
        let Some(path) = entry.path.clone() else {
            return Err(format!("theme {name:?} is built in"));
        };
        let label = path.display().to_string();
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{label}: cannot read it: {e}"))?;
        let spec = file::parse(&text, &label).map_err(|e| e.problems.join("; "))?;
        if spec.name != name {
            return Err(format!(
                "{label}: the theme is now named {:?}; /reload to use it under that name",
                spec.name
            ));
        }
        let spec = Arc::new(spec);
        entry.spec = Some(spec.clone());
        Ok(spec)
    }

    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The names, `system` first and the rest in order (as `/settings` lists them).
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .entries
            .iter()
            .map(|e| e.name.clone())
            .filter(|n| n != SYSTEM)
            .collect();
        names.sort();
        names.insert(0, SYSTEM.to_string());
        names
    }

    /// The theme called `name`, or the one-line message that says it does not exist and which
    /// do.
    pub fn select(&self, name: &str) -> Result<&Entry, String> {
        self.get(name).ok_or_else(|| {
            format!(
                "theme {name:?} not found; available: {}",
                self.names().join(", ")
            )
        })
    }
}

/// A `theme` setting as 1.6 reads it: a name, or `light/dark` (the first for a light terminal,
/// the second for a dark one); `None` for an empty or malformed value.
pub fn resolve_setting(setting: &str, terminal: Appearance) -> Option<&str> {
    let setting = setting.trim();
    match setting.split_once('/') {
        Some((light, dark)) => {
            let (light, dark) = (light.trim(), dark.trim());
            if light.is_empty() || dark.is_empty() || dark.contains('/') {
                return None;
            }
            Some(match terminal {
                Appearance::Light => light,
                Appearance::Dark => dark,
            })
        }
        None => (!setting.is_empty()).then_some(setting),
    }
}

/// What the terminal itself said it is (its answer to the colour query), once it answered.
static REPORTED: std::sync::RwLock<Option<Appearance>> = std::sync::RwLock::new(None);

/// Record the appearance the terminal's reported colours say (the interactive mode asks).
pub fn set_reported_appearance(a: Appearance) {
    *REPORTED.write().unwrap_or_else(|p| p.into_inner()) = Some(a);
}

/// Whether the terminal is light or dark, as 1.6's `detectTerminalTheme` decides: the
/// background it reported, else `COLORFGBG`, else dark.
pub fn current_appearance() -> Appearance {
    let reported = *REPORTED.read().unwrap_or_else(|p| p.into_inner());
    reported.unwrap_or_else(|| terminal_appearance(std::env::var("COLORFGBG").ok().as_deref()))
}

/// Whether the terminal is light or dark as far as pi can tell without asking it: the
/// `COLORFGBG` some terminals set (`fg;bg`, the background a palette index: 0–6 and 8 dark,
/// 7 and 9–15 light, as 1.6 and Vim classify it), else dark.
pub fn terminal_appearance(colorfgbg: Option<&str>) -> Appearance {
    let bg = colorfgbg
        .and_then(|v| v.rsplit(';').next())
        .and_then(|b| b.trim().parse::<u8>().ok())
        .filter(|i| *i <= 15);
    match bg {
        Some(i) if i == 7 || i >= 9 => Appearance::Light,
        _ => Appearance::Dark,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme_json(name: &str) -> String {
        builtin::DARK_JSON.replace("\"name\": \"dark\"", &format!("\"name\": \"{name}\""))
    }

    fn sources(dir: &Path) -> Sources {
        Sources {
            agent_dir: dir.join("agent"),
            cwd: dir.join("proj"),
            ..Sources::default()
        }
    }

    #[test]
    fn user_project_cli_and_hook_themes_load_in_order_and_duplicates_are_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        for (rel, name) in [
            ("agent/themes/ocean.json", "ocean"),
            ("agent/themes/shared.json", "shared"),
            ("proj/.pi/themes/shared.json", "shared"),
            ("proj/.pi/themes/proj.json", "proj"),
            ("cli/mine.json", "mine"),
            ("hook/h.json", "hooked"),
        ] {
            let p = d.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, theme_json(name)).unwrap();
        }
        std::fs::write(d.join("agent/themes/notes.txt"), "x").unwrap();
        let mut s = sources(d);
        s.cli = vec![d.join("cli/mine.json")];
        s.hooks = vec![d.join("hook")];
        let untrusted = Catalog::load(&s);
        assert!(untrusted.get("proj").is_none());
        assert_eq!(
            untrusted.names(),
            ["system", "dark", "hooked", "light", "mine", "ocean", "shared"]
        );
        s.trusted = true;
        let c = Catalog::load(&s);
        assert_eq!(c.get("shared").unwrap().origin, Origin::Project);
        assert!(
            c.problems[0].contains("another theme is named \"shared\""),
            "{:?}",
            c.problems
        );
        s.no_themes = true;
        let none = Catalog::load(&s);
        assert_eq!(none.names(), ["system", "dark", "hooked", "light", "mine"]);
    }

    #[test]
    fn the_themes_setting_adds_paths_and_excludes_files() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        for (rel, name) in [
            ("agent/themes/ocean.json", "ocean"),
            ("agent/themes/ocean-draft.json", "draft"),
            ("agent/extra/forest.json", "forest"),
        ] {
            let p = d.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, theme_json(name)).unwrap();
        }
        let user = serde_json::json!({"themes": ["extra", "themes/ocean.json", "!*-draft.json"]});
        let mut s = sources(d);
        s.configured = Configured::read(Some(&user), &d.join("agent"), None, None);
        let c = Catalog::load(&s);
        assert_eq!(c.names(), ["system", "dark", "forest", "light", "ocean"]);
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.get("forest").unwrap().origin, Origin::Settings);
        s.no_themes = true;
        assert_eq!(Catalog::load(&s).names(), ["system", "dark", "light"]);
    }

    #[test]
    fn a_missing_cli_path_and_an_unknown_name_are_clear() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = sources(tmp.path());
        s.cli = vec!["nope.json".into()];
        let c = Catalog::load(&s);
        assert!(c.problems[0].ends_with("nope.json: theme path does not exist"));
        let e = c.select("ocean").unwrap_err();
        assert_eq!(
            e,
            "theme \"ocean\" not found; available: system, dark, light"
        );
    }

    #[test]
    fn the_setting_can_name_a_light_and_a_dark_theme() {
        assert_eq!(
            resolve_setting("light/dark", Appearance::Light),
            Some("light")
        );
        assert_eq!(
            resolve_setting("sol / night", Appearance::Dark),
            Some("night")
        );
        assert_eq!(resolve_setting("a/b/c", Appearance::Dark), None);
        assert_eq!(resolve_setting("ocean", Appearance::Dark), Some("ocean"));
        assert_eq!(terminal_appearance(Some("0;15")), Appearance::Light);
        assert_eq!(terminal_appearance(Some("15;default;0")), Appearance::Dark);
        assert_eq!(terminal_appearance(None), Appearance::Dark);
    }
}
