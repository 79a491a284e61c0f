//! Claude Code command hooks, unchanged (SPEC 4.7): the `hooks` object of a Claude Code
//! `settings.json` (`--claude-hooks FILE`, or the `commandHooks` settings key) run one
//! process per event as Claude Code runs them — its stdin JSON, exit codes, JSON output,
//! matchers, timeouts, `$CLAUDE_PROJECT_DIR` — each command a participant in pi's own event
//! semantics, so several combine in configuration order and a hook that cannot run fails
//! under its `fail` policy instead of allowing.
//!
//! `config` reads the format, `sources` where it comes from (`plugin`: a plugin's root and
//! data directory), `label` the readable part of a hook's name, `hook_env` what of pi's
//! environment a hook gets, `preflight` what is checked before it starts, `matcher` and
//! `names` (tool names and arguments both ways) are pure rules, `mcp_names` asks the registry
//! for MCP tools' real names, `input` builds stdin, `output` reads what the process said,
//! `run` runs it, `endpoint` is the runner's view of one command, `ask` what an `ask` shows
//! the person, `latency` what each costs, and `transcript` the Claude Code view of the
//! session that `transcript_path` names. [`ClaudeSet`] is one hook generation's Claude Code
//! hooks.

pub mod ask;
pub mod config;
pub mod endpoint;
pub mod hook_env;
pub mod input;
pub mod label;
pub mod latency;
pub mod matcher;
pub mod mcp_names;
pub mod names;
pub mod output;
pub mod plugin;
pub mod preflight;
pub mod run;
pub mod sources;
pub mod transcript;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

pub use config::{ClaudeEvent, ClaudeSpec};
use endpoint::{ClaudeHook, Shared};

use crate::agent::events::AgentEvent;
use crate::hooks::calls::HostCalls;
use crate::hooks::instance::HostContext;
use crate::hooks::runner::Endpoint;
use crate::hooks::spec::HookSource;
use crate::tools::shell_env::ShellEnvironment;

/// How long Notification runs still going at shutdown are waited for.
const BACKGROUND_GRACE: Duration = Duration::from_secs(2);

/// The Claude Code hooks of one hook generation, in load order.
pub struct ClaudeSet {
    shared: Arc<Shared>,
    hooks: Vec<Arc<ClaudeHook>>,
}

impl ClaudeSet {
    pub fn new(
        calls: Arc<HostCalls>,
        events: mpsc::UnboundedSender<AgentEvent>,
        ctx: HostContext,
    ) -> Self {
        ClaudeSet {
            shared: Shared::new(calls, events, ctx),
            hooks: Vec::new(),
        }
    }

    /// Adds `specs` after the hooks already here, naming them (`config::assign_names`) so no
    /// two hooks of the run share a name; `taken` are the names of the run's other hooks.
    pub fn add(&mut self, mut specs: Vec<ClaudeSpec>, taken: &[String]) {
        let mut used: Vec<String> = taken.to_vec();
        used.extend(self.hooks.iter().map(|h| h.spec().name.clone()));
        // Specs of an earlier generation keep their names.
        let (named, mut unnamed): (Vec<_>, Vec<_>) =
            specs.drain(..).partition(|s| !s.name.is_empty());
        config::assign_names(&mut unnamed, &used);
        for spec in named.into_iter().chain(unnamed) {
            let hook = Arc::new(ClaudeHook::new(spec, self.shared.clone()));
            self.shared.register(&hook);
            self.hooks.push(hook);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// The specs, to start the next generation with.
    pub fn specs(&self) -> Vec<ClaudeSpec> {
        self.hooks.iter().map(|h| h.spec().clone()).collect()
    }

    /// The runner's endpoints, each with its source for the load order.
    pub fn endpoints(&self) -> Vec<(HookSource, Arc<dyn Endpoint>)> {
        self.hooks
            .iter()
            .map(|h| (h.spec().source, Arc::new(h.clone()) as Arc<dyn Endpoint>))
            .collect()
    }

    /// The model's shell environment, which non-managed Claude Code hooks run with.
    pub fn attach_shell(&self, shell: Arc<ShellEnvironment>) {
        self.shared.attach_shell(shell);
    }

    /// How long pi waits, idle, before Notification's `idle_prompt`: the
    /// `messageIdleNotifThresholdMs` setting (Claude Code's name), else Claude Code's 60 s.
    pub fn set_idle_after(&self, settings: &crate::config::Settings) {
        let after = settings
            .get("messageIdleNotifThresholdMs")
            .and_then(serde_json::Value::as_u64)
            .map_or(endpoint::IDLE_AFTER, Duration::from_millis);
        self.shared.set_idle_after(after);
    }

    /// The hooks' names, in load order.
    pub fn names(&self) -> Vec<String> {
        self.hooks.iter().map(|h| h.spec().name.clone()).collect()
    }

    /// One line per hook: what its runs cost in this process.
    pub fn latency_report(&self) -> Vec<String> {
        self.hooks
            .iter()
            .map(|h| match h.recorder().stats() {
                Some(s) => format!("hook {}: {s}", h.spec().name),
                None => format!("hook {}: did not run", h.spec().name),
            })
            .collect()
    }

    /// Notification runs finished (or killed), and this run's latency added to the agent
    /// directory's record for `pi hooks`.
    pub async fn shutdown(&self) {
        if self.hooks.is_empty() {
            return;
        }
        self.shared.finish_background(BACKGROUND_GRACE).await;
        let Ok(dir) = crate::config::agent_dir(&crate::config::SystemEnv) else {
            return;
        };
        let path = latency::file_in(&dir);
        let records = self
            .hooks
            .iter()
            .map(|h| (latency::key(h.spec()), h.recorder()));
        if let Err(e) = latency::save(&path, records) {
            tracing::warn!(file = %path.display(), error = %e, "cannot record Claude Code hook latency");
        }
    }
}
