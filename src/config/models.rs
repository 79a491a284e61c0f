//! The model catalog: the built-in providers (pi 1.6's catalog, [`super::catalog`], and
//! `faux`) and pi's `models.json` format layered over them.
//!
//! `models.json` can add providers, re-point a built-in one (an entry with only `baseUrl`,
//! `headers` or `apiKey`), upsert models into it, or tweak built-in models through
//! `modelOverrides`. Providers whose `api` we cannot speak are skipped with a warning rather than
//! failing the whole file, so a `models.json` shared with the TypeScript pi keeps working; for
//! the same reason a model whose `cost` rates cannot be used loads with cost 0 and a warning.
//! Values in `apiKey` and `headers` stay raw here; they are resolved when a model is used.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{deep_merge, read_json_file, ConfigError};
use crate::provider::cost::CostRates;
use crate::provider::thinking_map::{self, ThinkingLevelMap};
use crate::provider::PromptCache;

use super::model_list::ModelList;

/// Wire APIs a `models.json` provider may use.
pub const SUPPORTED_APIS: [&str; 10] = [
    "openai-completions",
    "openai-responses",
    "azure-openai-responses",
    "openai-codex-responses",
    "anthropic-messages",
    "google-generative-ai",
    "mistral-conversations",
    "google-vertex",
    "bedrock-converse-stream",
    "pi-messages",
];

/// The offline scripted provider's api name (built in only; not allowed in models.json).
pub(crate) const FAUX_API: &str = "faux";

const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
const DEFAULT_MAX_TOKENS: u64 = 16_384;

/// Variables pi 1.6 reads for a provider but sends as `Authorization: Bearer` (an Anthropic
/// auth token or OAuth token), not as an API key. They are credentials all the same (hidden
/// from the model's shell), but never sent as a key until the subscription logins land.
const BEARER_ONLY_VARS: &[&str] = &["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN"];

/// Every environment variable conventionally holding a provider's key: each catalog
/// provider's, including those whose API pi does not speak yet.
pub(crate) fn known_key_vars() -> impl Iterator<Item = &'static str> {
    super::catalog::CATALOG
        .iter()
        .flat_map(|p| p.env_vars.iter().copied())
}

/// The environment variables conventionally holding `provider`'s key, in the order pi 1.6
/// reads them (empty for a name the catalog does not know).
pub fn env_vars_for_provider(provider: &str) -> Vec<String> {
    super::catalog::entry(provider)
        .map(|p| p.env_vars.iter().map(|v| v.to_string()).collect())
        .unwrap_or_default()
}

/// Why a models.json `cost` cannot be used. The model then loads with cost 0, because a price
/// list read in part would show believable totals that are wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum CostError {
    #[error(
        "\"cost\" must be an object of rates in dollars per million tokens \
         (input, output, cacheRead, cacheWrite), got {0}"
    )]
    NotAnObject(Value),
    #[error("cost.{key} must be a non-negative number of dollars per million tokens, got {got}")]
    BadRate { key: &'static str, got: Value },
    #[error(
        "cost.tiers must be a list of {{\"inputTokensAbove\", \"input\", \"output\", \
         \"cacheRead\", \"cacheWrite\"}} objects of non-negative numbers; {0}"
    )]
    BadTiers(String),
}

/// models.json's `cost.tiers`: every field of every tier, as 1.6 prices with all of them.
fn parse_tiers(raw: &Value) -> Result<Vec<crate::provider::cost::CostTier>, CostError> {
    let Value::Array(items) = raw else {
        return Err(CostError::BadTiers(format!("got {raw}")));
    };
    let mut tiers = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = |key: &str| match item.get(key).and_then(Value::as_f64) {
            Some(v) if v >= 0.0 && v.is_finite() => Ok(v),
            _ => Err(CostError::BadTiers(format!(
                "tiers[{i}].{key} is {}",
                item.get(key)
                    .map_or("missing".to_string(), Value::to_string)
            ))),
        };
        tiers.push(crate::provider::cost::CostTier {
            input_tokens_above: field("inputTokensAbove")?,
            input: field("input")?,
            output: field("output")?,
            cache_read: field("cacheRead")?,
            cache_write: field("cacheWrite")?,
        });
    }
    Ok(tiers)
}

