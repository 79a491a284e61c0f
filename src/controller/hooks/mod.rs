//! The controller's hooks: which specs a run loads ([`specs`]), the running set of one
//! generation ([`HookSet`]: instances, runner, host calls) and the agent's view of whichever
//! generation is current ([`CurrentHooks`]). Session replacement and `reload` start a new
//! generation and retire the old one (see `controller::replace`).

mod current;
pub mod specs;

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::agent::events::AgentEvent;
use crate::agent::hooks::{AgentHooks, NoHooks};
use crate::hooks::bridge::HookBridge;
use crate::hooks::calls::HostCalls;
use crate::hooks::claude::{ClaudeSet, ClaudeSpec};
use crate::hooks::host::{self, HookTool, InstanceEndpoint};
use crate::hooks::instance::{HookInstance, HostContext, StartError};
use crate::hooks::runner::{Endpoint, Runner};
use crate::hooks::spec::HookSpec;
use crate::tools::Tool;

pub use current::CurrentHooks;

/// One generation of running hooks: the processes in load order, the runner over them, and
/// the host-call handler they share. A generation is started whole and stopped whole.
pub struct HookSet {
    pub instances: Vec<Arc<HookInstance>>,
    pub runner: Arc<Runner>,
    pub calls: Arc<HostCalls>,
    /// The Claude Code command hooks of this generation (`hooks::claude`), in the runner
    /// beside the processes, in load order.
    pub claude: ClaudeSet,
    /// What every hook of this generation was told in `hello` (session id and file included).
    ctx: HostContext,
    events: mpsc::UnboundedSender<AgentEvent>,
}

impl HookSet {
    /// Start `specs` (see [`host::start_all`]). Errors are the user-facing reason a requested
    /// hook could not start, or (under `requiredHookFailure: "exit"`) why a required one
    /// could not; the warnings are for the user too.
    pub async fn start(
        specs: Vec<HookSpec>,
        ctx: HostContext,
        events: mpsc::UnboundedSender<AgentEvent>,
    ) -> Result<(HookSet, Vec<String>), StartError> {
        let calls = Arc::new(HostCalls::new(ctx.mode.clone(), ctx.cwd.clone()));
        let (ntx, nrx) = mpsc::unbounded_channel();
        host::forward_notices(nrx, events.clone());
        let (instances, warnings) = host::start_all(specs, ctx.clone(), calls.clone(), ntx).await?;
        for h in &instances {
            calls.record_source(&h.name(), h.spec().source);
            calls.record_instance(h);
        }
        let claude = ClaudeSet::new(calls.clone(), events.clone(), ctx.clone());
        let runner = runner_over(&instances, &claude, &events);
        Ok((
            HookSet {
                instances,
                runner,
                calls,
                claude,
                ctx,
                events,
            },
            warnings,
        ))
    }

    /// Start `specs` and add them after the hooks already running (a trusted project's, in
    /// the second phase of start-up); the runner is rebuilt over all of them in load order.
    pub async fn add(&mut self, specs: Vec<HookSpec>) -> Result<Vec<String>, StartError> {
        if specs.is_empty() {
            return Ok(Vec::new());
        }
        let (ntx, nrx) = mpsc::unbounded_channel();
        host::forward_notices(nrx, self.events.clone());
        let (started, warnings) =
            host::start_all(specs, self.ctx.clone(), self.calls.clone(), ntx).await?;
        for h in &started {
            self.calls.record_source(&h.name(), h.spec().source);
            self.calls.record_instance(h);
        }
        self.instances.extend(started);
        self.runner = runner_over(&self.instances, &self.claude, &self.events);
        Ok(warnings)
    }

    /// Add Claude Code command hooks after those already here (the runner orders them by
    /// source with the processes); their names are made unique among the generation's hooks.
    pub fn add_claude(&mut self, specs: Vec<ClaudeSpec>) {
        if specs.is_empty() {
            return;
        }
        let taken: Vec<String> = self.instances.iter().map(|h| h.name()).collect();
        self.claude.add(specs, &taken);
        self.runner = runner_over(&self.instances, &self.claude, &self.events);
    }

    /// The Claude Code hooks' specs, to start the next generation with.
    pub fn claude_specs(&self) -> Vec<ClaudeSpec> {
        self.claude.specs()
    }

    /// The model's shell environment (`shellEnvironment`), which Claude Code hooks run with.
    pub fn attach_shell(&self, shell: &crate::tools::shell_env::ShellEnvironment) {
        self.claude.attach_shell(Arc::new(shell.clone()));
    }

    /// The specs of this generation, in load order, to start the next one from.
    pub fn specs(&self) -> Vec<HookSpec> {
        self.instances.iter().map(|h| h.spec().clone()).collect()
    }

    pub fn context(&self) -> &HostContext {
        &self.ctx
    }

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

    /// The hook that registered command `name` (the first in load order).
    pub fn command_owner(&self, name: &str) -> Option<Arc<HookInstance>> {
        self.instances
            .iter()
            .find(|h| h.registration().commands.iter().any(|c| c.name == name))
            .cloned()
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

    /// The agent's hook points over this generation (nothing at all when it is empty, so a
    /// run without hooks pays nothing). `source` is the `input` event's source.
    pub fn agent_hooks(&self) -> Arc<dyn AgentHooks> {
        if self.runner.is_empty() {
            Arc::new(NoHooks)
        } else {
            Arc::new(HookBridge::new(self.runner.clone()))
        }
    }

    /// One line per hook: replies, p50/p99 round trip, restarts, state; for a Claude Code
    /// hook what its runs cost (spawn + run).
    pub fn latency_report(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .instances
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
            .collect();
        lines.extend(self.claude.latency_report());
        lines
    }

    pub async fn shutdown(&self, reason: &str) {
        tokio::join!(
            host::shutdown_all(&self.instances, reason),
            self.claude.shutdown()
        );
    }
}

/// The runner over a generation: hook processes and Claude Code hooks in load order (by
/// source class; within one, the processes first, each kind in its own order).
fn runner_over(
    instances: &[Arc<HookInstance>],
    claude: &ClaudeSet,
    events: &mpsc::UnboundedSender<AgentEvent>,
) -> Arc<Runner> {
    let mut endpoints: Vec<(crate::hooks::spec::HookSource, Arc<dyn Endpoint>)> = instances
        .iter()
        .map(|i| {
            (
                i.spec().source,
                Arc::new(InstanceEndpoint(i.clone())) as Arc<dyn Endpoint>,
            )
        })
        .collect();
    endpoints.extend(claude.endpoints());
    // Stable: the order within a source class is kept.
    endpoints.sort_by_key(|(source, _)| *source);
    let endpoints = endpoints.into_iter().map(|(_, e)| e).collect();
    Arc::new(Runner::new(endpoints, Some(events.clone())))
}
