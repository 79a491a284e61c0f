//! What one session line says about tool calls, read as it streams past ([`super::scan`]): the
//! calls of an assistant message, or what became of one call (a tool result). What a block
//! names as its `id`, `name` and `arguments` is kept (a call's are reported); nothing else of
//! the line is — a tool result's text only as far as "Blocked".
//!
//! The line is judged as the session loader judges it (`session::load`), so replay sees the
//! entries pi would load: a JSON object with a string `type` other than `session`, a string
//! `id` and a string or null `parentId` (from format v2 on; v1 entries get theirs assigned), a
//! string `timestamp` if any, and for a `message` entry its `message`. A key given twice counts
//! with its last value, as in the loader.

use std::io::Read;

use serde_json::Value;

use super::calls::Recorded;
use super::scan::{Capped, Kind, ScanError, Scanner};

/// The longest `toolCallId` a result is matched by (ids are a few dozen bytes).
const MAX_RESULT_ID: usize = 64 * 1024;

/// A tool call as the model made it: its id, tool name and arguments.
pub type Call = (String, String, Value);

/// What a line says.
#[derive(Debug, Default, PartialEq)]
pub enum Said {
    /// Nothing about tool calls (another entry, another role, a blank or damaged line).
    #[default]
    Nothing,
    /// An assistant message's calls, in order.
    Calls(Vec<Call>),
    /// The result recorded for the call `id`.
    Result { id: String, recorded: Recorded },
}

/// A field's JSON type, as far as the loader checks it.
#[derive(Debug, Default, PartialEq)]
enum Field {
    #[default]
    Absent,
    Str(Capped),
    Null,
    Other,
}

impl Field {
    fn read<R: Read>(s: &mut Scanner<R>, cap: usize) -> Result<Field, ScanError> {
        match s.kind()? {
            Kind::String => s.string(cap).map(Field::Str),
            Kind::Literal => match s.bool()? {
                None => Ok(Field::Null),
                Some(_) => Ok(Field::Other),
            },
            _ => s.skip().map(|_| Field::Other),
        }
    }

    fn is_str(&self) -> bool {
        matches!(self, Field::Str(_))
    }
}

/// The parts of a `message` that matter here.
#[derive(Debug, Default)]
struct Message {
    role: Option<Capped>,
    calls: Vec<Call>,
    /// The text of the content starts with "Blocked" (for a tool result).
    blocked: bool,
    tool_call_id: Option<Capped>,
    is_error: bool,
}

