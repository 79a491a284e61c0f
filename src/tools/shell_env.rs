//! The environment of every shell pi runs for the model (the `bash` tool, the tools hooks run
//! through `tools.execute`, and the user's `!command` once interactive mode has it): pi's own
//! environment filtered by the `shellEnvironment` policy, so the model — and any hook that can
//! make it run `env` — never sees the API keys pi holds (SPEC 4.9).
//!
//! The semantics follow Codex's `shell_environment_policy`: start from `inherit` (all of pi's
//! variables, a core set, or none), drop the default excludes (names containing `KEY`,
//! `SECRET`, `TOKEN` or `PASSWORD`, and every variable pi reads a credential from) unless
//! `ignore_default_excludes`, drop `exclude`, keep only `include_only` when it is given, then add
//! `set`. Patterns are case-insensitive globs over names. pi's own variables for the shell
//! (`PI_CODING_AGENT`, `PI_MODEL`, …) are added after the policy: they hold nothing secret and
//! scripts rely on them. Credential helpers in models.json (`!cmd` values) are not shells for
//! the model and keep pi's full environment.
//!
//! Everything here is pure: the caller passes pi's environment in, which keeps it testable.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

// The setting itself is a settings type; this module applies it.
pub use crate::setting_types::shell_env::{
    Inherit, NamePattern, PolicyError, ShellEnvPolicy, CORE_VARS, DEFAULT_EXCLUDES,
};

/// Set in every shell pi runs, so scripts can tell they run under an agent.
const AGENT_MARKER: (&str, &str) = ("PI_CODING_AGENT", "true");

/// The policy plus the names of the variables pi reads credentials from, which the default
/// excludes drop whatever they are called.
#[derive(Debug, Clone)]
pub struct ShellEnvironment {
    policy: ShellEnvPolicy,
    default_excludes: Vec<NamePattern>,
    /// Upper-cased, so names compare case-insensitively like the patterns.
    credential_vars: BTreeSet<String>,
    /// What [`for_process`](Self::for_process) keeps of pi's environment, filtered once: pi
    /// never changes its own environment after start-up, and every bash call asks.
    inherited: std::sync::OnceLock<BTreeMap<OsString, OsString>>,
}

impl Default for ShellEnvironment {
    fn default() -> Self {
        Self::new(ShellEnvPolicy::default(), std::iter::empty::<String>())
    }
}

impl ShellEnvironment {
    pub fn new(policy: ShellEnvPolicy, credential_vars: impl IntoIterator<Item = String>) -> Self {
        ShellEnvironment {
            policy,
            default_excludes: DEFAULT_EXCLUDES
                .iter()
                .filter_map(|p| NamePattern::new(p).ok())
                .collect(),
            credential_vars: credential_vars
                .into_iter()
                .map(|n| n.to_ascii_uppercase())
                .collect(),
            inherited: std::sync::OnceLock::new(),
        }
    }

    fn is_credential_var(&self, name: &OsStr) -> bool {
        name.to_str()
            .is_some_and(|n| self.credential_vars.contains(&n.to_ascii_uppercase()))
    }

    /// The complete environment of a shell, from pi's environment `inherited` and pi's own
    /// variables for it (`own`, e.g. `PI_MODEL`), which come last and always reach it.
    pub fn build(
        &self,
        inherited: impl IntoIterator<Item = (OsString, OsString)>,
        own: &[(String, String)],
    ) -> Vec<(OsString, OsString)> {
        self.with_added(self.filter(inherited), own)
    }

