//! The binary's edge: arguments → configuration → trust and hooks → the session controller →
//! a front end (print or JSON) → exit code. Errors become `anyhow` here and nowhere deeper.

mod auth_cmds;
mod auth_login;
mod auth_print;
mod export_cmd;
mod hook_check;
mod hook_cmds;
mod hook_probe;
mod hook_replay;
mod hook_test;
mod input;
mod mcp_cmds;
mod model_scope;
pub mod options;
pub(crate) mod picker;
mod session_cwd;
mod session_open;
mod signals;
mod startup;
pub(crate) mod trust;

use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use tokio::sync::mpsc;

use crate::cli::{Cli, Mode};
use crate::config::{self, ModelRegistry, Settings, SystemEnv};
use crate::controller::hooks::specs as hooks;
use crate::controller::session_state::{self, Restored};
use crate::controller::{ControllerSetup, HookSet, SessionController};
use crate::message::StopReason;
use crate::modes;
use crate::modes::oneshot::Ending;
use crate::provider::{Model, ThinkingLevel};

/// Exit code for an argument or configuration error.
const EXIT_ERROR: i32 = 1;

pub fn main() -> anyhow::Result<i32> {
    // The watchdog is this binary too; it must not parse arguments, log or start a runtime.
    if std::env::args_os().nth(1).as_deref() == Some(crate::watchdog::SUBCOMMAND.as_ref()) {
        return Ok(crate::watchdog::serve(std::env::args_os().skip(2)));
    }
    // Before anything holds a key: other processes of the user must not read pi's environment
    // or memory (SPEC 4.9), as ssh-agent does it. Children that exec are dumpable again.
    #[cfg(target_os = "linux")]
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        term_eprintln!("Warning: cannot protect pi's memory from other processes: {e}");
    }
    let args = crate::cli::normalize(std::env::args());
    // Subcommands are matched before normal parsing, as pi does, so `pi fix the hooks` stays a
    // prompt while `pi hooks` and `pi hook …` are commands.
    match args.get(1).map(String::as_str) {
        Some("hook") => return subcommand(SubArgs::Hook(args[1..].to_vec())),
        Some("hooks") => return subcommand(SubArgs::Hooks(args[1..].to_vec())),
        // As typed: pi's short-flag aliases must not rewrite a server's own arguments.
        Some("mcp") => return mcp_cmds::main(std::env::args().skip(1).collect()),
        Some("auth") => return auth_cmds::main(&std::env::args().skip(1).collect::<Vec<_>>()),
        _ => {}
    }
    let (args, unknown_flags) = crate::cli::split_unknown_flags(args);
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => return Ok(exit_for(e)),
    };
    // Answered before anything else is set up, so it stays instant.
    if cli.version {
        term_println!("{}", env!("CARGO_PKG_VERSION"));
        return Ok(0);
    }
    // As pi 1.6: an export is answered before any configuration is read.
    if let Some(input) = &cli.export {
        let cwd = std::env::current_dir().context("cannot determine the working directory")?;
        return Ok(export_cmd::run(
            input,
            cli.messages.first().map(String::as_str),
            &cwd,
        ));
    }
    init_logging(cli.verbose);
    if cli.offline {
        // SAFETY: single-threaded here; no runtime or other thread has started yet.
        unsafe { std::env::set_var("PI_OFFLINE", "1") };
    }
    crate::watchdog::install()?;
    let runtime = runtime(cli.output_mode())?;
    // The run is a task, not the future `block_on` polls: waking that future goes through the
    // driver (an eventfd write and another trip through epoll), while waking a task on the
    // runtime's own thread is a queue push. The run waits on the agent's events many times a
    // turn.
    let r = runtime.block_on(async move {
        match tokio::spawn(run(cli, unknown_flags)).await {
            Ok(r) => r,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Err(anyhow::anyhow!("the run was cancelled: {e}")),
        }
    });
    // Everything that had to finish has (the session, the hooks, the output); idle blocking
    // threads need not be woken to be joined before the process exits.
    runtime.shutdown_background();
    r
}

/// The async runtime for a run. A print or JSON run drives one agent turn after turn, and
/// every hand-off between runtime threads is a wake-up on the critical path of each turn (the
/// stream's connection task, the watchdog's answers, the event consumer): on one thread the
/// 50-call HTTP benchmark takes about 3 % less time than on two workers, and half the context
/// switches. What is heavy runs on the blocking pool. RPC mode keeps one worker beside
/// `block_on`'s thread (see `serve_rpc`).
fn runtime(mode: Mode) -> anyhow::Result<tokio::runtime::Runtime> {
    let built = if mode == Mode::Rpc {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    };
    built.context("cannot start the async runtime")
}

