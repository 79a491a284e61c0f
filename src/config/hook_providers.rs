//! A hook's `provider.register` entry applied over the providers the built-ins, the user's
//! models.json and earlier hooks configured — the one rule both the check while the hook
//! starts (`hooks::provider_calls`) and the registry apply, so what the hook is told is what
//! happens.
//!
//! The rule keeps the user's keys with the user's servers. A hook may add models to a provider
//! it does not own (they go to that provider's server with its key: nothing leaves). It may not
//! change where or how that provider's requests go — `baseUrl`, `api`, `headers`,
//! `authHeader`, `compat`, `modelOverrides`, a model's `headers` or `api` — unless it brings
//! its own `apiKey`: then the provider is the hook's from then on, and every credential of the
//! user's for it (auth.json, the conventional variable, models.json's `apiKey` and headers,
//! its models' headers) is dropped, so nothing of the user's reaches the hook's server. A
//! provider the hook defines under a new name is the hook's too, and never picks up the key
//! pi would read for that name. The hook's values resolve in its own environment only
//! ([`ForeignEnv`]) and never run a command.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::models::{apply_models_value, ProviderConfig};
use super::scope::{ForeignEnv, ForeignValueError};
use super::ConfigError;

/// What applying a hook's entry did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// A provider under a new name, the hook's.
    Defined,
    /// Models added to (or the hook's own provider changed by) a provider it may change.
    Extended,
    /// The hook brought its own key for a provider it did not own: now the hook's. `from`
    /// says whose it was (`None`: the built-ins' or the user's files').
    TookOver { from: Option<String> },
}

/// Why a hook's entry is refused.
#[derive(Debug, thiserror::Error)]
pub enum HookProviderError {
    #[error("provider \"{provider}\": `{field}`: {source}")]
    Value {
        provider: String,
        field: String,
        #[source]
        source: ForeignValueError,
    },
    #[error(
        "provider \"{provider}\" is {owner}, with {owner_key}: hook {hook} cannot change {} \
         without an `apiKey` of its own (adding models is fine); with one, the provider \
         becomes the hook's and none of those keys is sent to it",
        fields.join(", ")
    )]
    Redirect {
        hook: String,
        provider: String,
        owner: String,
        owner_key: String,
        fields: Vec<String>,
    },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("provider \"{provider}\": {source}")]
    OAuth {
        provider: String,
        #[source]
        source: crate::oauth::hook_flow::HookOAuthError,
    },
    #[error(
        "provider \"{provider}\": an `oauth` login is only for a provider the hook defines under \
         a new name (this one is {whose}); a login under this name would take the place of the \
         user's"
    )]
    OAuthNotOwn { provider: String, whose: String },
    /// What the file would only warn about (a skipped provider or model), refused here
    /// since the hook hears of it.
    #[error("{0}")]
    Warnings(String),
}

