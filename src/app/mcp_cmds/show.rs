//! What `pi mcp list` and `pi mcp get` show: every entry of the user's and the project's
//! `mcp.json` with what a session would do with it (load it, skip it as disabled or invalid,
//! ignore it in an untrusted project, or let the project's entry replace it), as text for
//! people and as JSON for programs. Values of `env` and `headers` are never resolved (no
//! command runs, no variable is read); in the text, values written literally in the file are
//! masked, since those are the secrets.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::{store, Scope};
use crate::config::{value_origin, ForeignEnv, ValueOrigin};
use crate::mcp::config::{self, EntryError, Exposure, ServerConfig, Source, Transport};
use crate::mcp::edit::{Document, SERVERS_KEY};

/// What a session does with one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Enabled,
    /// `"enabled": false`.
    Disabled,
    /// A session skips it, for this reason.
    Invalid(String),
    /// In a project that is not trusted (why, as the trust decision says).
    Ignored(String),
    /// The trusted project has a valid entry of the same name.
    Replaced,
}

impl Status {
    fn word(&self) -> &'static str {
        match self {
            Status::Enabled => "enabled",
            Status::Disabled => "disabled",
            Status::Invalid(_) => "invalid",
            Status::Ignored(_) => "ignored",
            Status::Replaced => "replaced",
        }
    }

    fn reason(&self) -> Option<String> {
        match self {
            Status::Invalid(r) | Status::Ignored(r) => Some(r.clone()),
            Status::Replaced => Some("the project's entry of the same name replaces it".into()),
            Status::Enabled | Status::Disabled => None,
        }
    }
}

/// One `mcp.json` file and what is wrong with it as a whole, if anything.
pub struct FileView {
    pub scope: Scope,
    pub path: PathBuf,
    pub exists: bool,
    pub problem: Option<String>,
}

pub struct ServerView {
    pub name: String,
    pub scope: Scope,
    pub path: PathBuf,
    pub raw: Value,
    pub checked: Result<ServerConfig, EntryError>,
    pub status: Status,
}

/// Both files, user first, each in file order. `untrusted`: why the project's entries are
/// ignored, when they are.
/// `project_env` is what the user's `projectEnv` grants the project: a project entry that reads
/// more, or runs a command, is invalid as a session would find it.
pub fn collect(
    user: &Path,
    project: &Path,
    untrusted: Option<String>,
    project_env: &ForeignEnv,
) -> (Vec<FileView>, Vec<ServerView>) {
    let mut files = Vec::new();
    let mut servers = Vec::new();
    for (scope, path) in [(Scope::User, user), (Scope::Project, project)] {
        let (file, entries) = read_one(scope, path);
        files.push(file);
        for (name, raw) in entries {
            let source = match scope {
                Scope::User => Source::User,
                Scope::Project => Source::Project,
            };
            // What the project may read matters once it is trusted: until then it is ignored.
            let checked = config::entry(&name, &raw, source).and_then(|c| match scope {
                Scope::Project if untrusted.is_none() => {
                    config::check_values(&c, project_env).map(|()| c)
                }
                _ => Ok(c),
            });
            servers.push(ServerView {
                name,
                scope,
                path: path.to_path_buf(),
                raw,
                checked,
                status: Status::Enabled,
            });
        }
    }
    let replaced: Vec<String> = match untrusted {
        Some(_) => Vec::new(),
        None => servers
            .iter()
            .filter(|s| s.scope == Scope::Project && s.checked.is_ok())
            .map(|s| s.name.clone())
            .collect(),
    };
    for s in &mut servers {
        s.status = match (&s.checked, s.scope, &untrusted) {
            (Err(e), _, _) => Status::Invalid(e.to_string()),
            (Ok(_), Scope::Project, Some(why)) => Status::Ignored(why.clone()),
            (Ok(_), Scope::User, _) if replaced.contains(&s.name) => Status::Replaced,
            (Ok(c), _, _) if !c.enabled => Status::Disabled,
            (Ok(_), _, _) => Status::Enabled,
        };
    }
    (files, servers)
}

