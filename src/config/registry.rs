//! The model registry: built-in providers plus `models.json`, the stored credentials from
//! `auth.json`, and the environment, answering "which models exist", "which are usable" and
//! "what key does this request send".
//!
//! Key lookup follows pi's order: `--api-key`, then `auth.json`, then the provider's environment
//! variable, then `apiKey` in models.json. Availability is decided without running `!command`
//! values (it only checks that some credential is configured), so listing models never has side
//! effects; commands run only when a key or header is actually needed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::auth::{AuthEntry, AuthFile};
use super::collate;
use super::hook_providers::{apply_hook_provider, Applied, HookProviderError};
use super::models::{apply_models_json, builtin_providers, ModelEntry, ProviderConfig, FAUX_API};
use super::scope::ForeignEnv;
use super::value::{
    referenced_vars, resolve_value, value_is_configured, value_origin, ValueOrigin,
};
use super::{auth_path, deep_merge, models_path, ConfigError, Env};
use crate::provider::headers::ModelHeader;
use crate::provider::{Model, ModelAuth};

/// Providers, models and credentials, loaded once per run (or per `/model`).
#[derive(Clone)]
pub struct ModelRegistry {
    agent_dir: PathBuf,
    models_path: PathBuf,
    providers: Vec<ProviderConfig>,
    auth: AuthFile,
    env: Arc<dyn Env>,
    warnings: Vec<String>,
}

