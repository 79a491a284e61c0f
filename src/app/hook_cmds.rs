//! `pi hooks`, `pi hook test`, `pi hook check` and `pi hook replay`: inspecting and testing
//! hooks without a model. The arguments of all of them are here, with the listing; `check` is
//! in `hook_check`, `test` in `hook_test`, `replay` in `hook_replay`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use tokio::sync::mpsc;

use crate::hooks::calls::HostCalls;
use crate::hooks::claude::{self, ClaudeSpec};
use crate::hooks::host;
use crate::hooks::instance::{HookInstance, HostContext, Notice};
use crate::hooks::provider_calls::HookProviders;
use crate::hooks::spec::{HookSource, HookSpec};

#[derive(Debug, Parser)]
#[command(name = "pi hook", about = "Test a hook without a model")]
pub struct HookArgs {
    #[command(subcommand)]
    pub cmd: HookCmd,
}

#[derive(Debug, Subcommand)]
pub enum HookCmd {
    /// Start the hook and exercise one thing it registers: an event, a tool or a command
    Test(TestArgs),
    /// Conformance run: handshake, replies to every subscribed event, tool_execute, cancel,
    /// shutdown, EOF, clean stdout
    Check {
        /// The hook command (split with shell words)
        command: String,
    },
    /// Feed every recorded tool call of session files through a hook and print what it would
    /// have decided
    Replay(super::hook_replay::ReplayArgs),
}

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["event", "tool", "command_call"])))]
pub struct TestArgs {
    /// The hook command (split with shell words)
    pub command: String,
    /// Send this event (any kind; e.g. tool_call, input, turn_end) and print the reply and
    /// the decision the host derives from it
    #[arg(long)]
    pub event: Option<String>,
    /// The event's payload: JSON text, or @file; defaults to a typical payload for the event
    #[arg(long, requires = "event")]
    pub payload: Option<String>,
    /// Run this tool the hook registered, showing its progress and its result
    #[arg(long)]
    pub tool: Option<String>,
    /// The tool's arguments: JSON text, or @file (default `{}`); checked against its schema
    #[arg(long = "args", value_name = "JSON", requires = "tool")]
    pub tool_args: Option<String>,
    /// Cancel the tool run after this many milliseconds, as an abort would
    #[arg(long = "cancel-after", value_name = "MS", requires = "tool")]
    pub cancel_after: Option<u64>,
    /// Run this command the hook registered (`NAME` without or with its `/`, then its
    /// arguments as one string)
    #[arg(long = "command", value_names = ["NAME", "ARGS"], num_args = 1..=2)]
    pub command_call: Option<Vec<String>>,
    /// Reply deadline in milliseconds for an event or command (default: the hook's
    /// subscription, else 30000)
    #[arg(long = "deadline-ms")]
    pub deadline_ms: Option<u64>,
}

#[derive(Debug, Parser)]
#[command(
    name = "pi hooks",
    about = "List the hooks pi would load, with their state and subscriptions"
)]
pub struct HooksArgs {
    /// Also load this hook (repeatable)
    #[arg(long = "hook", value_name = "CMD")]
    pub hooks: Vec<String>,
    /// Also list the Claude Code hooks of this settings.json (repeatable)
    #[arg(long = "claude-hooks", value_name = "FILE")]
    pub claude_hooks: Vec<std::path::PathBuf>,
    /// Skip hooks from settings, the hooks directory and the project
    #[arg(long = "no-hooks")]
    pub no_hooks: bool,
    /// Trust this project: list its hooks (`.pi/settings.json`, `.pi/hooks/`) too
    #[arg(short = 'a', long = "approve")]
    pub approve: bool,
}

fn context(cwd: &Path) -> HostContext {
    let mut ctx = HostContext::new(cwd.to_path_buf(), "print");
    ctx.capabilities = host::capabilities("print");
    ctx
}

/// A started hook, what it reports, how long it took, and the providers it registered while
/// starting.
type Started = (
    Arc<HookInstance>,
    mpsc::UnboundedReceiver<Notice>,
    Duration,
    HookProviders,
);

