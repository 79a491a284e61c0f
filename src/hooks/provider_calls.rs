//! `provider.register` / `provider.unregister`: model providers from hooks, as pi's
//! `registerProvider(name, config)` queues them until the model registry exists. A hook sends
//! them while pi starts — before its `register` frame, so they are known before pi picks the
//! first model and `--model NAME/ID` can name one — and pi adds them to its registry once,
//! right before that choice. After that a call goes to the running registry ([`Late`],
//! attached by the session controller) and takes effect for the next request, as the seeds
//! say; where nothing runs (`pi hook check`), later calls are `unavailable`.
//!
//! Each entry is checked as one `models.json` provider entry (the same code reads both), so a
//! hook cannot configure what the file could not, and under the rule of
//! `config::hook_providers`: its `$VAR`s resolve in the hook's own environment (never pi's), a
//! `!command` is refused, and it cannot point a provider whose key is the user's (or another
//! hook's) elsewhere without bringing its own key. The check runs over the providers the
//! registry will apply it to (the built-ins and the user's models.json, then earlier hooks'),
//! so what the hook is told is what happens. Keys and headers stay with pi: the answer never
//! echoes them, and header values read from `$VAR` are redacted for `before_provider_headers`
//! like the file's.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};

use super::calls::{err, str_param};
use super::protocol::CallError;
use crate::config::hook_providers::{apply_hook_provider, HookProviderError};
use crate::config::models::{builtin_providers, ProviderConfig};
use crate::config::ForeignEnv;

/// The methods served here.
pub const METHODS: &[&str] = &["provider.register", "provider.unregister"];

/// One registration: which hook, the provider's name, its models.json entry, and the hook's
/// environment its values resolve in.
#[derive(Debug, Clone, PartialEq)]
pub struct Registered {
    pub hook: String,
    pub name: String,
    pub entry: Value,
    pub env: Arc<ForeignEnv>,
}

/// The running registry, for registrations after start-up.
pub trait Late: Send + Sync {
    /// Applies `r` over the providers in use; the provider's model ids.
    fn register(&self, r: &Registered) -> Result<Vec<String>, HookProviderError>;
    /// Takes back what hook `hook` registered as `name`; false when it registered nothing so.
    fn unregister(&self, hook: &str, name: &str) -> bool;
}

struct State {
    /// What the entries apply over: the built-ins and the user's models.json.
    base: Vec<ProviderConfig>,
    entries: Vec<Registered>,
    /// The first model was chosen: changes go to `late`, when there is one.
    closed: bool,
    late: Option<Arc<dyn Late>>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("entries", &self.entries.len())
            .field("closed", &self.closed)
            .field("late", &self.late.is_some())
            .finish_non_exhaustive()
    }
}

/// The providers hooks registered, shared by every clone of a host context.
#[derive(Debug, Clone)]
pub struct HookProviders(Arc<Mutex<State>>);

/// Over the built-in providers only (`pi hook test`, `pi hook check`, `pi hooks`).
impl Default for HookProviders {
    fn default() -> Self {
        HookProviders::over(builtin_providers())
    }
}

fn closed_error(method: &str) -> CallError {
    err(
        "unavailable",
        format!(
            "{method}: providers can be changed only while pi starts, before it chooses the \
             first model (send it before `register`)"
        ),
    )
}

/// Where an entry's problems are said to come from.
fn origin(hook: &str) -> String {
    format!("provider.register of hook {hook}")
}

impl HookProviders {
    /// Registrations checked over `base`: the providers the run's registry holds before any
    /// hook's.
    pub fn over(base: Vec<ProviderConfig>) -> Self {
        HookProviders(Arc::new(Mutex::new(State {
            base,
            entries: Vec::new(),
            closed: false,
            late: None,
        })))
    }

