//! The model scope and the user's saved defaults: which models Ctrl+P (and RPC's
//! `cycle_model`) goes through, forward or back, as pi 1.6 cycles them (a scoped model's
//! `:thinking` level comes with it); and saving the default model, thinking level and scope in
//! the user's `settings.json` (`defaultProvider`/`defaultModel`, `defaultThinkingLevel`,
//! `enabledModels`), which pi reads at its next start.

use serde_json::json;

use super::{lock, ControllerError, CycledModel, ModelInfo, SessionController};
use crate::config::settings_file::set_keys;
use crate::config::ScopedModel;
use crate::provider::ThinkingLevel;

/// The index after (or before) `at` in a cycle of `len`, as pi 1.6 steps: from outside the
/// cycle to its first (or last) entry; `None` when there is nowhere else to go.
fn next_index(at: Option<usize>, len: usize, forward: bool) -> Option<usize> {
    match at {
        _ if len == 0 => None,
        None => Some(if forward { 0 } else { len - 1 }),
        Some(_) if len == 1 => None,
        Some(i) if forward => Some((i + 1) % len),
        Some(i) => Some((i + len - 1) % len),
    }
}

impl SessionController {
    /// The scope Ctrl+P cycles through; empty when it is every model with auth.
    pub fn scoped_models(&self) -> Vec<ScopedModel> {
        lock(&self.core.scope).clone()
    }

    /// Replaces the scope for the rest of the run (`/scoped-models`).
    pub fn set_scoped_models(&self, scope: Vec<ScopedModel>) {
        *lock(&self.core.scope) = scope;
    }

    /// `cycle_model`: the next model of the scope (of every model with auth when there is no
    /// scope) after the current one, or the one before it; `None` when there is no other.
    pub fn cycle_model_towards(
        &self,
        forward: bool,
    ) -> Result<Option<CycledModel>, ControllerError> {
        let current = self.core.handle.config().model;
        let registry = self.core.registry();
        let scope = self.scoped_models();
        let is_scoped = !scope.is_empty();
        let cycle: Vec<ScopedModel> = if is_scoped {
            // Only the scope's models that can be used now.
            let listed: Vec<(String, String)> = registry
                .listed()
                .map(|(p, m)| (p.name.clone(), m.id.clone()))
                .collect();
            scope
                .into_iter()
                .filter(|s| listed.iter().any(|(p, id)| *p == s.provider && *id == s.id))
                .collect()
        } else {
            registry
                .listed()
                .map(|(p, m)| ScopedModel {
                    provider: p.name.clone(),
                    id: m.id.clone(),
                    thinking: None,
                })
                .collect()
        };
        let at = cycle
            .iter()
            .position(|s| s.provider == current.provider && s.id == current.id);
        let Some(next) = next_index(at, cycle.len(), forward).map(|i| &cycle[i]) else {
            return Ok(None);
        };
        let model = self.core.set_model(&next.provider, &next.id, "cycle")?;
        if let Some(level) = next.thinking {
            self.core.set_thinking(level);
        }
        Ok(Some(CycledModel {
            model,
            thinking_level: self.core.handle.config().thinking.as_str().into(),
            is_scoped,
        }))
    }

    fn user_settings(&self) -> std::path::PathBuf {
        self.core.fixed.agent_dir.join("settings.json")
    }

    /// The default model as the settings say now (`defaultProvider`, `defaultModel`).
    pub fn default_model(&self) -> Option<(String, String)> {
        let obj = crate::config::settings_file::read_object(&self.user_settings()).ok()?;
        let s = |k: &str| obj.get(k).and_then(|v| v.as_str()).map(String::from);
        Some((s("defaultProvider")?, s("defaultModel")?))
    }

    /// The default thinking level as the settings say now (`defaultThinkingLevel`).
    pub fn default_thinking_level(&self) -> Option<ThinkingLevel> {
        let obj = crate::config::settings_file::read_object(&self.user_settings()).ok()?;
        obj.get("defaultThinkingLevel")
            .and_then(|v| v.as_str())
            .and_then(ThinkingLevel::parse)
    }

    /// The model of the next model call on, and the default of the next start (pi's "set as
    /// default"); a non-empty scope gains it, as in pi 1.6.
    pub fn set_default_model(
        &self,
        provider: &str,
        model_id: &str,
    ) -> Result<ModelInfo, ControllerError> {
        let info = self.set_model(provider, model_id)?;
        set_keys(
            &self.user_settings(),
            &[
                ("defaultProvider", Some(json!(info.provider))),
                ("defaultModel", Some(json!(info.id))),
            ],
        )?;
        let mut scope = lock(&self.core.scope);
        if !scope.is_empty()
            && !scope
                .iter()
                .any(|s| s.provider == info.provider && s.id == info.id)
        {
            scope.push(ScopedModel {
                provider: info.provider.clone(),
                id: info.id.clone(),
                thinking: None,
            });
        }
        Ok(info)
    }

    /// The thinking level from now on (clamped to the model), and the requested level as the
    /// default of the next start (`defaultThinkingLevel`).
    pub fn set_default_thinking_level(
        &self,
        level: ThinkingLevel,
    ) -> Result<ThinkingLevel, ControllerError> {
        let set = self.set_thinking_level(level);
        set_keys(
            &self.user_settings(),
            &[("defaultThinkingLevel", Some(json!(level.as_str())))],
        )?;
        Ok(set)
    }

    /// Saves the scope as `enabledModels` (`provider/id` each, as pi 1.6 saves it); an empty
    /// scope removes the key (every model cycles).
    pub fn save_scoped_models(&self) -> Result<(), ControllerError> {
        let scope = self.scoped_models();
        let value = (!scope.is_empty())
            .then(|| json!(scope.iter().map(ScopedModel::reference).collect::<Vec<_>>()));
        set_keys(&self.user_settings(), &[("enabledModels", value)])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::next_index;

    #[test]
    fn the_cycle_steps_both_ways_and_wraps() {
        assert_eq!(next_index(Some(0), 3, true), Some(1));
        assert_eq!(next_index(Some(2), 3, true), Some(0));
        assert_eq!(next_index(Some(0), 3, false), Some(2));
        // From a model outside the scope: its first, or going back its last.
        assert_eq!(next_index(None, 3, true), Some(0));
        assert_eq!(next_index(None, 3, false), Some(2));
        assert_eq!(next_index(Some(0), 1, true), None);
        assert_eq!(next_index(None, 0, true), None);
    }
}