enum SubArgs {
    Hook(Vec<String>),
    Hooks(Vec<String>),
}

fn exit_for(e: clap::Error) -> i32 {
    use clap::error::ErrorKind;
    let code = match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
        _ => EXIT_ERROR,
    };
    let _ = e.print();
    code
}

fn subcommand(args: SubArgs) -> anyhow::Result<i32> {
    init_logging(false);
    // Before the runtime, from the main thread: see `watchdog::install`.
    crate::watchdog::install()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let cwd = std::env::current_dir().context("cannot determine the working directory")?;
    match args {
        SubArgs::Hook(a) => {
            let parsed = match hook_cmds::HookArgs::try_parse_from(a) {
                Ok(p) => p,
                Err(e) => return Ok(exit_for(e)),
            };
            runtime.block_on(async {
                match parsed.cmd {
                    hook_cmds::HookCmd::Test(t) => hook_test::hook_test(&t, &cwd).await,
                    hook_cmds::HookCmd::Replay(r) => hook_replay::hook_replay(&r, &cwd).await,
                    hook_cmds::HookCmd::Check { command } => {
                        hook_check::hook_check(&command, &cwd).await
                    }
                }
            })
        }
        SubArgs::Hooks(a) => {
            let parsed = match hook_cmds::HooksArgs::try_parse_from(a) {
                Ok(p) => p,
                Err(e) => return Ok(exit_for(e)),
            };
            let env = SystemEnv;
            let agent_dir = config::agent_dir(&env)?;
            let settings = Settings::load(&config::settings_path(&agent_dir), None)?;
            let mut specs =
                hooks::specs(&parsed.hooks, parsed.no_hooks, &settings, &agent_dir, &cwd)?;
            // A trusted project's hooks are listed too. No hook runs here to vote on trust, so
            // the decision is the flags', trust.json's or the default's.
            let approve = parsed.approve.then_some(true);
            let decision = runtime.block_on(trust::decide_with(
                approve, &settings, &agent_dir, &cwd, None,
            ));
            if decision.trusted && !parsed.no_hooks {
                let file = cwd.join(".pi").join("settings.json");
                let project = if file.is_file() {
                    Settings::load(&file, None)?
                } else {
                    Settings::from_value(serde_json::Value::Null)
                };
                let policy = config::managed::ManagedPolicy::load(&env)?;
                let managed: Vec<crate::hooks::spec::HookSpec> = specs
                    .iter()
                    .filter(|s| s.source == crate::hooks::spec::HookSource::Managed)
                    .cloned()
                    .collect();
                let refs: Vec<&crate::hooks::spec::HookSpec> = managed.iter().collect();
                let (grant, unreadable) = settings.project_grant_or_none(&cwd);
                let mut warnings: Vec<String> = unreadable.into_iter().collect();
                let extra = hooks::admit(
                    &policy,
                    &refs,
                    hooks::project_specs_granted(&project, &cwd, &grant)?,
                    &mut warnings,
                );
                for w in warnings {
                    term_eprintln!("Warning: {w}");
                }
                specs.extend(extra);
            }
            let claude =
                hook_cmds::claude_specs(&parsed, &settings, &agent_dir, &cwd, decision.trusted)?;
            runtime.block_on(hook_cmds::list_hooks(&parsed, specs, claude, &cwd))
        }
    }
}

/// A hook plan's warnings printed and its specs returned, or its error printed and `None`
/// (the run then ends with [`EXIT_ERROR`]).
fn warned<W: std::fmt::Display, T, E: std::fmt::Display>(
    plan: Result<(Vec<W>, T), E>,
) -> Option<T> {
    match plan {
        Ok((warnings, specs)) => {
            for w in &warnings {
                term_eprintln!("Warning: {w}");
            }
            Some(specs)
        }
        Err(e) => {
            term_eprintln!("Error: {e}");
            None
        }
    }
}

fn init_logging(verbose: bool) {
    let filter = if verbose { "pi=info" } else { "pi=warn" };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PI_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(filter)),
        )
        // The log carries hooks' stderr and servers' words: through the terminal rule, and
        // without colours of its own (their escapes would be shown as text).
        .with_writer(crate::term::out::stderr)
        .with_ansi(false)
        .with_target(false)
        .try_init();
}

