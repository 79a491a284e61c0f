//! pi 1.6's built-in providers and models, from the data file `catalog.json` beside this
//! module (written from the pinned TypeScript packages by `tests/ts-pi/gen-catalog.mjs`).
//!
//! `build.rs` turns the file into [`CATALOG`]: each provider's head as constants and its models
//! as one JSON string, read into [`ModelEntry`]s only when that provider's list is first used
//! ([`super::model_list::ModelList`]). Providers whose API pi does not speak yet stay in the
//! data (so the file is 1.6's, whole) and are left out of the registry by
//! [`builtin_providers`], which names them in [`unsupported`].

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::model_list::ModelList;
use super::models::{ModelEntry, ProviderConfig, SUPPORTED_APIS};
use crate::provider::cost::CostRates;
use crate::provider::PromptCache;

/// One provider of the catalog, as `build.rs` writes it.
#[derive(Debug)]
pub struct CatalogProvider {
    pub name: &'static str,
    pub display_name: &'static str,
    /// The API most of its models use (a model may name its own).
    pub api: &'static str,
    pub base_url: &'static str,
    /// Where its key is read from, in order.
    pub env_vars: &'static [&'static str],
    /// Whether pi 1.6 offers a subscription login for it.
    pub oauth: bool,
    pub default_model: &'static str,
    /// Its models as a JSON array.
    pub models: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/catalog.rs"));

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CatalogModel {
    id: String,
    name: String,
    api: Option<String>,
    base_url: Option<String>,
    #[serde(default)]
    reasoning: bool,
    input: Vec<String>,
    #[serde(default)]
    cost: CostRates,
    context_window: u64,
    max_tokens: u64,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    compat: Option<Value>,
    #[serde(default)]
    prompt_cache: PromptCache,
    thinking_level_map: Option<Value>,
}

impl From<CatalogModel> for ModelEntry {
    fn from(m: CatalogModel) -> ModelEntry {
        ModelEntry {
            id: m.id,
            name: m.name,
            api: m.api,
            base_url: m.base_url,
            reasoning: m.reasoning,
            input: m.input,
            context_window: m.context_window,
            max_tokens: m.max_tokens,
            cost: Some(m.cost),
            compat: m.compat.unwrap_or_else(|| Value::Object(Map::new())),
            headers: m.headers,
            prompt_cache: m.prompt_cache,
            thinking_level_map: crate::provider::thinking_map::parse(m.thinking_level_map.as_ref()),
        }
    }
}

/// One provider's models, parsed from its catalog JSON. The build checked the file is JSON; a
/// model this version cannot read, or whose API pi does not speak, is left out rather than
/// taking the provider down with it.
pub fn models_of(json: &'static str) -> Vec<ModelEntry> {
    let raw: Vec<Value> = serde_json::from_str(json).unwrap_or_default();
    raw.into_iter()
        .filter_map(|m| serde_json::from_value::<CatalogModel>(m).ok())
        .map(ModelEntry::from)
        .filter(|m| m.api.as_deref().is_none_or(is_supported))
        .collect()
}

fn is_supported(api: &str) -> bool {
    SUPPORTED_APIS.contains(&api)
}

/// The catalog's providers pi can talk to, in pi 1.6's default-selection order, each with its
/// models still unread.
pub fn builtin_providers() -> Vec<ProviderConfig> {
    CATALOG
        .iter()
        .filter(|p| is_supported(p.api))
        .map(|p| ProviderConfig {
            name: p.name.to_string(),
            api: p.api.to_string(),
            base_url: p.base_url.to_string(),
            api_key: None,
            headers: BTreeMap::new(),
            auth_header: false,
            compat: Value::Object(Map::new()),
            models: ModelList::lazy(models_of, p.models),
            builtin: true,
            env_vars: p.env_vars.iter().map(|v| v.to_string()).collect(),
            default_model: Some(p.default_model.to_string()),
            owner: None,
            oauth: None,
        })
        .collect()
}

