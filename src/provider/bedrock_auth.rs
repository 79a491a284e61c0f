//! Who a Bedrock request is from and where it goes, as pi 1.6's `bedrock-converse-stream.js`
//! configures the AWS SDK's client: a bearer token (the stored key, else
//! `AWS_BEARER_TOKEN_BEDROCK`), or SigV4 credentials from the environment's access keys or from
//! a profile's static keys in the shared files (`AWS_SHARED_CREDENTIALS_FILE`,
//! `AWS_CONFIG_FILE`, else `~/.aws/credentials` and `~/.aws/config`); and the region and
//! endpoint by 1.6's rules (an inference profile ARN's region, `AWS_REGION`,
//! `AWS_DEFAULT_REGION`, the region of a standard `bedrock-runtime` base URL, the profile's
//! `region`, else `us-east-1`).
//!
//! Every variable is read as the model's credential sees it first (auth.json's `env`, which is
//! how a stored `AWS_PROFILE` choice travels), then the process environment. The SDK's other
//! credential sources (SSO, `credential_process`, assumed roles, ECS and IMDS endpoints, web
//! identity) are not spoken: a request that would need one fails saying so.

use std::collections::HashMap;
use std::path::PathBuf;

use super::{Model, ProviderError};

/// How the request proves who sends it.
#[derive(Clone, PartialEq, Eq)]
pub enum BedrockAuth {
    /// `Authorization: Bearer <token>` (Bedrock API keys).
    Bearer(String),
    /// AWS SigV4 over the request.
    SigV4(AwsCredentials),
}

impl std::fmt::Debug for BedrockAuth {
    // Secrets never reach a log through a `{:?}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BedrockAuth::Bearer(_) => f.write_str("Bearer([redacted])"),
            BedrockAuth::SigV4(c) => write!(f, "SigV4({})", c.access_key_id),
        }
    }
}

/// Static AWS credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct AwsCredentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

/// Where and how one request is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The endpoint's base URL (no trailing slash).
    pub endpoint: String,
    /// The signing region.
    pub region: String,
    pub auth: BedrockAuth,
}

/// A variable as the model's provider sees it, empty counted as unset (1.6's
/// `getProviderEnvValue`).
fn var(model: &Model, name: &str) -> Option<String> {
    model.env_var(name).filter(|v| !v.is_empty())
}

