//! The model, thinking level, queue modes and automatic behaviours: `set_model`,
//! `cycle_model`, `set_thinking_level`, `cycle_thinking_level`, `set_steering_mode`,
//! `set_follow_up_mode`, `set_auto_compaction`, `set_auto_retry`. A change applies from the
//! next model call (also during a run, as in pi), is recorded in the session
//! (`model_change`, `thinking_level_change`) so a resume continues with it, and is told to
//! hooks (`model_select`, `thinking_level_select`).

use serde_json::json;

use super::session_state;
use super::{
    lock, ControllerError, Core, CycledModel, ModelInfo, ModelRates, SessionController,
    ThinkingLevelOutcome,
};
use crate::agent::events::AgentEvent;
use crate::agent::QueueMode;
use crate::config::{ModelEntry, ModelRegistry, ProviderConfig};
use crate::hooks::events::NotifyEvent;
use crate::hooks::protocol::{HookModel, ModelCost};
use crate::provider::{Model, ThinkingLevel};

/// A catalog entry as pi's RPC shows a model.
pub(super) fn model_info(p: &ProviderConfig, m: &ModelEntry) -> ModelInfo {
    let cost = m.cost.clone().unwrap_or_default();
    let mut compat = p.compat.clone();
    crate::config::deep_merge(&mut compat, m.compat.clone());
    ModelInfo {
        id: m.id.clone(),
        name: m.name.clone(),
        api: p.model_api(m).to_string(),
        provider: p.name.clone(),
        base_url: p.base_url.clone(),
        reasoning: m.reasoning,
        input: m.input.clone(),
        context_window: m.context_window,
        max_tokens: m.max_tokens,
        cost: ModelRates {
            input: cost.input,
            output: cost.output,
            cache_read: cost.cache_read,
            cache_write: cost.cache_write,
        },
        compat: Some(compat).filter(|c| c.as_object().is_some_and(|o| !o.is_empty())),
    }
}

/// The thinking levels a model offers: only `off` without reasoning.
pub(super) fn available_levels(model: &Model) -> Vec<ThinkingLevel> {
    if model.reasoning {
        vec![
            ThinkingLevel::Off,
            ThinkingLevel::Minimal,
            ThinkingLevel::Low,
            ThinkingLevel::Medium,
            ThinkingLevel::High,
        ]
    } else {
        vec![ThinkingLevel::Off]
    }
}

/// `level`, or the highest level the model offers below it.
pub fn clamp(level: ThinkingLevel, model: &Model) -> ThinkingLevel {
    available_levels(model)
        .into_iter()
        .filter(|l| *l <= level)
        .max()
        .unwrap_or(ThinkingLevel::Off)
}

/// A model as hooks see it: pi's RPC fields, snake_case, no credentials.
pub(super) fn hook_model(m: &ModelInfo) -> HookModel {
    HookModel {
        provider: m.provider.clone(),
        id: m.id.clone(),
        name: Some(m.name.clone()).filter(|n| !n.is_empty()),
        api: m.api.clone(),
        base_url: Some(m.base_url.clone()).filter(|u| !u.is_empty()),
        reasoning: m.reasoning,
        input: m.input.clone(),
        context_window: Some(m.context_window).filter(|w| *w > 0),
        max_tokens: Some(m.max_tokens).filter(|t| *t > 0),
        cost: Some(ModelCost {
            input: m.cost.input,
            output: m.cost.output,
            cache_read: m.cost.cache_read,
            cache_write: m.cost.cache_write,
        }),
    }
}

/// `model` as pi's RPC shows it: its catalog entry, else what the run knows of it.
pub(super) fn info_in(registry: &ModelRegistry, model: Model) -> ModelInfo {
    match registry.find(&model.provider, &model.id) {
        Some((p, m)) => model_info(p, m),
        None => ModelInfo {
            id: model.id,
            name: model.name,
            api: model.api,
            provider: model.provider,
            base_url: model.base_url,
            reasoning: model.reasoning,
            input: vec!["text".into()],
            context_window: model.context_window,
            max_tokens: model.max_tokens,
            cost: ModelRates::default(),
            compat: None,
        },
    }
}