/// Reads one line (the scanner at its start) and says what it tells about tool calls. A line
/// that is not JSON is [`ScanError::Syntax`]; the caller skips to the next line either way.
pub fn read<R: Read>(s: &mut Scanner<R>, version: u32) -> Result<Said, ScanError> {
    if s.rest_is_blank()? {
        return Ok(Said::Nothing);
    }
    if s.kind()? != Kind::Object {
        s.skip()?;
        return end(s, Said::Nothing);
    }
    let (mut ty, mut id, mut parent, mut timestamp) = Default::default();
    let mut message: Option<Message> = None;
    s.object(|s, key| {
        match key.text.as_str() {
            "type" if key.whole => ty = Field::read(s, 16)?,
            "id" if key.whole => id = Field::read(s, 0)?,
            "parentId" if key.whole => parent = Field::read(s, 0)?,
            "timestamp" if key.whole => timestamp = Field::read(s, 0)?,
            "message" if key.whole => message = Some(read_message(s)?),
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let is_entry = match &ty {
        Field::Str(t) => !t.is("session"),
        _ => false,
    } && (version < 2 || (id.is_str() && !matches!(parent, Field::Other)))
        && !matches!(timestamp, Field::Other | Field::Null);
    let said = match (ty, message) {
        (Field::Str(t), Some(m)) if is_entry && t.is("message") => said_by(m),
        _ => Said::Nothing,
    };
    end(s, said)
}

/// A line holds one value: anything after it makes the line damaged.
fn end<R: Read>(s: &mut Scanner<R>, said: Said) -> Result<Said, ScanError> {
    if s.rest_is_blank()? {
        Ok(said)
    } else {
        Err(ScanError::Syntax("more than one value on a line"))
    }
}

fn said_by(m: Message) -> Said {
    let role = m.role.as_ref();
    if role.is_some_and(|r| r.is("assistant")) {
        return Said::Calls(m.calls);
    }
    match (role, m.tool_call_id) {
        (Some(r), Some(id)) if r.is("toolResult") && id.whole => {
            let recorded = if !m.is_error {
                Recorded::Ok
            } else if m.blocked {
                Recorded::Blocked
            } else {
                Recorded::Error
            };
            Said::Result {
                id: id.text,
                recorded,
            }
        }
        _ => Said::Nothing,
    }
}

fn read_message<R: Read>(s: &mut Scanner<R>) -> Result<Message, ScanError> {
    let mut m = Message::default();
    if s.kind()? != Kind::Object {
        s.skip()?;
        return Ok(m);
    }
    s.object(|s, key| {
        match key.text.as_str() {
            "role" if key.whole => {
                m.role = match Field::read(s, 16)? {
                    Field::Str(r) => Some(r),
                    _ => None,
                }
            }
            "content" if key.whole => (m.calls, m.blocked) = read_content(s)?,
            "toolCallId" if key.whole => {
                m.tool_call_id = match Field::read(s, MAX_RESULT_ID)? {
                    Field::Str(id) => Some(id),
                    _ => None,
                }
            }
            "isError" if key.whole => m.is_error = s.bool()? == Some(true),
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(m)
}

/// A message's content: its tool calls, and whether its text starts with "Blocked" (the text
/// blocks joined by newlines, as `session::entry::content_text` reads it: so the first text).
fn read_content<R: Read>(s: &mut Scanner<R>) -> Result<(Vec<Call>, bool), ScanError> {
    let blocked = |c: &Capped| c.text.starts_with("Blocked");
    match s.kind()? {
        Kind::String => Ok((Vec::new(), blocked(&s.string(7)?))),
        Kind::Array => {
            let (mut calls, mut first_text) = (Vec::new(), None);
            s.array(|s| {
                let b = read_block(s)?;
                match b.ty.as_ref() {
                    Some(t) if t.is("toolCall") => calls.extend(b.call),
                    Some(t) if t.is("text") && first_text.is_none() => first_text = b.text,
                    _ => {}
                }
                Ok(())
            })?;
            Ok((calls, first_text.as_ref().is_some_and(blocked)))
        }
        _ => s.skip().map(|_| (Vec::new(), false)),
    }
}

/// One content block: its type, its call (for a `toolCall`) and the start of its text.
#[derive(Default)]
struct Block {
    ty: Option<Capped>,
    call: Option<Call>,
    text: Option<Capped>,
}

fn read_block<R: Read>(s: &mut Scanner<R>) -> Result<Block, ScanError> {
    let mut b = Block::default();
    if s.kind()? != Kind::Object {
        s.skip()?;
        return Ok(b);
    }
    let (mut id, mut name, mut arguments) = (None, None, None);
    s.object(|s, key| {
        match key.text.as_str() {
            "type" if key.whole => {
                b.ty = match Field::read(s, 16)? {
                    Field::Str(t) => Some(t),
                    _ => None,
                }
            }
            "text" if key.whole => {
                b.text = match Field::read(s, 7)? {
                    Field::Str(t) => Some(t),
                    _ => None,
                }
            }
            "id" | "name" if key.whole => {
                let got = match Field::read(s, usize::MAX)? {
                    Field::Str(v) => Some(v.text),
                    _ => None,
                };
                if key.text == "id" {
                    id = got;
                } else {
                    name = got;
                }
            }
            "arguments" if key.whole => arguments = Some(s.value()?),
            _ => s.skip()?,
        }
        Ok(())
    })?;
    if let (Some(id), Some(name)) = (id, name) {
        b.call = Some((id, name, arguments_of(arguments)));
    }
    Ok(b)
}

/// A call's arguments as replay passes them on: arguments stored as a JSON string (as some
/// providers send them) are parsed; anything unparsable is passed on as it is.
fn arguments_of(arguments: Option<Value>) -> Value {
    match arguments {
        Some(Value::String(s)) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        Some(v) => v,
        None => Value::Object(Default::default()),
    }
}

#[cfg(test)]
#[path = "line_tests.rs"]
mod tests;
