//! Project trust: the remembered decisions in `trust.json`, the `defaultProjectTrust` setting,
//! and the order in which a run's decision is reached (pi's `trust-manager.ts` and
//! `project-trust.ts`).
//!
//! Trust guards what a repository can make `pi` load at start-up — its settings, hooks,
//! skills, templates and SYSTEM.md — before the user has agreed. The order is fixed:
//! `-a`/`-na`, then "nothing here needs trust", then the hooks' `project_trust` answers (the
//! caller asks them; only managed, user and command-line hooks are running at that point),
//! then the nearest remembered decision, then `defaultProjectTrust`, and finally a prompt —
//! which only an interactive mode can show, so `ask` means "not trusted" everywhere else.
//! Nothing here prints or talks to hooks; the caller does both.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// `defaultProjectTrust` (a global setting; a project cannot vouch for itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DefaultTrust {
    #[default]
    Ask,
    Always,
    Never,
}

/// A `defaultProjectTrust` value that is none of the three.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("defaultProjectTrust must be \"ask\", \"always\" or \"never\", not {0}; using \"ask\"")]
pub struct InvalidDefaultTrust(pub String);

impl DefaultTrust {
    /// Read the setting's value; anything unrecognised is reported and treated as `ask`,
    /// the safe reading.
    pub fn from_setting(v: Option<&Value>) -> Result<DefaultTrust, InvalidDefaultTrust> {
        match v {
            None => Ok(DefaultTrust::Ask),
            Some(Value::String(s)) if s == "ask" => Ok(DefaultTrust::Ask),
            Some(Value::String(s)) if s == "always" => Ok(DefaultTrust::Always),
            Some(Value::String(s)) if s == "never" => Ok(DefaultTrust::Never),
            Some(other) => Err(InvalidDefaultTrust(other.to_string())),
        }
    }
}

/// Why the project is (or is not) trusted — shown with `--verbose` and in `pi hooks`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustReason {
    /// `-a/--approve` or `-na/--no-approve`.
    Flag,
    /// The directory has nothing trust would guard.
    NothingToGuard,
    /// A hook's `project_trust` answer.
    Hook { name: String, remembered: bool },
    /// A decision in `trust.json` for this directory or an ancestor.
    Remembered { dir: PathBuf },
    /// `defaultProjectTrust` is `always` or `never`.
    Default,
    /// `ask`, with no way to ask in this mode.
    NoPrompt,
    /// `ask`, and the person answered at the terminal (`remembered`: "always").
    Asked { remembered: bool },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustDecision {
    pub trusted: bool,
    pub reason: TrustReason,
}

impl TrustDecision {
    pub fn describe(&self) -> String {
        let verdict = if self.trusted {
            "trusted"
        } else {
            "not trusted"
        };
        let why = match &self.reason {
            TrustReason::Flag => "by --approve/--no-approve".to_string(),
            TrustReason::NothingToGuard => "(no project resources that need trust)".to_string(),
            TrustReason::Hook { name, remembered } => format!(
                "by hook {name}{}",
                if *remembered { " (remembered)" } else { "" }
            ),
            TrustReason::Remembered { dir } => {
                format!("by the decision for {} in trust.json", dir.display())
            }
            TrustReason::Default => "by defaultProjectTrust".to_string(),
            TrustReason::Asked { remembered } => {
                format!("by you{}", if *remembered { " (remembered)" } else { "" })
            }
            TrustReason::NoPrompt => {
                "(undecided, and this mode cannot ask; run with -a to trust it)".to_string()
            }
        };
        format!("project {verdict} {why}")
    }
}

/// The steps before hooks are asked: a flag decides, or a directory with nothing to guard is
/// trusted outright (so no hook is asked about it).
pub fn before_hooks(approve: Option<bool>, needs_trust: bool) -> Option<TrustDecision> {
    if let Some(trusted) = approve {
        return Some(TrustDecision {
            trusted,
            reason: TrustReason::Flag,
        });
    }
    (!needs_trust).then_some(TrustDecision {
        trusted: true,
        reason: TrustReason::NothingToGuard,
    })
}

