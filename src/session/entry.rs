//! The session file's line types: the header and every entry type pi writes (JSONL v3).
//!
//! Serialization reproduces pi's bytes: pi writes each line with `JSON.stringify` over object
//! literals, so the field order is the literal's order and `undefined` fields are left out. The
//! `Wire*` helpers below spell out that order per entry type. Fields this module does not know
//! (newer pi versions, extensions) are kept in `extra` maps and written back after the known
//! ones, and an entry whose re-serialization would still differ from the line read keeps that
//! line (see [`Entry::to_line`]), so a file written by pi survives a load/write cycle unchanged.
//!
//! Message payloads are pi's `AgentMessage`: [`AgentMessage::Typed`] holds our [`Message`] when
//! it reproduces the stored JSON exactly; everything else (the roles `bashExecution`, `custom`,
//! `branchSummary`, `compactionSummary`, `system`, fields our `Message` lacks, or number
//! spellings such as `0` for an `f64` cost) stays [`AgentMessage::Raw`] JSON, converted on
//! demand by [`AgentMessage::to_message`].

use std::sync::Arc;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::message::Message;

/// The format version this module writes; older files are migrated on load.
pub const CURRENT_VERSION: u32 = 3;

fn is_none<T>(o: &&Option<T>) -> bool {
    o.is_none()
}

/// Line 1 of a session file. Not part of the entry tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// 1 when the field was absent (v1 files); [`CURRENT_VERSION`] after migration.
    pub version: u32,
    pub id: String,
    /// ISO 8601 with milliseconds, as `Date.toISOString()` writes it.
    pub timestamp: String,
    pub cwd: String,
    /// The file this session was forked or cloned from.
    pub parent_session: Option<String>,
    /// Fields this module does not know, written back after the known ones.
    pub extra: Map<String, Value>,
}

#[derive(Serialize)]
struct HeaderWire<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    version: u32,
    id: &'a str,
    timestamp: &'a str,
    cwd: &'a str,
    #[serde(rename = "parentSession", skip_serializing_if = "is_none")]
    parent_session: &'a Option<String>,
    #[serde(flatten)]
    extra: &'a Map<String, Value>,
}

impl Serialize for Header {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        HeaderWire {
            ty: "session",
            version: self.version,
            id: &self.id,
            timestamp: &self.timestamp,
            cwd: &self.cwd,
            parent_session: &self.parent_session,
            extra: &self.extra,
        }
        .serialize(s)
    }
}

impl Header {
    /// A fresh v3 header.
    pub fn new(id: String, timestamp: String, cwd: String, parent_session: Option<String>) -> Self {
        Header {
            version: CURRENT_VERSION,
            id,
            timestamp,
            cwd,
            parent_session,
            extra: Map::new(),
        }
    }

    /// Reads a header from a parsed line. pi's test is `type == "session"` and a string `id`;
    /// `version`, when present, must also be a positive integer, because a file whose version
    /// cannot be read cannot be migrated safely (absent means v1, as pi wrote it then).
    pub fn from_object(mut map: Map<String, Value>) -> Result<Header, HeaderError> {
        match map.get("type") {
            Some(Value::String(t)) if t == "session" => {}
            Some(other) => return Err(HeaderError::NotSessionType(other.to_string())),
            None => return Err(HeaderError::NotSessionType("missing".into())),
        }
        let id = match map.shift_remove("id") {
            Some(Value::String(s)) => s,
            Some(other) => return Err(HeaderError::BadId(other.to_string())),
            None => return Err(HeaderError::BadId("missing".into())),
        };
        map.shift_remove("type");
        let version = match map.shift_remove("version") {
            None => 1,
            Some(v) => match v.as_u64().map(u32::try_from) {
                Some(Ok(n)) if n > 0 => n,
                _ => return Err(HeaderError::BadVersion(v.to_string())),
            },
        };
        let take_str = |map: &mut Map<String, Value>, k: &str| match map.shift_remove(k) {
            Some(Value::String(s)) => Some(s),
            Some(other) => {
                // Keep a wrongly typed field rather than lose it.
                map.insert(k.to_string(), other);
                None
            }
            None => None,
        };
        let timestamp = take_str(&mut map, "timestamp").unwrap_or_default();
        let cwd = take_str(&mut map, "cwd").unwrap_or_default();
        let parent_session = take_str(&mut map, "parentSession");
        Ok(Header {
            version,
            id,
            timestamp,
            cwd,
            parent_session,
            extra: map,
        })
    }

