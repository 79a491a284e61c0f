//! `pi auth login|logout`, and the dispatch of `pi auth` to [`super::auth_print`]: a
//! provider's stored credentials in `auth.json`, outside a session, with pi 1.6's commands,
//! messages and exit codes (docs/cli.md, "Credential commands"). Every change goes through
//! [`crate::config::auth_store`], so a TypeScript pi writing the same file at the same moment
//! loses nothing.
//!
//! `login` signs in with an account where pi knows the provider's OAuth client, else saves an
//! API key, read from the terminal without echo or, unlike 1.6, from a pipe, so scripts can
//! store one.

use serde_json::json;

use super::auth_print::{self, Kind};
use crate::config::{self, auth_store, catalog, ModelRegistry, SystemEnv};

const LOGIN_USAGE: &str = "pi auth login <provider> [--api-key] [--no-browser]";
const LOGOUT_USAGE: &str = "pi auth logout <provider>";

const HELP: &str = "Usage:
  pi auth login <provider> [--api-key] [--no-browser]
  pi auth logout <provider>
  pi auth print-api-key [--provider <provider>] [--model <model>]
  pi auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  pi auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Log in to and out of model providers, print their credentials for external clients, or check that they are ready.
Credentials are stored in ~/.pi/agent/auth.json.

Commands:
  login <provider>        Sign in with an account in the browser, or save an API key, then exit
  logout <provider>       Remove the stored credentials; environment variables and models.json stay
  print-api-key           Print the resolved API key
  print-bearer-token      Print a resolved OAuth bearer token (refreshes if expired)
  check                   Print ready, not_ready, or invalid; exit with 0, 1, or 2

Options for print-api-key, print-bearer-token, and check (at least one is required):
  --provider <provider>   Resolve credentials for a provider
  --model <model>         Resolve credentials from a model

Options for login:
  --api-key               Save an API key instead of signing in with an account
  --no-browser            Do not open a browser; use another sign-in method, e.g. device code

Other options:
  --min-expiry <duration> Minimum remaining token lifetime for print-bearer-token, e.g. 30m or 1h
  --json                  Print the check result as JSON
  --credentials           Emit the credential from check, or include it in JSON output
  --no-refresh            Do not refresh expired OAuth credentials during check";

/// A provider `pi auth` may name: one pi can use, or one of 1.6's catalog whose API pi does
/// not speak yet (a key stored for it serves the TypeScript pi, and pi once it does).
struct Named {
    id: String,
    name: String,
    oauth: bool,
    /// What its endpoint needs besides the key (`{CLOUDFLARE_ACCOUNT_ID}` in its base URL),
    /// asked for after the key and stored in the entry's `env` object, as 1.6 does.
    url_vars: Vec<String>,
}

fn find(registry: &ModelRegistry, reference: &str) -> Option<Named> {
    let (id, base_url) = registry
        .provider(reference)
        .map(|p| (p.name.clone(), p.base_url.clone()))
        .or_else(|| {
            catalog::CATALOG
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(reference))
                .map(|c| (c.name.to_string(), c.base_url.to_string()))
        })?;
    let entry = catalog::entry(&id);
    Some(Named {
        name: entry.map_or(id.clone(), |c| c.display_name.to_string()),
        oauth: entry.is_some_and(|c| c.oauth),
        url_vars: catalog::url_vars(&base_url).map(str::to_string).collect(),
        id,
    })
}

/// How 1.6 asks for a variable a provider's endpoint needs.
fn var_label(var: &str) -> String {
    match var {
        "CLOUDFLARE_ACCOUNT_ID" => "Cloudflare account ID".into(),
        "CLOUDFLARE_GATEWAY_ID" => "Cloudflare AI Gateway ID".into(),
        other => other.to_string(),
    }
}

fn known_ids(registry: &ModelRegistry) -> String {
    let mut ids: Vec<String> = registry
        .providers()
        .iter()
        .filter(|p| p.name != "faux")
        .map(|p| p.name.clone())
        .chain(catalog::unsupported().map(|c| c.name.to_string()))
        .collect();
    ids.sort();
    ids.join(", ")
}

pub fn main(args: &[String]) -> anyhow::Result<i32> {
    let rest = &args[args.len().min(2)..];
    match args.get(1).map(String::as_str) {
        None | Some("help" | "--help" | "-h") => {
            term_println!("{HELP}");
            Ok(0)
        }
        Some(_) if rest.iter().any(|a| a == "--help" || a == "-h") => {
            term_println!("{HELP}");
            Ok(0)
        }
        Some("login") => login(rest),
        Some("logout") => logout(rest),
        Some("check") => auth_print::main(Kind::Check, rest),
        Some("print-api-key") => auth_print::main(Kind::ApiKey, rest),
        Some("print-bearer-token") => auth_print::main(Kind::BearerToken, rest),
        Some(other) => {
            term_eprintln!(
                "Error: Unknown auth command \"{other}\". Use \"pi auth login\", \"pi auth \
                 logout\", \"pi auth print-api-key\", \"pi auth print-bearer-token\", or \"pi auth \
                 check\"."
            );
            Ok(1)
        }
    }
}

