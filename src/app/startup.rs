//! The named steps of a run's start-up that `run` strings together: the first phase of hooks
//! (before trust), the prompts, the host context the first hooks see, the providers hooks
//! registered, and the front end (output task, RPC server or interactive UI) that starts
//! before the controller so a hook's dialog during start-up is shown and answered.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use tokio::sync::mpsc;

use super::{hello_model, input, load_project, trust, warned, EXIT_ERROR};
use crate::agent::events::AgentEvent;
use crate::agent::hooks::InputSource;
use crate::cli::{Cli, Mode};
use crate::config::{self, ModelRegistry, Settings, SystemEnv};
use crate::controller::hooks::specs as hooks;
use crate::controller::session_state::Restored;
use crate::controller::HookSet;
use crate::hooks::instance::HostContext;
use crate::modes::{self, OutputMode};
use crate::session::Session;

/// What start-up reads before anything runs.
pub(super) struct Configured {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    /// The user's settings alone until the project is trusted: a project cannot change what
    /// decides its own trust, nor which hooks run before that decision.
    pub global: Settings,
    pub first: FirstPhase,
    pub registry: ModelRegistry,
}

/// The user's configuration, its warnings printed; `Err` is the exit code when the run ends
/// here (a configuration error, or `--list-models` answered).
pub(super) fn configure(cli: &Cli) -> anyhow::Result<Result<Configured, i32>> {
    let env = SystemEnv;
    let cwd = std::env::current_dir().context("cannot determine the working directory")?;
    let agent_dir = config::agent_dir(&env)?;
    let global = Settings::load(&config::settings_path(&agent_dir), None)?;
    for w in global.warnings() {
        term_eprintln!("Warning: {w}");
    }
    let Some(first) = first_phase(cli, &env, &global, &agent_dir, &cwd) else {
        return Ok(Err(EXIT_ERROR));
    };
    let (registry, warnings) = ModelRegistry::load(&agent_dir, &env)?;
    for w in &warnings {
        term_eprintln!("Warning: {w}");
    }
    if let Some(search) = &cli.list_models {
        term_print!("{}", registry.list_models(search.as_deref()));
        return Ok(Err(0));
    }
    Ok(Ok(Configured {
        cwd,
        agent_dir,
        global,
        first,
        registry,
    }))
}

/// The administrator's policy, the first phase's hook specs (pi's and Claude Code's), and
/// `commandHooksStrictExit` (the user's or the managed policy's, never a project's).
pub(super) type FirstPhase = (
    config::managed::ManagedPolicy,
    Vec<crate::hooks::spec::HookSpec>,
    Vec<crate::hooks::claude::ClaudeSpec>,
    Option<crate::hooks::claude::config::StrictExit>,
);

/// The [`FirstPhase`], or `None` when it cannot be read (the error is printed).
pub(super) fn first_phase(
    cli: &Cli,
    env: &SystemEnv,
    global: &Settings,
    agent_dir: &Path,
    cwd: &Path,
) -> Option<FirstPhase> {
    let cli_hooks: Vec<String> = cli
        .hooks
        .iter()
        .chain(cli.extensions.iter())
        .cloned()
        .collect();
    // The administrator's policy first: its hooks load before all others and cannot be
    // turned off from here.
    let policy = match config::managed::ManagedPolicy::load(env) {
        Ok(p) => p,
        Err(e) => {
            term_eprintln!("Error: {e}");
            return None;
        }
    };
    let specs = warned(
        hooks::specs_with_policy(&cli_hooks, cli.no_hooks, global, agent_dir, cwd, &policy)
            .map(|plan| (plan.warnings, plan.specs)),
    )?;
    let claude = warned(
        crate::hooks::claude::sources::first_phase(
            &cli.claude_hooks,
            cli.no_hooks,
            global,
            agent_dir,
            cwd,
            &policy,
        )
        .map(|plan| (plan.warnings, (plan.specs, plan.strict_exit))),
    )?;
    let (claude, strict_exit) = claude;
    Some((policy, specs, claude, strict_exit))
}

