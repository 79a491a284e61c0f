//! Print mode: the final assistant message's text blocks on stdout, each followed by a
//! newline, and nothing else there. A spinner runs on stderr while waiting on the model, only
//! when stderr is a terminal, so piped and captured runs stay clean.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::agent::events::AgentEvent;
use crate::message::{AssistantMessage, Content};

pub struct Print {
    spinner: Option<ProgressBar>,
    tty: bool,
}

impl Print {
    pub fn new() -> Self {
        Print {
            spinner: None,
            tty: std::io::stderr().is_terminal(),
        }
    }

    fn spin(&mut self, msg: &str) {
        if !self.tty {
            return;
        }
        let pb = self.spinner.get_or_insert_with(|| {
            let pb = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
                pb.set_style(style);
            }
            pb.enable_steady_tick(Duration::from_millis(100));
            pb
        });
        pb.set_message(msg.to_string());
    }

    fn stop(&mut self) {
        if let Some(pb) = self.spinner.take() {
            pb.finish_and_clear();
        }
    }

    pub fn on_event(&mut self, ev: &AgentEvent) {
        match ev {
            AgentEvent::TurnStart { .. } => self.spin("Working…"),
            AgentEvent::ToolExecutionStart { tool_name, .. } => {
                self.spin(&format!("Running {tool_name}…"))
            }
            AgentEvent::AutoRetryStart {
                attempt,
                max_attempts,
                error_message,
                ..
            } => {
                self.stop();
                eprintln!("Retrying ({attempt}/{max_attempts}) after error: {error_message}");
            }
            AgentEvent::AgentEnd { .. } => self.stop(),
            _ => {}
        }
    }

    /// Write the final text. Errors go to stderr; the caller decides the exit code.
    pub fn finish(&mut self, last: Option<&AssistantMessage>) {
        self.stop();
        let Some(m) = last else { return };
        let mut out = std::io::stdout().lock();
        for c in &m.content {
            if let Content::Text { text } = c {
                let _ = writeln!(out, "{text}");
            }
        }
        let _ = out.flush();
    }
}

impl Default for Print {
    fn default() -> Self {
        Self::new()
    }
}
