//! Google Cloud Application Default Credentials, as `google-auth-library` (which pi 1.6's
//! Vertex AI client uses) finds and spends them: a credentials file named by
//! `GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's
//! `application_default_credentials.json` (under `CLOUDSDK_CONFIG`, else
//! `~/.config/gcloud`), holding either
//!
//! - a **service account** key (`"type": "service_account"`): a JWT asking for the
//!   `cloud-platform` scope, signed RS256 with its `private_key` and exchanged at the token
//!   endpoint (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`) for an access token;
//! - a **user** login (`"type": "authorized_user"`, what `gcloud auth application-default
//!   login` writes): its `refresh_token` exchanged with the file's client id and secret.
//!
//! The token endpoint is the file's `token_uri` when it has one (Google's own files name
//! `https://oauth2.googleapis.com/token`, the library's fixed endpoint), so a test can point a
//! file at a mock. An access token is kept, per file and contents, until five minutes before
//! it expires (the library's eager-refresh margin) and shared by every request of the run.
//! A file's `quota_project_id` goes out as `x-goog-user-project`.
//!
//! Neither the private key, the refresh token and client secret, the signed assertion nor
//! the access token appears in an error, a log line or a `Debug` print: errors name the file,
//! the account and the endpoint.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::Mutex;

use super::stream::{cancellable, error_chain, retry_after_ms};
use super::{Model, ProviderError};

/// The token endpoint Google's credential files name, and `google-auth-library`'s own.
pub const GOOGLE_TOKEN_URL: &str = "https://oauth2.googleapis.com/token";
/// The scope `@google/genai` asks for on Vertex AI.
pub const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// How long a signed assertion is valid (the library's: an hour).
const ASSERTION_LIFETIME_SECS: u64 = 3600;
/// A token this close to its expiry is renewed first (the library's eager-refresh margin).
const REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);
/// The token endpoint gets this long to answer.
const TOKEN_TIMEOUT: Duration = Duration::from_secs(60);
/// gcloud's file, under its configuration directory.
pub const ADC_FILE_NAME: &str = "application_default_credentials.json";

/// What a request sends for Application Default Credentials.
pub struct AccessToken {
    /// `Authorization: Bearer <token>`.
    pub token: String,
    /// `x-goog-user-project`, when the file names a quota project.
    pub quota_project: Option<String>,
}

impl std::fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessToken")
            .field("quota_project", &self.quota_project)
            .finish_non_exhaustive()
    }
}

/// Where the credentials come from, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialsPath {
    /// `GOOGLE_APPLICATION_CREDENTIALS` (the credential's `env` object, else the
    /// environment).
    Named(PathBuf),
    /// gcloud's well-known file (it may not exist).
    WellKnown(PathBuf),
}

impl CredentialsPath {
    pub fn path(&self) -> &Path {
        match self {
            CredentialsPath::Named(p) | CredentialsPath::WellKnown(p) => p,
        }
    }
}

/// `~/…` with the home directory in front (what `fs` would not do by itself).
pub fn expand_home(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    }
}

/// The credentials file a request of `model` uses: `GOOGLE_APPLICATION_CREDENTIALS`, else
/// `$CLOUDSDK_CONFIG/application_default_credentials.json`, else
/// `~/.config/gcloud/application_default_credentials.json`; `None` without a home.
pub fn credentials_path(model: &Model) -> Option<CredentialsPath> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(dirs::home_dir);
    if let Some(named) = model
        .env_var("GOOGLE_APPLICATION_CREDENTIALS")
        .filter(|v| !v.is_empty())
    {
        return Some(CredentialsPath::Named(expand_home(&named, home.as_deref())));
    }
    let config_dir = std::env::var_os("CLOUDSDK_CONFIG")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".config").join("gcloud")))?;
    Some(CredentialsPath::WellKnown(config_dir.join(ADC_FILE_NAME)))
}

/// A credentials file's fields that matter here.
#[derive(Deserialize)]
struct RawFile {
    #[serde(rename = "type")]
    kind: Option<String>,
    client_email: Option<String>,
    private_key: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    refresh_token: Option<String>,
    token_uri: Option<String>,
    quota_project_id: Option<String>,
}

/// A credentials file, read.
enum Credentials {
    ServiceAccount {
        email: String,
        key: Box<rsa::PrivateKey>,
        token_uri: String,
    },
    User {
        client_id: String,
        client_secret: String,
        refresh_token: String,
        token_uri: String,
    },
}

/// One file's cached token.
struct Cached {
    token: String,
    /// When it must be renewed (its expiry less the margin); `None`: not cached at all.
    renew_at: Option<Instant>,
}

/// Tokens by credentials file and contents (a rewritten file gets a token of its own).
/// The lock is held while a token is fetched, so concurrent requests fetch one.
static CACHE: Mutex<Option<HashMap<CacheKey, Cached>>> = Mutex::const_new(None);

/// A credentials file's path and the SHA-256 of its contents.
type CacheKey = (PathBuf, [u8; 32]);

