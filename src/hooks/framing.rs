//! The hook wire format: frames of a 4-byte big-endian length followed by that many bytes of
//! UTF-8 JSON (SPEC 4.1), read and written with `tokio-util`'s `LengthDelimitedCodec`.
//!
//! The split into [`FrameReader`] and [`FrameWriter`] exists because a hook connection has one
//! reader task and one writer task (a `FramedWrite` must never be driven from two places, and a
//! `send` must never sit in a cancellable `select!` branch). This module owns the line between
//! the two failure classes the host treats differently:
//! - *fatal* ([`FrameError`]): an oversized length, a truncated frame, or a frame whose bytes
//!   are not a JSON object. A length-prefixed stream cannot be resynchronised, and a hook that
//!   writes non-JSON to stdout is writing something other than the protocol, so the process is
//!   killed and restarted.
//! - *not fatal* ([`Incoming::Unrecognized`]): a well-framed JSON object whose `type` is unknown
//!   or whose fields have the wrong shape. The frame boundary is intact, so only the request it
//!   answers (if any) fails.
//!
//! The error type, [`Incoming`] and the payload parser are `pi_hook::framing`'s, shared with
//! hooks written in Rust; this module adds the async halves the host needs.

use std::io;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::codec::{FramedRead, FramedWrite, LengthDelimitedCodec, LengthDelimitedCodecError};

pub use pi_hook::framing::FrameError;

use super::protocol::{HookMessage, HostMessage, DEFAULT_MAX_FRAME};

/// One well-framed message from a hook (the shared type, read as hook messages).
pub type Incoming = pi_hook::framing::Incoming<HookMessage>;

/// Maps the codec's `io::Error`s onto the cases callers branch on.
fn from_codec(e: io::Error, max_frame: usize) -> FrameError {
    if e.get_ref()
        .is_some_and(|inner| inner.is::<LengthDelimitedCodecError>())
    {
        // The codec reports both "header too big" and "payload too big to encode" this way.
        return FrameError::TooLarge { max: max_frame };
    }
    // `Decoder::decode_eof` reports a partial frame at EOF as `io::Error::other` with this
    // text; there is no typed error to match on.
    if e.kind() == io::ErrorKind::Other && e.to_string() == "bytes remaining on stream" {
        return FrameError::Truncated;
    }
    FrameError::Io(e)
}

fn codec(max_frame: usize) -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .length_field_type::<u32>()
        .big_endian()
        .max_frame_length(max_frame)
        .new_codec()
}

/// Parses one frame's payload from a hook. Split out so tests and fuzzing reach it without a
/// pipe.
pub fn parse_frame(bytes: &[u8]) -> Result<Incoming, FrameError> {
    pi_hook::framing::parse_frame(bytes)
}

/// Serialises a host message to one frame's payload, checking it against `max_frame` so the
/// caller learns at once that a message cannot be sent (instead of the writer failing later).
pub fn encode(msg: &HostMessage, max_frame: usize) -> Result<Bytes, FrameError> {
    pi_hook::framing::encode(msg, max_frame).map(Bytes::from)
}

/// The reading half: frames from a hook's stdout.
pub struct FrameReader<R> {
    inner: FramedRead<R, LengthDelimitedCodec>,
    max_frame: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub fn new(io: R) -> Self {
        Self::with_max_frame(io, DEFAULT_MAX_FRAME)
    }

    pub fn with_max_frame(io: R, max_frame: usize) -> Self {
        FrameReader {
            inner: FramedRead::new(io, codec(max_frame)),
            max_frame,
        }
    }

    /// The next message: `Ok(None)` on a clean end of stream (EOF between frames).
    ///
    /// Cancel safe: a partial frame stays in the read buffer, so this can sit in a `select!`.
    /// After an `Err` the stream is finished (the codec yields `None` afterwards).
    pub async fn read_message(&mut self) -> Result<Option<Incoming>, FrameError> {
        Ok(self.read_sized().await?.map(|(incoming, _)| incoming))
    }

    /// [`read_message`](Self::read_message), with the frame's payload length (what the host
    /// counts a call's size by). Cancel safe as well.
    pub async fn read_sized(&mut self) -> Result<Option<(Incoming, usize)>, FrameError> {
        match self.inner.next().await {
            None => Ok(None),
            Some(Err(e)) => Err(from_codec(e, self.max_frame)),
            Some(Ok(frame)) => parse_frame(&frame).map(|m| Some((m, frame.len()))),
        }
    }
}

