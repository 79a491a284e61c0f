//! In-process tests of the controller with the `faux` provider (no binary): every operation
//! and its result shape, prompts while streaming, queues, abort, queries during a run, session
//! replacement and reload with a real hook process (`fixtures/hooks/it/controller_ops.py`),
//! and the user's bash.

mod bash;
mod ops;
mod prompts;
mod replace;
mod sharing;
mod ui;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use clap::Parser;
use serde_json::{json, Value};
use tokio::sync::{mpsc, Notify};

use super::{ControllerSetup, HookSet, SessionController};
use crate::agent::events::AgentEvent;
use crate::agent::hooks::InputSource;
use crate::cli::Cli;
use crate::config::{MapEnv, ModelRegistry, Settings};
use crate::hooks::instance::HostContext;
use crate::hooks::spec::{HookSource, HookSpec, RequiredHookFailure};
use crate::message::Message;
use crate::session::{NewSession, Session};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

/// Generous bound for "does not hang".
pub(crate) const LONG: Duration = Duration::from_secs(20);

pub(crate) use crate::test_support::{faux_model, python};

/// A tool that waits until released (or aborted) and counts its runs.
pub(crate) struct Gate {
    pub started: Notify,
    pub release: Notify,
    pub runs: std::sync::atomic::AtomicUsize,
}

impl Gate {
    pub fn new() -> Arc<Gate> {
        Arc::new(Gate {
            started: Notify::new(),
            release: Notify::new(),
            runs: Default::default(),
        })
    }

    pub fn runs(&self) -> usize {
        self.runs.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// `wait`: the model's tool that blocks on a [`Gate`].
pub(crate) struct WaitTool(pub Arc<Gate>);

#[async_trait]
impl Tool for WaitTool {
    fn name(&self) -> &str {
        "wait"
    }
    fn description(&self) -> &str {
        "waits until the test releases it"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(&self, _: &str, _: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.0
            .runs
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.0.started.notify_one();
        tokio::select! {
            _ = self.0.release.notified() => Ok(ToolOutput::text("released")),
            _ = ctx.cancel.cancelled() => Err(ToolError::Aborted),
        }
    }
}

/// A model turn calling `wait`.
pub(crate) fn call_wait() -> Value {
    json!({"toolCalls": [{"name": "wait", "arguments": {}}]})
}

/// How to start a test controller.
pub(crate) struct Opts {
    /// The faux script.
    pub script: Value,
    /// `controller_ops.py`'s config (a record file is added), or no hook.
    pub hook: Option<Value>,
    pub tools: Vec<Arc<dyn Tool>>,
    pub models_json: Option<Value>,
    pub settings: Value,
    /// Extra command-line arguments (relative paths are relative to the `work` directory).
    pub args: Vec<String>,
    /// Files written before start, relative to the temp root (`agent/`, `work/`, …).
    pub files: Vec<(&'static str, &'static str)>,
    /// Make the hook a managed, required one with this failure policy.
    pub managed: Option<RequiredHookFailure>,
    /// The hook's script under `fixtures/hooks/it/` (default `controller_ops.py`).
    pub hook_script: Option<&'static str>,
    /// The hook's request deadline (its settings entry's `timeout_ms`).
    pub hook_timeout: Option<Duration>,
    /// Who serves the hooks' `ui.*` calls (default: none, as in print mode).
    pub ui: Option<Arc<dyn crate::hooks::ui::HookUi>>,
    /// Name the hook on the command line (`--hook`): it must start, or nothing starts.
    pub cli_hook: bool,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            script: json!([]),
            hook: None,
            tools: Vec::new(),
            models_json: None,
            settings: json!({}),
            args: Vec::new(),
            files: Vec::new(),
            managed: None,
            hook_script: None,
            hook_timeout: None,
            ui: None,
            cli_hook: false,
        }
    }
}

pub(crate) struct Harness {
    pub ctl: SessionController,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    pub dir: tempfile::TempDir,
    pub record: PathBuf,
}

impl Harness {
    pub fn agent_dir(&self) -> PathBuf {
        self.dir.path().join("agent")
    }

    pub fn cwd(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// The hook's record, one JSON value per line.
    pub fn recorded(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The `hello`s the hook processes recorded, in order.
    pub fn hellos(&self) -> Vec<Value> {
        self.recorded()
            .into_iter()
            .filter(|r| r.get("hello").is_some())
            .collect()
    }

    /// The recorded payloads of `event`, with the pid that saw each.
    pub fn seen(&self, event: &str) -> Vec<(Value, u64)> {
        self.recorded()
            .into_iter()
            .filter(|r| r["event"] == event)
            .map(|r| (r["payload"].clone(), r["pid"].as_u64().unwrap_or(0)))
            .collect()
    }

    /// Waits (bounded) until the record has a line satisfying `f`.
    pub async fn until_recorded(&self, what: &str, f: impl Fn(&Value) -> bool) {
        let deadline = tokio::time::Instant::now() + LONG;
        while !self.recorded().iter().any(&f) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the hook never recorded {what}: {:?}",
                self.recorded()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Every event received so far.
    pub fn drain(&mut self) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            out.push(e);
        }
        out
    }

    /// Events up to and including the first that satisfies `f` (bounded wait).
    pub async fn until(&mut self, f: impl Fn(&AgentEvent) -> bool) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        loop {
            let e = tokio::time::timeout(LONG, self.events.recv())
                .await
                .expect("the expected event never came")
                .expect("the event stream ended");
            let done = f(&e);
            out.push(e);
            if done {
                return out;
            }
        }
    }