    /// The header as one JSON line (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Why a JSON object is not a session header; the values are shown as JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("its `type` is {0}, not \"session\"")]
    NotSessionType(String),
    #[error("its `id` is {0}, not a string")]
    BadId(String),
    #[error("its `version` is {0}, not a positive integer")]
    BadVersion(String),
}

/// pi's `AgentMessage`: one of our typed messages, or JSON kept as read.
///
/// A typed message is reference-counted: the session's entry, the agent's context and the
/// request being built all point at this one allocation, so a resumed conversation is held
/// once however many of them look at it (cloning an `AgentMessage` copies a pointer).
#[derive(Debug, Clone, PartialEq)]
pub enum AgentMessage {
    Typed(Arc<Message>),
    Raw(Value),
}

impl Serialize for AgentMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AgentMessage::Typed(m) => m.serialize(s),
            AgentMessage::Raw(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    /// Nested messages (a compaction's `retainedTail`) stay raw: there is no cheap way to
    /// check that a typed form would reproduce them, and they are only read for context.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(AgentMessage::Raw)
    }
}

impl From<Message> for AgentMessage {
    fn from(m: Message) -> Self {
        AgentMessage::Typed(Arc::new(m))
    }
}

impl From<Arc<Message>> for AgentMessage {
    fn from(m: Arc<Message>) -> Self {
        AgentMessage::Typed(m)
    }
}

impl AgentMessage {
    /// Typed when our `Message` can read it, raw otherwise.
    pub fn from_value(v: Value) -> Self {
        match Message::deserialize(&v) {
            Ok(m) => AgentMessage::Typed(Arc::new(m)),
            Err(_) => AgentMessage::Raw(v),
        }
    }

