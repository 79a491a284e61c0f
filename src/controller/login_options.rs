//! What `/login` offers, as pi 1.6's login selector lists it: one row per way into a provider
//! (its subscription or account login, its API key), named by the provider, ordered as 1.6's
//! `compareProviders` (the preferred partners Radius and OpenRouter first, then by name), each
//! marked with how the provider is configured now (1.6's `formatAuthSelectorProviderStatus`),
//! and `/login NAME` matched against ids and names as 1.6's `findMatchingProviders` does.
//! Kept apart from the flow ([`super::login`]) so the rows can be checked without a terminal.

use crate::config::ModelRegistry;

/// The preferred partners, most preferred first (1.6's `PREFERRED_PROVIDER_IDS`).
const PREFERRED: [&str; 2] = ["radius", "openrouter"];

/// How a row signs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AuthType {
    /// The provider's login (1.6's `oauth`).
    Login,
    ApiKey,
}

/// How the provider is configured now (1.6's `getProviderAuthStatus` as the selector reads it).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Status {
    auth: AuthType,
    /// Where the credential comes from: "stored", an environment variable, …; `None` when
    /// pi cannot say.
    source: Option<String>,
}

/// One row of the login selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LoginOption {
    pub id: String,
    pub name: String,
    pub auth: AuthType,
    /// Whether the login is a subscription (else an account: Radius, OpenRouter).
    subscription: bool,
    /// The login's own words for signing in ("Sign in with ChatGPT").
    pub login_label: Option<&'static str>,
    status: Option<Status>,
}

/// Every way to sign in here, `only` those of one kind when given, in 1.6's order (a
/// provider's login above its API key).
pub(super) fn options(registry: &ModelRegistry, only: Option<AuthType>) -> Vec<LoginOption> {
    let mut ids: Vec<String> = registry
        .providers()
        .iter()
        .map(|p| p.name.clone())
        .collect();
    for flow in registry.login_flows() {
        if !ids.iter().any(|i| i == flow.provider()) {
            ids.push(flow.provider().to_string());
        }
    }
    let mut rows = Vec::new();
    for id in ids {
        let flow = registry.login_flow(&id);
        let keyed = registry
            .provider(&id)
            .is_some_and(|p| p.requires_key() && p.owner.is_none());
        let status = status(registry, &id);
        let row = |auth| LoginOption {
            id: id.clone(),
            name: provider_name(&id),
            auth,
            subscription: flow.is_some_and(|f| f.is_subscription()),
            login_label: flow.and_then(|f| f.login_label()),
            status: status.clone(),
        };
        if flow.is_some() && only != Some(AuthType::ApiKey) {
            rows.push(row(AuthType::Login));
        }
        if keyed && only != Some(AuthType::Login) {
            rows.push(row(AuthType::ApiKey));
        }
    }
    // A stable sort: a provider's login stays above its API key.
    rows.sort_by(|a, b| {
        rank(&a.id)
            .cmp(&rank(&b.id))
            .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
    });
    rows
}

fn rank(id: &str) -> usize {
    PREFERRED
        .iter()
        .position(|p| *p == id)
        .unwrap_or(PREFERRED.len())
}

/// How 1.6 names a provider: the catalog's name, else its id.
pub(super) fn provider_name(id: &str) -> String {
    crate::config::catalog::entry(id).map_or(id.to_string(), |c| c.display_name.to_string())
}

/// How `id` is configured, in 1.6's order: a stored credential, then what the environment
/// or models.json gives.
fn status(registry: &ModelRegistry, id: &str) -> Option<Status> {
    if let Some(kind) = registry.stored_credential_type(id) {
        let auth = match kind {
            "oauth" => AuthType::Login,
            _ => AuthType::ApiKey,
        };
        let source = Some("stored".to_string());
        return Some(Status { auth, source });
    }
    if !registry.has_configured_auth(id) {
        return None;
    }
    let p = registry.provider(id)?;
    let env = registry.env();
    let var = p
        .key_vars()
        .find(|n| env.var(n).is_some_and(|v| !v.is_empty()));
    let source = match (var, p.api_key.as_deref()) {
        (Some(var), _) => Some(var.to_string()),
        (None, Some(k)) => {
            use crate::config::{referenced_vars, value_origin, ValueOrigin};
            Some(match value_origin(k) {
                ValueOrigin::Command => "models_json_command".into(),
                ValueOrigin::Literal => "models_json_key".into(),
                ValueOrigin::Environment => referenced_vars(k).join(", "),
            })
        }
        (None, None) => None,
    };
    Some(Status {
        auth: AuthType::ApiKey,
        source,
    })
}

/// What 1.6 calls a kind of sign-in: "API key", "subscription" or "account".
fn kind_label(auth: AuthType, subscription: bool) -> &'static str {
    match (auth, subscription) {
        (AuthType::ApiKey, _) => "API key",
        (AuthType::Login, true) => "subscription",
        (AuthType::Login, false) => "account",
    }
}

/// Whether and how the row's provider is configured, in 1.6's words (" ✓ configured",
/// " • not configured", " • API key configured", " ✓ env: VAR").
pub(super) fn status_mark(o: &LoginOption) -> String {
    let Some(status) = &o.status else {
        return " • not configured".into();
    };
    if status.auth != o.auth {
        return format!(" • {} configured", kind_label(status.auth, o.subscription));
    }
    match status.source.as_deref() {
        None | Some("OAuth" | "stored credential") => " ✓ configured".into(),
        Some(s) if is_var_list(s) => format!(" ✓ env: {s}"),
        Some(s) => format!(" ✓ {s}"),
    }
}

/// Whether `s` is a list of environment variable names ("A_KEY" or "A, B"), as 1.6 tells
/// them from other sources.
fn is_var_list(s: &str) -> bool {
    s.split(", ").all(|n| {
        let mut chars = n.chars();
        chars.next().is_some_and(|c| c.is_ascii_uppercase())
            && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    })
}

/// A row as the selector shows it: the name, the partner mark, the kind when the list mixes
/// kinds, and the status.
pub(super) fn row(o: &LoginOption, show_kinds: bool) -> String {
    let partner = if PREFERRED.contains(&o.id.as_str()) {
        " ✦"
    } else {
        ""
    };
    let kind = match show_kinds {
        true => format!(" [{}]", kind_label(o.auth, o.subscription)),
        false => String::new(),
    };
    format!("{}{partner}{kind}{}", o.name, status_mark(o))
}

/// The rows whose provider id or name is `reference`, ignoring case and surrounding blanks.
pub(super) fn matching(rows: Vec<LoginOption>, reference: &str) -> Vec<LoginOption> {
    let wanted = reference.trim().to_lowercase();
    if wanted.is_empty() {
        return Vec::new();
    }
    rows.into_iter()
        .filter(|o| o.id.to_lowercase() == wanted || o.name.to_lowercase() == wanted)
        .collect()
}

#[cfg(test)]
#[path = "login_options_tests.rs"]
mod tests;
