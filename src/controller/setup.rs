//! Building the controller once start-up has decided everything (settings, trust, hooks,
//! model): the session's model entries, the tools, `session_start` and `resources_discover`,
//! the resources and system prompt, the provider, the agent with its session recorder, and the
//! host calls attached. The order is the one hooks rely on: the session is open from
//! `session_start` on; the agent (and with it `session.send_message`) exists after it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use serde_json::json;
use tokio::sync::{mpsc, watch};

use super::bash::UserShell;
use super::config_watch::{ConfigFiles, ConfigPlaces};
use super::hooks::CurrentHooks;
use super::model::{hook_model, info_in};
use super::options::ControllerOptions;
use super::session_state::{self, Restored};
use super::tools::{self, ToolSelectionError};
use super::{resources, Core, Environment, Fixed, HookSet, Place, SessionController, Status};
use crate::agent::events::AgentEvent;
use crate::agent::hooks::InputSource;
use crate::agent::{Agent, AgentConfig, AgentHandle};
use crate::config::{ModelRegistry, Settings};
use crate::hooks::calls::{SessionControl, StartupModel};
use crate::hooks::events::{AwaitedEvent, CollectEvent};
use crate::hooks::runner::{Discovered, Moment, Runner};
use crate::hooks::ui::HookUi;
use crate::mcp::hub::McpHub;
use crate::mcp::log::McpLog;
use crate::provider::faux::{FauxScript, FauxScriptError};
use crate::provider::retry::RetryPolicy;
use crate::provider::{Model, Providers, ThinkingLevel};
use crate::session::compaction::CompactionSettings;
use crate::session::{Session, SharedSession};
use crate::tools::shell_env::ShellEnvironment;
use crate::tools::DynamicTools;

/// Everything start-up decided.
pub struct ControllerSetup {
    pub options: Arc<ControllerOptions>,
    /// The `source` of `input` events for what the front end sends.
    pub input_source: InputSource,
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    pub trusted: bool,
    /// The user's settings, merged with a trusted project's.
    pub settings: Settings,
    pub registry: Arc<ModelRegistry>,
    pub session: Session,
    /// The model and thinking level the session already carried.
    pub restored: Restored,
    pub model: Model,
    pub thinking: ThinkingLevel,
    pub api_key: Option<String>,
    /// The model the command line chose, for the sessions the run moves to.
    pub command_line_model: CommandLineModel,
    /// The running hooks (both start-up phases).
    pub hooks: HookSet,
    /// The tools the hooks registered (start-up reports their conflicts itself).
    pub hook_tools: Vec<Arc<dyn crate::tools::Tool>>,
    /// Where every event goes, the hooks' own included.
    pub events: mpsc::UnboundedSender<AgentEvent>,
    /// Who serves the hooks' `ui.*` calls: [`HeadlessUi`](crate::hooks::ui::HeadlessUi) in
    /// print and json mode, the RPC client's bridge in RPC mode. It should serve what
    /// `hello.capabilities.ui` promised (see `hooks::host::capabilities_for`).
    pub ui: Arc<dyn HookUi>,
}

/// The model the command line chose (pi 1.6 builds every session a run moves to from the
/// command line again): a new session starts with it, and a session the run resumes, forks
/// or clones keeps it when `--model`/`--provider` named it (otherwise the session's own model
/// applies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLineModel {
    /// What a session without a model starts with: `--model`, else the settings' default.
    pub provider: String,
    pub id: String,
    /// Whether the command line named the model (`--model`, `--provider`).
    pub named: bool,
}

/// Why the controller could not be built; start-up reports it and exits 1.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Tools(#[from] ToolSelectionError),
    #[error(transparent)]
    Faux(#[from] FauxScriptError),
    #[error("the faux provider needs a script: pass --faux-script FILE or set PI_FAUX_SCRIPT")]
    NoFauxScript,
    #[error("model {model} uses api \"{api}\", which this build does not support")]
    UnsupportedApi { model: String, api: String },
}

