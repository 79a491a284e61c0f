//! `provider.register` / `provider.unregister`: model providers from hooks, as pi's
//! `registerProvider(name, config)` queues them until the model registry exists. A hook sends
//! them while pi starts — before its `register` frame, so they are known before pi picks the
//! first model and `--model NAME/ID` can name one — and pi adds them to its registry once,
//! right before that choice; from then on both calls are `unavailable`.
//!
//! Each entry is checked as one `models.json` provider entry (the same code reads both), so a
//! hook cannot configure what the file could not; keys and headers keep models.json's value
//! grammar and stay with pi: the answer never echoes them, and header values read from
//! `$VAR` or `!command` are redacted for `before_provider_headers` like the file's.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};

use super::calls::{err, str_param};
use super::protocol::CallError;
use crate::config::models::{apply_models_value, builtin_providers};

/// The methods served here.
pub const METHODS: &[&str] = &["provider.register", "provider.unregister"];

/// One registration: which hook, the provider's name and its models.json entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Registered {
    pub hook: String,
    pub name: String,
    pub entry: Value,
}

#[derive(Debug, Default)]
struct State {
    entries: Vec<Registered>,
    /// The first model was chosen: no more changes.
    closed: bool,
}

/// The providers hooks registered, shared by every clone of a host context.
#[derive(Debug, Clone, Default)]
pub struct HookProviders(Arc<Mutex<State>>);

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
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Serves one call of `hook`.
    pub fn handle(&self, hook: &str, method: &str, params: &Value) -> Result<Value, CallError> {
        match method {
            "provider.register" => self.register(hook, params),
            "provider.unregister" => self.unregister(hook, params),
            other => Err(err("unknown_method", format!("unknown method {other:?}"))),
        }
    }

    fn register(&self, hook: &str, params: &Value) -> Result<Value, CallError> {
        let name = provider_name(params)?;
        let mut entry: Map<String, Value> = params.as_object().cloned().unwrap_or_default();
        entry.remove("name");
        let entry = Value::Object(entry);
        let mut state = self.state();
        if state.closed {
            return Err(closed_error("provider.register"));
        }
        // Checked over the built-in providers and what hooks registered before, as the
        // registry will apply it.
        let mut providers = builtin_providers();
        let mut warnings = Vec::new();
        for r in &state.entries {
            let root = json!({"providers": {r.name.clone(): r.entry.clone()}});
            let _ = apply_models_value(
                Path::new(&origin(&r.hook)),
                root,
                &mut providers,
                &mut warnings,
            );
        }
        warnings.clear();
        let root = json!({"providers": {name: entry.clone()}});
        apply_models_value(
            Path::new(&origin(hook)),
            root,
            &mut providers,
            &mut warnings,
        )
        .map_err(|e| err("invalid_params", e.to_string()))?;
        if !warnings.is_empty() {
            return Err(err("invalid_params", warnings.join("; ")));
        }
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
        });
        Ok(value)
    }

    fn unregister(&self, hook: &str, params: &Value) -> Result<Value, CallError> {
        let name = provider_name(params)?;
        let mut state = self.state();
        if state.closed {
            return Err(closed_error("provider.unregister"));
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

    #[test]
    fn registers_checks_unregisters_and_closes() {
        let p = HookProviders::default();
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
