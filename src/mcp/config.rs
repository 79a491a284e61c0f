//! `mcp.json`: `~/.pi/agent/mcp.json` and, in a trusted project, `.pi/mcp.json` (whose entries
//! replace the user's of the same name), in the `{"mcpServers": {name: {…}}}` format Claude
//! Code, Cursor and Codex use. Each entry is checked on its own: a bad one is reported with
//! what is wrong and skipped, the rest load. `env` and header values keep their raw text
//! (`${VAR}`, `!cmd`) and are resolved with pi's value grammar when the server is started, not
//! here, so reading the file never runs a command. Only the user's own file resolves them in
//! pi's environment and may run commands: a project's entry or a hook's (`foreign`) resolves
//! in the environment granted to it ([`check_values`] says beforehand whether it can).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::config::ForeignEnv;

pub use crate::tools::Exposure;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process: `command` is one executable (not a shell line).
    Stdio {
        command: String,
        args: Vec<String>,
        /// Raw values (`${VAR}`, `!cmd` resolved at start).
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// Where an entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    User,
    Project,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    /// Per request; progress notifications reset it.
    pub timeout: Duration,
    pub enabled: bool,
    pub exposure: Exposure,
    /// `toolExposure` in file order: exact names, or patterns with `*`.
    pub tool_exposure: Vec<(String, Exposure)>,
    pub source: Source,
    /// Where `env` and header values resolve when the entry is not the user's own: a trusted
    /// project's grant, or the environment of the hook that registered it. `None` for the
    /// user's file; a project entry without one resolves nothing (fail closed).
    pub foreign: Option<Arc<ForeignEnv>>,
}

/// Why one entry is skipped (shown after its file and server name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EntryError(String);

impl From<&str> for EntryError {
    fn from(s: &str) -> Self {
        EntryError(s.to_string())
    }
}

impl From<String> for EntryError {
    fn from(s: String) -> Self {
        EntryError(s)
    }
}

/// The default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

impl ServerConfig {
    /// A tool's exposure: an exact `toolExposure` name beats a pattern, the first matching
    /// pattern wins, then the server's own.
    pub fn exposure_of(&self, tool: &str) -> Exposure {
        if let Some((_, e)) = self.tool_exposure.iter().find(|(p, _)| p == tool) {
            return *e;
        }
        self.tool_exposure
            .iter()
            .find(|(p, _)| p.contains('*') && wildcard(p, tool))
            .map_or(self.exposure, |(_, e)| *e)
    }
}

/// `*` matches any run of characters; everything else matches itself.
fn wildcard(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !s.starts_with(first) || s.len() < first.len() + last.len() || !s.ends_with(last) {
        return false;
    }
    let mut rest = &s[first.len()..s.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// The tool's name as pi declares it; the rule lives with the tool registry, which hooks read
/// too (they may not use this module).
pub use crate::tools::mcp_tool_name as tool_name;

/// The servers of the user's file and, when given, a trusted project's (replacing same-named
/// ones) with the environment granted to the project, and one message per problem (a file that
/// cannot be read or parsed, an entry that is skipped and why — a project's entry that reads a
/// variable not granted to it or runs a command among them).
pub fn load(
    user: &Path,
    project: Option<(&Path, &Arc<ForeignEnv>)>,
) -> (BTreeMap<String, ServerConfig>, Vec<String>) {
    let mut servers = BTreeMap::new();
    let mut warnings = Vec::new();
    let files = [
        Some((user, Source::User, None)),
        project.map(|(p, env)| (p, Source::Project, Some(env))),
    ];
    for (path, source, grant) in files.into_iter().flatten() {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                warnings.push(format!("{}: cannot read it: {e}", path.display()));
                continue;
            }
        };
        let (found, w) = parse(&text, source);
        warnings.extend(w.into_iter().map(|m| format!("{}: {m}", path.display())));
        for mut s in found {
            if let Some(env) = grant {
                if let Err(why) = check_values(&s, env) {
                    warnings.push(format!(
                        "{}: server \"{}\" skipped: {why}",
                        path.display(),
                        s.name
                    ));
                    continue;
                }
                s.foreign = Some(env.clone());
            }
            servers.insert(s.name.clone(), s);
        }
    }
    (servers, warnings)
}

/// The entries of one file's text; problems as messages.
pub fn parse(text: &str, source: Source) -> (Vec<ServerConfig>, Vec<String>) {
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return (Vec::new(), vec![format!("not valid JSON: {e}")]),
    };
    let Some(entries) = root.get("mcpServers").and_then(Value::as_object) else {
        return (Vec::new(), vec!["no \"mcpServers\" object".to_string()]);
    };
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for (name, v) in entries {
        match entry(name, v, source) {
            Ok(s) => out.push(s),
            Err(why) => warnings.push(format!("server \"{name}\" skipped: {why}")),
        }
    }
    (out, warnings)
}

