//! Host calls: what a hook may ask of `pi` while it runs (`call {method, params}`). Each method
//! is answered honestly for the current mode: every `ui.*` call is validated here and served
//! by the front end's [`HookUi`] (print and json mode: [`HeadlessUi`], which writes
//! `ui.notify` to stderr and answers everything else `unavailable` — never a silent default).
//!
//! The handler is created before the agent (hooks register tools the agent needs), so the
//! agent's handle, the tool registry and the runner are attached once they exist.
//!
//! `tools.execute` nests: a hook tool may run tools, its own included, through the host. Each
//! call runs at a nesting depth the host derives itself (`instance::nesting_depth`; the
//! model's own calls are depth 0), and a call deeper than [`MAX_NESTING`] is refused with an
//! error result, so recursion through hooks ends however the hooks are written.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use tokio_util::sync::CancellationToken;

use serde_json::{json, Value};

pub use super::mcp_calls::{McpControl, McpRegistration};
pub use super::model_calls::{ModelControl, StartupModel};
use super::protocol::CallError;
use super::runner::Runner;
pub use super::session_calls::{SessionControl, SessionOp};
use super::ui::{Dialog, HeadlessUi, HookUi, UiCall, UiError, UiParamError, UI_METHODS};
use crate::agent::AgentHandle;
use crate::session::SharedSession;

/// The methods this host implements besides `ui.*` ([`UI_METHODS`]).
const OTHER_METHODS: &[&str] = &[
    "session.append_entry",
    "session.get_branch",
    "session.get_entries",
    "commands.list",
    "session.set_name",
    "session.set_label",
    "session.get_tree",
    "session.compact",
    "session.navigate_tree",
    "session.fork",
    "session.clone",
    "session.new",
    "session.switch",
    "tools.list_active",
    "tools.set_active",
    "tools.execute",
    "tools.register",
    "tools.unregister",
    "tools.with_file_lock",
    "tools.release_file_lock",
    "agent.abort",
    "mcp.register",
    "model.complete",
];

/// Every method this host implements (sent in `hello.capabilities.methods`).
pub fn methods() -> impl Iterator<Item = &'static str> {
    OTHER_METHODS
        .iter()
        .chain(super::model_calls::METHODS)
        .chain(super::message_calls::METHODS)
        .chain(super::provider_calls::METHODS)
        .chain(UI_METHODS)
        .copied()
}

/// Whether a front end that serves `served` shows `dialog` (rather than refusing it).
fn shows(served: &crate::hooks::protocol::UiCapabilities, dialog: &Dialog) -> bool {
    match dialog {
        Dialog::Confirm { .. } => served.confirm,
        Dialog::Select { .. } => served.select,
        Dialog::Input { .. } => served.input,
        Dialog::Editor { .. } => served.editor,
    }
}

/// The deepest `tools.execute` nesting the host runs (SPEC 4.9).
pub const MAX_NESTING: u32 = 8;

/// A host call's error, for the controller's answers.
pub fn call_error(code: &str, message: impl Into<String>) -> CallError {
    err(code, message)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub(super) fn err(code: &str, message: impl Into<String>) -> CallError {
    CallError {
        code: code.into(),
        message: message.into(),
    }
}

pub(super) fn str_param<'a>(params: &'a Value, key: &str) -> Result<&'a str, CallError> {
    params
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| err("invalid_params", format!("`{key}` (a string) is required")))
}

pub struct HostCalls {
    cwd: std::path::PathBuf,
    agent: OnceLock<AgentHandle>,
    runner: OnceLock<Weak<Runner>>,
    session: OnceLock<Arc<SharedSession>>,
    /// Weak: the session controller owns the operations (and the event sender inside them);
    /// hook processes that outlive the run must not keep the output stream open.
    control: OnceLock<Weak<dyn SessionControl>>,
    /// The model pi starts with, for the model calls made before `control` is attached.
    startup_model: OnceLock<Arc<StartupModel>>,
    /// The front end's UI, once the controller attaches it; until then `headless` answers
    /// (print and json mode's UI, or a refusal naming start-up in the modes with a UI).
    ui: OnceLock<Arc<dyn HookUi>>,
    headless: Arc<HeadlessUi>,
    /// The run's MCP servers, for `mcp.register` (absent with `--no-tools`).
    mcp: OnceLock<Arc<dyn McpControl>>,
    /// Where each hook of this generation comes from: a server a hook registers counts as
    /// coming from the same place (a project hook's as the project's).
    sources: std::sync::Mutex<std::collections::BTreeMap<String, crate::hooks::spec::HookSource>>,
    /// The hooks' dialogs open now, for `ui_prompt_start` / `ui_prompt_end`.
    prompts: super::ui_prompt::UiPrompts,
    /// Each hook of this generation by name, for the tools it registers while it runs.
    instances: Mutex<BTreeMap<String, Weak<crate::hooks::instance::HookInstance>>>,
    /// The process generation whose end drops each hook's registered tools.
    watched: Mutex<BTreeMap<String, CancellationToken>>,
    /// Numbers the nested calls' ids.
    pub(super) nested: AtomicU64,
    /// Held file locks: id → (hook, release).
    file_locks: FileLocks,
    pub(super) next_lock: AtomicU64,
    /// What each hook's `tools.register` tools and session entries take (`budget`).
    pub(super) tool_ledger: super::budget::ToolLedger,
    /// Shared with the runner, which charges what boundary replies add.
    entry_ledger: Arc<super::budget::EntryLedger>,
}

