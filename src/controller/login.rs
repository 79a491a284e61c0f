//! Signing in and out while pi runs (`/login`, `/logout`, RPC `login`/`logout`): a
//! subscription login or an API key stored in `auth.json` as `pi auth login` stores it, then
//! the registry replaced by one that has read the file again, so the next request (and
//! `/model`) uses the new credentials without a restart.
//!
//! The flow's questions go to the front end's dialogs ([`crate::hooks::ui::HookUi`], the
//! same ones hooks' `ui.*` calls reach): the terminal shows them as pickers and inputs, RPC
//! sends them as extension UI requests, so an embedding client can sign its user in. The
//! tokens themselves never leave pi: the dialogs carry the sign-in URL and the user's
//! answers, not what the provider returns.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::login_options::{self, AuthType};
use super::types::AuthOutcome;
use super::{ControllerError, Core, SessionController};
use crate::config::{auth_store, ModelRegistry};
use crate::hooks::ui::{Dialog, DialogAnswer, HookUi, NotifyLevel, UiUpdate};
use crate::oauth::login::LoginError;
use crate::oauth::{AuthEvent, Interaction, Prompt};

/// Who asks, as the dialogs name it.
const ASKER: &str = "pi";

impl Core {
    /// The registry as it is now.
    pub(super) fn registry(&self) -> Arc<ModelRegistry> {
        self.fixed
            .registry
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Reads `auth.json` again into a new registry, and gives the current model the
    /// credential it now has when its provider is the one that changed.
    fn credentials_changed(&self, provider: &str) -> Result<(), ControllerError> {
        self.change_registry(provider, |current| Ok((current.with_auth_reread()?, ())))
    }
}

impl SessionController {
    /// Signs in to `provider` (asked for among the subscription logins when `None`): its
    /// login flow, or an API key for a provider without one. `open_browser`: the front end
    /// runs on the user's desktop, where pi opens the sign-in page (the terminal; an RPC
    /// client shows it itself).
    pub async fn login(
        &self,
        provider: Option<&str>,
        open_browser: bool,
    ) -> Result<AuthOutcome, ControllerError> {
        let registry = self.core.registry();
        let ui = DialogInteraction {
            ui: self.core.fixed.ui.clone(),
            open_browser,
            settings: crate::config::settings_path(registry.agent_dir()),
        };
        let path = crate::config::auth_path(registry.agent_dir());
        let chosen = match provider {
            Some(reference) => choose_matching(&ui, &registry, reference).await,
            None => choose_provider(&ui, &registry).await,
        };
        let Some((id, auth)) = chosen else {
            return Ok(AuthOutcome::nothing("Login cancelled."));
        };
        let flow = match registry.login_flow(&id) {
            Some(flow) if auth == AuthType::Login => flow,
            _ => return self.save_api_key(&ui, &registry, &id, &path).await,
        };
        let tokens = match flow.login(&ui).await {
            Ok(t) => t,
            Err(LoginError::Cancelled) => return Ok(AuthOutcome::nothing("Login cancelled.")),
            Err(source) => {
                return Err(ControllerError::LoginFailed {
                    name: flow.name(),
                    source,
                })
            }
        };
        auth_store::update(&path, |m| {
            let entry = tokens.into_entry(m.get(flow.provider()));
            m.insert(flow.provider().to_string(), entry);
            (true, ())
        })?;
        self.core.credentials_changed(flow.provider())?;
        Ok(AuthOutcome {
            provider: Some(flow.provider().to_string()),
            message: format!(
                "Logged in to {}. Credentials saved to {}",
                flow.name(),
                path.display()
            ),
            cancelled: false,
        })
    }

    async fn save_api_key(
        &self,
        ui: &DialogInteraction,
        registry: &ModelRegistry,
        id: &str,
        path: &std::path::Path,
    ) -> Result<AuthOutcome, ControllerError> {
        let Some(p) = registry.provider(id) else {
            return Err(ControllerError::UnknownProvider(id.to_string()));
        };
        if let Some(hook) = p.owning_hook() {
            return Err(ControllerError::HookOwnedProvider {
                provider: id.to_string(),
                hook: hook.to_string(),
            });
        }
        let name = key_name(id);
        let key = ui
            .prompt(Prompt::Secret {
                message: format!("Enter {name} API key:"),
                placeholder: None,
            })
            .await
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty());
        let Some(key) = key else {
            return Ok(AuthOutcome::nothing("Login cancelled."));
        };
        auth_store::update(path, |m| {
            m.insert(
                id.to_string(),
                serde_json::json!({"type": "api_key", "key": key}),
            );
            (true, ())
        })?;
        self.core.credentials_changed(id)?;
        Ok(AuthOutcome {
            provider: Some(id.to_string()),
            message: format!(
                "Saved API key for {name}. Credentials saved to {}",
                path.display()
            ),
            cancelled: false,
        })
    }

