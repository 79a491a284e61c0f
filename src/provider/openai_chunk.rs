//! One Chat Completions stream chunk: the fields pi reads, decoded in one pass.
//!
//! Every model reply arrives as a handful of these, and reading each into a `serde_json::Value`
//! (a map per object, every key hashed, every string copied) cost more than the rest of the
//! parse. A chunk of the usual shape is read in a single pass into typed fields, its strings
//! borrowed from the event's text ([`fast`]). Anything else — a field of an unexpected type, a
//! key with escapes — is read the lenient way ([`lenient`]): only the fields pi reads are
//! located, as raw JSON slices, and each is decoded on its own, a field of an unexpected type
//! reading as absent, as a `Value` lookup would, never as an error. Both give the same answer
//! for every chunk the fast one accepts.

use std::borrow::Cow;

use serde_json::Value;

/// What pi reads of a chunk.
#[derive(Debug, Default, PartialEq)]
pub struct Chunk<'a> {
    /// The in-stream error object, unless absent or `null`.
    pub error: Option<Value>,
    pub id: Option<Cow<'a, str>>,
    /// Top-level usage, when it is an object.
    pub usage: Option<Value>,
    /// `choices[0]`, when `choices` is an array whose first element is an object.
    pub choice: Option<Choice<'a>>,
}

/// What pi reads of `choices[0]`.
#[derive(Debug, Default, PartialEq)]
pub struct Choice<'a> {
    pub delta: Option<Delta<'a>>,
    pub finish_reason: Option<Cow<'a, str>>,
    /// Usage inside the choice (Moonshot), when it is an object.
    pub usage: Option<Value>,
}

/// What pi reads of a choice's `delta`.
#[derive(Debug, Default, PartialEq)]
pub struct Delta<'a> {
    pub content: Option<Cow<'a, str>>,
    /// Reasoning text under the first of the known field names that holds a non-empty string.
    pub reasoning: Option<Cow<'a, str>>,
    /// The tool-call fragments, when `tool_calls` is an array.
    pub tool_calls: Vec<Value>,
}

impl<'a> Chunk<'a> {
    /// Reads `data`. JSON that is not an object has none of the fields (it is still checked to
    /// be JSON); text that is not JSON is an error.
    pub fn parse(data: &'a str) -> Result<Self, serde_json::Error> {
        if data.starts_with('{') {
            if let Ok(chunk) = fast::parse(data) {
                return Ok(chunk);
            }
        }
        lenient::parse(data)
    }
}

/// The first of `candidates` that is a non-empty string.
fn first_non_empty<'a>(candidates: [Option<Cow<'a, str>>; 3]) -> Option<Cow<'a, str>> {
    candidates.into_iter().flatten().find(|s| !s.is_empty())
}

fn into_array(v: Option<Value>) -> Vec<Value> {
    match v {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    }
}

/// The single pass: objects of the expected shape only. Anything it does not expect (a
/// string field holding a number, a choice that is not an object, an escaped key, a repeated
/// field) fails the whole read, and [`lenient`] reads the chunk instead.
mod fast {
    use std::borrow::Cow;
    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde::Deserialize;
    use serde_json::Value;

    use super::{first_non_empty, into_array, Choice, Chunk, Delta};

