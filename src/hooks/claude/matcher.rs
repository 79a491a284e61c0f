//! A Claude Code `matcher`, evaluated as Claude Code evaluates it: absent, `""` or `"*"`
//! matches everything; a value of only letters, digits, `_`, `-`, spaces, `,` and `|` is an
//! exact name or a list of them (`Edit|Write`); anything else is an unanchored regular
//! expression (`Notebook.*`, `^mcp__memory__`), so `Edit.*` also matches `NotebookEdit`, as it
//! does there. Compiled once, when the settings are read; a bad expression is a load error.
//!
//! [`Matcher::mcp_servers`] reads which MCP servers a matcher names (`mcp__memory__.*`), so
//! one naming a server pi does not know can be pointed out before it silently matches nothing.

/// A compiled matcher.
#[derive(Debug, Clone)]
pub enum Matcher {
    All,
    Names(Vec<String>),
    Regex(regex::Regex),
}

/// Why a matcher cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("matcher {matcher:?} is not a valid regular expression: {source}")]
pub struct MatcherError {
    pub matcher: String,
    #[source]
    pub source: regex::Error,
}

fn is_name_list(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'))
}

impl Matcher {
    pub fn parse(raw: Option<&str>) -> Result<Matcher, MatcherError> {
        let s = raw.unwrap_or("").trim();
        if s.is_empty() || s == "*" {
            return Ok(Matcher::All);
        }
        if is_name_list(s) {
            let names: Vec<String> = s
                .split(['|', ','])
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect();
            return Ok(if names.is_empty() {
                Matcher::All
            } else {
                Matcher::Names(names)
            });
        }
        regex::Regex::new(s)
            .map(Matcher::Regex)
            .map_err(|source| MatcherError {
                matcher: s.to_string(),
                source,
            })
    }

    /// Whether the matcher selects `value` (a Claude Code tool name, a session source, …).
    pub fn matches(&self, value: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(names) => names.iter().any(|n| n == value),
            Matcher::Regex(r) => r.is_match(value),
        }
    }

    /// The MCP servers this matcher names literally: the `<server>` of each `mcp__<server>__`
    /// it spells out (`mcp__memory__.*`, `^mcp__seq-think__`, `mcp__a__x|mcp__b__y`). A server
    /// part that is itself a pattern (`mcp__.*`, `mcp__(a|b)__`) names none.
    pub fn mcp_servers(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |s: &str| {
            if !s.is_empty() && !out.iter().any(|o| o == s) {
                out.push(s.to_string());
            }
        };
        match self {
            Matcher::All => {}
            Matcher::Names(names) => {
                for n in names {
                    if let Some(server) = super::names::mcp_server_of(n) {
                        add(server);
                    }
                }
            }
            Matcher::Regex(r) => {
                for (at, _) in r.as_str().match_indices(super::names::MCP_PREFIX) {
                    let rest = &r.as_str()[at + super::names::MCP_PREFIX.len()..];
                    let literal = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                        .map_or(rest, |end| &rest[..end]);
                    if let Some(end) = literal.find("__") {
                        add(&literal[..end]);
                    }
                }
            }
        }
        out
    }

    /// How `pi hooks` shows it.
    pub fn describe(&self) -> String {
        match self {
            Matcher::All => "*".into(),
            Matcher::Names(n) => n.join("|"),
            Matcher::Regex(r) => format!("/{}/", r.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Matcher {
        Matcher::parse(Some(s)).unwrap()
    }

    #[test]
    fn empty_star_and_absent_match_everything() {
        for raw in [None, Some(""), Some("*"), Some("  ")] {
            let all = Matcher::parse(raw).unwrap();
            assert!(all.matches("Bash") && all.matches("mcp__x__y"));
        }
    }

    #[test]
    fn plain_names_are_exact() {
        assert!(m("Bash").matches("Bash"));
        assert!(!m("Bash").matches("bash"));
        assert!(!m("Edit").matches("MultiEdit"));
        assert!(!m("mcp__lab").matches("mcp__lab__read"));
        let list = m("Edit|MultiEdit|Write");
        assert!(list.matches("Write") && list.matches("MultiEdit") && !list.matches("Read"));
        assert!(m("Edit, Write").matches("Write"));
    }

    #[test]
    fn anything_else_is_an_unanchored_regex() {
        assert!(m("Edit.*").matches("NotebookEdit"));
        assert!(m("^Bash$").matches("Bash"));
        assert!(!m("^Bash$").matches("Bashful"));
        assert!(m("mcp__memory__.*").matches("mcp__memory__create_entities"));
        assert!(m("Notebook.*").matches("NotebookEdit"));
    }

    #[test]
    fn the_mcp_servers_a_matcher_names() {
        assert_eq!(m("mcp__memory__.*").mcp_servers(), ["memory"]);
        assert_eq!(m("^mcp__seq-think__").mcp_servers(), ["seq-think"]);
        assert_eq!(m("mcp__seq-think__run|Bash").mcp_servers(), ["seq-think"]);
        assert_eq!(
            m("(mcp__a__x|mcp__b__.*|mcp__a__y)").mcp_servers(),
            ["a", "b"]
        );
        for none in [
            "mcp__.*",
            "mcp__(a|b)__x",
            "mcp__github.*",
            "Bash",
            "*",
            "Edit|Write",
        ] {
            assert!(m(none).mcp_servers().is_empty(), "{none}");
        }
    }

    #[test]
    fn a_bad_regex_is_an_error_naming_it() {
        let e = Matcher::parse(Some("Bash(")).unwrap_err();
        assert!(e.to_string().contains("Bash("), "{e}");
    }
}
