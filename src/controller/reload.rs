//! `reload`: read the settings and resources again and restart the hooks, as pi's `/reload`
//! does. The new hook generation (the hook list gathered again under the managed policy, a
//! trusted project's included) is started first; if it cannot start, or the settings cannot
//! be read, nothing changes. Then the old hooks get `session_shutdown {reason: "reload"}`, the
//! new ones `session_start {reason: "reload"}` and `resources_discover {reason: "reload"}`,
//! and the resources, tools, system prompt, compaction and retry settings are rebuilt. The
//! model, thinking level and queue modes stay as they are.

use serde_json::json;

use super::hooks::specs::{self, SpecsError};
use super::setup::{environment, retry_policy};
use super::{lock, ControllerError, Core, Place, SessionController};
use crate::config::managed::{ManagedError, ManagedPolicy};
use crate::config::{self, ConfigError, Settings, SystemEnv};
use crate::hooks::claude::{self, ClaudeSpec};
use crate::hooks::events::{AwaitedEvent, CollectEvent};
use crate::hooks::runner::Moment;
use crate::hooks::sources::SourceError;
use crate::hooks::spec::{HookSource, HookSpec};

/// Why `reload` changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Managed(#[from] ManagedError),
    #[error(transparent)]
    Sources(#[from] SourceError),
    #[error(transparent)]
    ClaudeHooks(#[from] claude::config::ClaudeConfigError),
    /// A ConfigChange hook refused a changed file: the configuration in effect stays.
    #[error("hook {hook} refused the change to {file}: {reason}; the configuration in effect is unchanged")]
    Refused {
        hook: String,
        file: String,
        reason: String,
    },
}

impl From<SpecsError> for ReloadError {
    fn from(e: SpecsError) -> Self {
        match e {
            SpecsError::Managed(m) => ReloadError::Managed(m),
            SpecsError::Source(s) => ReloadError::Sources(s),
        }
    }
}

impl Core {
    /// The settings and hook specs as start-up would gather them now for `place`.
    pub(super) fn gather(
        &self,
        place: &Place,
    ) -> Result<(Settings, Vec<HookSpec>, Vec<ClaudeSpec>), ReloadError> {
        let fixed = &self.fixed;
        let options = &fixed.options;
        let global = Settings::load(&config::settings_path(&fixed.agent_dir), None)?;
        for w in global.warnings() {
            term_eprintln!("Warning: {w}");
        }
        let policy = ManagedPolicy::load(&SystemEnv)?;
        let plan = specs::specs_with_policy(
            &options.hooks,
            options.no_hooks,
            &global,
            &fixed.agent_dir,
            &place.cwd,
            &policy,
        )?;
        let mut warnings = plan.warnings;
        let mut hook_specs = plan.specs;
        let claude_plan = claude::sources::first_phase(
            &options.claude_hooks,
            options.no_hooks,
            &global,
            &fixed.agent_dir,
            &place.cwd,
            &policy,
        )?;
        warnings.extend(claude_plan.warnings);
        let mut claude_specs = claude_plan.specs;
        let claude_plan_strict = claude_plan.strict_exit;
        let settings = if place.trusted {
            let file = place.cwd.join(".pi").join("settings.json");
            let project_path = file.is_file().then_some(file.as_path());
            let merged = Settings::load(&config::settings_path(&fixed.agent_dir), project_path)?;
            let project = match project_path {
                Some(p) => Settings::load(p, None)?,
                None => Settings::from_value(serde_json::Value::Null),
            };
            warnings.extend(project.warnings().iter().cloned());
            if !options.no_hooks {
                let managed: Vec<&HookSpec> = hook_specs
                    .iter()
                    .filter(|s| s.source == HookSource::Managed)
                    .collect();
                let (grant, unreadable) = merged.project_grant_or_none(&place.cwd);
                warnings.extend(unreadable);
                let extra = specs::admit(
                    &policy,
                    &managed,
                    specs::project_specs_granted(&project, &place.cwd, &grant)?,
                    &mut warnings,
                );
                warnings.extend(specs::refused_env_warnings(&extra, &grant));
                hook_specs.extend(extra);
                let project_claude = claude::sources::project(
                    &project,
                    &place.cwd,
                    &policy,
                    &grant,
                    claude_plan_strict.as_ref(),
                )?;
                warnings.extend(project_claude.warnings);
                claude_specs.extend(project_claude.specs);
            }
            merged
        } else {
            global
        };
        for w in warnings {
            term_eprintln!("Warning: {w}");
        }
        Ok((settings, hook_specs, claude_specs))
    }

    /// Asks the ConfigChange hooks about each configuration file changed since it was read,
    /// in order, until one refuses (a change to the managed policy cannot be refused).
    async fn config_changes(&self) -> Result<(), ReloadError> {
        let runner = self.runner();
        if !runner.any_at(Moment::ConfigChange) {
            return Ok(());
        }
        let changed = lock(&self.env).config_files.changed();
        for (source, path) in changed {
            let file = path.display().to_string();
            let payload = json!({"source": source.as_str(), "file_path": file});
            let verdict = runner.moment(Moment::ConfigChange, &payload).await;
            if let Some((hook, reason)) = verdict.blocked {
                return Err(ReloadError::Refused { hook, file, reason });
            }
        }
        Ok(())
    }

    async fn reload(&self) -> Result<(), ControllerError> {
        let _agent = self.exclusive().await;
        self.config_changes().await?;
        let place = self.place();
        let (settings, hook_specs, claude_specs) = self.gather(&place)?;
        let (id, file) = {
            let s = self.session.lock();
            (
                s.id().to_string(),
                s.path().map(|p| p.display().to_string()),
            )
        };
        // The built-ins the loadout offers stay registered.
        let offered = self
            .handle
            .tools()
            .offered_names(self.handle.active_tools().as_deref());
        let (generation, shell) = self
            .start_generation(
                hook_specs,
                claude_specs,
                (&id, file),
                &place.cwd,
                &settings,
                &offered,
            )
            .await?;
        self.runner()
            .awaited(AwaitedEvent::SessionShutdown, json!({"reason": "reload"}))
            .await;
        let old = self.install(generation);
        self.runner()
            .awaited(AwaitedEvent::SessionStart, json!({"reason": "reload"}))
            .await;
        self.rediscover(settings, shell, "reload").await;
        self.retire(old, None, "reload").await;
        Ok(())
    }

    /// `resources_discover` to the current hooks, then the resources, the user's shell, the
    /// system prompt and the retry policy rebuilt for the current place (a reload, or a move
    /// into another project's session).
    pub(super) async fn rediscover(
        &self,
        settings: Settings,
        shell: crate::tools::shell_env::ShellEnvironment,
        reason: &str,
    ) {
        let place = self.place();
        let runner = self.runner();
        let discovered = runner
            .collect(
                CollectEvent::ResourcesDiscover,
                json!({"cwd": place.cwd.display().to_string(), "reason": reason}),
            )
            .await;
        let refused = super::resources::refused_instructions(
            &runner,
            &self.fixed.options,
            &self.fixed.agent_dir,
            &place.cwd,
            place.trusted,
        )
        .await;
        let env = environment(&self.fixed, &place, settings, shell, &discovered, &refused);
        let system_prompt = env.resources.system_prompt(
            &self.handle.tools(),
            self.handle.active_tools().as_deref(),
            &place.cwd,
        );
        let retry = retry_policy(&env.settings);
        self.handle.update_config(|c| {
            c.system_prompt = system_prompt;
            c.retry = retry;
            c.cwd = place.cwd.clone();
        });
        *lock(&self.env) = std::sync::Arc::new(env);
    }
}

impl SessionController {
    /// `reload`: see the module comment.
    pub async fn reload(&self) -> Result<(), ControllerError> {
        self.core.reload().await
    }
}