pub fn entry(name: &str, v: &Value, source: Source) -> Result<ServerConfig, EntryError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err("a server name may use only letters, digits, `_` and `-`".into());
    }
    let o = v.as_object().ok_or("an entry must be an object")?;
    let kind = match o.get("type") {
        None => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(_) => return Err("`type` must be a string".into()),
    };
    let transport = match (kind, o.contains_key("url"), o.contains_key("command")) {
        (Some("sse"), _, _) => {
            return Err(
                "the SSE transport is not supported; use streamable HTTP (`\"type\": \"http\"`)"
                    .into(),
            )
        }
        (Some("stdio"), _, _) | (None, false, true) => stdio(o)?,
        (Some("http" | "streamable-http"), _, _) | (None, true, false) => http(o)?,
        (None, true, true) => return Err("both `command` and `url`: say which with `type`".into()),
        (None, false, false) => return Err("needs `command` (stdio) or `url` (HTTP)".into()),
        (Some(other), _, _) => {
            return Err(
                format!("unknown `type` \"{other}\" (stdio, http or streamable-http)").into(),
            )
        }
    };
    let timeout = match o.get("timeout") {
        None => DEFAULT_TIMEOUT,
        Some(t) => match t.as_u64() {
            Some(ms) if ms > 0 => Duration::from_millis(ms),
            _ => return Err("`timeout` must be a positive number of milliseconds".into()),
        },
    };
    let enabled = match o.get("enabled") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("`enabled` must be true or false".into()),
    };
    let exposure = match o.get("exposure") {
        None => Exposure::Deferred,
        Some(Value::String(s)) => Exposure::parse(s).ok_or_else(|| {
            format!("unknown `exposure` \"{s}\" (direct, model-only, deferred, hidden, codemode)")
        })?,
        Some(_) => return Err("`exposure` must be a string".into()),
    };
    let mut tool_exposure = Vec::new();
    if let Some(te) = o.get("toolExposure") {
        let map = te.as_object().ok_or("`toolExposure` must be an object")?;
        for (pattern, e) in map {
            let e = e.as_str().and_then(Exposure::parse).ok_or_else(|| {
                format!("`toolExposure.{pattern}` must be direct, model-only, deferred, hidden or codemode")
            })?;
            tool_exposure.push((pattern.clone(), e));
        }
    }
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        timeout,
        enabled,
        exposure,
        tool_exposure,
        source,
        foreign: None,
    })
}

/// The `env` or header values of an entry, by the key that shows where each is (`env.NAME`,
/// `headers.NAME`), with their raw text.
pub fn values(t: &Transport) -> Vec<(String, &str)> {
    match t {
        Transport::Stdio { env, .. } => env
            .iter()
            .map(|(k, v)| (format!("env.{k}"), v.as_str()))
            .collect(),
        Transport::Http { headers, .. } => headers
            .iter()
            .map(|(k, v)| (format!("headers.{k}"), v.as_str()))
            .collect(),
    }
}

/// Whether every value of `config` resolves in `env` without running anything: the check
/// for an entry that is not the user's own, before it is accepted.
pub fn check_values(config: &ServerConfig, env: &ForeignEnv) -> Result<(), EntryError> {
    for (at, raw) in values(&config.transport) {
        env.check(raw)
            .map_err(|e| EntryError(format!("`{at}`: {e}")))?;
    }
    Ok(())
}

/// The variables of pi's environment the values of `config` read.
pub fn referenced_vars(config: &ServerConfig) -> Vec<String> {
    values(&config.transport)
        .into_iter()
        .flat_map(|(_, raw)| crate::config::referenced_vars(raw))
        .collect()
}

fn strings(o: &Map<String, Value>, key: &str) -> Result<Vec<(String, String)>, EntryError> {
    match o.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(format!("`{key}.{k}` must be a string").into()),
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be an object of strings").into()),
    }
}

fn stdio(o: &Map<String, Value>) -> Result<Transport, EntryError> {
    let command = match o.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
        _ => return Err("`command` must name an executable".into()),
    };
    let args = match o.get("args") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or("`args` must be an array of strings")?,
        Some(_) => return Err("`args` must be an array of strings".into()),
    };
    let cwd = match o.get("cwd") {
        None => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(_) => return Err("`cwd` must be a string".into()),
    };
    Ok(Transport::Stdio {
        command,
        args,
        env: strings(o, "env")?,
        cwd,
    })
}

