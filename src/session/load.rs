//! Reading a session file: one pass, line by line, each line parsed into its entry as it
//! arrives.
//!
//! Memory: the file is never held whole. One line buffer (reused; as large as the longest
//! line) and that line's transient `serde_json::Value` exist at a time, so the peak is the
//! loaded entries plus about three times the longest line. The entries themselves hold the
//! decoded strings once; a line is additionally kept verbatim only when re-serializing its
//! entry would not reproduce it (whitespace, number spellings, unusual field order).
//!
//! The first non-blank line decides whether the file is a session at all: it must be a
//! session header (read with a size cap, so a large file that is not a session is never read
//! whole) of a version this code understands. A file with no bytes at all is "no session yet"
//! (a crash between create and first write leaves one); anything else is an error, and
//! nothing here ever writes.
//!
//! Damage after the header is reported, not fatal: malformed lines are skipped with a
//! warning, a last line without its newline that does not parse (a write cut short) is
//! skipped with its own warning, and v1/v2 files are migrated to v3 in memory (v1: ids and
//! parent links assigned, `firstKeptEntryIndex` → `firstKeptEntryId`; v2: message role
//! `hookMessage` → `custom`).

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::message::Message;

use super::entry::{
    new_entry_id, AgentMessage, Entry, EntryKind, EntryParseError, Header, ParseOptions,
    CURRENT_VERSION,
};
use super::{NotSessionReason, SessionError};

/// What kind of damage a load warning reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarningKind {
    /// Not JSON (or not UTF-8); the line was skipped.
    Malformed,
    /// The last line has no newline and does not parse: a write was cut short. Skipped.
    TruncatedLastLine,
    /// JSON, but not an entry (no string `type`, no `id`, a second header, …). Skipped.
    NotAnEntry,
    /// A known entry type whose fields did not fit; kept as an unknown entry (preserved,
    /// ignored for context).
    UnexpectedShape,
    /// Not damage: the file was in an older format and has been migrated (the message says
    /// where the original was kept).
    Migrated,
}

/// A problem found while loading, with its 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    pub line: usize,
    pub kind: WarningKind,
    pub message: String,
}

impl std::fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// A loaded session file.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub header: Header,
    /// In file order.
    pub entries: Vec<Entry>,
    pub warnings: Vec<LoadWarning>,
    /// The file's version when it was migrated (1 or 2); `None` for v3 files.
    pub migrated_from: Option<u32>,
    /// False when the file's last byte is not a newline (the next append must add one).
    pub ends_with_newline: bool,
}

/// The longest first line read while looking for the header. pi's headers are a few hundred
/// bytes; a long `cwd` still fits many times over.
pub const HEADER_LINE_LIMIT: usize = 1 << 20;

/// Loads a session file. `Ok(None)` when the file is empty (0 bytes, as a crash between
/// create and first write leaves); an error when it is not a regular file, when its first
/// non-blank line is not a session header, or when that header's version is newer than
/// [`CURRENT_VERSION`] (the file is not ours to touch). Never writes.
pub fn load_file(path: &Path) -> Result<Option<Loaded>, SessionError> {
    let opened = super::file::open_regular(path)?;
    load_opened(path, opened.file)
}

/// Opens a session file to be read line by line by a caller that keeps little of it (`pi hook
/// replay`): its header, and a reader at the line after it. `Ok(None)` for an empty file; the
/// same errors as [`load_file`] for anything that is not a session of a version we read.
pub fn open_streaming(path: &Path) -> Result<Option<(Header, BufReader<File>)>, SessionError> {
    let opened = super::file::open_regular(path)?;
    let mut reader = BufReader::with_capacity(1 << 16, opened.file);
    let mut buf = Vec::new();
    let first = read_header(&mut reader, &mut buf).map_err(|e| e.with_path(path))?;
    Ok(first.map(|f| (f.header, reader)))
}

/// [`load_file`] on a file already opened (and checked) by the caller.
pub(crate) fn load_opened(path: &Path, file: File) -> Result<Option<Loaded>, SessionError> {
    // A large buffer keeps syscalls few on 100 MB files; lines longer than it still work.
    load_reader(BufReader::with_capacity(1 << 20, file)).map_err(|e| e.with_path(path))
}

