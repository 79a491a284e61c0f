//! A streaming JSON reader for session files, one line at a time, that holds no more of a line
//! than its caller keeps: `pi hook replay` reads sessions of any size in a few kilobytes plus
//! the tool calls it reports.
//!
//! Why not serde_json: its streaming reader buffers every string and key it visits, whole —
//! even to compare a key or to learn that a value is a string — so a session with one huge line
//! (a 150 MB tool output) cost replay several times its size. Here strings and keys are read
//! through a cap (the bytes past it are checked and dropped), values nobody asked for are
//! checked and skipped, and only [`Scanner::value`] keeps a value whole (a tool call's
//! arguments, which replay reports).
//!
//! It accepts what serde_json accepts when the session loader reads a line (RFC 8259, strings
//! of valid UTF-8 with paired surrogate escapes, nesting below 128, finite numbers), so replay
//! reads the lines the loader reads. A line is what lies before the next `\n`; whatever the
//! caller leaves of it is skipped by [`Scanner::finish_line`].

use std::io::Read;

use serde_json::Value;

/// How deep arrays and objects may nest (serde_json's recursion limit).
const MAX_DEPTH: usize = 127;
/// Numbers up to this length are checked for range as serde_json checks them.
const NUMBER_CHECKED: usize = 1024;
/// Keys longer than this are none that a caller compares with.
pub const KEY_CAP: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The line is not JSON (or nests too deep, or holds a number out of range).
    #[error("not JSON: {0}")]
    Syntax(&'static str),
}

type Result<T> = std::result::Result<T, ScanError>;

fn syntax<T>(why: &'static str) -> Result<T> {
    Err(ScanError::Syntax(why))
}

/// The first `cap` bytes of a string (cut at a character boundary), and whether that was all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Capped {
    pub text: String,
    pub whole: bool,
}

impl Capped {
    /// Whether the string is exactly `s`.
    pub fn is(&self, s: &str) -> bool {
        self.whole && self.text == s
    }
}

/// The first bytes of a string as it is read, whole characters only.
struct Prefix {
    out: Vec<u8>,
    cap: usize,
    whole: bool,
}

impl Prefix {
    fn new(cap: usize) -> Prefix {
        Prefix {
            out: Vec::new(),
            cap,
            whole: true,
        }
    }

    /// ASCII characters: as many as fit.
    fn ascii(&mut self, bytes: &[u8]) {
        if !self.whole || bytes.is_empty() {
            return;
        }
        let room = self.cap - self.out.len();
        let n = bytes.len().min(room);
        self.out.extend_from_slice(&bytes[..n]);
        self.whole = n == bytes.len();
    }

    /// One character's UTF-8: all of it, or nothing and nothing more.
    fn char(&mut self, bytes: &[u8]) {
        if self.whole && self.out.len() + bytes.len() <= self.cap {
            self.out.extend_from_slice(bytes);
        } else {
            self.whole = false;
        }
    }

    fn done(self) -> Result<Capped> {
        let text = String::from_utf8(self.out).map_err(|_| ScanError::Syntax("invalid UTF-8"))?;
        Ok(Capped {
            text,
            whole: self.whole,
        })
    }
}

/// The kind of the next value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    String,
    Number,
    Literal,
}

pub struct Scanner<R> {
    src: R,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    depth: usize,
    /// The raw bytes of the value [`value`](Self::value) is reading.
    tee: Option<Vec<u8>>,
}

impl<R: Read> Scanner<R> {
    pub fn new(src: R) -> Scanner<R> {
        Scanner {
            src,
            buf: vec![0; 1 << 16].into_boxed_slice(),
            pos: 0,
            len: 0,
            depth: 0,
            tee: None,
        }
    }

    /// Whether the input has no more bytes.
    pub fn at_end(&mut self) -> std::io::Result<bool> {
        Ok(self.pos == self.len && !self.refill()?)
    }

