//! RPC mode's wire framing: strict JSONL, apart from what the records mean (`protocol`).
//!
//! Input is split on LF and nothing else: U+2028/U+2029 and lone CRs inside a record are
//! payload, as JSON allows (Node's `readline`, which splits on them, is the bug TypeScript pi
//! documents and avoids). A trailing CR is stripped so CRLF clients work. A record may arrive in
//! any number of reads; EOF ends the stream cleanly, and an unterminated last record is still
//! delivered, as TypeScript pi 1.6 does.
//!
//! One deliberate difference from TypeScript pi: a line is bounded. A client that never sends
//! LF would otherwise make us buffer without limit. A line longer than the limit is reported as
//! [`Line::TooLong`] once its LF arrives; its bytes are dropped as they are read (never held), so
//! the connection survives and the next line is read normally.
//!
//! Output is one JSON object per line, serialised whole into one buffer and flushed, so a
//! record is never interleaved with another or left sitting in a buffer.

use std::io;

use serde::Serialize;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

/// The longest line accepted, in bytes before the LF (a trailing CR counts): 64 MiB.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// One input record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// The bytes of one line, without the LF and without a trailing CR. Not checked for UTF-8
    /// or JSON here: that is the protocol's business, and its error names the command.
    Record(Vec<u8>),
    /// A line of `len` bytes, over the limit; its content was discarded.
    TooLong { len: usize },
}

/// Reads LF-separated lines from a buffered byte stream.
pub struct LineReader<R> {
    inner: R,
    max_line: usize,
    line: Vec<u8>,
    /// Bytes of the current line seen so far while discarding it (it went over the limit).
    discarding: Option<usize>,
    /// The most bytes of one unfinished line ever held: the memory bound, for tests to check.
    peak: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(inner: R) -> Self {
        Self::with_max_line(inner, MAX_LINE)
    }

    /// A reader with another limit (tests use small ones).
    pub fn with_max_line(inner: R, max_line: usize) -> Self {
        LineReader {
            inner,
            max_line,
            line: Vec::new(),
            discarding: None,
            peak: 0,
        }
    }

    /// The most bytes of one unfinished line this reader has held at once. Never more than the
    /// limit, however long a line the client sends.
    pub fn peak_buffered(&self) -> usize {
        self.peak
    }

    /// The next line, or `None` at EOF. An unterminated last line is returned before `None`.
    ///
    /// Cancel safe: bytes already consumed stay in the reader's own buffer, so this can sit in a
    /// `select!`.
    pub async fn next_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                return Ok(self.finish_at_eof());
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.unwrap_or(available.len());
            match self.discarding.as_mut() {
                Some(seen) => *seen += take,
                None if self.line.len() + take > self.max_line => {
                    self.discarding = Some(self.line.len() + take);
                    self.line = Vec::new();
                }
                None => {
                    self.line.extend_from_slice(&available[..take]);
                    self.peak = self.peak.max(self.line.len());
                }
            }
            let consumed = newline.map_or(take, |i| i + 1);
            self.inner.consume(consumed);
            if newline.is_some() {
                return Ok(Some(self.take_line()));
            }
        }
    }

    fn finish_at_eof(&mut self) -> Option<Line> {
        if self.line.is_empty() && self.discarding.is_none() {
            return None;
        }
        Some(self.take_line())
    }

    fn take_line(&mut self) -> Line {
        if let Some(len) = self.discarding.take() {
            return Line::TooLong { len };
        }
        let mut line = std::mem::take(&mut self.line);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Line::Record(line)
    }
}

/// Why a record could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The value does not serialise (a map with non-string keys, a failing `Serialize` impl).
    #[error("cannot encode RPC record: {0}")]
    Encode(#[source] serde_json::Error),
    /// Writing or flushing stdout failed (the client closed its end, most often).
    #[error("cannot write RPC record: {0}")]
    Io(#[source] io::Error),
}

/// Serialises `value` as one line: compact JSON and an LF. serde_json escapes control
/// characters, so the only LF in the result is the terminator; the C1 controls it would leave
/// raw are escaped too (`term::json`), so a client that echoes the stream to a terminal shows
/// the same data and nothing acts on it.
pub fn encode_line<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, WriteError> {
    let mut buf = Vec::with_capacity(256);
    crate::term::json::to_writer(&mut buf, value).map_err(WriteError::Encode)?;
    buf.push(b'\n');
    Ok(buf)
}

/// Writes records to the client. Owned by one task: a record is written whole and flushed
/// before the next one starts.
pub struct LineWriter<W> {
    inner: W,
}

impl<W: AsyncWrite + Unpin> LineWriter<W> {
    pub fn new(inner: W) -> Self {
        LineWriter { inner }
    }

    /// Writes one record and flushes. Not cancel safe (a dropped write may leave part of a
    /// line written): call it from a task that is never raced against anything.
    pub async fn write<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), WriteError> {
        let line = encode_line(value)?;
        self.inner.write_all(&line).await.map_err(WriteError::Io)?;
        self.inner.flush().await.map_err(WriteError::Io)
    }

    pub fn into_inner(self) -> W {
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut r = LineReader::with_max_line(input, max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().await.unwrap() {
            out.push(l);
        }
        out
    }

    fn rec(s: &str) -> Line {
        Line::Record(s.as_bytes().to_vec())
    }

    #[tokio::test]
    async fn splits_on_lf_only_and_strips_one_trailing_cr() {
        let input = "a\u{2028}b\u{2029}c\r\nd\re\n\r\r\n\nlast".as_bytes();
        assert_eq!(
            lines(input, 100).await,
            vec![
                rec("a\u{2028}b\u{2029}c"),
                rec("d\re"),
                rec("\r"),
                rec(""),
                rec("last")
            ]
        );
    }

    #[tokio::test]
    async fn an_over_long_line_is_reported_and_the_next_one_survives() {
        let input = b"12345\n123456\r\nok\n1234567";
        assert_eq!(
            lines(input, 5).await,
            vec![
                rec("12345"),
                Line::TooLong { len: 7 },
                rec("ok"),
                Line::TooLong { len: 7 }
            ]
        );
    }

    #[tokio::test]
    async fn eof_with_nothing_pending_is_a_clean_end() {
        assert_eq!(lines(b"", 5).await, vec![]);
        assert_eq!(lines(b"x\n", 5).await, vec![rec("x")]);
    }

    #[tokio::test]
    async fn writer_emits_one_flushed_line_per_record_with_separators_kept_raw() {
        let mut w = LineWriter::new(Vec::new());
        w.write(&serde_json::json!({"a": "x\ny\u{2028}"}))
            .await
            .unwrap();
        w.write(&serde_json::json!({"b": 1})).await.unwrap();
        let out = String::from_utf8(w.into_inner()).unwrap();
        assert_eq!(out, "{\"a\":\"x\\ny\u{2028}\"}\n{\"b\":1}\n");
    }
}
