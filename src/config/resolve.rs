//! Model selection: `--provider` / `--model` (or the settings, or whatever has a key) to one
//! [`Model`].
//!
//! Patterns follow pi: `provider/id`, an exact id (or name), or a case-insensitive substring of
//! an id or name, optionally followed by `:<thinking>` (`sonnet:high`). The full pattern is tried
//! before a suffix is split off, so ids that contain colons (`llama3.1:8b`) still match. An
//! explicit pattern is matched against every model, not only those with a key, so `--api-key`
//! works for first-time setup; the caller asks [`ModelRegistry::require_api_key`] afterwards.

use super::models::{ModelEntry, ProviderConfig, FAUX_API};
use super::registry::ModelRegistry;
use super::settings::Settings;
use super::ConfigError;
use crate::provider::{Model, ThinkingLevel};

/// The outcome of model selection.
#[derive(Debug, Clone)]
pub struct ModelSelection {
    pub model: Model,
    /// The level from a `:thinking` suffix, if one was given. The caller layers it:
    /// `--thinking`, then this, then `settings.default_thinking_level()`.
    pub thinking: Option<ThinkingLevel>,
    /// Non-fatal notes for stderr (invalid suffix, unknown id used as-is, unusable default).
    pub warnings: Vec<String>,
}

pub(super) type Candidate<'a> = (&'a ProviderConfig, &'a ModelEntry);

impl ModelRegistry {
    /// See [`resolve_model`].
    pub fn resolve(
        &self,
        provider: Option<&str>,
        model_pattern: Option<&str>,
        settings: &Settings,
    ) -> Result<ModelSelection, ConfigError> {
        resolve_model(self, provider, model_pattern, settings)
    }

    /// Whether `pattern` names one of `provider`'s models (no id is made up for it).
    pub fn provider_has_model(&self, provider: &str, pattern: &str) -> bool {
        let Some(pc) = self.provider(provider) else {
            return false;
        };
        let scoped: Vec<Candidate> = pc.models.iter().map(|m| (pc, m)).collect();
        let pattern = strip_prefix_ci(pattern, &format!("{}/", pc.name)).unwrap_or(pattern);
        matches!(
            match_with_suffix(self, pattern, pattern, &scoped),
            Ok(Some(_))
        )
    }
}

/// Chooses the model for a run.
///
/// - `--model` (with or without `--provider`): pattern matching as described in the module docs.
/// - `--provider` alone: that provider's default model.
/// - neither: `defaultProvider`/`defaultModel` from the settings if that model has auth, else the
///   default model of the first provider with auth (anthropic, openai, then models.json order),
///   else [`ConfigError::NoModel`] with setup hints.
pub fn resolve_model(
    registry: &ModelRegistry,
    provider: Option<&str>,
    model_pattern: Option<&str>,
    settings: &Settings,
) -> Result<ModelSelection, ConfigError> {
    let provider = provider.map(str::trim).filter(|p| !p.is_empty());
    let pattern = model_pattern.map(str::trim).filter(|p| !p.is_empty());
    let mut warnings = Vec::new();

    let (candidate, thinking) = match (provider, pattern) {
        (None, None) => (default_selection(registry, settings, &mut warnings)?, None),
        (Some(p), None) => {
            let pc = lookup_provider(registry, p)?;
            let entry = pc.default_entry().ok_or_else(|| ConfigError::NoModel {
                message: format!("provider \"{}\" has no models", pc.name),
            })?;
            ((pc, entry.clone()), None)
        }
        (provider, Some(pattern)) => resolve_pattern(registry, provider, pattern, &mut warnings)?,
    };
    let (pc, entry) = candidate;
    Ok(ModelSelection {
        model: registry.build_model(pc, &entry)?,
        thinking,
        warnings,
    })
}

fn lookup_provider<'a>(
    registry: &'a ModelRegistry,
    name: &str,
) -> Result<&'a ProviderConfig, ConfigError> {
    if let Some(p) = registry.provider(name) {
        return Ok(p);
    }
    if let Some(c) = super::catalog::entry(name) {
        return Err(ConfigError::UnsupportedProvider {
            provider: c.name.to_string(),
            api: c.api.to_string(),
        });
    }
    Err(ConfigError::UnknownProvider {
        provider: name.to_string(),
        known: registry
            .providers()
            .iter()
            .map(|p| p.name.clone())
            .collect(),
    })
}