    fn refill(&mut self) -> std::io::Result<bool> {
        loop {
            match self.src.read(&mut self.buf) {
                Ok(n) => {
                    (self.pos, self.len) = (0, n);
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The next byte of the line, not consumed; `None` at its end.
    fn peek(&mut self) -> Result<Option<u8>> {
        if self.pos == self.len && !self.refill()? {
            return Ok(None);
        }
        let b = self.buf[self.pos];
        Ok((b != b'\n').then_some(b))
    }

    fn bump(&mut self) {
        if let Some(t) = &mut self.tee {
            t.push(self.buf[self.pos]);
        }
        self.pos += 1;
    }

    fn next(&mut self) -> Result<u8> {
        match self.peek()? {
            Some(b) => {
                self.bump();
                Ok(b)
            }
            None => syntax("the line ends inside a value"),
        }
    }

    fn expect(&mut self, want: u8, why: &'static str) -> Result<()> {
        if self.next()? == want {
            Ok(())
        } else {
            syntax(why)
        }
    }

    fn skip_ws(&mut self) -> Result<Option<u8>> {
        while let Some(b) = self.peek()? {
            if !matches!(b, b' ' | b'\t' | b'\r') {
                return Ok(Some(b));
            }
            self.bump();
        }
        Ok(None)
    }

    /// Whether the rest of the line is blank (JSON whitespace).
    pub fn rest_is_blank(&mut self) -> Result<bool> {
        Ok(self.skip_ws()?.is_none())
    }

    /// Skips what is left of the line, its newline included.
    pub fn finish_line(&mut self) -> std::io::Result<()> {
        self.tee = None;
        self.depth = 0;
        loop {
            if self.pos == self.len && !self.refill()? {
                return Ok(());
            }
            let rest = &self.buf[self.pos..self.len];
            match memchr::memchr(b'\n', rest) {
                Some(i) => {
                    self.pos += i + 1;
                    return Ok(());
                }
                None => self.pos = self.len,
            }
        }
    }

    /// The kind of the next value (whitespace before it skipped).
    pub fn kind(&mut self) -> Result<Kind> {
        match self.skip_ws()? {
            Some(b'{') => Ok(Kind::Object),
            Some(b'[') => Ok(Kind::Array),
            Some(b'"') => Ok(Kind::String),
            Some(b'-' | b'0'..=b'9') => Ok(Kind::Number),
            Some(b't' | b'f' | b'n') => Ok(Kind::Literal),
            _ => syntax("expected a value"),
        }
    }

    fn enter(&mut self, open: u8) -> Result<()> {
        self.skip_ws()?;
        self.expect(open, "expected an object or array")?;
        if self.depth >= MAX_DEPTH {
            return syntax("nested too deep");
        }
        self.depth += 1;
        Ok(())
    }

    /// Reads an object: `member` gets each key (up to [`KEY_CAP`] bytes) and must read or
    /// skip its value.
    pub fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, Capped) -> Result<()>,
    ) -> Result<()> {
        self.enter(b'{')?;
        if self.skip_ws()? == Some(b'}') {
            self.bump();
            self.depth -= 1;
            return Ok(());
        }
        loop {
            if self.skip_ws()? != Some(b'"') {
                return syntax("expected a key");
            }
            let key = self.string(KEY_CAP)?;
            self.skip_ws()?;
            self.expect(b':', "expected `:`")?;
            member(self, key)?;
            match self.skip_ws()?.map(|_| self.next()).transpose()? {
                Some(b',') => {}
                Some(b'}') => break,
                _ => return syntax("expected `,` or `}`"),
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// Reads an array: `item` must read or skip each value.
    pub fn array(&mut self, mut item: impl FnMut(&mut Self) -> Result<()>) -> Result<()> {
        self.enter(b'[')?;
        if self.skip_ws()? == Some(b']') {
            self.bump();
            self.depth -= 1;
            return Ok(());
        }
        loop {
            item(self)?;
            match self.skip_ws()?.map(|_| self.next()).transpose()? {
                Some(b',') => {}
                Some(b']') => break,
                _ => return syntax("expected `,` or `]`"),
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// Reads a string, keeping its first `cap` bytes (decoded).
    pub fn string(&mut self, cap: usize) -> Result<Capped> {
        self.skip_ws()?;
        self.expect(b'"', "expected a string")?;
        let mut kept = Prefix::new(cap);
        loop {
            // Plain characters in bulk: what a long string is made of.
            if self.peek()?.is_none() {
                return syntax("the line ends inside a string");
            }
            let run = &self.buf[self.pos..self.len];
            let n = run
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b))
                .unwrap_or(run.len());
            kept.ascii(&run[..n]);
            if let Some(t) = &mut self.tee {
                t.extend_from_slice(&run[..n]);
            }
            self.pos += n;
            if n == run.len() {
                continue;
            }
            match self.next()? {
                b'"' => break,
                b'\\' => {
                    let mut c = [0; 4];
                    kept.char(self.escape()?.encode_utf8(&mut c).as_bytes());
                }
                b if b < 0x20 => return syntax("a control character in a string"),
                b => {
                    let mut c = [b, 0, 0, 0];
                    let len = match b {
                        0xC2..=0xDF => 2,
                        0xE0..=0xEF => 3,
                        0xF0..=0xF4 => 4,
                        _ => return syntax("invalid UTF-8"),
                    };
                    for slot in &mut c[1..len] {
                        *slot = self.next()?;
                    }
                    if std::str::from_utf8(&c[..len]).is_err() {
                        return syntax("invalid UTF-8");
                    }
                    kept.char(&c[..len]);
                }
            }
        }
        kept.done()
    }

    /// The character of an escape, after its backslash.
    fn escape(&mut self) -> Result<char> {
        let c = match self.next()? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let n = self.hex4()?;
                if (0xDC00..=0xDFFF).contains(&n) {
                    return syntax("a lone surrogate");
                }
                if !(0xD800..=0xDBFF).contains(&n) {
                    return char::from_u32(n).map_or(syntax("invalid escape"), Ok);
                }
                if self.next()? != b'\\' || self.next()? != b'u' {
                    return syntax("a lone surrogate");
                }
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return syntax("a lone surrogate");
                }
                let code = 0x1_0000 + ((n - 0xD800) << 10) + (low - 0xDC00);
                return char::from_u32(code).map_or(syntax("invalid escape"), Ok);
            }
            _ => return syntax("invalid escape"),
        };
        Ok(c)
    }

    fn hex4(&mut self) -> Result<u32> {
        let mut n = 0;
        for _ in 0..4 {
            let d = (self.next()? as char)
                .to_digit(16)
                .map_or(syntax("invalid \\u escape"), Ok)?;
            n = n * 16 + d;
        }
        Ok(n)
    }

    /// `true` or `false`; anything else (`null` included) is skipped and is `None`.
    pub fn bool(&mut self) -> Result<Option<bool>> {
        match self.skip_ws()? {
            Some(b't') => self.literal(b"true").map(|_| Some(true)),
            Some(b'f') => self.literal(b"false").map(|_| Some(false)),
            _ => self.skip().map(|_| None),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<()> {
        for &w in word {
            self.expect(w, "invalid literal")?;
        }
        Ok(())
    }

    fn number(&mut self) -> Result<()> {
        let mut text = Vec::new();
        let take = |s: &mut Self, text: &mut Vec<u8>| -> Result<u8> {
            let b = s.next()?;
            if text.len() <= NUMBER_CHECKED {
                text.push(b);
            }
            Ok(b)
        };
        let digit = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_digit());
        if self.peek()? == Some(b'-') {
            take(self, &mut text)?;
        }
        match take(self, &mut text)? {
            b'0' if digit(self.peek()?) => return syntax("a leading zero"),
            b'0'..=b'9' => {}
            _ => return syntax("invalid number"),
        }
        while digit(self.peek()?) {
            take(self, &mut text)?;
        }
        if self.peek()? == Some(b'.') {
            take(self, &mut text)?;
            if !digit(self.peek()?) {
                return syntax("invalid number");
            }
            while digit(self.peek()?) {
                take(self, &mut text)?;
            }
        }
        if matches!(self.peek()?, Some(b'e' | b'E')) {
            take(self, &mut text)?;
            if matches!(self.peek()?, Some(b'+' | b'-')) {
                take(self, &mut text)?;
            }
            if !digit(self.peek()?) {
                return syntax("invalid number");
            }
            while digit(self.peek()?) {
                take(self, &mut text)?;
            }
        }
        // serde_json refuses numbers that are not finite as f64 (`1e400`).
        if text.len() <= NUMBER_CHECKED && serde_json::from_slice::<Value>(&text).is_err() {
            return syntax("a number out of range");
        }
        Ok(())
    }

    /// Checks and skips the next value, whatever it is.
    pub fn skip(&mut self) -> Result<()> {
        match self.kind()? {
            Kind::Object => self.object(|s, _| s.skip()),
            Kind::Array => self.array(|s| s.skip()),
            Kind::String => self.string(0).map(|_| ()),
            Kind::Number => self.number(),
            Kind::Literal => match self.peek()? {
                Some(b't') => self.literal(b"true"),
                Some(b'f') => self.literal(b"false"),
                _ => self.literal(b"null"),
            },
        }
    }

    /// The next value, whole (for what replay reports: it is held anyway).
    pub fn value(&mut self) -> Result<Value> {
        self.skip_ws()?;
        self.tee = Some(Vec::new());
        let skipped = self.skip();
        let raw = self.tee.take().unwrap_or_default();
        skipped?;
        serde_json::from_slice(&raw).map_err(|_| ScanError::Syntax("invalid value"))
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
