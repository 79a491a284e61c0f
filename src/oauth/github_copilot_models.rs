//! Which Copilot models an account may use, as pi 1.6 asks GitHub at sign-in and at each
//! token exchange: the account's `/models` list (the models its picker shows, unless its
//! policy disables them, and only those that take tools), which 1.6 stores as the login's
//! `availableModelIds`; and, at sign-in, enabling the models whose policy the account has not
//! decided yet (Claude, Grok and others must be switched on before first use).
//!
//! Both go to the account's own endpoint and retry when rate limited, as 1.6's
//! `fetchWithRateLimitRetry` does: at most a few times, inside a time budget, waiting what
//! `retry-after` says (else 0.5 s, doubling). Enabling is best effort: a model GitHub refuses
//! is left out, and a rate limit that outlasts the retries stops the rest.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use super::github_copilot::{CopilotError, COPILOT_HEADERS};

/// The API version 1.6 asks `/models` for.
const API_VERSION: &str = "2026-06-01";
/// The endpoint whose accounts 1.6 lets fall back on enabled policies: some Individual
/// accounts say `false` for every picker flag.
const INDIVIDUAL_BASE_URL: &str = "https://api.individual.githubcopilot.com";
/// No single request may take longer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// How often a rate-limited request is sent again, and for how long in all.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub max_elapsed: Duration,
}

/// Sign-in's: two retries within five seconds.
pub const SIGN_IN: RetryPolicy = RetryPolicy {
    max_retries: 2,
    max_elapsed: Duration::from_secs(5),
};
/// A token exchange's: none.
pub const EXCHANGE: RetryPolicy = RetryPolicy {
    max_retries: 0,
    max_elapsed: Duration::ZERO,
};

/// What the account's model list says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Catalog {
    /// The models the account may use now (1.6's `availableModelIds`).
    pub available: Vec<String>,
    /// Models pi knows whose policy the account has not set: enabled at sign-in.
    pub to_enable: Vec<String>,
}

/// The account's models at `base_url` (its Copilot endpoint).
pub async fn fetch(
    http: &reqwest::Client,
    token: &str,
    base_url: &str,
    retry: RetryPolicy,
) -> Result<Catalog, CopilotError> {
    let url = format!("{base_url}/models");
    let request = || {
        let mut r = http
            .get(&url)
            .header("accept", "application/json")
            .header("authorization", format!("Bearer {token}"));
        for (k, v) in COPILOT_HEADERS {
            r = r.header(k, v);
        }
        r.header("x-github-api-version", API_VERSION)
    };
    let response = with_rate_limit_retry(request, retry).await?;
    let body = CopilotError::checked(response).await?;
    parse(&body, base_url == INDIVIDUAL_BASE_URL)
}

/// 1.6's `parseGitHubCopilotModelCatalog`.
fn parse(body: &str, allow_policy_fallback: bool) -> Result<Catalog, CopilotError> {
    let invalid = || CopilotError::Invalid("Invalid Copilot models response".into());
    let raw: Value = serde_json::from_str(body).map_err(|_| invalid())?;
    let data = raw["data"].as_array().ok_or_else(invalid)?;
    struct Listed<'a> {
        id: &'a str,
        picker: bool,
        policy: Option<&'a str>,
    }
    let listed: Vec<Listed> = data
        .iter()
        .filter(|m| m["capabilities"]["supports"]["tool_calls"] != json!(false))
        .filter_map(|m| {
            Some(Listed {
                id: m["id"].as_str()?,
                picker: m["model_picker_enabled"] == json!(true),
                policy: m["policy"]["state"].as_str(),
            })
        })
        .collect();
    let picked: Vec<String> = listed
        .iter()
        .filter(|m| m.picker && m.policy != Some("disabled"))
        .map(|m| m.id.to_string())
        .collect();
    let fallback = allow_policy_fallback && picked.is_empty();
    let available = if fallback {
        let enabled = listed.iter().filter(|m| m.policy == Some("enabled"));
        enabled.map(|m| m.id.to_string()).collect()
    } else {
        picked
    };
    let known = known_models();
    let to_enable = listed
        .iter()
        .filter(|m| m.policy == Some("unconfigured") && (m.picker || fallback))
        .filter(|m| known.iter().any(|k| k == m.id))
        .map(|m| m.id.to_string())
        .collect();
    Ok(Catalog {
        available,
        to_enable,
    })
}

/// The Copilot models of pi's catalog (1.6's `GITHUB_COPILOT_MODELS`).
fn known_models() -> Vec<String> {
    let Some(entry) = crate::config::catalog::entry(super::github_copilot::PROVIDER) else {
        return Vec::new();
    };
    let models: Vec<Value> = serde_json::from_str(entry.models).unwrap_or_default();
    models
        .iter()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect()
}

