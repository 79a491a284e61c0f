//! Anthropic (Claude Pro/Max), as pi 1.6 signs in to it: a choice of the browser login (PKCE
//! with a loopback callback, or the redirect URL pasted) or the copy-code login for headless
//! machines (Anthropic shows `code#state` to paste); the code exchanged and the tokens
//! refreshed at `platform.claude.com` with JSON grants; the access token is the request's key.

use async_trait::async_trait;
use serde_json::json;

use super::flow::{AuthEvent, Choice, Interaction, OAuthFlow, Prompt};
use super::login::{self, Callback, LoginError, Pkce};
use super::{request_tokens, Client, GrantEncoding, OAuthError, StateKind, Tokens, REFRESH_BEFORE};

pub static CLIENT: Client = Client {
    provider: "anthropic",
    name: "Anthropic (Claude Pro/Max)",
    client_id: "9d1c250a-e61b-44d9-88ed-5944d1962f5e",
    authorize_url: "https://claude.ai/oauth/authorize",
    token_url: "https://platform.claude.com/v1/oauth/token",
    scopes: "org:create_api_key user:profile user:inference user:sessions:claude_code \
             user:mcp_servers user:file_upload",
    callback_port: 53692,
    callback_path: "/callback",
    callback_fallback: true,
    authorize_params: &[("code", "true")],
    state: StateKind::Verifier,
    grant: GrantEncoding::Json,
    expiry_margin: REFRESH_BEFORE,
};

/// Where the copy-code login sends the browser: Anthropic's page that shows the code.
const COPY_CODE_REDIRECT_URI: &str = "https://platform.claude.com/oauth/code/callback";

#[derive(Debug)]
pub struct Anthropic;

#[async_trait]
impl OAuthFlow for Anthropic {
    fn provider(&self) -> &'static str {
        CLIENT.provider
    }

    fn name(&self) -> &'static str {
        CLIENT.name
    }

    async fn login(&self, ui: &dyn Interaction) -> Result<Tokens, LoginError> {
        let method = ui
            .prompt(Prompt::Select {
                message: "Select Anthropic login method:".into(),
                options: vec![
                    Choice {
                        id: "browser",
                        label: "Browser login (default)",
                        description: None,
                    },
                    Choice {
                        id: "copy_code",
                        label: "Copy code login (headless)",
                        description: None,
                    },
                ],
            })
            .await
            .ok_or(LoginError::Cancelled)?;
        match method.as_str() {
            "copy_code" => copy_code(ui).await,
            _ => browser(ui).await,
        }
    }

    async fn refresh(&self, http: &reqwest::Client, tokens: &Tokens) -> Result<Tokens, OAuthError> {
        let grant = json!({
            "grant_type": "refresh_token",
            "client_id": CLIENT.client_id,
            "refresh_token": tokens.refresh,
        });
        request_tokens(http, &CLIENT, grant).await
    }
}

async fn browser(ui: &dyn Interaction) -> Result<Tokens, LoginError> {
    let client = &CLIENT;
    let pkce = Pkce::new().map_err(LoginError::Random)?;
    let state = login::new_state(client, &pkce).map_err(LoginError::Random)?;
    let callback = Callback::bind(client).await;
    let redirect_uri = callback.as_ref().map_or_else(
        || {
            format!(
                "http://localhost:{}{}",
                client.callback_port, client.callback_path
            )
        },
        |c| c.redirect_uri.clone(),
    );
    ui.notify(AuthEvent::AuthUrl {
        url: login::authorize_url(client, &pkce, &state, &redirect_uri)?,
        instructions: Some(
            "Complete login in your browser. If the browser is on another machine, paste the \
             final redirect URL here."
                .into(),
        ),
    });
    let answer = login::callback_or_pasted(
        ui,
        callback.as_ref(),
        client.name,
        Some(&state),
        Prompt::ManualCode {
            message: "Complete login in your browser, or paste the authorization code / \
                      redirect URL here:"
                .into(),
            placeholder: Some(redirect_uri.clone()),
        },
    )
    .await?;
    let (code, state) = match answer {
        login::Answer::Callback(code) => (code, state),
        login::Answer::Pasted(line) => login::pasted_code(&line, &state)?,
    };
    exchange(ui, &code, &state, &pkce, &redirect_uri).await
}

async fn copy_code(ui: &dyn Interaction) -> Result<Tokens, LoginError> {
    let pkce = Pkce::new().map_err(LoginError::Random)?;
    let state = login::new_state(&CLIENT, &pkce).map_err(LoginError::Random)?;
    ui.notify(AuthEvent::AuthUrl {
        url: login::authorize_url(&CLIENT, &pkce, &state, COPY_CODE_REDIRECT_URI)?,
        instructions: Some(
            "Complete login in your browser, then copy the code Anthropic shows and paste it \
             here."
                .into(),
        ),
    });
    let line = ui
        .prompt(Prompt::ManualCode {
            message: "Paste the code Anthropic shows after you sign in:".into(),
            placeholder: Some("code#state".into()),
        })
        .await
        .ok_or(LoginError::Cancelled)?;
    let (code, state) = login::pasted_code(&line, &state)?;
    exchange(ui, &code, &state, &pkce, COPY_CODE_REDIRECT_URI).await
}

async fn exchange(
    ui: &dyn Interaction,
    code: &str,
    state: &str,
    pkce: &Pkce,
    redirect_uri: &str,
) -> Result<Tokens, LoginError> {
    ui.notify(AuthEvent::Progress {
        message: "Exchanging authorization code for tokens...".into(),
    });
    let grant = json!({
        "grant_type": "authorization_code",
        "client_id": CLIENT.client_id,
        "code": code,
        "state": state,
        "redirect_uri": redirect_uri,
        "code_verifier": pkce.verifier,
    });
    Ok(request_tokens(&crate::provider::http::client(), &CLIENT, grant).await?)
}
