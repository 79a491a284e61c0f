//! Where session files live and how they are found.
//!
//! Layout (pi's): `<agent dir>/sessions/--<cwd>--/<ISO timestamp>_<session id>.jsonl`, where
//! `<cwd>` loses one leading separator and has `/`, `\` and `:` turned into `-`, and the
//! timestamp has `:` and `.` turned into `-`. A custom session directory (`--session-dir`,
//! `PI_CODING_AGENT_SESSION_DIR`, the `sessionDir` setting) holds the files directly, shared by
//! every project, so there a session belongs to this project when its header's `cwd` says so
//! (pi 0.84). `-c` takes the newest valid file (by mtime); `--session` and `--fork` accept a
//! path, an exact id or a unique id prefix, looked up in this project first ([`SessionDirs`]).
//!
//! Listing reads only each file's first line (and [`summarize`] streams a file with bounded
//! memory): session files can be hundreds of megabytes.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::entry::Header;
use super::SessionError;

/// The directory name for a working directory: `/home/me/p` → `--home-me-p--`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    let safe: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{safe}--")
}

/// The session directory of a working directory under a sessions root.
pub fn session_dir_for_cwd(sessions_dir: &Path, cwd: &str) -> PathBuf {
    sessions_dir.join(encode_cwd(cwd))
}

/// A session file name: `2025-01-02T03-04-05-678Z_<id>.jsonl`.
pub fn session_file_name(timestamp_iso: &str, id: &str) -> String {
    let ts: String = timestamp_iso
        .chars()
        .map(|c| if matches!(c, ':' | '.') { '-' } else { c })
        .collect();
    format!("{ts}_{id}.jsonl")
}

/// Reads just the header of a session file; `None` when the file's first line is not one.
/// The first line is read up to 1 MiB (pi reads 512 bytes, which misses long cwds).
pub fn read_header(path: &Path) -> Option<Header> {
    let file = super::file::open_regular(path).ok()?.file;
    let mut line = Vec::new();
    BufReader::new(file.take(1 << 20))
        .read_until(b'\n', &mut line)
        .ok()?;
    let serde_json::Value::Object(map) = serde_json::from_slice(&line).ok()? else {
        return None;
    };
    Header::from_object(map).ok()
}

/// A session file found in a directory.
#[derive(Debug, Clone)]
pub struct SessionFileInfo {
    pub path: PathBuf,
    pub header: Header,
    pub modified: SystemTime,
}

/// The valid session files (`*.jsonl` with a session header) in `dir`, newest first by
/// mtime. A missing directory lists nothing.
pub fn list_session_files(dir: &Path) -> Vec<SessionFileInfo> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<SessionFileInfo> = read
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .filter_map(|path| {
            let header = read_header(&path)?;
            let modified = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            Some(SessionFileInfo {
                path,
                header,
                modified,
            })
        })
        .collect();
    out.sort_by(|a, b| b.modified.cmp(&a.modified).then(b.path.cmp(&a.path)));
    out
}

/// The newest valid session file in `dir` (what `-c` continues).
pub fn newest_session(dir: &Path) -> Option<PathBuf> {
    list_session_files(dir).into_iter().next().map(|i| i.path)
}

/// A `--session-id` that pi would refuse: the id becomes part of a file name, so it must be
/// alphanumerics, `.`, `_` and `-`, starting and ending with an alphanumeric (pi's regex
/// `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', \
     and start and end with an alphanumeric character"
)]
pub struct InvalidSessionId(pub String);

/// Checks a user-chosen session id against pi's rule.
pub fn validate_session_id(id: &str) -> Result<(), InvalidSessionId> {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let inner = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if edge(id.chars().next()) && edge(id.chars().last()) && id.chars().all(inner) {
        Ok(())
    } else {
        Err(InvalidSessionId(id.to_string()))
    }
}