/// A candidate whose entry may be synthesised (an unknown id used as-is), hence owned.
type Chosen<'a> = (&'a ProviderConfig, ModelEntry);

fn resolve_pattern<'a>(
    registry: &'a ModelRegistry,
    provider: Option<&str>,
    full: &str,
    warnings: &mut Vec<String>,
) -> Result<(Chosen<'a>, Option<ThinkingLevel>), ConfigError> {
    let mut provider_cfg = provider.map(|p| lookup_provider(registry, p)).transpose()?;
    let mut pattern = full;
    let mut inferred = false;
    match provider_cfg {
        // Tolerate `--provider x --model x/id`.
        Some(pc) => {
            if let Some(rest) = strip_prefix_ci(full, &format!("{}/", pc.name)) {
                pattern = rest;
            }
        }
        None => {
            if let Some((pre, rest)) = full.split_once('/') {
                if let Some(pc) = registry.provider(pre) {
                    provider_cfg = Some(pc);
                    pattern = rest;
                    inferred = true;
                } else if super::catalog::unsupported().any(|c| c.name == pre) {
                    // `google-vertex/…`: say why rather than "not found".
                    lookup_provider(registry, pre)?;
                }
            }
        }
    }

    let scoped: Vec<Candidate> = match provider_cfg {
        Some(pc) => pc.models.iter().map(|m| (pc, m)).collect(),
        None => all_candidates(registry),
    };
    if let Some(found) = match_with_suffix(registry, pattern, full, &scoped)? {
        return Ok(finish(found, warnings));
    }
    // `openai/gpt-4o` may be an id on another provider (OpenRouter style): try it whole.
    if inferred {
        if let Some(found) = match_with_suffix(registry, full, full, &all_candidates(registry))? {
            return Ok(finish(found, warnings));
        }
    }
    if let Some(pc) = provider_cfg {
        // An id the catalog does not know yet: use it with the provider's default model's
        // settings, as pi does, so new models work before the catalog catches up.
        if let Some(base) = pc.default_entry() {
            let (id, thinking) = match pattern.rsplit_once(':') {
                Some((id, s)) if ThinkingLevel::parse(s).is_some() => (id, ThinkingLevel::parse(s)),
                _ => (pattern, None),
            };
            let mut entry = base.clone();
            entry.id = id.to_string();
            entry.name = id.to_string();
            if thinking.is_some_and(|t| t != ThinkingLevel::Off) {
                entry.reasoning = true;
            }
            warnings.push(format!(
                "Model \"{id}\" not found for provider \"{}\". Using custom model id.",
                pc.name
            ));
            return Ok(((pc, entry), thinking));
        }
    }
    Err(ConfigError::ModelNotFound {
        pattern: full.to_string(),
    })
}

pub(super) type Found<'a> = (Candidate<'a>, Option<ThinkingLevel>, Option<String>);

fn finish<'a>(found: Found<'a>, warnings: &mut Vec<String>) -> (Chosen<'a>, Option<ThinkingLevel>) {
    let ((pc, entry), thinking, warning) = found;
    warnings.extend(warning);
    ((pc, entry.clone()), thinking)
}

fn all_candidates(registry: &ModelRegistry) -> Vec<Candidate<'_>> {
    registry
        .providers()
        .iter()
        .flat_map(|p| p.models.iter().map(move |m| (p, m)))
        .collect()
}

fn strip_prefix_ci<'s>(s: &'s str, prefix: &str) -> Option<&'s str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Tries `pattern` whole, then with a trailing `:suffix` split off (recursively). An invalid
/// suffix is dropped with a warning rather than failing the run.
pub(super) fn match_with_suffix<'a>(
    registry: &ModelRegistry,
    pattern: &str,
    full: &str,
    candidates: &[Candidate<'a>],
) -> Result<Option<Found<'a>>, ConfigError> {
    if let Some(c) = match_once(registry, pattern, full, candidates)? {
        return Ok(Some((c, None, None)));
    }
    let Some((prefix, suffix)) = pattern.rsplit_once(':') else {
        return Ok(None);
    };
    let inner = match_with_suffix(registry, prefix, full, candidates)?;
    Ok(inner.map(|(c, _, inner_warning)| match ThinkingLevel::parse(suffix) {
        Some(level) => {
            let level = if inner_warning.is_some() { None } else { Some(level) };
            (c, level, inner_warning)
        }
        None => (
            c,
            None,
            Some(format!(
                "Invalid thinking level \"{suffix}\" in model pattern \"{full}\" (valid: {}). Using the default.",
                ThinkingLevel::ALL.join(", ")
            )),
        ),
    }))
}

