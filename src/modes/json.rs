//! JSON mode: one JSON object per line on stdout — the session header, then every agent event
//! with pi's names and fields. Lines end with LF only and are flushed as written, so a reader
//! can act on each event as it happens. Lines are terminal-safe JSON (`term::json`): the same
//! data, with C1 controls escaped like the C0 ones, since the stream is often read on a
//! terminal. The events are RPC's ([`EventMapper`]): pi 1.6 writes the same event objects in
//! both modes.

use std::io::Write;

use super::rpc::events::EventMapper;
use crate::agent::events::AgentEvent;

pub struct Json {
    out: std::io::Stdout,
    mapper: EventMapper,
    hook_events: bool,
}

impl Json {
    /// `hook_events`: pi's own events (`hook_*`, `mcp_server`) are written too.
    pub fn new(hook_events: bool) -> Self {
        #[allow(clippy::disallowed_methods)] // terminal-safe JSON lines only
        let out = std::io::stdout();
        Json {
            out,
            mapper: EventMapper::with_hook_events(hook_events),
            hook_events,
        }
    }

    pub fn write_value(&mut self, v: &serde_json::Value) {
        self.write_line(&crate::term::json::line(v));
    }

    pub fn write_event(&mut self, ev: &AgentEvent) {
        let line = match ev {
            // RPC answers a command's text in the prompt's response; here it is pi's own
            // `hook_command` event.
            AgentEvent::HookCommand { .. } if self.hook_events => crate::term::json::to_string(ev),
            _ => match self.mapper.map(ev.clone()) {
                Some(ev) => crate::term::json::to_string(&ev),
                None => return,
            },
        };
        match line {
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