/// [`validate_session_id`] as a clap value parser, so a bad id fails before anything runs.
pub fn parse_session_id(id: &str) -> Result<String, InvalidSessionId> {
    validate_session_id(id).map(|()| id.to_string())
}

/// pi's `normalizePath` for user-given directories: `~` and `~/…` mean the home directory.
pub fn expand_tilde(path: &str, home: Option<&Path>) -> PathBuf {
    match home {
        Some(h) if path == "~" => h.to_path_buf(),
        Some(h) if path.starts_with("~/") => h.join(&path[2..]),
        _ => PathBuf::from(path),
    }
}

/// `path` made absolute against `base` with `.` and `..` removed lexically, as Node's
/// `path.resolve` does (pi records this form as a fork's `parentSession`).
pub fn resolve_path(base: &Path, path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in base.join(path).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Where one run finds and creates sessions: this project's directory, and where other
/// projects' sessions are (for `--session <id>` matches elsewhere).
#[derive(Debug, Clone)]
pub struct SessionDirs {
    dir: PathBuf,
    cwd: String,
    /// `dir` is a custom directory shared with other projects: only sessions whose header
    /// `cwd` is this one belong to this project.
    shared: bool,
    /// The default layout's root, whose other `--<cwd>--` folders hold other projects'
    /// sessions; `None` for a custom directory, where they sit beside this project's.
    others_root: Option<PathBuf>,
}

/// Where a `--session`/`--fork` argument points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A file path (absolute), existing or not.
    Path(PathBuf),
    /// A session of this project.
    Local(PathBuf),
    /// A session of another project, whose working directory was `cwd`.
    Other { path: PathBuf, cwd: String },
}

impl Resolved {
    pub fn path(&self) -> &Path {
        match self {
            Resolved::Path(p) | Resolved::Local(p) | Resolved::Other { path: p, .. } => p,
        }
    }
}

impl SessionDirs {
    /// `custom` is the chosen override (`--session-dir` > `PI_CODING_AGENT_SESSION_DIR` >
    /// `sessionDir` setting); without one, `<agent dir>/sessions/--<cwd>--`.
    pub fn new(agent_dir: &Path, custom: Option<&Path>, cwd: &str) -> SessionDirs {
        let root = agent_dir.join("sessions");
        let default_dir = session_dir_for_cwd(&root, cwd);
        match custom {
            None => SessionDirs {
                dir: default_dir,
                cwd: cwd.to_string(),
                shared: false,
                others_root: Some(root),
            },
            Some(custom) => SessionDirs {
                // Pointing the override at the default folder keeps its unfiltered meaning.
                shared: custom != default_dir,
                dir: custom.to_path_buf(),
                cwd: cwd.to_string(),
                others_root: None,
            },
        }
    }

    /// Where this project's new sessions are created.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The sessions root: the custom directory, or `<agent dir>/sessions` holding every
    /// project's folder. Hook session calls stay inside it ([`super::root`]).
    pub fn root(&self) -> &Path {
        self.others_root.as_deref().unwrap_or(&self.dir)
    }

    fn is_local(&self, header: &Header) -> bool {
        !self.shared || (!header.cwd.is_empty() && Path::new(&header.cwd) == Path::new(&self.cwd))
    }

    /// This project's sessions, newest first (by mtime).
    pub fn local_sessions(&self) -> Vec<SessionFileInfo> {
        list_session_files(&self.dir)
            .into_iter()
            .filter(|i| self.is_local(&i.header))
            .collect()
    }

