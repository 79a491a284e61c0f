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
    /// Replaces the registry by what `change` makes of it, under the lock, so two changes at
    /// once (a hook's and a login's) both stay; the model in use follows when its provider is
    /// `changed`. Nothing changes when `change` fails.
    pub(super) fn change_registry<T, E>(
        &self,
        changed: &str,
        change: impl FnOnce(&ModelRegistry) -> Result<(ModelRegistry, T), E>,
    ) -> Result<T, E> {
        let out = {
            let mut registry = self
                .fixed
                .registry
                .write()
                .unwrap_or_else(|p| p.into_inner());
            let (next, out) = change(&registry)?;
            *registry = Arc::new(next);
            out
        };
        let current = self.handle.config().model;
        if current.provider == changed {
            // A provider that no longer has the model keeps the one in use until another is chosen.
            let _ = self.refresh_model_credential(&current.provider, &current.id);
        }
        Ok(out)
    }
}

impl Late for LiveProviders {
    fn register(&self, r: &Registered) -> Result<Vec<String>, HookProviderError> {
        let Some(core) = self.core.upgrade() else {
            return Ok(Vec::new());
        };
        core.change_registry(&r.name, |current| {
            let mut next = current.clone();
            let from = format!("provider.register of hook {}", r.hook);
            next.add_provider(&from, &r.name, &r.entry, &r.env)?;
            let models = next
                .provider(&r.name)
                .map(|p| p.models.iter().map(|m| m.id.clone()).collect())
                .unwrap_or_default();
            Ok((next, models))
        })
    }

    fn unregister(&self, hook: &str, name: &str) -> bool {
        let Some(core) = self.core.upgrade() else {
            return false;
        };
        let removed = core.change_registry(name, |current| {
            let mut next = current.clone();
            let files =
                || ModelRegistry::load_shared(current.agent_dir(), current.shared_env()).ok();
            if next.remove_hook_provider(hook, name, files) {
                Ok((next, ()))
            } else {
                Err(())
            }
        });
        removed.is_ok()
    }
}