/// Loads from any buffered reader (see [`load_file`]).
pub fn load_reader<R: BufRead>(mut reader: R) -> Result<Option<Loaded>, SessionError> {
    let mut buf: Vec<u8> = Vec::new();
    let Some(first) = read_header(&mut reader, &mut buf)? else {
        return Ok(None);
    };
    let mut line_no = first.line;
    let mut ends_with_newline = first.has_newline;
    let mut header = first.header;
    let version = header.version;
    let mut entries: Vec<Entry> = Vec::new();
    let mut warnings: Vec<LoadWarning> = Vec::new();
    let mut v1 = V1Ids::default();
    if version < 2 {
        v1.by_index.push(None);
    }

    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| SessionError::Io {
                path: Default::default(),
                source: e,
            })?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let has_newline = buf.last() == Some(&b'\n');
        ends_with_newline = has_newline;
        let content = if has_newline {
            &buf[..buf.len() - 1]
        } else {
            &buf[..]
        };
        if content.trim_ascii().is_empty() {
            continue;
        }
        let (map, text) = match parse_object(content, has_newline, line_no) {
            Ok(parsed) => parsed,
            Err(w) => {
                warnings.push(w);
                continue;
            }
        };
        let line = Line {
            text,
            number: line_no,
            version,
        };
        if let Some(entry) = read_entry(map, &line, &mut v1, &mut warnings) {
            entries.push(entry);
        }
    }

    let migrated_from = (version < CURRENT_VERSION).then_some(version);
    header.version = CURRENT_VERSION;
    Ok(Some(Loaded {
        header,
        entries,
        warnings,
        migrated_from,
        ends_with_newline,
    }))
}

/// v1 only: ids taken so far, the id of every file entry by index (header = 0) for
/// `firstKeptEntryIndex`, and the id given last (the next entry's parent).
#[derive(Default)]
struct V1Ids {
    taken: HashSet<String>,
    by_index: Vec<Option<String>>,
    prev: Option<String>,
}

/// An entry's line: its text, its number in the file, and the file's version.
struct Line<'a> {
    text: &'a str,
    number: usize,
    version: u32,
}

/// A non-blank line as a JSON object that is not a header, with its text; else the warning
/// that says why it is skipped.
fn parse_object(
    content: &[u8],
    has_newline: bool,
    line: usize,
) -> Result<(Map<String, Value>, &str), LoadWarning> {
    let bad_kind = if has_newline {
        WarningKind::Malformed
    } else {
        WarningKind::TruncatedLastLine
    };
    let warning = |kind, message| LoadWarning {
        line,
        kind,
        message,
    };
    let Ok(text) = std::str::from_utf8(content) else {
        return Err(warning(bad_kind, "not valid UTF-8; skipped".into()));
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let what = if has_newline {
                "malformed JSON"
            } else {
                "truncated last line"
            };
            return Err(warning(bad_kind, format!("{what} ({e}); skipped")));
        }
    };
    let Value::Object(map) = value else {
        return Err(warning(
            WarningKind::NotAnEntry,
            "not a JSON object; skipped".into(),
        ));
    };
    if map.get("type").and_then(Value::as_str) == Some("session") {
        return Err(warning(
            WarningKind::NotAnEntry,
            "a second session header; skipped".into(),
        ));
    }
    Ok((map, text))
}

/// The entry of one line's object, migrated to the current version; `None` (with a
/// warning) when it is not an entry. Fields that do not fit are warned about too.
fn read_entry(
    mut map: Map<String, Value>,
    line: &Line,
    v1: &mut V1Ids,
    warnings: &mut Vec<LoadWarning>,
) -> Option<Entry> {
    let version = line.version;
    if version < 3 {
        migrate_v2_message(&mut map);
    }
    let assigned = if version < 2 {
        migrate_v1_compaction(&mut map, &v1.by_index);
        let id = new_entry_id(|id| v1.taken.contains(id));
        v1.taken.insert(id.clone());
        v1.by_index.push(Some(id.clone()));
        Some((id.clone(), v1.prev.replace(id)))
    } else {
        None
    };

    let mut shape_warnings = Vec::new();
    let mut on_shape = |w: String| shape_warnings.push(w);
    let entry = Entry::from_object(
        map,
        ParseOptions {
            assigned,
            on_shape_error: &mut on_shape,
        },
    );
    for w in shape_warnings {
        warnings.push(LoadWarning {
            line: line.number,
            kind: WarningKind::UnexpectedShape,
            message: w,
        });
    }
    let mut entry = match entry {
        Ok(e) => e,
        Err(e) => {
            let message = match e {
                EntryParseError::NotAnEntry => "no string `type`; skipped".to_string(),
                EntryParseError::MissingId => "entry without an `id`; skipped".to_string(),
                EntryParseError::BadBase(f) => format!("`{f}` has the wrong type; skipped"),
            };
            warnings.push(LoadWarning {
                line: line.number,
                kind: WarningKind::NotAnEntry,
                message,
            });
            return None;
        }
    };
    if version >= 3 {
        settle_exact(&mut entry, line.text);
    } else {
        // Migrated entries are rewritten anyway; still prefer the typed message form.
        type_message(&mut entry);
    }
    Some(entry)
}