async fn run(mut cli: Cli, unknown_flags: Vec<(String, serde_json::Value)>) -> anyhow::Result<i32> {
    let startup::Configured {
        cwd,
        agent_dir,
        global,
        first,
        mut registry,
    } = match startup::configure(&cli)? {
        Ok(configured) => configured,
        Err(code) => return Ok(code),
    };
    let rpc = cli.output_mode() == Mode::Rpc;
    let interactive = is_interactive(&cli);
    // `--init-only` starts the session for its hooks and ends it: no prompt to read.
    let prompts = if cli.init_only {
        Vec::new()
    } else {
        match startup::read_prompts(&cli, rpc, interactive, &cwd)? {
            Some(prompts) => prompts,
            None => return Ok(EXIT_ERROR),
        }
    };
    // `-r` in the interactive mode is its own session picker, over a new (still unwritten)
    // session: the choice is a `switch_session` like `/resume`'s.
    let resume_in_tui = interactive && cli.resume;
    if resume_in_tui {
        cli.resume = false;
    }
    // The run works where its session was made (pi 1.6's rule): trust, settings, hooks,
    // resources and tools all read this directory from here on.
    let (session, cwd) =
        match session_open::open_session(&cli, &agent_dir, &cwd, &global, interactive) {
            Ok(opened) => opened,
            Err(e) => return Ok(e.report()),
        };
    let restored = session_state::restored(&session);
    let mode_name = startup::mode_name(&cli, interactive);
    // Events (hooks' included) queue in the channel until the output mode starts below.
    let (tx, rx) = mpsc::unbounded_channel();

    // Hooks, first phase: managed, user and command-line hooks — the ones that may answer
    // `project_trust`; then trust, and a trusted project's settings and hooks.
    let place = startup::Place {
        cli: &cli,
        cwd: &cwd,
        agent_dir: &agent_dir,
        registry: &registry,
        restored: &restored,
    };
    let ctx = startup::host_context(&place, mode_name, &session, &global, &unknown_flags);
    let Some((loaded, mut warnings, trusted, settings)) =
        startup::hooks_and_trust(&place, interactive, first, global, ctx, &tx).await
    else {
        return Ok(EXIT_ERROR);
    };
    startup::add_hook_providers(&loaded, &mut registry);
    let chosen = match prepare(
        &cli,
        &settings,
        &registry,
        &loaded,
        &unknown_flags,
        &restored,
    ) {
        Ok(chosen) => chosen,
        Err(message) => {
            term_eprintln!("Error: {message}");
            loaded.shutdown("startup failed").await;
            return Ok(EXIT_ERROR);
        }
    };
    let hook_tools = loaded.tools(&mut warnings);
    for w in &warnings {
        term_eprintln!("Warning: {w}");
    }
    let mut front = startup::FrontEnd::start(&cli, interactive, &session, rx)?;
    let theme = TuiTheme {
        setting: settings
            .get("theme")
            .and_then(|v| v.as_str())
            .map(String::from),
        choice: cli.theme_choice(),
        hide_thinking: settings
            .get("hideThinkingBlock")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
    };
    let tui_places = (cwd.clone(), agent_dir.clone(), resume_in_tui);
    let command_line_model = command_line_model(&cli, &settings, &registry, &chosen.model);
    let setup = ControllerSetup {
        options: Arc::new(options::controller_options(&cli, chosen.scope)),
        input_source: startup::input_source(rpc, interactive),
        agent_dir,
        cwd,
        trusted,
        settings,
        registry: Arc::new(registry),
        session,
        restored,
        model: chosen.model,
        thinking: chosen.thinking,
        api_key: chosen.api_key,
        command_line_model,
        hooks: loaded,
        hook_tools,
        events: tx,
        ui: front.ui(mode_name),
    };
    let Some(controller) = start_controller(setup, &mut front).await? else {
        return Ok(EXIT_ERROR);
    };
    drive(controller, &cli, front, prompts, tui_places, theme).await
}

/// The controller, or `None` when it could not start (said on stderr once the front end has
/// written what the start sent it).
async fn start_controller(
    setup: ControllerSetup,
    front: &mut startup::FrontEnd,
) -> anyhow::Result<Option<SessionController>> {
    match SessionController::start(setup).await {
        Ok(c) => Ok(Some(c)),
        Err(e) => {
            term_eprintln!("Error: {e}");
            if let Some(consumer) = front.consumer.take() {
                consumer.await.context("output task failed")?;
            }
            Ok(None)
        }
    }
}