/// Whether the environment names a credential source 1.6 counts for `amazon-bedrock` (its
/// `getEnvApiKey` and the provider's `resolve`): the catalog provider has no key variable.
pub fn has_ambient_credentials(value: impl Fn(&str) -> Option<String>) -> bool {
    let set = |n: &str| value(n).is_some_and(|v| !v.is_empty());
    set("AWS_PROFILE")
        || (set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY"))
        || set("AWS_BEARER_TOKEN_BEDROCK")
        || set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        || set("AWS_CONTAINER_CREDENTIALS_FULL_URI")
        || set("AWS_WEB_IDENTITY_TOKEN_FILE")
}

/// The variables that hold Bedrock secrets, hidden from the model's shell like every key.
pub const SECRET_VARS: [&str; 3] = [
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
];

/// The region of a standard runtime endpoint URL (`bedrock-runtime[-fips].<region>.amazonaws.com[.cn]`).
pub fn endpoint_region(base_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(base_url).ok()?;
    let host = url.host_str()?.to_ascii_lowercase();
    let rest = host
        .strip_prefix("bedrock-runtime-fips.")
        .or_else(|| host.strip_prefix("bedrock-runtime."))?;
    let region = rest
        .strip_suffix(".amazonaws.com.cn")
        .or_else(|| rest.strip_suffix(".amazonaws.com"))?;
    let valid = !region.is_empty()
        && region
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    valid.then(|| region.to_string())
}

/// The region in an inference profile ARN (`arn:aws[-partition]:bedrock:<region>:…`).
fn arn_region(id: &str) -> Option<&str> {
    let rest = id.strip_prefix("arn:aws")?;
    let rest = match rest.strip_prefix(':') {
        Some(r) => r,
        None => rest.strip_prefix('-')?.split_once(':')?.1,
    };
    let region = rest.strip_prefix("bedrock:")?.split(':').next()?;
    let valid = !region.is_empty()
        && region
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    valid.then_some(region)
}

/// `AWS_REGION`, else `AWS_DEFAULT_REGION` (1.6's `getConfiguredBedrockRegion`).
pub fn configured_region(model: &Model) -> Option<String> {
    var(model, "AWS_REGION").or_else(|| var(model, "AWS_DEFAULT_REGION"))
}

/// The default endpoint of `region`.
fn regional_endpoint(region: &str) -> String {
    let suffix = if region.starts_with("cn-") {
        "amazonaws.com.cn"
    } else {
        "amazonaws.com"
    };
    format!("https://bedrock-runtime.{region}.{suffix}")
}

/// Where `model`'s requests go and with which credential; `stored_key` is the run's key (a
/// stored bearer token or `--api-key`).
pub fn target(model: &Model, stored_key: Option<&str>) -> Result<Target, ProviderError> {
    let configured = configured_region(model);
    // Only the process's own AWS_PROFILE, as 1.6's `hasAmbientConfiguredProfile`.
    let ambient_profile = std::env::var("AWS_PROFILE").is_ok_and(|v| !v.is_empty());
    let from_url = endpoint_region(&model.base_url);
    let explicit = from_url.is_none() || (configured.is_none() && !ambient_profile);
    let profile = profile_name(model);
    let region = if let Some(r) = arn_region(&model.id) {
        r.to_string()
    } else if let Some(r) = configured {
        r
    } else if let (Some(r), true) = (from_url.as_ref(), explicit) {
        r.clone()
    } else if !ambient_profile {
        "us-east-1".to_string()
    } else {
        profile_region(&profile).ok_or_else(|| ProviderError::Other("Region is missing".into()))?
    };
    let endpoint = if explicit {
        model.base_url.trim_end_matches('/').to_string()
    } else {
        regional_endpoint(&region)
    };
    Ok(Target {
        endpoint,
        region,
        auth: auth(model, stored_key, &profile)?,
    })
}

/// The credential: a bearer token unless `AWS_BEDROCK_SKIP_AUTH=1` (proxies that need none,
/// signed with dummy keys as 1.6 does), else SigV4 keys.
fn auth(
    model: &Model,
    stored_key: Option<&str>,
    profile: &str,
) -> Result<BedrockAuth, ProviderError> {
    if var(model, "AWS_BEDROCK_SKIP_AUTH").as_deref() == Some("1") {
        return Ok(BedrockAuth::SigV4(AwsCredentials {
            access_key_id: "dummy-access-key".into(),
            secret_access_key: "dummy-secret-key".into(),
            session_token: None,
        }));
    }
    let bearer = stored_key
        .filter(|k| !k.is_empty())
        .map(str::to_string)
        .or_else(|| var(model, "AWS_BEARER_TOKEN_BEDROCK"));
    if let Some(token) = bearer {
        return Ok(BedrockAuth::Bearer(token));
    }
    // A profile the credential itself names beats ambient keys (1.6's #6957).
    let scoped_profile = model
        .auth
        .env
        .get("AWS_PROFILE")
        .is_some_and(|p| !p.is_empty());
    if !scoped_profile {
        if let (Some(id), Some(secret)) = (
            var(model, "AWS_ACCESS_KEY_ID"),
            var(model, "AWS_SECRET_ACCESS_KEY"),
        ) {
            return Ok(BedrockAuth::SigV4(AwsCredentials {
                access_key_id: id,
                secret_access_key: secret,
                session_token: var(model, "AWS_SESSION_TOKEN"),
            }));
        }
    }
    profile_credentials(model, profile).map(BedrockAuth::SigV4)
}

/// The profile in use: the credential's or the environment's `AWS_PROFILE`, else `default`.
fn profile_name(model: &Model) -> String {
    var(model, "AWS_PROFILE").unwrap_or_else(|| "default".to_string())
}

fn shared_file(model: Option<&Model>, var_name: &str, default: &str) -> Option<PathBuf> {
    let set = match model {
        Some(m) => var(m, var_name),
        None => std::env::var(var_name).ok().filter(|v| !v.is_empty()),
    };
    match set {
        Some(p) => Some(expand_home(&p)),
        None => dirs::home_dir().map(|h| h.join(".aws").join(default)),
    }
}

fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(p),
    }
}

/// The sections of an INI file: `[name]` → key → value (keys lower-cased, values trimmed).
pub fn parse_ini(text: &str) -> HashMap<String, HashMap<String, String>> {
    let mut out: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut section: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim().to_string();
            out.entry(name.clone()).or_default();
            section = Some(name);
            continue;
        }
        let (Some(s), Some((k, v))) = (section.as_ref(), line.split_once('=')) else {
            continue;
        };
        out.entry(s.clone())
            .or_default()
            .insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
    }
    out
}

/// A profile's section in the config file: `[profile name]`, or `[default]`.
fn config_section<'a>(
    config: &'a HashMap<String, HashMap<String, String>>,
    profile: &str,
) -> Option<&'a HashMap<String, String>> {
    config.get(&format!("profile {profile}")).or_else(|| {
        (profile == "default")
            .then(|| config.get("default"))
            .flatten()
    })
}

fn read_ini(path: Option<PathBuf>) -> HashMap<String, HashMap<String, String>> {
    path.and_then(|p| std::fs::read_to_string(p).ok())
        .map(|t| parse_ini(&t))
        .unwrap_or_default()
}

/// The profile's `region` in the config file.
fn profile_region(profile: &str) -> Option<String> {
    let config = read_ini(shared_file(None, "AWS_CONFIG_FILE", "config"));
    config_section(&config, profile)?
        .get("region")
        .filter(|r| !r.is_empty())
        .cloned()
}