fn read_one(scope: Scope, path: &Path) -> (FileView, Vec<(String, Value)>) {
    let mut view = FileView {
        scope,
        path: path.to_path_buf(),
        exists: false,
        problem: None,
    };
    let bytes = match store::read(path) {
        Ok(Some(b)) => b,
        Ok(None) => return (view, Vec::new()),
        Err(e) => {
            view.exists = true;
            view.problem = Some(e.to_string());
            return (view, Vec::new());
        }
    };
    view.exists = true;
    let doc = match Document::parse(&bytes) {
        Ok(d) => d,
        Err(e) => {
            view.problem = Some(format!("{}: {e}; no server from it loads", path.display()));
            return (view, Vec::new());
        }
    };
    let names = doc.names();
    if !doc.has_servers() {
        view.problem = Some(format!(
            "{}: no \"{SERVERS_KEY}\" object, so no server from it loads",
            path.display()
        ));
    }
    let entries = names
        .into_iter()
        .filter_map(|n| doc.get(&n).cloned().map(|v| (n, v)))
        .collect();
    (view, entries)
}

fn exposure_word(e: Exposure) -> &'static str {
    match e {
        Exposure::Direct => "direct",
        Exposure::ModelOnly => "model-only",
        Exposure::Deferred => "deferred",
        Exposure::Hidden => "hidden",
    }
}

fn seconds(ms: u128) -> String {
    format!("{}s", ms as f64 / 1000.0)
}

/// A value as the text shows it: references (`${VAR}`, `!cmd`) as written, literals masked.
fn mask(raw: &str) -> Cow<'_, str> {
    if !raw.is_empty() && value_origin(raw) == ValueOrigin::Literal {
        Cow::Borrowed("***")
    } else {
        Cow::Borrowed(raw)
    }
}

/// An entry as written, with literal `env` and `headers` values masked.
fn masked_raw(raw: &Value) -> Value {
    let mut v = raw.clone();
    for key in ["env", "headers"] {
        if let Some(Value::Object(m)) = v.get_mut(key) {
            for val in m.values_mut() {
                if let Value::String(s) = val {
                    *s = mask(s).into_owned();
                }
            }
        }
    }
    v
}

fn transport_line(t: &Transport) -> String {
    match t {
        Transport::Stdio { command, args, .. } => format!(
            "stdio  {}",
            shell_words::join(std::iter::once(command).chain(args))
        ),
        Transport::Http { url, .. } => format!("http   {url}"),
    }
}