pub(super) fn retry_policy(settings: &Settings) -> RetryPolicy {
    let retry = settings.retry();
    RetryPolicy {
        enabled: retry.enabled,
        max_retries: retry.max_retries,
        base_delay_ms: retry.base_delay_ms,
        max_delay_ms: retry.max_retry_delay_ms,
    }
}

/// The settings-derived part of the controller, rebuilt by `reload`.
pub(super) fn environment(
    fixed: &Fixed,
    place: &Place,
    settings: Settings,
    shell: ShellEnvironment,
    discovered: &Discovered,
    refused: &std::collections::HashSet<std::path::PathBuf>,
) -> Environment {
    let resources = resources::load(
        &fixed.options,
        &fixed.agent_dir,
        &place.cwd,
        place.trusted,
        discovered,
        refused,
    );
    let compaction = CompactionSettings::from_json(settings.get("compaction"));
    let branch_reserve_tokens = settings
        .get("branchSummary")
        .and_then(|b| b.get("reserveTokens"))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(16384);
    let shell = UserShell {
        shell_path: settings.shell_path().map(Into::into),
        command_prefix: settings.shell_command_prefix().map(Into::into),
        environment: Arc::new(shell),
    };
    let config_files = ConfigFiles::take(&ConfigPlaces {
        agent_dir: &fixed.agent_dir,
        cwd: &place.cwd,
        trusted: place.trusted,
        claude_hook_files: &fixed.options.claude_hooks,
        skills: &resources.skills,
    });
    Environment {
        settings,
        resources,
        compaction,
        branch_reserve_tokens,
        shell,
        config_files,
        theme_paths: discovered.theme_paths.clone(),
    }
}

fn load_faux_script(
    options: &ControllerOptions,
    api: &str,
) -> Result<Option<FauxScript>, StartError> {
    let path = options
        .faux_script
        .clone()
        .or_else(|| std::env::var_os("PI_FAUX_SCRIPT").map(Into::into));
    match path {
        Some(p) => Ok(Some(FauxScript::load(&p)?)),
        None if api == "faux" => Err(StartError::NoFauxScript),
        None => Ok(None),
    }
}

/// Writes each finished message to the session as the agent emits it; the entry shares the
/// agent's allocation of the message.
fn recorder(session: Arc<SharedSession>) -> crate::agent::Recorder {
    Arc::new(move |message| {
        let _ = session.record(|s| s.append_message(Arc::clone(message)));
    })
}

/// Attach a generation of hooks to the agent: host calls get the session, the agent (and its
/// tools), the operations and the front end's UI; waits on its hooks end with the agent's
/// current run.
pub(super) fn attach(
    set: &HookSet,
    session: &Arc<SharedSession>,
    handle: &AgentHandle,
    control: Weak<dyn SessionControl>,
    ui: &Arc<dyn HookUi>,
    mcp: Option<&McpHub>,
    core: Weak<Core>,
) {
    set.context()
        .providers
        .attach(Arc::new(super::late_providers::LiveProviders { core }));
    set.calls.attach_ui(ui.clone());
    set.calls.attach_session(session.clone());
    set.calls.attach(handle.clone(), &set.runner);
    if let Some(hub) = mcp {
        set.calls.attach_mcp(Arc::new(hub.clone()));
    }
    set.calls.attach_control(control);
    let h = handle.clone();
    set.runner.attach_abort(move || h.cancel_token());
}