/// One matching pass, as pi 1.6's `resolveModelReference`: exact (`provider/id`, id or name),
/// else a case-insensitive substring of id or name.
fn match_once<'a>(
    registry: &ModelRegistry,
    pattern: &str,
    full: &str,
    candidates: &[Candidate<'a>],
) -> Result<Option<Candidate<'a>>, ConfigError> {
    let lower = pattern.to_lowercase();
    let exact: Vec<Candidate> = candidates
        .iter()
        .copied()
        .filter(|(p, m)| {
            m.id.to_lowercase() == lower
                || m.name.to_lowercase() == lower
                || format!("{}/{}", p.name, m.id).to_lowercase() == lower
        })
        .collect();
    if !exact.is_empty() {
        return pick_exact(registry, full, exact).map(Some);
    }
    let fuzzy: Vec<Candidate> = candidates
        .iter()
        .copied()
        .filter(|(_, m)| {
            m.id.to_lowercase().contains(&lower) || m.name.to_lowercase().contains(&lower)
        })
        .collect();
    if fuzzy.is_empty() {
        return Ok(None);
    }
    pick_fuzzy(registry, full, fuzzy).map(Some)
}

fn usable(registry: &ModelRegistry, p: &ProviderConfig) -> bool {
    p.api != FAUX_API && registry.has_configured_auth(&p.name)
}

fn one_provider(pool: &[Candidate]) -> bool {
    pool.iter().all(|(p, _)| p.name == pool[0].0.name)
}

fn ambiguous(full: &str, pool: &[Candidate]) -> ConfigError {
    let mut candidates: Vec<String> = pool
        .iter()
        .map(|(p, m)| format!("{}/{}", p.name, m.id))
        .collect();
    candidates.sort();
    ConfigError::AmbiguousModel {
        pattern: full.to_string(),
        candidates,
    }
}

/// Exact matches: one provider's, or the one usable provider's; otherwise ambiguous.
fn pick_exact<'a>(
    registry: &ModelRegistry,
    full: &str,
    pool: Vec<Candidate<'a>>,
) -> Result<Candidate<'a>, ConfigError> {
    if one_provider(&pool) {
        return Ok(pool[0]);
    }
    match pool
        .iter()
        .copied()
        .filter(|(p, _)| usable(registry, p))
        .collect::<Vec<_>>()
        .as_slice()
    {
        [one] => Ok(*one),
        _ => Err(ambiguous(full, &pool)),
    }
}

/// Substring matches, as 1.6's `selectFuzzy`: across providers only the usable ones count
/// (when any is); then aliases before dated ids (`claude-sonnet-4-5` before
/// `claude-sonnet-4-5-20250929`) and the latest id; the same id on several providers is
/// ambiguous rather than decided by catalog order.
fn pick_fuzzy<'a>(
    registry: &ModelRegistry,
    full: &str,
    pool: Vec<Candidate<'a>>,
) -> Result<Candidate<'a>, ConfigError> {
    let pool = if one_provider(&pool) {
        pool
    } else {
        let with_auth: Vec<Candidate> = pool
            .iter()
            .copied()
            .filter(|(p, _)| usable(registry, p))
            .collect();
        if with_auth.is_empty() {
            pool
        } else {
            with_auth
        }
    };
    let aliases: Vec<Candidate> = pool
        .iter()
        .copied()
        .filter(|(_, m)| is_alias(&m.id))
        .collect();
    let ranked = if aliases.is_empty() { &pool } else { &aliases };
    // 1.6 sorts with `localeCompare`; for the ids models have, comparing lower-cased text
    // orders them the same.
    let Some(best) = ranked.iter().copied().reduce(|a, b| {
        if b.1.id.to_lowercase() > a.1.id.to_lowercase() {
            b
        } else {
            a
        }
    }) else {
        return Err(ambiguous(full, &pool));
    };
    let tied: Vec<Candidate> = ranked
        .iter()
        .copied()
        .filter(|(_, m)| m.id == best.1.id)
        .collect();
    if one_provider(&tied) {
        Ok(best)
    } else {
        Err(ambiguous(full, &tied))
    }
}

