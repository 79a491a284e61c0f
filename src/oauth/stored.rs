//! A stored login as the key of each request: the access token while it has more than five
//! minutes left, else a refreshed one.
//!
//! Refreshing rotates the refresh token, so two programs refreshing the same login at once
//! would leave one of them holding a dead token. The refresh therefore happens under
//! `auth.json`'s lock (the one TypeScript pi takes), after reading the entry again: whoever
//! comes second finds the tokens already renewed and uses them. The new tokens are written
//! before the lock is released, and the refresh is not abandoned half-way when a turn is
//! cancelled (the old refresh token may already be spent).

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Mutex;

use super::{now_ms, OAuthError, OAuthFlow, RequestAuth, Tokens};
use crate::config::auth_store::{AuthStoreError, Held};
use crate::provider::{ProviderError, TokenSource};

/// The login `flow` keeps in `auth_path`, starting from the tokens read at start-up.
#[derive(Debug)]
pub struct StoredLogin {
    flow: &'static dyn OAuthFlow,
    auth_path: PathBuf,
    http: reqwest::Client,
    current: Mutex<Tokens>,
}

impl StoredLogin {
    pub fn new(flow: &'static dyn OAuthFlow, auth_path: PathBuf, tokens: Tokens) -> StoredLogin {
        StoredLogin {
            flow,
            auth_path,
            http: crate::provider::http::client(),
            current: Mutex::new(tokens),
        }
    }

    /// The access token as read, whatever is left of it (`pi auth check --no-refresh`).
    pub fn stored_access(&self) -> String {
        self.current
            .try_lock()
            .map(|t| self.flow.to_auth(&t).key)
            .unwrap_or_default()
    }

    /// The access token with at least `left` of its life ahead (`pi auth print-bearer-token
    /// --min-expiry`), renewed when it has less.
    pub async fn token_valid_for(&self, left: Duration) -> Result<String, ProviderError> {
        self.auth_valid_for(left).await.map(|a| a.key)
    }

    /// What a request sends ([`OAuthFlow::to_auth`]) from tokens with at least `left` of
    /// their life ahead, renewed when they have less.
    pub async fn auth_valid_for(&self, left: Duration) -> Result<RequestAuth, ProviderError> {
        let mut current = self.current.lock().await;
        if !current.expires_within(now_ms(), left) {
            return Ok(self.flow.to_auth(&current));
        }
        match self.renew(left).await {
            Ok(tokens) => {
                *current = tokens;
                Ok(self.flow.to_auth(&current))
            }
            Err(RenewError::Gone(why)) => Err(ProviderError::Other(format!(
                "{why}; {}",
                self.flow.sign_in_again()
            ))),
            Err(e) => Err(ProviderError::Other(e.to_string())),
        }
    }

    /// Renews the tokens under the file's lock, or takes the ones another program renewed.
    async fn renew(&self, left: Duration) -> Result<Tokens, RenewError> {
        let path = self.auth_path.clone();
        let held = tokio::task::spawn_blocking(move || Held::lock(&path))
            .await
            .map_err(|e| RenewError::Gone(e.to_string()))??;
        let mut entries = held.read()?;
        let provider = self.flow.provider();
        let entry = entries.get(provider);
        let Some(stored) = entry.and_then(Tokens::from_entry) else {
            return Err(RenewError::Gone(format!(
                "{} holds no {} login any more",
                self.auth_path.display(),
                self.flow.name()
            )));
        };
        if !stored.expires_within(now_ms(), left) {
            return Ok(stored);
        }
        let renewed = self.flow.refresh(&self.http, &stored).await?;
        held.touch();
        let updated = renewed.clone().into_entry(entry);
        entries.insert(provider.to_string(), updated);
        held.write(entries)?;
        Ok(renewed)
    }
}

#[derive(Debug, thiserror::Error)]
enum RenewError {
    #[error(transparent)]
    Store(#[from] AuthStoreError),
    #[error(transparent)]
    OAuth(#[from] OAuthError),
    #[error("{0}")]
    Gone(String),
}

#[async_trait]
impl TokenSource for StoredLogin {
    async fn auth(&self) -> Result<RequestAuth, ProviderError> {
        self.auth_valid_for(super::REFRESH_BEFORE).await
    }
}