/// `pi mcp list`'s text: one line per entry, then what is wrong with whole files.
pub fn list_text(files: &[FileView], servers: &[ServerView]) -> String {
    let mut rows = vec![[
        "NAME".to_string(),
        "SCOPE".into(),
        "STATUS".into(),
        "EXPOSURE".into(),
        "TIMEOUT".into(),
        "TRANSPORT".into(),
    ]];
    for s in servers {
        let (exposure, timeout, last) = match &s.checked {
            Ok(c) => (
                exposure_word(c.exposure).to_string(),
                seconds(c.timeout.as_millis()),
                transport_line(&c.transport),
            ),
            Err(e) => ("-".into(), "-".into(), e.to_string()),
        };
        rows.push([
            s.name.clone(),
            s.scope.word().into(),
            s.status.word().into(),
            exposure,
            timeout,
            last,
        ]);
    }
    let mut out = String::new();
    if servers.is_empty() {
        out.push_str(&format!(
            "No MCP servers configured ({} or {}).\nAdd one with `pi mcp add NAME -- COMMAND \
             [ARGS...]` or `pi mcp add NAME URL`.\n",
            files[0].path.display(),
            files
                .get(1)
                .map_or(String::new(), |f| f.path.display().to_string())
        ));
    } else {
        let widths: Vec<usize> = (0..5)
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let mut line = String::new();
            for (i, w) in widths.iter().enumerate() {
                line.push_str(&format!("{:<w$}  ", r[i]));
            }
            line.push_str(&r[5]);
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    for f in files {
        if let Some(p) = &f.problem {
            out.push_str(&format!("{p}\n"));
        }
    }
    if let Some(why) = servers.iter().find_map(|s| match &s.status {
        Status::Ignored(why) => Some((why, &s.path)),
        _ => None,
    }) {
        out.push_str(&format!(
            "{} is ignored until this project is trusted: {}\n",
            why.1.display(),
            why.0
        ));
    }
    out
}

/// `pi mcp get`'s text for one entry.
pub fn get_text(s: &ServerView, others: &[&ServerView]) -> String {
    let mut lines = vec![s.name.clone()];
    let mut field = |k: &str, v: String| lines.push(format!("  {:<10} {v}", format!("{k}:")));
    field(
        "scope",
        format!("{} ({})", s.scope.word(), s.path.display()),
    );
    field(
        "status",
        match s.status.reason() {
            Some(r) => format!("{}: {r}", s.status.word()),
            None => s.status.word().to_string(),
        },
    );
    let pairs = |pairs: &[(String, String)], sep: &str| -> String {
        pairs
            .iter()
            .map(|(k, v)| format!("{k}{sep}{}", mask(v)))
            .collect::<Vec<_>>()
            .join(&format!("\n{:13}", ""))
    };
    match &s.checked {
        Ok(c) => {
            match &c.transport {
                Transport::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                } => {
                    field("transport", "stdio".into());
                    field(
                        "command",
                        shell_words::join(std::iter::once(command).chain(args)),
                    );
                    if let Some(cwd) = cwd {
                        field("cwd", cwd.clone());
                    }
                    if !env.is_empty() {
                        field("env", pairs(env, "="));
                    }
                }
                Transport::Http { url, headers } => {
                    field("transport", "http (streamable)".into());
                    field("url", url.clone());
                    if !headers.is_empty() {
                        field("headers", pairs(headers, ": "));
                    }
                }
            }
            field("exposure", exposure_word(c.exposure).into());
            if !c.tool_exposure.is_empty() {
                let tools: Vec<String> = c
                    .tool_exposure
                    .iter()
                    .map(|(p, e)| format!("{p}: {}", exposure_word(*e)))
                    .collect();
                field("tools", tools.join(", "));
            }
            field("timeout", seconds(c.timeout.as_millis()));
        }
        Err(_) => field("entry", masked_raw(&s.raw).to_string()),
    }
    for o in others {
        field(
            "also",
            format!(
                "{} entry in {} ({})",
                o.scope.word(),
                o.path.display(),
                o.status.word()
            ),
        );
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// One entry for `--json`: what a session makes of it, and the entry as written (values
/// unmasked: a program reading this has the file's own access).
pub fn server_json(s: &ServerView) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), json!(s.name));
    o.insert("scope".into(), json!(s.scope.word()));
    o.insert("file".into(), json!(s.path.display().to_string()));
    o.insert("status".into(), json!(s.status.word()));
    if let Some(r) = s.status.reason() {
        o.insert("reason".into(), json!(r));
    }
    if let Ok(c) = &s.checked {
        let pairs = |p: &[(String, String)]| -> Value {
            Value::Object(p.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
        };
        match &c.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                o.insert("transport".into(), json!("stdio"));
                o.insert("command".into(), json!(command));
                o.insert("args".into(), json!(args));
                o.insert("env".into(), pairs(env));
                o.insert("cwd".into(), json!(cwd));
            }
            Transport::Http { url, headers } => {
                o.insert("transport".into(), json!("http"));
                o.insert("url".into(), json!(url));
                o.insert("headers".into(), pairs(headers));
            }
        }
        o.insert("enabled".into(), json!(c.enabled));
        o.insert("exposure".into(), json!(exposure_word(c.exposure)));
        let tools: Map<String, Value> = c
            .tool_exposure
            .iter()
            .map(|(p, e)| (p.clone(), json!(exposure_word(*e))))
            .collect();
        o.insert("toolExposure".into(), Value::Object(tools));
        o.insert("timeoutMs".into(), json!(c.timeout.as_millis() as u64));
    }
    o.insert("entry".into(), s.raw.clone());
    Value::Object(o)
}