impl Core {
    /// The current model as pi's RPC shows it.
    pub(super) fn model_info(&self) -> ModelInfo {
        self.info_of(self.handle.config().model)
    }

    fn info_of(&self, model: Model) -> ModelInfo {
        info_in(&self.registry(), model)
    }

    /// The model in use rebuilt with the credential the registry has for it now.
    pub(super) fn refresh_model_credential(
        &self,
        provider: &str,
        id: &str,
    ) -> Result<ModelInfo, ControllerError> {
        self.change_model(provider, id, "set", false)
    }

    pub(super) fn set_model(
        &self,
        provider: &str,
        id: &str,
        source: &str,
    ) -> Result<ModelInfo, ControllerError> {
        self.change_model(provider, id, source, true)
    }

    /// The model of the next model call on; `record`: as a `model_change` entry (not when the
    /// session already says so, on a restore).
    fn change_model(
        &self,
        provider: &str,
        id: &str,
        source: &str,
        record: bool,
    ) -> Result<ModelInfo, ControllerError> {
        let registry = self.registry();
        let not_found = || ControllerError::ModelNotFound {
            provider: provider.to_string(),
            id: id.to_string(),
        };
        let (p, entry) = registry.find(provider, id).ok_or_else(not_found)?;
        let mut model = registry.build_model(p, entry)?;
        let previous = self.handle.config().model;
        // `--api-key` is the key of the provider the command line chose, not of every one.
        let cli_key = self
            .fixed
            .options
            .api_key
            .as_deref()
            .filter(|_| previous.provider == model.provider);
        let api_key = registry.require_api_key(&mut model, cli_key)?;
        let implementation = self.fixed.providers.get(&model.api).ok_or_else(|| {
            ControllerError::UnsupportedApi {
                model: model.id.clone(),
                api: model.api.clone(),
            }
        })?;
        let info = model_info(p, entry);
        if record {
            let _ = self
                .session
                .record(|s| s.append_model_change(&model.provider, &model.id));
        }
        let thinking = self.handle.config().thinking;
        self.handle.set_provider(implementation);
        self.handle.update_config(|c| {
            c.model = model;
            c.api_key = api_key;
        });
        // After the change: a hook that asks `model.get` on `model_select` sees the new model,
        // and one that starts from now on is told it in `hello`.
        self.hooks().context().model.set(Some(hook_model(&info)));
        // As pi: choosing the model already in use is no change to announce.
        if previous.provider != info.provider || previous.id != info.id {
            let previous = hook_model(&self.info_of(previous));
            self.runner().notify(NotifyEvent::ModelSelect, None, || {
                json!({"model": hook_model(&info), "previous_model": previous, "source": source})
            });
        }
        // The level stays what the user chose unless the new model cannot do it.
        let clamped = clamp(thinking, &self.handle.config().model);
        if clamped != thinking {
            self.set_thinking(clamped);
        }
        Ok(info)
    }

    pub(super) fn set_thinking(&self, level: ThinkingLevel) -> ThinkingLevel {
        self.change_thinking(level, true)
    }

    /// `record`: as a `thinking_level_change` entry — on a restore only when the model cannot
    /// do the session's level (then the session no longer says what is used).
    fn change_thinking(&self, requested: ThinkingLevel, record: bool) -> ThinkingLevel {
        let level = clamp(requested, &self.handle.config().model);
        let previous = self.handle.config().thinking;
        self.handle.update_config(|c| c.thinking = level);
        if level != previous {
            if record || level != requested {
                let _ = self
                    .session
                    .record(|s| s.append_thinking_level_change(level.as_str()));
            }
            self.runner().notify(
                NotifyEvent::ThinkingLevelSelect,
                None,
                || json!({"level": level.as_str(), "previous_level": previous.as_str()}),
            );
            self.emit(AgentEvent::ThinkingLevelChanged {
                level: level.as_str().into(),
            });
        }
        level
    }
}