    /// Where registrations go once the first model is chosen: the running registry. What a
    /// generation of hooks started after start-up (a `/reload`) registered while starting goes
    /// there now.
    pub fn attach(&self, late: Arc<dyn Late>) {
        let pending = {
            let mut state = self.state();
            state.late = Some(late.clone());
            if state.closed {
                Vec::new()
            } else {
                state.closed = true;
                std::mem::take(&mut state.entries)
            }
        };
        for r in pending {
            if let Err(e) = late.register(&r) {
                tracing::warn!(hook = %r.hook, provider = %r.name, "provider not added: {e}");
            }
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Serves one call of `hook`, whose values resolve in `env` (its own environment).
    pub fn handle(
        &self,
        hook: &str,
        method: &str,
        params: &Value,
        env: &Arc<ForeignEnv>,
    ) -> Result<Value, CallError> {
        match method {
            "provider.register" => self.register(hook, params, env),
            "provider.unregister" => self.unregister(hook, params),
            other => Err(err("unknown_method", format!("unknown method {other:?}"))),
        }
    }

    fn register(
        &self,
        hook: &str,
        params: &Value,
        env: &Arc<ForeignEnv>,
    ) -> Result<Value, CallError> {
        let name = provider_name(params)?;
        let mut entry: Map<String, Value> = params.as_object().cloned().unwrap_or_default();
        entry.remove("name");
        let entry = Value::Object(entry);
        let mut state = self.state();
        if state.closed {
            let Some(late) = state.late.clone() else {
                return Err(closed_error("provider.register"));
            };
            drop(state);
            let r = Registered {
                hook: hook.to_string(),
                name: name.to_string(),
                entry,
                env: env.clone(),
            };
            let models = late
                .register(&r)
                .map_err(|e| err("invalid_params", e.to_string()))?;
            return Ok(json!({"name": name, "models": models}));
        }
        // Checked over what the registry will hold when it applies it: the base, then what
        // hooks registered before.
        let mut providers = state.base.clone();
        for r in &state.entries {
            let from = origin(&r.hook);
            let _ =
                apply_hook_provider(&mut providers, &r.name, &r.entry, &r.env, Path::new(&from));
        }
        apply_hook_provider(&mut providers, name, &entry, env, Path::new(&origin(hook)))
            .map_err(|e| err("invalid_params", e.to_string()))?;
        let models: Vec<&str> = providers
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.models.iter().map(|m| m.id.as_str()).collect())
            .unwrap_or_default();
        let value = json!({"name": name, "models": models});
        state.entries.push(Registered {
            hook: hook.to_string(),
            name: name.to_string(),
            entry,
            env: env.clone(),
        });
        Ok(value)
    }

    fn unregister(&self, hook: &str, params: &Value) -> Result<Value, CallError> {
        let name = provider_name(params)?;
        let mut state = self.state();
        if state.closed {
            let Some(late) = state.late.clone() else {
                return Err(closed_error("provider.unregister"));
            };
            drop(state);
            return if late.unregister(hook, name) {
                Ok(json!({}))
            } else {
                Err(err(
                    "not_found",
                    format!("hook {hook} registered no provider {name:?}"),
                ))
            };
        }
        let before = state.entries.len();
        state
            .entries
            .retain(|r| !(r.hook == hook && r.name == name));
        if state.entries.len() == before {
            return Err(err(
                "not_found",
                format!("hook {hook} registered no provider {name:?}"),
            ));
        }
        Ok(json!({}))
    }

    /// The registrations, in the order they were made; from now on changes are refused.
    pub fn close(&self) -> Vec<Registered> {
        let mut state = self.state();
        state.closed = true;
        state.entries.clone()
    }
}

fn provider_name(params: &Value) -> Result<&str, CallError> {
    let name = str_param(params, "name")?;
    if name.is_empty() || name.contains('/') || name.chars().any(char::is_whitespace) {
        return Err(err(
            "invalid_params",
            format!("`name` must be a provider name without `/` or spaces, not {name:?}"),
        ));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> Value {
        json!({"name": name, "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
               "apiKey": "$TEAM_KEY", "models": [{"id": "m1"}, {"id": "m2"}]})
    }

    /// Serves calls as hooks whose environment holds `TEAM_KEY`.
    struct Calls(HookProviders);

    impl Calls {
        fn handle(&self, hook: &str, method: &str, params: &Value) -> Result<Value, CallError> {
            let env = Arc::new(ForeignEnv::hook(
                hook,
                [("TEAM_KEY".to_string(), "k".to_string())],
            ));
            self.0.handle(hook, method, params, &env)
        }

        fn close(&self) -> Vec<Registered> {
            self.0.close()
        }
    }

    #[test]
    fn registers_checks_unregisters_and_closes() {
        let p = Calls(HookProviders::default());
        let v = p.handle("h", "provider.register", &entry("team")).unwrap();
        assert_eq!(v, json!({"name": "team", "models": ["m1", "m2"]}));
        // Like a models.json entry: a custom provider needs a base URL, and a known api.
        let e = p
            .handle(
                "h",
                "provider.register",
                &json!({"name": "x", "api": "openai-completions",
                                                     "models": [{"id": "a"}]}),
            )
            .unwrap_err();
        assert_eq!(e.code, "invalid_params");
        assert!(e.message.contains("baseUrl"), "{}", e.message);
        let e = p
            .handle("h", "provider.register", &json!({"name": "y", "baseUrl": "http://x",
                                                     "api": "carrier-pigeon", "models": [{"id": "a"}]}))
            .unwrap_err();
        assert!(e.message.contains("unsupported api"), "{}", e.message);
        assert_eq!(
            p.handle("h", "provider.register", &json!({"name": "a/b"}))
                .unwrap_err()
                .code,
            "invalid_params"
        );
        // Only the hook that registered it can take it back.
        assert_eq!(
            p.handle("other", "provider.unregister", &json!({"name": "team"}))
                .unwrap_err()
                .code,
            "not_found"
        );
        p.handle("h", "provider.register", &entry("spare")).unwrap();
        p.handle("h", "provider.unregister", &json!({"name": "spare"}))
            .unwrap();
        let all = p.close();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].name, "team");
        assert!(all[0].entry.get("name").is_none());
        let e = p
            .handle("h", "provider.register", &entry("late"))
            .unwrap_err();
        assert_eq!(e.code, "unavailable");
    }
}