/// Reads a models.json `cost` object over `base` (zeros for a model defined there, the
/// built-in rates for a `modelOverrides` entry). A missing key keeps its `base` rate (and
/// its `base` tiers); other keys are left alone.
fn parse_cost(raw: &Value, base: CostRates) -> Result<CostRates, CostError> {
    let Value::Object(map) = raw else {
        return Err(CostError::NotAnObject(raw.clone()));
    };
    let mut rates = base;
    if let Some(tiers) = map.get("tiers") {
        rates.tiers = parse_tiers(tiers)?;
    }
    let slots: [(&'static str, &mut f64); 4] = [
        ("input", &mut rates.input),
        ("output", &mut rates.output),
        ("cacheRead", &mut rates.cache_read),
        ("cacheWrite", &mut rates.cache_write),
    ];
    for (key, slot) in slots {
        let Some(v) = map.get(key) else { continue };
        match v.as_f64() {
            Some(rate) if rate >= 0.0 && rate.is_finite() => *slot = rate,
            _ => {
                return Err(CostError::BadRate {
                    key,
                    got: v.clone(),
                })
            }
        }
    }
    Ok(rates)
}

/// One model of a provider, as configured (values not yet resolved).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelEntry {
    pub id: String,
    pub name: String,
    /// The model's own `api`, when it overrides the provider's.
    pub api: Option<String>,
    /// The model's own base URL, when it differs from the provider's (catalog providers
    /// that serve several APIs at several paths).
    pub base_url: Option<String>,
    pub reasoning: bool,
    /// `"text"`, `"image"`.
    pub input: Vec<String>,
    pub context_window: u64,
    pub max_tokens: u64,
    /// `None`: no rates known (or unusable ones); its messages cost 0.
    pub cost: Option<CostRates>,
    /// Model-level compat (merged over the provider's when a `Model` is built).
    pub compat: Value,
    /// Model-level headers, raw value syntax.
    pub headers: BTreeMap<String, String>,
    /// `promptCache`: cache lifetimes in seconds (none: not eligible for cache warming).
    pub prompt_cache: PromptCache,
    /// `thinkingLevelMap` (empty: none).
    pub thinking_level_map: ThinkingLevelMap,
}

impl ModelEntry {
    pub fn supports_images(&self) -> bool {
        self.input.iter().any(|i| i == "image")
    }
}

/// One provider, built in or from models.json, after merging.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    pub name: String,
    pub api: String,
    pub base_url: String,
    /// `apiKey` from models.json, raw value syntax.
    pub api_key: Option<String>,
    /// Raw value syntax.
    pub headers: BTreeMap<String, String>,
    /// `authHeader: true`: send `Authorization: Bearer <key>` (passed on through compat).
    pub auth_header: bool,
    pub compat: Value,
    pub models: ModelList,
    pub builtin: bool,
    /// The variables the key is read from, in order (none: no conventional variable).
    pub env_vars: Vec<String>,
    /// The model chosen for `--provider X` alone.
    pub default_model: Option<String>,
    /// A hook defined this provider, or took it over with a key of its own: its key and
    /// headers come from that hook alone, resolved in the hook's environment, and none of the
    /// user's key sources (auth.json, the conventional variable, `--api-key`) apply to it.
    /// `None`: the built-ins' and the user's files'.
    pub owner: Option<std::sync::Arc<super::scope::ForeignEnv>>,
    /// The login the owning hook brought (`provider.register`'s `oauth` block).
    pub oauth: Option<&'static crate::oauth::hook_flow::HookOAuth>,
}

impl ProviderConfig {
    /// Whether a request needs a key at all. `faux` does not, and neither does a custom
    /// provider with no `apiKey` and no conventional variable: local servers (Ollama, llama.cpp)
    /// take requests without one.
    pub fn requires_key(&self) -> bool {
        self.api != FAUX_API
            && (self.builtin
                || !self.env_vars.is_empty()
                || self.api_key.is_some()
                || self.oauth.is_some())
    }

    /// The variables whose value is sent as this provider's API key, in order.
    pub fn key_vars(&self) -> impl Iterator<Item = &str> {
        self.env_vars
            .iter()
            .map(String::as_str)
            .filter(|v| !BEARER_ONLY_VARS.contains(v))
    }

    /// The default model entry: the configured default, else the first model.
    pub fn default_entry(&self) -> Option<&ModelEntry> {
        self.default_model
            .as_deref()
            .and_then(|id| self.models.iter().find(|m| m.id == id))
            .or_else(|| self.models.first())
    }

    pub fn model_api<'a>(&'a self, m: &'a ModelEntry) -> &'a str {
        m.api.as_deref().unwrap_or(&self.api)
    }

    /// The hook this provider belongs to, if one defined or took it over.
    pub fn owning_hook(&self) -> Option<&str> {
        match self.owner.as_deref().map(super::scope::ForeignEnv::grantee) {
            Some(super::scope::Grantee::Hook(h)) => Some(h),
            _ => None,
        }
    }
}

