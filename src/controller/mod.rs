//! The session controller: the one core every front end drives. [`SessionController`] owns the
//! agent, the session, the running hooks (instances, runner, host calls), the model and
//! thinking level, the steering and follow-up queues and their modes, compaction (manual,
//! threshold, overflow-retry), auto-retry and the tool registry. Operations go in as typed
//! method calls and return typed results ([`types`]); everything that happens comes out on one
//! event stream ([`AgentEvent`]), as in codex's core: print, JSON and RPC are clients of the
//! same queue pair.
//!
//! Concurrency is RPC's: a prompt answers at once while its run continues in a task of its
//! own; queries are answered while a run streams (they read shared state, never the running
//! agent); `abort` ends the run at once. The conversation has one writer at a time: a run
//! holds the agent from its start to its settling, and operations that replace the context
//! (compaction, tree moves, new/switch/fork/clone, reload) abort the run first and then hold
//! it. Session replacement starts a new generation of hook processes that sees the new
//! session (`replace.rs`).

mod bash;
mod boundary;
mod cache_warm;
mod compact;
mod complete;
mod config_watch;
mod error;
mod export;
mod hook_complete;
mod hook_model;
pub mod hooks;
mod host_ops;
pub mod inject;
mod late_providers;
pub mod loaded;
mod loadout;
pub mod login;
mod login_options;
mod mcp;
mod model;
mod model_scope;
pub mod options;
mod queries;
mod reload;
mod relocate;
mod replace;
pub mod resources;
mod run;
pub mod session_ops;
pub mod session_state;
mod setup;
mod summarize;
pub mod tools;
pub mod types;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::agent::events::AgentEvent;
use crate::agent::hooks::InputSource;
use crate::agent::{Agent, AgentHandle};
use crate::config::{ModelRegistry, Settings};
use crate::hooks::events::AwaitedEvent;
use crate::hooks::instance::HookInstance;
use crate::hooks::runner::Runner;
use crate::provider::Providers;
use crate::session::compaction::CompactionSettings;
use crate::session::SharedSession;

pub use complete::ArgCompletion;
pub use error::ControllerError;
pub use hook_model::hook_model_for;
pub use hooks::HookSet;
pub use model::clamp as clamp_thinking;
pub use reload::ReloadError;
pub use relocate::MissingCwd;
pub use setup::{CommandLineModel, ControllerSetup, StartError};
pub use types::*;

use self::hooks::CurrentHooks;
use self::options::ControllerOptions;
use self::resources::PromptResources;

/// A handle on the controller; cheap to clone. Every front end holds one.
#[derive(Clone)]
pub struct SessionController {
    core: Arc<Core>,
}

/// What the controller was started with and never changes.
pub(crate) struct Fixed {
    pub options: Arc<ControllerOptions>,
    /// The `input` event's `source` for what the front end sends.
    pub input_source: InputSource,
    pub agent_dir: PathBuf,
    /// Providers, models and credentials: replaced whole when a login or logout changes
    /// `auth.json` (read through [`Core::registry`]).
    pub registry: std::sync::RwLock<Arc<ModelRegistry>>,
    pub providers: Providers,
    /// The front end's side of the hooks' `ui.*` calls, attached to every hook generation.
    pub ui: Arc<dyn crate::hooks::ui::HookUi>,
    /// The run's MCP servers, when any is configured; they outlive session replacement.
    pub mcp: Option<crate::mcp::hub::McpHub>,
    /// The model the command line chose, for the sessions the run moves to.
    pub command_line_model: setup::CommandLineModel,
}

/// Where the run works: its directory and whether that project is trusted. Switched (whole,
/// in one assignment) when the run moves into another project's session, as pi 1.6 rebuilds
/// its runtime in the session's directory; tools, the user's shell, context files, settings,
/// hooks and the system prompt all read the current one through [`Core::place`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub cwd: PathBuf,
    pub trusted: bool,
}