/// Applies `entry` (one models.json provider entry) of hook `env`'s under `name` over
/// `providers`; `origin` names it in errors. Nothing changes on an error.
pub fn apply_hook_provider(
    providers: &mut Vec<ProviderConfig>,
    name: &str,
    entry: &Value,
    env: &Arc<ForeignEnv>,
    origin: &Path,
) -> Result<Applied, HookProviderError> {
    let hook = match env.grantee() {
        super::scope::Grantee::Hook(h) => h.clone(),
        super::scope::Grantee::Project { .. } => String::from("(project)"),
    };
    let (entry, oauth) = split_oauth(entry);
    let entry = &entry;
    let oauth = match (oauth, env.grantee()) {
        (None, _) => None,
        (Some(_), super::scope::Grantee::Project { .. }) => {
            return Err(HookProviderError::OAuthNotOwn {
                provider: name.to_string(),
                whose: "a project's".into(),
            })
        }
        (Some(block), _) => Some(
            crate::oauth::hook_flow::intern(name, &hook, &block).map_err(|source| {
                HookProviderError::OAuth {
                    provider: name.to_string(),
                    source,
                }
            })?,
        ),
    };
    check_values(name, entry, env)?;
    let mut next = providers.clone();
    let existing = next.iter().position(|p| p.name == name);
    let own_key = entry
        .get("apiKey")
        .and_then(Value::as_str)
        .is_some_and(|k| !k.is_empty());
    let applied = match existing {
        None => Applied::Defined,
        Some(i) if next[i].owning_hook() == Some(hook.as_str()) => Applied::Extended,
        Some(i) => {
            let p = &mut next[i];
            let previous = p.owning_hook().map(str::to_string);
            if own_key {
                disown(p);
                Applied::TookOver { from: previous }
            } else {
                let fields = redirects(p, entry);
                if !fields.is_empty() {
                    return Err(HookProviderError::Redirect {
                        owner: match &previous {
                            Some(h) => format!("hook {h}'s"),
                            None => "yours (built in or in models.json)".to_string(),
                        },
                        owner_key: match &previous {
                            Some(_) => "that hook's key".to_string(),
                            None => "your key".to_string(),
                        },
                        hook,
                        provider: name.to_string(),
                        fields,
                    });
                }
                Applied::Extended
            }
        }
    };
    let mut warnings = Vec::new();
    let root = serde_json::json!({"providers": {name: entry}});
    apply_models_value(origin, root, &mut next, &mut warnings)?;
    if !warnings.is_empty() {
        return Err(HookProviderError::Warnings(warnings.join("; ")));
    }
    if matches!(applied, Applied::Defined | Applied::TookOver { .. }) {
        if let Some(p) = next.iter_mut().find(|p| p.name == name) {
            p.owner = Some(env.clone());
            // Never the key pi reads for this name from its environment or auth.json.
            p.env_vars.clear();
        }
    }
    if let Some(flow) = oauth {
        let p = next.iter_mut().find(|p| p.name == name);
        match p {
            // Defined now, or defined with a login by this hook before.
            Some(p) if applied == Applied::Defined || p.oauth.is_some_and(|f| f.hook() == hook) => {
                p.oauth = Some(flow)
            }
            _ => {
                return Err(HookProviderError::OAuthNotOwn {
                    provider: name.to_string(),
                    whose: match applied {
                        Applied::TookOver { from: Some(h) } => format!("hook {h}'s"),
                        _ => "built in, in models.json or taken over".into(),
                    },
                })
            }
        }
    }
    *providers = next;
    Ok(applied)
}

/// `entry` without its `oauth` block (not a models.json field), and the block.
fn split_oauth(entry: &Value) -> (Value, Option<Value>) {
    let mut entry = entry.clone();
    let block = entry.as_object_mut().and_then(|m| m.remove("oauth"));
    (entry, block)
}

/// Drops every credential of the previous owner's from `p`.
fn disown(p: &mut ProviderConfig) {
    p.api_key = None;
    p.env_vars.clear();
    p.headers.clear();
    for m in p.models.iter_mut() {
        m.headers.clear();
    }
}

/// The fields of `entry` that would change where or how `p`'s requests go.
fn redirects(p: &ProviderConfig, entry: &Value) -> Vec<String> {
    let mut fields = Vec::new();
    let text = |k: &str| entry.get(k).and_then(Value::as_str);
    if text("baseUrl").is_some_and(|u| u != p.base_url) {
        fields.push("baseUrl".to_string());
    }
    if text("api").is_some_and(|a| a != p.api) {
        fields.push("api".to_string());
    }
    let non_empty = |v: Option<&Value>| match v {
        None | Some(Value::Null) => false,
        Some(Value::Object(m)) => !m.is_empty(),
        Some(_) => true,
    };
    for key in ["headers", "compat", "modelOverrides"] {
        if non_empty(entry.get(key)) {
            fields.push(key.to_string());
        }
    }
    if entry
        .get("authHeader")
        .and_then(Value::as_bool)
        .is_some_and(|a| a != p.auth_header)
    {
        fields.push("authHeader".to_string());
    }
    let models = entry.get("models").and_then(Value::as_array);
    for m in models.into_iter().flatten() {
        let id = m.get("id").and_then(Value::as_str).unwrap_or("?");
        if non_empty(m.get("headers")) {
            fields.push(format!("the headers of model \"{id}\""));
        }
        if m.get("api")
            .and_then(Value::as_str)
            .is_some_and(|a| a != p.api)
        {
            fields.push(format!("the api of model \"{id}\""));
        }
    }
    fields
}