/// The header line, where it was, and whether it ended with a newline.
struct FirstLine {
    header: Header,
    line: usize,
    has_newline: bool,
}

/// Reads up to the first non-blank line, each line at most [`HEADER_LINE_LIMIT`] bytes, and
/// requires it to be a session header we can read. `Ok(None)` only when the input is empty.
fn read_header<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> Result<Option<FirstLine>, SessionError> {
    let not_a_session = |reason| SessionError::NotASession {
        path: Default::default(),
        reason,
    };
    let mut line = 0usize;
    loop {
        buf.clear();
        let n = std::io::Read::take(&mut *reader, HEADER_LINE_LIMIT as u64 + 1)
            .read_until(b'\n', buf)
            .map_err(|e| SessionError::Io {
                path: Default::default(),
                source: e,
            })?;
        if n == 0 {
            return match line {
                0 => Ok(None),
                _ => Err(not_a_session(NotSessionReason::OnlyBlankLines)),
            };
        }
        line += 1;
        let has_newline = buf.last() == Some(&b'\n');
        if !has_newline && buf.len() > HEADER_LINE_LIMIT {
            return Err(not_a_session(NotSessionReason::FirstLineTooLong));
        }
        let content = if has_newline {
            &buf[..buf.len() - 1]
        } else {
            &buf[..]
        };
        if content.trim_ascii().is_empty() {
            continue;
        }
        let text = std::str::from_utf8(content)
            .map_err(|_| not_a_session(NotSessionReason::NotJson("not UTF-8".into())))?;
        let value: Value = serde_json::from_str(text)
            .map_err(|e| not_a_session(NotSessionReason::NotJson(e.to_string())))?;
        let Value::Object(map) = value else {
            return Err(not_a_session(NotSessionReason::NotAnObject));
        };
        let header = Header::from_object(map).map_err(|e| not_a_session(e.into()))?;
        if header.version > CURRENT_VERSION {
            return Err(SessionError::UnsupportedVersion {
                path: Default::default(),
                version: header.version,
            });
        }
        return Ok(Some(FirstLine {
            header,
            line,
            has_newline,
        }));
    }
}

/// Chooses the entry's in-memory form so that writing it reproduces `line`.
///
/// User, assistant, tool result and system messages are read into our typed `Message`, consuming
/// the parsed JSON (its strings move, nothing is copied). When the typed form does not
/// reproduce the line (pi writes integer costs as `0`, newer fields our `Message` lacks), the
/// line is kept next to it for writing, and the typed form serves context. Keeping the
/// parsed JSON instead would cost more: a `serde_json::Value` with `preserve_order` carries
/// about 5 KB of map overhead per assistant message, on top of its text. Other roles stay
/// raw JSON; any other entry whose serialization differs keeps its line too.
fn settle_exact(entry: &mut Entry, line: &str) {
    if let EntryKind::Message(m) = &mut entry.kind {
        if matches!(
            m.message.role(),
            "user" | "assistant" | "toolResult" | "system"
        ) {
            let taken = std::mem::replace(&mut m.message, AgentMessage::Raw(Value::Null));
            if let AgentMessage::Raw(v) = taken {
                match serde_json::from_value::<Message>(v) {
                    Ok(typed) => m.message = AgentMessage::Typed(Arc::new(typed)),
                    // Odd shape: back to the raw JSON, parsed again from the line.
                    Err(_) => {
                        m.message = AgentMessage::Raw(raw_message_of(line).unwrap_or_default())
                    }
                }
            }
        }
    }
    if !entry.serializes_to(line) {
        entry.source = Some(line.into());
    }
}

/// The `message` field of a line, parsed again.
fn raw_message_of(line: &str) -> Option<Value> {
    match serde_json::from_str::<Value>(line).ok()? {
        Value::Object(mut map) => map.shift_remove("message"),
        _ => None,
    }
}

