//! The wire format (hook-protocol.md §1): frames of a 4-byte big-endian length followed by that
//! many bytes of UTF-8 JSON, one object each. This module owns what both sides share — the
//! typed errors, the payload parser and encoder — and a small *blocking* reader and writer for
//! hooks (std I/O, no runtime). The host keeps its own async halves over the same functions.
//!
//! The failure classes are the host's: a [`FrameError`] means the stream cannot be trusted any
//! more (an oversized or truncated frame, bytes that are not a JSON object), while a well-framed
//! object of an unknown `type` or the wrong shape is only [`Incoming::Unrecognized`].

use std::io::{self, ErrorKind, Read, Write};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::protocol::DEFAULT_MAX_FRAME;

/// Why a stream of frames cannot be read or written any more.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// A frame header announced more than the configured maximum. Checked before any payload is
    /// buffered, so a hostile header costs no memory.
    #[error("frame larger than the {max}-byte limit")]
    TooLarge { max: usize },
    /// The stream ended in the middle of a frame.
    #[error("stream ended in the middle of a frame")]
    Truncated,
    /// A complete frame whose bytes are not JSON.
    #[error("frame is not valid JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// A complete JSON frame that is not an object (every message is an object with a `type`).
    #[error("frame is JSON but not an object (got {got})")]
    NotObject { got: &'static str },
    /// Reading or writing the pipe failed (broken pipe, closed descriptor, …).
    #[error("pipe error: {0}")]
    Io(#[source] io::Error),
    /// A message could not be serialised (not reachable with the protocol types; kept so the
    /// writer never panics).
    #[error("cannot encode message: {0}")]
    Encode(#[source] serde_json::Error),
}

impl FrameError {
    /// The other side closed the pipe while we wrote: it has gone, nobody is left to tell.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, FrameError::Io(e) if e.kind() == ErrorKind::BrokenPipe)
    }
}

/// One well-framed message of type `M` ([`HookMessage`](crate::protocol::HookMessage) on the
/// host, [`HostMessage`](crate::protocol::HostMessage) in a hook).
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming<M> {
    Message(M),
    /// A JSON object that is not a known message: an unknown `type`, or a known `type` with
    /// fields of the wrong shape. Not fatal: when it names a request's `id`, that request fails.
    Unrecognized {
        value: Value,
        reason: String,
    },
}

impl<M> Incoming<M> {
    /// The `type` field of an unrecognised message, if it is a string.
    pub fn unrecognized_type(value: &Value) -> Option<&str> {
        value.get("type").and_then(Value::as_str)
    }

    /// The `id` field of an unrecognised message, if it is an unsigned integer.
    pub fn unrecognized_id(value: &Value) -> Option<u64> {
        value.get("id").and_then(Value::as_u64)
    }
}

/// Parses one frame's payload.
pub fn parse_frame<M: DeserializeOwned>(bytes: &[u8]) -> Result<Incoming<M>, FrameError> {
    let value: Value = serde_json::from_slice(bytes).map_err(FrameError::NotJson)?;
    let got = match &value {
        Value::Object(_) => None,
        Value::Null => Some("null"),
        Value::Bool(_) => Some("a boolean"),
        Value::Number(_) => Some("a number"),
        Value::String(_) => Some("a string"),
        Value::Array(_) => Some("an array"),
    };
    if let Some(got) = got {
        return Err(FrameError::NotObject { got });
    }
    // Parse from the Value (not the bytes again) so the raw object is kept for diagnostics when
    // the shape is wrong.
    match M::deserialize(&value) {
        Ok(m) => Ok(Incoming::Message(m)),
        Err(e) => Ok(Incoming::Unrecognized {
            value,
            reason: e.to_string(),
        }),
    }
}

/// Serialises a message to one frame's payload, checked against `max_frame` so the caller
/// learns at once that it cannot be sent.
pub fn encode<M: Serialize>(msg: &M, max_frame: usize) -> Result<Vec<u8>, FrameError> {
    let bytes = serde_json::to_vec(msg).map_err(FrameError::Encode)?;
    if bytes.len() > max_frame {
        return Err(FrameError::TooLarge { max: max_frame });
    }
    Ok(bytes)
}

/// Reads frames from a blocking stream (a hook's stdin). Wrap an unbuffered stream in a
/// `BufReader` first: every frame is two reads.
pub struct FrameReader<R> {
    inner: R,
    max_frame: usize,
    buf: Vec<u8>,
}

impl<R: Read> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        Self::with_max_frame(inner, DEFAULT_MAX_FRAME)
    }

    pub fn with_max_frame(inner: R, max_frame: usize) -> Self {
        FrameReader {
            inner,
            max_frame,
            buf: Vec::new(),
        }
    }

    /// The next frame's payload: `Ok(None)` at a clean end of stream (EOF between frames).
    pub fn read_frame(&mut self) -> Result<Option<&[u8]>, FrameError> {
        let mut head = [0u8; 4];
        let mut got = 0;
        while got < head.len() {
            match self.inner.read(&mut head[got..]) {
                Ok(0) if got == 0 => return Ok(None),
                Ok(0) => return Err(FrameError::Truncated),
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(FrameError::Io(e)),
            }
        }
        let len = u32::from_be_bytes(head) as usize;
        if len > self.max_frame {
            return Err(FrameError::TooLarge {
                max: self.max_frame,
            });
        }
        self.buf.resize(len, 0);
        match self.inner.read_exact(&mut self.buf) {
            Ok(()) => Ok(Some(&self.buf)),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => Err(FrameError::Truncated),
            Err(e) => Err(FrameError::Io(e)),
        }
    }

    /// The next message: `Ok(None)` at a clean end of stream.
    pub fn read_message<M: DeserializeOwned>(&mut self) -> Result<Option<Incoming<M>>, FrameError> {
        match self.read_frame()? {
            None => Ok(None),
            Some(bytes) => parse_frame(bytes).map(Some),
        }
    }
}

