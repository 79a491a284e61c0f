//! The model catalog: built-in providers (`anthropic`, `openai`, `faux`) and pi's `models.json`
//! format layered over them.
//!
//! `models.json` can add providers, re-point a built-in one (an entry with only `baseUrl`,
//! `headers` or `apiKey`), upsert models into it, or tweak built-in models through
//! `modelOverrides`. Providers whose `api` we cannot speak are skipped with a warning rather than
//! failing the whole file, so a `models.json` shared with the TypeScript pi keeps working.
//! Values in `apiKey` and `headers` stay raw here; they are resolved when a model is used.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{deep_merge, read_json_file, ConfigError};

/// Wire APIs a `models.json` provider may use.
pub const SUPPORTED_APIS: [&str; 2] = ["openai-completions", "anthropic-messages"];

/// The offline scripted provider's api name (built in only; not allowed in models.json).
pub(crate) const FAUX_API: &str = "faux";

const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
const DEFAULT_MAX_TOKENS: u64 = 16_384;

/// Environment variables that hold API keys, by provider name (pi's `env-api-keys.ts`, the
/// common part). Custom providers named like these pick up the same variable.
const ENV_API_KEYS: &[(&str, &str)] = &[
    ("anthropic", "ANTHROPIC_API_KEY"),
    ("openai", "OPENAI_API_KEY"),
    ("google", "GEMINI_API_KEY"),
    ("groq", "GROQ_API_KEY"),
    ("openrouter", "OPENROUTER_API_KEY"),
    ("xai", "XAI_API_KEY"),
    ("mistral", "MISTRAL_API_KEY"),
    ("cerebras", "CEREBRAS_API_KEY"),
    ("deepseek", "DEEPSEEK_API_KEY"),
    ("zai", "ZAI_API_KEY"),
    ("together", "TOGETHER_API_KEY"),
    ("fireworks", "FIREWORKS_API_KEY"),
    ("huggingface", "HF_TOKEN"),
    ("moonshotai", "MOONSHOT_API_KEY"),
    ("minimax", "MINIMAX_API_KEY"),
    ("vercel-ai-gateway", "AI_GATEWAY_API_KEY"),
];

/// Every environment variable conventionally holding a provider's API key.
pub(crate) fn known_key_vars() -> impl Iterator<Item = &'static str> {
    ENV_API_KEYS.iter().map(|(_, v)| *v)
}

/// The environment variable conventionally holding `provider`'s API key, if there is one.
pub fn env_var_for_provider(provider: &str) -> Option<&'static str> {
    ENV_API_KEYS
        .iter()
        .find(|(p, _)| *p == provider)
        .map(|(_, v)| *v)
}

/// Prices in dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Cost {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

/// One model of a provider, as configured (values not yet resolved).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelEntry {
    pub id: String,
    pub name: String,
    /// The model's own `api`, when it overrides the provider's.
    pub api: Option<String>,
    pub reasoning: bool,
    /// `"text"`, `"image"`.
    pub input: Vec<String>,
    pub context_window: u64,
    pub max_tokens: u64,
    pub cost: Option<Cost>,
    /// Model-level compat (merged over the provider's when a `Model` is built).
    pub compat: Value,
    /// Model-level headers, raw value syntax.
    pub headers: BTreeMap<String, String>,
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
    pub models: Vec<ModelEntry>,
    pub builtin: bool,
    /// The variable the key is read from, if any.
    pub env_var: Option<String>,
    /// The model chosen for `--provider X` alone.
    pub default_model: Option<String>,
}

