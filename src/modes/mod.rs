//! Output modes, thin front ends over the session controller. Each consumes the controller's
//! event stream and owns stdout: `print` writes only the final assistant text, `json` writes
//! one JSON object per line and nothing else; `oneshot` submits a print or JSON run's prompts.

pub mod interactive;
pub mod json;
pub mod oneshot;
pub mod print;
pub mod rpc;

use tokio::sync::mpsc;

use crate::agent::events::AgentEvent;
use crate::message::{AssistantMessage, Message};

/// What a mode saw, for the exit code.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The last assistant message of the whole run.
    last: Option<std::sync::Arc<Message>>,
}

impl Outcome {
    fn observe(&mut self, event: &AgentEvent) {
        if let AgentEvent::MessageEnd { message } = event {
            if matches!(message.as_ref(), Message::Assistant(_)) {
                self.last = Some(std::sync::Arc::clone(message));
            }
        }
    }

    /// The last assistant message of the whole run.
    pub fn last_assistant(&self) -> Option<&AssistantMessage> {
        match self.last.as_deref() {
            Some(Message::Assistant(m)) => Some(m),
            _ => None,
        }
    }
}

pub enum OutputMode {
    Print {
        verbose: bool,
        explain: bool,
    },
    /// `hook_events`: pi's own events too (`--hook-events`).
    Json {
        header: serde_json::Value,
        hook_events: bool,
    },
}

/// Consume events until the agent side closes the channel. (The session file is written by
/// the run itself as each message ends, not here, so it never lags behind the agent.)
pub async fn consume(mode: OutputMode, mut rx: mpsc::UnboundedReceiver<AgentEvent>) -> Outcome {
    let mut outcome = Outcome::default();
    match mode {
        OutputMode::Print { verbose, explain } => {
            let mut p = print::Print::new(verbose, explain);
            while let Some(ev) = rx.recv().await {
                outcome.observe(&ev);
                p.on_event(&ev);
            }
            p.finish(outcome.last_assistant());
        }
        OutputMode::Json {
            header,
            hook_events,
        } => {
            let mut j = json::Json::new(hook_events);
            j.write_value(&header);
            while let Some(ev) = rx.recv().await {
                outcome.observe(&ev);
                j.write_event(&ev);
            }
        }
    }
    outcome
}