/// Replaces a raw user/assistant/toolResult message with our typed form when it reads.
fn type_message(entry: &mut Entry) {
    if let EntryKind::Message(m) = &mut entry.kind {
        if let Some(typed) = typed_form(&m.message) {
            m.message = AgentMessage::Typed(Arc::new(typed));
        }
    }
}

/// Our `Message` read strictly from a raw message (strings cloned), if it fits.
fn typed_form(message: &AgentMessage) -> Option<Message> {
    match message {
        AgentMessage::Raw(v) => Message::deserialize(v).ok(),
        AgentMessage::Typed(_) => None,
    }
}

/// v2 → v3: the role `hookMessage` became `custom`.
fn migrate_v2_message(map: &mut Map<String, Value>) {
    if map.get("type").and_then(Value::as_str) != Some("message") {
        return;
    }
    if let Some(Value::Object(msg)) = map.get_mut("message") {
        if msg.get("role").and_then(Value::as_str) == Some("hookMessage") {
            msg.insert("role".into(), Value::String("custom".into()));
        }
    }
}

/// v1 → v2: a compaction's `firstKeptEntryIndex` (an index into the file's entries, the
/// header being 0) becomes `firstKeptEntryId`. The index always points backwards, so the ids
/// assigned so far suffice.
fn migrate_v1_compaction(map: &mut Map<String, Value>, by_index: &[Option<String>]) {
    if map.get("type").and_then(Value::as_str) != Some("compaction") {
        return;
    }
    let Some(index) = map.get("firstKeptEntryIndex").and_then(Value::as_u64) else {
        return;
    };
    map.shift_remove("firstKeptEntryIndex");
    if let Some(Some(id)) = by_index.get(index as usize) {
        map.insert("firstKeptEntryId".into(), Value::String(id.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::HeaderError;

    fn load(text: &str) -> Loaded {
        load_reader(text.as_bytes()).unwrap().unwrap()
    }

    const H: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#;

    fn refusal(text: &[u8]) -> SessionError {
        match load_reader(text) {
            Err(e) => e,
            Ok(l) => panic!("{:?} loaded: {l:?}", String::from_utf8_lossy(text)),
        }
    }

    fn reason(text: &[u8]) -> NotSessionReason {
        match refusal(text) {
            SessionError::NotASession { reason, .. } => reason,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_an_empty_input_is_no_session_and_anything_else_needs_a_header() {
        assert!(load_reader("".as_bytes()).unwrap().is_none());
        assert_eq!(reason(b"\n \n\t\n"), NotSessionReason::OnlyBlankLines);
        assert!(matches!(
            reason(b"{\"type\":\"message\"}\n"),
            NotSessionReason::NotAHeader(HeaderError::NotSessionType(_))
        ));
        assert!(matches!(reason(b"hello\n"), NotSessionReason::NotJson(_)));
        assert!(matches!(
            reason(b"\xff\xfe\n"),
            NotSessionReason::NotJson(_)
        ));
        assert_eq!(
            reason(b"[{\"type\":\"session\",\"id\":\"x\"}]"),
            NotSessionReason::NotAnObject
        );
        for bad in [r#""3""#, "0", "-1", "2.5", "null", "4294967296"] {
            let line = format!(r#"{{"type":"session","version":{bad},"id":"x"}}"#);
            assert!(
                matches!(
                    reason(line.as_bytes()),
                    NotSessionReason::NotAHeader(HeaderError::BadVersion(_))
                ),
                "{line}"
            );
        }
        assert!(matches!(
            reason(br#"{"type":"session","id":7}"#),
            NotSessionReason::NotAHeader(HeaderError::BadId(_))
        ));
        // Blank lines before the header are fine, as in pi.
        let l = load_reader(format!("\n\n{H}\n").as_bytes())
            .unwrap()
            .unwrap();
        assert_eq!(l.header.id, "s1");
    }

    #[test]
    fn a_future_version_is_refused() {
        let text = r#"{"type":"session","version":4,"id":"x"}"#;
        assert!(matches!(
            refusal(text.as_bytes()),
            SessionError::UnsupportedVersion { version: 4, .. }
        ));
    }

    #[test]
    fn a_huge_first_line_is_refused_without_reading_the_rest() {
        // Longer than the cap, no newline, and then a reader that must never be reached.
        struct Endless;
        impl std::io::Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                buf.fill(b'x');
                Ok(buf.len())
            }
        }
        let reader = BufReader::new(Endless);
        match load_reader(reader) {
            Err(SessionError::NotASession {
                reason: NotSessionReason::FirstLineTooLong,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_and_truncated_lines_are_skipped_with_warnings() {
        let text = format!(
            "{H}\nnot json\n{}\n{}",
            r#"{"type":"label","id":"a","parentId":null,"timestamp":"t","targetId":"x","label":"l"}"#,
            r#"{"type":"label","id":"b","parentId":"a","timesta"#
        );
        let l = load(&text);
        assert_eq!(l.entries.len(), 1);
        assert_eq!(l.warnings.len(), 2);
        assert_eq!(l.warnings[0].kind, WarningKind::Malformed);
        assert_eq!(l.warnings[0].line, 2);
        assert_eq!(l.warnings[1].kind, WarningKind::TruncatedLastLine);
        assert!(!l.ends_with_newline);
    }

    #[test]
    fn messages_are_typed_and_keep_their_line_when_not_exact() {
        // A field our Message does not know (`responseModel`, newer pi) would be lost by the
        // typed form, so the line keeps its bytes for writing; the typed form serves context.
        let user = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}"#;
        let asst = r#"{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2,"responseModel":"m-2"}}"#;
        let bash = r#"{"type":"message","id":"c","parentId":"b","timestamp":"t","message":{"role":"bashExecution","command":"ls","output":"","exitCode":0,"cancelled":false,"truncated":false,"timestamp":3}}"#;
        let l = load(&format!("{H}\n{user}\n{asst}\n{bash}\n"));
        assert!(matches!(
            l.entries[0].message(),
            Some(AgentMessage::Typed(m)) if matches!(**m, Message::User(_))
        ));
        assert!(!l.entries[0].keeps_source());
        assert!(matches!(
            l.entries[1].message(),
            Some(AgentMessage::Typed(m)) if matches!(**m, Message::Assistant(_))
        ));
        assert!(l.entries[1].keeps_source());
        assert!(matches!(l.entries[2].message(), Some(AgentMessage::Raw(_))));
        assert!(!l.entries[2].keeps_source());
        for (e, line) in l.entries.iter().zip([user, asst, bash]) {
            assert_eq!(e.to_line(), line);
            // Serialize (RPC get_entries) shows the same bytes.
            assert_eq!(serde_json::to_string(e).unwrap(), line);
        }
    }

    #[test]
    fn odd_spelling_keeps_the_source_line() {
        let spaced = r#"{"type":"label", "id":"a","parentId":null,"timestamp":"t","targetId":"x"}"#;
        let l = load(&format!("{H}\n{spaced}\n"));
        assert!(l.entries[0].keeps_source());
        assert_eq!(l.entries[0].to_line(), spaced);
    }

    #[test]
    fn v1_files_get_ids_links_and_first_kept_ids() {
        let text = concat!(
            r#"{"type":"session","id":"old","timestamp":"t","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"a","timestamp":1}}"#,
            "\n",
            r#"{"type":"message","timestamp":"t","message":{"role":"hookMessage","customType":"h","content":"x","display":true,"timestamp":1}}"#,
            "\n",
            r#"{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":2,"tokensBefore":9}"#,
            "\n"
        );
        let l = load(text);
        assert_eq!(l.migrated_from, Some(1));
        assert_eq!(l.header.version, 3);
        let e = &l.entries;
        assert_eq!(e[0].parent_id, None);
        assert_eq!(e[1].parent_id.as_deref(), Some(e[0].id.as_str()));
        assert_eq!(e[2].parent_id.as_deref(), Some(e[1].id.as_str()));
        assert_eq!(e[1].message().map(|m| m.role()), Some("custom"));
        let EntryKind::Compaction(c) = &e[2].kind else {
            panic!()
        };
        assert_eq!(c.first_kept_entry_id.as_deref(), Some(e[1].id.as_str()));
        assert!(!c.extra.contains_key("firstKeptEntryIndex"));
    }

    #[test]
    fn v2_files_rename_hook_messages() {
        let text = concat!(
            r#"{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"hookMessage","customType":"h","content":"x","display":true,"timestamp":1}}"#,
            "\n"
        );
        let l = load(text);
        assert_eq!(l.migrated_from, Some(2));
        assert_eq!(l.entries[0].id, "a");
        assert_eq!(l.entries[0].message().map(|m| m.role()), Some("custom"));
    }
}
