//! The session boundary every replacement goes through (new, switch, fork, clone) and the hook
//! generations that come with it: the old hook processes get `session_shutdown` and are
//! stopped, new ones that see the new session's id and file in `hello` (and
//! `PI_SESSION_ID`) get `session_start` — as the seeds describe a replacement.
//!
//! The new generation is started before anything changes: if a hook cannot start, the
//! operation fails and the old session and hooks stay as they were. The swap from the old
//! runner to the new one is a single assignment, so there is never a moment where a tool
//! call is gated without the managed hooks. The hook whose own command asked for the
//! replacement is answered first: its old process is kept until that command has returned,
//! then stopped (its successor is already running).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;

use super::setup::attach;
use super::{lock, tools, ControllerError, Core, HookSet, SwitchOutcome};
use crate::hooks::calls::SessionControl;
use crate::hooks::events::AwaitedEvent;
use crate::hooks::instance::HookInstance;
use crate::session::Session;
use crate::tools::ToolRegistry;

/// A started generation with the tools it brings, ready to be installed.
pub(super) struct Generation {
    set: HookSet,
    tools: Arc<ToolRegistry>,
}

impl Core {
    /// Start the hooks of `specs` for the session `session_id` / `session_file`, working in
    /// `cwd`, and build the tool registry over them. Nothing of the running controller changes.
    pub(super) async fn start_generation(
        &self,
        specs: Vec<crate::hooks::spec::HookSpec>,
        claude: Vec<crate::hooks::claude::ClaudeSpec>,
        (session_id, session_file): (&str, Option<String>),
        cwd: &Path,
        settings: &crate::config::Settings,
        restored_builtins: &[String],
    ) -> Result<(Generation, crate::tools::shell_env::ShellEnvironment), ControllerError> {
        let mut ctx = self.hooks().context().clone();
        ctx.session_id = Some(session_id.to_string());
        ctx.session_file = session_file;
        ctx.cwd = cwd.to_path_buf();
        let (mut set, mut warnings) = HookSet::start(specs, ctx, self.events.clone()).await?;
        set.add_claude(claude);
        let hook_tools = set.tools(&mut warnings);
        for w in &warnings {
            term_eprintln!("Warning: {w}");
        }
        let credential_vars = tools::credential_vars(&self.registry(), self.fixed.mcp.as_ref());
        let built = tools::build(
            &self.fixed.options,
            settings,
            &credential_vars,
            hook_tools,
            self.fixed.mcp.as_ref(),
            restored_builtins,
        );
        let (registry, shell) = match built {
            Ok(b) => b,
            Err(e) => {
                set.shutdown("startup failed").await;
                return Err(e.into());
            }
        };
        set.attach_shell(&shell);
        set.claude.set_idle_after(settings);
        Ok((
            Generation {
                set,
                tools: Arc::new(registry),
            },
            shell,
        ))
    }

    /// Make `next` the current generation: host calls attached, the agent's tools, system
    /// prompt and hook points switched to it. Returns the generation it replaced.
    pub(super) fn install(&self, next: Generation) -> Arc<HookSet> {
        let control: std::sync::Weak<dyn SessionControl> = self.me.clone();
        attach(
            &next.set,
            &self.session,
            &self.handle,
            control,
            &self.fixed.ui,
            self.fixed.mcp.as_ref(),
            self.me.clone(),
        );
        let system_prompt = self.env().resources.system_prompt(
            &next.tools,
            self.handle.active_tools().as_deref(),
            &self.place().cwd,
        );
        self.handle.set_tools(next.tools);
        self.handle
            .update_config(|c| c.system_prompt = system_prompt);
        self.current_hooks.set(next.set.agent_hooks());
        std::mem::replace(&mut *lock(&self.hooks), Arc::new(next.set))
    }

    /// Stop the processes of an old generation — except the hook whose command is running and
    /// asked for this (`caller`), which is stopped when its command returns.
    pub(super) async fn retire(&self, old: Arc<HookSet>, caller: Option<&str>, reason: &str) {
        let running = lock(&self.command).clone();
        let keep = |h: &Arc<HookInstance>| {
            running.as_ref().is_some_and(|r| Arc::ptr_eq(r, h))
                && caller.is_some_and(|c| c == h.name())
        };
        let (kept, stop): (Vec<_>, Vec<_>) = old.instances.iter().cloned().partition(keep);
        lock(&self.retired).extend(kept);
        tokio::join!(
            crate::hooks::host::shutdown_all(&stop, reason),
            old.claude.shutdown()
        );
    }

    /// The boundary: the next generation started, `session_shutdown` to the old one, the swap
    /// (and the agent's context from the new session unless `restore` is false), the new
    /// generation installed, `session_start` to it, the old one stopped. `to` is the project
    /// the next session works in when it is not the current one (pi 1.6 rebuilds its runtime
    /// there): its trust is decided first, its settings and hooks are the next generation's,
    /// and its resources are discovered after `session_start`. The caller holds the agent.
    pub(super) async fn replace_session(
        &self,
        mut next: Session,
        reason: &str,
        restore: bool,
        caller: Option<&str>,
        to: Option<PathBuf>,
    ) -> Result<SwitchOutcome, ControllerError> {
        // The run's confinement carries over to every session it continues in.
        next.set_sessions_root(self.session.lock().sessions_root().map(Path::to_path_buf));
        let new_file = next.path().map(|p| p.display().to_string());
        let new_id = next.id().to_string();
        let old = self.hooks();
        let place = match to {
            Some(cwd) => Arc::new(self.place_for(cwd).await),
            None => self.place(),
        };
        let moved = place != self.place();
        let (settings, specs, claude) = if moved {
            self.gather(&place)?
        } else {
            (self.env().settings.clone(), old.specs(), old.claude_specs())
        };
        let builtins = super::loadout::restored_builtins(&next, &self.fixed.options);
        let (generation, shell) = self
            .start_generation(
                specs,
                claude,
                (&new_id, new_file.clone()),
                &place.cwd,
                &settings,
                &builtins,
            )
            .await?;
        old.runner
            .awaited(
                AwaitedEvent::SessionShutdown,
                json!({"reason": reason, "target_session_file": new_file}),
            )
            .await;
        let previous = self.session.replace(next);
        let old_file = previous.path().map(|p| p.display().to_string());
        drop(previous);
        if moved {
            *lock(&self.place) = place.clone();
            self.handle.update_config(|c| c.cwd = place.cwd.clone());
        }
        if restore {
            self.reload_agent();
        }
        // Before `session_start`, which hooks may narrow the tools in.
        self.start_loadout(&generation.tools);
        let old = self.install(generation);
        // Before `session_start`: the new generation hears of it and sees it from there on.
        self.restore_model(reason);
        self.runner()
            .awaited(
                AwaitedEvent::SessionStart,
                json!({"reason": reason, "previous_session_file": old_file}),
            )
            .await;
        if moved {
            self.rediscover(settings, shell, "startup").await;
        }
        self.retire(old, caller, reason).await;
        Ok(SwitchOutcome {
            cancelled: false,
            session_file: new_file,
            session_id: Some(new_id),
        })
    }
}