/// The run's prompts: messages, @files and piped stdin (which is RPC mode's command stream
/// instead). `None` when there are none to run, or RPC mode was given some (the error is
/// printed).
pub(super) fn read_prompts(
    cli: &Cli,
    rpc: bool,
    interactive: bool,
    cwd: &Path,
) -> anyhow::Result<Option<Vec<String>>> {
    if rpc && !cli.messages.is_empty() {
        term_eprintln!(
            "Error: --mode rpc takes its prompts as `prompt` commands on stdin; remove the \
             messages and @files from the command line ({})",
            cli.messages.join(" ")
        );
        return Ok(None);
    }
    let stdin_text = if rpc || std::io::stdin().is_terminal() {
        None
    } else {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("cannot read standard input")?;
        Some(s)
    };
    let prompts = match input::build_prompts(&cli.messages, stdin_text, cwd) {
        Ok(p) => p,
        Err(e) => {
            term_eprintln!("Error: {e}");
            return Ok(None);
        }
    };
    if prompts.is_empty() && !rpc && !interactive {
        term_eprintln!(
            "Error: no prompt given. Pass a message (pi -p \"…\"), pipe one on stdin, or use @file \
             (or run pi on a terminal for the interactive mode)."
        );
        return Ok(None);
    }
    Ok(Some(prompts))
}

/// The mode's name as hooks are told it (`hello.mode`).
pub(super) fn mode_name(cli: &Cli, interactive: bool) -> &'static str {
    match cli.output_mode() {
        Mode::Json => "json",
        Mode::Text if interactive => "interactive",
        Mode::Text => "print",
        Mode::Rpc => "rpc",
    }
}

/// The `input` events' `source` for what the front end sends. Print and JSON runs both
/// report their prompts as `print` input.
pub(super) fn input_source(rpc: bool, interactive: bool) -> InputSource {
    if rpc {
        InputSource::Rpc
    } else if interactive {
        InputSource::Interactive
    } else {
        InputSource::Print
    }
}

/// Where and for whom pi runs, as the steps after the session is opened read it.
pub(super) struct Place<'a> {
    pub cli: &'a Cli,
    pub cwd: &'a Path,
    pub agent_dir: &'a Path,
    pub registry: &'a ModelRegistry,
    pub restored: &'a Restored,
}

/// What the first phase's hooks are told about the run.
pub(super) fn host_context(
    place: &Place<'_>,
    mode_name: &str,
    session: &Session,
    global: &Settings,
    unknown_flags: &[(String, serde_json::Value)],
) -> HostContext {
    let Place {
        cli,
        cwd,
        registry,
        restored,
        ..
    } = *place;
    let mut ctx = HostContext::new(cwd.to_path_buf(), mode_name);
    // Hooks' providers are checked over the ones the user's files configure, as the
    // registry applies them.
    ctx.providers =
        crate::hooks::provider_calls::HookProviders::over(registry.providers().to_vec());
    ctx.session_id = Some(session.id().to_string());
    ctx.session_file = session.path().map(|p| p.display().to_string());
    ctx.capabilities = crate::hooks::host::capabilities(mode_name);
    ctx.flags = unknown_flags.iter().cloned().collect();
    // Before trust is decided, a project's own settings cannot be known to apply: their model
    // is not announced until they are.
    if !cwd.join(".pi").join("settings.json").is_file() {
        ctx.model.set(hello_model(cli, global, registry, restored));
    }
    ctx
}

/// The first phase's hooks started, the project's trust decided (asked for on a terminal),
/// and a trusted project's settings and hooks loaded: the hooks, their warnings, whether the
/// project is trusted, and the run's settings. `None` when start-up failed (the error is
/// printed and any hook started is stopped).
pub(super) async fn hooks_and_trust(
    place: &Place<'_>,
    interactive: bool,
    (policy, specs, claude, strict_exit): FirstPhase,
    global: Settings,
    ctx: HostContext,
    tx: &mpsc::UnboundedSender<AgentEvent>,
) -> Option<(HookSet, Vec<String>, bool, Settings)> {
    let Place {
        cli,
        cwd,
        agent_dir,
        registry,
        restored,
    } = *place;
    let (mut loaded, mut warnings) = match HookSet::start(specs, ctx, tx.clone()).await {
        Ok(l) => l,
        Err(e) => {
            term_eprintln!("Error: {e}");
            return None;
        }
    };
    loaded.add_claude(claude);
    let mut decision = trust::decide(cli, &global, agent_dir, cwd, &loaded.runner).await;
    if interactive && decision.reason == crate::resources::trust::TrustReason::NoPrompt {
        decision = trust::ask(agent_dir, cwd, &global).await;
    }
    trust::report(&decision, cli.verbose);
    if !decision.trusted {
        strict_note(&loaded);
        return Some((loaded, warnings, false, global));
    }
    // Second phase: a trusted project's settings and hooks.
    let hello = |settings: &Settings| hello_model(cli, settings, registry, restored);
    let first = super::FirstPhase {
        agent_dir,
        policy: &policy,
        strict_exit: strict_exit.as_ref(),
    };
    match load_project(&first, cwd, &mut loaded, &hello).await {
        Ok((settings, w)) => {
            warnings.extend(w);
            strict_note(&loaded);
            Some((loaded, warnings, true, settings))
        }
        Err(e) => {
            term_eprintln!("Error: {e}");
            loaded.shutdown("startup failed").await;
            None
        }
    }
}

