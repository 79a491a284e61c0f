//! Providers hooks register or take back after start-up (`provider.register` and
//! `provider.unregister` once the first model is chosen), as the seeds allow: each change
//! makes a new registry with the hook's entry applied under the same rules as at start-up, and
//! the next request (and the model list) sees it; the model in use is rebuilt when its
//! provider is the one that changed.

use std::sync::{Arc, Weak};

use super::Core;
use crate::config::hook_providers::HookProviderError;
use crate::config::ModelRegistry;
use crate::hooks::provider_calls::{Late, Registered};

/// The running registry, as hooks' late calls reach it (weakly: hooks never keep the core
/// alive).
pub(super) struct LiveProviders {
    pub core: Weak<Core>,
}

impl Core {
    /// Makes `next` the registry of the next request; the model in use follows when its
    /// provider is `changed`.
    pub(super) fn replace_registry(&self, next: ModelRegistry, changed: &str) {
        *self
            .fixed
            .registry
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Arc::new(next);
        let current = self.handle.config().model;
        if current.provider == changed {
            // A provider that no longer has the model keeps the one in use until another is chosen.
            let _ = self.refresh_model_credential(&current.provider, &current.id);
        }
    }
}

impl Late for LiveProviders {
    fn register(&self, r: &Registered) -> Result<Vec<String>, HookProviderError> {
        let Some(core) = self.core.upgrade() else {
            return Ok(Vec::new());
        };
        let mut next = (*core.registry()).clone();
        let from = format!("provider.register of hook {}", r.hook);
        next.add_provider(&from, &r.name, &r.entry, &r.env)?;
        let models = next
            .provider(&r.name)
            .map(|p| p.models.iter().map(|m| m.id.clone()).collect())
            .unwrap_or_default();
        core.replace_registry(next, &r.name);
        Ok(models)
    }

    fn unregister(&self, hook: &str, name: &str) -> bool {
        let Some(core) = self.core.upgrade() else {
            return false;
        };
        let current = core.registry();
        let mut next = (*current).clone();
        let files = || {
            let env = current.shared_env();
            ModelRegistry::load_shared(current.agent_dir(), env).ok()
        };
        if !next.remove_hook_provider(hook, name, files) {
            return false;
        }
        core.replace_registry(next, name);
        true
    }
}