    /// Other projects' sessions.
    fn other_sessions(&self) -> Vec<SessionFileInfo> {
        let Some(root) = &self.others_root else {
            return list_session_files(&self.dir)
                .into_iter()
                .filter(|i| !self.is_local(&i.header))
                .collect();
        };
        let Ok(read) = std::fs::read_dir(root) else {
            return Vec::new();
        };
        let mut dirs: Vec<PathBuf> = read
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir() && *p != self.dir)
            .collect();
        dirs.sort();
        dirs.iter().flat_map(|d| list_session_files(d)).collect()
    }

    /// This project's newest session (what `-c` continues).
    pub fn newest_local(&self) -> Option<PathBuf> {
        self.local_sessions().into_iter().next().map(|i| i.path)
    }

    /// This project's session whose header id is exactly `id` (`--session-id`).
    pub fn find_local_id(&self, id: &str) -> Option<PathBuf> {
        self.local_sessions()
            .into_iter()
            .find(|i| i.header.id == id)
            .map(|i| i.path)
    }

    /// Resolves a `--session`/`--fork` argument as pi does. A path-like argument (a `/` or
    /// `\`, or a `.jsonl` suffix) is taken as a path relative to `base`, existing or not.
    /// Otherwise it is a session id, or an id prefix, matched against file headers: this
    /// project's sessions first, then other projects'; an exact id wins over prefixes. pi
    /// takes the newest of several prefix matches; we refuse to guess and list them instead.
    pub fn resolve(&self, arg: &str, base: &Path) -> Result<Resolved, SessionError> {
        if arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl") {
            let home = dirs::home_dir();
            let p = expand_tilde(arg, home.as_deref());
            return Ok(Resolved::Path(resolve_path(base, &p)));
        }
        if arg.is_empty() {
            return Err(SessionError::NoMatch(arg.to_string()));
        }
        if let Some(info) = match_id(&self.local_sessions(), arg)? {
            return Ok(Resolved::Local(info.path.clone()));
        }
        match match_id(&self.other_sessions(), arg)? {
            Some(info) => Ok(Resolved::Other {
                path: info.path.clone(),
                cwd: info.header.cwd.clone(),
            }),
            None => Err(SessionError::NoMatch(arg.to_string())),
        }
    }
}

/// The session with id `arg`, else the only one whose id starts with `arg`.
fn match_id<'a>(
    sessions: &'a [SessionFileInfo],
    arg: &str,
) -> Result<Option<&'a SessionFileInfo>, SessionError> {
    if let Some(exact) = sessions.iter().find(|i| i.header.id == arg) {
        return Ok(Some(exact));
    }
    let prefixed: Vec<&SessionFileInfo> = sessions
        .iter()
        .filter(|i| i.header.id.starts_with(arg))
        .collect();
    match prefixed.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        many => Err(SessionError::Ambiguous {
            query: arg.to_string(),
            matches: many.iter().map(|i| i.path.clone()).collect(),
        }),
    }
}

/// What a session list shows about one file (pi's `SessionInfo`, minus what the header has).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionSummary {
    /// The display name of the last `session_info` entry (a blank one clears it).
    pub name: Option<String>,
    /// The text of the first user message that has text.
    pub first_message: Option<String>,
    /// `message` entries of every role, as pi counts them.
    pub message_count: usize,
}

/// Lines longer than this are counted by their type but never parsed: a pasted file or a huge
/// tool result must not be held in memory just to list a session.
const SUMMARY_LINE_LIMIT: usize = 1 << 20;

/// Streams a session file once, holding at most [`SUMMARY_LINE_LIMIT`] bytes of a line, and
/// parses only the lines that matter (the first user message, `session_info` entries).
pub fn summarize(path: &Path) -> Result<SessionSummary, SessionError> {
    let file = super::file::open_regular(path)?.file;
    summarize_reader(BufReader::with_capacity(64 * 1024, file))
        .map_err(|e| SessionError::io(path, e))
}