impl std::fmt::Debug for ModelRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Deliberately leaves out credentials.
        f.debug_struct("ModelRegistry")
            .field("agent_dir", &self.agent_dir)
            .field(
                "providers",
                &self.providers.iter().map(|p| &p.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl ModelRegistry {
    /// Loads `models.json` and `auth.json` from `agent_dir` over the built-in providers, and
    /// returns the registry with the warnings met on the way (skipped providers, ignored
    /// entries) for stderr. Missing files are fine; unreadable or malformed ones are errors
    /// naming the file. The environment is kept for later key lookups.
    pub fn load<E: Env + Clone + 'static>(
        agent_dir: &Path,
        env: &E,
    ) -> Result<(Self, Vec<String>), ConfigError> {
        let registry = Self::load_shared(agent_dir, Arc::new(env.clone()))?;
        let warnings = registry.warnings.clone();
        Ok((registry, warnings))
    }

    /// [`load`](Self::load) with an environment shared with other owners.
    pub fn load_shared(agent_dir: &Path, env: Arc<dyn Env>) -> Result<Self, ConfigError> {
        let mut warnings = Vec::new();
        let mut providers = builtin_providers();
        let models_path = models_path(agent_dir);
        apply_models_json(&models_path, &mut providers, &mut warnings)?;
        let auth = AuthFile::load(&auth_path(agent_dir), &mut warnings)?;
        Ok(ModelRegistry {
            agent_dir: agent_dir.to_path_buf(),
            models_path,
            providers,
            auth,
            env,
            warnings,
        })
    }

    /// Adds a provider a hook registered (`provider.register`), checked as one models.json
    /// entry and applied over what the files configured under the rule of
    /// [`apply_hook_provider`]: the hook's values resolve in `env` (its own environment), it
    /// cannot redirect a provider whose key is not its own, and a provider it defines or takes
    /// over gets no key of the user's. `from` names the registration in errors.
    pub fn add_provider(
        &mut self,
        from: &str,
        name: &str,
        entry: &Value,
        env: &Arc<ForeignEnv>,
    ) -> Result<Applied, HookProviderError> {
        apply_hook_provider(&mut self.providers, name, entry, env, Path::new(from))
    }

    /// This registry with `auth.json` read again (after a login or logout changed it): the
    /// providers, hooks' included, stay as they are.
    pub fn with_auth_reread(&self) -> Result<ModelRegistry, ConfigError> {
        let mut warnings = self.warnings.clone();
        let auth = AuthFile::load(&auth_path(&self.agent_dir), &mut warnings)?;
        Ok(ModelRegistry {
            agent_dir: self.agent_dir.clone(),
            models_path: self.models_path.clone(),
            providers: self.providers.clone(),
            auth,
            env: self.env.clone(),
            warnings,
        })
    }

    /// Takes back provider `name` of hook `hook` (a late `provider.unregister`): a provider the
    /// hook defined goes, one it took over is again what the files make of it (`files`: the
    /// registry of the built-ins and models.json alone). False when the hook owns no `name`.
    pub fn remove_hook_provider(
        &mut self,
        hook: &str,
        name: &str,
        files: impl FnOnce() -> Option<ModelRegistry>,
    ) -> bool {
        let Some(i) = self
            .providers
            .iter()
            .position(|p| p.name == name && p.owning_hook() == Some(hook))
        else {
            return false;
        };
        match files().and_then(|f| f.providers.into_iter().find(|p| p.name == name)) {
            Some(original) => self.providers[i] = original,
            None => {
                self.providers.remove(i);
            }
        }
        true
    }

    /// Problems that did not stop loading (skipped providers, ignored entries), for stderr.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    pub fn agent_dir(&self) -> &Path {
        &self.agent_dir
    }

    /// All providers: built-ins first (anthropic, openai, faux), then models.json order.
    pub fn providers(&self) -> &[ProviderConfig] {
        &self.providers
    }

    /// A provider by name; exact first, then case-insensitive.
    pub fn provider(&self, name: &str) -> Option<&ProviderConfig> {
        self.providers.iter().find(|p| p.name == name).or_else(|| {
            self.providers
                .iter()
                .find(|p| p.name.eq_ignore_ascii_case(name))
        })
    }

    /// A model by exact provider and id.
    pub fn find(&self, provider: &str, id: &str) -> Option<(&ProviderConfig, &ModelEntry)> {
        let p = self.provider(provider)?;
        p.models.iter().find(|m| m.id == id).map(|m| (p, m))
    }

    pub(crate) fn env(&self) -> &dyn Env {
        self.env.as_ref()
    }

    /// The environment, shared (to load the files again in it).
    pub(crate) fn shared_env(&self) -> Arc<dyn Env> {
        self.env.clone()
    }

    /// Whether some credential is configured for `provider` (no commands are run), or the
    /// provider needs none. This is what "available" means for listing and default selection.
    pub fn has_configured_auth(&self, provider: &str) -> bool {
        let Some(p) = self.provider(provider) else {
            return false;
        };
        let env = self.env();
        let set = |name: &str| env.var(name).is_some_and(|v| !v.is_empty());
        if !p.requires_key() {
            return true;
        }
        if let Some(owner) = p.owner.as_deref() {
            // A hook's provider: its own key, in its own environment, or the login it brought,
            // and nothing else.
            return p
                .api_key
                .as_deref()
                .is_some_and(|k| value_is_configured(k, owner))
                || self.login(p).is_some();
        }
        if !self.missing_url_vars(p, &p.base_url).is_empty() {
            return false;
        }
        if self.login(p).is_some() {
            return true;
        }
        if let Some(AuthEntry::ApiKey { key, env: var, .. }) = self.auth.get(&p.name) {
            if key.as_deref().is_some_and(|k| value_is_configured(k, env))
                || var.as_deref().is_some_and(set)
            {
                return true;
            }
        }
        p.key_vars().any(set)
            || self.bedrock_ambient(p)
            || p.api_key
                .as_deref()
                .is_some_and(|k| value_is_configured(k, env))
            || (is_vertex(p) && self.vertex_adc(p).is_ok())
    }

    /// Whether `p` (Vertex AI) can sign in with Application Default Credentials, as 1.6's
    /// Vertex auth decides it: a credentials file (`GOOGLE_APPLICATION_CREDENTIALS`, else
    /// gcloud's `~/.config/gcloud/application_default_credentials.json`) that exists, a
    /// project (`GOOGLE_CLOUD_PROJECT`, else `GCLOUD_PROJECT`) and a location
    /// (`GOOGLE_CLOUD_LOCATION`), each from the credential's `env` object before the
    /// environment. The error says what is missing.
    fn vertex_adc(&self, p: &ProviderConfig) -> Result<(), String> {
        let vars = self.credential_vars(p);
        let env = |n: &str| self.env().var(n).filter(|v| !v.trim().is_empty());
        // A stored value counts as it is (1.6's `??`), the environment's only when not blank.
        let get = |n: &str| vars.get(n).cloned().or_else(|| env(n));
        let home = self.env().home_dir();
        let (file, named) = match get("GOOGLE_APPLICATION_CREDENTIALS") {
            Some(named) => (named, true),
            None => (VERTEX_ADC_PATH.to_string(), false),
        };
        let path = crate::provider::gcp_auth::expand_home(&file, home.as_deref());
        let mut missing = Vec::new();
        if file.is_empty() || !path.exists() {
            missing.push(if named {
                format!(
                    "the credentials file {} (GOOGLE_APPLICATION_CREDENTIALS) does not exist",
                    path.display()
                )
            } else {
                format!(
                    "no credentials file ({} does not exist; run `gcloud auth \
                     application-default login` or set GOOGLE_APPLICATION_CREDENTIALS)",
                    path.display()
                )
            });
        }
        let project = vars
            .get("GOOGLE_CLOUD_PROJECT")
            .cloned()
            .or_else(|| env("GOOGLE_CLOUD_PROJECT"))
            .or_else(|| env("GCLOUD_PROJECT"));
        if project.is_none_or(|v| v.is_empty()) {
            missing.push("GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT) is not set".to_string());
        }
        if get("GOOGLE_CLOUD_LOCATION").is_none_or(|v| v.is_empty()) {
            missing.push("GOOGLE_CLOUD_LOCATION is not set".to_string());
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(missing.join("; "))
        }
    }

    /// Whether `p` speaks Bedrock and the environment (or its credential's `env`) names an AWS
    /// credential source: Bedrock has no single key variable (1.6's `amazon-bedrock` auth).
    fn bedrock_ambient(&self, p: &ProviderConfig) -> bool {
        if p.api != crate::provider::bedrock::BEDROCK_API {
            return false;
        }
        let vars = self.credential_vars(p);
        crate::provider::bedrock_auth::has_ambient_credentials(|n| {
            vars.get(n).cloned().or_else(|| self.env().var(n))
        })
    }

    /// `p`'s stored subscription login, when pi can use it: a stored login owns its provider
    /// (as in 1.6, the environment's key is not consulted then).
    fn login(
        &self,
        p: &ProviderConfig,
    ) -> Option<(&'static dyn crate::oauth::OAuthFlow, crate::oauth::Tokens)> {
        let Some(AuthEntry::OAuth(Some(tokens))) = self.auth.get(&p.name) else {
            return None;
        };
        let flow = self.login_flow(&p.name)?;
        // A hook's login serves only the tokens its own token endpoint issued.
        if p.oauth.is_some_and(|f| !f.issued(tokens)) {
            return None;
        }
        Some((flow, tokens.clone()))
    }

    /// How a user signs in to `provider`: pi's login for a provider no hook owns, the
    /// owning hook's (`provider.register`'s `oauth`) for one a hook does.
    pub fn login_flow(&self, provider: &str) -> Option<&'static dyn crate::oauth::OAuthFlow> {
        match self.provider(provider) {
            Some(p) if p.owner.is_some() => p.oauth.map(|f| f as &dyn crate::oauth::OAuthFlow),
            _ => crate::oauth::flow(provider),
        }
    }

    /// Every login a user can sign in with here: pi's, in 1.6's order, then hooks'.
    pub fn login_flows(&self) -> Vec<&'static dyn crate::oauth::OAuthFlow> {
        let mut flows: Vec<_> = crate::oauth::flows()
            .filter(|f| self.login_flow(f.provider()).is_some())
            .collect();
        flows.extend(
            self.providers
                .iter()
                .filter(|p| p.owner.is_some())
                .filter_map(|p| p.oauth.map(|f| f as &dyn crate::oauth::OAuthFlow)),
        );
        flows
    }

    /// `provider`'s stored login as a token source of its own (`pi auth print-bearer-token`).
    pub fn stored_login(&self, provider: &str) -> Option<crate::oauth::stored::StoredLogin> {
        let (client, tokens) = self.login(self.provider(provider)?)?;
        Some(crate::oauth::stored::StoredLogin::new(
            client,
            self.auth.path.clone(),
            tokens,
        ))
    }

    /// What auth.json stores for `provider`, if anything: `"oauth"` or `"api_key"` (1.6's
    /// credential types).
    pub fn stored_credential_type(&self, provider: &str) -> Option<&'static str> {
        match self.auth.get(provider)? {
            AuthEntry::OAuth(_) => Some("oauth"),
            AuthEntry::ApiKey { .. } => Some("api_key"),
        }
    }

    /// Whether auth.json holds a login for `provider` that this pi cannot use.
    fn unusable_login(&self, provider: &str) -> bool {
        matches!(self.auth.get(provider), Some(AuthEntry::OAuth(_)))
            && self
                .provider(provider)
                .and_then(|p| self.login(p))
                .is_none()
    }

    /// The variables `p`'s credential stores besides its key (auth.json's `env` object).
    fn credential_vars(&self, p: &ProviderConfig) -> BTreeMap<String, String> {
        match self.auth.get(&p.name) {
            Some(AuthEntry::ApiKey { vars, .. }) if p.owner.is_none() => vars.clone(),
            _ => BTreeMap::new(),
        }
    }

    /// The variables `url` names that neither `p`'s credential nor the environment sets.
    fn missing_url_vars(&self, p: &ProviderConfig, url: &str) -> Vec<String> {
        let vars = self.credential_vars(p);
        super::catalog::url_vars(url)
            .filter(|n| {
                vars.get(*n).is_none_or(|v| v.is_empty())
                    && self.env().var(n).is_none_or(|v| v.is_empty())
            })
            .map(str::to_string)
            .collect()
    }

    /// The API key for `provider`: `cli_key` (`--api-key`), else `auth.json`, else the
    /// provider's environment variable, else `apiKey` from models.json. `Ok(None)` when nothing
    /// is configured. A failing `!command` is an error naming where the value came from.
    pub fn api_key_for(
        &self,
        provider: &str,
        cli_key: Option<&str>,
    ) -> Result<Option<String>, ConfigError> {
        let p = self.provider(provider);
        if let Some(p) = p.filter(|p| p.owner.is_some()) {
            return self.hook_key(p, cli_key);
        }
        if let Some(k) = cli_key.filter(|k| !k.is_empty()) {
            return Ok(Some(k.to_string()));
        }
        let env = self.env();
        let name = p.map_or(provider, |p| p.name.as_str());

        if let Some(AuthEntry::ApiKey { key, env: var, .. }) = self.auth.get(name) {
            if let Some(raw) = key {
                let context = format!("{}: key for provider \"{name}\"", self.auth.path.display());
                let v = resolve_value(raw, env)
                    .map_err(|source| ConfigError::Value { context, source })?;
                if let Some(v) = v.filter(|v| !v.is_empty()) {
                    return Ok(Some(v));
                }
            }
            if let Some(v) = var.as_deref().and_then(|n| env.var(n)) {
                if !v.is_empty() {
                    return Ok(Some(v));
                }
            }
        }

        let vars: Vec<String> = match p {
            Some(p) => p.key_vars().map(str::to_string).collect(),
            None => super::env_vars_for_provider(name),
        };
        if let Some(v) = vars
            .iter()
            .filter_map(|n| env.var(n))
            .find(|v| !v.is_empty())
        {
            return Ok(Some(v));
        }

        if let Some(raw) = p.and_then(|p| p.api_key.as_deref()) {
            let context = format!(
                "{}: apiKey of provider \"{name}\"",
                self.models_path.display()
            );
            let v =
                resolve_value(raw, env).map_err(|source| ConfigError::Value { context, source })?;
            return Ok(v.filter(|v| !v.is_empty()));
        }
        Ok(None)
    }

    /// The key of a provider a hook owns: the hook's `apiKey`, resolved in the hook's
    /// environment; never `--api-key`, auth.json or pi's environment.
    fn hook_key(
        &self,
        p: &ProviderConfig,
        cli_key: Option<&str>,
    ) -> Result<Option<String>, ConfigError> {
        let hook = p.owning_hook().unwrap_or("?").to_string();
        if cli_key.is_some_and(|k| !k.is_empty()) {
            return Err(ConfigError::KeyForHookProvider {
                provider: p.name.clone(),
                hook,
            });
        }
        let (Some(raw), Some(owner)) = (p.api_key.as_deref(), p.owner.as_deref()) else {
            return Ok(None);
        };
        let context = format!("apiKey of provider \"{}\" (from hook {hook})", p.name);
        owner
            .resolve(raw)
            .map(|v| Some(v).filter(|v| !v.is_empty()))
            .map_err(|source| ConfigError::Foreign { context, source })
    }

    /// Every environment variable pi may read a credential from: the conventional provider
    /// variables, each provider's own, the `$VAR`s of `apiKey` and header values in
    /// models.json, and the keys and `env` names of auth.json. The model's shell must not see
    /// them (SPEC 4.9); whether they are set does not matter.
    pub fn credential_env_vars(&self) -> BTreeSet<String> {
        let mut names: BTreeSet<String> = super::models::known_key_vars()
            .chain(crate::provider::bedrock_auth::SECRET_VARS)
            .map(str::to_string)
            .collect();
        for p in &self.providers {
            names.extend(p.env_vars.iter().cloned());
            let raws = p
                .api_key
                .iter()
                .chain(p.headers.values())
                .chain(p.models.iter().flat_map(|m| m.headers.values()));
            for raw in raws {
                names.extend(referenced_vars(raw));
            }
        }
        for entry in self.auth.entries.values() {
            if let AuthEntry::ApiKey { key, env, .. } = entry {
                names.extend(key.iter().flat_map(|k| referenced_vars(k)));
                names.extend(env.iter().cloned());
            }
        }
        names
    }

    /// Like [`api_key_for`](Self::api_key_for) for a chosen model, but a provider that needs a
    /// key and has none is an error telling the user how to configure one.
    /// A stored login supplies the model's key itself (the result is `None`); `--api-key`
    /// replaces it.
    pub fn require_api_key(
        &self,
        model: &mut Model,
        cli_key: Option<&str>,
    ) -> Result<Option<String>, ConfigError> {
        if cli_key.is_some_and(|k| !k.is_empty()) {
            model.auth.token = None;
        } else if model.auth.token.is_some() {
            return Ok(None);
        }
        let key = self.api_key_for(&model.provider, cli_key)?;
        let Some(p) = self.provider(&model.provider) else {
            return Ok(key);
        };
        let vars = self.missing_url_vars(p, &model.base_url);
        if !vars.is_empty() {
            return Err(ConfigError::MissingProviderVars {
                provider: p.name.clone(),
                vars,
                auth_path: self.auth.path.clone(),
            });
        }
        if key.is_some() {
            return Ok(key);
        }
        if !p.requires_key() || self.bedrock_ambient(p) {
            return Ok(None);
        }
        let adc = is_vertex(p).then(|| self.vertex_adc(p));
        if let Some(Ok(())) = adc {
            // Application Default Credentials: the provider signs in itself.
            return Ok(None);
        }
        if let Some(hook) = p.owning_hook() {
            let hint = match p.oauth {
                Some(_) => format!(
                    "It belongs to hook {hook}, whose login for it is not signed in: sign in \
                     with /login {}.",
                    p.name
                ),
                None => format!(
                    "It belongs to hook {hook}, whose apiKey for it is empty; only the hook \
                     supplies its key."
                ),
            };
            return Err(ConfigError::MissingApiKey {
                provider: p.name.clone(),
                hint,
            });
        }
        let mut hint = String::new();
        if self.unusable_login(&p.name) {
            hint.push_str(&format!(
                "{} holds an OAuth login for it, which this pi does not support yet. ",
                self.auth.path.display()
            ));
        }
        let mut ways = Vec::new();
        if let Some(v) = p.key_vars().next() {
            ways.push(format!("set {v}"));
        }
        if let Some(Err(missing)) = &adc {
            ways.push(format!(
                "use Application Default Credentials, which need a credentials file, \
                 GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION (here: {missing})"
            ));
        }
        ways.push("pass --api-key".to_string());
        ways.push(format!(
            "add {{\"{}\": {{\"type\": \"api_key\", \"key\": \"…\"}}}} to {}",
            p.name,
            self.auth.path.display()
        ));
        hint.push_str(&format!("To fix: {}.", ways.join(", or ")));
        Err(ConfigError::MissingApiKey {
            provider: p.name.clone(),
            hint,
        })
    }

    /// Builds the [`Model`] for one catalog entry: headers resolved (provider then model; a
    /// header whose variable is unset is left out), compat merged (model over provider), and
    /// the entry's rates (zero when it has none).
    pub fn build_model(
        &self,
        provider: &ProviderConfig,
        entry: &ModelEntry,
    ) -> Result<Model, ConfigError> {
        let mut headers = std::collections::BTreeMap::new();
        for (k, raw) in provider.headers.iter().chain(entry.headers.iter()) {
            let resolved = match provider.owner.as_deref() {
                Some(owner) => owner.resolve(raw).map(Some).map_err(|source| {
                    let context = format!(
                        "header \"{k}\" of provider \"{}\" (from hook {})",
                        provider.name,
                        provider.owning_hook().unwrap_or("?")
                    );
                    ConfigError::Foreign { context, source }
                })?,
                None => {
                    let context = format!(
                        "{}: header \"{k}\" of provider \"{}\"",
                        self.models_path.display(),
                        provider.name
                    );
                    resolve_value(raw, self.env())
                        .map_err(|source| ConfigError::Value { context, source })?
                }
            };
            match resolved {
                Some(v) => {
                    let header = match value_origin(raw) {
                        ValueOrigin::Literal => ModelHeader::literal(v),
                        ValueOrigin::Command | ValueOrigin::Environment => {
                            ModelHeader::credential(v)
                        }
                    };
                    headers.insert(k.clone(), header);
                }
                None => {
                    headers.remove(k);
                }
            }
        }
        let mut compat = provider.compat.clone();
        deep_merge(&mut compat, entry.compat.clone());
        if provider.auth_header {
            if let Value::Object(map) = &mut compat {
                map.insert("authHeader".to_string(), Value::Bool(true));
            }
        }
        let auth = ModelAuth {
            token: self.login(provider).map(|(client, tokens)| {
                let login =
                    crate::oauth::stored::StoredLogin::new(client, self.auth.path.clone(), tokens);
                Arc::new(login) as Arc<dyn crate::provider::TokenSource>
            }),
            key_header: provider
                .builtin
                .then(|| super::catalog::key_header(&provider.name))
                .flatten(),
            env: self.credential_vars(provider),
        };
        let base_url = entry.base_url.as_deref().unwrap_or(&provider.base_url);
        let base_url = super::catalog::fill_url_vars(base_url, |n| {
            auth.env.get(n).cloned().or_else(|| self.env().var(n))
        });
        Ok(Model {
            id: entry.id.clone(),
            name: entry.name.clone(),
            provider: provider.name.clone(),
            api: provider.model_api(entry).to_string(),
            base_url,
            headers,
            reasoning: entry.reasoning,
            input: entry.input.clone(),
            context_window: entry.context_window,
            max_tokens: entry.max_tokens,
            cost: entry.cost.clone().unwrap_or_default(),
            compat,
            prompt_cache: entry.prompt_cache,
            thinking_level_map: entry.thinking_level_map.clone(),
            auth,
        })
    }

    /// Usable models for listing and default selection: configured auth, and not the
    /// scripted `faux` provider (which must be asked for by name).
    pub(crate) fn listed(&self) -> impl Iterator<Item = (&ProviderConfig, &ModelEntry)> {
        self.providers
            .iter()
            .filter(|p| p.api != FAUX_API && self.has_configured_auth(&p.name))
            .flat_map(|p| {
                // A login may offer only some of its provider's models (Copilot's account).
                let login = self.login(p);
                p.models
                    .iter()
                    .filter(move |m| login.as_ref().is_none_or(|(f, t)| f.offers(t, &m.id)))
                    .map(move |m| (p, m))
            })
    }

    /// The help text for "nothing is configured".
    pub fn no_models_message(&self) -> String {
        let mut msg = String::from(
            "No models available: no provider has an API key configured.\n\
             \x20 - set ANTHROPIC_API_KEY or OPENAI_API_KEY (or pass --api-key with --provider/--model)\n",
        );
        msg.push_str(&format!(
            "  - or store a key in {} ({{\"anthropic\": {{\"type\": \"api_key\", \"key\": \"…\"}}}})\n",
            self.auth.path.display()
        ));
        msg.push_str(&format!(
            "  - or add a provider (for example a local Ollama server) to {}\n",
            self.models_path.display()
        ));
        msg.push_str("  - or try the offline scripted provider with --provider faux");
        let oauth: Vec<&str> = self
            .auth
            .entries
            .iter()
            .filter(|(p, _)| self.unusable_login(p))
            .map(|(p, _)| p.as_str())
            .collect();
        if !oauth.is_empty() {
            msg.push_str(&format!(
                "\nNote: {} has OAuth logins for {}, which this pi does not support yet.",
                self.auth.path.display(),
                oauth.join(", ")
            ));
        }
        msg
    }

    /// The table `--list-models [search]` prints: available models, optionally fuzzy-filtered
    /// on "provider id", sorted by provider then id. Ends with a newline.
    pub fn list_models(&self, search: Option<&str>) -> String {
        let mut models: Vec<(&ProviderConfig, &ModelEntry)> = self.listed().collect();
        if models.is_empty() {
            return format!("{}\n", self.no_models_message());
        }
        let search = search.map(str::trim).filter(|s| !s.is_empty());
        if let Some(q) = search {
            models.retain(|(p, m)| fuzzy_match(q, &format!("{} {}", p.name, m.id)));
            if models.is_empty() {
                return format!("No models matching \"{q}\"\n");
            }
        }
        models.sort_by(|(pa, ma), (pb, mb)| {
            collate::locale_cmp(&pa.name, &pb.name)
                .then_with(|| collate::locale_cmp(&ma.id, &mb.id))
        });
        let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
        let mut rows = vec![[
            "provider".to_string(),
            "model".to_string(),
            "context".to_string(),
            "max-out".to_string(),
            "thinking".to_string(),
            "images".to_string(),
        ]];
        rows.extend(models.iter().map(|(p, m)| {
            [
                p.name.clone(),
                m.id.clone(),
                format_tokens(m.context_window),
                format_tokens(m.max_tokens),
                yes_no(m.reasoning),
                yes_no(m.supports_images()),
            ]
        }));
        let mut widths = [0usize; 6];
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in &rows {
            let cells: Vec<String> = row
                .iter()
                .zip(widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            // pi pads every column, the last one included.
            out.push_str(&cells.join("  "));
            out.push('\n');
        }
        out
    }
}

