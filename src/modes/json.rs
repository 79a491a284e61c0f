//! JSON mode: one JSON object per line on stdout — the session header, then every agent event
//! with pi's names and fields. Lines end with LF only and are flushed as written, so a reader
//! can act on each event as it happens. Lines are terminal-safe JSON (`term::json`): the same
//! data, with C1 controls escaped like the C0 ones, since the stream is often read on a
//! terminal.

use std::io::Write;

use crate::agent::events::AgentEvent;

pub struct Json {
    out: std::io::Stdout,
}

impl Json {
    pub fn new() -> Self {
        #[allow(clippy::disallowed_methods)] // terminal-safe JSON lines only
        let out = std::io::stdout();
        Json { out }
    }

    pub fn write_value(&mut self, v: &serde_json::Value) {
        self.write_line(&crate::term::json::line(v));
    }

    pub fn write_event(&mut self, ev: &AgentEvent) {
        match crate::term::json::to_string(ev) {
            Ok(line) => self.write_line(&line),
            Err(e) => tracing::error!(error = %e, "event did not serialise"),
        }
    }

    fn write_line(&mut self, line: &str) {
        let mut lock = self.out.lock();
        let _ = lock.write_all(line.as_bytes());
        let _ = lock.write_all(b"\n");
        let _ = lock.flush();
    }
}

impl Default for Json {
    fn default() -> Self {
        Self::new()
    }
}