/// The run's MCP servers from `mcp.json` (a trusted project's too, reading only what the
/// user's `projectEnv` grants it) — possibly none yet, as hooks may add some
/// (`mcp.register`) — or `None` when tools are off or `--no-mcp` says so. Problems with the files are reported and
/// the rest load; a grant a project server uses is logged (and shown with `--verbose`).
fn mcp_hub(
    options: &ControllerOptions,
    settings: &Settings,
    agent_dir: &std::path::Path,
    cwd: &std::path::Path,
    trusted: bool,
) -> Option<McpHub> {
    if options.no_tools || options.no_mcp {
        return None;
    }
    let (grant, unreadable) = settings.project_grant_or_none(cwd);
    let project_env = Arc::new(crate::config::ForeignEnv::project(
        &grant,
        &crate::config::SystemEnv,
    ));
    let (configs, mut problems) = crate::mcp::load_for_run(agent_dir, cwd, trusted, &project_env);
    problems.extend(unreadable);
    for p in &problems {
        term_eprintln!("Warning: {p}");
    }
    let log = McpLog::open(agent_dir.join("mcp.log"));
    for p in &problems {
        log.line("config", p);
    }
    for used in crate::mcp::grants_used(configs.values()) {
        if options.verbose {
            term_eprintln!("{used}");
        }
        log.line("config", &used);
    }
    Some(McpHub::new(
        configs,
        Arc::new(DynamicTools::default()),
        log,
        cwd.to_path_buf(),
    ))
}

/// Start-up failed after the hooks started: they end as at any exit.
async fn abandon(hooks: &HookSet, e: StartError) -> StartError {
    hooks
        .runner
        .awaited(AwaitedEvent::SessionShutdown, json!({"reason": "quit"}))
        .await;
    hooks.shutdown("pi is exiting").await;
    e
}

pub(super) async fn start(setup: ControllerSetup) -> Result<SessionController, StartError> {
    let ControllerSetup {
        options,
        input_source,
        agent_dir,
        cwd,
        trusted,
        settings,
        registry,
        session,
        restored,
        model,
        thinking,
        api_key,
        command_line_model,
        hooks,
        hook_tools,
        events,
        ui,
    } = setup;
    let session = SharedSession::new(session);
    session_state::record(&session, &restored, &model, thinking);
    let start_model = hook_model(&info_in(&registry, model.clone()));
    attach_before_start(&hooks, &session, start_model, thinking, &ui);
    let mcp = mcp_hub(&options, &settings, &agent_dir, &cwd, trusted);
    warn_unknown_servers(&hooks, mcp.as_ref());
    let credential_vars = tools::credential_vars(&registry, mcp.as_ref());
    let restored_builtins = super::loadout::restored_builtins(&session.lock(), &options);
    let built = tools::build(
        &options,
        &settings,
        &credential_vars,
        hook_tools,
        mcp.as_ref(),
        &restored_builtins,
    );
    let (registry_tools, shell) = match built {
        Ok(built) => built,
        Err(e) => return Err(abandon(&hooks, e.into()).await),
    };
    attach_shell(&hooks, &settings, &shell, mcp.as_ref());
    let registry_tools = Arc::new(registry_tools);
    let setup_failed = run_setup(&hooks.runner, options.setup_trigger).await;
    let discovered = announce_start(&hooks.runner, &cwd).await;
    let mut fixed = Fixed {
        options,
        input_source,
        agent_dir,
        registry: std::sync::RwLock::new(registry),
        providers: Providers::new(),
        ui,
        mcp,
        command_line_model,
    };
    let refused = resources::refused_instructions(
        &hooks.runner,
        &fixed.options,
        &fixed.agent_dir,
        &cwd,
        trusted,
    )
    .await;
    let place = Place { cwd, trusted };
    let env = environment(&fixed, &place, settings, shell, &discovered, &refused);
    let system_prompt = env
        .resources
        .system_prompt(&registry_tools, None, &place.cwd);
    let provider = match provider_for(&mut fixed, &model) {
        Ok(p) => p,
        Err(e) => return Err(abandon(&hooks, e).await),
    };
    let config = AgentConfig {
        retry: retry_policy(&env.settings),
        steering_mode: env.settings.steering_mode(),
        follow_up_mode: env.settings.follow_up_mode(),
        model,
        api_key,
        thinking,
        system_prompt,
        cwd: place.cwd.clone(),
    };
    let current_hooks = Arc::new(CurrentHooks::new(hooks.agent_hooks()));
    let agent = Agent::new(
        config,
        provider,
        registry_tools.clone(),
        current_hooks.clone(),
        events.clone(),
    );
    let agent = on_session(agent, &session);
    let core = new_core(Parts {
        fixed,
        place,
        env,
        events,
        session,
        agent,
        hooks,
        current_hooks,
        setup_failed,
    });
    core.start_loadout(&registry_tools);
    core.refresh_system_prompt();
    super::mcp::watch(Arc::downgrade(&core));
    Ok(SessionController { core })
}