impl ProviderConfig {
    /// Whether a request needs a key at all. `faux` does not, and neither does a custom
    /// provider with no `apiKey` and no conventional variable: local servers (Ollama, llama.cpp)
    /// take requests without one.
    pub fn requires_key(&self) -> bool {
        self.api != FAUX_API && (self.builtin || self.env_var.is_some() || self.api_key.is_some())
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
}

fn builtin_model(
    id: &str,
    name: &str,
    reasoning: bool,
    context_window: u64,
    max_tokens: u64,
    cost: (f64, f64, f64, f64),
) -> ModelEntry {
    ModelEntry {
        id: id.to_string(),
        name: name.to_string(),
        api: None,
        reasoning,
        input: vec!["text".to_string(), "image".to_string()],
        context_window,
        max_tokens,
        cost: Some(Cost {
            input: cost.0,
            output: cost.1,
            cache_read: cost.2,
            cache_write: cost.3,
        }),
        compat: Value::Object(Map::new()),
        headers: BTreeMap::new(),
    }
}

/// The built-in providers, in the order used to pick a default when nothing is configured.
pub(crate) fn builtin_providers() -> Vec<ProviderConfig> {
    let provider = |name: &str, api: &str, base_url: &str, default: &str, models| ProviderConfig {
        name: name.to_string(),
        api: api.to_string(),
        base_url: base_url.to_string(),
        api_key: None,
        headers: BTreeMap::new(),
        auth_header: false,
        compat: Value::Object(Map::new()),
        models,
        builtin: true,
        env_var: env_var_for_provider(name).map(str::to_string),
        default_model: Some(default.to_string()),
    };
    let mut faux_model = builtin_model(
        "faux-1",
        "Faux 1",
        false,
        128_000,
        16_384,
        (0.0, 0.0, 0.0, 0.0),
    );
    faux_model.input = vec!["text".to_string()];
    faux_model.cost = None;
    vec![
        provider(
            "anthropic",
            "anthropic-messages",
            "https://api.anthropic.com",
            "claude-opus-4-8",
            vec![
                builtin_model(
                    "claude-opus-4-8",
                    "Claude Opus 4.8",
                    true,
                    200_000,
                    64_000,
                    (5.0, 25.0, 0.5, 6.25),
                ),
                builtin_model(
                    "claude-sonnet-4-5",
                    "Claude Sonnet 4.5",
                    true,
                    200_000,
                    64_000,
                    (3.0, 15.0, 0.3, 3.75),
                ),
                builtin_model(
                    "claude-haiku-4-5",
                    "Claude Haiku 4.5",
                    true,
                    200_000,
                    64_000,
                    (1.0, 5.0, 0.1, 1.25),
                ),
            ],
        ),
        provider(
            "openai",
            "openai-completions",
            "https://api.openai.com/v1",
            "gpt-5.1",
            vec![
                builtin_model(
                    "gpt-5.1",
                    "GPT-5.1",
                    true,
                    400_000,
                    128_000,
                    (1.25, 10.0, 0.125, 0.0),
                ),
                builtin_model(
                    "gpt-5-mini",
                    "GPT-5 Mini",
                    true,
                    400_000,
                    128_000,
                    (0.25, 2.0, 0.025, 0.0),
                ),
                builtin_model(
                    "gpt-4.1",
                    "GPT-4.1",
                    false,
                    1_047_576,
                    32_768,
                    (2.0, 8.0, 0.5, 0.0),
                ),
            ],
        ),
        provider("faux", FAUX_API, "", "faux-1", vec![faux_model]),
    ]
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
    cost: Option<Cost>,
    compat: Option<Value>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawOverride {
    name: Option<String>,
    reasoning: Option<bool>,
    input: Option<Vec<String>>,
    context_window: Option<u64>,
    max_tokens: Option<u64>,
    /// Partial: merged over the built-in cost.
    cost: Option<Value>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    compat: Option<Value>,
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
    let invalid = |message: String| ConfigError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let Value::Object(mut root) = root else {
        return Err(invalid(
            "models.json must be a JSON object with a \"providers\" object".to_string(),
        ));
    };
    let entries = match root.remove("providers") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(invalid(format!(
                "\"providers\" must be an object, got {other}"
            )))
        }
    };

    for (name, raw) in entries {
        let raw: RawProvider = serde_json::from_value(raw)
            .map_err(|e| invalid(format!("provider \"{name}\": {e}")))?;
        let warn = |msg: String| format!("{}: provider \"{name}\": {msg}", path.display());

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
            return Err(invalid(format!(
                "provider \"{name}\": \"compat\" must be an object"
            )));
        }

        let mut models = Vec::new();
        for m in raw.models.unwrap_or_default() {
            if m.id.is_empty() {
                return Err(invalid(format!(
                    "provider \"{name}\": a model has an empty \"id\""
                )));
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
                return Err(invalid(format!(
                    "provider \"{name}\": model \"{}\": \"compat\" must be an object",
                    m.id
                )));
            }
            models.push(ModelEntry {
                name: m.name.unwrap_or_else(|| m.id.clone()),
                id: m.id,
                api: m.api,
                reasoning: m.reasoning,
                input: m.input.unwrap_or_else(|| vec!["text".to_string()]),
                context_window: m.context_window.unwrap_or(DEFAULT_CONTEXT_WINDOW),
                max_tokens: m.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
                cost: m.cost,
                compat: m.compat.unwrap_or_else(|| Value::Object(Map::new())),
                headers: m.headers,
            });
        }