    pub(super) fn parse(data: &str) -> Result<Chunk<'_>, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(data);
        let chunk = Object::<Chunk<'_>>::deserialize(&mut de)?.0;
        de.end()?;
        Ok(chunk)
    }

    /// A JSON string, borrowed from the text when it has no escapes.
    struct Text<'a>(Cow<'a, str>);

    impl<'de> Deserialize<'de> for Text<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Text<'de>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a string")
                }
                fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
                    Ok(Text(Cow::Borrowed(s)))
                }
                fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
                    Ok(Text(Cow::Owned(s.to_string())))
                }
                fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
                    Ok(Text(Cow::Owned(s)))
                }
            }
            d.deserialize_str(V)
        }
    }

    fn text<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Cow<'de, str>>, A::Error> {
        Ok(map.next_value::<Option<Text<'de>>>()?.map(|t| t.0))
    }

    /// Sets `slot` once; a field given twice fails the read (the lenient reader refuses it).
    fn once<T, E: de::Error>(slot: &mut Option<T>, value: T, key: &'static str) -> Result<(), E> {
        if slot.is_some() {
            return Err(E::duplicate_field(key));
        }
        *slot = Some(value);
        Ok(())
    }

    /// What is read from a JSON object's fields, one pass over them.
    trait FromFields<'de>: Sized {
        const WHAT: &'static str;
        fn from_fields<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
    }

    /// `T` read from an object, and only from an object: a derived struct would also take an
    /// array, field by field, which the lenient reader does not.
    struct Object<T>(T);

    impl<'de, T: FromFields<'de>> Deserialize<'de> for Object<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V<T>(PhantomData<T>);
            impl<'de, T: FromFields<'de>> Visitor<'de> for V<T> {
                type Value = Object<T>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str(T::WHAT)
                }
                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                    T::from_fields(map).map(Object)
                }
            }
            d.deserialize_map(V(PhantomData))
        }
    }

    impl<'de> FromFields<'de> for Chunk<'de> {
        const WHAT: &'static str = "a chunk object";
        fn from_fields<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
            let (mut error, mut id, mut usage, mut choices) = (None, None, None, None);
            while let Some(key) = map.next_key::<&'de str>()? {
                match key {
                    "error" => once(&mut error, map.next_value::<Option<Value>>()?, "error")?,
                    "id" => once(&mut id, text(&mut map)?, "id")?,
                    "usage" => once(&mut usage, map.next_value::<Option<Value>>()?, "usage")?,
                    "choices" => {
                        let first = map.next_value::<Option<FirstChoice<'de>>>()?;
                        once(&mut choices, first.and_then(|f| f.0), "choices")?
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(Chunk {
                error: error.flatten(),
                id: id.flatten(),
                usage: usage.flatten().filter(Value::is_object),
                choice: choices.flatten(),
            })
        }
    }

    /// `choices`: its first element, which must be a choice object; the rest are skipped.
    struct FirstChoice<'a>(Option<Choice<'a>>);

    impl<'de> Deserialize<'de> for FirstChoice<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = FirstChoice<'de>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("an array of choices")
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                    let first = seq.next_element::<Object<Choice<'de>>>()?.map(|c| c.0);
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(FirstChoice(first))
                }
            }
            d.deserialize_seq(V)
        }
    }

    impl<'de> FromFields<'de> for Choice<'de> {
        const WHAT: &'static str = "a choice object";
        fn from_fields<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
            let (mut delta, mut finish, mut usage) = (None, None, None);
            while let Some(key) = map.next_key::<&'de str>()? {
                match key {
                    "delta" => {
                        let d = map.next_value::<Option<Object<Delta<'de>>>>()?;
                        once(&mut delta, d.map(|d| d.0), "delta")?
                    }
                    "finish_reason" => once(&mut finish, text(&mut map)?, "finish_reason")?,
                    "usage" => once(&mut usage, map.next_value::<Option<Value>>()?, "usage")?,
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(Choice {
                delta: delta.flatten(),
                finish_reason: finish.flatten(),
                usage: usage.flatten().filter(Value::is_object),
            })
        }
    }

    impl<'de> FromFields<'de> for Delta<'de> {
        const WHAT: &'static str = "a delta object";
        fn from_fields<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
            let mut content = None;
            let mut reasoning: [Option<Option<Cow<'de, str>>>; 3] = [None, None, None];
            let mut calls = None;
            while let Some(key) = map.next_key::<&'de str>()? {
                match key {
                    "content" => once(&mut content, text(&mut map)?, "content")?,
                    "reasoning_content" => {
                        once(&mut reasoning[0], text(&mut map)?, "reasoning_content")?
                    }
                    "reasoning" => once(&mut reasoning[1], text(&mut map)?, "reasoning")?,
                    "reasoning_text" => once(&mut reasoning[2], text(&mut map)?, "reasoning_text")?,
                    "tool_calls" => {
                        once(&mut calls, map.next_value::<Option<Value>>()?, "tool_calls")?
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(Delta {
                content: content.flatten(),
                reasoning: first_non_empty(reasoning.map(Option::flatten)),
                tool_calls: into_array(calls.flatten()),
            })
        }
    }
}