type FileLocks = Arc<Mutex<HashMap<u64, (String, tokio::sync::oneshot::Sender<()>)>>>;

impl HostCalls {
    pub fn new(mode: impl Into<String>, cwd: std::path::PathBuf) -> Self {
        let mode = mode.into();
        let headless = if matches!(mode.as_str(), "print" | "json") {
            HeadlessUi::new(mode)
        } else {
            HeadlessUi::before_start(mode)
        };
        HostCalls {
            headless,
            ui: OnceLock::new(),
            cwd,
            agent: OnceLock::new(),
            runner: OnceLock::new(),
            session: OnceLock::new(),
            control: OnceLock::new(),
            startup_model: OnceLock::new(),
            mcp: OnceLock::new(),
            sources: Default::default(),
            prompts: Default::default(),
            instances: Default::default(),
            watched: Default::default(),
            nested: AtomicU64::new(1),
            file_locks: Default::default(),
            next_lock: AtomicU64::new(1),
            tool_ledger: Default::default(),
            entry_ledger: Default::default(),
        }
    }

    /// Reserves `size` bytes of `hook`'s session-entry budget for one entry (`what`: the
    /// method); `too_large` past a limit. [`refund_entry`](Self::refund_entry) them when the
    /// entry is not written after all.
    pub(super) fn charge_entry(
        &self,
        hook: &str,
        what: &'static str,
        size: usize,
    ) -> Result<(), CallError> {
        self.entry_ledger
            .charge(hook, what, size)
            .map_err(|e| err(super::budget::TooLarge::CODE, e.to_string()))
    }

    pub(super) fn refund_entry(&self, hook: &str, size: usize) {
        self.entry_ledger.refund(hook, size);
    }

    /// Record a hook of this generation (its tools registered later belong to it).
    pub fn record_instance(&self, hook: &Arc<crate::hooks::instance::HookInstance>) {
        lock(&self.instances).insert(hook.name(), Arc::downgrade(hook));
    }

    pub(super) fn instance(&self, hook: &str) -> Option<Arc<crate::hooks::instance::HookInstance>> {
        lock(&self.instances).get(hook).and_then(Weak::upgrade)
    }

    /// Whether `process_ended` is already watched for `hook` (and watch it from now on).
    pub(super) fn watched(&self, hook: &str, process_ended: &CancellationToken) -> bool {
        let mut w = lock(&self.watched);
        // One process of a hook runs at a time: a token not cancelled yet is this one's.
        let seen = w.get(hook).is_some_and(|t| !t.is_cancelled());
        if !seen {
            w.insert(hook.to_string(), process_ended.clone());
        }
        seen
    }

