//! Request headers and which of them carry credentials. Hooks see every header of a model
//! request in `before_provider_headers`, but a credential only as [`REDACTED`] (SPEC 4.9):
//! the API key headers by name, and any header whose value came from a key, a `!command` or a
//! `$VAR`. The origin is tracked from configuration onwards ([`ModelHeader`]) instead of being
//! guessed from the text, because a key looks like any other string.

use std::collections::{BTreeMap, BTreeSet};

/// Header names that carry credentials whatever their value's origin.
const CREDENTIAL_HEADERS: [&str; 5] = [
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
];

/// What `before_provider_headers` sees instead of a credential: neither the value nor any
/// part of it.
pub const REDACTED: &str = "[redacted]";

fn is_credential_header(name: &str) -> bool {
    CREDENTIAL_HEADERS
        .iter()
        .any(|c| c.eq_ignore_ascii_case(name))
}

/// A header value configured for a model (models.json `headers`), resolved, with whether it is
/// a credential: it came from a `!command` or a `$VAR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelHeader {
    pub value: String,
    pub credential: bool,
}

impl ModelHeader {
    pub fn literal(value: impl Into<String>) -> Self {
        ModelHeader {
            value: value.into(),
            credential: false,
        }
    }

    pub fn credential(value: impl Into<String>) -> Self {
        ModelHeader {
            value: value.into(),
            credential: true,
        }
    }
}

impl From<&str> for ModelHeader {
    fn from(v: &str) -> Self {
        ModelHeader::literal(v)
    }
}

impl From<String> for ModelHeader {
    fn from(v: String) -> Self {
        ModelHeader::literal(v)
    }
}

impl PartialEq<&str> for ModelHeader {
    fn eq(&self, other: &&str) -> bool {
        self.value == *other
    }
}

/// A serialized model never carries a credential, wherever it ends up.
impl serde::Serialize for ModelHeader {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(if self.credential {
            REDACTED
        } else {
            &self.value
        })
    }
}

/// The headers of one request by lower-case name, with their real values, and the names of
/// those that are credentials.
#[derive(Debug, Clone, Default)]
pub struct RequestHeaders {
    values: BTreeMap<String, String>,
    credentials: BTreeSet<String>,
}

impl RequestHeaders {
    /// Sets a header; a credential by its name ([`CREDENTIAL_HEADERS`]) or not at all.
    pub fn set(&mut self, name: &str, value: &str) {
        self.insert(name, value, is_credential_header(name));
    }

    /// Sets a header whose value carries a credential (the API key), whatever its name.
    pub fn set_credential(&mut self, name: &str, value: &str) {
        self.insert(name, value, true);
    }

    /// Sets a model's configured headers, credentials as such.
    pub fn set_configured(&mut self, headers: &BTreeMap<String, ModelHeader>) {
        for (k, h) in headers {
            let credential = h.credential || is_credential_header(k);
            self.insert(k, &h.value, credential);
        }
    }

    fn insert(&mut self, name: &str, value: &str, credential: bool) {
        let name = name.to_ascii_lowercase();
        if credential {
            self.credentials.insert(name.clone());
        } else {
            self.credentials.remove(&name);
        }
        self.values.insert(name, value.to_string());
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.values
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The headers as `before_provider_headers` sees them: credentials redacted.
    pub fn for_hooks(&self) -> BTreeMap<String, String> {
        self.values
            .iter()
            .map(|(k, v)| {
                let shown = if self.credentials.contains(k) {
                    REDACTED
                } else {
                    v.as_str()
                };
                (k.clone(), shown.to_string())
            })
            .collect()
    }

    /// The headers to send once the hooks edited [`for_hooks`](Self::for_hooks): a credential
    /// handed back as [`REDACTED`] keeps its real value, one a hook set anew or removed is the
    /// hook's choice. Names compare case-insensitively, as HTTP's do, and a hook's own value
    /// beats a credential handed back unchanged under another spelling.
    pub fn after_hooks(&self, from_hooks: BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let mut kept = Vec::new();
        for (name, value) in from_hooks {
            let name = name.to_ascii_lowercase();
            if value == REDACTED && self.credentials.contains(&name) {
                if let Some(real) = self.values.get(&name) {
                    kept.push((name, real.clone()));
                    continue;
                }
            }
            out.insert(name, value);
        }
        for (name, real) in kept {
            out.entry(name).or_insert(real);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_see_credentials_redacted_by_name_and_by_origin() {
        let mut h = RequestHeaders::default();
        h.set("Content-Type", "application/json");
        h.set("Authorization", "Bearer k");
        h.set("X-Api-Key", "k2");
        h.set_credential("x-custom-key-header", "k3");
        let configured = BTreeMap::from([
            (
                "X-From-Var".to_string(),
                ModelHeader::credential("Bearer v"),
            ),
            ("x-literal".to_string(), "lit".into()),
            ("Proxy-Authorization".to_string(), "Basic literal".into()),
        ]);
        h.set_configured(&configured);
        let shown = h.for_hooks();
        assert_eq!(shown["content-type"], "application/json");
        assert_eq!(shown["x-literal"], "lit");
        for name in [
            "authorization",
            "proxy-authorization",
            "x-api-key",
            "x-custom-key-header",
            "x-from-var",
        ] {
            assert_eq!(shown[name], REDACTED, "{name}");
        }
        // Nothing of a secret is shown, not even its scheme or a prefix.
        assert!(
            !shown
                .values()
                .any(|v| v.contains("Bearer") || v.contains("Basic") || v.starts_with('k')),
            "{shown:?}"
        );
        assert_eq!(h.get("X-From-Var"), Some("Bearer v"));
        // A literal header replacing a credential one is no longer secret.
        h.set("x-from-var", "public");
        assert_eq!(h.for_hooks()["x-from-var"], "public");
    }

    #[test]
    fn hook_edits_keep_redacted_credentials_and_apply_the_rest() {
        let mut h = RequestHeaders::default();
        h.set("authorization", "Bearer real");
        h.set_credential("x-var", "v-real");
        h.set_credential("x-cmd", "c-real");
        h.set("x-plain", "p");
        let mut edited = h.for_hooks();
        edited.remove("x-cmd");
        edited.insert("x-var".into(), "hook-value".into());
        edited.insert("x-new".into(), REDACTED.into());
        let sent = h.after_hooks(edited);
        assert_eq!(sent["authorization"], "Bearer real");
        assert_eq!(sent["x-var"], "hook-value");
        assert_eq!(sent["x-plain"], "p");
        // Only a header that was a credential gets a real value back.
        assert_eq!(sent["x-new"], REDACTED);
        assert!(!sent.contains_key("x-cmd"));

        // A hook's value under another spelling wins over the one handed back.
        let mut edited = h.for_hooks();
        edited.insert("Authorization".into(), "Bearer hook".into());
        let sent = h.after_hooks(edited);
        assert_eq!(sent["authorization"], "Bearer hook");
        assert_eq!(sent.len(), 4);
    }

    #[test]
    fn serialized_model_headers_hide_credentials() {
        let headers = BTreeMap::from([
            ("x-var".to_string(), ModelHeader::credential("secret-value")),
            ("x-lit".to_string(), ModelHeader::literal("lit")),
        ]);
        let v = serde_json::to_value(&headers).unwrap();
        assert_eq!(v, serde_json::json!({"x-lit": "lit", "x-var": REDACTED}));
    }
}
