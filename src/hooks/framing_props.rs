//! Property tests for the frame decoder (issue 8: parsers are fuzzed in CI for a bounded
//! time). The reader faces whatever a hook writes to its stdout, so for *any* byte stream,
//! delivered in *any* chunking, it must: never panic; end in exactly one of a clean EOF or a
//! fatal error, after which it yields nothing more; reject an oversized header before reading
//! its payload; and give back exactly the objects that were framed, whatever the chunking.

use proptest::prelude::*;

use crate::test_support::Chunked;
use serde_json::{json, Value};

use super::{parse_frame, FrameError, FrameReader, Incoming};

/// What a reader produced: the messages, then how the stream ended.
#[derive(Debug)]
struct Outcome {
    frames: Vec<Incoming>,
    end: Result<(), String>,
    /// Whether the reader yielded anything after it ended (it must not).
    yielded_after_end: bool,
}

fn read_stream(data: Vec<u8>, chunks: Vec<usize>, max_frame: usize) -> Outcome {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    rt.block_on(async move {
        let mut reader = FrameReader::with_max_frame(Chunked::new(data, chunks), max_frame);
        let mut frames = Vec::new();
        let end = loop {
            match reader.read_message().await {
                Ok(Some(m)) => frames.push(m),
                Ok(None) => break Ok(()),
                Err(e) => break Err(format!("{e:?}")),
            }
        };
        let yielded_after_end = matches!(reader.read_message().await, Ok(Some(_)));
        Outcome {
            frames,
            end,
            yielded_after_end,
        }
    })
}

fn frame(payload: &[u8]) -> Vec<u8> {
    let mut v = u32::try_from(payload.len())
        .expect("small test payload")
        .to_be_bytes()
        .to_vec();
    v.extend_from_slice(payload);
    v
}

/// JSON values up to a small depth: what a hook might put in a message.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[ -~\\PC]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Objects shaped like hook messages, including wrong shapes and unknown types.
fn message_object() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just("reply"),
            Just("call"),
            Just("log"),
            Just("progress"),
            Just("register"),
            Just("bogus"),
        ],
        any::<u32>(),
        json_value(),
    )
        .prop_map(|(ty, id, body)| json!({"type": ty, "id": id, "result": body, "message": "m"}))
}

fn chunking() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..9, 1..6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_byte_stream_ends_once_and_never_panics(
        data in prop::collection::vec(any::<u8>(), 0..256),
        chunks in chunking(),
    ) {
        let out = read_stream(data, chunks, 64);
        prop_assert!(!out.yielded_after_end, "{out:?}");
    }

    #[test]
    fn framed_objects_come_back_exactly_in_any_chunking(
        objects in prop::collection::vec(message_object(), 0..6),
        chunks in chunking(),
    ) {
        let mut data = Vec::new();
        for o in &objects {
            data.extend(frame(&serde_json::to_vec(o).expect("serialisable")));
        }
        let out = read_stream(data, chunks, 1 << 16);
        prop_assert_eq!(&out.end, &Ok(()));
        prop_assert_eq!(out.frames.len(), objects.len());
        for (got, want) in out.frames.iter().zip(&objects) {
            // Whatever the chunking, each frame decodes as its payload does on its own, and an
            // unrecognised one keeps the object whole for diagnostics.
            let alone = parse_frame(&serde_json::to_vec(want).expect("serialisable"));
            prop_assert_eq!(Some(got), alone.as_ref().ok());
            if let Incoming::Unrecognized { value, .. } = got {
                prop_assert_eq!(value, want);
            }
        }
    }

    #[test]
    fn a_stream_cut_inside_a_frame_is_truncated_after_the_whole_frames(
        objects in prop::collection::vec(message_object(), 1..4),
        cut_back in 1usize..40,
        chunks in chunking(),
    ) {
        let mut data = Vec::new();
        for o in &objects {
            data.extend(frame(&serde_json::to_vec(o).expect("serialisable")));
        }
        let last_len = frame(&serde_json::to_vec(&objects[objects.len() - 1]).expect("json")).len();
        let cut = cut_back.min(last_len - 1);
        data.truncate(data.len() - cut);
        let out = read_stream(data, chunks, 1 << 16);
        prop_assert_eq!(out.frames.len(), objects.len() - 1);
        prop_assert!(out.end.as_ref().is_err_and(|e| e.contains("Truncated")), "{:?}", out.end);
        prop_assert!(!out.yielded_after_end);
    }

    #[test]
    fn an_oversized_header_is_refused_before_its_payload(
        len in 65u32..=u32::MAX,
        tail in prop::collection::vec(any::<u8>(), 0..32),
        chunks in chunking(),
    ) {
        let mut data = len.to_be_bytes().to_vec();
        data.extend(tail);
        let out = read_stream(data, chunks, 64);
        prop_assert!(out.frames.is_empty());
        prop_assert!(out.end.as_ref().is_err_and(|e| e.contains("TooLarge")), "{:?}", out.end);
    }

    #[test]
    fn payload_parsing_is_total(bytes in prop::collection::vec(any::<u8>(), 0..128)) {
        // Every payload is a message, an unrecognised object, or a fatal error — never a panic,
        // and a non-object is always fatal.
        match parse_frame(&bytes) {
            Ok(_) => prop_assert!(serde_json::from_slice::<Value>(&bytes).is_ok_and(|v| v.is_object())),
            Err(FrameError::NotJson(_) | FrameError::NotObject { .. }) => {}
            Err(e) => prop_assert!(false, "unexpected error {e:?}"),
        }
    }
}