/// A profile's static keys: the credentials file's section, else the config file's.
fn profile_credentials(model: &Model, profile: &str) -> Result<AwsCredentials, ProviderError> {
    let creds = read_ini(shared_file(
        Some(model),
        "AWS_SHARED_CREDENTIALS_FILE",
        "credentials",
    ));
    let config = read_ini(shared_file(Some(model), "AWS_CONFIG_FILE", "config"));
    let sections = [creds.get(profile), config_section(&config, profile)];
    for section in sections.into_iter().flatten() {
        let (Some(id), Some(secret)) = (
            section.get("aws_access_key_id").filter(|v| !v.is_empty()),
            section
                .get("aws_secret_access_key")
                .filter(|v| !v.is_empty()),
        ) else {
            continue;
        };
        return Ok(AwsCredentials {
            access_key_id: id.clone(),
            secret_access_key: secret.clone(),
            session_token: section
                .get("aws_session_token")
                .filter(|v| !v.is_empty())
                .cloned(),
        });
    }
    let known = creds.contains_key(profile) || config_section(&config, profile).is_some();
    Err(ProviderError::Other(if known {
        format!(
            "AWS profile \"{profile}\" has no static keys (aws_access_key_id and \
             aws_secret_access_key); its other credential sources (SSO, credential_process, \
             roles) are not supported by this pi"
        )
    } else {
        "Could not load credentials from any providers: set AWS_ACCESS_KEY_ID and \
         AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK"
            .to_string()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::stream::test_support::model;

    #[test]
    fn standard_endpoints_name_their_region() {
        let r = |u| endpoint_region(u);
        assert_eq!(
            r("https://bedrock-runtime.us-east-1.amazonaws.com").as_deref(),
            Some("us-east-1")
        );
        assert_eq!(
            r("https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com/").as_deref(),
            Some("us-gov-west-1")
        );
        assert_eq!(
            r("https://bedrock-runtime.cn-north-1.amazonaws.com.cn").as_deref(),
            Some("cn-north-1")
        );
        assert_eq!(
            r("https://vpce-1.bedrock-runtime.us-east-1.vpce.amazonaws.com"),
            None
        );
        assert_eq!(r("http://127.0.0.1:9"), None);
    }

    #[test]
    fn inference_profile_arns_name_their_region() {
        assert_eq!(
            arn_region("arn:aws:bedrock:eu-west-1:123:application-inference-profile/x"),
            Some("eu-west-1")
        );
        assert_eq!(
            arn_region("arn:aws-us-gov:bedrock:us-gov-west-1:1:x"),
            Some("us-gov-west-1")
        );
        assert_eq!(arn_region("anthropic.claude"), None);
    }

    #[test]
    fn ini_sections_and_profiles() {
        let ini = parse_ini(
            "[default]\nregion = us-west-2\n# c\n[profile work]\nAWS_ACCESS_KEY_ID= A \n",
        );
        assert_eq!(
            config_section(&ini, "default").unwrap()["region"],
            "us-west-2"
        );
        assert_eq!(
            config_section(&ini, "work").unwrap()["aws_access_key_id"],
            "A"
        );
        assert!(config_section(&ini, "other").is_none());
    }

    #[test]
    fn a_scoped_profile_beats_ambient_keys_and_a_stored_key_is_a_bearer() {
        let dir = tempfile::tempdir().unwrap();
        let creds = dir.path().join("credentials");
        std::fs::write(
            &creds,
            "[work]\naws_access_key_id=PROFILEKEY\naws_secret_access_key=s\n",
        )
        .unwrap();
        let mut m = model(
            "bedrock-converse-stream",
            "https://bedrock-runtime.us-east-1.amazonaws.com",
        );
        m.auth
            .env
            .insert("AWS_ACCESS_KEY_ID".into(), "ENVKEY".into());
        m.auth
            .env
            .insert("AWS_SECRET_ACCESS_KEY".into(), "x".into());
        m.auth.env.insert(
            "AWS_SHARED_CREDENTIALS_FILE".into(),
            creds.display().to_string(),
        );
        m.auth.env.insert(
            "AWS_CONFIG_FILE".into(),
            dir.path().join("none").display().to_string(),
        );
        let BedrockAuth::SigV4(c) = auth(&m, None, "work").unwrap() else {
            panic!()
        };
        assert_eq!(c.access_key_id, "ENVKEY");
        m.auth.env.insert("AWS_PROFILE".into(), "work".into());
        let BedrockAuth::SigV4(c) = auth(&m, None, "work").unwrap() else {
            panic!()
        };
        assert_eq!(c.access_key_id, "PROFILEKEY");
        assert_eq!(
            auth(&m, Some("tok"), "work").unwrap(),
            BedrockAuth::Bearer("tok".into())
        );
        assert!(!format!("{:?}", BedrockAuth::Bearer("tok".into())).contains("tok"));
    }
}
