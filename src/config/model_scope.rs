//! The models Ctrl+P cycles through (`--models`, the `enabledModels` setting, `/scoped-models`):
//! patterns resolved against the models that have auth, as pi 1.6 resolves them. A pattern is
//! a glob (`anthropic/*`, `*sonnet*`, matched case-insensitively against `provider/id` and the
//! bare id), or a model reference as `--model` takes it (`provider/id`, an exact or fuzzy id);
//! either may end in `:<thinking>`, the level the cycle switches to with that model.

use globset::GlobBuilder;

use super::registry::ModelRegistry;
use super::resolve::{match_with_suffix, Candidate};
use super::ConfigError;
use crate::provider::ThinkingLevel;

/// One model of the scope, and the level a `:thinking` suffix gave it (none: the cycle keeps
/// the session's level).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopedModel {
    pub provider: String,
    pub id: String,
    pub thinking: Option<ThinkingLevel>,
}

impl ScopedModel {
    /// `provider/id`, the form `enabledModels` stores.
    pub fn reference(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }
}

/// The scope `patterns` name, in their order without repeats, and a warning for each pattern
/// that names nothing or is ambiguous (pi 1.6's texts).
pub fn resolve_scope(
    registry: &ModelRegistry,
    patterns: &[String],
) -> (Vec<ScopedModel>, Vec<String>) {
    let available: Vec<Candidate> = registry.listed().collect();
    let mut scope: Vec<ScopedModel> = Vec::new();
    let mut warnings = Vec::new();
    let mut add = |(p, m): Candidate, thinking: Option<ThinkingLevel>| {
        if !scope.iter().any(|s| s.provider == p.name && s.id == m.id) {
            scope.push(ScopedModel {
                provider: p.name.clone(),
                id: m.id.clone(),
                thinking,
            });
        }
    };
    for pattern in patterns {
        let found = if pattern.contains(['*', '?', '[']) {
            glob_matches(pattern, &available)
        } else {
            reference_matches(registry, pattern, &available)
        };
        let (matches, thinking, warning) = found;
        if matches.is_empty() {
            warnings.push(format!("No models match pattern \"{pattern}\""));
        }
        warnings.extend(warning);
        for c in matches {
            add(c, thinking);
        }
    }
    (scope, warnings)
}

type Matches<'a> = (Vec<Candidate<'a>>, Option<ThinkingLevel>, Option<String>);

/// A glob, after an optional `:thinking` suffix is split off; an id that only looks like a
/// glob (`model[1m]`) is taken as it is.
fn glob_matches<'a>(pattern: &str, available: &[Candidate<'a>]) -> Matches<'a> {
    let (glob, thinking) = match pattern.rsplit_once(':') {
        Some((base, s)) if ThinkingLevel::parse(s).is_some() => (base, ThinkingLevel::parse(s)),
        _ => (pattern, None),
    };
    let exact: Vec<Candidate> = available
        .iter()
        .copied()
        .filter(|(p, m)| {
            m.id.eq_ignore_ascii_case(glob)
                || format!("{}/{}", p.name, m.id).eq_ignore_ascii_case(glob)
        })
        .collect();
    if !exact.is_empty() {
        return (exact, thinking, None);
    }
    let Ok(matcher) = GlobBuilder::new(glob)
        .case_insensitive(true)
        .literal_separator(false)
        .build()
        .map(|g| g.compile_matcher())
    else {
        return (Vec::new(), thinking, None);
    };
    let matches = available
        .iter()
        .copied()
        .filter(|(p, m)| {
            matcher.is_match(format!("{}/{}", p.name, m.id)) || matcher.is_match(&m.id)
        })
        .collect();
    (matches, thinking, None)
}