    /// The `role` field (`user`, `assistant`, `toolResult`, `bashExecution`, `custom`, …).
    pub fn role(&self) -> &str {
        match self {
            AgentMessage::Typed(m) => m.role(),
            AgentMessage::Raw(v) => v.get("role").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The message as our `Message` when its role is user, assistant or toolResult.
    /// Raw messages are read leniently: unknown fields are ignored and a `null` content
    /// becomes empty, as pi does when projecting context. A typed message is shared, not
    /// copied; a raw one is read into a new allocation.
    pub fn to_message(&self) -> Option<Arc<Message>> {
        match self {
            AgentMessage::Typed(m) => Some(Arc::clone(m)),
            AgentMessage::Raw(v) => {
                let role = v.get("role").and_then(Value::as_str)?;
                if !matches!(role, "user" | "assistant" | "toolResult" | "system") {
                    return None;
                }
                let mut v = v.clone();
                if let Some(obj) = v.as_object_mut() {
                    if obj.get("content").is_none_or(Value::is_null) {
                        let empty = if matches!(role, "user" | "system") {
                            Value::String(String::new())
                        } else {
                            Value::Array(Vec::new())
                        };
                        obj.insert("content".into(), empty);
                    }
                    if !obj.contains_key("timestamp") {
                        obj.insert("timestamp".into(), Value::from(0));
                    }
                }
                serde_json::from_value(v).ok().map(Arc::new)
            }
        }
    }

    /// The message's text: string content, or text blocks joined by newlines.
    pub fn text(&self) -> String {
        match self {
            AgentMessage::Typed(m) => match m.as_ref() {
                Message::User(u) => u.content.as_text(),
                Message::Custom(c) => c.content.as_text(),
                Message::Assistant(a) => a.text(),
                Message::ToolResult(t) => crate::message::text_of(&t.content),
                Message::System(s) => s.text(),
            },
            AgentMessage::Raw(v) => content_text(v.get("content")),
        }
    }

    /// The message as JSON (a clone for typed messages).
    pub fn to_value(&self) -> Value {
        match self {
            AgentMessage::Typed(m) => serde_json::to_value(m.as_ref()).unwrap_or(Value::Null),
            AgentMessage::Raw(v) => v.clone(),
        }
    }
}

/// Text of a pi content value (a string or an array of blocks; non-text blocks skipped).
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `message`: one conversation message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageEntry {
    pub message: AgentMessage,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `model_change`: the user switched models (restores state; not context).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelChange {
    pub provider: String,
    pub model_id: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `thinking_level_change`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingLevelChange {
    pub thinking_level: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `compaction`: a summary replacing the history before `firstKeptEntryId`.
///
/// pi 0.84 may store `retainedTail` (the kept messages, making the entry a self-contained
/// checkpoint) and newer versions `usage` and `systemMessage`; the order of those optional
/// fields after `fromHook` is our best guess, and a line in another order keeps its bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compaction {
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_kept_entry_id: Option<String>,
    pub tokens_before: u64,
    /// Default compactions store `{readFiles, modifiedFiles}`; hooks store anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retained_tail: Option<Vec<AgentMessage>>,
    /// pi 1.6: the system messages before the compaction replayed into one, so the context
    /// after it still declares the prompt and tools (the kept part's own are left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_message: Option<AgentMessage>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The default compaction `details`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDetails {
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

/// `branch_summary`: a summary of an abandoned branch, placed where the leaf moved to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummary {
    /// The entry navigated away from, or `"root"`.
    pub from_id: String,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `custom`: extension state. Never enters context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    pub custom_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `custom_message`: an extension message that enters context as a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageEntry {
    pub custom_type: String,
    /// A string or `(text|image)[]`, kept as JSON so it is written back unchanged.
    pub content: Value,
    pub display: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `label`: a bookmark on `targetId`; `None` (pi's `undefined`) or empty clears it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelEntry {
    pub target_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `session_info`: the session's display name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The new content of a `context_edit` target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replacement {
    pub content: Value,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `context_edit` (newer pi): replaces (`Some`) or drops (`None`, written `null`) the target
/// message in future context on this branch; the raw history is unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextEdit {
    pub target_id: String,
    pub replacement: Option<Replacement>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `usage` (newer pi): model usage outside the conversation (e.g. `cache_warm`); counts
/// toward totals only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageEntry {
    pub kind: String,
    pub provider: String,
    pub model: String,
    pub usage: Value,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An entry of a type this module does not know, kept whole and ignored for context.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownEntry {
    pub type_name: String,
    /// Every field but `type`, `id`, `parentId` and `timestamp`, in file order.
    pub fields: Map<String, Value>,
}

/// The type-specific part of an entry.
///
/// The large kinds are boxed: nearly every entry of a long session is a message, and an
/// enum is as large as its largest variant, so unboxed they would add a few hundred bytes to
/// each of those.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    Message(MessageEntry),
    ModelChange(ModelChange),
    ThinkingLevelChange(ThinkingLevelChange),
    Compaction(Box<Compaction>),
    BranchSummary(Box<BranchSummary>),
    Custom(Box<CustomEntry>),
    CustomMessage(Box<CustomMessageEntry>),
    Label(LabelEntry),
    SessionInfo(SessionInfo),
    ContextEdit(Box<ContextEdit>),
    Usage(Box<UsageEntry>),
    Unknown(UnknownEntry),
}

impl EntryKind {
    /// The `type` string written for this entry.
    pub fn type_name(&self) -> &str {
        match self {
            EntryKind::Message(_) => "message",
            EntryKind::ModelChange(_) => "model_change",
            EntryKind::ThinkingLevelChange(_) => "thinking_level_change",
            EntryKind::Compaction(_) => "compaction",
            EntryKind::BranchSummary(_) => "branch_summary",
            EntryKind::Custom(_) => "custom",
            EntryKind::CustomMessage(_) => "custom_message",
            EntryKind::Label(_) => "label",
            EntryKind::SessionInfo(_) => "session_info",
            EntryKind::ContextEdit(_) => "context_edit",
            EntryKind::Usage(_) => "usage",
            EntryKind::Unknown(u) => &u.type_name,
        }
    }
}

/// One line of the tree: `{type, id, parentId, timestamp, …}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// 8 hex characters (a full UUID after 100 collisions, as in pi).
    pub id: String,
    pub parent_id: Option<String>,
    /// ISO 8601 with milliseconds.
    pub timestamp: String,
    pub kind: EntryKind,
    /// The line as read, kept only when re-serializing would not reproduce it (then
    /// `kind` may be a lossy typed reading of it, used for context only).
    pub(crate) source: Option<Box<str>>,
}

/// Base fields first, as pi's object literals have them.
#[derive(Serialize)]
struct WireBaseFirst<'a, B: Serialize> {
    #[serde(rename = "type")]
    ty: &'a str,
    id: &'a str,
    #[serde(rename = "parentId")]
    parent_id: &'a Option<String>,
    timestamp: &'a str,
    #[serde(flatten)]
    body: &'a B,
}

/// pi's `appendCustomEntry`/`appendCustomMessageEntry` list the payload before the base
/// fields: `{type, customType, …, id, parentId, timestamp}`.
#[derive(Serialize)]
struct WireBaseLast<'a, B: Serialize> {
    #[serde(rename = "type")]
    ty: &'a str,
    #[serde(flatten)]
    body: &'a B,
    id: &'a str,
    #[serde(rename = "parentId")]
    parent_id: &'a Option<String>,
    timestamp: &'a str,
}

impl Entry {
    /// Gives the entry another parent; a line kept as read keeps its bytes but for that
    /// field.
    pub(crate) fn reparent(&mut self, parent: Option<String>) {
        if let Some(line) = &self.source {
            self.source = serde_json::from_str::<Value>(line).ok().and_then(|mut v| {
                let obj = v.as_object_mut()?;
                obj.insert(
                    "parentId".into(),
                    parent.clone().map_or(Value::Null, Value::from),
                );
                serde_json::to_string(&v).ok().map(String::into_boxed_str)
            });
        }
        self.parent_id = parent;
    }

    /// A new entry (no retained source line).
    pub fn new(id: String, parent_id: Option<String>, timestamp: String, kind: EntryKind) -> Self {
        Entry {
            id,
            parent_id,
            timestamp,
            kind,
            source: None,
        }
    }

    pub fn type_name(&self) -> &str {
        self.kind.type_name()
    }

    /// The message payload, for `message` entries.
    pub fn message(&self) -> Option<&AgentMessage> {
        match &self.kind {
            EntryKind::Message(m) => Some(&m.message),
            _ => None,
        }
    }

    /// The entry's timestamp in Unix milliseconds (0 when unparseable; pi would get NaN).
    pub fn timestamp_ms(&self) -> i64 {
        iso_to_ms(&self.timestamp)
    }

    /// Whether this entry was kept as its source line because re-serializing differs.
    pub fn keeps_source(&self) -> bool {
        self.source.is_some()
    }

    /// The entry as one JSON line (no newline): the line read when it was kept, otherwise
    /// pi's serialization.
    pub fn to_line(&self) -> String {
        match &self.source {
            Some(s) => s.to_string(),
            None => self.serialize_typed(),
        }
    }

    /// pi's serialization of the typed form, ignoring any retained source line.
    pub(crate) fn serialize_typed(&self) -> String {
        serde_json::to_string(&TypedForm(self)).unwrap_or_default()
    }

    /// Whether the typed form serializes to exactly `line`. Compares while serializing,
    /// without building the string: the loader asks this for every line, and a temporary
    /// string per line fragments the heap enough to double a large session's footprint.
    pub(crate) fn serializes_to(&self, line: &str) -> bool {
        let mut cmp = CompareWriter {
            rest: line.as_bytes(),
        };
        serde_json::to_writer(&mut cmp, &TypedForm(self)).is_ok() && cmp.rest.is_empty()
    }
}

/// A writer that succeeds only while what is written matches `rest`.
struct CompareWriter<'a> {
    rest: &'a [u8],
}

impl std::io::Write for CompareWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.rest.strip_prefix(buf) {
            Some(rest) => {
                self.rest = rest;
                Ok(buf.len())
            }
            None => Err(std::io::Error::other("differs")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The entry's typed serialization, ignoring a retained source line.
struct TypedForm<'a>(&'a Entry);

impl Serialize for Entry {
    /// The retained source line verbatim when there is one (so RPC `get_entries` and
    /// `get_tree` show pi's bytes), else the typed form.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(src) = &self.source {
            if let Ok(raw) = serde_json::value::RawValue::from_string(src.trim().to_string()) {
                return raw.serialize(s);
            }
        }
        TypedForm(self).serialize(s)
    }
}

impl Serialize for TypedForm<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = self.0;
        let ty = e.type_name();
        let (id, parent_id, timestamp) = (&e.id, &e.parent_id, &e.timestamp);
        macro_rules! first {
            ($b:expr) => {
                WireBaseFirst {
                    ty,
                    id,
                    parent_id,
                    timestamp,
                    body: $b,
                }
                .serialize(s)
            };
        }
        macro_rules! last {
            ($b:expr) => {
                WireBaseLast {
                    ty,
                    id,
                    parent_id,
                    timestamp,
                    body: $b,
                }
                .serialize(s)
            };
        }
        match &e.kind {
            EntryKind::Message(b) => first!(b),
            EntryKind::ModelChange(b) => first!(b),
            EntryKind::ThinkingLevelChange(b) => first!(b),
            EntryKind::Compaction(b) => first!(b),
            EntryKind::BranchSummary(b) => first!(b),
            EntryKind::Custom(b) => last!(b),
            EntryKind::CustomMessage(b) => last!(b),
            EntryKind::Label(b) => first!(b),
            EntryKind::SessionInfo(b) => first!(b),
            EntryKind::ContextEdit(b) => first!(b),
            EntryKind::Usage(b) => first!(b),
            EntryKind::Unknown(u) => first!(&u.fields),
        }
    }
}