    /// The texts of the user messages in the agent's context.
    pub fn user_texts(&self) -> Vec<String> {
        self.ctl
            .agent()
            .messages()
            .iter()
            .filter_map(|m| match m.as_ref() {
                Message::User(u) => Some(u.content.as_text()),
                _ => None,
            })
            .collect()
    }

    /// Stop the hooks as pi does when it exits.
    pub async fn close(self) {
        self.ctl.end_session().await;
        self.ctl.stop_hooks("test over").await;
    }
}

/// The event's `type` on the wire.
pub(crate) fn kind(e: &AgentEvent) -> String {
    serde_json::to_value(e)
        .ok()
        .and_then(|v| v["type"].as_str().map(str::to_string))
        .unwrap_or_default()
}

pub(crate) fn is_settled(e: &AgentEvent) -> bool {
    matches!(e, AgentEvent::AgentSettled { .. })
}

/// The keys of a serialised value, sorted.
pub(crate) fn keys(v: &impl serde::Serialize) -> Vec<String> {
    let v = serde_json::to_value(v).expect("serialises");
    let mut k: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
    k.sort();
    k
}

pub(crate) async fn start(opts: Opts) -> Harness {
    let dir = tempfile::tempdir().expect("temp dir");
    let agent_dir = dir.path().join("agent");
    let cwd = dir.path().join("work");
    let sessions = dir.path().join("sessions");
    for d in [&agent_dir, &cwd, &sessions] {
        std::fs::create_dir_all(d).expect("dirs");
    }
    let script = dir.path().join("script.json");
    std::fs::write(&script, opts.script.to_string()).expect("script");
    for (rel, content) in &opts.files {
        let path = dir.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("dirs");
        }
        std::fs::write(path, content).expect("file");
    }
    if let Some(m) = &opts.models_json {
        std::fs::write(agent_dir.join("models.json"), m.to_string()).expect("models.json");
    }
    let mut args: Vec<String> = vec![
        "pi".into(),
        "--faux-script".into(),
        script.display().to_string(),
        "--no-context-files".into(),
    ];
    args.extend(opts.args.iter().cloned());
    let cli = Arc::new(Cli::try_parse_from(args).expect("arguments"));
    let (registry, _) = ModelRegistry::load(&agent_dir, &MapEnv::new()).expect("registry");
    let (p, entry) = registry.find("faux", "faux-1").expect("the faux model");
    let model = registry.build_model(p, entry).expect("model");
    let mut session = Session::create(
        &cwd.display().to_string(),
        &sessions.join("--work--"),
        NewSession::default(),
    );
    session.set_sessions_root(Some(sessions.clone()));
    let restored = super::session_state::restored(&session);
    let record = dir.path().join("record.jsonl");
    let (tx, rx) = mpsc::unbounded_channel();
    let mut ctx = HostContext::new(cwd.clone(), "rpc");
    ctx.session_id = Some(session.id().to_string());
    ctx.session_file = session.path().map(|p| p.display().to_string());
    ctx.capabilities = crate::hooks::host::capabilities("rpc");
    ctx.supervision.shutdown_grace = Duration::from_millis(500);
    ctx.supervision.term_grace = Duration::from_millis(500);
    let specs = match &opts.hook {
        Some(config) => {
            let file = opts.hook_script.unwrap_or("controller_ops.py");
            let script = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/hooks/it")
                .join(file);
            let name = file.trim_end_matches(".py").replace('_', "-");
            let mut spec = HookSpec::new(name, python(), HookSource::User);
            if let Some(t) = opts.hook_timeout {
                spec.event_timeout = t;
            }
            spec.args = vec![script.display().to_string()];
            let mut config = config.clone();
            config["record"] = json!(record.display().to_string());
            spec.config = config;
            if opts.cli_hook {
                spec.source = HookSource::Cli;
            }
            if let Some(on_failure) = opts.managed {
                spec.source = HookSource::Managed;
                spec.required = true;
                spec.on_required_failure = on_failure;
            }
            vec![spec]
        }
        None => Vec::new(),
    };
    let (hooks, _) = HookSet::start(specs, ctx, tx.clone())
        .await
        .expect("the hooks start");
    let mut hook_tools = hooks.tools(&mut Vec::new());
    hook_tools.extend(opts.tools);
    let command_line_model = crate::controller::CommandLineModel {
        provider: model.provider.clone(),
        id: model.id.clone(),
        named: false,
    };
    let ctl = SessionController::start(ControllerSetup {
        options: Arc::new(crate::app::options::controller_options(&cli, Vec::new())),
        input_source: InputSource::Rpc,
        agent_dir,
        cwd,
        trusted: true,
        settings: Settings::from_value(opts.settings),
        registry: Arc::new(registry),
        session,
        restored,
        model,
        thinking: Default::default(),
        api_key: None,
        command_line_model,
        hooks,
        hook_tools,
        events: tx,
        ui: opts
            .ui
            .unwrap_or_else(|| crate::hooks::ui::HeadlessUi::new("rpc")),
    })
    .await
    .expect("the controller starts");
    Harness {
        ctl,
        events: rx,
        dir,
        record,
    }
}

#[test]
fn faux_model_matches_the_builtin_one() {
    let (registry, _) = ModelRegistry::load(Path::new("/nonexistent"), &MapEnv::new()).unwrap();
    let (p, e) = registry.find("faux", "faux-1").unwrap();
    let built = registry.build_model(p, e).unwrap();
    assert_eq!(built.id, faux_model().id);
    assert_eq!(built.api, faux_model().api);
}
