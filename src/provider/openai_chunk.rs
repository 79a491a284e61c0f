//! One Chat Completions stream chunk, read as borrowed views of the event's text.
//!
//! Every model reply arrives as a handful of these, and reading each into a `serde_json::Value`
//! (a map per object, every key hashed, every string copied) cost more than the rest of the
//! parse. Here only the fields pi reads are located, as raw JSON slices, and each is decoded
//! when asked for, lazily and leniently: a field of an unexpected type reads as absent, as a
//! `Value` lookup would, never as an error. The rare polymorphic parts (an error object, usage,
//! tool-call fragments) are still decoded into `Value`s, but only when present.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// The top level of a chunk.
#[derive(Debug, Default, Deserialize)]
pub struct Chunk<'a> {
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    choices: Option<&'a RawValue>,
}

/// The fields of `choices[0]` pi reads.
#[derive(Debug, Default, Deserialize)]
pub struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<&'a RawValue>,
    #[serde(borrow, default)]
    finish_reason: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
}

/// The fields of a choice's `delta` pi reads.
#[derive(Debug, Default, Deserialize)]
pub struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    reasoning_content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    reasoning: Option<&'a RawValue>,
    #[serde(borrow, default)]
    reasoning_text: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_calls: Option<&'a RawValue>,
}

impl<'a> Chunk<'a> {
    /// Locates the fields of `data`. JSON that is not an object has none of them (it is still
    /// checked to be JSON).
    pub fn parse(data: &'a str) -> Result<Self, serde_json::Error> {
        if data.starts_with('{') {
            serde_json::from_str(data)
        } else {
            serde_json::from_str::<IgnoredAny>(data).map(|_| Chunk::default())
        }
    }

    /// The in-stream error object, unless absent or `null`.
    pub fn error(&self) -> Option<Value> {
        self.error.and_then(value).filter(|e| !e.is_null())
    }

    pub fn id(&self) -> Option<Cow<'a, str>> {
        self.id.and_then(string)
    }

    /// Top-level usage, when it is an object.
    pub fn usage(&self) -> Option<Value> {
        self.usage.and_then(object)
    }

    /// `choices[0]`, when `choices` is an array with a first element that is an object.
    pub fn first_choice(&self) -> Option<Choice<'a>> {
        let raw = self.choices?;
        let mut de = serde_json::Deserializer::from_str(raw.get());
        de.deserialize_seq(FirstElement).ok().flatten()
    }
}

impl<'a> Choice<'a> {
    pub fn delta(&self) -> Option<Delta<'a>> {
        serde_json::from_str(self.delta?.get()).ok()
    }

    pub fn finish_reason(&self) -> Option<Cow<'a, str>> {
        self.finish_reason.and_then(string)
    }

    /// Usage inside the choice (Moonshot), when it is an object.
    pub fn usage(&self) -> Option<Value> {
        self.usage.and_then(object)
    }
}

impl<'a> Delta<'a> {
    pub fn content(&self) -> Option<Cow<'a, str>> {
        self.content.and_then(string)
    }

    /// Reasoning text under the first of the known field names that holds a non-empty string.
    pub fn reasoning(&self) -> Option<Cow<'a, str>> {
        [self.reasoning_content, self.reasoning, self.reasoning_text]
            .into_iter()
            .flatten()
            .filter_map(string)
            .find(|s| !s.is_empty())
    }

    /// The tool-call fragments, when `tool_calls` is an array.
    pub fn tool_calls(&self) -> Vec<Value> {
        match self.tool_calls.and_then(value) {
            Some(Value::Array(calls)) => calls,
            _ => Vec::new(),
        }
    }
}

/// A JSON string's text: borrowed when it has no escapes; `None` for any other type.
fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    match serde_json::from_str::<&str>(text) {
        Ok(s) => Some(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(text).ok().map(Cow::Owned),
    }
}

fn value(raw: &RawValue) -> Option<Value> {
    serde_json::from_str(raw.get()).ok()
}

fn object(raw: &RawValue) -> Option<Value> {
    value(raw).filter(Value::is_object)
}

/// Reads the first element of an array as a [`Choice`] and skips the rest. Anything else, or
/// a first element that is not an object, is `None`.
struct FirstElement;

impl<'de> Visitor<'de> for FirstElement {
    type Value = Option<Choice<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of choices")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let first = match seq.next_element::<&'de RawValue>()? {
            Some(raw) if raw.get().starts_with('{') => serde_json::from_str(raw.get()).ok(),
            _ => None,
        };
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_a_value_lookup_would() {
        let data = r#"{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,
            "delta":{"content":"a\nb","reasoning":"","reasoning_text":"why",
            "tool_calls":[{"index":0}]},"finish_reason":null}],"usage":null}"#;
        let chunk = Chunk::parse(data).unwrap();
        assert_eq!(chunk.id().as_deref(), Some("c1"));
        assert!(chunk.error().is_none());
        assert!(chunk.usage().is_none());
        let choice = chunk.first_choice().unwrap();
        assert!(choice.finish_reason().is_none());
        let delta = choice.delta().unwrap();
        assert_eq!(delta.content().as_deref(), Some("a\nb"));
        // An empty reasoning field gives way to the next name, as before.
        assert_eq!(delta.reasoning().as_deref(), Some("why"));
        assert_eq!(delta.tool_calls().len(), 1);
    }

    #[test]
    fn fields_of_another_type_read_as_absent() {
        let chunk = Chunk::parse(
            r#"{"id":7,"choices":"none","usage":[1],"error":null,"extra":{"deep":[1,2]}}"#,
        )
        .unwrap();
        assert!(chunk.id().is_none());
        assert!(chunk.first_choice().is_none());
        assert!(chunk.usage().is_none());
        assert!(chunk.error().is_none());
        let chunk = Chunk::parse(r#"{"choices":[5,{"delta":{}}]}"#).unwrap();
        assert!(chunk.first_choice().is_none());
        let chunk = Chunk::parse(
            r#"{"choices":[{"delta":{"content":["x"],"tool_calls":{}},"finish_reason":"stop"}]}"#,
        )
        .unwrap();
        let choice = chunk.first_choice().unwrap();
        assert_eq!(choice.finish_reason().as_deref(), Some("stop"));
        let delta = choice.delta().unwrap();
        assert!(delta.content().is_none());
        assert!(delta.tool_calls().is_empty());
    }

    #[test]
    fn errors_and_usage_are_decoded_when_present() {
        let chunk = Chunk::parse(
            r#"{"error":{"message":"slow down","code":429},"usage":{"prompt_tokens":3}}"#,
        )
        .unwrap();
        assert_eq!(chunk.error().unwrap()["code"], 429);
        assert_eq!(chunk.usage().unwrap()["prompt_tokens"], 3);
    }

    #[test]
    fn json_that_is_not_an_object_has_no_fields_and_broken_json_is_an_error() {
        let chunk = Chunk::parse("[1]").unwrap();
        assert!(chunk.error().is_none() && chunk.first_choice().is_none());
        assert!(Chunk::parse("{").is_err());
        assert!(Chunk::parse("[1").is_err());
    }
}