/// Why a parsed line could not become an entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EntryParseError {
    /// Not an object, or `type` missing or not a string.
    NotAnEntry,
    /// `id` missing or not a string (v2+).
    MissingId,
    /// `parentId` or `timestamp` of the wrong JSON type.
    BadBase(&'static str),
}

/// How to read a line's base fields and message payload.
pub(crate) struct ParseOptions<'a> {
    /// v1 lines have no `id`/`parentId`: take these instead.
    pub assigned: Option<(String, Option<String>)>,
    /// Warnings for known types whose body did not fit, kept as unknown.
    pub on_shape_error: &'a mut dyn FnMut(String),
}

impl Entry {
    /// Builds an entry from a parsed line. Known types whose body does not fit our structs
    /// are kept as [`EntryKind::Unknown`] (so nothing is lost) and reported.
    pub(crate) fn from_object(
        mut map: Map<String, Value>,
        opts: ParseOptions<'_>,
    ) -> Result<Entry, EntryParseError> {
        let ty = match map.shift_remove("type") {
            Some(Value::String(s)) => s,
            _ => return Err(EntryParseError::NotAnEntry),
        };
        let (id, parent_id) = match opts.assigned {
            Some(pair) => {
                map.shift_remove("id");
                map.shift_remove("parentId");
                pair
            }
            None => {
                let id = match map.shift_remove("id") {
                    Some(Value::String(s)) => s,
                    _ => return Err(EntryParseError::MissingId),
                };
                let parent = match map.shift_remove("parentId") {
                    Some(Value::String(s)) => Some(s),
                    Some(Value::Null) | None => None,
                    Some(_) => return Err(EntryParseError::BadBase("parentId")),
                };
                (id, parent)
            }
        };
        let timestamp = match map.shift_remove("timestamp") {
            Some(Value::String(s)) => s,
            None => String::new(),
            Some(_) => return Err(EntryParseError::BadBase("timestamp")),
        };
        let kind = parse_kind(ty, map, opts.on_shape_error);
        Ok(Entry {
            id,
            parent_id,
            timestamp,
            kind,
            source: None,
        })
    }
}