/// A model reference as `--model` takes it, within the models that have auth; several equally
/// good matches are all taken, with a warning.
fn reference_matches<'a>(
    registry: &ModelRegistry,
    pattern: &str,
    available: &[Candidate<'a>],
) -> Matches<'a> {
    // `provider/rest`: only that provider's models, `rest` matched as an id.
    let (pool, text): (Vec<Candidate>, &str) = match pattern.split_once('/') {
        Some((pre, rest))
            if available
                .iter()
                .any(|(p, _)| p.name.eq_ignore_ascii_case(pre)) =>
        {
            (
                available
                    .iter()
                    .copied()
                    .filter(|(p, _)| p.name.eq_ignore_ascii_case(pre))
                    .collect(),
                rest,
            )
        }
        _ => (available.to_vec(), pattern),
    };
    match match_with_suffix(registry, text, pattern, &pool) {
        Ok(Some((c, thinking, warning))) => (vec![c], thinking, warning),
        Ok(None) => (Vec::new(), None, None),
        Err(ConfigError::AmbiguousModel { candidates, .. }) => {
            let matches: Vec<Candidate> = pool
                .iter()
                .copied()
                .filter(|(p, m)| candidates.contains(&format!("{}/{}", p.name, m.id)))
                .collect();
            let mut providers: Vec<&str> = matches.iter().map(|(p, _)| p.name.as_str()).collect();
            providers.sort_unstable();
            providers.dedup();
            let warning = format!(
                "Pattern \"{pattern}\" matches several providers: {}. Use provider/id to choose one.",
                providers.join(", ")
            );
            (matches, None, Some(warning))
        }
        Err(_) => (Vec::new(), None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::registry::tests::registry;
    use crate::config::MapEnv;

    const MODELS: &str = r#"{"providers":{
        "one":{"baseUrl":"http://x","api":"openai-completions","apiKey":"k",
               "models":[{"id":"alpha-fast"},{"id":"alpha-big"},{"id":"beta"}]},
        "two":{"baseUrl":"http://y","api":"openai-completions","apiKey":"k",
               "models":[{"id":"beta"},{"id":"gamma"}]},
        "nokey":{"baseUrl":"http://z","api":"openai-completions","apiKey":"$UNSET_KEY",
               "models":[{"id":"delta"}]}}}"#;

    fn scope(patterns: &[&str]) -> (Vec<String>, Vec<String>) {
        let (_d, reg) = registry(Some(MODELS), None, MapEnv::new());
        let patterns: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
        let (s, w) = resolve_scope(&reg, &patterns);
        let refs = s
            .iter()
            .map(|m| match m.thinking {
                Some(t) => format!("{}:{}", m.reference(), t.as_str()),
                None => m.reference(),
            })
            .collect();
        (refs, w)
    }

    #[test]
    fn globs_match_provider_slash_id_or_the_bare_id() {
        let (s, w) = scope(&["one/*", "*GAMMA*"]);
        assert_eq!(
            s,
            ["one/alpha-fast", "one/alpha-big", "one/beta", "two/gamma"]
        );
        assert!(w.is_empty(), "{w:?}");
        let (s, _) = scope(&["alpha-*:high"]);
        assert_eq!(s, ["one/alpha-fast:high", "one/alpha-big:high"]);
    }

    #[test]
    fn references_are_fuzzy_and_keep_their_thinking_level_and_order() {
        let (s, w) = scope(&["gamma:low", "two/beta", "alpha-big", "two/gamma"]);
        assert_eq!(s, ["two/gamma:low", "two/beta", "one/alpha-big"]);
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn patterns_that_name_nothing_or_several_providers_are_warned_about() {
        let (s, w) = scope(&["delta", "nothing*", "beta"]);
        // `delta` has no key: not available, as in pi 1.6's scope.
        assert_eq!(s, ["one/beta", "two/beta"]);
        assert_eq!(
            w,
            [
                "No models match pattern \"delta\"",
                "No models match pattern \"nothing*\"",
                "Pattern \"beta\" matches several providers: one, two. Use provider/id to choose one.",
            ]
        );
    }
}