/// What comes from the settings and resources, rebuilt by `reload`.
pub(crate) struct Environment {
    pub settings: Settings,
    pub resources: PromptResources,
    pub compaction: CompactionSettings,
    /// `branchSummary.reserveTokens`.
    pub branch_reserve_tokens: u64,
    /// The user's `!` shell: the same environment policy as the model's.
    pub shell: bash::UserShell,
    /// The configuration files as they were read, for ConfigChange hooks at `reload`.
    pub config_files: config_watch::ConfigFiles,
    /// Theme files and folders hooks contributed (`resources_discover`'s `theme_paths`).
    pub theme_paths: Vec<std::path::PathBuf>,
}

/// Flags the queries report and the run checks.
#[derive(Debug, Default)]
struct Status {
    /// From a prompt's acceptance to its run's settling.
    streaming: bool,
    compacting: bool,
    auto_compaction: bool,
    /// Counts aborts, so a run knows it was aborted even between its agent loops.
    aborts: u64,
}

pub(crate) struct Core {
    me: Weak<Core>,
    fixed: Fixed,
    place: Mutex<Arc<Place>>,
    env: Mutex<Arc<Environment>>,
    events: mpsc::UnboundedSender<AgentEvent>,
    session: Arc<SharedSession>,
    handle: AgentHandle,
    /// Held by a run from its start to its settling, and by every operation that replaces the
    /// context.
    agent: Arc<tokio::sync::Mutex<Agent>>,
    hooks: Mutex<Arc<HookSet>>,
    current_hooks: Arc<CurrentHooks>,
    /// Instances of an older generation that are still finishing the command that replaced
    /// them; stopped when it ends.
    retired: Mutex<Vec<Arc<HookInstance>>>,
    /// The hook whose command is running, if any.
    command: Mutex<Option<Arc<HookInstance>>>,
    status: Mutex<Status>,
    /// `true` while no run is in progress.
    idle: watch::Sender<bool>,
    /// The running user shell command's token.
    bash: Mutex<Option<CancellationToken>>,
    /// User shell results that arrived during a run, for after it.
    pending_bash: Mutex<Vec<crate::session::AgentMessage>>,
    /// Whether a prompt has already waited for the MCP servers with direct tools.
    mcp_waited: std::sync::atomic::AtomicBool,
    /// The MCP tool layer's version the system prompt was last rendered at (`u64::MAX`: never),
    /// so a run re-renders it only when servers or their tools changed.
    mcp_prompt_version: std::sync::atomic::AtomicU64,
    /// The MCP tools registered when last looked, so ones joining are told apart
    /// (see `loadout.rs`).
    mcp_known: Mutex<std::collections::BTreeSet<String>>,
    /// Keeps the last request's prompt cache entry warm (`cacheWarming`).
    warmer: cache_warm::CacheWarmer,
    /// A Claude Code `Setup` hook blocked or failed under a closed policy at start-up.
    setup_failed: bool,
    /// The trust decided for each directory the run has worked in (1.6 decides once per
    /// directory for the run).
    trust_seen: Mutex<std::collections::HashMap<PathBuf, bool>>,
    /// The models Ctrl+P and `cycle_model` go through; empty: every model with auth.
    scope: Mutex<Vec<crate::config::ScopedModel>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No critical section of the controller panics; a poisoned lock's data is still whole.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Core {
    fn arc(&self) -> Option<Arc<Core>> {
        self.me.upgrade()
    }

    pub(crate) fn hooks(&self) -> Arc<HookSet> {
        lock(&self.hooks).clone()
    }

    pub(crate) fn runner(&self) -> Arc<Runner> {
        lock(&self.hooks).runner.clone()
    }

    /// Where the run works now.
    pub(crate) fn place(&self) -> Arc<Place> {
        lock(&self.place).clone()
    }

    pub(crate) fn env(&self) -> Arc<Environment> {
        lock(&self.env).clone()
    }

    fn emit(&self, event: AgentEvent) {
        let _ = self.events.send(event);
    }

    fn is_streaming(&self) -> bool {
        lock(&self.status).streaming
    }

    /// `cacheWarming`, as the settings say now (a reload may change it).
    fn cache_warming(&self) -> crate::config::CacheWarmingMode {
        self.env().settings.cache_warming()
    }

    fn set_compacting(&self, on: bool) {
        lock(&self.status).compacting = on;
    }

    fn auto_compaction(&self) -> bool {
        lock(&self.status).auto_compaction
    }

