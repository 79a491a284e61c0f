//! Output modes. Each consumes the agent's event stream and owns stdout: `print` writes only
//! the final assistant text, `json` writes one JSON object per line and nothing else.

pub mod json;
pub mod print;

use tokio::sync::mpsc;

use crate::agent::events::AgentEvent;
use crate::message::{AssistantMessage, Message};

/// What a mode saw, for the exit code.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The last assistant message of the whole run.
    pub last_assistant: Option<AssistantMessage>,
}

impl Outcome {
    fn observe(&mut self, event: &AgentEvent) {
        if let AgentEvent::MessageEnd {
            message: Message::Assistant(m),
        } = event
        {
            self.last_assistant = Some(m.clone());
        }
    }
}

pub enum OutputMode {
    Print { verbose: bool, explain: bool },
    Json { header: serde_json::Value },
}

/// Appends every finished message to the session file (lazily created by the store).
fn persist(session: &mut Option<crate::session::Session>, ev: &AgentEvent) {
    let (Some(s), AgentEvent::MessageEnd { message }) = (session.as_mut(), ev) else {
        return;
    };
    if let Err(e) = s.append_message(message.clone()) {
        eprintln!("Warning: cannot write the session file: {e}; this run is no longer saved");
        *session = None;
    }
}

/// Consume events until the agent side closes the channel, saving finished messages to
/// `session` when there is one.
pub async fn consume(
    mode: OutputMode,
    mut rx: mpsc::UnboundedReceiver<AgentEvent>,
    mut session: Option<crate::session::Session>,
) -> Outcome {
    let mut outcome = Outcome::default();
    match mode {
        OutputMode::Print { verbose, explain } => {
            let mut p = print::Print::new(verbose, explain);
            while let Some(ev) = rx.recv().await {
                outcome.observe(&ev);
                persist(&mut session, &ev);
                p.on_event(&ev);
            }
            p.finish(outcome.last_assistant.as_ref());
        }
        OutputMode::Json { header } => {
            let mut j = json::Json::new();
            j.write_value(&header);
            while let Some(ev) = rx.recv().await {
                outcome.observe(&ev);
                persist(&mut session, &ev);
                j.write_event(&ev);
            }
        }
    }
    outcome
}