/// What the interactive mode's look starts from: the `theme` setting, the command line's
/// choice over it (`--theme NAME`, `--use-theme`), and `hideThinkingBlock`.
struct TuiTheme {
    setting: Option<String>,
    choice: Option<String>,
    hide_thinking: bool,
}

/// A terminal on both ends and no `-p`: the interactive mode.
fn is_interactive(cli: &Cli) -> bool {
    cli.output_mode() == Mode::Text
        && !cli.print
        && !cli.init_only
        && std::io::stdin().is_terminal()
        && crate::term::out::is_terminal(crate::term::out::To::Stdout)
}

/// The started controller driven by the front end until the run ends: the interactive mode,
/// RPC's server, or the prompts of a print or JSON run.
async fn drive(
    controller: SessionController,
    cli: &Cli,
    front: startup::FrontEnd,
    prompts: Vec<String>,
    tui_places: (std::path::PathBuf, std::path::PathBuf, bool),
    theme: TuiTheme,
) -> anyhow::Result<i32> {
    let signals = signals::install(controller.downgrade());
    if let (Some(events), Some(ui_rx)) = (front.events, front.interactive_rx) {
        return run_interactive(
            controller, events, ui_rx, prompts, tui_places, theme, signals,
        )
        .await;
    }
    let Some(consumer) = front.consumer else {
        let rpc = front
            .rpc_server
            .context("RPC mode started without its server")?;
        // On a worker, beside the writer it feeds: `block_on`'s thread is not one.
        return tokio::spawn(serve_rpc(controller, rpc, signals))
            .await
            .context("the RPC server failed")?;
    };
    let ending = match &signals {
        Ok(_) if cli.init_only => {
            if controller.setup_failed() {
                Ending::Failed
            } else {
                Ending::Done
            }
        }
        Ok(s) => {
            let print = cli.output_mode() == Mode::Text;
            modes::oneshot::run_prompts(&controller, prompts, print, &s.token()).await
        }
        Err(_) => Ending::Failed,
    };
    finish(controller, cli, ending, signals, consumer).await
}

/// Interactive mode until the person quits (or a signal), then the same shutdown as a print
/// run: `session_shutdown` and the hooks stopped.
async fn run_interactive(
    controller: SessionController,
    events: tokio::sync::mpsc::UnboundedReceiver<crate::agent::events::AgentEvent>,
    ui: tokio::sync::mpsc::Receiver<modes::interactive::ui::UiRequest>,
    prompts: Vec<String>,
    (cwd, agent_dir, pick_session): (std::path::PathBuf, std::path::PathBuf, bool),
    theme: TuiTheme,
    signals: std::io::Result<signals::Signals>,
) -> anyhow::Result<i32> {
    let signals = signals.context("cannot install the signal handlers")?;
    let ended = modes::interactive::run(modes::interactive::Start {
        controller: controller.clone(),
        events,
        ui,
        prompts,
        cwd,
        agent_dir,
        theme: theme.setting,
        use_theme: theme.choice,
        hide_thinking: theme.hide_thinking,
        pick_session,
        stop: signals.token(),
    })
    .await;
    controller.end_session().await;
    tokio::join!(
        controller.stop_hooks("pi is exiting"),
        controller.stop_mcp()
    );
    drop(controller);
    ended.context("the terminal failed")?;
    Ok(signals.received().unwrap_or(0))
}

/// RPC mode: commands from stdin until EOF (or a signal), then the same shutdown as a print
/// run: `session_shutdown`, the hooks stopped, and every event written before exiting.
async fn serve_rpc(
    controller: SessionController,
    (server, listener, stop): (
        modes::rpc::server::Server,
        modes::rpc::server::Listener,
        tokio_util::sync::CancellationToken,
    ),
    signals: std::io::Result<signals::Signals>,
) -> anyhow::Result<i32> {
    let signals = signals.context("cannot install the signal handlers")?;
    let interrupted = signals.token();
    let ended = server
        .serve(&controller, listener, interrupted.clone())
        .await;
    stop.cancel();
    if let Err(e) = &ended {
        term_eprintln!("Error: cannot read RPC commands from stdin: {e}");
    }
    // The client is gone: what still runs is aborted, and its answers written if they come
    // within a moment.
    controller.abort_bash();
    controller.abort().await;
    server.settle(std::time::Duration::from_secs(5)).await;
    controller.end_session().await;
    tokio::join!(
        controller.stop_hooks("pi is exiting"),
        controller.stop_mcp()
    );
    drop(controller);
    server.finish().await;
    if let Some(code) = signals.received() {
        return Ok(code);
    }
    Ok(if ended.is_ok() { 0 } else { EXIT_ERROR })
}