fn other(message: String) -> ProviderError {
    ProviderError::Other(message)
}

/// The access token for `model`'s Application Default Credentials, from the cache or the
/// token endpoint. Cancelled with the call.
pub async fn access_token(
    client: &reqwest::Client,
    model: &Model,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<AccessToken, ProviderError> {
    let Some(location) = credentials_path(model) else {
        return Err(other(
            "Could not load the default credentials: no home directory to find gcloud's \
             application_default_credentials.json in; set GOOGLE_APPLICATION_CREDENTIALS \
             to a credentials file"
                .into(),
        ));
    };
    let path = location.path().to_path_buf();
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(other(match location {
                CredentialsPath::Named(_) => format!(
                    "The Google Cloud credentials file {} (GOOGLE_APPLICATION_CREDENTIALS) \
                     does not exist",
                    path.display()
                ),
                CredentialsPath::WellKnown(_) => format!(
                    "Could not load the default credentials: {} does not exist. Run `gcloud \
                     auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS \
                     to a service account key file, or set GOOGLE_CLOUD_API_KEY",
                    path.display()
                ),
            }));
        }
        Err(e) => {
            return Err(other(format!(
                "cannot read the Google Cloud credentials file {}: {e}",
                path.display()
            )))
        }
    };
    let digest: [u8; 32] = Sha256::digest(&text).into();
    let raw: RawFile = serde_json::from_slice(&text).map_err(|e| {
        // serde's message names a line and column, never the text.
        other(format!(
            "the Google Cloud credentials file {} is not valid JSON: {e}",
            path.display()
        ))
    })?;
    let quota_project = raw.quota_project_id.clone().filter(|q| !q.is_empty());
    let mut cache = cancellable(cancel, CACHE.lock()).await?;
    let entries = cache.get_or_insert_with(HashMap::new);
    let key = (path.clone(), digest);
    if let Some(c) = entries.get(&key) {
        if c.renew_at.is_some_and(|at| Instant::now() < at) {
            return Ok(AccessToken {
                token: c.token.clone(),
                quota_project,
            });
        }
    }
    let credentials = read_credentials(raw, &path)?;
    let fetched = cancellable(cancel, fetch_token(client, &credentials, &path)).await??;
    let (token, lifetime) = fetched;
    entries.insert(
        key,
        Cached {
            token: token.clone(),
            renew_at: lifetime
                .and_then(|l| l.checked_sub(REFRESH_MARGIN).map(|l| Instant::now() + l)),
        },
    );
    Ok(AccessToken {
        token,
        quota_project,
    })
}

/// The file's credentials, checked as the library checks them (its words for what is
/// missing).
fn read_credentials(raw: RawFile, path: &Path) -> Result<Credentials, ProviderError> {
    let shown = path.display();
    let field = |v: Option<String>, name: &str| {
        v.filter(|s| !s.is_empty()).ok_or_else(|| {
            other(format!(
                "The Google Cloud credentials file {shown} does not contain a {name} field"
            ))
        })
    };
    let token_uri = raw
        .token_uri
        .clone()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| GOOGLE_TOKEN_URL.to_string());
    match raw.kind.as_deref() {
        Some("authorized_user") => Ok(Credentials::User {
            client_id: field(raw.client_id, "client_id")?,
            client_secret: field(raw.client_secret, "client_secret")?,
            refresh_token: field(raw.refresh_token, "refresh_token")?,
            token_uri,
        }),
        // The library reads any other file, typed or not, as a service account key.
        None | Some("service_account") => {
            let email = field(raw.client_email, "client_email")?;
            let pem = field(raw.private_key, "private_key")?;
            let key = private_key(&pem).map_err(|why| {
                other(format!(
                    "The private_key in the Google Cloud credentials file {shown} \
                     (service account {email}) cannot be used: {why}"
                ))
            })?;
            Ok(Credentials::ServiceAccount {
                email,
                key: Box::new(key),
                token_uri,
            })
        }
        Some(kind) => Err(other(format!(
            "The Google Cloud credentials file {shown} holds \"{kind}\" credentials; this pi \
             signs in with \"service_account\" and \"authorized_user\" files only"
        ))),
    }
}

/// An RSA key in PEM form: PKCS#8 (`BEGIN PRIVATE KEY`, what Google issues) or PKCS#1
/// (`BEGIN RSA PRIVATE KEY`). The reason never quotes the key.
fn private_key(pem: &str) -> Result<rsa::PrivateKey, String> {
    use rsa::pkcs1::DecodeRsaPrivateKey;
    use rsa::pkcs8::DecodePrivateKey;
    let pem = pem.trim();
    if pem.starts_with("-----BEGIN RSA PRIVATE KEY-----") {
        rsa::PrivateKey::from_pkcs1_pem(pem)
            .map_err(|e| format!("not a PKCS#1 RSA private key ({e})"))
    } else if pem.starts_with("-----BEGIN PRIVATE KEY-----") {
        rsa::PrivateKey::from_pkcs8_pem(pem)
            .map_err(|e| format!("not a PKCS#8 RSA private key ({e})"))
    } else {
        Err("not an RSA private key in PEM form (-----BEGIN PRIVATE KEY-----)".into())
    }
}

fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The signed assertion a service account exchanges for a token: the library's header
/// (`{"alg":"RS256"}`) and claims (`iss`, `scope`, `aud`, `exp`, `iat`), with the file's
/// token endpoint as the audience.
pub(crate) fn assertion(
    key: &rsa::PrivateKey,
    email: &str,
    audience: &str,
    now_secs: u64,
) -> Result<String, String> {
    let header = serde_json::json!({"alg": "RS256"});
    let claims = serde_json::json!({
        "iss": email,
        "scope": CLOUD_PLATFORM_SCOPE,
        "aud": audience,
        "exp": now_secs + ASSERTION_LIFETIME_SECS,
        "iat": now_secs,
    });
    let signing_input = format!(
        "{}.{}",
        b64url(header.to_string().as_bytes()),
        b64url(claims.to_string().as_bytes())
    );
    let signature = key
        .pkcs1v15_sign::<rsa::sha2::Sha256>(signing_input.as_bytes())
        .map_err(|e| format!("signing failed ({e})"))?;
    Ok(format!("{signing_input}.{}", b64url(&signature)))
}

/// `application/x-www-form-urlencoded`, as `URLSearchParams` writes it.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    let enc = |s: &str| {
        let mut out = String::with_capacity(s.len());
        for b in s.bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                    out.push(b as char)
                }
                b' ' => out.push('+'),
                _ => out.push_str(&format!("%{b:02X}")),
            }
        }
        out
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A token from the endpoint, and how long it lives (`None`: it did not say).
async fn fetch_token(
    client: &reqwest::Client,
    credentials: &Credentials,
    path: &Path,
) -> Result<(String, Option<Duration>), ProviderError> {
    let (body, token_uri, who) = match credentials {
        Credentials::ServiceAccount {
            email,
            key,
            token_uri,
        } => {
            let jwt = assertion(key, email, token_uri, now_secs()).map_err(|why| {
                other(format!(
                    "cannot sign in with the Google Cloud credentials file {} (service \
                     account {email}): {why}",
                    path.display()
                ))
            })?;
            let body = form(&[("grant_type", JWT_BEARER_GRANT), ("assertion", &jwt)]);
            (body, token_uri, format!("service account {email}"))
        }
        Credentials::User {
            client_id,
            client_secret,
            refresh_token,
            token_uri,
        } => {
            let body = form(&[
                ("refresh_token", refresh_token),
                ("client_id", client_id),
                ("client_secret", client_secret),
                ("grant_type", "refresh_token"),
            ]);
            (body, token_uri, "user credentials".to_string())
        }
    };
    let whose = format!(
        "the Google Cloud credentials file {} ({who})",
        path.display()
    );
    let sent = client
        .post(token_uri)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(body)
        .timeout(TOKEN_TIMEOUT)
        .send()
        .await
        .map_err(|e| {
            ProviderError::Connection(format!(
                "cannot reach the token endpoint {token_uri} for {whose}: {}",
                error_chain(&e)
            ))
        })?;
    let status = sent.status().as_u16();
    let retry_after = {
        let headers = sent
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        retry_after_ms(&headers)
    };
    let text = sent.text().await.map_err(|e| {
        ProviderError::StreamDropped(format!(
            "the token endpoint {token_uri} for {whose} broke off: {}",
            error_chain(&e)
        ))
    })?;
    let answer: Option<Value> = serde_json::from_str(&text).ok();
    if status >= 400 {
        // google-auth-library's wording (`error: error_description`), else the status; never
        // the body as a whole, which a proxy could fill with anything.
        let said = answer
            .as_ref()
            .and_then(|v| {
                let error = v.get("error")?;
                let error = error.as_str().map(str::to_string).or_else(|| {
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })?;
                Some(match v.get("error_description").and_then(Value::as_str) {
                    Some(d) => format!("{error}: {d}"),
                    None => error,
                })
            })
            .unwrap_or_else(|| format!("Request failed with status code {status}"));
        let message = format!("The token endpoint {token_uri} refused {whose}: {said}");
        return Err(if status == 429 || status >= 500 {
            ProviderError::Api {
                status,
                message,
                retry_after_ms: retry_after,
            }
        } else {
            ProviderError::Other(message)
        });
    }
    let token = answer
        .as_ref()
        .and_then(|v| v.get("access_token"))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            other(format!(
                "The token endpoint {token_uri} answered {whose} without an access_token"
            ))
        })?;
    let lifetime = answer
        .as_ref()
        .and_then(|v| v.get("expires_in"))
        .and_then(|e| e.as_f64().or_else(|| e.as_str()?.parse().ok()))
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(Duration::from_secs_f64);
    Ok((token.to_string(), lifetime))
}