/// [`summarize`] over any reader (the first line is the header and is skipped).
pub fn summarize_reader<R: BufRead>(mut reader: R) -> std::io::Result<SessionSummary> {
    let mut out = SessionSummary::default();
    let mut line = Vec::new();
    let mut header_seen = false;
    while let Some(truncated) = read_capped_line(&mut reader, &mut line, SUMMARY_LINE_LIMIT)? {
        let text = line.strip_suffix(b"\r").unwrap_or(&line);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !header_seen {
            header_seen = true;
            continue;
        }
        let parse = || {
            (!truncated)
                .then(|| serde_json::from_slice::<serde_json::Value>(text).ok())
                .flatten()
        };
        // pi and we write `type` first, so the common case needs no parse at all.
        let ty = match type_prefix(text) {
            Some(t) => t.to_string(),
            None => match parse() {
                Some(v) => v["type"].as_str().unwrap_or_default().to_string(),
                None => continue,
            },
        };
        match ty.as_str() {
            "message" => {
                out.message_count += 1;
                if out.first_message.is_none() {
                    if let Some(v) = parse() {
                        if v["message"]["role"] == "user" {
                            out.first_message = message_text(&v["message"]["content"]);
                        }
                    }
                }
            }
            "session_info" => {
                if let Some(v) = parse() {
                    out.name = v["name"]
                        .as_str()
                        .map(|n| n.replace(['\r', '\n'], " ").trim().to_string())
                        .filter(|n| !n.is_empty());
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The entry type when the line starts `{"type":"…"`.
fn type_prefix(line: &[u8]) -> Option<&str> {
    let rest = line.strip_prefix(br#"{"type":""#)?;
    let end = rest.iter().position(|&b| b == b'"')?;
    std::str::from_utf8(&rest[..end]).ok()
}

/// The text of a message's content (a string, or the text blocks joined by spaces).
fn message_text(content: &serde_json::Value) -> Option<String> {
    let text = match content {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => return None,
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// Reads one line (without its `\n`) into `buf`, keeping at most `cap` bytes of it and
/// skipping the rest. `None` at end of input; otherwise whether the line was cut.
fn read_capped_line<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut truncated = false;
    let mut read_any = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(read_any.then_some(truncated));
        }
        read_any = true;
        let newline = chunk.iter().position(|&b| b == b'\n');
        let part = &chunk[..newline.unwrap_or(chunk.len())];
        let room = cap.saturating_sub(buf.len());
        truncated |= part.len() > room;
        buf.extend_from_slice(&part[..part.len().min(room)]);
        let used = newline.map_or(chunk.len(), |i| i + 1);
        reader.consume(used);
        if newline.is_some() {
            return Ok(Some(truncated));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_encoding_matches_pi() {
        assert_eq!(encode_cwd("/home/me/proj"), "--home-me-proj--");
        assert_eq!(encode_cwd("C:\\Users\\me"), "--C--Users-me--");
        assert_eq!(encode_cwd("\\\\server\\share"), "---server-share--");
        assert_eq!(encode_cwd("/"), "----");
    }

    #[test]
    fn file_names_replace_colons_and_dots() {
        assert_eq!(
            session_file_name("2025-01-02T03:04:05.678Z", "0194-ab"),
            "2025-01-02T03-04-05-678Z_0194-ab.jsonl"
        );
    }

    fn write(dir: &Path, name: &str, id: &str) -> PathBuf {
        write_in(dir, name, id, "/w")
    }

    fn write_in(dir: &Path, name: &str, id: &str, cwd: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join(name);
        std::fs::write(
            &p,
            format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"t\",\"cwd\":\"{cwd}\"}}\n"),
        )
        .unwrap();
        p
    }

    #[test]
    fn newest_session_skips_invalid_files_and_uses_mtime() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let old = write(d, "2025-01-01T00-00-00-000Z_a.jsonl", "a");
        let new = write(d, "2025-01-02T00-00-00-000Z_b.jsonl", "b");
        std::fs::write(d.join("2025-01-03T00-00-00-000Z_c.jsonl"), "garbage\n").unwrap();
        let t0 = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        let t1 = t0 + std::time::Duration::from_secs(10);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(t1)
            .unwrap();
        std::fs::File::options()
            .write(true)
            .open(&new)
            .unwrap()
            .set_modified(t0)
            .unwrap();
        assert_eq!(newest_session(d), Some(old));
        assert_eq!(list_session_files(d).len(), 2);
        assert_eq!(newest_session(&d.join("missing")), None);
    }

    #[test]
    fn session_ids_follow_pis_rule() {
        for ok in ["a", "0194-ab", "my_session.v2", "A1"] {
            assert_eq!(validate_session_id(ok), Ok(()), "{ok}");
        }
        for bad in ["", "-a", "a-", "a_", ".a", "a b", "a/b", "é", "a\n"] {
            assert!(validate_session_id(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_session_id("x.y").unwrap(), "x.y");
    }

    #[test]
    fn tilde_and_relative_paths_resolve_like_node() {
        let home = Path::new("/home/me");
        assert_eq!(expand_tilde("~", Some(home)), home);
        assert_eq!(expand_tilde("~/s", Some(home)), Path::new("/home/me/s"));
        assert_eq!(expand_tilde("~x/s", Some(home)), Path::new("~x/s"));
        assert_eq!(expand_tilde("~/s", None), Path::new("~/s"));
        assert_eq!(
            resolve_path(Path::new("/p/q"), Path::new("../r/./s.jsonl")),
            Path::new("/p/r/s.jsonl")
        );
        assert_eq!(
            resolve_path(Path::new("/p"), Path::new("/abs/x.jsonl")),
            Path::new("/abs/x.jsonl")
        );
    }

    #[test]
    fn default_layout_resolves_local_first_then_other_projects() {
        let tmp = tempfile::tempdir().unwrap();
        let agent = tmp.path();
        let dirs = SessionDirs::new(agent, None, "/w");
        assert_eq!(dirs.dir(), agent.join("sessions/--w--"));
        assert_eq!(dirs.root(), agent.join("sessions"));
        let here = write_in(dirs.dir(), "t_0194aaaa-1.jsonl", "0194aaaa-1", "/w");
        let there = write_in(
            &agent.join("sessions/--x--"),
            "t_0194bbbb-2.jsonl",
            "0194bbbb-2",
            "/x",
        );
        // A file whose name disagrees with its header is found by the header's id.
        let renamed = write_in(dirs.dir(), "custom.jsonl", "zeta", "/w");
        let base = Path::new("/w");
        assert_eq!(
            dirs.resolve("0194aaaa-1", base).unwrap(),
            Resolved::Local(here.clone())
        );
        assert_eq!(
            dirs.resolve("zeta", base).unwrap(),
            Resolved::Local(renamed)
        );
        assert_eq!(
            dirs.resolve("0194bb", base).unwrap(),
            Resolved::Other {
                path: there,
                cwd: "/x".into()
            }
        );
        // A local prefix match wins before other projects are considered.
        assert_eq!(dirs.resolve("0194", base).unwrap(), Resolved::Local(here));
        assert!(matches!(
            dirs.resolve("ffff", base),
            Err(SessionError::NoMatch(_))
        ));
        assert_eq!(
            dirs.resolve("sub/y.jsonl", base).unwrap(),
            Resolved::Path(PathBuf::from("/w/sub/y.jsonl"))
        );
        assert!(dirs.find_local_id("0194aaaa-1").is_some());
        assert_eq!(dirs.find_local_id("0194aaaa"), None);
    }

    #[test]
    fn several_prefix_matches_are_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = SessionDirs::new(tmp.path(), None, "/w");
        write(dirs.dir(), "t_ab1.jsonl", "ab1");
        write(dirs.dir(), "t_ab2.jsonl", "ab2");
        assert!(matches!(
            dirs.resolve("ab", Path::new("/w")),
            Err(SessionError::Ambiguous { matches, .. }) if matches.len() == 2
        ));
    }

    #[test]
    fn a_custom_dir_is_shared_and_filtered_by_header_cwd() {
        let tmp = tempfile::tempdir().unwrap();
        let custom = tmp.path().join("custom");
        let dirs = SessionDirs::new(tmp.path(), Some(&custom), "/w");
        assert_eq!(dirs.dir(), custom);
        assert_eq!(dirs.root(), custom);
        let mine = write_in(&custom, "t_m1.jsonl", "m1", "/w");
        let theirs = write_in(&custom, "t_t1.jsonl", "t1", "/x");
        write_in(&custom, "t_e1.jsonl", "e1", "");
        let local: Vec<PathBuf> = dirs.local_sessions().into_iter().map(|i| i.path).collect();
        assert_eq!(local, vec![mine.clone()]);
        assert_eq!(dirs.newest_local(), Some(mine));
        assert_eq!(
            dirs.resolve("t1", Path::new("/w")).unwrap(),
            Resolved::Other {
                path: theirs,
                cwd: "/x".into()
            }
        );
        // The override pointing at the default folder is not filtered.
        let default_dir = tmp.path().join("sessions/--w--");
        let same = SessionDirs::new(tmp.path(), Some(&default_dir), "/w");
        write_in(&default_dir, "t_o1.jsonl", "o1", "/other");
        assert_eq!(same.local_sessions().len(), 1);
    }

    #[test]
    fn summaries_count_messages_and_find_name_and_first_user_text() {
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}"#,
            r#"{"type":"model_change","id":"1","parentId":null,"timestamp":"t","provider":"p","modelId":"m"}"#,
            r#"{"type":"message","id":"2","parentId":"1","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"before"}]}}"#,
            r#"{"type":"message","id":"3","parentId":"2","timestamp":"t","message":{"role":"user","content":[{"type":"image","data":"x"},{"type":"text","text":"  fix the\nbug "}]}}"#,
            r#"{"type":"session_info","id":"4","parentId":"3","timestamp":"t","name":"old"}"#,
            "",
            r#"{"id":"5","type":"message","parentId":"4","timestamp":"t","message":{"role":"user","content":"second"}}"#,
            r#"{"type":"session_info","id":"6","parentId":"5","timestamp":"t","name":" new\nname "}"#,
            "not json",
        ];
        let s = summarize_reader(std::io::Cursor::new(lines.join(
            "
",
        )))
        .unwrap();
        assert_eq!(
            s,
            SessionSummary {
                name: Some("new name".into()),
                first_message: Some("fix the\nbug".into()),
                message_count: 3,
            }
        );
        let cleared = format!(
            "{}
{}
",
            lines[0],
            r#"{"type":"session_info","id":"9","parentId":null,"timestamp":"t","name":"  "}"#
        );
        assert_eq!(
            summarize_reader(std::io::Cursor::new(cleared)).unwrap(),
            SessionSummary::default()
        );
    }

    #[test]
    fn lines_beyond_the_cap_are_counted_but_not_held() {
        let mut buf = Vec::new();
        let input = format!(
            "{}
ab
{}",
            "x".repeat(10),
            "y".repeat(7)
        );
        let mut r = std::io::BufReader::with_capacity(4, input.as_bytes());
        assert_eq!(read_capped_line(&mut r, &mut buf, 5).unwrap(), Some(true));
        assert_eq!(buf, b"xxxxx");
        assert_eq!(read_capped_line(&mut r, &mut buf, 5).unwrap(), Some(false));
        assert_eq!(buf, b"ab");
        assert_eq!(read_capped_line(&mut r, &mut buf, 5).unwrap(), Some(true));
        assert_eq!(read_capped_line(&mut r, &mut buf, 5).unwrap(), None);

        // A huge user message line: counted, its text skipped, memory bounded.
        let big = format!(
            r#"{{"type":"message","id":"2","parentId":null,"timestamp":"t","message":{{"role":"user","content":"{}"}}}}"#,
            "z".repeat(SUMMARY_LINE_LIMIT + 10)
        );
        let file = format!("{{\"type\":\"session\",\"id\":\"s\"}}\n{big}\n");
        let s = summarize_reader(std::io::Cursor::new(file)).unwrap();
        assert_eq!(s.message_count, 1);
        assert_eq!(s.first_message, None);
    }
}