/// Which Claude Code hooks `commandHooksStrictExit` applies to, once they are all loaded.
fn strict_note(loaded: &HookSet) {
    if let Some(line) = crate::hooks::claude::sources::strict_line(&loaded.claude_specs()) {
        term_eprintln!("Note: {line}");
    }
}

/// Providers hooks registered while they started (`provider.register`), as pi flushes
/// `registerProvider` calls before its first model choice; no more are taken after it.
pub(super) fn add_hook_providers(
    loaded: &crate::controller::HookSet,
    registry: &mut ModelRegistry,
) {
    for r in loaded.context().providers.close() {
        let from = format!("provider.register of hook {}", r.hook);
        match registry.add_provider(&from, &r.name, &r.entry, &r.env) {
            Ok(config::Applied::TookOver { from }) => term_eprintln!(
                "Warning: hook {} took over provider {} with a key of its own: its requests go \
                 where the hook says, and none of {} credentials for it (auth.json, the \
                 environment, models.json) is sent",
                r.hook,
                r.name,
                match &from {
                    Some(h) => format!("hook {h}'s"),
                    None => "your".to_string(),
                }
            ),
            Ok(_) => {}
            Err(e) => term_eprintln!("Warning: {e}; provider {} not added", r.name),
        }
    }
}

/// RPC's server: its writer, the listener on stdin, and what stops the listener.
pub(super) type RpcServer = (
    modes::rpc::server::Server,
    modes::rpc::server::Listener,
    tokio_util::sync::CancellationToken,
);

/// The front end, started before the controller: the output task of a print or JSON run,
/// RPC's server, or the interactive UI (which takes the events itself).
pub(super) struct FrontEnd {
    pub consumer: Option<tokio::task::JoinHandle<modes::Outcome>>,
    pub rpc_server: Option<RpcServer>,
    /// The events, for the interactive mode.
    pub events: Option<mpsc::UnboundedReceiver<AgentEvent>>,
    pub interactive_ui: Option<Arc<modes::interactive::ui::InteractiveUi>>,
    pub interactive_rx: Option<mpsc::Receiver<modes::interactive::ui::UiRequest>>,
}

impl FrontEnd {
    /// RPC's writer and reader of stdin start here, before the controller: a hook's dialog
    /// during start-up is written, and its answer read.
    pub(super) fn start(
        cli: &Cli,
        interactive: bool,
        session: &Session,
        rx: mpsc::UnboundedReceiver<AgentEvent>,
    ) -> anyhow::Result<FrontEnd> {
        let (interactive_ui, interactive_rx) = if interactive {
            let (ui, rx) = modes::interactive::ui::InteractiveUi::new();
            (Some(Arc::new(ui)), Some(rx))
        } else {
            (None, None)
        };
        let mut rx = Some(rx);
        let mode = match cli.output_mode() {
            _ if interactive => None,
            Mode::Json => Some(OutputMode::Json {
                header: serde_json::to_value(session.header()).unwrap_or_default(),
                hook_events: cli.hook_events,
            }),
            Mode::Text => Some(OutputMode::Print {
                verbose: cli.verbose,
                explain: cli.explain_hooks,
            }),
            // RPC's server takes the events once the controller it answers for has started.
            Mode::Rpc => None,
        };
        let (consumer, rpc_server) = match (mode, rx.take()) {
            (Some(mode), Some(rx)) => (Some(tokio::spawn(modes::consume(mode, rx))), None),
            (None, Some(events)) if interactive => {
                rx = Some(events);
                (None, None)
            }
            (_, events) => {
                let events = events.context("the event stream was taken twice")?;
                let mapper = modes::rpc::server::EventMapper::with_hook_events(cli.hook_events);
                let server =
                    modes::rpc::server::Server::start(events, modes::rpc::stdio::output(), mapper);
                let stop = tokio_util::sync::CancellationToken::new();
                let listener = server.listen(modes::rpc::stdio::input(), stop.clone());
                (None, Some((server, listener, stop)))
            }
        };
        Ok(FrontEnd {
            consumer,
            rpc_server,
            events: rx,
            interactive_ui,
            interactive_rx,
        })
    }

    /// Who serves the hooks' `ui.*` calls.
    pub(super) fn ui(&self, mode_name: &str) -> Arc<dyn crate::hooks::ui::HookUi> {
        match (&self.rpc_server, &self.interactive_ui) {
            (Some((server, _, _)), _) => server.ui(),
            (None, Some(ui)) => ui.clone(),
            (None, None) => crate::hooks::ui::HeadlessUi::new(mode_name),
        }
    }
}