/// The built-in providers: pi 1.6's catalog ([`super::catalog`]) in its default-selection
/// order, then the offline scripted `faux`.
pub(crate) fn builtin_providers() -> Vec<ProviderConfig> {
    let mut providers = super::catalog::builtin_providers();
    let faux = ModelEntry {
        name: "Faux 1".to_string(),
        context_window: 128_000,
        max_tokens: 16_384,
        ..test_entry("faux-1")
    };
    providers.push(ProviderConfig {
        name: "faux".to_string(),
        api: FAUX_API.to_string(),
        base_url: String::new(),
        api_key: None,
        headers: BTreeMap::new(),
        auth_header: false,
        compat: Value::Object(Map::new()),
        models: vec![faux].into(),
        builtin: true,
        env_vars: Vec::new(),
        default_model: Some("faux-1".to_string()),
        owner: None,
        oauth: None,
    });
    providers
}

/// A text-only model `id` with pi's defaults and no known cost (the scripted `faux` model's
/// shape, and the base of test fixtures).
pub(crate) fn test_entry(id: &str) -> ModelEntry {
    ModelEntry {
        id: id.to_string(),
        name: id.to_string(),
        api: None,
        base_url: None,
        reasoning: false,
        input: vec!["text".to_string()],
        context_window: DEFAULT_CONTEXT_WINDOW,
        max_tokens: DEFAULT_MAX_TOKENS,
        cost: None,
        compat: Value::Object(Map::new()),
        headers: BTreeMap::new(),
        prompt_cache: PromptCache::default(),
        thinking_level_map: ThinkingLevelMap::new(),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawProvider {
    base_url: Option<String>,
    api: Option<String>,
    api_key: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    auth_header: bool,
    compat: Option<Value>,
    models: Option<Vec<RawModel>>,
    #[serde(default)]
    model_overrides: BTreeMap<String, RawOverride>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawModel {
    id: String,
    name: Option<String>,
    api: Option<String>,
    #[serde(default)]
    reasoning: bool,
    input: Option<Vec<String>>,
    context_window: Option<u64>,
    max_tokens: Option<u64>,
    /// Checked by [`parse_cost`]: a bad value is a warning, not a broken file.
    cost: Option<Value>,
    compat: Option<Value>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Checked by [`parse_prompt_cache`].
    prompt_cache: Option<Value>,
    thinking_level_map: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawOverride {
    name: Option<String>,
    reasoning: Option<bool>,
    input: Option<Vec<String>>,
    context_window: Option<u64>,
    max_tokens: Option<u64>,
    /// Partial: merged over the built-in cost by [`parse_cost`] (taken out before
    /// [`apply_override`]).
    cost: Option<Value>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    compat: Option<Value>,
    /// Checked by [`parse_prompt_cache`] (taken out before [`apply_override`]).
    prompt_cache: Option<Value>,
    thinking_level_map: Option<Value>,
}

/// Applies `path` (models.json) over `providers`. A missing file changes nothing.
pub(crate) fn apply_models_json(
    path: &Path,
    providers: &mut Vec<ProviderConfig>,
    warnings: &mut Vec<String>,
) -> Result<(), ConfigError> {
    let Some(root) = read_json_file(path)? else {
        return Ok(());
    };
    apply_models_value(path, root, providers, warnings)
}

/// Applies a models.json document (`root`) over `providers`; `path` names where it came from
/// in errors and warnings (a file, or a hook's `provider.register`).
pub(crate) fn apply_models_value(
    path: &Path,
    root: Value,
    providers: &mut Vec<ProviderConfig>,
    warnings: &mut Vec<String>,
) -> Result<(), ConfigError> {
    let Value::Object(mut root) = root else {
        return Err(invalid(
            path,
            "models.json must be a JSON object with a \"providers\" object".to_string(),
        ));
    };
    let entries = match root.remove("providers") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(invalid(
                path,
                format!("\"providers\" must be an object, got {other}"),
            ))
        }
    };

    for (name, raw) in entries {
        let mut raw: RawProvider = serde_json::from_value(raw)
            .map_err(|e| invalid(path, format!("provider \"{name}\": {e}")))?;
        let warn = |msg: String| provider_warning(path, &name, msg);

        if let Some(api) = raw.api.as_deref() {
            if !SUPPORTED_APIS.contains(&api) {
                warnings.push(warn(format!(
                    "unsupported api \"{api}\" (supported: {}); provider skipped",
                    SUPPORTED_APIS.join(", ")
                )));
                continue;
            }
        }
        if raw.compat.as_ref().is_some_and(|c| !c.is_object()) {
            return Err(invalid(
                path,
                format!("provider \"{name}\": \"compat\" must be an object"),
            ));
        }
        let raw_models = raw.models.take().unwrap_or_default();
        let models = model_entries(path, &name, raw_models, warnings)?;
        if let Some(existing) = providers.iter_mut().find(|p| p.name == name) {
            extend_provider(path, existing, raw, models, warnings)?;
            continue;
        }
        if let Some(added) = new_provider(path, name, raw, models, warnings)? {
            providers.push(added);
        }
    }
    Ok(())
}

fn invalid(path: &Path, message: String) -> ConfigError {
    ConfigError::Invalid {
        path: path.to_path_buf(),
        message,
    }
}

fn provider_warning(path: &Path, name: &str, msg: String) -> String {
    format!("{}: provider \"{name}\": {msg}", path.display())
}

/// A provider's `models`, checked; a model with an unsupported api is skipped with a warning.
fn model_entries(
    path: &Path,
    name: &str,
    raw_models: Vec<RawModel>,
    warnings: &mut Vec<String>,
) -> Result<Vec<ModelEntry>, ConfigError> {
    let warn = |msg: String| provider_warning(path, name, msg);
    let mut models = Vec::new();
    for m in raw_models {
        if m.id.is_empty() {
            return Err(invalid(
                path,
                format!("provider \"{name}\": a model has an empty \"id\""),
            ));
        }
        if let Some(api) = m.api.as_deref() {
            if !SUPPORTED_APIS.contains(&api) {
                warnings.push(warn(format!(
                    "model \"{}\" has unsupported api \"{api}\"; model skipped",
                    m.id
                )));
                continue;
            }
        }
        if m.compat.as_ref().is_some_and(|c| !c.is_object()) {
            return Err(invalid(
                path,
                format!(
                    "provider \"{name}\": model \"{}\": \"compat\" must be an object",
                    m.id
                ),
            ));
        }
        let cost = m.cost.as_ref().and_then(|raw| {
            parse_cost(raw, CostRates::default())
                .map_err(|e| warnings.push(warn(free_model(&m.id, &e))))
                .ok()
        });
        let prompt_cache = match m.prompt_cache.as_ref().map(parse_prompt_cache) {
            None => PromptCache::default(),
            Some(Ok(c)) => c,
            Some(Err(e)) => {
                warnings.push(warn(format!("model \"{}\": {e}; ignored", m.id)));
                PromptCache::default()
            }
        };
        models.push(ModelEntry {
            prompt_cache,
            name: m.name.unwrap_or_else(|| m.id.clone()),
            id: m.id,
            api: m.api,
            base_url: None,
            reasoning: m.reasoning,
            input: m.input.unwrap_or_else(|| vec!["text".to_string()]),
            context_window: m.context_window.unwrap_or(DEFAULT_CONTEXT_WINDOW),
            max_tokens: m.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            cost,
            compat: m.compat.unwrap_or_else(|| Value::Object(Map::new())),
            headers: m.headers,
            thinking_level_map: thinking_map::parse(m.thinking_level_map.as_ref()),
        });
    }
    Ok(models)
}

/// Re-point / extend a provider defined earlier (a built-in one): its fields, its
/// `modelOverrides`, and models added or replaced by id.
fn extend_provider(
    path: &Path,
    existing: &mut ProviderConfig,
    raw: RawProvider,
    models: Vec<ModelEntry>,
    warnings: &mut Vec<String>,
) -> Result<(), ConfigError> {
    let name = existing.name.clone();
    let warn = |msg: String| provider_warning(path, &name, msg);
    if let Some(url) = raw.base_url {
        existing.base_url = url;
        // A proxy for the whole provider: the catalog's per-model URLs give way to it.
        for m in existing.models.iter_mut() {
            m.base_url = None;
        }
    }
    if let Some(api) = raw.api {
        existing.api = api;
    }
    if raw.api_key.is_some() {
        existing.api_key = raw.api_key;
    }
    existing.headers.extend(raw.headers);
    existing.auth_header |= raw.auth_header;
    if let Some(c) = raw.compat {
        deep_merge(&mut existing.compat, c);
    }
    for (id, mut ov) in raw.model_overrides {
        let Some(model) = existing.models.iter_mut().find(|m| m.id == id) else {
            warnings.push(warn(format!(
                "modelOverrides: no built-in model \"{id}\"; ignored"
            )));
            continue;
        };
        if let Some(raw) = ov.cost.take() {
            match parse_cost(&raw, model.cost.clone().unwrap_or_default()) {
                Ok(rates) => model.cost = Some(rates),
                Err(e) => {
                    warnings.push(warn(format!("modelOverrides: {}", free_model(&id, &e))));
                    model.cost = None;
                }
            }
        }
        if let Some(raw) = ov.prompt_cache.take() {
            match parse_prompt_cache(&raw) {
                Ok(c) => model.prompt_cache = c,
                Err(e) => warnings.push(warn(format!("modelOverrides \"{id}\": {e}; ignored"))),
            }
        }
        apply_override(model, ov).map_err(|e| {
            invalid(
                path,
                format!("provider \"{name}\": modelOverrides \"{id}\": {e}"),
            )
        })?;
    }
    for m in models {
        match existing.models.iter_mut().find(|e| e.id == m.id) {
            Some(slot) => *slot = m,
            None => existing.models.push(m),
        }
    }
    Ok(())
}

/// A provider models.json adds: it needs a `baseUrl`, models and an api; `None` when it is
/// ignored (with a warning).
fn new_provider(
    path: &Path,
    name: String,
    raw: RawProvider,
    models: Vec<ModelEntry>,
    warnings: &mut Vec<String>,
) -> Result<Option<ProviderConfig>, ConfigError> {
    let warn = |msg: String| provider_warning(path, &name, msg);
    let Some(base_url) = raw.base_url else {
        if models.is_empty() {
            warnings.push(warn(
                "not a built-in provider and defines no models; ignored".to_string(),
            ));
            return Ok(None);
        }
        return Err(invalid(
            path,
            format!("provider \"{name}\": a custom provider needs \"baseUrl\""),
        ));
    };
    if models.is_empty() {
        warnings.push(warn("defines no models; ignored".to_string()));
        return Ok(None);
    }
    let api = match raw.api {
        Some(api) => api,
        None => match models.iter().all(|m| m.api.is_some()) {
            // Every model names its own api; the provider-level one is only a fallback.
            true => models[0].api.clone().unwrap_or_default(),
            false => {
                return Err(invalid(
                    path,
                    format!(
                        "provider \"{name}\": \"api\" is required (one of {})",
                        SUPPORTED_APIS.join(", ")
                    ),
                ))
            }
        },
    };
    if !raw.model_overrides.is_empty() {
        warnings.push(warn(
            "modelOverrides only apply to built-in providers; ignored".to_string(),
        ));
    }
    Ok(Some(ProviderConfig {
        env_vars: env_vars_for_provider(&name),
        name,
        api,
        base_url,
        api_key: raw.api_key,
        headers: raw.headers,
        auth_header: raw.auth_header,
        compat: raw.compat.unwrap_or_else(|| Value::Object(Map::new())),
        models: models.into(),
        builtin: false,
        default_model: None,
        owner: None,
        oauth: None,
    }))
}

/// The warning for a model whose `cost` cannot be used.
fn free_model(id: &str, e: &CostError) -> String {
    format!("model \"{id}\": {e}; the model loads with cost 0")
}

/// `promptCache`: an object whose `short` and `long` are lifetimes in seconds.
fn parse_prompt_cache(raw: &Value) -> Result<PromptCache, String> {
    let Value::Object(map) = raw else {
        return Err(format!("\"promptCache\" must be an object, got {raw}"));
    };
    let mut cache = PromptCache::default();
    for (key, value) in map {
        let slot = match key.as_str() {
            "short" => &mut cache.short,
            "long" => &mut cache.long,
            other => return Err(format!("\"promptCache\" has an unknown tier \"{other}\"")),
        };
        match value.as_f64() {
            Some(seconds) if seconds >= 0.0 && seconds.is_finite() => *slot = Some(seconds),
            _ => {
                return Err(format!(
                    "\"promptCache.{key}\" must be a non-negative number of seconds, got {value}"
                ))
            }
        }
    }
    Ok(cache)
}

fn apply_override(model: &mut ModelEntry, ov: RawOverride) -> Result<(), String> {
    if let Some(n) = ov.name {
        model.name = n;
    }
    if let Some(r) = ov.reasoning {
        model.reasoning = r;
    }
    if let Some(i) = ov.input {
        model.input = i;
    }
    if let Some(c) = ov.context_window {
        model.context_window = c;
    }
    if let Some(m) = ov.max_tokens {
        model.max_tokens = m;
    }
    model.headers.extend(ov.headers);
    // Entry by entry over the model's own, as 1.6's provider composer spreads it.
    if let Some(map) = ov.thinking_level_map.as_ref() {
        model
            .thinking_level_map
            .extend(thinking_map::parse(Some(map)));
    }
    if let Some(c) = ov.compat {
        if !c.is_object() {
            return Err("\"compat\" must be an object".to_string());
        }
        deep_merge(&mut model.compat, c);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> (Result<Vec<ProviderConfig>, ConfigError>, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("models.json");
        std::fs::write(&p, text).unwrap();
        let mut providers = builtin_providers();
        let mut w = Vec::new();
        let r = apply_models_json(&p, &mut providers, &mut w).map(|_| providers);
        (r, w)
    }

    #[test]
    fn a_thinking_level_map_is_read_from_a_model_and_an_override() {
        let (r, w) = load(
            r#"{"providers":{"box":{"baseUrl":"http://x/v1","api":"openai-completions",
                "models":[{"id":"a","reasoning":true,"thinkingLevelMap":{"off":null,"high":"max"}}]},
              "openai":{"modelOverrides":{"gpt-5":{"thinkingLevelMap":{"xhigh":"xhigh"}}}}}}"#,
        );
        let providers = r.unwrap();
        assert!(w.is_empty(), "{w:?}");
        let find = |p: &str, m: &str| {
            let p = providers.iter().find(|c| c.name == p).unwrap();
            p.models
                .iter()
                .find(|e| e.id == m)
                .unwrap()
                .thinking_level_map
                .clone()
        };
        let a = find("box", "a");
        assert_eq!(a.get("off"), Some(&None));
        assert_eq!(a.get("high"), Some(&Some("max".to_string())));
        let gpt5 = find("openai", "gpt-5");
        assert_eq!(gpt5.get("xhigh"), Some(&Some("xhigh".to_string())));
        assert_eq!(gpt5.get("off"), Some(&None), "merged over the catalog's");
    }

    #[test]
    fn prompt_cache_lifetimes_are_read_and_bad_ones_ignored_with_a_warning() {
        let (r, w) = load(
            r#"{"providers":{"box":{"baseUrl":"http://x/v1","api":"openai-completions",
                "models":[{"id":"a","promptCache":{"short":300,"long":3600}},
                          {"id":"b","promptCache":{"short":"five minutes"}}]},
              "anthropic":{"modelOverrides":{"claude-haiku-4-5":{"promptCache":{"short":300}}}}}}"#,
        );
        let providers = r.unwrap();
        let find = |p: &str, m: &str| {
            providers
                .iter()
                .find(|x| x.name == p)
                .unwrap()
                .models
                .iter()
                .find(|x| x.id == m)
                .unwrap()
                .prompt_cache
        };
        assert_eq!(
            find("box", "a"),
            PromptCache {
                short: Some(300.0),
                long: Some(3600.0)
            }
        );
        assert_eq!(find("box", "b"), PromptCache::default());
        assert_eq!(find("anthropic", "claude-haiku-4-5").short, Some(300.0));
        // Untouched by models.json: the catalog's lifetimes.
        assert_eq!(
            find("anthropic", "claude-sonnet-4-5"),
            PromptCache {
                short: Some(300.0),
                long: Some(3600.0)
            }
        );
        assert!(w.iter().any(|w| w.contains("promptCache.short")), "{w:?}");
    }

    #[test]
    fn custom_provider_with_defaults() {
        let (r, w) = load(
            r#"{"providers":{"ollama":{"baseUrl":"http://localhost:11434/v1","api":"openai-completions",
                "compat":{"supportsDeveloperRole":false},
                "models":[{"id":"llama3.1:8b"},{"id":"qwen","name":"Qwen","reasoning":true,"input":["text","image"],
                  "contextWindow":32000,"maxTokens":4096,"cost":{"input":1}}]}}}"#,
        );
        assert!(w.is_empty(), "{w:?}");
        let ps = r.unwrap();
        let o = ps.iter().find(|p| p.name == "ollama").unwrap();
        assert!(!o.builtin && !o.requires_key());
        assert_eq!(o.models[0].name, "llama3.1:8b");
        assert_eq!(o.models[0].context_window, 128_000);
        assert_eq!(o.models[0].max_tokens, 16_384);
        assert!(!o.models[0].supports_images());
        assert_eq!(o.models[1].cost.as_ref().unwrap().input, 1.0);
        assert!(o.models[1].supports_images());
        assert_eq!(o.default_entry().unwrap().id, "llama3.1:8b");
    }

    #[test]
    fn repoint_builtin_keeps_models_and_upserts() {
        let (r, _) = load(
            r#"{"providers":{"anthropic":{"baseUrl":"https://proxy/v1","headers":{"x-a":"1"},
                "modelOverrides":{"claude-haiku-4-5":{"maxTokens":1000,"cost":{"output":9}}},
                "models":[{"id":"claude-sonnet-4-5","contextWindow":1000000},{"id":"claude-new"}]}}}"#,
        );
        let ps = r.unwrap();
        let a = ps.iter().find(|p| p.name == "anthropic").unwrap();
        assert_eq!(a.base_url, "https://proxy/v1");
        assert_eq!(a.api, "anthropic-messages");
        assert_eq!(a.headers["x-a"], "1");
        let catalog = builtin_providers()
            .into_iter()
            .find(|p| p.name == "anthropic")
            .unwrap()
            .models
            .len();
        assert_eq!(a.models.len(), catalog + 1, "one model added, one replaced");
        let s = a
            .models
            .iter()
            .find(|m| m.id == "claude-sonnet-4-5")
            .unwrap();
        assert_eq!(s.context_window, 1_000_000);
        let h = a
            .models
            .iter()
            .find(|m| m.id == "claude-haiku-4-5")
            .unwrap();
        assert_eq!(h.max_tokens, 1000);
        assert_eq!(h.cost.as_ref().unwrap().output, 9.0);
        assert_eq!(h.cost.as_ref().unwrap().input, 1.0);
        assert_eq!(a.key_vars().collect::<Vec<_>>(), ["ANTHROPIC_API_KEY"]);
        assert_eq!(
            a.env_vars,
            [
                "ANTHROPIC_AUTH_TOKEN",
                "ANTHROPIC_OAUTH_TOKEN",
                "ANTHROPIC_API_KEY"
            ],
            "every variable 1.6 reads is a credential to hide"
        );
    }

    #[test]
    fn cost_tiers_are_read_whole_or_not_at_all() {
        let (r, w) = load(
            r#"{"providers":{"local":{"baseUrl":"http://l/v1","api":"openai-completions","models":[
                {"id":"long","cost":{"input":1,"tiers":[{"inputTokensAbove":200000,"input":2,
                    "output":3,"cacheRead":0.2,"cacheWrite":2.5}]}},
                {"id":"half","cost":{"input":1,"tiers":[{"inputTokensAbove":200000,"input":2}]}}]}}}"#,
        );
        let ps = r.expect("loads");
        let models = &ps.iter().find(|p| p.name == "local").unwrap().models;
        let long = models[0].cost.as_ref().expect("priced");
        assert_eq!(long.tiers.len(), 1);
        assert_eq!(long.tiers[0].input_tokens_above, 200_000.0);
        assert_eq!(long.tiers[0].cache_write, 2.5);
        assert_eq!(
            models[1].cost, None,
            "a tier missing rates would price at NaN"
        );
        assert_eq!(w.len(), 1, "{w:#?}");
        assert!(w[0].contains("tiers[0].output is missing"), "{}", w[0]);
    }

    #[test]
    fn unusable_cost_values_are_warnings_and_the_model_loads_free() {
        let (r, w) = load(
            r#"{"providers":{"local":{"baseUrl":"http://l/v1","api":"openai-completions","models":[
                {"id":"neg","cost":{"input":-1,"output":15}},
                {"id":"text","cost":{"input":3,"output":"15"}},
                {"id":"nul","cost":{"cacheRead":null}},
                {"id":"flat","cost":5},
                {"id":"ok","cost":{"input":0.5,"cacheWrite":1.25,"tiers":[]}}]},
              "anthropic":{"modelOverrides":{
                "claude-haiku-4-5":{"cost":{"cacheWrite":-2},"maxTokens":9},
                "claude-sonnet-4-5":{"cost":{"output":20}}}}}}"#,
        );
        let ps = r.expect("bad rates do not break the file");
        let local = ps.iter().find(|p| p.name == "local").unwrap();
        assert_eq!(local.models.len(), 5, "every model still loads");
        for id in ["neg", "text", "nul", "flat"] {
            let m = local.models.iter().find(|m| m.id == id).unwrap();
            assert_eq!(m.cost, None, "{id}");
        }
        let ok = local.models.iter().find(|m| m.id == "ok").unwrap();
        assert_eq!(
            ok.cost,
            Some(CostRates {
                input: 0.5,
                output: 0.0,
                cache_read: 0.0,
                cache_write: 1.25,
                tiers: Vec::new(),
            })
        );
        let expect = [
            ("\"neg\"", "cost.input", "-1"),
            ("\"text\"", "cost.output", "\"15\""),
            ("\"nul\"", "cost.cacheRead", "null"),
            ("\"flat\"", "\"cost\" must be an object", "5"),
            ("\"claude-haiku-4-5\"", "cost.cacheWrite", "-2"),
        ];
        assert_eq!(w.len(), expect.len(), "{w:#?}");
        for (warning, (model, key, got)) in w.iter().zip(expect) {
            assert!(
                warning.contains(model)
                    && warning.contains(key)
                    && warning.contains(&format!("got {got}"))
                    && warning.contains("cost 0")
                    && warning.contains("models.json"),
                "{warning}"
            );
        }
        let a = ps.iter().find(|p| p.name == "anthropic").unwrap();
        let haiku = a
            .models
            .iter()
            .find(|m| m.id == "claude-haiku-4-5")
            .unwrap();
        assert_eq!(
            haiku.cost, None,
            "a bad override drops the built-in rates too"
        );
        assert_eq!(
            haiku.max_tokens, 9,
            "the rest of the override still applies"
        );
        let sonnet = a
            .models
            .iter()
            .find(|m| m.id == "claude-sonnet-4-5")
            .unwrap();
        assert_eq!(
            sonnet.cost,
            Some(CostRates {
                input: 3.0,
                output: 20.0,
                cache_read: 0.3,
                cache_write: 3.75,
                tiers: Vec::new(),
            })
        );
    }

    #[test]
    fn builtin_rates_are_pis() {
        // From @mariozechner/pi-ai 0.73.1's model catalog.
        let ps = builtin_providers();
        let rates = |provider: &str, id: &str| {
            let p = ps.iter().find(|p| p.name == provider).unwrap();
            let m = p.models.iter().find(|m| m.id == id).unwrap();
            let c = m.cost.clone().unwrap();
            (c.input, c.output, c.cache_read, c.cache_write)
        };
        assert_eq!(
            rates("anthropic", "claude-sonnet-4-5"),
            (3.0, 15.0, 0.3, 3.75)
        );
        assert_eq!(
            rates("anthropic", "claude-haiku-4-5"),
            (1.0, 5.0, 0.1, 1.25)
        );
        assert_eq!(rates("openai", "gpt-5.1"), (1.25, 10.0, 0.125, 0.0));
        assert_eq!(rates("openai", "gpt-5-mini"), (0.25, 2.0, 0.025, 0.0));
        assert_eq!(rates("openai", "gpt-4.1"), (2.0, 8.0, 0.5, 0.0));
    }

    #[test]
    fn unsupported_api_is_skipped_with_warning() {
        let (r, w) = load(
            r#"{"providers":{"g":{"baseUrl":"x","api":"llama-cpp-classify","models":[{"id":"gem"}]}}}"#,
        );
        assert!(r.unwrap().iter().all(|p| p.name != "g"));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("unsupported api \"llama-cpp-classify\"") && w[0].contains("models.json"),
            "{w:?}"
        );
    }

    #[test]
    fn shape_errors_name_file_and_provider() {
        let (r, _) = load(
            r#"{"providers":{"x":{"baseUrl":"u","api":"openai-completions","models":[{"name":"n"}]}}}"#,
        );
        let msg = r.unwrap_err().to_string();
        assert!(
            msg.contains("models.json") && msg.contains("\"x\"") && msg.contains("id"),
            "{msg}"
        );
        let (r, _) =
            load(r#"{"providers":{"x":{"api":"openai-completions","models":[{"id":"m"}]}}}"#);
        assert!(r.unwrap_err().to_string().contains("baseUrl"));
        let (r, _) = load(r#"{"providers":{"x":{"baseUrl":"u","models":[{"id":"m"}]}}}"#);
        assert!(r.unwrap_err().to_string().contains("\"api\" is required"));
        let (r, _) = load(r#"{"providers": [] }"#);
        assert!(r
            .unwrap_err()
            .to_string()
            .contains("\"providers\" must be an object"));
        let (r, _) = load(r#"{"providers": {"#);
        assert!(matches!(r.unwrap_err(), ConfigError::InvalidJson { .. }));
    }

    #[test]
    fn known_names_get_env_vars() {
        assert_eq!(env_vars_for_provider("groq"), ["GROQ_API_KEY"]);
        assert_eq!(env_vars_for_provider("google"), ["GEMINI_API_KEY"]);
        assert_eq!(
            env_vars_for_provider("qwen-token-plan"),
            ["QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"]
        );
        assert!(env_vars_for_provider("my-llm").is_empty());
        let (r, _) = load(
            r#"{"providers":{"groq":{"baseUrl":"https://api.groq.com/openai/v1","api":"openai-completions","models":[{"id":"llama"}]}}}"#,
        );
        let ps = r.unwrap();
        let g = ps.iter().find(|p| p.name == "groq").unwrap();
        assert!(g.requires_key());
    }
}
