//! `pi auth print-api-key | print-bearer-token | check`: a provider's credential for another
//! program (a script calling the API with the user's key or subscription), and whether one is
//! ready, with pi 1.6's options, messages, output and exit codes (docs/cli.md, "Credential
//! commands"). A login is refreshed here as for a request — under `auth.json`'s lock — so
//! printing a bearer token never leaves TypeScript pi holding a spent refresh token.
//!
//! Where 1.6 says only "Failed to resolve credential" (a refused refresh, an unreadable file),
//! the reason is said instead.

use std::time::Duration;

use serde_json::{json, Value};

use crate::config::{self, catalog, AuthEntry, ModelRegistry, Settings, SystemEnv};
use crate::oauth::stored::StoredLogin;

/// Which of the three commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Check,
    ApiKey,
    BearerToken,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Check => "auth check",
            Kind::ApiKey => "auth print-api-key",
            Kind::BearerToken => "auth print-bearer-token",
        }
    }

    fn usage(self) -> &'static str {
        match self {
            Kind::Check => {
                "pi auth check --provider <provider> [--json] [--credentials] [--no-refresh]"
            }
            Kind::ApiKey => "pi auth print-api-key --provider <provider> [--model <model>]",
            Kind::BearerToken => {
                "pi auth print-bearer-token --provider <provider> [--model <model>] \
                 [--min-expiry <duration>]"
            }
        }
    }
}

/// A bearer token printed without `--min-expiry` has at least this long to live (1.6's).
const DEFAULT_MIN_EXPIRY: Duration = Duration::from_secs(30 * 60);

#[derive(Debug, Default)]
struct Command {
    provider: Option<String>,
    model: Option<String>,
    json: bool,
    credentials: bool,
    no_refresh: bool,
    min_expiry: Option<Duration>,
}

/// Why a command cannot run: an unknown option is reported with the usage line, anything
/// else as `Error: …`. A misused option exits 1; what the options ask for being unanswerable
/// exits 2 from `check`, as 1.6.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    #[error("Unknown option {0}")]
    UnknownOption(String),
    #[error("{0}")]
    Misused(String),
    #[error("{0}")]
    Error(String),
}

fn refuse(message: impl Into<String>) -> Refusal {
    Refusal::Error(message.into())
}

fn misused(message: impl Into<String>) -> Refusal {
    Refusal::Misused(message.into())
}

/// 1.6's durations: `30m`, `1h`, `90s`, `500ms`.
fn parse_duration(value: &str) -> Option<Duration> {
    let lower = value.to_ascii_lowercase();
    let split = lower.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = lower.split_at(split);
    let amount: u64 = digits.parse().ok()?;
    let ms = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    Some(Duration::from_millis(amount.checked_mul(ms)?))
}

fn parse(kind: Kind, args: &[String]) -> Result<Command, Refusal> {
    let mut cmd = Command::default();
    let mut stray = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--min-expiry" if kind != Kind::BearerToken => {
                return Err(misused(
                    "--min-expiry is only supported by print-bearer-token",
                ))
            }
            "--min-expiry" => {
                let value = it.next().and_then(|v| parse_duration(v));
                let value = value
                    .ok_or_else(|| misused("--min-expiry must use a duration such as 30m or 1h"))?;
                cmd.min_expiry = Some(value);
            }
            "--json" | "--credentials" | "--no-refresh" if kind != Kind::Check => {
                return Err(misused(format!("{a} is only supported by auth check")))
            }
            "--json" => cmd.json = true,
            "--credentials" => cmd.credentials = true,
            "--no-refresh" => cmd.no_refresh = true,
            "--provider" => cmd.provider = it.next().cloned(),
            "--model" => cmd.model = it.next().cloned(),
            "--api-key" => {
                it.next();
                stray = true;
            }
            s if s.starts_with('-') && s.len() > 1 => {
                return Err(Refusal::UnknownOption(s.to_string()))
            }
            _ => stray = true,
        }
    }
    cmd.provider = cmd
        .provider
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty());
    cmd.model = cmd
        .model
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty());
    if stray {
        return Err(refuse("Auth commands only accept --provider and --model"));
    }
    if cmd.provider.is_none() && cmd.model.is_none() {
        return Err(refuse(if kind == Kind::Check {
            "Auth checks require --provider <provider> or --model <model>"
        } else {
            "Credential printing requires --provider <provider> or --model <model>"
        }));
    }
    Ok(cmd)
}

