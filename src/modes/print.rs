//! Print mode: the final assistant message's text blocks on stdout, each followed by a
//! newline, and nothing else there. A spinner runs on stderr while waiting on the model, only
//! when stderr is a terminal, so piped and captured runs stay clean. With `--verbose`, each
//! tool call and its outcome is reported on stderr as it happens.
//!
//! stderr lines go through the terminal rule (`term_eprintln!`). The answer on stdout is data
//! when it is piped or redirected and is written as the model wrote it; on a terminal it is
//! shown, so it goes through the rule too.

use std::io::Write;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::agent::events::AgentEvent;
use crate::message::{AssistantMessage, Content};
use crate::term::out::{is_terminal, To};
use crate::term::sanitize;

pub struct Print {
    spinner: Option<ProgressBar>,
    tty: bool,
    verbose: bool,
    explain: bool,
}

/// The first line of a text, cut to `max` characters.
/// `--explain`: what the hooks decided on an event, and each hook's answer.
fn explain(d: &crate::agent::events::HookDecision) {
    let target = match (&d.tool_name, &d.tool_call_id) {
        (Some(t), Some(id)) => format!(" {t} ({id})"),
        _ => String::new(),
    };
    term_eprintln!("hooks on {}{target}: {}", d.event, d.outcome);
    for a in &d.answers {
        let why = a
            .reason
            .as_deref()
            .map(|r| format!(" — {r}"))
            .unwrap_or_default();
        let patch = a
            .patch
            .as_ref()
            .map(|p| format!(" {p}"))
            .unwrap_or_default();
        term_eprintln!(
            "  {:<16} {:<12} {:>8} µs{patch}{why}",
            a.hook,
            a.outcome,
            a.latency_us
        );
    }
}

fn first_line(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max || s.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

impl Print {
    pub fn new(verbose: bool, explain: bool) -> Self {
        Print {
            spinner: None,
            tty: is_terminal(To::Stderr),
            verbose,
            explain,
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
        pb.set_message(sanitize::row(msg).into_owned());
    }

    fn stop(&mut self) {
        if let Some(pb) = self.spinner.take() {
            pb.finish_and_clear();
        }
    }

    pub fn on_event(&mut self, ev: &AgentEvent) {
        match ev {
            AgentEvent::TurnStart { .. } => self.spin("Working…"),
            AgentEvent::ToolExecutionStart {
                tool_name, args, ..
            } => {
                if self.verbose {
                    self.stop();
                    let args = crate::term::json::line(args);
                    term_eprintln!("→ {tool_name} {}", first_line(&args, 120));
                }
                self.spin(&format!("Running {tool_name}…"));
            }
            AgentEvent::ToolExecutionEnd {
                tool_name,
                result,
                is_error,
                ..
            } if self.verbose => {
                self.stop();
                let mark = if *is_error { "✗" } else { "✓" };
                let text = crate::message::text_of(&result.content);
                let text = sanitize::strip_sgr(&text);
                term_eprintln!("  {mark} {tool_name}: {}", first_line(&text, 120));
            }
            AgentEvent::AutoRetryStart {
                attempt,
                max_attempts,
                error_message,
                ..
            } => {
                self.stop();
                term_eprintln!("Retrying ({attempt}/{max_attempts}) after error: {error_message}");
            }
            AgentEvent::AgentEnd { .. } => self.stop(),
            AgentEvent::CompactionStart { reason } => {
                if self.verbose {
                    self.stop();
                    term_eprintln!("Compacting the context ({reason})…");
                }
                self.spin("Compacting…");
            }
            AgentEvent::CompactionEnd {
                aborted,
                error_message,
                result,
                ..
            } => self.compaction_end(error_message.as_deref(), *aborted, result.as_ref()),
            // An MCP server that failed or was left behind is always shown: its tools are gone.
            AgentEvent::McpServer {
                server,
                state,
                tools,
                error,
            } => self.mcp_server(server, state, *tools, error.as_deref()),
            // Hook failures are always shown: a user must know which hook failed and how.
            AgentEvent::HookError {
                hook,
                event,
                message,
                ..
            } => {
                self.stop();
                term_eprintln!("hook {hook} failed on {event}: {message}");
            }
            AgentEvent::HookState {
                hook,
                state,
                detail,
            } => {
                self.stop();
                match detail {
                    Some(d) => term_eprintln!("hook {hook}: {state} ({d})"),
                    None => term_eprintln!("hook {hook}: {state}"),
                }
            }
            AgentEvent::HookDecision(d) if self.explain => {
                self.stop();
                explain(d);
            }
            _ => {}
        }
    }

    fn compaction_end(
        &mut self,
        error_message: Option<&str>,
        aborted: bool,
        result: Option<&serde_json::Value>,
    ) {
        self.stop();
        match (error_message, aborted) {
            // The event's text says which compaction failed, as pi 1.6 words it.
            (Some(e), _) => term_eprintln!("{e}"),
            (None, true) => term_eprintln!("Compaction cancelled"),
            (None, false) if self.verbose => {
                let before = result
                    .and_then(|r| r.get("tokensBefore"))
                    .and_then(serde_json::Value::as_u64)
                    .unwrap_or(0);
                term_eprintln!("Compacted ({before} tokens before)");
            }
            _ => {}
        }
    }

    fn mcp_server(&mut self, server: &str, state: &str, tools: usize, error: Option<&str>) {
        self.stop();
        match (state, error) {
            ("failed", Some(e)) => term_eprintln!("MCP server {server} failed: {e}"),
            ("unavailable", Some(e)) => term_eprintln!(
                "MCP server {server} is not available ({e}); going on without its tools"
            ),
            ("connected", _) if self.verbose => {
                term_eprintln!("MCP server {server} connected ({tools} tools)")
            }
            _ => {}
        }
    }

    /// Write the final text. Errors go to stderr; the caller decides the exit code.
    pub fn finish(&mut self, last: Option<&AssistantMessage>) {
        self.stop();
        let Some(m) = last else { return };
        let texts = m.content.iter().filter_map(|c| match c {
            Content::Text { text, .. } => Some(text),
            _ => None,
        });
        if is_terminal(To::Stdout) {
            for text in texts {
                term_println!("{text}");
            }
            return;
        }
        #[allow(clippy::disallowed_methods)] // not a terminal: the answer is data, kept as is
        let mut out = std::io::stdout().lock();
        for text in texts {
            let _ = writeln!(out, "{text}");
        }
        let _ = out.flush();
    }
}
