//! JSON mode: one JSON object per line on stdout — the session header, then every agent event
//! with pi's names and fields. Lines end with LF only and are flushed as written, so a reader
//! can act on each event as it happens.

use std::io::Write;

use crate::agent::events::AgentEvent;

pub struct Json {
    out: std::io::Stdout,
}

impl Json {
    pub fn new() -> Self {
        Json {
            out: std::io::stdout(),
        }
    }

    pub fn write_value(&mut self, v: &serde_json::Value) {
        self.write_line(&v.to_string());
    }

    pub fn write_event(&mut self, ev: &AgentEvent) {
        match serde_json::to_string(ev) {
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
