//! `auth.json`: stored credentials per provider, in pi's format
//! `{ "<provider>": { "type": "api_key", "key": "…", "env"?: "…" } | { "type": "oauth", … } }`.
//!
//! The file is shared with the TypeScript pi, so OAuth entries written by its `/login` are
//! recognised and kept aside (reported as unsupported when they would have been needed) rather
//! than rejected. Keys accept the same `!command` / `$VAR` grammar as `models.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{read_json_file, ConfigError};

/// One provider's stored credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthEntry {
    /// `key` is raw value syntax; `env` names a variable to read when `key` is absent (an
    /// older pi's form); `vars` is 1.6's `env` object, variables the provider reads besides
    /// the key (a Cloudflare account id, an Azure resource name), before the environment's.
    ApiKey {
        key: Option<String>,
        env: Option<String>,
        vars: BTreeMap<String, String>,
    },
    /// A subscription login (`/login` in either program): its tokens, when readable.
    OAuth(Option<crate::oauth::Tokens>),
}

/// The parsed `auth.json`.
#[derive(Debug, Clone, Default)]
pub struct AuthFile {
    pub path: PathBuf,
    pub entries: BTreeMap<String, AuthEntry>,
}

impl AuthFile {
    /// Loads `path`; a missing file means no stored credentials. Entries of unknown type are
    /// skipped with a warning (pushed to `warnings`).
    pub fn load(path: &Path, warnings: &mut Vec<String>) -> Result<Self, ConfigError> {
        let mut file = AuthFile {
            path: path.to_path_buf(),
            entries: BTreeMap::new(),
        };
        let Some(root) = read_json_file(path)? else {
            return Ok(file);
        };
        let Value::Object(map) = root else {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                message: "auth.json must be a JSON object keyed by provider name".to_string(),
            });
        };
        for (provider, entry) in map {
            let invalid = |message: String| ConfigError::Invalid {
                path: path.to_path_buf(),
                message: format!("provider \"{provider}\": {message}"),
            };
            let Value::Object(entry) = entry else {
                return Err(invalid("each entry must be an object".to_string()));
            };
            let string_field = |name: &str| -> Result<Option<String>, ConfigError> {
                match entry.get(name) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(s)) => Ok(Some(s.clone())),
                    Some(other) => {
                        Err(invalid(format!("\"{name}\" must be a string, got {other}")))
                    }
                }
            };
            match entry.get("type").and_then(Value::as_str) {
                Some("api_key") => {
                    let key = string_field("key")?;
                    // pi 1.6 stores `env` as an object of extra variables for the provider;
                    // an older pi named one variable to read the key from.
                    let (env, vars) = match entry.get("env") {
                        Some(Value::Object(vars)) => {
                            let vars = vars
                                .iter()
                                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                                .collect();
                            (None, vars)
                        }
                        _ => (string_field("env")?, BTreeMap::new()),
                    };
                    // 1.6's Vertex AI login stores only variables (project, location,
                    // credentials file) and no key.
                    if key.is_none() && env.is_none() && vars.is_empty() {
                        warnings.push(format!(
                            "{}: provider \"{provider}\" has type \"api_key\" but no \"key\"; ignored",
                            path.display()
                        ));
                        continue;
                    }
                    file.entries
                        .insert(provider.clone(), AuthEntry::ApiKey { key, env, vars });
                }
                Some("oauth") => {
                    let tokens = crate::oauth::Tokens::from_entry(&Value::Object(entry.clone()));
                    file.entries
                        .insert(provider.clone(), AuthEntry::OAuth(tokens));
                }
                other => warnings.push(format!(
                    "{}: provider \"{provider}\" has unsupported credential type {}; ignored",
                    path.display(),
                    other.map_or("(missing)".to_string(), |t| format!("\"{t}\""))
                )),
            }
        }
        Ok(file)
    }

    pub fn get(&self, provider: &str) -> Option<&AuthEntry> {
        self.entries.get(provider)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_api_keys_and_recognises_oauth() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("auth.json");
        std::fs::write(
            &p,
            r#"{"anthropic":{"type":"api_key","key":"sk-a"},
                "openai":{"type":"oauth","access":"x","refresh":"y","expires":1},
                "groq":{"type":"api_key","env":"MY_GROQ"},
                "azure":{"type":"api_key","key":"az","env":{"AZURE_OPENAI_RESOURCE_NAME":"r"}},
                "weird":{"type":"magic"}}"#,
        )
        .unwrap();
        let mut w = Vec::new();
        let f = AuthFile::load(&p, &mut w).unwrap();
        assert_eq!(
            f.get("anthropic"),
            Some(&AuthEntry::ApiKey {
                key: Some("sk-a".into()),
                env: None,
                vars: BTreeMap::new(),
            })
        );
        assert_eq!(
            f.get("openai"),
            Some(&AuthEntry::OAuth(Some(crate::oauth::Tokens {
                access: "x".into(),
                refresh: "y".into(),
                expires: 1,
                extra: Default::default(),
            })))
        );
        assert!(matches!(
            f.get("groq"),
            Some(AuthEntry::ApiKey { key: None, .. })
        ));
        assert_eq!(
            f.get("azure"),
            Some(&AuthEntry::ApiKey {
                key: Some("az".into()),
                env: None,
                vars: BTreeMap::from([("AZURE_OPENAI_RESOURCE_NAME".into(), "r".into())]),
            }),
            "1.6's env object"
        );
        assert!(f.get("weird").is_none());
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("auth.json") && w[0].contains("magic"),
            "{w:?}"
        );
    }

    #[test]
    fn bad_shapes_are_errors_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("auth.json");
        std::fs::write(&p, r#"{"anthropic":{"type":"api_key","key":5}}"#).unwrap();
        let err = AuthFile::load(&p, &mut Vec::new()).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("auth.json") && msg.contains("\"key\""),
            "{msg}"
        );
        std::fs::write(&p, "{oops").unwrap();
        let err = AuthFile::load(&p, &mut Vec::new()).unwrap_err();
        assert!(matches!(err, ConfigError::InvalidJson { .. }));
    }
}
