//! Editing one `mcp.json` document in memory, for `pi mcp add|remove`: parsing it strictly
//! (a file pi cannot understand is never rewritten), adding or replacing one entry after it
//! passes the same check a session applies, removing one, and writing the text back with every
//! other key and entry where it was. Building an entry from command-line pieces (`KEY=VALUE`,
//! `Key: Value`, seconds) lives here too, so the rules are tested without a process. No I/O:
//! reading, locking and replacing the file is the caller's.

use serde_json::{Map, Value};

use super::config::{self, EntryError, ServerConfig, Source};

/// The key holding the servers.
pub const SERVERS_KEY: &str = "mcpServers";

/// Why a document or an edit was refused.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("not valid JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error("the top level is not a JSON object")]
    NotAnObject,
    #[error("\"{SERVERS_KEY}\" is not an object")]
    ServersNotAnObject,
    #[error("a server named \"{0}\" is already in this file")]
    Exists(String),
    #[error("no server named \"{name}\" in this file ({})", known_list(known))]
    Missing { name: String, known: Vec<String> },
    #[error("server \"{name}\": {reason}")]
    Invalid { name: String, reason: EntryError },
    #[error("\"{0}\" is not KEY=VALUE (a variable name, `=`, then its value)")]
    BadEnv(String),
    #[error("\"{0}\" is not a header (`Name: value`)")]
    BadHeader(String),
    #[error("\"{0}\" is not a number of seconds (more than 0, at most 86400)")]
    BadTimeout(String),
}

/// "known: a, b" or "it has none", for error messages that name what exists.
pub fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "it has none".to_string()
    } else {
        format!("known: {}", known.join(", "))
    }
}

/// One `mcp.json` file's top-level object, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    root: Map<String, Value>,
}

impl Default for Document {
    fn default() -> Self {
        Document::new()
    }
}

impl Document {
    /// The document of a file that does not exist yet.
    pub fn new() -> Document {
        let mut root = Map::new();
        root.insert(SERVERS_KEY.to_string(), Value::Object(Map::new()));
        Document { root }
    }

    /// A file's text. Anything that is not an object, or whose `mcpServers` is there but not
    /// an object, is refused: rewriting it would lose what its author meant. A missing
    /// `mcpServers` is fine (it is added when a server is).
    pub fn parse(text: impl AsRef<[u8]>) -> Result<Document, EditError> {
        let root = match serde_json::from_slice(text.as_ref()).map_err(EditError::NotJson)? {
            Value::Object(root) => root,
            _ => return Err(EditError::NotAnObject),
        };
        match root.get(SERVERS_KEY) {
            None | Some(Value::Object(_)) => Ok(Document { root }),
            Some(_) => Err(EditError::ServersNotAnObject),
        }
    }

    fn servers(&self) -> Option<&Map<String, Value>> {
        self.root.get(SERVERS_KEY).and_then(Value::as_object)
    }

    /// Whether the file has its `mcpServers` object (a new one is added by [`Document::insert`]).
    pub fn has_servers(&self) -> bool {
        self.servers().is_some()
    }

    /// The server names, in file order.
    pub fn names(&self) -> Vec<String> {
        self.servers()
            .map(|s| s.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// One entry as written.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.servers()?.get(name)
    }

    /// Add `entry` as `name` once it passes the check a session applies (so nothing is
    /// written that would be skipped at start-up). An existing name is an error unless
    /// `replace`; a replaced entry keeps its place. Returns whether one was replaced, and the
    /// entry as checked.
    pub fn insert(
        &mut self,
        name: &str,
        entry: Value,
        replace: bool,
    ) -> Result<(bool, ServerConfig), EditError> {
        let checked =
            config::entry(name, &entry, Source::User).map_err(|reason| EditError::Invalid {
                name: name.to_string(),
                reason,
            })?;
        let servers = self
            .root
            .entry(SERVERS_KEY)
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or(EditError::ServersNotAnObject)?;
        let existed = servers.contains_key(name);
        if existed && !replace {
            return Err(EditError::Exists(name.to_string()));
        }
        servers.insert(name.to_string(), entry);
        Ok((existed, checked))
    }

    /// Remove `name`, returning its entry; the others keep their order.
    pub fn remove(&mut self, name: &str) -> Result<Value, EditError> {
        let known = self.names();
        self.root
            .get_mut(SERVERS_KEY)
            .and_then(Value::as_object_mut)
            .and_then(|s| s.shift_remove(name))
            .ok_or_else(|| EditError::Missing {
                name: name.to_string(),
                known,
            })
    }

    /// The file's new text: two-space indentation, as Claude Code and Cursor write it, and a
    /// final newline. (Serialising a parsed value does not fail; if it ever did, the caller
    /// must write nothing rather than a stand-in.)
    pub fn to_text(&self) -> Result<String, serde_json::Error> {
        let mut text = serde_json::to_string_pretty(&self.root)?;
        text.push('\n');
        Ok(text)
    }
}

/// How a new server is reached, from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Stdio { command: String, args: Vec<String> },
    Http { url: String },
}

