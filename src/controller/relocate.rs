//! Moving the run into another project's session, as pi 1.6 does when it switches into a
//! session whose header names another directory: the run then works there (see
//! [`super::Place`]). This module owns the two questions such a move asks first: does that
//! directory still exist (pi's missing-cwd case, [`MissingCwd`], worded as 1.6 words it), and
//! is that project trusted — decided in start-up's order (`-a`/`-na`, nothing to guard, the
//! hooks' `project_trust`, `trust.json`, `defaultProjectTrust`), once per directory for the
//! run as 1.6 caches it, and asked with 1.6's question only where someone can answer (the
//! interactive mode; RPC and print leave an undecided project untrusted, as 1.6 does).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{lock, Core, Place};
use crate::config::{self, Settings};
use crate::hooks::ui::{Dialog, DialogAnswer};
use crate::resources::trust::{TrustReason, TrustStore};

/// A session's directory that is gone, and the one the run would work in instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingCwd {
    pub session_cwd: String,
    pub session_file: Option<PathBuf>,
    pub fallback: PathBuf,
}

impl std::fmt::Display for MissingCwd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Stored session working directory does not exist: {}",
            self.session_cwd
        )?;
        if let Some(file) = &self.session_file {
            write!(f, "\nSession file: {}", file.display())?;
        }
        write!(
            f,
            "\nCurrent working directory: {}",
            self.fallback.display()
        )
    }
}

impl std::error::Error for MissingCwd {}

impl MissingCwd {
    /// 1.6's heading for the question what to do about it.
    pub fn prompt(&self) -> String {
        format!("Session cwd does not exist: {}", self.session_cwd)
    }

    /// 1.6's three answers, in its order: continue here, fork here, cancel.
    pub fn options(&self) -> [String; 3] {
        let here = self.fallback.display();
        [
            format!("Continue in {here} (asks again next time)"),
            format!("Fork into {here} (new session ID, original kept)"),
            "Cancel".to_string(),
        ]
    }
}

/// Where a session with header directory `session_cwd` works when the run is in `current`:
/// `None` when that is `current` (or the header names none), else the other directory, or
/// the missing-cwd case.
pub fn destination(
    session_cwd: &str,
    file: Option<&Path>,
    current: &Path,
) -> Result<Option<PathBuf>, MissingCwd> {
    if session_cwd.is_empty() || Path::new(session_cwd) == current {
        return Ok(None);
    }
    if Path::new(session_cwd).is_dir() {
        return Ok(Some(PathBuf::from(session_cwd)));
    }
    Err(MissingCwd {
        session_cwd: session_cwd.to_string(),
        session_file: file.map(Path::to_path_buf),
        fallback: current.to_path_buf(),
    })
}

impl Core {
    /// The place the run works in at `cwd`: the trust decided there once per run.
    pub(super) async fn place_for(&self, cwd: PathBuf) -> Place {
        let known = lock(&self.trust_seen).get(&cwd).copied();
        let trusted = match known {
            Some(t) => t,
            None => self.decide_trust(&cwd).await,
        };
        lock(&self.trust_seen).insert(cwd.clone(), trusted);
        Place { cwd, trusted }
    }

    async fn decide_trust(&self, cwd: &Path) -> bool {
        let agent_dir = &self.fixed.agent_dir;
        // The user's settings alone: a project cannot vote on its own (or another's) trust.
        let global = Settings::load(&config::settings_path(agent_dir), None)
            .unwrap_or_else(|_| Settings::from_value(serde_json::Value::Null));
        let runner = self.runner();
        let decision = crate::resources::trust::decide_with(
            self.fixed.options.approve,
            &global,
            agent_dir,
            cwd,
            Some(&runner),
        )
        .await;
        if decision.reason != TrustReason::NoPrompt || self.hooks().context().mode != "interactive"
        {
            return decision.trusted;
        }
        self.ask_trust(cwd).await
    }

    /// 1.6's question (`getProjectTrustOptions` with the session-only answers), asked in the
    /// front end; what the answer says to remember goes to `trust.json`. Esc: not trusted.
    async fn ask_trust(&self, cwd: &Path) -> bool {
        let parent = cwd.parent().filter(|p| *p != cwd);
        let mut options = vec![("Trust".to_string(), true, Some(cwd))];
        if let Some(p) = parent {
            let label = format!("Trust parent folder ({})", p.display());
            options.push((label, true, Some(p)));
        }
        options.push(("Trust (this session only)".into(), true, None));
        options.push(("Do not trust".into(), false, Some(cwd)));
        options.push(("Do not trust (this session only)".into(), false, None));
        let dialog = Dialog::Select {
            title: format!(
                "Trust project folder?\n{}\n\nThis allows pi to load .pi settings and resources, \
                 install missing project packages, and execute project extensions.",
                cwd.display()
            ),
            options: options.iter().map(|o| o.0.clone()).collect(),
        };
        let ui: Arc<dyn crate::hooks::ui::HookUi> = self.fixed.ui.clone();
        let answer = ui.dialog("pi", &dialog, None).await;
        let Ok(DialogAnswer::Value(v)) = answer else {
            return false;
        };
        let Some((_, trusted, remember)) = options.into_iter().find(|o| o.0 == v) else {
            return false;
        };
        if let Some(dir) = remember {
            if let Err(e) = TrustStore::new(&self.fixed.agent_dir).remember(dir, trusted) {
                term_eprintln!("Warning: your answer is not remembered: {e}");
            }
        }
        trusted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_existing_directory_is_a_destination_a_gone_one_is_reported() {
        let other = tempfile::tempdir().unwrap();
        let other_s = other.path().display().to_string();
        let here = Path::new("/here");
        assert_eq!(
            destination(&other_s, None, here),
            Ok(Some(other.path().to_path_buf()))
        );
        assert_eq!(destination("/here", None, here), Ok(None));
        assert_eq!(destination("", None, here), Ok(None));
        let gone = destination("/gone/away", Some(Path::new("/s/f.jsonl")), here).unwrap_err();
        assert_eq!(
            gone.to_string(),
            "Stored session working directory does not exist: /gone/away\n\
             Session file: /s/f.jsonl\nCurrent working directory: /here"
        );
        assert_eq!(gone.prompt(), "Session cwd does not exist: /gone/away");
        assert_eq!(
            gone.options()[0],
            "Continue in /here (asks again next time)"
        );
    }
}