/// An alias names the current version (`-latest`, or no `-YYYYMMDD` date at the end).
fn is_alias(id: &str) -> bool {
    if id.ends_with("-latest") {
        return true;
    }
    let b = id.as_bytes();
    let dated =
        b.len() > 9 && b[b.len() - 9] == b'-' && b[b.len() - 8..].iter().all(u8::is_ascii_digit);
    !dated
}

fn default_selection<'a>(
    registry: &'a ModelRegistry,
    settings: &Settings,
    warnings: &mut Vec<String>,
) -> Result<Chosen<'a>, ConfigError> {
    let usable = |pc: &ProviderConfig| registry.has_configured_auth(&pc.name);
    match (settings.default_provider(), settings.default_model()) {
        (dp, Some(dm)) => {
            let found = match dp {
                Some(dp) => registry.find(dp, dm),
                None => all_candidates(registry).into_iter().find(|(p, m)| {
                    usable(p) && (m.id == dm || format!("{}/{}", p.name, m.id) == dm)
                }),
            };
            let label = dp.map_or(dm.to_string(), |p| format!("{p}/{dm}"));
            match found {
                Some((pc, m)) if usable(pc) => return Ok((pc, m.clone())),
                Some(_) => warnings.push(format!(
                    "Default model \"{label}\" from settings has no API key configured; choosing another."
                )),
                None => warnings.push(format!(
                    "Default model \"{label}\" from settings not found; choosing another."
                )),
            }
        }
        (Some(dp), None) => match registry.provider(dp) {
            Some(pc) if usable(pc) => {
                if let Some(m) = pc.default_entry() {
                    return Ok((pc, m.clone()));
                }
            }
            Some(_) => warnings.push(format!(
                "Default provider \"{dp}\" from settings has no API key configured; choosing another."
            )),
            None => warnings.push(format!(
                "Default provider \"{dp}\" from settings is unknown; choosing another."
            )),
        },
        (None, None) => {}
    }

    registry
        .providers()
        .iter()
        .filter(|p| p.api != FAUX_API && usable(p))
        .find_map(|p| p.default_entry().map(|m| (p, m.clone())))
        .ok_or_else(|| ConfigError::NoModel {
            message: registry.no_models_message(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::registry::tests::registry;
    use crate::config::MapEnv;
    use serde_json::json;

    fn anthropic_env() -> MapEnv {
        MapEnv::new().with_var("ANTHROPIC_API_KEY", "k")
    }

    fn pick(reg: &ModelRegistry, provider: Option<&str>, pattern: Option<&str>) -> ModelSelection {
        resolve_model(reg, provider, pattern, &Settings::default()).unwrap()
    }

    #[test]
    fn provider_slash_id_and_exact_id() {
        let (_d, reg) = registry(None, None, anthropic_env());
        let s = pick(&reg, None, Some("openai/gpt-4.1"));
        assert_eq!(
            (s.model.provider.as_str(), s.model.id.as_str()),
            ("openai", "gpt-4.1")
        );
        assert_eq!(s.model.base_url, "https://api.openai.com/v1");
        assert_eq!(s.model.context_window, 1_047_576);
        let s = pick(&reg, None, Some("claude-sonnet-4-5"));
        assert_eq!(s.model.id, "claude-sonnet-4-5");
        assert_eq!(s.model.api, "anthropic-messages");
        assert!(s.model.reasoning);
        assert!(s.warnings.is_empty() && s.thinking.is_none());
        // Names match too, case-insensitively; one several providers share is ambiguous, as
        // in pi 1.6, unless the provider is named.
        assert_eq!(
            pick(&reg, Some("openai"), Some("GPT-5 Mini")).model.id,
            "gpt-5-mini"
        );
        let err = resolve_model(&reg, None, Some("GPT-5 Mini"), &Settings::default()).unwrap_err();
        assert!(err.to_string().contains("azure/gpt-5-mini, "), "{err}");
    }

    #[test]
    fn fuzzy_matching_prefers_usable_aliases_and_the_latest_id() {
        let (_d, reg) = registry(None, None, anthropic_env());
        // Matches on several providers: only the one with a key counts, and its latest id.
        assert_eq!(
            pick(&reg, None, Some("sonnet")).model.id,
            "claude-sonnet-5-5"
        );
        assert_eq!(pick(&reg, None, Some("HAIKU")).model.id, "claude-haiku-5-5");
        assert_eq!(
            pick(&reg, None, Some("claude")).model.id,
            "claude-sonnet-5-5"
        );
        // The alias before its dated snapshot.
        assert_eq!(
            pick(&reg, Some("anthropic"), Some("sonnet-4-5")).model.id,
            "claude-sonnet-4-5"
        );
        assert!(is_alias("gpt-4o-latest") && is_alias("claude-opus-5"));
        assert!(!is_alias("claude-sonnet-4-5-20250929") && is_alias("x-2025092é"));
        let err =
            resolve_model(&reg, None, Some("nothing-like-it"), &Settings::default()).unwrap_err();
        assert!(matches!(err, ConfigError::ModelNotFound { .. }), "{err}");
        assert!(err.to_string().contains("--list-models"));
    }

    #[test]
    fn thinking_suffix() {
        let (_d, reg) = registry(None, None, anthropic_env());
        let s = pick(&reg, None, Some("sonnet:high"));
        assert_eq!(s.model.id, "claude-sonnet-5-5");
        assert_eq!(s.thinking, Some(ThinkingLevel::High));
        assert!(s.warnings.is_empty());
        let s = pick(&reg, None, Some("anthropic/claude-opus-4-8:xhigh"));
        assert_eq!(
            (s.model.id.as_str(), s.thinking),
            ("claude-opus-4-8", Some(ThinkingLevel::Xhigh))
        );

        let s = pick(&reg, None, Some("sonnet:turbo"));
        assert_eq!(s.model.id, "claude-sonnet-5-5");
        assert_eq!(s.thinking, None);
        assert_eq!(s.warnings.len(), 1);
        assert!(
            s.warnings[0].contains("Invalid thinking level \"turbo\""),
            "{:?}",
            s.warnings
        );
    }

    #[test]
    fn ids_with_colons_match_before_suffix_split() {
        let (_d, reg) = registry(
            Some(
                r#"{"providers":{"ollama":{"baseUrl":"http://localhost:11434/v1","api":"openai-completions",
                "models":[{"id":"llama3.1:8b"},{"id":"qwen3:32b","reasoning":true}]}}}"#,
            ),
            None,
            MapEnv::new(),
        );
        let s = pick(&reg, None, Some("llama3.1:8b"));
        assert_eq!((s.model.id.as_str(), s.thinking), ("llama3.1:8b", None));
        let s = pick(&reg, None, Some("qwen3:32b:low"));
        assert_eq!(
            (s.model.id.as_str(), s.thinking),
            ("qwen3:32b", Some(ThinkingLevel::Low))
        );
        assert_eq!(s.model.base_url, "http://localhost:11434/v1");
    }

    #[test]
    fn ambiguous_matches_are_reported() {
        let (_d, reg) = registry(
            Some(
                r#"{"providers":{
                "a":{"baseUrl":"http://a","api":"openai-completions","models":[{"id":"mistral-7b"}]},
                "b":{"baseUrl":"http://b","api":"openai-completions","models":[{"id":"mistral-7b"},{"id":"mistral-8b"}]}}}"#,
            ),
            None,
            MapEnv::new(),
        );
        let err = resolve_model(&reg, None, Some("mistral-7b"), &Settings::default()).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, ConfigError::AmbiguousModel { .. }), "{msg}");
        assert!(
            msg.contains("a/mistral-7b") && msg.contains("b/mistral-7b"),
            "{msg}"
        );
        // A substring across providers, none with a key: the latest id, as 1.6 picks it.
        assert_eq!(pick(&reg, None, Some("mistral")).model.provider, "b");
        assert_eq!(pick(&reg, None, Some("mistral")).model.id, "mistral-8b");
        // Qualifying removes the ambiguity.
        assert_eq!(
            pick(&reg, None, Some("b/mistral-7b")).model.base_url,
            "http://b"
        );
        assert_eq!(
            pick(&reg, Some("a"), Some("mistral")).model.base_url,
            "http://a"
        );
    }

    #[test]
    fn matches_with_auth_win_over_matches_without() {
        let (_d, reg) = registry(
            Some(
                r#"{"providers":{"openrouter":{"baseUrl":"https://openrouter.ai/api/v1","api":"openai-completions",
                "apiKey":"or-key","models":[{"id":"gpt-4.1"}]}}}"#,
            ),
            None,
            MapEnv::new(),
        );
        let s = pick(&reg, None, Some("gpt-4.1"));
        assert_eq!(s.model.provider, "openrouter");
    }

    #[test]
    fn provider_only_and_unknown_ids() {
        let (_d, reg) = registry(None, None, MapEnv::new());
        assert_eq!(
            pick(&reg, Some("anthropic"), None).model.id,
            "claude-opus-5-5"
        );
        assert_eq!(pick(&reg, Some("openai"), None).model.id, "gpt-6.2-sol");
        let f = pick(&reg, Some("faux"), None).model;
        assert_eq!(
            (f.id.as_str(), f.api.as_str(), f.base_url.as_str()),
            ("faux-1", "faux", "")
        );
        let err = resolve_model(&reg, Some("nope"), None, &Settings::default()).unwrap_err();
        assert!(matches!(err, ConfigError::UnknownProvider { .. }));
        assert!(err.to_string().contains("anthropic"));

        let s = pick(&reg, Some("openai"), Some("gpt-7:high"));
        assert_eq!(
            (s.model.id.as_str(), s.model.provider.as_str()),
            ("gpt-7", "openai")
        );
        assert_eq!(s.thinking, Some(ThinkingLevel::High));
        assert!(
            s.warnings[0].contains("Using custom model id"),
            "{:?}",
            s.warnings
        );
        // Inferred from `provider/` too.
        assert_eq!(
            pick(&reg, None, Some("anthropic/claude-next")).model.id,
            "claude-next"
        );
    }

    #[test]
    fn defaults_from_settings_then_first_with_auth() {
        let env = MapEnv::new().with_var("OPENAI_API_KEY", "k");
        let (_d, reg) = registry(None, None, env);
        let none = Settings::default();
        assert_eq!(pick(&reg, None, None).model.id, "gpt-6.2-sol");

        let s = Settings::from_value(json!({"defaultProvider":"openai","defaultModel":"gpt-4.1"}));
        assert_eq!(
            resolve_model(&reg, None, None, &s).unwrap().model.id,
            "gpt-4.1"
        );

        // A default without a key falls back, with a warning.
        let s = Settings::from_value(
            json!({"defaultProvider":"anthropic","defaultModel":"claude-sonnet-4-5"}),
        );
        let sel = resolve_model(&reg, None, None, &s).unwrap();
        assert_eq!(sel.model.id, "gpt-6.2-sol");
        assert!(sel.warnings[0].contains("no API key"), "{:?}", sel.warnings);

        let s = Settings::from_value(json!({"defaultProvider":"openai"}));
        assert_eq!(
            resolve_model(&reg, None, None, &s).unwrap().model.id,
            "gpt-6.2-sol"
        );

        // Anthropic comes first when both have keys.
        let env = MapEnv::new()
            .with_var("OPENAI_API_KEY", "k")
            .with_var("ANTHROPIC_API_KEY", "k");
        let (_d, reg) = registry(None, None, env);
        assert_eq!(
            resolve_model(&reg, None, None, &none).unwrap().model.id,
            "claude-opus-5-5"
        );
    }

    #[test]
    fn keyless_custom_provider_is_a_default() {
        let (_d, reg) = registry(
            Some(
                r#"{"providers":{"ollama":{"baseUrl":"http://localhost:11434/v1","api":"openai-completions",
                "models":[{"id":"llama3"}]}}}"#,
            ),
            None,
            MapEnv::new(),
        );
        let s = pick(&reg, None, None);
        assert_eq!(
            (s.model.provider.as_str(), s.model.id.as_str()),
            ("ollama", "llama3")
        );
    }

    #[test]
    fn no_model_error_is_helpful() {
        let (_d, reg) = registry(
            None,
            Some(r#"{"anthropic":{"type":"oauth"}}"#),
            MapEnv::new(),
        );
        let err = resolve_model(&reg, None, None, &Settings::default()).unwrap_err();
        assert!(matches!(err, ConfigError::NoModel { .. }));
        let msg = err.to_string();
        for needle in [
            "--provider faux",
            "models.json",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "OAuth",
        ] {
            assert!(msg.contains(needle), "missing {needle}: {msg}");
        }
    }
}