/// A new entry's parts, as `pi mcp add` collects them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewEntry {
    pub env: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub timeout_ms: Option<u64>,
    pub exposure: Option<String>,
}

/// The entry as it is written to the file: the shape Claude Code and Cursor use (`command` and
/// `args`, or `"type": "http"` and `url`), values kept as given (`${VAR}`, `!cmd`).
pub fn build_entry(target: &Target, parts: &NewEntry) -> Value {
    let mut o = Map::new();
    let pairs = |pairs: &[(String, String)]| -> Value {
        Value::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        )
    };
    match target {
        Target::Stdio { command, args } => {
            o.insert("command".into(), Value::String(command.clone()));
            o.insert(
                "args".into(),
                Value::Array(args.iter().cloned().map(Value::String).collect()),
            );
            if !parts.env.is_empty() {
                o.insert("env".into(), pairs(&parts.env));
            }
        }
        Target::Http { url } => {
            o.insert("type".into(), Value::String("http".into()));
            o.insert("url".into(), Value::String(url.clone()));
            if !parts.headers.is_empty() {
                o.insert("headers".into(), pairs(&parts.headers));
            }
        }
    }
    if let Some(ms) = parts.timeout_ms {
        o.insert("timeout".into(), Value::from(ms));
    }
    if let Some(e) = &parts.exposure {
        o.insert("exposure".into(), Value::String(e.clone()));
    }
    Value::Object(o)
}

/// `KEY=VALUE`; the value may be empty or hold more `=`.
pub fn parse_env(s: &str) -> Result<(String, String), EditError> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| EditError::BadEnv(s.to_string()))?;
    let valid = k.chars().next().is_some_and(|c| !c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(EditError::BadEnv(s.to_string()));
    }
    Ok((k.to_string(), v.to_string()))
}

/// `Name: value` (spaces around the value trimmed); the name is an HTTP token.
pub fn parse_header(s: &str) -> Result<(String, String), EditError> {
    let (k, v) = s
        .split_once(':')
        .ok_or_else(|| EditError::BadHeader(s.to_string()))?;
    let k = k.trim();
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if k.is_empty() || !k.chars().all(token) {
        return Err(EditError::BadHeader(s.to_string()));
    }
    Ok((k.to_string(), v.trim().to_string()))
}