/// `pi mcp list --json`.
pub fn list_json(files: &[FileView], servers: &[ServerView], trusted: bool) -> Value {
    let files: Vec<Value> = files
        .iter()
        .map(|f| {
            let mut o = json!({
                "scope": f.scope.word(),
                "path": f.path.display().to_string(),
                "exists": f.exists,
                "problem": f.problem,
            });
            if f.scope == Scope::Project {
                o["trusted"] = json!(trusted);
            }
            o
        })
        .collect();
    json!({
        "servers": servers.iter().map(server_json).collect::<Vec<_>>(),
        "files": files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project granted nothing.
    fn nothing() -> ForeignEnv {
        ForeignEnv::hook("t", [])
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn each_entry_says_what_a_session_does_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let user = write(
            dir.path(),
            "user.json",
            r#"{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"},
                "off": {"command": "o", "enabled": false}, "bad": {"type": "sse", "url": "https://x"}}}"#,
        );
        let project = write(
            dir.path(),
            "project.json",
            r#"{"mcpServers": {"b": {"url": "https://b.example"}, "a": {"nothing": 1}}}"#,
        );
        let statuses = |untrusted: Option<String>| -> Vec<(String, Scope, String)> {
            collect(&user, &project, untrusted, &nothing())
                .1
                .into_iter()
                .map(|s| (s.name, s.scope, s.status.word().to_string()))
                .collect()
        };
        let want = |b: &str, pb: &str| {
            vec![
                ("a".to_string(), Scope::User, "enabled".to_string()),
                ("b".into(), Scope::User, b.into()),
                ("off".into(), Scope::User, "disabled".into()),
                ("bad".into(), Scope::User, "invalid".into()),
                ("b".into(), Scope::Project, pb.into()),
                // An invalid project entry replaces nothing: the user's loads.
                ("a".into(), Scope::Project, "invalid".into()),
            ]
        };
        assert_eq!(statuses(None), want("replaced", "enabled"));
        assert_eq!(
            statuses(Some("not trusted".into())),
            want("enabled", "ignored")
        );
    }

    #[test]
    fn the_text_masks_literal_values_and_shows_references_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let user = write(
            dir.path(),
            "user.json",
            r#"{"mcpServers": {
                "s": {"command": "srv", "args": ["a b"], "env": {"LIT": "hunter2", "REF": "${TOKEN}", "CMD": "!pass show x"}},
                "h": {"type": "http", "url": "https://h.example", "headers": {"Authorization": "Bearer sk-live", "X-Ref": "Bearer ${T}"}},
                "bad": {"command": "", "env": {"LIT": "hunter2"}}}}"#,
        );
        let (files, servers) = collect(&user, &dir.path().join("none.json"), None, &nothing());
        let all: String = servers.iter().map(|s| get_text(s, &[])).collect();
        assert!(
            !all.contains("hunter2") && !all.contains("sk-live"),
            "{all}"
        );
        for shown in [
            "LIT=***",
            "REF=${TOKEN}",
            "CMD=!pass show x",
            "Authorization: ***",
            "X-Ref: Bearer ${T}",
            "srv 'a b'",
        ] {
            assert!(all.contains(shown), "{shown} missing in\n{all}");
        }
        let list = list_text(&files, &servers);
        assert!(list.contains("stdio  srv 'a b'"), "{list}");
        assert!(list.contains("`command` must name an executable"), "{list}");
        let json = list_json(&files, &servers, true).to_string();
        assert!(json.contains("hunter2"), "JSON keeps the values as written");
    }

    #[test]
    fn a_broken_file_is_reported_and_the_other_still_listed() {
        let dir = tempfile::tempdir().unwrap();
        let user = write(dir.path(), "user.json", "{oops");
        let project = write(
            dir.path(),
            "project.json",
            r#"{"mcpServers": {"p": {"command": "p"}}}"#,
        );
        let (files, servers) = collect(&user, &project, None, &nothing());
        assert_eq!(servers.len(), 1);
        let text = list_text(&files, &servers);
        assert!(text.contains("user.json: not valid JSON"), "{text}");
        let other = write(dir.path(), "other.json", r#"{"servers": {}}"#);
        let (files, _) = collect(&other, &project, None, &nothing());
        assert!(
            files[0]
                .problem
                .as_deref()
                .is_some_and(|p| p.contains("no \"mcpServers\" object")),
            "{:?}",
            files[0].problem
        );
    }
}