pub fn main(kind: Kind, args: &[String]) -> anyhow::Result<i32> {
    let failed = if kind == Kind::Check { 2 } else { 1 };
    let cmd = match parse(kind, args) {
        Ok(cmd) => cmd,
        Err(Refusal::UnknownOption(option)) => {
            term_eprintln!("Unknown option {option} for \"{}\".", kind.name());
            term_eprintln!("Use \"pi --help\" or \"{}\".", kind.usage());
            return Ok(1);
        }
        Err(e) => {
            term_eprintln!("Error: {e}");
            return Ok(if matches!(e, Refusal::Misused(_)) {
                1
            } else {
                failed
            });
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    if kind == Kind::Check {
        return Ok(runtime.block_on(check(&cmd)));
    }
    match runtime.block_on(print(kind, &cmd)) {
        Ok(value) => {
            term_println!("{value}");
            Ok(0)
        }
        Err(e) => {
            term_eprintln!("Error: {e}");
            Ok(1)
        }
    }
}

fn registry() -> Result<ModelRegistry, Refusal> {
    let dir = config::agent_dir(&SystemEnv).map_err(|e| refuse(e.to_string()))?;
    ModelRegistry::load(&dir, &SystemEnv)
        .map(|(r, _warnings)| r)
        .map_err(|e| refuse(e.to_string()))
}

/// The credential a request to `provider` would carry: a login's access token (renewed when
/// it has less than `left`), else its key.
async fn credential(
    registry: &ModelRegistry,
    provider: &str,
    left: Duration,
) -> Result<Option<String>, Refusal> {
    if registry.stored_credential_type(provider) == Some("oauth") {
        let Some(login) = registry.stored_login(provider) else {
            return Ok(None);
        };
        return login
            .token_valid_for(left)
            .await
            .map(Some)
            .map_err(|e| refuse(e.to_string()));
    }
    registry
        .api_key_for(provider, None)
        .map_err(|e| refuse(e.to_string()))
}

/// The stored login of a provider pi signs in to but whose API it does not speak yet
/// (ChatGPT's `openai-codex`): the registry does not list the provider, yet the login is the
/// user's to check and to print for other programs, as 1.6 does.
fn unspoken_login(registry: &ModelRegistry, provider: &str) -> Option<StoredLogin> {
    registry.provider(provider).is_none().then_some(())?;
    catalog::unsupported()
        .any(|c| c.name == provider)
        .then_some(())?;
    let flow = crate::oauth::flow(provider)?;
    let path = config::auth_path(registry.agent_dir());
    let file = config::AuthFile::load(&path, &mut Vec::new()).ok()?;
    let Some(AuthEntry::OAuth(Some(tokens))) = file.entries.get(provider) else {
        return None;
    };
    Some(StoredLogin::new(flow, path, tokens.clone()))
}

/// The providers `--provider`/`--model` name; with `--model` alone, those with a stored
/// credential that have such a model, as 1.6 looks them up.
fn providers(registry: &ModelRegistry, cmd: &Command) -> Result<Vec<String>, Refusal> {
    if let Some(p) = &cmd.provider {
        let Some(found) = registry.provider(p) else {
            return Err(refuse(format!(
                "Unknown provider \"{p}\". Use --list-models to see available providers."
            )));
        };
        if let Some(m) = &cmd.model {
            registry
                .resolve(Some(&found.name), Some(m), &Settings::default())
                .map_err(|e| refuse(e.to_string()))?;
        }
        return Ok(vec![found.name.clone()]);
    }
    let model = cmd.model.as_deref().unwrap_or_default();
    let named: Vec<String> = registry
        .providers()
        .iter()
        .filter(|p| registry.stored_credential_type(&p.name).is_some())
        .filter(|p| registry.provider_has_model(&p.name, model))
        .map(|p| p.name.clone())
        .collect();
    if named.is_empty() {
        return Err(refuse(format!(
            "Model \"{model}\" not found. Use --list-models to see available models."
        )));
    }
    Ok(named)
}

async fn print(kind: Kind, cmd: &Command) -> Result<String, Refusal> {
    let registry = registry()?;
    let unspoken = cmd
        .provider
        .as_deref()
        .filter(|_| cmd.model.is_none())
        .and_then(|p| unspoken_login(&registry, p));
    if let Some(login) = unspoken {
        if kind == Kind::ApiKey {
            let first = cmd.provider.as_deref().unwrap_or_default();
            return Err(refuse(format!(
                "Provider \"{first}\" is configured with OAuth, not an API key"
            )));
        }
        let left = cmd.min_expiry.unwrap_or(DEFAULT_MIN_EXPIRY);
        return login
            .token_valid_for(left)
            .await
            .map_err(|e| refuse(e.to_string()));
    }
    let named = providers(&registry, cmd)?;
    let left = cmd.min_expiry.unwrap_or(DEFAULT_MIN_EXPIRY);
    let mut found = Vec::new();
    for id in &named {
        let oauth = registry.stored_credential_type(id) == Some("oauth");
        if oauth != (kind == Kind::BearerToken) {
            continue;
        }
        if let Some(value) = credential(&registry, id, left).await? {
            found.push((id.clone(), value));
        }
    }
    if found.len() > 1 {
        let ids: Vec<&str> = found.iter().map(|(id, _)| id.as_str()).collect();
        return Err(refuse(format!(
            "Multiple configured providers matched ({}). Specify --provider.",
            ids.join(", ")
        )));
    }
    if let Some((_, value)) = found.pop() {
        return Ok(value);
    }
    let first = named.first().map(String::as_str).unwrap_or_default();
    let stored = registry.stored_credential_type(first);
    Err(refuse(match (cmd.provider.is_some(), kind, stored) {
        (true, Kind::ApiKey, Some("oauth")) => {
            format!("Provider \"{first}\" is configured with OAuth, not an API key")
        }
        (true, Kind::BearerToken, _) => {
            format!("Provider \"{first}\" is not configured with an OAuth bearer token")
        }
        (_, Kind::BearerToken, _) => "No usable OAuth bearer token is configured".to_string(),
        _ => "No usable API key is configured".to_string(),
    }))
}

/// `ready`, `not_ready` or `invalid` for the provider named, as 1.6's JSON result.
async fn check_result(cmd: &Command) -> (Value, Option<String>) {
    let asked = cmd.provider.clone().or_else(|| cmd.model.clone());
    let invalid = || json!({"status": "invalid", "provider": asked, "reason": "invalid_state"});
    let Ok(registry) = registry() else {
        return (invalid(), None);
    };
    let provider = match (&cmd.provider, &cmd.model) {
        (p, Some(m)) => match registry.resolve(p.as_deref(), Some(m), &Settings::default()) {
            Ok(sel) => sel.model.provider,
            Err(_) => return (invalid(), None),
        },
        (Some(p), None) => p.clone(),
        (None, None) => return (invalid(), None),
    };
    if let Some(login) = unspoken_login(&registry, &provider).filter(|_| cmd.model.is_none()) {
        let value = if cmd.no_refresh {
            Ok(login.stored_access())
        } else {
            login.token_valid_for(crate::oauth::REFRESH_BEFORE).await
        };
        let ready = json!({"status": "ready", "provider": provider, "authType": "oauth"});
        return match value {
            Ok(v) => (ready, cmd.credentials.then_some(v)),
            Err(_) => (invalid(), None),
        };
    }
    let Some(p) = registry.provider(&provider) else {
        return (
            json!({"status": "not_ready", "provider": provider, "reason": "provider_not_found"}),
            None,
        );
    };
    let id = p.name.clone();
    if !registry.has_configured_auth(&id) {
        let reason = "credentials_not_configured";
        return (
            json!({"status": "not_ready", "provider": id, "reason": reason}),
            None,
        );
    }
    let auth_type = registry.stored_credential_type(&id).unwrap_or("api_key");
    let value = if cmd.no_refresh && auth_type == "oauth" {
        registry.stored_login(&id).map(|l| l.stored_access())
    } else {
        match credential(&registry, &id, crate::oauth::REFRESH_BEFORE).await {
            Ok(v) => v,
            Err(_) => return (invalid(), None),
        }
    };
    let ready = json!({"status": "ready", "provider": id, "authType": auth_type});
    match value {
        Some(v) if cmd.credentials => (ready, Some(v)),
        None if cmd.credentials => (
            json!({"status": "not_ready", "provider": id, "reason": "credential_not_available"}),
            None,
        ),
        _ => (ready, None),
    }
}

async fn check(cmd: &Command) -> i32 {
    let (mut result, credential) = check_result(cmd).await;
    let status = result["status"].as_str().unwrap_or("invalid").to_string();
    match (cmd.json, credential) {
        (true, credential) => {
            if let Some(c) = credential {
                result["credentials"] = json!(c);
            }
            term_println!("{result}");
        }
        (false, Some(c)) => term_println!("{c}"),
        (false, None) => term_println!("{status}"),
    }
    match status.as_str() {
        "ready" => 0,
        "not_ready" => 1,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn durations_are_1_6s() {
        assert_eq!(parse_duration("30m"), Some(Duration::from_secs(1800)));
        assert_eq!(parse_duration("1H"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        for bad in ["5x", "m", "1.5h", "-1h", ""] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn options_belong_to_their_command() {
        let e = parse(Kind::ApiKey, &args("--provider a --json")).unwrap_err();
        assert_eq!(e.to_string(), "--json is only supported by auth check");
        let e = parse(Kind::Check, &args("--provider a --min-expiry 1h")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--min-expiry is only supported by print-bearer-token"
        );
        let e = parse(Kind::ApiKey, &args("--provider a extra")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Auth commands only accept --provider and --model"
        );
        assert!(matches!(
            parse(Kind::Check, &args("--provider a --bogus")),
            Err(Refusal::UnknownOption(o)) if o == "--bogus"
        ));
        let cmd = parse(Kind::BearerToken, &args("--model m --min-expiry 2h")).unwrap();
        assert_eq!(cmd.min_expiry, Some(Duration::from_secs(7200)));
        assert_eq!(cmd.model.as_deref(), Some("m"));
    }
}