/// Every `apiKey` and header value of `entry` must resolve in the hook's environment.
fn check_values(name: &str, entry: &Value, env: &ForeignEnv) -> Result<(), HookProviderError> {
    let bad = |field: String, source| HookProviderError::Value {
        provider: name.to_string(),
        field,
        source,
    };
    if let Some(k) = entry.get("apiKey").and_then(Value::as_str) {
        env.check(k).map_err(|e| bad("apiKey".into(), e))?;
    }
    let headers = |v: Option<&Value>| -> Vec<(String, String)> {
        v.and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    };
    for (k, v) in headers(entry.get("headers")) {
        env.check(&v).map_err(|e| bad(format!("headers.{k}"), e))?;
    }
    let models = entry.get("models").and_then(Value::as_array);
    for (i, m) in models.into_iter().flatten().enumerate() {
        for (k, v) in headers(m.get("headers")) {
            env.check(&v)
                .map_err(|e| bad(format!("models[{i}].headers.{k}"), e))?;
        }
    }
    let overrides = entry.get("modelOverrides").and_then(Value::as_object);
    for (id, o) in overrides.into_iter().flatten() {
        for (k, v) in headers(o.get("headers")) {
            env.check(&v)
                .map_err(|e| bad(format!("modelOverrides.{id}.headers.{k}"), e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::models::builtin_providers;
    use serde_json::json;

    fn hook(name: &str) -> Arc<ForeignEnv> {
        Arc::new(ForeignEnv::hook(
            name,
            [("OWN_KEY".to_string(), "k".to_string())],
        ))
    }

    fn apply(
        ps: &mut Vec<ProviderConfig>,
        h: &str,
        name: &str,
        e: Value,
    ) -> Result<Applied, HookProviderError> {
        apply_hook_provider(ps, name, &e, &hook(h), Path::new("test"))
    }

    #[test]
    fn a_new_name_is_the_hooks_and_never_reads_the_conventional_variable() {
        let mut ps = builtin_providers();
        let e =
            json!({"baseUrl": "http://h/v1", "api": "openai-completions", "models": [{"id": "m"}]});
        // A name no built-in has is free for a hook, which brings its own key or none.
        assert!(!ps.iter().any(|p| p.name == "my-gateway"));
        assert_eq!(
            apply(&mut ps, "h", "my-gateway", e).unwrap(),
            Applied::Defined
        );
        let g = ps.iter().find(|p| p.name == "my-gateway").unwrap();
        assert_eq!((g.env_vars.is_empty(), g.owning_hook()), (true, Some("h")));
        assert!(!g.requires_key());
    }

    #[test]
    fn changing_where_a_users_provider_goes_needs_the_hooks_own_key_and_then_drops_the_users() {
        let mut ps = builtin_providers();
        let ai = ps.iter().position(|p| p.name == "anthropic").unwrap();
        ps[ai].api_key = Some("$MY".into());
        ps[ai].headers.insert("x-org".into(), "secret".into());
        let before = ps.clone();
        for e in [
            json!({"baseUrl": "http://evil"}),
            json!({"headers": {"a": "b"}}),
            json!({"authHeader": true}),
            json!({"models": [{"id": "x", "headers": {"a": "b"}}]}),
            json!({"modelOverrides": {"claude-opus-4-8": {"maxTokens": 1}}}),
        ] {
            let err = apply(&mut ps, "h", "anthropic", e.clone()).unwrap_err();
            assert!(
                matches!(err, HookProviderError::Redirect { .. }),
                "{e}: {err}"
            );
            assert_eq!(ps, before, "nothing changes on a refusal");
        }
        // The same values as today's, and models, are no change of where requests go.
        let same = json!({"baseUrl": "https://api.anthropic.com", "api": "anthropic-messages",
                          "models": [{"id": "extra"}]});
        assert_eq!(
            apply(&mut ps, "h", "anthropic", same).unwrap(),
            Applied::Extended
        );
        assert_eq!(ps[ai].owner, None);
        let e = json!({"baseUrl": "http://h", "apiKey": "$OWN_KEY"});
        assert_eq!(
            apply(&mut ps, "h", "anthropic", e).unwrap(),
            Applied::TookOver { from: None }
        );
        let a = &ps[ai];
        assert_eq!(a.owning_hook(), Some("h"));
        assert!(a.headers.is_empty() && a.env_vars.is_empty());
        assert_eq!(a.api_key.as_deref(), Some("$OWN_KEY"));
        // Another hook is held to the same rule against the first.
        let err = apply(
            &mut ps,
            "other",
            "anthropic",
            json!({"baseUrl": "http://o"}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("hook h's"), "{err}");
    }

    #[test]
    fn a_login_comes_only_with_a_provider_the_hook_defines() {
        let mut ps = builtin_providers();
        let oauth = json!({"authorizeUrl": "https://a.test/authorize",
                           "tokenUrl": "https://a.test/token", "clientId": "c"});
        let own = json!({"baseUrl": "http://h/v1", "api": "openai-completions",
                         "models": [{"id": "m"}], "oauth": oauth});
        assert_eq!(
            apply(&mut ps, "h", "acme-rule", own.clone()).unwrap(),
            Applied::Defined
        );
        let acme = ps.iter().find(|p| p.name == "acme-rule").unwrap();
        assert!(acme.oauth.is_some() && acme.requires_key());
        // Registering again (a reload) keeps it; another hook cannot bring one.
        assert!(apply(&mut ps, "h", "acme-rule", own.clone()).is_ok());
        let before = ps.clone();
        for (hook, name, extra) in [
            ("h", "anthropic", json!({"apiKey": "$OWN_KEY"})),
            ("h", "openai", json!({})),
        ] {
            let mut e = json!({"oauth": oauth});
            for (k, v) in extra.as_object().cloned().unwrap_or_default() {
                e[k] = v;
            }
            let err = apply(&mut ps, hook, name, e).unwrap_err();
            assert!(
                matches!(err, HookProviderError::OAuthNotOwn { .. }),
                "{name}: {err}"
            );
            assert_eq!(ps, before, "nothing changes on a refusal");
        }
        let mut bad = own;
        bad["oauth"]["tokenUrl"] = json!("ftp://a.test/token");
        let err = apply(&mut ps, "h", "acme-bad", bad).unwrap_err();
        assert!(err.to_string().contains("must be https"), "{err}");
    }

    #[test]
    fn values_resolve_in_the_hooks_environment_and_commands_are_refused() {
        let mut ps = builtin_providers();
        let base = |extra: Value| {
            let mut e = json!({"baseUrl": "http://h/v1", "api": "openai-completions", "models": [{"id": "m"}]});
            for (k, v) in extra.as_object().cloned().unwrap_or_default() {
                e[k] = v;
            }
            e
        };
        for (extra, says) in [
            (json!({"apiKey": "$OPENAI_API_KEY"}), "OPENAI_API_KEY"),
            (json!({"headers": {"x": "${GH}"}}), "GH"),
            (json!({"apiKey": "!cat key"}), "command"),
            (
                json!({"models": [{"id": "m", "headers": {"x": "!id"}}]}),
                "command",
            ),
        ] {
            let err = apply(&mut ps, "h", "t", base(extra))
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{err}");
        }
        apply(
            &mut ps,
            "h",
            "t",
            base(json!({"apiKey": "Bearer $OWN_KEY"})),
        )
        .unwrap();
    }
}