fn parse_kind(
    ty: String,
    mut map: Map<String, Value>,
    on_shape_error: &mut dyn FnMut(String),
) -> EntryKind {
    fn body<T: for<'de> Deserialize<'de>>(
        map: &mut Map<String, Value>,
    ) -> Result<T, serde_json::Error> {
        // Deserializing by reference clones the strings, but keeps the map for the
        // unknown-entry fallback; messages (the bulk of a file) take the owned path above.
        let value = Value::Object(std::mem::take(map));
        let result = T::deserialize(&value);
        if let Value::Object(m) = value {
            *map = m;
        }
        result
    }
    let parsed: Result<EntryKind, serde_json::Error> = match ty.as_str() {
        "message" => match map.shift_remove("message") {
            // Raw here; the loader tries the typed form and keeps it only when it
            // reproduces the line exactly.
            Some(v) => {
                // The base fields were taken out; an emptied map still holds its table, which
                // over a large session adds up, so only a map with real extras is kept.
                if map.is_empty() {
                    map = Map::new();
                }
                return EntryKind::Message(MessageEntry {
                    message: AgentMessage::Raw(v),
                    extra: map,
                });
            }
            None => Err(serde::de::Error::missing_field("message")),
        },
        "model_change" => body(&mut map).map(EntryKind::ModelChange),
        "thinking_level_change" => body(&mut map).map(EntryKind::ThinkingLevelChange),
        "compaction" => body(&mut map).map(|b| EntryKind::Compaction(Box::new(b))),
        "branch_summary" => body(&mut map).map(|b| EntryKind::BranchSummary(Box::new(b))),
        "custom" => body(&mut map).map(|b| EntryKind::Custom(Box::new(b))),
        "custom_message" => body(&mut map).map(|b| EntryKind::CustomMessage(Box::new(b))),
        "label" => body(&mut map).map(EntryKind::Label),
        "session_info" => body(&mut map).map(EntryKind::SessionInfo),
        "context_edit" => body(&mut map).map(|b| EntryKind::ContextEdit(Box::new(b))),
        "usage" => body(&mut map).map(|b| EntryKind::Usage(Box::new(b))),
        _ => {
            return EntryKind::Unknown(UnknownEntry {
                type_name: ty,
                fields: map,
            })
        }
    };
    match parsed {
        Ok(kind) => kind,
        Err(e) => {
            on_shape_error(format!("{ty} entry kept but ignored: {e}"));
            EntryKind::Unknown(UnknownEntry {
                type_name: ty,
                fields: map,
            })
        }
    }
}