/// The steps after the hooks left it undecided: the nearest remembered decision, then the
/// default. `ask` without a prompt (every non-interactive mode) is "not trusted".
pub fn after_hooks(remembered: Option<(PathBuf, bool)>, default: DefaultTrust) -> TrustDecision {
    if let Some((dir, trusted)) = remembered {
        return TrustDecision {
            trusted,
            reason: TrustReason::Remembered { dir },
        };
    }
    match default {
        DefaultTrust::Always => TrustDecision {
            trusted: true,
            reason: TrustReason::Default,
        },
        DefaultTrust::Never => TrustDecision {
            trusted: false,
            reason: TrustReason::Default,
        },
        DefaultTrust::Ask => TrustDecision {
            trusted: false,
            reason: TrustReason::NoPrompt,
        },
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TrustStoreError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is not a JSON object of directory → true/false: {detail}", path.display())]
    Invalid { path: PathBuf, detail: String },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// `<agent dir>/trust.json`: a flat object from canonical absolute directory to `true`/`false`.
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    pub fn new(agent_dir: &Path) -> TrustStore {
        TrustStore {
            path: agent_dir.join("trust.json"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every decision. A missing file is no decisions; a damaged one is an error (the caller
    /// reports it and goes on as if nothing were remembered, which is the safe side).
    pub fn load(&self) -> Result<BTreeMap<String, bool>, TrustStoreError> {
        let text = match fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(source) => {
                return Err(TrustStoreError::Read {
                    path: self.path.clone(),
                    source,
                })
            }
        };
        let invalid = |detail: String| TrustStoreError::Invalid {
            path: self.path.clone(),
            detail,
        };
        let value: Value = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        let Value::Object(map) = value else {
            return Err(invalid("the top level is not an object".into()));
        };
        let mut out = BTreeMap::new();
        for (k, v) in map {
            match v {
                Value::Bool(b) => {
                    out.insert(k, b);
                }
                // pi deletes an entry by writing null; treat one left behind as absent.
                Value::Null => {}
                other => return Err(invalid(format!("{k:?} maps to {other}, not true/false"))),
            }
        }
        Ok(out)
    }

    /// The decision for `dir` or its nearest ancestor that has one.
    pub fn lookup(&self, dir: &Path) -> Result<Option<(PathBuf, bool)>, TrustStoreError> {
        let decisions = self.load()?;
        Ok(nearest(&decisions, &canonical(dir)))
    }

    /// Remember a decision for `dir`. Keys stay sorted (the map is ordered) and the file is
    /// replaced atomically, so a crash never leaves half a trust file.
    pub fn remember(&self, dir: &Path, trusted: bool) -> Result<(), TrustStoreError> {
        let mut decisions = self.load()?;
        decisions.insert(canonical(dir).display().to_string(), trusted);
        let write_err = |source| TrustStoreError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(parent) = self.path.parent() {
            fs::create_dir_all(parent).map_err(write_err)?;
        }
        let text = serde_json::to_string_pretty(&decisions).unwrap_or_else(|_| "{}".into());
        let tmp = self
            .path
            .with_extension(format!("json.tmp{}", std::process::id()));
        fs::write(&tmp, format!("{text}\n")).map_err(write_err)?;
        fs::rename(&tmp, &self.path).map_err(write_err)
    }
}

fn canonical(dir: &Path) -> PathBuf {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
}

fn nearest(decisions: &BTreeMap<String, bool>, dir: &Path) -> Option<(PathBuf, bool)> {
    dir.ancestors().find_map(|a| {
        decisions
            .get(a.to_str()?)
            .map(|&trusted| (a.to_path_buf(), trusted))
    })
}

/// The same order, with hooks to ask only when `runner` is given (`pi hooks` has none running).
pub async fn decide_with(
    approve: Option<bool>,
    global: &crate::config::Settings,
    agent_dir: &Path,
    cwd: &Path,
    runner: Option<&crate::hooks::runner::Runner>,
) -> TrustDecision {
    let home = dirs::home_dir().unwrap_or_else(|| "/".into());
    if let Some(d) = before_hooks(
        approve,
        crate::resources::context::project_needs_trust(cwd, &home),
    ) {
        return d;
    }
    let store = TrustStore::new(agent_dir);
    let voted = match runner {
        Some(r) => r.decide_trust(&cwd.display().to_string()).await,
        None => None,
    };
    if let Some((trusted, remember, name)) = voted {
        if remember {
            if let Err(e) = store.remember(cwd, trusted) {
                term_eprintln!("Warning: hook {name}'s trust decision is not remembered: {e}");
            }
        }
        return TrustDecision {
            trusted,
            reason: TrustReason::Hook {
                name,
                remembered: remember,
            },
        };
    }
    let remembered = store.lookup(cwd).unwrap_or_else(|e| {
        term_eprintln!("Warning: {e}; no remembered trust decision is used");
        None
    });
    let default =
        DefaultTrust::from_setting(global.get("defaultProjectTrust")).unwrap_or_else(|e| {
            term_eprintln!(
                "Warning: {}: {e}",
                agent_dir.join("settings.json").display()
            );
            DefaultTrust::Ask
        });
    after_hooks(remembered, default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_ancestor_decision_wins() {
        let mut d = BTreeMap::new();
        d.insert("/work".to_string(), true);
        d.insert("/work/shop/vendor".to_string(), false);
        assert_eq!(
            nearest(&d, Path::new("/work/shop/src")),
            Some((PathBuf::from("/work"), true))
        );
        assert_eq!(
            nearest(&d, Path::new("/work/shop/vendor/lib")),
            Some((PathBuf::from("/work/shop/vendor"), false))
        );
        assert_eq!(nearest(&d, Path::new("/elsewhere")), None);
        // A sibling with a shared prefix is not an ancestor.
        assert_eq!(nearest(&d, Path::new("/workshop")), None);
    }

    #[test]
    fn flag_beats_everything_and_nothing_to_guard_is_trusted() {
        assert!(!before_hooks(Some(false), true)
            .map(|d| d.trusted)
            .unwrap_or(true));
        assert!(before_hooks(Some(true), false)
            .map(|d| d.trusted)
            .unwrap_or(false));
        assert_eq!(
            before_hooks(None, false).map(|d| d.reason),
            Some(TrustReason::NothingToGuard)
        );
        assert_eq!(before_hooks(None, true), None);
    }

    #[test]
    fn remembered_beats_default_and_ask_without_prompt_is_untrusted() {
        let r = after_hooks(Some(("/p".into(), false)), DefaultTrust::Always);
        assert!(!r.trusted);
        assert!(after_hooks(None, DefaultTrust::Always).trusted);
        assert!(!after_hooks(None, DefaultTrust::Never).trusted);
        let ask = after_hooks(None, DefaultTrust::Ask);
        assert_eq!((ask.trusted, ask.reason), (false, TrustReason::NoPrompt));
    }

    #[test]
    fn default_setting_values() {
        assert_eq!(
            DefaultTrust::from_setting(Some(&Value::from("always"))),
            Ok(DefaultTrust::Always)
        );
        assert_eq!(DefaultTrust::from_setting(None), Ok(DefaultTrust::Ask));
        assert!(DefaultTrust::from_setting(Some(&Value::from("yes"))).is_err());
    }

    #[test]
    fn remember_writes_sorted_canonical_keys_and_keeps_others() {
        let tmp = tempfile::tempdir().unwrap();
        let b = tmp.path().join("b");
        let a = tmp.path().join("a");
        fs::create_dir_all(&b).unwrap();
        fs::create_dir_all(&a).unwrap();
        let store = TrustStore::new(&tmp.path().join("agent"));
        store.remember(&b, true).unwrap();
        store.remember(&a, false).unwrap();
        let text = fs::read_to_string(store.path()).unwrap();
        let a_key = a.canonicalize().unwrap().display().to_string();
        let b_key = b.canonicalize().unwrap().display().to_string();
        assert!(text.find(&a_key).unwrap() < text.find(&b_key).unwrap());
        fs::create_dir_all(b.join("deep")).unwrap();
        assert_eq!(
            store.lookup(&b.join("deep")).unwrap().map(|(_, t)| t),
            Some(true),
            "a subdirectory inherits its ancestor's decision"
        );
        assert_eq!(store.lookup(&b).unwrap().map(|(_, t)| t), Some(true));
        assert_eq!(store.lookup(&a).unwrap().map(|(_, t)| t), Some(false));
    }

    #[test]
    fn damaged_store_is_an_error_not_a_decision() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("trust.json"), "{\"/x\": \"yes\"}").unwrap();
        let store = TrustStore::new(tmp.path());
        assert!(matches!(store.load(), Err(TrustStoreError::Invalid { .. })));
    }
}