    pub(super) fn file_locks(
        &self,
    ) -> MutexGuard<'_, HashMap<u64, (String, tokio::sync::oneshot::Sender<()>)>> {
        lock(&self.file_locks)
    }

    pub(super) fn lock_table(&self) -> FileLocks {
        self.file_locks.clone()
    }

    pub(super) fn cwd(&self) -> &std::path::Path {
        &self.cwd
    }

    /// The run's MCP servers, which `mcp.register` adds to.
    pub fn attach_mcp(&self, mcp: Arc<dyn McpControl>) {
        let _ = self.mcp.set(mcp);
    }

    /// The run's MCP servers, once attached (none with `--no-tools`).
    pub(super) fn mcp(&self) -> Option<&dyn McpControl> {
        self.mcp.get().map(|m| m.as_ref())
    }

    /// Where `hook` comes from, when it was recorded.
    pub(super) fn source(&self, hook: &str) -> Option<crate::hooks::spec::HookSource> {
        lock(&self.sources).get(hook).copied()
    }

    /// Record where a hook comes from (its registrations inherit it).
    pub fn record_source(&self, hook: &str, source: crate::hooks::spec::HookSource) {
        self.sources
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(hook.to_string(), source);
    }

    /// The agent (its tools are read from it at each call: a reload replaces them) and the
    /// runner.
    pub fn attach(&self, agent: AgentHandle, runner: &Arc<Runner>) {
        let _ = self.agent.set(agent);
        let _ = self.runner.set(Arc::downgrade(runner));
        runner.share_entry_ledger(self.entry_ledger.clone());
    }

    /// The session, as soon as it is open: hooks may write entries from `session_start` on.
    pub fn attach_session(&self, session: Arc<SharedSession>) {
        let _ = self.session.set(session);
    }

    /// The operations that need the agent (compaction, tree moves, forks), once it exists.
    pub fn attach_control(&self, control: Weak<dyn SessionControl>) {
        let _ = self.control.set(control);
    }

    /// The model and thinking level pi starts with, answered until the controller is attached.
    pub fn attach_startup_model(&self, model: StartupModel) {
        let _ = self.startup_model.set(Arc::new(model));
    }

    /// The front end that serves this generation's `ui.*` calls.
    pub fn attach_ui(&self, ui: Arc<dyn HookUi>) {
        let _ = self.ui.set(ui);
    }

    fn ui(&self) -> &dyn HookUi {
        match self.ui.get() {
            Some(ui) => ui.as_ref(),
            None => self.headless.as_ref(),
        }
    }

    /// Whether a person can answer a `ui.confirm` here (print and JSON mode answer every
    /// dialog with its default instead): for host-side questions that must not take a
    /// default for a person's "no".
    pub fn can_ask(&self) -> bool {
        self.ui().served().confirm
    }

    pub(super) fn session(&self) -> Result<&Arc<SharedSession>, CallError> {
        self.session
            .get()
            .ok_or_else(|| err("unavailable", "the session is not open yet"))
    }

    pub(super) fn control(&self) -> Result<Arc<dyn SessionControl>, CallError> {
        self.control
            .get()
            .and_then(Weak::upgrade)
            .ok_or_else(|| err("unavailable", "session operations are not available now"))
    }

    /// The controller's model operations, else (at start-up) the model pi starts with.
    pub(super) fn model_control(&self) -> Result<Arc<dyn ModelControl>, CallError> {
        match (self.control(), self.startup_model.get()) {
            (Ok(control), _) => Ok(control),
            (Err(_), Some(startup)) => Ok(startup.clone()),
            (Err(e), None) => Err(e),
        }
    }

    pub(super) fn runner(&self) -> Option<Arc<Runner>> {
        self.runner.get().and_then(Weak::upgrade)
    }

    pub(super) fn agent(&self) -> Result<&AgentHandle, CallError> {
        self.agent
            .get()
            .ok_or_else(|| err("unavailable", "the agent has not started yet"))
    }

    pub async fn handle(
        &self,
        hook: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, CallError> {
        match method {
            "session.append_entry"
            | "session.set_name"
            | "session.set_label"
            | "session.get_branch"
            | "session.get_entries"
            | "commands.list"
            | "session.get_tree"
            | "session.compact"
            | "session.navigate_tree"
            | "session.fork"
            | "session.clone"
            | "session.new"
            | "session.switch" => super::session_calls::handle(self, hook, method, &params).await,
            "message.send" | "message.send_user" | "session.send_message" => {
                super::message_calls::handle(self, hook, method, &params).await
            }
            "tools.list_active" => self.list_active(),
            "tools.set_active" => self.set_active(&params),
            "tools.register" => self.register_tools(hook, &params),
            "tools.unregister" => self.unregister_tools(hook, &params),
            "tools.with_file_lock" => self.with_file_lock(hook, &params).await,
            "tools.release_file_lock" => self.release_file_lock(hook, &params),
            "tools.execute" => self.execute(hook, params).await,
            "model.get" | "model.set" | "thinking.get" | "thinking.set" | "prompt.get" => {
                super::model_calls::handle(self, method, &params)
            }
            "mcp.register" => super::mcp_calls::register(self, hook, &params).await,
            "model.complete" => super::complete_calls::handle(self, hook, &params).await,
            m if m.starts_with("ui.") => self.ui_call(hook, m, &params).await,
            "agent.abort" => {
                self.agent()?.abort();
                Ok(json!({}))
            }
            other => Err(err("unknown_method", format!("unknown method {other:?}"))),
        }
    }

    /// A `ui.*` call: validated, then shown by the front end. A dialog answers `{confirmed}` or
    /// `{value}` (see [`super::ui::DialogAnswer::to_result`]); the rest answer `{}`.
    async fn ui_call(&self, hook: &str, method: &str, params: &Value) -> Result<Value, CallError> {
        let call = UiCall::parse(method, params).map_err(|e| match e {
            UiParamError::UnknownMethod(m) => {
                err("unknown_method", format!("unknown method {m:?}"))
            }
            e => err("invalid_params", e.to_string()),
        })?;
        let unavailable = |e: UiError| err(e.code(), e.to_string());
        match call {
            UiCall::Dialog { dialog, timeout } => {
                // Announced only when the front end shows it: a refused dialog waits on nobody.
                let _open = shows(&self.ui().served(), &dialog)
                    .then(|| self.prompts.begin(self.runner.get().cloned(), &dialog));
                let answer = self
                    .ui()
                    .dialog(hook, &dialog, timeout)
                    .await
                    .map_err(unavailable)?;
                Ok(answer.to_result(&dialog))
            }
            UiCall::Update(update) => {
                self.ui().update(hook, &update).map_err(unavailable)?;
                Ok(json!({}))
            }
            UiCall::SetTheme { name } => {
                let answer = self
                    .ui()
                    .set_theme(hook, &name)
                    .await
                    .map_err(unavailable)?;
                Ok(answer.to_result())
            }
        }
    }
}