/// A fresh entry id: the first 8 hex characters of a random UUID, retried on collision, as
/// pi's `generateId` does (a full UUID after 100 collisions).
pub fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
        if !taken(&id) {
            return id;
        }
    }
    uuid::Uuid::new_v4().to_string()
}

/// Unix milliseconds of an ISO 8601 timestamp; 0 when it does not parse.
pub fn iso_to_ms(s: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.timestamp_millis())
        .unwrap_or(0)
}

/// Now as `Date.toISOString()` writes it: `2024-12-03T14:00:00.000Z`.
pub fn now_iso() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Entry {
        let Value::Object(map) = serde_json::from_str(line).unwrap() else {
            panic!("not an object")
        };
        let mut warn = |_w: String| {};
        Entry::from_object(
            map,
            ParseOptions {
                assigned: None,
                on_shape_error: &mut warn,
            },
        )
        .unwrap()
    }

    #[test]
    fn header_serializes_in_pi_order_and_omits_parent() {
        let h = Header::new("u".into(), "t".into(), "/p".into(), None);
        assert_eq!(
            h.to_line(),
            r#"{"type":"session","version":3,"id":"u","timestamp":"t","cwd":"/p"}"#
        );
        let h = Header::new("u".into(), "t".into(), "/p".into(), Some("/f".into()));
        assert!(h
            .to_line()
            .ends_with(r#","cwd":"/p","parentSession":"/f"}"#));
    }

    #[test]
    fn serializes_to_compares_exactly() {
        let line = r#"{"type":"session_info","id":"a","parentId":null,"timestamp":"t","name":"n"}"#;
        let e = parse(line);
        assert!(e.serializes_to(line));
        assert!(!e.serializes_to(&line[..line.len() - 1]));
        assert!(!e.serializes_to(&format!("{line} ")));
    }

    #[test]
    fn custom_entries_put_base_fields_last_like_pi() {
        let line = r#"{"type":"custom","customType":"x","data":{"n":1},"id":"a1b2c3d4","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z"}"#;
        let e = parse(line);
        assert!(matches!(e.kind, EntryKind::Custom(_)));
        assert_eq!(e.serialize_typed(), line);
    }

    #[test]
    fn unknown_fields_survive_in_extra() {
        let line = r#"{"type":"compaction","id":"a","parentId":"b","timestamp":"t","summary":"s","firstKeptEntryId":"c","tokensBefore":5,"futureField":{"x":1}}"#;
        let e = parse(line);
        let EntryKind::Compaction(c) = &e.kind else {
            panic!()
        };
        assert_eq!(c.extra["futureField"]["x"], 1);
        assert_eq!(e.serialize_typed(), line);
    }

    #[test]
    fn a_known_type_with_a_bad_shape_is_kept_as_unknown() {
        let line =
            r#"{"type":"model_change","id":"a","parentId":null,"timestamp":"t","provider":5}"#;
        let Value::Object(map) = serde_json::from_str(line).unwrap() else {
            panic!()
        };
        let mut warnings = Vec::new();
        let mut warn = |w: String| warnings.push(w);
        let e = Entry::from_object(
            map,
            ParseOptions {
                assigned: None,
                on_shape_error: &mut warn,
            },
        )
        .unwrap();
        assert!(matches!(e.kind, EntryKind::Unknown(_)));
        assert_eq!(e.serialize_typed(), line);
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn raw_messages_convert_leniently() {
        let m = AgentMessage::Raw(serde_json::json!({
            "role": "assistant", "content": null, "api": "a", "provider": "p", "model": "m",
            "usage": {"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,
                      "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},
            "stopReason": "stop", "timestamp": 5, "responseId": "r"
        }));
        let Some(Message::Assistant(a)) = m.to_message().as_deref().cloned() else {
            panic!()
        };
        assert!(a.content.is_empty());
        assert_eq!(m.role(), "assistant");
        let b = AgentMessage::Raw(serde_json::json!({"role":"bashExecution","command":"ls"}));
        assert!(b.to_message().is_none());
    }

    #[test]
    fn entry_ids_are_8_hex_and_avoid_taken_ones() {
        let id = new_entry_id(|_| false);
        assert_eq!(id.len(), 8);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        // Everything taken: the full-UUID fallback.
        assert_eq!(new_entry_id(|_| true).len(), 36);
    }

    #[test]
    fn iso_timestamps_round_trip_to_ms() {
        assert_eq!(iso_to_ms("1970-01-01T00:00:01.500Z"), 1500);
        assert_eq!(iso_to_ms("nonsense"), 0);
        assert_eq!(now_iso().len(), 24);
    }

    #[test]
    fn a_message_entry_is_not_padded_to_the_rare_kinds() {
        // Messages are nearly every entry of a long session; the enum must not grow them.
        assert!(
            std::mem::size_of::<EntryKind>() <= std::mem::size_of::<MessageEntry>() + 8,
            "EntryKind is {} bytes, a message entry {}",
            std::mem::size_of::<EntryKind>(),
            std::mem::size_of::<MessageEntry>()
        );
    }
}