/// Any valid JSON: only the fields pi reads are located, as raw JSON slices, and each is
/// decoded on its own; a field of an unexpected type reads as absent.
mod lenient {
    use std::borrow::Cow;
    use std::fmt;

    use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
    use serde::Deserialize;
    use serde_json::value::RawValue;
    use serde_json::Value;

    use super::{first_non_empty, into_array};

    #[derive(Default, Deserialize)]
    struct Chunk<'a> {
        #[serde(borrow, default)]
        error: Option<&'a RawValue>,
        #[serde(borrow, default)]
        id: Option<&'a RawValue>,
        #[serde(borrow, default)]
        usage: Option<&'a RawValue>,
        #[serde(borrow, default)]
        choices: Option<&'a RawValue>,
    }

    #[derive(Default, Deserialize)]
    struct Choice<'a> {
        #[serde(borrow, default)]
        delta: Option<&'a RawValue>,
        #[serde(borrow, default)]
        finish_reason: Option<&'a RawValue>,
        #[serde(borrow, default)]
        usage: Option<&'a RawValue>,
    }

    #[derive(Default, Deserialize)]
    struct Delta<'a> {
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

    pub(super) fn parse(data: &str) -> Result<super::Chunk<'_>, serde_json::Error> {
        let raw: Chunk<'_> = if data.starts_with('{') {
            serde_json::from_str(data)?
        } else {
            serde_json::from_str::<IgnoredAny>(data)?;
            Chunk::default()
        };
        Ok(super::Chunk {
            error: raw.error.and_then(value).filter(|e| !e.is_null()),
            id: raw.id.and_then(string),
            usage: raw.usage.and_then(object),
            choice: raw.choices.and_then(first_choice).map(|c| super::Choice {
                delta: c
                    .delta
                    .and_then(|d| serde_json::from_str::<Delta<'_>>(d.get()).ok())
                    .map(|d| super::Delta {
                        content: d.content.and_then(string),
                        reasoning: first_non_empty(
                            [d.reasoning_content, d.reasoning, d.reasoning_text]
                                .map(|r| r.and_then(string)),
                        ),
                        tool_calls: into_array(d.tool_calls.and_then(value)),
                    }),
                finish_reason: c.finish_reason.and_then(string),
                usage: c.usage.and_then(object),
            }),
        })
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

    /// `choices[0]`, when `choices` is an array with a first element that is an object.
    fn first_choice(raw: &RawValue) -> Option<Choice<'_>> {
        let mut de = serde_json::Deserializer::from_str(raw.get());
        de.deserialize_seq(FirstElement).ok().flatten()
    }

    /// Reads the first element of an array as a [`Choice`] and skips the rest. Anything else,
    /// or a first element that is not an object, is `None`.
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both readers, and that they agree wherever the fast one reads the chunk at all.
    fn both(data: &str) -> Chunk<'_> {
        let lenient = lenient::parse(data).unwrap();
        if let Ok(fast) = fast::parse(data) {
            assert_eq!(fast, lenient, "the two readers disagree on {data}");
        }
        assert_eq!(Chunk::parse(data).unwrap(), lenient);
        lenient
    }

    #[test]
    fn reads_what_a_value_lookup_would() {
        let data = r#"{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,
            "delta":{"content":"a\nb","reasoning":"","reasoning_text":"why",
            "tool_calls":[{"index":0}]},"finish_reason":null}],"usage":null}"#;
        assert!(
            fast::parse(data).is_ok(),
            "the usual shape takes the fast path"
        );
        let chunk = both(data);
        assert_eq!(chunk.id.as_deref(), Some("c1"));
        assert!(chunk.error.is_none());
        assert!(chunk.usage.is_none());
        let choice = chunk.choice.unwrap();
        assert!(choice.finish_reason.is_none());
        let delta = choice.delta.unwrap();
        assert_eq!(delta.content.as_deref(), Some("a\nb"));
        // An empty reasoning field gives way to the next name, as before.
        assert_eq!(delta.reasoning.as_deref(), Some("why"));
        assert_eq!(delta.tool_calls.len(), 1);
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let data =
            r#"{"id":"c1","choices":[{"delta":{"content":"plain"},"finish_reason":"stop"}]}"#;
        let chunk = fast::parse(data).unwrap();
        assert!(matches!(chunk.id, Some(Cow::Borrowed("c1"))));
        let choice = chunk.choice.unwrap();
        assert!(matches!(choice.finish_reason, Some(Cow::Borrowed("stop"))));
        assert!(matches!(
            choice.delta.unwrap().content,
            Some(Cow::Borrowed("plain"))
        ));
    }

    #[test]
    fn fields_of_another_type_read_as_absent() {
        let chunk =
            both(r#"{"id":7,"choices":"none","usage":[1],"error":null,"extra":{"deep":[1,2]}}"#);
        assert!(chunk.id.is_none());
        assert!(chunk.choice.is_none());
        assert!(chunk.usage.is_none());
        assert!(chunk.error.is_none());
        assert!(both(r#"{"choices":[5,{"delta":{}}]}"#).choice.is_none());
        let chunk = both(
            r#"{"choices":[{"delta":{"content":["x"],"tool_calls":{}},"finish_reason":"stop"}]}"#,
        );
        let choice = chunk.choice.unwrap();
        assert_eq!(choice.finish_reason.as_deref(), Some("stop"));
        let delta = choice.delta.unwrap();
        assert!(delta.content.is_none());
        assert!(delta.tool_calls.is_empty());
    }

    #[test]
    fn shapes_only_the_lenient_reader_takes_give_its_answer() {
        for data in [
            // A choice given as an array is not a choice (the fast reader must not read it
            // field by field, as a derived struct would).
            r#"{"choices":[[null,"stop"]]}"#,
            r#"{"choices":[{"delta":["hi"],"finish_reason":"stop"}]}"#,
            r#"{"choices":[{"delta":{"reasoning_content":3,"reasoning":"r"}}]}"#,
            r#"{"choices":[{"finish_reason":1}],"id":"x"}"#,
            r#"{"choices":[null,{"delta":{}}]}"#,
            r#"{"\u0069d":"escaped key","choices":[]}"#,
            r#"{"choices":{},"usage":{"prompt_tokens":1}}"#,
        ] {
            assert!(fast::parse(data).is_err(), "{data}");
            both(data);
        }
        // A field given twice is refused by both.
        let twice = r#"{"id":"a","id":"b"}"#;
        assert!(fast::parse(twice).is_err());
        assert!(Chunk::parse(twice).is_err());
    }

    #[test]
    fn errors_and_usage_are_decoded_when_present() {
        let chunk =
            both(r#"{"error":{"message":"slow down","code":429},"usage":{"prompt_tokens":3}}"#);
        assert_eq!(chunk.error.unwrap()["code"], 429);
        assert_eq!(chunk.usage.unwrap()["prompt_tokens"], 3);
        let chunk = both(r#"{"choices":[{"delta":{},"usage":{"total_tokens":9}}]}"#);
        assert_eq!(chunk.choice.unwrap().usage.unwrap()["total_tokens"], 9);
    }

    #[test]
    fn json_that_is_not_an_object_has_no_fields_and_broken_json_is_an_error() {
        let chunk = Chunk::parse("[1]").unwrap();
        assert!(chunk.error.is_none() && chunk.choice.is_none());
        assert!(Chunk::parse("{").is_err());
        assert!(Chunk::parse("[1").is_err());
        assert!(Chunk::parse(r#"{"id":"a"} x"#).is_err());
    }

    mod props {
        use proptest::prelude::*;
        use proptest::test_runner::Config;
        use serde_json::{json, Map, Value};

        use super::super::{fast, lenient};

        /// The keys pi reads at every level, so generated chunks often look almost right.
        const KEYS: &[&str] = &[
            "id",
            "error",
            "usage",
            "choices",
            "delta",
            "finish_reason",
            "content",
            "reasoning",
            "reasoning_content",
            "reasoning_text",
            "tool_calls",
            "index",
            "x",
        ];

        fn value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i32>().prop_map(|n| json!(n)),
                prop_oneof![Just(String::new()), ".{0,6}"].prop_map(Value::String),
            ];
            leaf.prop_recursive(4, 40, 5, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                    prop::collection::vec((prop::sample::select(KEYS), inner), 0..5).prop_map(
                        |kv| Value::Object(
                            kv.into_iter()
                                .map(|(k, v)| (k.to_string(), v))
                                .collect::<Map<_, _>>()
                        )
                    ),
                ]
            })
        }

        /// A field's value: usually of the type pi expects there, sometimes anything.
        fn field(expected: BoxedStrategy<Value>) -> impl Strategy<Value = Option<Value>> {
            prop_oneof![
                2 => Just(None),
                5 => expected.prop_map(Some),
                1 => Just(Some(Value::Null)),
                1 => value().prop_map(Some),
            ]
        }

        fn text() -> BoxedStrategy<Value> {
            prop_oneof![Just(String::new()), ".{0,6}"]
                .prop_map(Value::String)
                .boxed()
        }

        fn object(fields: Vec<(&'static str, Option<Value>)>) -> Value {
            Value::Object(
                fields
                    .into_iter()
                    .filter_map(|(k, v)| Some((k.to_string(), v?)))
                    .collect::<Map<_, _>>(),
            )
        }

        /// Chunk-shaped objects: the fields at their places, of about the right types.
        fn chunk() -> impl Strategy<Value = Value> {
            let tools = prop::collection::vec(value(), 0..2)
                .prop_map(Value::Array)
                .boxed();
            let delta = (
                field(text()),
                field(text()),
                field(text()),
                field(text()),
                field(tools),
            )
                .prop_map(|(c, rc, r, rt, t)| {
                    object(vec![
                        ("content", c),
                        ("reasoning_content", rc),
                        ("reasoning", r),
                        ("reasoning_text", rt),
                        ("tool_calls", t),
                    ])
                })
                .boxed();
            let usage = Just(json!({"prompt_tokens": 1})).boxed();
            let choice = (field(delta), field(text()), field(usage.clone()))
                .prop_map(|(d, f, u)| {
                    object(vec![("delta", d), ("finish_reason", f), ("usage", u)])
                })
                .boxed();
            let choices = prop::collection::vec(choice, 0..3)
                .prop_map(Value::Array)
                .boxed();
            (
                field(text()),
                field(usage.clone()),
                field(usage),
                field(choices),
            )
                .prop_map(|(id, e, u, c)| {
                    object(vec![("id", id), ("error", e), ("usage", u), ("choices", c)])
                })
        }

        proptest! {
            #![proptest_config(Config { cases: 512, ..Config::default() })]

            #[test]
            fn the_readers_agree_on_chunk_shaped_objects(v in chunk()) {
                let data = v.to_string();
                if let Ok(fast) = fast::parse(&data) {
                    prop_assert_eq!(fast, lenient::parse(&data).unwrap());
                }
            }

            /// Whatever the fast reader accepts, it reads as the lenient one does.
            #[test]
            fn the_fast_reader_agrees_with_the_lenient_one(v in value()) {
                let data = v.to_string();
                if let Ok(fast) = fast::parse(&data) {
                    prop_assert_eq!(fast, lenient::parse(&data).unwrap());
                }
            }
        }
    }
}
