//! The seam between a provider's sign-in and whoever shows it: pi 1.6's `OAuthAuth` and
//! `AuthInteraction`. A flow ([`OAuthFlow`]) knows its provider's endpoints, grants and token
//! format; it asks and tells the user only through an [`Interaction`], which each front end
//! implements (`pi auth login` on the terminal, `/login` in the terminal UI, an RPC client
//! through the extension UI requests). So one flow serves every mode, and no flow prints.
//!
//! A login is cancelled by dropping its future (Ctrl+C, an RPC `abort`); a prompt answered
//! with nothing (`None`) cancels it too.

use async_trait::async_trait;

use super::login::LoginError;
use super::{OAuthError, Tokens};

/// One choice of a [`Prompt::Select`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub id: &'static str,
    pub label: &'static str,
    pub description: Option<&'static str>,
}

/// What a flow asks the user (1.6's `AuthPrompt`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    Text {
        message: String,
        placeholder: Option<String>,
    },
    /// Typed without echo.
    Secret {
        message: String,
        placeholder: Option<String>,
    },
    /// The answer is the chosen [`Choice::id`].
    Select {
        message: String,
        options: Vec<Choice>,
    },
    /// A code or redirect URL pasted while the flow also waits for the browser; the flow drops
    /// the prompt when the browser wins.
    ManualCode {
        message: String,
        placeholder: Option<String>,
    },
}

/// What a flow tells the user (1.6's `AuthEvent`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthEvent {
    Info {
        message: String,
        links: Vec<(Option<String>, String)>,
    },
    /// The page to sign in on.
    AuthUrl {
        url: String,
        instructions: Option<String>,
    },
    /// A device-code login: the code to enter on the verification page.
    DeviceCode {
        user_code: String,
        verification_uri: String,
        /// Whether the front end may open the page (1.6's `openBrowserOnConfirm`).
        open_browser: bool,
    },
    Progress {
        message: String,
    },
}

/// The user, as a front end presents the login to them.
#[async_trait]
pub trait Interaction: Send + Sync {
    /// The user's answer; `None` when they cancelled.
    async fn prompt(&self, prompt: Prompt) -> Option<String>;
    fn notify(&self, event: AuthEvent);
    /// This installation's id (1.6's `getDeviceId`: settings.json's `deviceId`, made on first
    /// use), for a provider that registers each installation (Sign in with ChatGPT); `None`
    /// where the front end has none.
    fn device_id(&self) -> Option<String> {
        None
    }
}

/// How a request authenticates with a login's tokens (1.6's `ModelAuth` from `toAuth`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestAuth {
    pub key: String,
    /// A base URL the credential decides (GitHub Copilot's per-account endpoint).
    pub base_url: Option<String>,
}

/// One provider's subscription login.
#[async_trait]
pub trait OAuthFlow: Send + Sync + std::fmt::Debug {
    /// The provider it signs in to (`auth.json`'s key).
    fn provider(&self) -> &'static str;
    /// How 1.6 names the login ("Anthropic (Claude Pro/Max)").
    fn name(&self) -> &'static str;
    /// What 1.6 offers the login as where it names the way in ("Sign in with ChatGPT"; its
    /// `loginLabel`), when the provider has its own words for it.
    fn login_label(&self) -> Option<&'static str> {
        None
    }
    /// Whether 1.6 calls it a subscription (else an account: OpenRouter, Radius).
    fn is_subscription(&self) -> bool {
        true
    }
    /// Signs the user in; the tokens to store.
    async fn login(&self, ui: &dyn Interaction) -> Result<Tokens, LoginError>;
    /// Renews `tokens` (a network call; the caller holds auth.json's lock).
    async fn refresh(&self, http: &reqwest::Client, tokens: &Tokens) -> Result<Tokens, OAuthError>;
    /// What a request sends, from tokens that are valid.
    fn to_auth(&self, tokens: &Tokens) -> RequestAuth {
        RequestAuth {
            key: tokens.access.clone(),
            base_url: None,
        }
    }
    /// Whether this login offers the provider's model `model` (1.6's `filterModels`: GitHub
    /// Copilot's account lists its own); every model by default.
    fn offers(&self, _tokens: &Tokens, _model: &str) -> bool {
        true
    }
    /// How a user signs in again.
    fn sign_in_again(&self) -> String {
        format!("sign in again with `pi auth login {}`", self.provider())
    }
}