impl Core {
    /// The model of the session the run now continues in (`reason`: `new`, `resume`, `fork`,
    /// …), as pi 1.6 picks it: a new session returns to the model the command line chose; a
    /// session resumed, forked or cloned keeps a model the command line named and otherwise
    /// brings its own. Its thinking level is restored too. Both are told to hooks
    /// (`model_select` with `source: "restore"`, `thinking_level_select`); the model is
    /// recorded only where the session does not say it already. A model pi cannot use now
    /// (unknown, no key) leaves the current one, with a warning in the log.
    pub(super) fn restore_model(&self, reason: &str) {
        let restored = session_state::restored(&self.session.lock());
        let current = self.handle.config().model;
        let cli = &self.fixed.command_line_model;
        let (target, record) = match restored.model {
            Some(m) if reason != "new" && !cli.named => ((m.provider, m.model_id), false),
            Some(m) if reason != "new" => {
                let differs = m.provider != cli.provider || m.model_id != cli.id;
                ((cli.provider.clone(), cli.id.clone()), differs)
            }
            _ => ((cli.provider.clone(), cli.id.clone()), true),
        };
        if target.0 != current.provider || target.1 != current.id {
            if let Err(e) = self.change_model(&target.0, &target.1, "restore", record) {
                tracing::warn!(provider = %target.0, model = %target.1, error = %e,
                    "the session's model was not restored");
            }
        }
        if let Some(level) = restored.thinking {
            self.change_thinking(level, false);
        }
    }
}

impl SessionController {
    /// `set_model {provider, modelId}`: the model of the next model call on.
    pub fn set_model(&self, provider: &str, model_id: &str) -> Result<ModelInfo, ControllerError> {
        self.core.set_model(provider, model_id, "set")
    }

    /// `cycle_model`: the next model of the scope (see [`Self::cycle_model_towards`]).
    pub fn cycle_model(&self) -> Result<Option<CycledModel>, ControllerError> {
        self.cycle_model_towards(true)
    }

    /// `set_thinking_level {level}`: clamped to what the model offers; returns the level set.
    pub fn set_thinking_level(&self, level: ThinkingLevel) -> ThinkingLevel {
        self.core.set_thinking(level)
    }

    /// `cycle_thinking_level`: the next level the model offers; `None` when it offers only
    /// `off`.
    pub fn cycle_thinking_level(&self) -> Option<ThinkingLevelOutcome> {
        let config = self.core.handle.config();
        let levels = available_levels(&config.model);
        if levels.len() <= 1 {
            return None;
        }
        let at = levels.iter().position(|l| *l == config.thinking);
        let next = levels[at.map_or(0, |i| (i + 1) % levels.len())];
        let level = self.core.set_thinking(next);
        Some(ThinkingLevelOutcome {
            level: level.as_str().into(),
        })
    }

    pub fn set_steering_mode(&self, mode: QueueMode) {
        self.core.handle.update_config(|c| c.steering_mode = mode);
    }

    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        self.core.handle.update_config(|c| c.follow_up_mode = mode);
    }

    /// `set_auto_compaction {enabled}`: the threshold and overflow compactions after runs.
    pub fn set_auto_compaction(&self, enabled: bool) {
        lock(&self.core.status).auto_compaction = enabled;
    }

    /// `set_auto_retry {enabled}`: retrying transient provider errors, from the next failure.
    pub fn set_auto_retry(&self, enabled: bool) {
        self.core
            .handle
            .update_config(|c| c.retry.enabled = enabled);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_the_model_cannot_do_falls_to_the_highest_it_can() {
        let mut m = crate::controller::tests::faux_model();
        assert_eq!(clamp(ThinkingLevel::High, &m), ThinkingLevel::Off);
        m.reasoning = true;
        assert_eq!(clamp(ThinkingLevel::Max, &m), ThinkingLevel::High);
        assert_eq!(clamp(ThinkingLevel::Low, &m), ThinkingLevel::Low);
    }
}