    /// Every hook process this controller runs: the current generation and retired ones.
    fn all_instances(&self) -> Vec<Arc<HookInstance>> {
        let mut all = self.hooks().instances.clone();
        all.extend(lock(&self.retired).iter().cloned());
        all
    }

    /// The agent for an operation that replaces the context: the run in progress (if any) is
    /// aborted and waited for, and what starts now gets a token of its own, so an earlier
    /// abort does not end it.
    async fn exclusive(&self) -> tokio::sync::OwnedMutexGuard<Agent> {
        // What comes next replaces the context (or ends the session): nothing to keep warm.
        self.warmer.cancel();
        if self.is_streaming() {
            self.abort_run();
        }
        let guard = self.agent.clone().lock_owned().await;
        self.handle.fresh_token();
        guard
    }

    /// Start the agent over from the session's current context.
    pub(crate) fn reload_agent(&self) {
        let messages = self.session.lock().context().llm_messages();
        self.handle.replace_messages(messages);
    }
}

/// A handle that does not keep the controller (and its event stream) alive.
#[derive(Clone)]
pub struct WeakController {
    core: Weak<Core>,
}

impl WeakController {
    pub fn upgrade(&self) -> Option<SessionController> {
        self.core.upgrade().map(|core| SessionController { core })
    }
}

impl SessionController {
    pub fn downgrade(&self) -> WeakController {
        WeakController {
            core: Arc::downgrade(&self.core),
        }
    }

    /// Events are sent on the channel given in `setup` from the moment hooks were loaded.
    pub async fn start(setup: ControllerSetup) -> Result<SessionController, StartError> {
        setup::start(setup).await
    }

    /// Whether a Claude Code `Setup` hook blocked or failed under a closed policy at start-up
    /// (what `--init-only` exits non-zero for).
    pub fn setup_failed(&self) -> bool {
        self.core.setup_failed
    }

    /// The session's id.
    pub fn session_id(&self) -> String {
        self.core.session.lock().id().to_string()
    }

    /// The shared session (for front ends that show or export it).
    pub fn session(&self) -> Arc<SharedSession> {
        self.core.session.clone()
    }

    /// The agent's handle: abort, queues, context.
    pub fn agent(&self) -> AgentHandle {
        self.core.handle.clone()
    }

    /// Abort the current run and every later one (pi is exiting on a signal) and cut the
    /// hooks' shutdown graces.
    pub fn stop(&self) {
        self.core.handle.stop();
        for h in self.core.all_instances() {
            h.hurry();
        }
    }

    /// Every running hook process (signal handlers hurry or kill them).
    pub fn hook_instances(&self) -> Vec<Arc<HookInstance>> {
        self.core.all_instances()
    }

    /// Resolves once no run is in progress.
    pub async fn wait_idle(&self) {
        let mut idle = self.core.idle.subscribe();
        let _ = idle.wait_for(|i| *i).await;
    }

    /// `session_shutdown {reason: "quit"}` to every hook, bounded as the runner bounds it.
    pub async fn end_session(&self) {
        let _agent = self.core.exclusive().await;
        self.core
            .runner()
            .awaited(
                AwaitedEvent::SessionShutdown,
                serde_json::json!({"reason": "quit"}),
            )
            .await;
    }

    /// One line per running hook: replies, latencies, restarts, state.
    pub fn latency_report(&self) -> Vec<String> {
        self.core.hooks().latency_report()
    }

    /// Close every MCP server (stdio ones: stdin, SIGTERM, SIGKILL), together.
    pub async fn stop_mcp(&self) {
        if let Some(hub) = &self.core.fixed.mcp {
            hub.shutdown().await;
        }
    }

    /// The run's MCP servers, if any is configured.
    pub fn mcp(&self) -> Option<&crate::mcp::hub::McpHub> {
        self.core.fixed.mcp.as_ref()
    }

    /// Stop every hook process (each within its graces).
    pub async fn stop_hooks(&self, reason: &str) {
        let all = self.core.all_instances();
        let current = self.core.hooks();
        tokio::join!(
            crate::hooks::host::shutdown_all(&all, reason),
            current.claude.shutdown()
        );
    }
}