    /// Removes `provider`'s stored credential (asked for among the stored ones when `None`),
    /// in 1.6's words; the environment and models.json are untouched.
    pub async fn logout(&self, provider: Option<&str>) -> Result<AuthOutcome, ControllerError> {
        let registry = self.core.registry();
        let path = crate::config::auth_path(registry.agent_dir());
        let entries = auth_store::Held::lock(&path)?.read()?;
        let stored: Vec<String> = entries.keys().cloned().collect();
        // A login by its name, a key by its provider's, as 1.6 lists them.
        let named = |id: &str| match entries.get(id) {
            Some(v) if v["type"] == "oauth" => display_name(&registry, id),
            _ => key_name(id),
        };
        if stored.is_empty() {
            return Ok(AuthOutcome::nothing(
                "No stored credentials to remove. /logout only removes credentials saved by \
                 /login; environment variables and models.json config are unchanged.",
            ));
        }
        let id = match provider {
            Some(p) => p.to_string(),
            None => {
                let ui = DialogInteraction {
                    ui: self.core.fixed.ui.clone(),
                    open_browser: false,
                    settings: crate::config::settings_path(registry.agent_dir()),
                };
                let names: Vec<String> = stored.iter().map(|p| named(p)).collect();
                let picked = ui.select("Select provider to logout:", &names).await;
                match picked.and_then(|i| stored.get(i).cloned()) {
                    Some(id) => id,
                    None => return Ok(AuthOutcome::nothing("Logout cancelled.")),
                }
            }
        };
        let removed: Option<Value> = auth_store::update(&path, |m| match m.remove(&id) {
            Some(v) => (true, Some(v)),
            None => (false, None),
        })?;
        let name = named(&id);
        let message = match removed {
            None => format!(
                "No stored credentials for {name}. Environment variables and models.json config \
                 are unchanged."
            ),
            Some(v) if v["type"] == "oauth" => format!("Logged out of {name}"),
            Some(_) => format!(
                "Removed stored API key for {name}. Environment variables and models.json \
                 config are unchanged."
            ),
        };
        self.core.credentials_changed(&id)?;
        Ok(AuthOutcome {
            provider: Some(id),
            message,
            cancelled: false,
        })
    }
}

/// How 1.6 names a provider's login to its user: the login's name, else the provider's.
fn display_name(registry: &ModelRegistry, id: &str) -> String {
    match registry.login_flow(id) {
        Some(flow) => flow.name().to_string(),
        None => key_name(id),
    }
}

/// How 1.6 names a provider whose API key is meant: the catalog's name, else the id.
fn key_name(id: &str) -> String {
    login_options::provider_name(id)
}

/// What to sign in to, asked as 1.6's `/login` asks: an account (a login), an API key, or
/// Radius at once, then the provider among the rows of that kind.
async fn choose_provider(
    ui: &DialogInteraction,
    registry: &ModelRegistry,
) -> Option<(String, AuthType)> {
    let radius = login_options::options(registry, Some(AuthType::Login))
        .into_iter()
        .find(|o| o.id == "radius");
    let mut methods = vec![ACCOUNT.to_string(), API_KEY.to_string()];
    if let Some(r) = &radius {
        methods.push(format!(
            "Sign in with {}{}",
            r.name,
            login_options::status_mark(r)
        ));
    }
    let auth = match ui.select("Select authentication method:", &methods).await? {
        0 => AuthType::Login,
        1 => AuthType::ApiKey,
        _ => return radius.map(|r| (r.id, AuthType::Login)),
    };
    pick_row(ui, login_options::options(registry, Some(auth)), false).await
}