/// gcloud's Application Default Credentials, where 1.6's Vertex auth looks for them.
const VERTEX_ADC_PATH: &str = "~/.config/gcloud/application_default_credentials.json";

/// Whether `p` is 1.6's `google-vertex` provider, whose auth also takes Application Default
/// Credentials (a hook's provider of that name has only its own key).
fn is_vertex(p: &ProviderConfig) -> bool {
    p.name == "google-vertex" && p.builtin && p.owner.is_none()
}

/// pi's token count format: 200000 → "200K", 16384 → "16.4K", 1000000 → "1M".
fn format_tokens(n: u64) -> String {
    let fmt = |v: f64, unit: &str| {
        if v.fract() == 0.0 {
            format!("{v}{unit}")
        } else {
            format!("{v:.1}{unit}")
        }
    };
    if n >= 1_000_000 {
        fmt(n as f64 / 1_000_000.0, "M")
    } else if n >= 1_000 {
        fmt(n as f64 / 1_000.0, "K")
    } else {
        n.to_string()
    }
}

/// Fuzzy filter as pi's TUI does it: every whitespace-separated token of `query` must appear in
/// `text` as a case-insensitive subsequence.
fn fuzzy_match(query: &str, text: &str) -> bool {
    let text = text.to_lowercase();
    query.split_whitespace().all(|token| {
        let mut chars = text.chars();
        token
            .to_lowercase()
            .chars()
            .all(|c| chars.by_ref().any(|t| t == c))
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::MapEnv;

    pub(crate) fn registry(
        models_json: Option<&str>,
        auth_json: Option<&str>,
        env: MapEnv,
    ) -> (tempfile::TempDir, ModelRegistry) {
        let dir = tempfile::tempdir().unwrap();
        if let Some(m) = models_json {
            std::fs::write(dir.path().join("models.json"), m).unwrap();
        }
        if let Some(a) = auth_json {
            std::fs::write(dir.path().join("auth.json"), a).unwrap();
        }
        let (reg, _) = ModelRegistry::load(dir.path(), &env).unwrap();
        (dir, reg)
    }

    const ALL_SOURCES_MODELS: &str = r#"{"providers":{"anthropic":{"apiKey":"from-models"}}}"#;
    const ALL_SOURCES_AUTH: &str = r#"{"anthropic":{"type":"api_key","key":"from-auth"}}"#;

    #[test]
    fn auth_order_cli_then_auth_json_then_env_then_models_json() {
        let env = MapEnv::new().with_var("ANTHROPIC_API_KEY", "from-env");
        let (_d, reg) = registry(
            Some(ALL_SOURCES_MODELS),
            Some(ALL_SOURCES_AUTH),
            env.clone(),
        );
        let key = |r: &ModelRegistry, cli| r.api_key_for("anthropic", cli).unwrap();
        assert_eq!(key(&reg, Some("from-cli")).as_deref(), Some("from-cli"));
        assert_eq!(key(&reg, None).as_deref(), Some("from-auth"));

        let (_d, reg) = registry(Some(ALL_SOURCES_MODELS), None, env);
        assert_eq!(key(&reg, None).as_deref(), Some("from-env"));

        let (_d, reg) = registry(Some(ALL_SOURCES_MODELS), None, MapEnv::new());
        assert_eq!(key(&reg, None).as_deref(), Some("from-models"));

        let (_d, reg) = registry(None, None, MapEnv::new());
        assert_eq!(key(&reg, None), None);
        assert!(!reg.has_configured_auth("anthropic"));
    }

    #[test]
    fn auth_json_values_use_the_value_grammar() {
        let env = MapEnv::new().with_var("SECRET", "s3");
        let (_d, reg) = registry(
            None,
            Some(
                r#"{"anthropic":{"type":"api_key","key":"$SECRET"},
                    "openai":{"type":"api_key","key":"!echo from-cmd"},
                    "groq":{"type":"api_key","key":"!exit 1"}}"#,
            ),
            env,
        );
        assert_eq!(
            reg.api_key_for("anthropic", None).unwrap().as_deref(),
            Some("s3")
        );
        assert_eq!(
            reg.api_key_for("openai", None).unwrap().as_deref(),
            Some("from-cmd")
        );
        let err = reg.api_key_for("groq", None).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("auth.json") && msg.contains("groq"), "{msg}");
    }

    #[test]
    fn a_hooks_provider_gets_only_the_hooks_key() {
        let env = MapEnv::new().with_var("MY_GATEWAY_API_KEY", "user-env");
        let (_d, mut reg) = registry(
            None,
            Some(r#"{"my-gateway":{"type":"api_key","key":"user-auth"}}"#),
            env,
        );
        let hook = Arc::new(ForeignEnv::hook(
            "h",
            [("OR".to_string(), "hook-key".to_string())],
        ));
        let entry = serde_json::json!({"baseUrl": "http://h/v1", "api": "openai-completions",
                                       "models": [{"id": "m"}]});
        reg.add_provider("test", "my-gateway", &entry, &hook)
            .unwrap();
        assert_eq!(reg.api_key_for("my-gateway", None).unwrap(), None);
        assert!(reg.has_configured_auth("my-gateway"), "needs no key");
        let err = reg.api_key_for("my-gateway", Some("typed")).unwrap_err();
        assert!(
            matches!(err, ConfigError::KeyForHookProvider { .. }),
            "{err}"
        );
        let mut keyed = entry.clone();
        keyed["apiKey"] = "Bearer-$OR".into();
        reg.add_provider("test", "my-gateway", &keyed, &hook)
            .unwrap();
        assert_eq!(
            reg.api_key_for("my-gateway", None).unwrap().as_deref(),
            Some("Bearer-hook-key")
        );
        assert!(reg.credential_env_vars().contains("OR"));
    }

    #[test]
    fn unset_variable_falls_through_to_env() {
        let env = MapEnv::new().with_var("OPENAI_API_KEY", "env-key");
        let (_d, reg) = registry(
            None,
            Some(r#"{"openai":{"type":"api_key","key":"$NOT_SET"}}"#),
            env,
        );
        assert_eq!(
            reg.api_key_for("openai", None).unwrap().as_deref(),
            Some("env-key")
        );
    }

    #[test]
    fn availability() {
        let (_d, reg) = registry(
            Some(
                r#"{"providers":{
                "ollama":{"baseUrl":"http://localhost:11434/v1","api":"openai-completions","models":[{"id":"llama3"}]},
                "groq":{"baseUrl":"https://api.groq.com/openai/v1","api":"openai-completions","models":[{"id":"kimi"}]},
                "keyed":{"baseUrl":"http://x","api":"anthropic-messages","apiKey":"$MISSING","models":[{"id":"k"}]}}}"#,
            ),
            Some(r#"{"openai":{"type":"oauth"}}"#),
            MapEnv::new(),
        );
        assert!(reg.has_configured_auth("faux"));
        assert!(reg.has_configured_auth("ollama"));
        assert!(!reg.has_configured_auth("groq"));
        assert!(!reg.has_configured_auth("anthropic"));
        assert!(!reg.has_configured_auth("openai"));
        // An apiKey that refers to an unset variable is configured but unusable.
        assert!(!reg.has_configured_auth("keyed"));
        assert!(!reg.has_configured_auth("nope"));

        let (p, m) = reg.find("openai", "gpt-5.1").unwrap();
        let mut model = reg.build_model(p, m).unwrap();
        let err = reg.require_api_key(&mut model, None).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("OPENAI_API_KEY") && msg.contains("OAuth"),
            "{msg}"
        );
        assert_eq!(
            reg.require_api_key(&mut model, Some("k"))
                .unwrap()
                .as_deref(),
            Some("k")
        );
        let (p, m) = reg.find("ollama", "llama3").unwrap();
        let mut model = reg.build_model(p, m).unwrap();
        assert_eq!(reg.require_api_key(&mut model, None).unwrap(), None);
    }

    #[test]
    fn build_model_resolves_headers_and_merges_compat() {
        let env = MapEnv::new().with_var("TOK", "t1");
        let (_d, reg) = registry(
            Some(
                r#"{"providers":{"proxy":{"baseUrl":"https://p/v1","api":"openai-completions","authHeader":true,
                "headers":{"x-tok":"Bearer $TOK","x-gone":"$UNSET","x-lit":"plain"},
                "compat":{"supportsDeveloperRole":false,"nested":{"a":1}},
                "models":[{"id":"m1","headers":{"x-lit":"model"},"compat":{"nested":{"b":2},"maxTokensField":"max_tokens"}}]}}}"#,
            ),
            None,
            env,
        );
        let (p, m) = reg.find("proxy", "m1").unwrap();
        let model = reg.build_model(p, m).unwrap();
        assert_eq!(model.base_url, "https://p/v1");
        assert_eq!(model.api, "openai-completions");
        assert_eq!(model.headers["x-tok"], "Bearer t1");
        assert_eq!(model.headers["x-lit"], "model");
        // Provenance, not the text, makes a header a credential.
        assert!(model.headers["x-tok"].credential);
        assert!(!model.headers["x-lit"].credential);
        assert!(!model.headers.contains_key("x-gone"));
        assert_eq!(
            model.compat,
            serde_json::json!({"supportsDeveloperRole":false,"nested":{"a":1,"b":2},
                "maxTokensField":"max_tokens","authHeader":true})
        );
    }

    #[test]
    fn built_models_carry_their_rates() {
        let (_d, reg) = registry(
            Some(
                r#"{"providers":{"local":{"baseUrl":"http://l/v1","api":"openai-completions",
                "models":[{"id":"priced","cost":{"input":0.4,"output":1.6,"cacheRead":0.1,"cacheWrite":0.5}},
                          {"id":"free"}]}}}"#,
            ),
            None,
            MapEnv::new(),
        );
        let built = |provider: &str, id: &str| {
            let (p, m) = reg.find(provider, id).unwrap();
            reg.build_model(p, m).unwrap().cost
        };
        let priced = built("local", "priced");
        assert_eq!(
            (
                priced.input,
                priced.output,
                priced.cache_read,
                priced.cache_write
            ),
            (0.4, 1.6, 0.1, 0.5)
        );
        assert_eq!(built("local", "free"), Default::default());
        assert_eq!(built("faux", "faux-1"), Default::default());
        assert_eq!(built("anthropic", "claude-opus-4-8").output, 25.0);
    }

    #[test]
    fn credential_env_vars_cover_every_place_a_key_is_read_from() {
        let (_d, reg) = registry(
            Some(
                r#"{"providers":{"corp":{"baseUrl":"https://c/v1","api":"openai-completions",
                "apiKey":"$CORP_KEY_VAR","headers":{"x-a":"Bearer ${HDR_VAR}","x-lit":"plain $$X"},
                "models":[{"id":"m","headers":{"x-m":"$MODEL_HDR"}}]},
                "helper":{"baseUrl":"https://h/v1","api":"openai-completions",
                "apiKey":"!pass show $NOT_OURS","models":[{"id":"m"}]}}}"#,
            ),
            Some(
                r#"{"anthropic":{"type":"api_key","key":"pre-${AUTH_VAR}"},
                    "groq":{"type":"api_key","env":"TEAM_GROQ"}}"#,
            ),
            MapEnv::new(),
        );
        let names = reg.credential_env_vars();
        for n in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "HF_TOKEN",
            "CORP_KEY_VAR",
            "HDR_VAR",
            "MODEL_HDR",
            "AUTH_VAR",
            "TEAM_GROQ",
        ] {
            assert!(names.contains(n), "{n} missing from {names:?}");
        }
        // A credential helper's shell text and escaped dollars name no variable of ours.
        assert!(
            !names.contains("NOT_OURS") && !names.contains("X"),
            "{names:?}"
        );
    }

    #[test]
    fn list_models_filters_and_formats() {
        let env = MapEnv::new().with_var("ANTHROPIC_API_KEY", "k");
        let (_d, reg) = registry(None, None, env);
        let all = reg.list_models(None);
        let lines: Vec<&str> = all.lines().collect();
        let catalog = reg.provider("anthropic").unwrap().models.len();
        assert_eq!(lines.len(), catalog + 1, "{all}");
        assert!(lines[0].starts_with("provider   model"), "{all}");
        let haiku = lines
            .iter()
            .find(|l| l.split_whitespace().nth(1) == Some("claude-haiku-4-5"))
            .unwrap();
        assert_eq!(
            haiku.split_whitespace().collect::<Vec<_>>(),
            ["anthropic", "claude-haiku-4-5", "200K", "64K", "yes", "yes"]
        );
        assert!(!all.contains("openai") && !all.contains("faux"));

        let sonnet = reg.list_models(Some("sonnet"));
        assert_eq!(sonnet.lines().count(), 6, "{sonnet}");
        assert!(sonnet.contains("claude-sonnet-4-5"));
        assert_eq!(reg.list_models(Some("zzz")), "No models matching \"zzz\"\n");

        let (_d, none) = registry(None, None, MapEnv::new());
        let msg = none.list_models(None);
        assert!(msg.starts_with("No models available"), "{msg}");
        assert!(msg.contains("--provider faux") && msg.contains("models.json"));
    }

    #[test]
    fn vertex_takes_a_key_or_application_default_credentials_as_1_6_does() {
        let home = tempfile::tempdir().unwrap();
        let sa = home.path().join("sa.json");
        std::fs::write(&sa, "{}").unwrap();
        let sa = sa.display().to_string();
        let adc = |env: MapEnv, auth: Option<&str>| {
            let (d, reg) = registry(None, auth, env.with_home(home.path()));
            let configured = reg.has_configured_auth("google-vertex");
            let (p, m) = reg.find("google-vertex", "gemini-2.5-flash").unwrap();
            let mut model = reg.build_model(p, m).unwrap();
            let key = reg
                .require_api_key(&mut model, None)
                .map_err(|e| e.to_string());
            (d, configured, key, model)
        };
        let (_d, yes, key, _) = adc(MapEnv::new().with_var("GOOGLE_CLOUD_API_KEY", "k"), None);
        assert!(yes);
        assert_eq!(key.unwrap().as_deref(), Some("k"));
        let full = MapEnv::new()
            .with_var("GOOGLE_APPLICATION_CREDENTIALS", &sa)
            .with_var("GOOGLE_CLOUD_PROJECT", "p")
            .with_var("GOOGLE_CLOUD_LOCATION", "l");
        let (_d, yes, key, _) = adc(full.clone(), None);
        assert!(yes);
        assert_eq!(key.unwrap(), None, "the provider signs in itself");
        let (_d, no, key, _) = adc(
            MapEnv::new()
                .with_var("GOOGLE_APPLICATION_CREDENTIALS", &sa)
                .with_var("GCLOUD_PROJECT", "p")
                .with_var("GOOGLE_CLOUD_LOCATION", "  "),
            None,
        );
        assert!(!no);
        let said = key.unwrap_err();
        assert!(
            said.contains("(here: GOOGLE_CLOUD_LOCATION is not set)"),
            "{said}"
        );
        assert!(said.contains("set GOOGLE_CLOUD_API_KEY"), "{said}");
        // gcloud's file under the home directory, a stored project and location (kept though
        // the entry has no key), which the model carries for the provider.
        let gcloud = home.path().join(".config/gcloud");
        std::fs::create_dir_all(&gcloud).unwrap();
        std::fs::write(gcloud.join("application_default_credentials.json"), "{}").unwrap();
        let stored = r#"{"google-vertex": {"type": "api_key",
            "env": {"GOOGLE_CLOUD_PROJECT": "sp", "GOOGLE_CLOUD_LOCATION": "sl"}}}"#;
        let (_d, yes, key, model) = adc(MapEnv::new(), Some(stored));
        assert!(yes);
        assert_eq!(key.unwrap(), None);
        assert_eq!(model.auth.env["GOOGLE_CLOUD_LOCATION"], "sl");
        // A file named but missing is not gcloud's.
        let (_d, no, _, _) = adc(
            full.with_var("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent.json"),
            None,
        );
        assert!(!no);
    }

    #[test]
    fn token_format() {
        assert_eq!(format_tokens(200_000), "200K");
        assert_eq!(format_tokens(16_384), "16.4K");
        assert_eq!(format_tokens(1_000_000), "1M");
        assert_eq!(format_tokens(1_047_576), "1.0M");
        assert_eq!(format_tokens(512), "512");
    }
    #[test]
    fn a_hooks_provider_taken_back_is_gone_or_the_files_again() {
        let (_d, mut reg) = registry(None, None, MapEnv::new());
        let hook = Arc::new(ForeignEnv::hook("h", [("K".to_string(), "hk".to_string())]));
        let own = serde_json::json!({"baseUrl": "http://h/v1", "api": "openai-completions",
                                     "apiKey": "$K", "models": [{"id": "m"}]});
        reg.add_provider("test", "mine", &own, &hook).unwrap();
        reg.add_provider("test", "groq", &own, &hook).unwrap();
        let files = reg.clone();
        assert!(
            !reg.remove_hook_provider("other", "mine", || None),
            "not its own"
        );
        assert!(reg.remove_hook_provider("h", "mine", || None));
        assert!(reg.provider("mine").is_none());
        let (_d2, fresh) = registry(None, None, MapEnv::new());
        assert!(reg.remove_hook_provider("h", "groq", || Some(fresh)));
        let groq = reg.provider("groq").unwrap();
        assert_eq!(groq.owning_hook(), None, "the built-in again");
        assert_ne!(groq.base_url, files.provider("groq").unwrap().base_url);
        assert!(
            !reg.remove_hook_provider("h", "groq", || None),
            "taken back once"
        );
    }
}