    /// What the policy keeps of `inherited`.
    fn filter(
        &self,
        inherited: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> BTreeMap<OsString, OsString> {
        let p = &self.policy;
        let any = |pats: &[NamePattern], name: &OsStr| pats.iter().any(|pat| pat.matches(name));
        inherited
            .into_iter()
            .filter(|(name, _)| match p.inherit {
                Inherit::All => true,
                Inherit::Core => CORE_VARS.iter().any(|c| name.as_bytes() == c.as_bytes()),
                Inherit::None => false,
            })
            .filter(|(name, _)| {
                p.ignore_default_excludes
                    || !(any(&self.default_excludes, name) || self.is_credential_var(name))
            })
            .filter(|(name, _)| !any(&p.exclude, name))
            .filter(|(name, _)| p.include_only.is_empty() || any(&p.include_only, name))
            .collect()
    }

    /// The policy's `set` and pi's own variables over the kept ones.
    fn with_added(
        &self,
        mut env: BTreeMap<OsString, OsString>,
        own: &[(String, String)],
    ) -> Vec<(OsString, OsString)> {
        let added = self
            .policy
            .set
            .iter()
            .chain(own.iter().map(|(k, v)| (k, v)))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain([AGENT_MARKER]);
        for (k, v) in added {
            env.insert(k.into(), v.into());
        }
        env.into_iter().collect()
    }

    /// [`build`](Self::build) from pi's actual environment.
    pub fn for_process(&self, own: &[(String, String)]) -> Vec<(OsString, OsString)> {
        let kept = self
            .inherited
            .get_or_init(|| self.filter(std::env::vars_os()));
        self.with_added(kept.clone(), own)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use globset::GlobBuilder;
    use serde_json::{json, Value};

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    const PI: [(&str, &str); 8] = [
        ("PATH", "/usr/bin"),
        ("HOME", "/home/u"),
        ("LANG", "C.UTF-8"),
        ("OPENAI_API_KEY", "sk"),
        ("github_token", "ghp"),
        ("MY_PASSWORD", "pw"),
        ("CORP_CRED", "corp"),
        ("EDITOR", "vi"),
    ];

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    fn run(policy: Value, own: &[(String, String)]) -> Vec<String> {
        let policy = ShellEnvPolicy::from_setting(&policy).unwrap();
        let env = ShellEnvironment::new(policy, ["corp_cred".to_string()]);
        names(&env.build(vars(&PI), own))
    }

    #[test]
    fn default_drops_secrets_and_known_credential_vars_case_insensitively() {
        let own = [("PI_MODEL".to_string(), "m".to_string())];
        assert_eq!(
            run(json!({}), &own),
            [
                "EDITOR",
                "HOME",
                "LANG",
                "PATH",
                "PI_CODING_AGENT",
                "PI_MODEL"
            ]
        );
    }

    #[test]
    fn inherit_core_and_none() {
        assert_eq!(
            run(json!({"inherit": "core"}), &[]),
            ["HOME", "PATH", "PI_CODING_AGENT"]
        );
        assert_eq!(
            run(json!({"inherit": "none", "set": {"A": "1"}}), &[]),
            ["A", "PI_CODING_AGENT"]
        );
    }

    #[test]
    fn ignoring_default_excludes_then_excluding_by_glob() {
        assert_eq!(
            run(
                json!({"ignoreDefaultExcludes": true, "exclude": ["GITHUB_*", "*_api_?ey"]}),
                &[]
            ),
            [
                "CORP_CRED",
                "EDITOR",
                "HOME",
                "LANG",
                "MY_PASSWORD",
                "PATH",
                "PI_CODING_AGENT"
            ]
        );
    }

    #[test]
    fn include_only_filters_after_the_excludes_and_set_comes_last() {
        let own = [("PI_SESSION_ID".to_string(), "s".to_string())];
        assert_eq!(
            run(
                json!({"include_only": ["{PATH,home}", "*_KEY", "X*"], "set": {"LATE": "y", "PATH": "/opt"}}),
                &own
            ),
            ["HOME", "LATE", "PATH", "PI_CODING_AGENT", "PI_SESSION_ID"]
        );
        let policy = ShellEnvPolicy::from_setting(&json!({"set": {"PATH": "/opt"}})).unwrap();
        let env = ShellEnvironment::new(policy, []).build(vars(&PI), &[]);
        assert!(env.contains(&("PATH".into(), "/opt".into())));
    }

    #[test]
    fn pi_own_variables_beat_the_policy() {
        let own = [("PI_MODEL".to_string(), "real".to_string())];
        let policy = ShellEnvPolicy::from_setting(
            &json!({"inherit": "none", "set": {"PI_MODEL": "fake", "PI_CODING_AGENT": "no"}}),
        )
        .unwrap();
        let env = ShellEnvironment::new(policy, []).build(vars(&PI), &own);
        assert_eq!(
            env,
            vars(&[("PI_CODING_AGENT", "true"), ("PI_MODEL", "real")])
        );
    }

    #[test]
    fn non_utf8_values_survive_and_non_utf8_names_are_still_filtered() {
        use std::os::unix::ffi::OsStringExt;
        let odd_value = OsString::from_vec(vec![b'a', 0xff]);
        let odd_secret = OsString::from_vec(b"X_TOKEN_\xff".to_vec());
        let env = ShellEnvironment::default().build(
            [("ODD".into(), odd_value.clone()), (odd_secret, "s".into())],
            &[],
        );
        assert_eq!(
            env,
            vec![
                ("ODD".into(), odd_value),
                ("PI_CODING_AGENT".into(), "true".into())
            ]
        );
    }

    #[test]
    fn bad_settings_name_the_key() {
        let err = |v: Value| ShellEnvPolicy::from_setting(&v).unwrap_err().to_string();
        assert!(err(json!("all")).starts_with("\"shellEnvironment\" must be an object"));
        assert!(err(json!({"inherit": "most"}))
            .starts_with("\"shellEnvironment.inherit\" must be \"all\", \"core\" or \"none\""));
        assert!(err(json!({"exclude": "A*"}))
            .starts_with("\"shellEnvironment.exclude\" must be an array"));
        assert!(err(json!({"exclude": [1]}))
            .starts_with("\"shellEnvironment.exclude\" must be an array"));
        assert!(err(json!({"includeOnly": ["[a"]}))
            .starts_with("\"shellEnvironment.includeOnly\" has an invalid pattern"));
        assert!(err(json!({"include_only": [], "includeOnly": []})).contains("use one"));
        assert!(err(json!({"set": {"A": 1}}))
            .starts_with("\"shellEnvironment.set.A\" must be a string"));
        assert!(err(json!({"set": {"A=B": "1"}}))
            .starts_with("\"shellEnvironment.set.A=B\" is not a variable name"));
        assert!(err(json!({"set": []})).starts_with("\"shellEnvironment.set\" must be an object"));
        assert!(err(json!({"ignoreDefaultExcludes": "yes"}))
            .starts_with("\"shellEnvironment.ignoreDefaultExcludes\" must be true or false"));
        let unknown = err(json!({"excludes": []}));
        assert!(
            unknown.starts_with("\"shellEnvironment.excludes\" is not a shellEnvironment setting")
                && unknown.contains("include_only"),
            "{unknown}"
        );
        // null means "not set".
        assert!(ShellEnvPolicy::from_setting(&json!({"exclude": null})).is_ok());
    }

    /// The substring shortcut for `*WORD*` must say what the glob says, for every name: a
    /// name it let through that the glob would drop would reach the model's shell.
    #[test]
    fn contains_patterns_match_exactly_what_their_globs_match() {
        let names = [
            "OPENAI_API_KEY",
            "key",
            "Keyboard",
            "MONKEY",
            "KE",
            "K",
            "",
            "A_KEY_B",
            "kEy",
            // Non-ASCII names (the Kelvin sign, a long s, accents) take the glob.
            "MY_\u{212A}EY",
            "\u{212A}EY",
            "sec\u{17F}ret",
            "SECRET",
            "SE_CRET",
            "a/KEY/b",
            "PASSWORDS",
            "pass_word",
            "token\u{e9}",
            "T\u{d6}KEN",
        ];
        let pats = [
            "*KEY*",
            "*SECRET*",
            "*TOKEN*",
            "*PASSWORD*",
            "*k?y*",
            "*[K]EY*",
            "K*",
            "*",
        ];
        for p in pats {
            let pattern = NamePattern::new(p).unwrap();
            let glob = GlobBuilder::new(p)
                .case_insensitive(true)
                .literal_separator(false)
                .build()
                .unwrap()
                .compile_matcher();
            for n in names {
                assert_eq!(
                    pattern.matches(OsStr::new(n)),
                    glob.is_match(std::path::Path::new(n)),
                    "pattern {p:?} on name {n:?}"
                );
            }
        }
        // Names that are not UTF-8 go through the glob too.
        let odd = OsStr::from_bytes(b"MY_KEY_\xff");
        assert!(NamePattern::new("*KEY*").unwrap().matches(odd));
    }
}