/// Enables each of `ids` for the account; the ones GitHub accepted.
pub async fn enable(
    http: &reqwest::Client,
    token: &str,
    base_url: &str,
    ids: &[String],
) -> Vec<String> {
    let mut enabled = Vec::new();
    for id in ids {
        let url = format!("{base_url}/models/{id}/policy");
        let request = || {
            let mut r = http
                .post(&url)
                .header("content-type", "application/json")
                .header("authorization", format!("Bearer {token}"));
            for (k, v) in COPILOT_HEADERS {
                r = r.header(k, v);
            }
            r.header("openai-intent", "chat-policy")
                .header("x-interaction-type", "chat-policy")
                .body(r#"{"state":"enabled"}"#)
        };
        match with_rate_limit_retry(request, SIGN_IN).await {
            // Still rate limited: the rest would be too.
            Ok(r) if r.status().as_u16() == 429 => break,
            Ok(r) if r.status().is_success() => enabled.push(id.clone()),
            Ok(_) | Err(_) => {}
        }
    }
    enabled
}

/// Sends what `request` builds, again while it is rate limited (429), by `policy`.
async fn with_rate_limit_retry(
    request: impl Fn() -> reqwest::RequestBuilder,
    policy: RetryPolicy,
) -> Result<reqwest::Response, CopilotError> {
    let deadline = (policy.max_retries > 0 && !policy.max_elapsed.is_zero())
        .then(|| Instant::now() + policy.max_elapsed);
    let mut retry = 0;
    loop {
        let timeout = deadline.map_or(REQUEST_TIMEOUT, |d| {
            REQUEST_TIMEOUT.min(d.saturating_duration_since(Instant::now()))
        });
        let response = request()
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| CopilotError::Network(crate::provider::stream::error_chain(&e)))?;
        if response.status().as_u16() != 429 || retry == policy.max_retries {
            return Ok(response);
        }
        let Some(delay) = retry_delay(&response, retry) else {
            return Ok(response);
        };
        if deadline.is_some_and(|d| delay >= d.saturating_duration_since(Instant::now())) {
            return Ok(response);
        }
        tokio::time::sleep(delay).await;
        retry += 1;
    }
}

/// How long to wait before retry number `retry`: `retry-after` (seconds or a date), else
/// 0.5 s doubling; `None` when `retry-after` says something that is neither.
fn retry_delay(response: &reqwest::Response, retry: u32) -> Option<Duration> {
    let header = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok());
    let Some(value) = header else {
        return Some(Duration::from_millis(500u64 << retry.min(20)));
    };
    let ms = match value.trim().parse::<f64>() {
        Ok(seconds) => seconds * 1000.0,
        Err(_) => {
            let at = chrono::DateTime::parse_from_rfc2822(value.trim()).ok()?;
            (at.timestamp_millis() - super::now_ms()) as f64
        }
    };
    ms.is_finite()
        .then(|| Duration::from_millis(ms.max(0.0) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(id: &str, picker: bool, policy: Option<&str>) -> Value {
        let mut m = json!({"id": id, "model_picker_enabled": picker});
        if let Some(p) = policy {
            m["policy"] = json!({"state": p});
        }
        m
    }

    #[test]
    fn the_picker_decides_and_unconfigured_known_models_are_enabled() {
        let mut no_tools = model("claude-sonnet-5", true, Some("enabled"));
        no_tools["capabilities"] = json!({"supports": {"tool_calls": false}});
        let body = json!({"data": [
            model("gpt-6.1-sol", true, Some("enabled")),
            model("claude-opus-5", true, Some("unconfigured")),
            model("grok-4.7", true, Some("disabled")),
            model("not-in-the-catalog", true, Some("unconfigured")),
            model("gpt-5.4-nano", false, Some("unconfigured")),
            no_tools,
            {"id": 7},
        ]});
        let catalog = parse(&body.to_string(), true).unwrap();
        assert_eq!(
            catalog.available,
            ["gpt-6.1-sol", "claude-opus-5", "not-in-the-catalog"]
        );
        assert_eq!(catalog.to_enable, ["claude-opus-5"]);
    }

    #[test]
    fn individual_accounts_without_a_picker_fall_back_on_enabled_policies() {
        let body = json!({"data": [
            model("gpt-6.1-sol", false, Some("enabled")),
            model("claude-opus-5", false, Some("unconfigured")),
        ]})
        .to_string();
        let individual = parse(&body, true).unwrap();
        assert_eq!(individual.available, ["gpt-6.1-sol"]);
        assert_eq!(individual.to_enable, ["claude-opus-5"]);
        // Elsewhere the picker is strict.
        assert_eq!(parse(&body, false).unwrap(), Catalog::default());
        let err = parse(r#"{"models": []}"#, true).unwrap_err();
        assert_eq!(err.to_string(), "Invalid Copilot models response");
    }
}