/// What the controller's core is made of, once every piece is started.
struct Parts {
    fixed: Fixed,
    place: Place,
    env: Environment,
    events: mpsc::UnboundedSender<AgentEvent>,
    session: Arc<SharedSession>,
    agent: Agent,
    hooks: HookSet,
    current_hooks: Arc<CurrentHooks>,
    /// A Claude Code `Setup` hook blocked, or failed under a closed policy ([`run_setup`]).
    setup_failed: bool,
}

/// The core, with the hooks' host calls attached to it (they reach the session controls
/// through a weak reference, so the hooks never keep the core alive).
fn new_core(parts: Parts) -> Arc<Core> {
    let handle = parts.agent.handle();
    let status = Status {
        auto_compaction: parts.env.compaction.enabled,
        ..Status::default()
    };
    let scope = parts.fixed.options.model_scope.clone();
    Arc::new_cyclic(|me: &Weak<Core>| {
        let control: Weak<dyn SessionControl> = me.clone();
        attach(
            &parts.hooks,
            &parts.session,
            &handle,
            control,
            &parts.fixed.ui,
            parts.fixed.mcp.as_ref(),
            me.clone(),
        );
        Core {
            me: me.clone(),
            fixed: parts.fixed,
            trust_seen: Mutex::new(
                std::iter::once((parts.place.cwd.clone(), parts.place.trusted)).collect(),
            ),
            place: Mutex::new(Arc::new(parts.place)),
            env: Mutex::new(Arc::new(parts.env)),
            events: parts.events,
            session: parts.session,
            handle,
            agent: Arc::new(tokio::sync::Mutex::new(observed(parts.agent, me.clone()))),
            hooks: Mutex::new(Arc::new(parts.hooks)),
            current_hooks: parts.current_hooks,
            retired: Mutex::default(),
            command: Mutex::default(),
            status: Mutex::new(status),
            idle: watch::Sender::new(true),
            bash: Mutex::default(),
            pending_bash: Mutex::default(),
            mcp_waited: Default::default(),
            mcp_prompt_version: std::sync::atomic::AtomicU64::new(u64::MAX),
            mcp_known: Mutex::default(),
            warmer: Default::default(),
            setup_failed: parts.setup_failed,
            scope: Mutex::new(scope),
        }
    })
}

/// The user's shell, as hooks and MCP servers run it; MCP servers start in the background
/// from here on (the first prompt waits for what it needs), and from `session_start` on,
/// hooks may add servers.
fn attach_shell(
    hooks: &HookSet,
    settings: &Settings,
    shell: &ShellEnvironment,
    mcp: Option<&McpHub>,
) {
    hooks.attach_shell(shell);
    hooks.claude.set_idle_after(settings);
    if let Some(hub) = mcp {
        hub.start(Arc::new(shell.clone()));
        hooks.calls.attach_mcp(Arc::new(hub.clone()));
    }
}

/// The built-in providers (with the faux provider's script, if one was given) and the one
/// that serves `model`.
fn provider_for(
    fixed: &mut Fixed,
    model: &Model,
) -> Result<Arc<dyn crate::provider::Provider>, StartError> {
    let script = load_faux_script(&fixed.options, &model.api)?;
    fixed.providers = Providers::builtin(script);
    fixed
        .providers
        .get(&model.api)
        .ok_or_else(|| StartError::UnsupportedApi {
            model: model.id.clone(),
            api: model.api.clone(),
        })
}