fn registry() -> anyhow::Result<ModelRegistry> {
    let dir = config::agent_dir(&SystemEnv)?;
    let (registry, _warnings) = ModelRegistry::load(&dir, &SystemEnv)?;
    Ok(registry)
}

fn login(args: &[String]) -> anyhow::Result<i32> {
    let (mut reference, mut api_key, mut browser) = (None, false, true);
    for a in args {
        match a.as_str() {
            "--api-key" => api_key = true,
            "--no-browser" => browser = false,
            s if s.starts_with('-') || reference.is_some() => {
                term_eprintln!("Usage: {LOGIN_USAGE}");
                return Ok(1);
            }
            s => reference = Some(s.to_string()),
        }
    }
    let Some(reference) = reference else {
        term_eprintln!("Usage: {LOGIN_USAGE}");
        return Ok(1);
    };
    if api_key && !browser {
        term_eprintln!("--no-browser only applies to account sign-in; omit it with --api-key.");
        return Ok(1);
    }
    let registry = registry()?;
    let Some(p) = find(&registry, &reference) else {
        term_eprintln!("Unknown provider \"{reference}\".");
        term_eprintln!("Providers: {}", known_ids(&registry));
        return Ok(1);
    };
    if p.oauth && !api_key {
        let Some(flow) = crate::oauth::flow(&p.id) else {
            term_eprintln!(
                "Signing in to {} with an account is not supported by this pi yet; \
                 pass --api-key to save an API key instead.",
                p.name
            );
            return Ok(1);
        };
        return super::auth_login::sign_in(flow, &p.name, registry.agent_dir(), browser);
    }
    let read = super::auth_login::read_answer;
    let Some(key) = read(&format!("Enter {} API key: ", p.name), true)? else {
        term_eprintln!("Login cancelled.");
        return Ok(1);
    };
    let mut entry = json!({"type": "api_key", "key": key});
    for var in &p.url_vars {
        let Some(value) = read(&format!("Enter {}: ", var_label(var)), false)? else {
            term_eprintln!("Login cancelled.");
            return Ok(1);
        };
        entry["env"][var] = json!(value);
    }
    let path = config::auth_path(registry.agent_dir());
    auth_store::update(&path, |m| {
        m.insert(p.id.clone(), entry);
        (true, ())
    })?;
    term_println!(
        "Saved API key for {}. Credentials saved to {}",
        p.name,
        path.display()
    );
    Ok(0)
}

fn logout(args: &[String]) -> anyhow::Result<i32> {
    let [reference] = args else {
        term_eprintln!("Usage: {LOGOUT_USAGE}");
        return Ok(1);
    };
    if reference.starts_with('-') {
        term_eprintln!("Usage: {LOGOUT_USAGE}");
        return Ok(1);
    }
    let registry = registry()?;
    let path = config::auth_path(registry.agent_dir());
    let named = find(&registry, reference);
    let id = named.as_ref().map_or(reference.clone(), |p| p.id.clone());
    let removed = auth_store::update(&path, |m| match m.remove(&id) {
        Some(v) => (true, Some(v)),
        None => (false, None),
    })?;
    let name = named
        .as_ref()
        .map_or(reference.as_str(), |p| p.name.as_str());
    match removed {
        None if named.is_none() => {
            term_eprintln!("Unknown provider \"{reference}\".");
            let stored = config::AuthFile::load(&path, &mut Vec::new())
                .map(|f| f.entries.keys().cloned().collect::<Vec<_>>().join(", "))
                .unwrap_or_default();
            let stored = if stored.is_empty() {
                "none".into()
            } else {
                stored
            };
            term_eprintln!("Stored credentials: {stored}");
            Ok(1)
        }
        None => {
            term_println!(
                "No stored credentials for {name}. Environment variables and models.json config \
                 are unchanged."
            );
            Ok(0)
        }
        Some(v) if v["type"] == "oauth" => {
            term_println!("Logged out of {name}.");
            Ok(0)
        }
        Some(_) => {
            term_println!(
                "Removed stored API key for {name}. Environment variables and models.json \
                 config are unchanged."
            );
            Ok(0)
        }
    }
}