pub(super) async fn start_one(
    spec: HookSpec,
    cwd: &Path,
) -> Result<Started, crate::hooks::instance::StartError> {
    let (tx, rx) = mpsc::unbounded_channel();
    let calls = Arc::new(HostCalls::new("print", cwd.to_path_buf()));
    let t0 = Instant::now();
    let ctx = context(cwd);
    let providers = ctx.providers.clone();
    let h = HookInstance::start(spec, ctx, calls, tx).await?;
    Ok((h, rx, t0.elapsed(), providers))
}

/// The Claude Code hooks `pi hooks` lists: as a run would gather them (a trusted project's
/// too), named as a run names them.
pub fn claude_specs(
    args: &HooksArgs,
    settings: &crate::config::Settings,
    agent_dir: &Path,
    cwd: &Path,
    trusted: bool,
) -> anyhow::Result<Vec<ClaudeSpec>> {
    let policy = crate::config::managed::ManagedPolicy::load(&crate::config::SystemEnv)?;
    let mut plan = claude::sources::first_phase(
        &args.claude_hooks,
        args.no_hooks,
        settings,
        agent_dir,
        cwd,
        &policy,
    )?;
    if trusted && !args.no_hooks {
        let file = cwd.join(".pi").join("settings.json");
        if file.is_file() {
            let project = crate::config::Settings::load(&file, None)?;
            let (grant, unreadable) = settings.project_grant_or_none(cwd);
            plan.warnings.extend(unreadable);
            let p = claude::sources::project(
                &project,
                cwd,
                &policy,
                &grant,
                plan.strict_exit.as_ref(),
            )?;
            plan.specs.extend(p.specs);
            plan.warnings.extend(p.warnings);
        }
    }
    for w in &plan.warnings {
        term_eprintln!("Warning: {w}");
    }
    claude::config::assign_names(&mut plan.specs, &[]);
    Ok(plan.specs)
}

/// One Claude Code hook in `pi hooks`: where it is configured, what it runs, and what its
/// recorded runs cost (the agent directory's `claude-hooks-latency.json`; nothing is run).
fn print_claude(
    spec: &ClaudeSpec,
    recorded: &std::collections::BTreeMap<String, claude::latency::Runs>,
) {
    let source = match spec.source {
        HookSource::Cli => "--claude-hooks",
        other => other.as_str(),
    };
    term_println!("{}  ({source}: {})", spec.name, spec.origin);
    term_println!(
        "  event:         {} (pi: {})",
        spec.event.name(),
        spec.event.fires_at()
    );
    term_println!(
        "  matcher:       {}",
        spec.matcher_text
            .as_deref()
            .filter(|m| !m.is_empty())
            .unwrap_or("*")
    );
    term_println!("  command:       {}", spec.command_line());
    term_println!("  timeout:       {} s", spec.timeout.as_secs_f64());
    let fail = match spec.fail.unwrap_or_default() {
        crate::hooks::protocol::FailPolicy::Closed => "closed",
        crate::hooks::protocol::FailPolicy::Open => "open",
    };
    term_println!("  fail:          {fail}");
    if let Some(strict) = &spec.strict_exit {
        term_println!("  exit codes:    {}", strict.because());
    }
    if let Some(p) = &spec.plugin {
        term_println!("  plugin:        {} ({})", p.name, p.root.display());
    }
    if let Some(line) = claude_environment_line(spec) {
        term_println!("  environment:   {line}");
    }
    match recorded
        .get(&claude::latency::key(spec))
        .and_then(claude::latency::Runs::stats)
    {
        Some(s) => term_println!("  latency:       {s} (spawn + run, recorded)"),
        None => term_println!("  latency:       no runs recorded yet"),
    }
}