/// Seconds as the user types them (`30`, `1.5`) to the file's milliseconds.
pub fn parse_timeout_secs(s: &str) -> Result<u64, EditError> {
    let bad = || EditError::BadTimeout(s.to_string());
    let secs: f64 = s.trim().parse().map_err(|_| bad())?;
    // A day is far beyond any sensible request; it also keeps the product inside u64.
    if !secs.is_finite() || secs <= 0.0 || secs > 86_400.0 {
        return Err(bad());
    }
    let ms = (secs * 1000.0).round() as u64;
    if ms == 0 {
        return Err(bad());
    }
    Ok(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FILE: &str = r#"{
  "$schema": "https://example.com/mcp.schema.json",
  "mcpServers": {
    "zeta": {"command": "z", "futureKey": [1, 2]},
    "alpha": {"type": "sse", "url": "https://old.example.com/sse"}
  },
  "other": {"keep": true}
}"#;

    #[test]
    fn adding_keeps_every_other_key_and_entry_in_order_even_invalid_ones() {
        let mut doc = Document::parse(FILE).unwrap();
        let entry = build_entry(
            &Target::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "server".into()],
            },
            &NewEntry::default(),
        );
        let (replaced, checked) = doc.insert("new", entry, false).unwrap();
        assert!(!replaced);
        assert_eq!(checked.name, "new");
        let text = doc.to_text().unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let top: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(top, ["$schema", "mcpServers", "other"]);
        assert_eq!(doc.names(), ["zeta", "alpha", "new"]);
        assert_eq!(v["mcpServers"]["zeta"]["futureKey"], json!([1, 2]));
        assert_eq!(v["mcpServers"]["alpha"]["type"], "sse");
        assert_eq!(v["other"], json!({"keep": true}));
        assert!(text.ends_with("}\n"), "{text}");
    }

    #[test]
    fn an_existing_name_is_refused_unless_replacing_and_a_replacement_keeps_its_place() {
        let mut doc = Document::parse(FILE).unwrap();
        let entry = json!({"type": "http", "url": "https://new.example.com/mcp"});
        let err = doc.insert("zeta", entry.clone(), false).unwrap_err();
        assert!(matches!(&err, EditError::Exists(n) if n == "zeta"), "{err}");
        assert_eq!(
            doc,
            Document::parse(FILE).unwrap(),
            "a refused add changed nothing"
        );
        let (replaced, _) = doc.insert("zeta", entry.clone(), true).unwrap();
        assert!(replaced);
        assert_eq!(doc.names(), ["zeta", "alpha"]);
        assert_eq!(doc.get("zeta"), Some(&entry));
    }

    #[test]
    fn an_entry_a_session_would_skip_is_refused_with_the_sessions_reason() {
        let mut doc = Document::new();
        for (name, entry, why) in [
            ("sse", json!({"type": "sse", "url": "https://x"}), "SSE"),
            ("bad name", json!({"command": "x"}), "letters, digits"),
            ("neither", json!({}), "`command`"),
            ("t", json!({"command": "x", "timeout": 0}), "`timeout`"),
            ("e", json!({"command": "x", "exposure": "loud"}), "\"loud\""),
        ] {
            let err = doc.insert(name, entry, true).unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(name) && msg.contains(why), "{msg}");
        }
        assert_eq!(doc, Document::new());
    }

    #[test]
    fn documents_pi_cannot_rewrite_faithfully_are_refused() {
        for (text, want) in [
            ("{\"mcpServers\": {", "not valid JSON"),
            ("", "not valid JSON"),
            ("[1]", "top level"),
            ("{\"mcpServers\": []}", "\"mcpServers\" is not an object"),
            ("{\"mcpServers\": null}", "\"mcpServers\" is not an object"),
        ] {
            let err = Document::parse(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
        let mut bare = Document::parse("{\"other\": 1}").unwrap();
        bare.insert("a", json!({"command": "a"}), false).unwrap();
        assert_eq!(
            bare.to_text().unwrap(),
            "{\n  \"other\": 1,\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"a\"\n    }\n  }\n}\n"
        );
    }

    #[test]
    fn removing_keeps_the_others_in_order_and_a_missing_name_lists_the_known_ones() {
        let mut doc = Document::parse(
            r#"{"mcpServers": {"a": {"command": "a"}, "b": {"bad": 1}, "c": {"command": "c"}}}"#,
        )
        .unwrap();
        assert_eq!(doc.remove("b").unwrap(), json!({"bad": 1}));
        assert_eq!(doc.names(), ["a", "c"]);
        let msg = doc.remove("zz").unwrap_err().to_string();
        assert!(
            msg.contains("\"zz\"") && msg.contains("known: a, c"),
            "{msg}"
        );
        doc.remove("a").unwrap();
        doc.remove("c").unwrap();
        assert!(doc.to_text().unwrap().contains("\"mcpServers\": {}"));
        let msg = doc.remove("a").unwrap_err().to_string();
        assert!(msg.contains("it has none"), "{msg}");
    }

    #[test]
    fn built_entries_have_the_common_shape_and_keep_values_as_written() {
        let stdio = build_entry(
            &Target::Stdio {
                command: "srv".into(),
                args: vec![],
            },
            &NewEntry {
                env: vec![("TOKEN".into(), "${GH_TOKEN}".into())],
                timeout_ms: Some(1500),
                exposure: Some("codemode".into()),
                ..NewEntry::default()
            },
        );
        assert_eq!(
            serde_json::to_string(&stdio).unwrap(),
            r#"{"command":"srv","args":[],"env":{"TOKEN":"${GH_TOKEN}"},"timeout":1500,"exposure":"codemode"}"#
        );
        let http = build_entry(
            &Target::Http {
                url: "https://x.example/mcp".into(),
            },
            &NewEntry {
                headers: vec![("Authorization".into(), "!pass show x".into())],
                ..NewEntry::default()
            },
        );
        assert_eq!(
            serde_json::to_string(&http).unwrap(),
            r#"{"type":"http","url":"https://x.example/mcp","headers":{"Authorization":"!pass show x"}}"#
        );
        let mut doc = Document::new();
        for (name, e) in [("s", stdio), ("h", http)] {
            doc.insert(name, e, false).unwrap();
        }
    }

    #[test]
    fn command_line_pieces_parse_or_name_what_is_wrong() {
        assert_eq!(parse_env("A_1=x=y").unwrap(), ("A_1".into(), "x=y".into()));
        assert_eq!(
            parse_env("EMPTY=").unwrap(),
            ("EMPTY".into(), String::new())
        );
        for bad in ["NOEQ", "=v", "1A=v", "A-B=v"] {
            let msg = parse_env(bad).unwrap_err().to_string();
            assert!(msg.contains(bad), "{msg}");
        }
        assert_eq!(
            parse_header("Authorization:  Bearer ${T} ").unwrap(),
            ("Authorization".into(), "Bearer ${T}".into())
        );
        assert_eq!(parse_header("X-A:").unwrap(), ("X-A".into(), String::new()));
        for bad in ["no colon", ": v", "Bad Name: v"] {
            let msg = parse_header(bad).unwrap_err().to_string();
            assert!(msg.contains(bad), "{msg}");
        }
        assert_eq!(parse_timeout_secs("30").unwrap(), 30_000);
        assert_eq!(parse_timeout_secs("1.5").unwrap(), 1_500);
        assert_eq!(parse_timeout_secs("0.001").unwrap(), 1);
        for bad in ["0", "-3", "0.0001", "abc", "inf", "NaN", "100000"] {
            let msg = parse_timeout_secs(bad).unwrap_err().to_string();
            assert!(msg.contains(bad), "{msg}");
        }
    }
}