/// What the first phase of start-up fixed for the project's hooks.
struct FirstPhase<'a> {
    agent_dir: &'a std::path::Path,
    policy: &'a config::managed::ManagedPolicy,
    /// `commandHooksStrictExit` (the user's or the managed policy's, never the project's).
    strict_exit: Option<&'a crate::hooks::claude::config::StrictExit>,
}

/// A trusted project's settings (deep-merged over the user's) and its hooks, started now.
async fn load_project(
    first: &FirstPhase<'_>,
    cwd: &std::path::Path,
    loaded: &mut HookSet,
    hello_model: &(dyn Fn(&Settings) -> Option<crate::hooks::protocol::HookModel> + Sync),
) -> anyhow::Result<(Settings, Vec<String>)> {
    let (agent_dir, policy) = (first.agent_dir, first.policy);
    let project_file = cwd.join(".pi").join("settings.json");
    let project_path = project_file.is_file().then_some(project_file.as_path());
    let settings = Settings::load(&config::settings_path(agent_dir), project_path)?;
    let project = match project_path {
        Some(p) => Settings::load(p, None)?,
        None => Settings::from_value(serde_json::Value::Null),
    };
    for w in project.warnings() {
        term_eprintln!("Warning: {w}");
    }
    // The project's hooks are told the model these settings choose.
    loaded.context().model.set(hello_model(&settings));
    // `projectEnv` is read from the user's file only (the merge leaves the project's out).
    let (grant, unreadable) = settings.project_grant_or_none(cwd);
    let mut warnings: Vec<String> = unreadable.into_iter().collect();
    let specs = hooks::project_specs_granted(&project, cwd, &grant)?;
    let specs = hooks::admit_later(policy, loaded, specs, &mut warnings);
    warnings.extend(hooks::refused_env_warnings(&specs, &grant));
    let claude =
        crate::hooks::claude::sources::project(&project, cwd, policy, &grant, first.strict_exit)?;
    warnings.extend(claude.warnings);
    warnings.extend(loaded.add(specs).await?);
    loaded.add_claude(claude.specs);
    Ok((settings, warnings))
}

/// The model, thinking level and key for this run, once every hook has had its chance to
/// claim a command-line flag. `Err` is the message to show.
/// The model, thinking level and key start-up chose.
struct Chosen {
    model: Model,
    thinking: ThinkingLevel,
    /// The models Ctrl+P cycles through (`--models`, `enabledModels`).
    scope: Vec<config::ScopedModel>,
    api_key: Option<String>,
}

/// The model start-up picks with `settings`.
fn choose_model(
    cli: &Cli,
    settings: &Settings,
    registry: &ModelRegistry,
    restored: &Restored,
) -> Result<config::ModelSelection, config::ConfigError> {
    // A resumed session continues with its own model unless the command line names one.
    let (provider, pattern) = match (&cli.provider, &cli.model, &restored.model) {
        (None, None, Some(m)) if registry.find(&m.provider, &m.model_id).is_some() => {
            (Some(m.provider.as_str()), Some(m.model_id.as_str()))
        }
        // A new session with a model scope starts on the scope's default or first model.
        (None, None, None) => {
            let (scope, _) = model_scope::resolve(cli, settings, registry);
            if let Some(s) = model_scope::start_model(&scope, settings) {
                let mut chosen =
                    config::resolve_model(registry, Some(&s.provider), Some(&s.id), settings)?;
                chosen.thinking = s.thinking.or(chosen.thinking);
                return Ok(chosen);
            }
            (None, None)
        }
        _ => (cli.provider.as_deref(), cli.model.as_deref()),
    };
    config::resolve_model(registry, provider, pattern, settings)
}