        if let Some(existing) = providers.iter_mut().find(|p| p.name == name) {
            // Re-point / extend a provider defined earlier (a built-in one).
            if let Some(url) = raw.base_url {
                existing.base_url = url;
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
            for (id, ov) in raw.model_overrides {
                let Some(model) = existing.models.iter_mut().find(|m| m.id == id) else {
                    warnings.push(warn(format!(
                        "modelOverrides: no built-in model \"{id}\"; ignored"
                    )));
                    continue;
                };
                apply_override(model, ov).map_err(|e| {
                    invalid(format!("provider \"{name}\": modelOverrides \"{id}\": {e}"))
                })?;
            }
            for m in models {
                match existing.models.iter_mut().find(|e| e.id == m.id) {
                    Some(slot) => *slot = m,
                    None => existing.models.push(m),
                }
            }
            continue;
        }

        // A new provider.
        let Some(base_url) = raw.base_url else {
            if models.is_empty() {
                warnings.push(warn(
                    "not a built-in provider and defines no models; ignored".to_string(),
                ));
                continue;
            }
            return Err(invalid(format!(
                "provider \"{name}\": a custom provider needs \"baseUrl\""
            )));
        };
        if models.is_empty() {
            warnings.push(warn("defines no models; ignored".to_string()));
            continue;
        }
        let api = match raw.api {
            Some(api) => api,
            None => match models.iter().all(|m| m.api.is_some()) {
                // Every model names its own api; the provider-level one is only a fallback.
                true => models[0].api.clone().unwrap_or_default(),
                false => {
                    return Err(invalid(format!(
                        "provider \"{name}\": \"api\" is required (one of {})",
                        SUPPORTED_APIS.join(", ")
                    )))
                }
            },
        };
        if !raw.model_overrides.is_empty() {
            warnings.push(warn(
                "modelOverrides only apply to built-in providers; ignored".to_string(),
            ));
        }
        providers.push(ProviderConfig {
            env_var: env_var_for_provider(&name).map(str::to_string),
            name,
            api,
            base_url,
            api_key: raw.api_key,
            headers: raw.headers,
            auth_header: raw.auth_header,
            compat: raw.compat.unwrap_or_else(|| Value::Object(Map::new())),
            models,
            builtin: false,
            default_model: None,
        });
    }
    Ok(())
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
    if let Some(cost) = ov.cost {
        let base = model.cost.unwrap_or_default();
        let mut merged = serde_json::json!({
            "input": base.input, "output": base.output,
            "cacheRead": base.cache_read, "cacheWrite": base.cache_write,
        });
        deep_merge(&mut merged, cost);
        model.cost = Some(serde_json::from_value(merged).map_err(|e| format!("cost: {e}"))?);
    }
    model.headers.extend(ov.headers);
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
        assert_eq!(o.models[1].cost.unwrap().input, 1.0);
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
        assert_eq!(a.models.len(), 4);
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
        assert_eq!(h.cost.unwrap().output, 9.0);
        assert_eq!(h.cost.unwrap().input, 1.0);
        assert_eq!(a.env_var.as_deref(), Some("ANTHROPIC_API_KEY"));
    }

    #[test]
    fn unsupported_api_is_skipped_with_warning() {
        let (r, w) = load(
            r#"{"providers":{"g":{"baseUrl":"x","api":"google-generative-ai","models":[{"id":"gem"}]}}}"#,
        );
        assert!(r.unwrap().iter().all(|p| p.name != "g"));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("unsupported api \"google-generative-ai\"")
                && w[0].contains("models.json"),
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
        assert_eq!(env_var_for_provider("groq"), Some("GROQ_API_KEY"));
        assert_eq!(env_var_for_provider("google"), Some("GEMINI_API_KEY"));
        assert_eq!(env_var_for_provider("my-llm"), None);
        let (r, _) = load(
            r#"{"providers":{"groq":{"baseUrl":"https://api.groq.com/openai/v1","api":"openai-completions","models":[{"id":"llama"}]}}}"#,
        );
        let ps = r.unwrap();
        let g = ps.iter().find(|p| p.name == "groq").unwrap();
        assert!(g.requires_key());
    }
}
