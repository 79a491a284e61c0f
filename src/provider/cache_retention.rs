//! How long a provider is asked to keep the prompt cache: pi 1.6's `cacheRetention`, which a
//! user sets with `PI_CACHE_RETENTION=long` (in the environment or the provider's `env`
//! block). One resolution for every API, so Anthropic's `ttl`, OpenAI's
//! `prompt_cache_retention` and Bedrock's cache points never disagree about what was asked.

use serde_json::Value;

use super::Model;

/// The retention a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retention {
    /// No cache marks at all (a per-call choice 1.6 offers; nothing in pi sets it yet).
    None,
    /// The provider's default, about five minutes.
    Short,
    /// An hour at Anthropic and Bedrock, a day at OpenAI.
    Long,
}

impl Retention {
    /// 1.6's `resolveCacheRetention` without a per-call choice: `long` only when
    /// `PI_CACHE_RETENTION` says so, else short.
    pub fn of(model: &Model) -> Self {
        match model.env_var("PI_CACHE_RETENTION").as_deref() {
            Some("long") => Retention::Long,
            _ => Retention::Short,
        }
    }

    /// Long, and the model keeps a long cache (`compat.supportsLongCacheRetention`, which
    /// defaults to `default` per API).
    pub fn long_kept(self, model: &Model, default: bool) -> bool {
        self == Retention::Long && supports_long(model, default)
    }
}

/// `compat.supportsLongCacheRetention`, else the API's default.
pub fn supports_long(model: &Model, default: bool) -> bool {
    match model.compat.get("supportsLongCacheRetention") {
        Some(Value::Bool(b)) => *b,
        _ => default,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::stream::test_support::model;

    #[test]
    fn long_only_when_the_environment_says_long_and_the_model_keeps_it() {
        let mut m = model("anthropic-messages", "http://x");
        assert_eq!(Retention::of(&m), Retention::Short);
        m.auth
            .env
            .insert("PI_CACHE_RETENTION".into(), "long".into());
        assert_eq!(Retention::of(&m), Retention::Long);
        assert!(Retention::of(&m).long_kept(&m, true));
        m.compat = serde_json::json!({"supportsLongCacheRetention": false});
        assert!(!Retention::of(&m).long_kept(&m, true));
        m.auth
            .env
            .insert("PI_CACHE_RETENTION".into(), "short".into());
        assert_eq!(Retention::of(&m), Retention::Short);
    }
}