/// Writes frames to a blocking stream (a hook's stdout): header and payload in one write,
/// flushed, so a frame is never left half in a buffer.
pub struct FrameWriter<W> {
    inner: W,
    max_frame: usize,
    buf: Vec<u8>,
}

impl<W: Write> FrameWriter<W> {
    pub fn new(inner: W) -> Self {
        Self::with_max_frame(inner, DEFAULT_MAX_FRAME)
    }

    pub fn with_max_frame(inner: W, max_frame: usize) -> Self {
        FrameWriter {
            inner,
            max_frame,
            buf: Vec::new(),
        }
    }

    /// Encodes and writes one message.
    pub fn write_message<M: Serialize>(&mut self, msg: &M) -> Result<(), FrameError> {
        self.buf.clear();
        self.buf.extend_from_slice(&[0; 4]);
        serde_json::to_writer(&mut self.buf, msg).map_err(FrameError::Encode)?;
        let len = self.buf.len() - 4;
        if len > self.max_frame {
            return Err(FrameError::TooLarge {
                max: self.max_frame,
            });
        }
        let head = u32::try_from(len).map_err(|_| FrameError::TooLarge {
            max: self.max_frame,
        })?;
        self.buf[..4].copy_from_slice(&head.to_be_bytes());
        self.inner.write_all(&self.buf).map_err(FrameError::Io)?;
        self.inner.flush().map_err(FrameError::Io)
    }

    pub fn into_inner(self) -> W {
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{HookMessage, HostMessage};

    fn framed(payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_be_bytes().to_vec();
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn round_trips_messages_then_clean_eof() {
        let mut w = FrameWriter::new(Vec::new());
        w.write_message(&HostMessage::Cancel { id: 3 }).unwrap();
        w.write_message(&HostMessage::Shutdown {
            reason: "quit".into(),
        })
        .unwrap();
        let bytes = w.into_inner();
        let mut r = FrameReader::new(&bytes[..]);
        assert_eq!(
            r.read_message::<HostMessage>().unwrap(),
            Some(Incoming::Message(HostMessage::Cancel { id: 3 }))
        );
        assert!(matches!(
            r.read_message::<HostMessage>().unwrap(),
            Some(Incoming::Message(HostMessage::Shutdown { .. }))
        ));
        assert_eq!(r.read_message::<HostMessage>().unwrap(), None);
    }

    #[test]
    fn length_prefix_is_big_endian_and_exact() {
        let mut w = FrameWriter::new(Vec::new());
        w.write_message(&serde_json::json!({"type": "cancel", "id": 1}))
            .unwrap();
        let bytes = w.into_inner();
        let len = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        assert_eq!(len, bytes.len() - 4);
        assert_eq!(len, r#"{"type":"cancel","id":1}"#.len());
        let v: Value = serde_json::from_slice(&bytes[4..]).unwrap();
        assert_eq!(v, serde_json::json!({"type": "cancel", "id": 1}));
    }

    #[test]
    fn limits_and_damage_are_typed_errors() {
        let mut big = 1_000_000u32.to_be_bytes().to_vec();
        big.extend_from_slice(b"{}");
        let mut r = FrameReader::with_max_frame(&big[..], 1024);
        assert!(matches!(
            r.read_message::<HostMessage>(),
            Err(FrameError::TooLarge { max: 1024 })
        ));
        let mut cut = 100u32.to_be_bytes().to_vec();
        cut.extend_from_slice(b"{\"type\"");
        let mut r = FrameReader::new(&cut[..]);
        assert!(matches!(
            r.read_message::<HostMessage>(),
            Err(FrameError::Truncated)
        ));
        let mut r = FrameReader::new(&[0u8, 0][..]);
        assert!(matches!(
            r.read_message::<HostMessage>(),
            Err(FrameError::Truncated)
        ));
        let empty = framed(b"");
        let mut r = FrameReader::new(&empty[..]);
        assert!(matches!(
            r.read_message::<HostMessage>(),
            Err(FrameError::NotJson(_))
        ));
        let arr = framed(b"[1]");
        let mut r = FrameReader::new(&arr[..]);
        assert!(matches!(
            r.read_message::<HostMessage>(),
            Err(FrameError::NotObject { got: "an array" })
        ));
        let mut w = FrameWriter::with_max_frame(Vec::new(), 16);
        assert!(matches!(
            w.write_message(&HostMessage::Shutdown {
                reason: "x".repeat(100)
            }),
            Err(FrameError::TooLarge { max: 16 })
        ));
        assert!(
            w.into_inner().is_empty(),
            "nothing of a refused frame is written"
        );
    }

    #[test]
    fn unknown_types_are_not_fatal() {
        let f = framed(br#"{"type":"bogus","id":4}"#);
        let mut r = FrameReader::new(&f[..]);
        let Some(Incoming::Unrecognized { value, .. }) = r.read_message::<HookMessage>().unwrap()
        else {
            panic!("expected Unrecognized")
        };
        assert_eq!(Incoming::<HookMessage>::unrecognized_id(&value), Some(4));
    }
}
