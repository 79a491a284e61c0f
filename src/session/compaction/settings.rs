//! The `compaction` settings block (`enabled`, `reserveTokens`, `keepRecentTokens`) with pi's
//! defaults. Kept apart from the config loader so compaction can be used and tested without
//! it; the loader hands over the JSON object.

use serde::Serialize;
use serde_json::Value;

/// pi's `CompactionSettings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSettings {
    pub enabled: bool,
    /// Room left for the model's reply: compaction triggers once the context exceeds
    /// `contextWindow − reserveTokens`, and the summary may use up to 80% of it.
    pub reserve_tokens: u64,
    /// About how much recent conversation survives a compaction verbatim.
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            enabled: true,
            reserve_tokens: 16384,
            keep_recent_tokens: 20000,
        }
    }
}

impl CompactionSettings {
    /// Reads the settings' `compaction` object. pi takes each field with `??`, so a missing
    /// (or null) field, or a missing object, means the default; a field of the wrong type is
    /// treated the same rather than failing the whole config.
    pub fn from_json(compaction: Option<&Value>) -> Self {
        let d = CompactionSettings::default();
        let field = |k: &str| compaction.and_then(|c| c.get(k));
        let tokens = |k: &str, default: u64| {
            field(k)
                .and_then(|v| {
                    v.as_u64()
                        .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
                })
                .unwrap_or(default)
        };
        CompactionSettings {
            enabled: field("enabled")
                .and_then(Value::as_bool)
                .unwrap_or(d.enabled),
            reserve_tokens: tokens("reserveTokens", d.reserve_tokens),
            keep_recent_tokens: tokens("keepRecentTokens", d.keep_recent_tokens),
        }
    }

    /// The snake_case form sent to hooks.
    pub fn to_hook_value(&self) -> Value {
        serde_json::json!({
            "enabled": self.enabled,
            "reserve_tokens": self.reserve_tokens,
            "keep_recent_tokens": self.keep_recent_tokens,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_pis() {
        let d = CompactionSettings::default();
        assert!(d.enabled);
        assert_eq!(d.reserve_tokens, 16384);
        assert_eq!(d.keep_recent_tokens, 20000);
        assert_eq!(CompactionSettings::from_json(None), d);
    }

    #[test]
    fn fields_override_defaults_individually() {
        let s = CompactionSettings::from_json(Some(
            &json!({"enabled": false, "keepRecentTokens": 500}),
        ));
        assert!(!s.enabled);
        assert_eq!(s.reserve_tokens, 16384);
        assert_eq!(s.keep_recent_tokens, 500);
        let s =
            CompactionSettings::from_json(Some(&json!({"reserveTokens": 1000.0, "enabled": "no"})));
        assert!(s.enabled);
        assert_eq!(s.reserve_tokens, 1000);
    }

    #[test]
    fn serializes_camel_case_and_hook_form_snake_case() {
        let v = serde_json::to_value(CompactionSettings::default()).unwrap();
        assert_eq!(v["reserveTokens"], 16384);
        assert_eq!(
            CompactionSettings::default().to_hook_value()["keep_recent_tokens"],
            20000
        );
    }
}