/// The writing half: frames to a hook's stdin. Owned by exactly one task.
pub struct FrameWriter<W> {
    inner: FramedWrite<W, LengthDelimitedCodec>,
    max_frame: usize,
}

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    pub fn new(io: W) -> Self {
        Self::with_max_frame(io, DEFAULT_MAX_FRAME)
    }

    pub fn with_max_frame(io: W, max_frame: usize) -> Self {
        FrameWriter {
            inner: FramedWrite::new(io, codec(max_frame)),
            max_frame,
        }
    }

    /// Encodes and writes one message, flushed. Not cancel safe (a dropped write may leave half
    /// a frame buffered): call it from a task that is never raced against anything.
    pub async fn write_message(&mut self, msg: &HostMessage) -> Result<(), FrameError> {
        let frame = encode(msg, self.max_frame)?;
        self.write_frame(frame).await
    }

    /// Writes one already encoded payload (see [`encode`]), flushed. Same caveat as
    /// [`write_message`](Self::write_message).
    pub async fn write_frame(&mut self, payload: Bytes) -> Result<(), FrameError> {
        self.inner
            .send(payload)
            .await
            .map_err(|e| from_codec(e, self.max_frame))
    }

    /// Flushes and shuts the write side down; dropping the writer afterwards closes the pipe,
    /// which a hook reads as EOF ("shut down").
    pub async fn close(&mut self) -> Result<(), FrameError> {
        SinkExt::<Bytes>::close(&mut self.inner)
            .await
            .map_err(FrameError::Io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use tokio::io::AsyncWriteExt;

    fn framed(payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_be_bytes().to_vec();
        v.extend_from_slice(payload);
        v
    }

    async fn read_all(bytes: Vec<u8>, max: usize) -> Vec<Result<Option<Incoming>, String>> {
        let (mut a, b) = tokio::io::duplex(1 << 16);
        let writer = tokio::spawn(async move {
            let _ = a.write_all(&bytes).await;
            // Dropping `a` is the EOF.
        });
        let mut r = FrameReader::with_max_frame(b, max);
        let mut out = Vec::new();
        loop {
            let item = r.read_message().await;
            let stop = !matches!(item, Ok(Some(_)));
            out.push(item.map_err(|e| format!("{e:?}")));
            if stop {
                break;
            }
        }
        let _ = writer.await;
        out
    }

    #[tokio::test]
    async fn reads_messages_then_clean_eof() {
        let mut bytes = framed(br#"{"type":"log","message":"hi"}"#);
        bytes.extend(framed(br#"{"type":"reply","id":3,"result":{"ok":true}}"#));
        let out = read_all(bytes, 1024).await;
        assert_eq!(out.len(), 3);
        assert!(matches!(
            &out[0],
            Ok(Some(Incoming::Message(HookMessage::Log(_))))
        ));
        assert!(matches!(
            &out[1],
            Ok(Some(Incoming::Message(HookMessage::Reply(r)))) if r.id == 3
        ));
        assert!(matches!(out[2], Ok(None)));
    }

    #[tokio::test]
    async fn oversized_header_is_fatal() {
        let mut bytes = 1_000_000u32.to_be_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        let out = read_all(bytes, 1024).await;
        assert_eq!(out.len(), 1);
        assert!(out[0].as_ref().is_err_and(|e| e.contains("TooLarge")));
    }

    #[tokio::test]
    async fn truncated_frame_is_fatal() {
        let mut bytes = 100u32.to_be_bytes().to_vec();
        bytes.extend_from_slice(b"{\"type\"");
        let out = read_all(bytes, 1024).await;
        assert!(out[0].as_ref().is_err_and(|e| e.contains("Truncated")));
    }

    #[tokio::test]
    async fn garbage_text_reads_as_an_oversized_header() {
        // "garb" as a big-endian u32 is ~1.7 GB.
        let out = read_all(b"garbage on stdout\n".to_vec(), 1024).await;
        assert!(out[0].as_ref().is_err_and(|e| e.contains("TooLarge")));
    }

    #[test]
    fn non_json_and_non_objects_are_fatal() {
        assert!(matches!(
            parse_frame(b"{not json"),
            Err(FrameError::NotJson(_))
        ));
        assert!(matches!(
            parse_frame(b"\xff\xfe"),
            Err(FrameError::NotJson(_))
        ));
        assert!(matches!(
            parse_frame(b"[1,2]"),
            Err(FrameError::NotObject { got: "an array" })
        ));
    }

    #[test]
    fn unknown_type_and_wrong_shape_are_not_fatal() {
        let Ok(Incoming::Unrecognized { value, .. }) = parse_frame(br#"{"type":"bogus","id":4}"#)
        else {
            panic!("expected Unrecognized")
        };
        assert_eq!(Incoming::unrecognized_type(&value), Some("bogus"));
        assert_eq!(Incoming::unrecognized_id(&value), Some(4));
        let r = parse_frame(br#"{"type":"reply","id":5,"error":{"not":"a string"}}"#);
        let Ok(Incoming::Unrecognized { value, reason }) = r else {
            panic!("expected Unrecognized")
        };
        assert_eq!(Incoming::unrecognized_id(&value), Some(5));
        assert!(!reason.is_empty());
        assert!(matches!(
            parse_frame(br#"{"no_type":1}"#),
            Ok(Incoming::Unrecognized { .. })
        ));
    }

    #[tokio::test]
    async fn writer_round_trips_and_enforces_the_limit() {
        let (a, b) = tokio::io::duplex(1 << 16);
        let mut w = FrameWriter::with_max_frame(a, 64);
        w.write_message(&HostMessage::Cancel { id: 9 })
            .await
            .unwrap();
        let big = HostMessage::Shutdown {
            reason: "x".repeat(100),
        };
        assert!(matches!(
            w.write_message(&big).await,
            Err(FrameError::TooLarge { max: 64 })
        ));
        w.close().await.unwrap();
        drop(w);
        let mut raw = FramedRead::new(b, codec(64));
        let frame = raw.next().await.unwrap().unwrap();
        let v: Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(v, serde_json::json!({"type":"cancel","id":9}));
        assert!(raw.next().await.is_none());
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_parser() {
        // A cheap property check: every prefix and a few mutations of valid frames.
        let samples: &[&[u8]] = &[
            br#"{"type":"reply","id":1,"result":null}"#,
            br#"{"type":"call","id":2,"method":"ui.confirm","params":{"a":[1,2,{"b":null}]}}"#,
        ];
        for s in samples {
            for i in 0..=s.len() {
                let _ = parse_frame(&s[..i]);
                let mut m = s.to_vec();
                if i < m.len() {
                    m[i] ^= 0x5a;
                    let _ = parse_frame(&m);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "framing_props.rs"]
mod props;