/// What hooks may use before `session_start`: the model (hooks started from now on, a new
/// session's or a restart's, are told the one in use), the user's front end and the session
/// (a hook may write entries or ask the user from there on).
fn attach_before_start(
    hooks: &HookSet,
    session: &Arc<SharedSession>,
    start_model: crate::hooks::protocol::HookModel,
    thinking: ThinkingLevel,
    ui: &Arc<dyn HookUi>,
) {
    hooks.context().model.set(Some(start_model.clone()));
    hooks.calls.attach_startup_model(StartupModel {
        model: start_model,
        thinking,
    });
    hooks.calls.attach_ui(ui.clone());
    hooks.calls.attach_session(session.clone());
}

/// A Claude Code matcher naming a server that is not there is a gate that never runs: said
/// at startup.
fn warn_unknown_servers(hooks: &HookSet, mcp: Option<&McpHub>) {
    let servers: Vec<String> = mcp
        .iter()
        .flat_map(|h| h.views().into_iter().map(|v| v.name))
        .collect();
    for w in crate::hooks::claude::mcp_names::unknown_servers(&hooks.claude_specs(), &servers) {
        term_eprintln!("Warning: {w}");
    }
}

/// `session_start`, then `resources_discover`: what hooks contribute to the resources.
async fn announce_start(runner: &Runner, cwd: &std::path::Path) -> Discovered {
    runner
        .awaited(AwaitedEvent::SessionStart, json!({"reason": "startup"}))
        .await;
    let discovered = runner
        .collect(
            CollectEvent::ResourcesDiscover,
            json!({"cwd": cwd.display().to_string(), "reason": "startup"}),
        )
        .await;
    if !discovered.skill_paths.is_empty() || !discovered.prompt_paths.is_empty() {
        tracing::info!(skills = ?discovered.skill_paths, prompts = ?discovered.prompt_paths, "resources contributed by hooks");
    }
    discovered
}

/// The agent on the session: its history loaded, its messages recorded there, and its
/// boundaries stored there.
fn on_session(mut agent: Agent, session: &Arc<SharedSession>) -> Agent {
    let history = session.lock().context().llm_messages();
    agent.load_messages(history);
    agent.record(recorder(session.clone()));
    agent.boundary_store(Arc::new(super::boundary::SessionBoundary {
        session: session.clone(),
    }));
    agent
}

/// Claude Code `Setup` hooks, when pi was started with a trigger for them: context they add
/// goes with the first prompt, as `SessionStart`'s does. Nothing is stopped by a block (there
/// is nothing to stop); it and a failure under a closed policy are said, and are what
/// `--init-only` exits non-zero for. Returns whether one happened.
async fn run_setup(runner: &Runner, trigger: Option<&'static str>) -> bool {
    let Some(trigger) = trigger else {
        return false;
    };
    if !runner.any_at(Moment::Setup) {
        return false;
    }
    let verdict = runner
        .moment(Moment::Setup, &json!({"trigger": trigger}))
        .await;
    match verdict.blocked {
        Some((by, why)) => {
            term_eprintln!("Warning: Setup hook {by} did not succeed: {why}");
            true
        }
        None => false,
    }
}

/// The agent with the cache warmer watching its requests: each one sent is the one to keep
/// warm from then on.
fn observed(mut agent: Agent, core: Weak<Core>) -> Agent {
    agent.prepare_turns(Arc::new(super::compact::BetweenTurns {
        core: core.clone(),
    }));
    let of_session = core.clone();
    agent.session_id_from(Arc::new(move || {
        of_session
            .upgrade()
            .map(|core| core.session.lock().id().to_string())
    }));
    agent.observe_requests(Arc::new(move |sent| {
        if let Some(core) = core.upgrade() {
            core.warmer.start(&core, sent);
        }
    }));
    agent
}
