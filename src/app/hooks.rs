//! Loading this run's hooks: gather specs from every source in load order, start them, and
//! build the runner, the bridge the agent calls, and the hook-registered tools.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::agent::events::AgentEvent;
use crate::config::Settings;
use crate::hooks::calls::HostCalls;
use crate::hooks::host::{self, HookTool, InstanceEndpoint};
use crate::hooks::instance::{HookInstance, HostContext};
use crate::hooks::runner::{Endpoint, Runner};
use crate::hooks::sources::{self, SourceError};
use crate::hooks::spec::{HookSource, HookSpec};
use crate::tools::Tool;

/// Every hook spec for this run, in load order: user settings, the hooks directory, then
/// `--hook`/`-e` in command-line order. `--no-hooks` drops the first two.
pub fn specs(
    cli_hooks: &[String],
    no_hooks: bool,
    settings: &Settings,
    agent_dir: &Path,
    cwd: &Path,
) -> Result<Vec<HookSpec>, SourceError> {
    let mut out = Vec::new();
    if !no_hooks {
        if let Some(list) = settings.get("hooks") {
            let file = agent_dir.join("settings.json").display().to_string();
            out.extend(sources::from_settings(list, &file, cwd, HookSource::User)?);
        }
        out.extend(sources::from_dir(
            &agent_dir.join("hooks"),
            HookSource::Discovered,
        )?);
    }
    for c in cli_hooks {
        out.push(sources::from_command(c, cwd, HookSource::Cli)?);
    }
    Ok(out)
}

pub struct LoadedHooks {
    pub instances: Vec<Arc<HookInstance>>,
    pub runner: Arc<Runner>,
    pub calls: Arc<HostCalls>,
}

impl LoadedHooks {
    /// Tools registered by hooks, in load order; between hooks the first registration of a
    /// name wins (the later one is reported).
    pub fn tools(&self, warnings: &mut Vec<String>) -> Vec<Arc<dyn Tool>> {
        let mut seen: Vec<String> = Vec::new();
        let mut out: Vec<Arc<dyn Tool>> = Vec::new();
        for h in &self.instances {
            for decl in h.registration().tools {
                if seen.contains(&decl.name) {
                    warnings.push(format!(
                        "hook {} registers tool {:?}, already registered by an earlier hook; ignored",
                        h.name(),
                        decl.name
                    ));
                    continue;
                }
                seen.push(decl.name.clone());
                out.push(Arc::new(HookTool::new(decl, h)));
            }
        }
        out
    }

    /// The first command-line flag no hook registered, if any.
    pub fn unclaimed_flag<'a>(&self, flags: &'a [(String, serde_json::Value)]) -> Option<&'a str> {
        flags.iter().map(|(n, _)| n.as_str()).find(|n| {
            !self
                .instances
                .iter()
                .any(|h| h.registration().flags.iter().any(|f| f.name == *n))
        })
    }

    /// One line per hook: replies, p50/p99 round trip, restarts, state.
    pub fn latency_report(&self) -> Vec<String> {
        self.instances
            .iter()
            .map(|h| {
                let l = h.latency();
                format!(
                    "hook {}: {} replies, p50 {} µs, p99 {} µs, {} restart(s), {}",
                    h.name(),
                    l.count,
                    l.p50_us,
                    l.p99_us,
                    h.restarts(),
                    h.state()
                )
            })
            .collect()
    }

    pub async fn shutdown(&self, reason: &str) {
        host::shutdown_all(&self.instances, reason).await;
    }
}

/// If `prompt` is `/name args` and a hook registered command `name`, run it: its `text` goes to
/// stdout in print mode (stderr otherwise). `None` when no hook command matches; otherwise
/// whether it succeeded.
pub async fn run_command(loaded: &LoadedHooks, prompt: &str, print: bool) -> Option<bool> {
    let rest = prompt.strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let hook = loaded
        .instances
        .iter()
        .find(|h| h.registration().commands.iter().any(|c| c.name == name))?;
    match hook
        .command(name, args.trim(), hook.spec().event_timeout)
        .await
    {
        Ok(v) => {
            if let Some(text) = v.get("text").and_then(serde_json::Value::as_str) {
                if print {
                    println!("{text}");
                } else {
                    eprintln!("{text}");
                }
            }
            Some(true)
        }
        Err(e) => {
            eprintln!("Error: /{name} failed: {e}");
            Some(false)
        }
    }
}

/// Start the hooks. Errors are the user-facing reason a requested hook could not start.
pub async fn load(
    specs: Vec<HookSpec>,
    ctx: HostContext,
    events: mpsc::UnboundedSender<AgentEvent>,
) -> Result<(LoadedHooks, Vec<String>), crate::hooks::instance::StartError> {
    let calls = Arc::new(HostCalls::new(ctx.mode.clone(), ctx.cwd.clone()));
    let (ntx, nrx) = mpsc::unbounded_channel();
    host::forward_notices(nrx, events.clone());
    let (instances, warnings) = host::start_all(specs, ctx, calls.clone(), ntx).await?;
    let endpoints: Vec<Arc<dyn Endpoint>> = instances
        .iter()
        .map(|i| Arc::new(InstanceEndpoint(i.clone())) as Arc<dyn Endpoint>)
        .collect();
    let runner = Arc::new(Runner::new(endpoints, Some(events)));
    Ok((
        LoadedHooks {
            instances,
            runner,
            calls,
        },
        warnings,
    ))
}
