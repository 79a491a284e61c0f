//! Incremental Server-Sent Events decoder with bounded buffers.
//!
//! Both wire APIs stream their answers as SSE. Network chunks split events, lines and even
//! UTF-8 sequences anywhere, so the decoder keeps raw bytes until a whole line is present and
//! decodes text per line, never per chunk. Everything it buffers is capped: a server that sends
//! an endless line or an endless event gets an [`SseError`] instead of the agent's memory.
//! Provider specifics (the `[DONE]` sentinel, typed `event:` names) live above this layer.

/// Default cap for one line and for one event's accumulated `data`.
pub const DEFAULT_MAX_BYTES: usize = 16 * 1024 * 1024;

/// How much the decoder may buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseLimits {
    /// Longest accepted line, excluding its terminator.
    pub max_line: usize,
    /// Largest accepted event: `event` name plus joined `data`.
    pub max_event: usize,
}

impl Default for SseLimits {
    fn default() -> Self {
        SseLimits {
            max_line: DEFAULT_MAX_BYTES,
            max_event: DEFAULT_MAX_BYTES,
        }
    }
}

/// One dispatched event. `event` is `None` when the server sent no `event:` field (the SSE
/// default type "message").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("SSE line longer than {limit} bytes")]
    LineTooLong { limit: usize },
    #[error("SSE event larger than {limit} bytes")]
    EventTooLarge { limit: usize },
}

/// The decoder state. Feed it chunks in order; it returns the events they complete.
#[derive(Debug)]
pub struct SseDecoder {
    limits: SseLimits,
    /// Bytes of the current, unterminated line.
    line: Vec<u8>,
    /// The previous chunk ended in `\r`; a `\n` opening the next chunk belongs to it.
    skip_lf: bool,
    /// No line has been completed yet, so a BOM may still open the stream.
    first_line: bool,
    event: Option<String>,
    data: String,
    /// At least one `data:` field arrived for the pending event (data may still be empty).
    has_data: bool,
    /// A cap was exceeded; the stream can no longer be decoded reliably.
    failed: Option<SseError>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::with_limits(SseLimits::default())
    }

    pub fn with_limits(limits: SseLimits) -> Self {
        SseDecoder {
            limits,
            line: Vec::new(),
            skip_lf: false,
            first_line: true,
            event: None,
            data: String::new(),
            has_data: false,
            failed: None,
        }
    }

    /// Decodes one chunk. After an error the decoder stays failed and repeats it, because the
    /// rest of the stream can no longer be framed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        self.feed_into(chunk, &mut out)?;
        Ok(out)
    }

    /// Like [`feed`](Self::feed), appending to a caller-owned vector.
    pub fn feed_into(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self.feed_inner(chunk, out);
        if let Err(e) = &r {
            self.failed = Some(e.clone());
            self.line = Vec::new();
            self.data = String::new();
        }
        r
    }

    fn feed_inner(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut rest = chunk;
        if self.skip_lf && !rest.is_empty() {
            self.skip_lf = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(pos) = memchr::memchr2(b'\n', b'\r', rest) {
            let piece = &rest[..pos];
            if self.line.len() + piece.len() > self.limits.max_line {
                return Err(SseError::LineTooLong {
                    limit: self.limits.max_line,
                });
            }
            if self.line.is_empty() {
                self.process_line(piece, out)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(piece);
                self.process_line(&line, out)?;
                // Keep the allocation for the next split line.
                line.clear();
                self.line = line;
            }
            let terminator = rest[pos];
            rest = &rest[pos + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
        if self.line.len() + rest.len() > self.limits.max_line {
            return Err(SseError::LineTooLong {
                limit: self.limits.max_line,
            });
        }
        self.line.extend_from_slice(rest);
        Ok(())
    }

    /// Ends the stream. Unlike a browser, which drops an event not followed by a blank line,
    /// this dispatches it: a server that closes right after its last `data:` line has still
    /// said what it meant, and the provider layer decides whether the stream was complete.
    pub fn finish(&mut self) -> Result<Option<SseEvent>, SseError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let mut out = Vec::new();
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut out)?;
        }
        self.dispatch(&mut out);
        Ok(out.pop())
    }

    fn process_line(&mut self, raw: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut raw = raw;
        if self.first_line {
            self.first_line = false;
            raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
        }
        if raw.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if raw[0] == b':' {
            return Ok(());
        }
        let (name, value) = match raw.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &raw[i + 1..];
                (&raw[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (raw, &b""[..]),
        };
        match name {
            b"data" => {
                let value = lossy(value);
                let separator = usize::from(self.has_data);
                if self.pending_size() + separator + value.len() > self.limits.max_event {
                    return Err(SseError::EventTooLarge {
                        limit: self.limits.max_event,
                    });
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            b"event" => {
                let value = lossy(value).into_owned();
                if self.data.len() + value.len() > self.limits.max_event {
                    return Err(SseError::EventTooLarge {
                        limit: self.limits.max_event,
                    });
                }
                self.event = Some(value);
            }
            // `id` and `retry` only matter for browser reconnection, which providers don't use;
            // unknown fields are ignored as the SSE standard says.
            _ => {}
        }
        Ok(())
    }

    fn pending_size(&self) -> usize {
        self.data.len() + self.event.as_ref().map_or(0, String::len)
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            // An event without data is not dispatched (SSE standard); its type is reset.
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        });
    }
}