/// What of pi's environment a Claude Code hook asks for (names only, never values), and what
/// was withheld from it.
fn claude_environment_line(spec: &ClaudeSpec) -> Option<String> {
    let mut parts = Vec::new();
    if !spec.env_passthrough.is_empty() {
        parts.push(format!(
            "envPassthrough {}",
            spec.env_passthrough.join(", ")
        ));
    }
    if !spec.env.is_empty() {
        let names: Vec<&str> = spec.env.iter().map(|(k, _)| k.as_str()).collect();
        parts.push(format!("env sets {}", names.join(", ")));
    }
    if !spec.env_withheld.is_empty() {
        parts.push(format!(
            "withheld {} (the project's envPassthrough asks for it; add it to projectEnv in \
             your settings to pass it)",
            spec.env_withheld.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// What of pi's environment a hook is granted (names only, never values): its
/// `env_passthrough`, the names its `env` sets, and for a project hook the names the user's
/// `projectEnv` did not grant. `None` when it is granted nothing beyond the base variables.
fn environment_line(spec: &HookSpec) -> Option<String> {
    let mut parts = Vec::new();
    if !spec.env_passthrough.is_empty() {
        parts.push(format!(
            "env_passthrough {}",
            spec.env_passthrough.join(", ")
        ));
    }
    if !spec.env.is_empty() {
        let names: Vec<&str> = spec.env.iter().map(|(k, _)| k.as_str()).collect();
        parts.push(format!("env sets {}", names.join(", ")));
    }
    if !spec.env_refused.is_empty() {
        parts.push(format!(
            "not granted {} (the project's env_passthrough asks for it; add it to projectEnv \
             in your settings to pass it)",
            spec.env_refused.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

pub async fn list_hooks(
    args: &HooksArgs,
    specs: Vec<HookSpec>,
    claude_specs: Vec<ClaudeSpec>,
    cwd: &Path,
) -> anyhow::Result<i32> {
    let _ = args;
    if specs.is_empty() && claude_specs.is_empty() {
        term_println!("No hooks configured (settings `hooks` or `commandHooks`, ~/.pi/agent/hooks/, --hook or --claude-hooks).");
        return Ok(0);
    }

    let calls = Arc::new(HostCalls::new("print", cwd.to_path_buf()));
    let (tx, _rx) = mpsc::unbounded_channel();
    let mut code = 0;
    for spec in specs {
        // An extension says so: "hooks dir" would send people to ~/.pi/agent/hooks/.
        let source = match (&spec.extension, spec.source) {
            (Some(_), HookSource::Discovered) => "extensions dir".to_string(),
            (Some(_), other) => format!("{} extension", other.as_str()),
            (None, other) => other.as_str().to_string(),
        };
        let shown = spec.shown_path().display().to_string();
        let environment = environment_line(&spec);
        match HookInstance::start(spec, context(cwd), calls.clone(), tx.clone()).await {
            Ok(h) => {
                let reg = h.registration();
                let subs: Vec<String> = reg
                    .subscriptions
                    .iter()
                    .map(|s| match &s.tools {
                        Some(t) => format!("{}[{}]", s.event, t.join(",")),
                        None => s.event.clone(),
                    })
                    .collect();
                let tools: Vec<&str> = reg.tools.iter().map(|t| t.name.as_str()).collect();
                let lat = h.latency();
                term_println!("{}  ({source}: {shown})", h.name());
                term_println!("  state:         {}", h.state());
                term_println!(
                    "  subscriptions: {}",
                    if subs.is_empty() {
                        "-".into()
                    } else {
                        subs.join(", ")
                    }
                );
                term_println!(
                    "  tools:         {}",
                    if tools.is_empty() {
                        "-".into()
                    } else {
                        tools.join(", ")
                    }
                );
                term_println!(
                    "  latency:       p50 {} µs, p99 {} µs over {} replies",
                    lat.p50_us,
                    lat.p99_us,
                    lat.count
                );
                term_println!("  restarts:      {}", h.restarts());
                if let Some(line) = &environment {
                    term_println!("  environment:   {line}");
                }
                h.shutdown("pi hooks finished").await;
            }
            Err(e) => {
                term_println!("{shown}  ({source})\n  state:         failed to start: {e}");
                if let Some(line) = &environment {
                    term_println!("  environment:   {line}");
                }
                code = 1;
            }
        }
    }
    if !claude_specs.is_empty() {
        let recorded = crate::config::agent_dir(&crate::config::SystemEnv)
            .map(|d| claude::latency::load(&claude::latency::file_in(&d)))
            .unwrap_or_default();
        for spec in &claude_specs {
            print_claude(spec, &recorded);
        }
    }
    Ok(code)
}
