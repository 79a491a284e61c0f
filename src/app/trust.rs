//! The run's project-trust decision, reached in the seeds' order with the hooks already
//! started in the first phase (managed, user and command-line hooks — never the project's):
//! `-a`/`-na`, nothing to guard, the hooks' `project_trust` answers, `trust.json`, then
//! `defaultProjectTrust`. The caller loads project resources only when this says so.

use std::path::Path;

use crate::cli::Cli;
use crate::config::Settings;
use crate::hooks::runner::Runner;
use crate::resources::trust::{TrustDecision, TrustReason, TrustStore};

/// Decide whether this run trusts `cwd`. `global` is the user's settings alone: a project
/// cannot vote on its own trust. Problems with `trust.json` or the setting are reported and
/// resolved towards "not trusted".
pub async fn decide(
    cli: &Cli,
    global: &Settings,
    agent_dir: &Path,
    cwd: &Path,
    runner: &Runner,
) -> TrustDecision {
    let approve = if cli.approve {
        Some(true)
    } else if cli.no_approve {
        Some(false)
    } else {
        None
    };
    decide_with(approve, global, agent_dir, cwd, Some(runner)).await
}

pub use crate::resources::trust::decide_with;

/// `defaultProjectTrust: "ask"` on a terminal: the question, asked before anything of the
/// project loads. "Always" is remembered in `trust.json`; a terminal that cannot be used, or
/// Esc, leaves the project untrusted.
pub async fn ask(agent_dir: &Path, cwd: &Path, global: &Settings) -> TrustDecision {
    let theme = crate::modes::interactive::theme::Theme::from_env(
        global.get("theme").and_then(|v| v.as_str()),
        agent_dir,
    );
    let home = dirs::home_dir().unwrap_or_else(|| "/".into());
    let dir = cwd.to_path_buf();
    let asked = tokio::task::spawn_blocking(move || {
        crate::modes::interactive::trust_prompt::ask(&dir, &home, &theme)
    })
    .await;
    use crate::modes::interactive::trust_prompt::TrustAnswer;
    let answer = match asked {
        Ok(Ok(a)) => a,
        Ok(Err(e)) => {
            term_eprintln!("Warning: cannot ask about trusting this project ({e}); not trusted");
            TrustAnswer::NotNow
        }
        Err(e) => {
            term_eprintln!("Warning: the trust question failed ({e}); not trusted");
            TrustAnswer::NotNow
        }
    };
    let remembered = answer == TrustAnswer::Always;
    if remembered {
        if let Err(e) = TrustStore::new(agent_dir).remember(cwd, true) {
            term_eprintln!("Warning: your answer is not remembered: {e}");
        }
    }
    TrustDecision {
        trusted: answer != TrustAnswer::NotNow,
        reason: TrustReason::Asked { remembered },
    }
}

/// What the user is told about the decision: with `--verbose` always; otherwise only when
/// project resources were left out because nobody could be asked, so their absence is never
/// a mystery.
pub fn report(decision: &TrustDecision, verbose: bool) {
    if verbose || decision.reason == TrustReason::NoPrompt {
        term_eprintln!("Note: {}", decision.describe());
    }
}