fn http(o: &Map<String, Value>) -> Result<Transport, EntryError> {
    let url = match o.get("url") {
        Some(Value::String(u)) if u.starts_with("http://") || u.starts_with("https://") => {
            u.clone()
        }
        _ => return Err("`url` must be an http:// or https:// address".into()),
    };
    Ok(Transport::Http {
        url,
        headers: strings(o, "headers")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_code_style_file_loads_and_bad_entries_are_skipped_with_a_reason() {
        let text = r#"{"mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"TOKEN": "${GH_TOKEN}"}},
            "web": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer !pass show mcp"}, "exposure": "direct"},
            "old": {"type": "sse", "url": "https://example.com/sse"},
            "bad name": {"command": "x"},
            "nothing": {}
        }}"#;
        let (servers, warnings) = parse(text, Source::User);
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["fs", "web"]);
        assert_eq!(servers[0].timeout, DEFAULT_TIMEOUT);
        assert_eq!(servers[0].exposure, Exposure::Deferred);
        assert!(
            matches!(&servers[0].transport, Transport::Stdio { env, .. } if env[0].1 == "${GH_TOKEN}")
        );
        assert_eq!(servers[1].exposure, Exposure::Direct);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("\"old\"") && w.contains("SSE")),
            "{warnings:?}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("\"nothing\"") && w.contains("`command`")),
            "{warnings:?}"
        );
    }

    #[test]
    fn project_entries_replace_the_users_of_the_same_name() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user.json");
        let project = dir.path().join("project.json");
        std::fs::write(
            &user,
            r#"{"mcpServers": {"a": {"command": "u"}, "b": {"command": "u"}}}"#,
        )
        .unwrap();
        std::fs::write(&project, r#"{"mcpServers": {"b": {"command": "p"}}}"#).unwrap();
        let env = Arc::new(ForeignEnv::hook("t", []));
        let (servers, warnings) = load(&user, Some((&project, &env)));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(servers["a"].source, Source::User);
        assert_eq!(servers["b"].source, Source::Project);
        assert!(
            matches!(&servers["b"].transport, Transport::Stdio { command, .. } if command == "p")
        );
    }

    #[test]
    fn a_projects_entries_that_read_more_than_its_grant_or_run_commands_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user.json");
        let project = dir.path().join("project.json");
        std::fs::write(
            &user,
            r#"{"mcpServers": {"mine": {"command": "u", "env": {"T": "${ANY}", "C": "!pass x"}}}}"#,
        )
        .unwrap();
        std::fs::write(
            &project,
            r#"{"mcpServers": {
                "ok": {"command": "p", "env": {"T": "${GRANTED}"}},
                "greedy": {"type": "http", "url": "https://x", "headers": {"A": "Bearer $OTHER"}},
                "runner": {"command": "p", "env": {"C": "!cat ~/.netrc"}}}}"#,
        )
        .unwrap();
        let grant = crate::config::ProjectGrant {
            dir: dir.path().to_path_buf(),
            settings: "/u/settings.json".into(),
            names: vec!["GRANTED".into()],
        };
        let env = crate::config::MapEnv::new().with_var("GRANTED", "g");
        let env = Arc::new(ForeignEnv::project(&grant, &env));
        let (servers, warnings) = load(&user, Some((&project, &env)));
        let names: Vec<&str> = servers.keys().map(String::as_str).collect();
        assert_eq!(names, ["mine", "ok"], "{warnings:?}");
        assert!(servers["mine"].foreign.is_none(), "the user's own file");
        assert_eq!(servers["ok"].foreign.as_ref(), Some(&env));
        assert!(
            warnings.iter().any(|w| w.contains("\"greedy\"")
                && w.contains("`headers.A`")
                && w.contains("OTHER")
                && w.contains("projectEnv")),
            "{warnings:?}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("\"runner\"") && w.contains("command")),
            "{warnings:?}"
        );
        assert_eq!(referenced_vars(&servers["mine"]), ["ANY"]);
    }

    #[test]
    fn an_exact_tool_name_beats_a_pattern_and_the_first_pattern_wins() {
        let (s, _) = parse(
            r#"{"mcpServers": {"gh": {"command": "x", "exposure": "hidden",
                "toolExposure": {"create_*": "deferred", "*_issue": "direct", "create_issue": "direct"}}}}"#,
            Source::User,
        );
        let gh = &s[0];
        assert_eq!(gh.exposure_of("create_issue"), Exposure::Direct);
        assert_eq!(gh.exposure_of("create_pr"), Exposure::Deferred);
        assert_eq!(gh.exposure_of("close_issue"), Exposure::Direct);
        assert_eq!(gh.exposure_of("list"), Exposure::Hidden);
    }

    #[test]
    fn tool_names_keep_only_word_characters() {
        assert_eq!(
            tool_name("my-server", "get.file"),
            "mcp__my_server__get_file"
        );
    }

    #[test]
    fn wildcards_match_runs_anywhere() {
        assert!(wildcard("*", "anything"));
        assert!(wildcard("a*c*e", "abcde"));
        assert!(!wildcard("a*c", "ab"));
        assert!(!wildcard("ab*ba", "aba"));
    }
}