/// A line's bytes as text, invalid sequences replaced. Valid UTF-8 (nearly every line) takes
/// the standard library's word-at-a-time check; `from_utf8_lossy` walks byte by byte, and was a
/// fifth of a turn's stream decoding.
fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(chunks: &[&[u8]]) -> Result<Vec<SseEvent>, SseError> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            d.feed_into(c, &mut out)?;
        }
        out.extend(d.finish()?);
        Ok(out)
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
        }
    }

    const SAMPLE: &str = "\u{FEFF}: keep-alive\r\n\
        event: ping\r\n\
        data: {}\r\n\
        \r\n\
        data: line one\n\
        data:line two\n\
        id: 7\n\
        retry: 100\n\
        \n\
        event: message_start\r\
        data: {\"text\":\"héllo 世界 🎉\"}\r\
        \r\
        event: no-data\n\
        \n\
        data\n\
        \n\
        data: trailing without blank line";

    fn sample_expected() -> Vec<SseEvent> {
        vec![
            ev(Some("ping"), "{}"),
            ev(None, "line one\nline two"),
            ev(Some("message_start"), "{\"text\":\"héllo 世界 🎉\"}"),
            ev(None, ""),
            ev(None, "trailing without blank line"),
        ]
    }

    #[test]
    fn decodes_all_line_endings_comments_and_multiline_data() {
        assert_eq!(decode_all(&[SAMPLE.as_bytes()]).unwrap(), sample_expected());
    }

    #[test]
    fn every_split_point_decodes_identically() {
        let bytes = SAMPLE.as_bytes();
        let expected = sample_expected();
        for i in 0..=bytes.len() {
            assert_eq!(
                decode_all(&[&bytes[..i], &bytes[i..]]).unwrap(),
                expected,
                "split at {i}"
            );
            for j in i..=bytes.len() {
                assert_eq!(
                    decode_all(&[&bytes[..i], &bytes[i..j], &bytes[j..]]).unwrap(),
                    expected,
                    "split at {i},{j}"
                );
            }
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode_all(&singles).unwrap(), expected);
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_ending() {
        let events = decode_all(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]).unwrap();
        assert_eq!(events, vec![ev(None, "a\nb")]);
    }

    #[test]
    fn endless_line_errors_once_past_the_cap() {
        let mut d = SseDecoder::with_limits(SseLimits {
            max_line: 1024,
            max_event: 1 << 20,
        });
        d.feed(b"data: ").unwrap();
        let chunk = [b'x'; 100];
        let mut fed = 6;
        let err = loop {
            match d.feed(&chunk) {
                Ok(events) => {
                    assert!(events.is_empty());
                    fed += chunk.len();
                    assert!(fed <= 1024, "accepted {fed} bytes without a line end");
                }
                Err(e) => break e,
            }
        };
        assert_eq!(err, SseError::LineTooLong { limit: 1024 });
        // Stays failed instead of resynchronising mid-line.
        assert_eq!(d.feed(b"\n\n"), Err(err));
        assert!(d.line.capacity() == 0);
    }

    #[test]
    fn line_exactly_at_cap_is_accepted() {
        let mut d = SseDecoder::with_limits(SseLimits {
            max_line: 10,
            max_event: 100,
        });
        let events = d.feed(b"data: 1234\n\n").unwrap();
        assert_eq!(events, vec![ev(None, "1234")]);
        assert!(d.feed(b"data: 12345\n").is_err());
    }

    #[test]
    fn endless_event_errors_once_past_the_cap() {
        let mut d = SseDecoder::with_limits(SseLimits {
            max_line: 100,
            max_event: 1000,
        });
        let mut total = 0;
        let err = loop {
            match d.feed(b"data: 0123456789012345678901234567890123456789\n") {
                Ok(events) => {
                    assert!(events.is_empty());
                    total += 41;
                    assert!(total <= 1000);
                }
                Err(e) => break e,
            }
        };
        assert_eq!(err, SseError::EventTooLarge { limit: 1000 });
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let events = decode_all(&[b"data: a\xFFb\n\n"]).unwrap();
        assert_eq!(events, vec![ev(None, "a\u{FFFD}b")]);
    }
}