/// The model the command line leads to without a session (`--model`, else the settings'
/// default), for the sessions the run moves to; the model pi started with when that one
/// cannot be resolved now.
fn command_line_model(
    cli: &Cli,
    settings: &Settings,
    registry: &ModelRegistry,
    started: &Model,
) -> crate::controller::CommandLineModel {
    let fresh = choose_model(cli, settings, registry, &Restored::default())
        .map(|s| s.model)
        .unwrap_or_else(|_| started.clone());
    crate::controller::CommandLineModel {
        provider: fresh.provider,
        id: fresh.id,
        // Only `--model` names one (pi 1.6 refuses `--provider` without it; ours takes the
        // provider's default, which a resumed session's own model overrides).
        named: cli.model.is_some(),
    }
}

/// `hello.model` for hooks that start before the controller: the model `settings` lead to
/// (the controller keeps it current from then on); none when there is no usable one yet.
fn hello_model(
    cli: &Cli,
    settings: &Settings,
    registry: &ModelRegistry,
    restored: &Restored,
) -> Option<crate::hooks::protocol::HookModel> {
    let selection = choose_model(cli, settings, registry, restored).ok()?;
    Some(crate::controller::hook_model_for(registry, selection.model))
}

fn prepare(
    cli: &Cli,
    settings: &Settings,
    registry: &ModelRegistry,
    loaded: &HookSet,
    unknown_flags: &[(String, serde_json::Value)],
    restored: &Restored,
) -> anyhow::Result<Chosen> {
    if let Some(name) = loaded.unclaimed_flag(unknown_flags) {
        if loaded.instances.is_empty() {
            anyhow::bail!("Unknown option: --{name}");
        }
        anyhow::bail!("Unknown option: --{name} (no loaded hook registers it)");
    }
    let selection = choose_model(cli, settings, registry, restored)?;
    for w in &selection.warnings {
        term_eprintln!("Warning: {w}");
    }
    let mut model = selection.model;
    let thinking = match cli.thinking.as_deref() {
        Some(t) => match ThinkingLevel::parse(t) {
            Some(l) => Some(l),
            None => {
                term_eprintln!(
                    "Warning: invalid thinking level \"{t}\" (valid: {}); ignored",
                    ThinkingLevel::ALL.join(", ")
                );
                None
            }
        },
        None => None,
    }
    .or(selection.thinking)
    .or(restored.thinking)
    .or(settings.default_thinking_level())
    // pi 1.6's default, as far as the model goes (a model without reasoning: off).
    .unwrap_or_else(|| crate::controller::clamp_thinking(ThinkingLevel::Medium, &model));
    let api_key = registry.require_api_key(&mut model, cli.api_key.as_deref())?;
    let (scope, scope_warnings) = model_scope::resolve(cli, settings, registry);
    for w in &scope_warnings {
        term_eprintln!("Warning: {w}");
    }
    Ok(Chosen {
        model,
        thinking,
        api_key,
        scope,
    })
}

/// After the prompts: `session_shutdown`, the latency report, the hooks stopped, then the
/// exit code (a signal's, 1 for a failed command or a final assistant message that failed).
/// Every wait here is bounded by the graces, whatever the hooks asked for — `session_shutdown`
/// by the runner, each hook's shutdown by its supervisor — and cut to a few hundred
/// milliseconds once a signal arrived (before or during this).
async fn finish(
    controller: SessionController,
    cli: &Cli,
    ending: Ending,
    signals: std::io::Result<signals::Signals>,
    consumer: tokio::task::JoinHandle<modes::Outcome>,
) -> anyhow::Result<i32> {
    controller.end_session().await;
    if cli.explain_hooks || cli.verbose {
        for line in controller.latency_report() {
            term_eprintln!("{line}");
        }
    }
    tokio::join!(
        controller.stop_hooks("pi is exiting"),
        controller.stop_mcp()
    );
    // The output task ends when every event sender is gone, the controller's included.
    drop(controller);
    let signals = signals.context("cannot install the signal handlers")?;
    let outcome = consumer.await.context("output task failed")?;
    if let Some(code) = signals.received() {
        return Ok(code);
    }
    if ending == Ending::Failed {
        return Ok(EXIT_ERROR);
    }
    match outcome.last_assistant() {
        Some(m) if matches!(m.stop_reason, StopReason::Error | StopReason::Aborted) => {
            let msg = m.error_message.clone().unwrap_or_else(|| {
                format!(
                    "Request {}",
                    if m.stop_reason == StopReason::Error {
                        "failed"
                    } else {
                        "was aborted"
                    }
                )
            });
            term_eprintln!("Error: {msg}");
            Ok(EXIT_ERROR)
        }
        _ => Ok(0),
    }
}