/// The catalog's providers whose API pi does not speak yet, with that API.
pub fn unsupported() -> impl Iterator<Item = &'static CatalogProvider> {
    CATALOG.iter().filter(|p| !is_supported(p.api))
}

/// The header a built-in provider's key goes in instead of the API's own, where pi 1.6's auth
/// code for that provider says so (the data file has keys and URLs, not this).
pub fn key_header(provider: &str) -> Option<&'static str> {
    match provider {
        "cloudflare-ai-gateway" => Some("cf-aig-authorization"),
        _ => None,
    }
}

/// The `{NAME}` placeholders in a base URL (upper-case names: variables), as 1.6 fills them
/// from the credential's `env` object or the environment.
pub fn url_vars(url: &str) -> impl Iterator<Item = &str> {
    url.split('{').skip(1).filter_map(|rest| {
        let name = rest.split_once('}')?.0;
        let is_var = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        is_var.then_some(name)
    })
}

/// `url` with each variable placeholder replaced by `value(name)`; unknown ones stay.
pub fn fill_url_vars(url: &str, value: impl Fn(&str) -> Option<String>) -> String {
    let mut out = url.to_string();
    for name in url_vars(url) {
        if let Some(v) = value(name).filter(|v| !v.is_empty()) {
            out = out.replace(&format!("{{{name}}}"), &v);
        }
    }
    out
}

/// The catalog entry of `name`.
pub fn entry(name: &str) -> Option<&'static CatalogProvider> {
    CATALOG.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_placeholders_are_upper_case_variables() {
        let url = "https://gw/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/openai";
        assert_eq!(
            url_vars(url).collect::<Vec<_>>(),
            ["CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"]
        );
        assert_eq!(url_vars("https://{location}-x.com/{}").count(), 0);
        let filled = fill_url_vars(url, |n| {
            (n == "CLOUDFLARE_ACCOUNT_ID").then(|| "acc".into())
        });
        assert_eq!(filled, "https://gw/v1/acc/{CLOUDFLARE_GATEWAY_ID}/openai");
    }

    #[test]
    fn start_up_reads_no_models_and_every_provider_reads_whole() {
        let providers = builtin_providers();
        assert!(providers.iter().all(|p| !p.models.is_loaded()));
        for p in &providers {
            let raw: Vec<Value> = serde_json::from_str(entry(&p.name).unwrap().models).unwrap();
            let spoken = raw
                .iter()
                .filter(|m| m["api"].as_str().is_none_or(is_supported))
                .count();
            assert_eq!(p.models.len(), spoken, "{}: a model failed to read", p.name);
            assert!(p.default_entry().is_some(), "{}", p.name);
        }
        let names: Vec<&str> = providers.iter().map(|p| p.name.as_str()).take(3).collect();
        assert_eq!(
            names,
            ["amazon-bedrock", "ant-ling", "anthropic"],
            "1.6's default order"
        );
        assert!(
            unsupported().next().is_none(),
            "every API of 1.6's catalog is spoken"
        );
    }

    #[test]
    fn thinking_level_maps_are_read() {
        let openai = builtin_providers()
            .into_iter()
            .find(|p| p.name == "openai")
            .unwrap();
        let gpt5 = openai.models.iter().find(|m| m.id == "gpt-5").unwrap();
        assert_eq!(gpt5.thinking_level_map.get("off"), Some(&None));
        assert_eq!(
            gpt5.thinking_level_map.get("low"),
            Some(&Some("low".to_string()))
        );
    }

    #[test]
    fn per_model_apis_and_urls_survive() {
        let opencode = builtin_providers()
            .into_iter()
            .find(|p| p.name == "opencode")
            .unwrap();
        let claude = opencode
            .models
            .iter()
            .find(|m| m.api.as_deref() == Some("anthropic-messages"))
            .expect("an anthropic-messages model on opencode");
        assert_eq!(
            claude.base_url.as_deref(),
            Some("https://opencode.ai/inference/anthropic")
        );
    }
}