/// `/login NAME`: the provider whose id or name it is (asked how to sign in when it has a
/// login and a key), else the whole list to choose from.
async fn choose_matching(
    ui: &DialogInteraction,
    registry: &ModelRegistry,
    reference: &str,
) -> Option<(String, AuthType)> {
    let all = login_options::options(registry, None);
    let found = login_options::matching(all.clone(), reference);
    let one_provider = found.windows(2).all(|w| w[0].id == w[1].id);
    match found.as_slice() {
        [only] => return Some((only.id.clone(), only.auth)),
        [first, ..] if one_provider => {
            let login = first.login_label.unwrap_or(ACCOUNT).to_string();
            let options = [login, API_KEY.to_string()];
            let title = format!("Select authentication method for {}:", first.name);
            let auth = match ui.select(&title, &options).await? {
                0 => AuthType::Login,
                _ => AuthType::ApiKey,
            };
            return Some((first.id.clone(), auth));
        }
        [] if registry.provider(reference).is_some() => {
            // A provider with neither a login nor a key to store (a hook's own).
            return Some((reference.to_string(), AuthType::ApiKey));
        }
        _ => {}
    }
    pick_row(ui, all, true).await
}

/// The row chosen among `rows` ("Select provider to configure:").
async fn pick_row(
    ui: &DialogInteraction,
    rows: Vec<login_options::LoginOption>,
    show_kinds: bool,
) -> Option<(String, AuthType)> {
    let labels: Vec<String> = rows
        .iter()
        .map(|o| login_options::row(o, show_kinds))
        .collect();
    let picked = ui.select("Select provider to configure:", &labels).await?;
    rows.get(picked).map(|o| (o.id.clone(), o.auth))
}

const ACCOUNT: &str = "Sign in with an account";
const API_KEY: &str = "Sign in with an API key";

/// A login flow's questions as the front end's dialogs.
struct DialogInteraction {
    ui: Arc<dyn HookUi>,
    open_browser: bool,
    /// Where this installation's id is kept (the global settings).
    settings: std::path::PathBuf,
}

impl DialogInteraction {
    /// The index of the option chosen among `options`.
    async fn select(&self, title: &str, options: &[String]) -> Option<usize> {
        let dialog = Dialog::Select {
            title: title.to_string(),
            options: options.to_vec(),
        };
        match self.ui.dialog(ASKER, &dialog, None).await {
            Ok(DialogAnswer::Value(v)) => options.iter().position(|o| *o == v),
            _ => None,
        }
    }

    fn say(&self, message: String) {
        let update = UiUpdate::Notify {
            message,
            level: NotifyLevel::Info,
        };
        let _ = self.ui.update(ASKER, &update);
    }
}

#[async_trait]
impl Interaction for DialogInteraction {
    async fn prompt(&self, prompt: Prompt) -> Option<String> {
        let (title, placeholder) = match prompt {
            Prompt::Select { message, options } => {
                let labels: Vec<String> = options.iter().map(|c| c.label.to_string()).collect();
                let i = self.select(&message, &labels).await?;
                return options.get(i).map(|c| c.id.to_string());
            }
            Prompt::Text {
                message,
                placeholder,
            }
            | Prompt::Secret {
                message,
                placeholder,
            }
            | Prompt::ManualCode {
                message,
                placeholder,
            } => (message, placeholder),
        };
        let dialog = Dialog::Input { title, placeholder };
        match self.ui.dialog(ASKER, &dialog, None).await {
            Ok(DialogAnswer::Value(v)) => Some(v),
            _ => None,
        }
    }

    fn notify(&self, event: AuthEvent) {
        match event {
            AuthEvent::AuthUrl { url, instructions } => {
                if self.open_browser {
                    crate::oauth::browser::open(&url);
                }
                let mut text = format!("Open this URL to sign in:\n{url}");
                if let Some(i) = instructions {
                    text.push('\n');
                    text.push_str(&i);
                }
                self.say(text);
            }
            AuthEvent::DeviceCode {
                user_code,
                verification_uri,
                open_browser,
            } => {
                if self.open_browser && open_browser {
                    crate::oauth::browser::open(&verification_uri);
                }
                self.say(format!(
                    "Open {verification_uri} and enter code: {user_code}"
                ))
            }
            AuthEvent::Info { message, .. } | AuthEvent::Progress { message } => self.say(message),
        }
    }

    fn device_id(&self) -> Option<String> {
        crate::config::settings_file::device_id(&self.settings).ok()
    }
}
