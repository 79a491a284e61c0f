//! Messages hooks put into the conversation, as pi's `sendMessage` and `sendUserMessage` do.
//!
//! `message.send` adds an extension's own message (`role: "custom"`, stored as a
//! `custom_message` entry, sent to the model as a user message). Where it goes depends on
//! `deliver_as`, `trigger_turn` and whether a run streams, exactly as in pi 1.6:
//! `next_turn` waits for the next run's start (after its starting message); during a run it is steering (the default) or a
//! follow-up, unless `trigger_turn: false`, which holds it until the current turn ends (so it
//! never lands between a tool call and its result); while idle, `trigger_turn: true` starts a
//! run with it (through `before_agent_start`), and otherwise it is appended at once.
//!
//! `message.send_user` is a real user message: the `input` chain (source `extension`), no
//! template expansion or hook commands, then a run, or the queue its `deliver_as` names when
//! one streams (without one, refused, as a front end's prompt is).

use std::sync::Arc;

use super::run::{Origin, Starting};
use super::{lock, ControllerError, Core, Disposition, PromptRequest, StreamingBehavior};
use crate::agent::events::AgentEvent;
pub use crate::hooks::message_calls::Delivery;
use crate::message::{CustomMessage, Message};

/// What became of an extension's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivered {
    /// Queued as steering for the run in progress.
    Steer,
    /// Queued as a follow-up for the run in progress.
    FollowUp,
    /// Held for the next run's start.
    NextTurn,
    /// Held until the current turn ends.
    Deferred,
    /// Started a run.
    Started,
    /// Added to the context and the session at once (no run).
    Appended,
}

impl Delivered {
    pub fn as_str(self) -> &'static str {
        match self {
            Delivered::Steer => "steer",
            Delivered::FollowUp => "follow_up",
            Delivered::NextTurn => "next_turn",
            Delivered::Deferred => "deferred",
            Delivered::Started => "started",
            Delivered::Appended => "appended",
        }
    }
}

impl Core {
    /// `message.send`: see the module comment.
    pub(super) async fn send_custom(
        &self,
        message: CustomMessage,
        deliver_as: Option<Delivery>,
        trigger_turn: Option<bool>,
    ) -> Delivered {
        let message = Message::Custom(message);
        if deliver_as == Some(Delivery::NextTurn) {
            self.handle.next_turn(message);
            return Delivered::NextTurn;
        }
        let aborts = {
            let mut status = lock(&self.status);
            if status.streaming {
                if trigger_turn == Some(false) {
                    self.handle.defer(message);
                    return Delivered::Deferred;
                }
                return if deliver_as == Some(Delivery::FollowUp) {
                    self.handle.follow_up_message(message);
                    Delivered::FollowUp
                } else {
                    self.handle.steer_message(message);
                    Delivered::Steer
                };
            }
            if trigger_turn != Some(true) {
                // Under the status lock, so no run starts between the check and the append.
                self.append_custom(message);
                return Delivered::Appended;
            }
            match self.begin_streaming(&mut status) {
                Some(aborts) => aborts,
                None => return Delivered::Steer,
            }
        };
        let starting = Starting { core: Some(self) };
        let agent = self.take_agent(aborts).await;
        if self
            .spawn_run(starting, agent, message, aborts, || async {})
            .await
        {
            Delivered::Started
        } else {
            Delivered::Appended
        }
    }

    /// An extension's message joins the context now: stored, in the agent's context, and shown
    /// (`message_start`/`message_end`, as pi emits them for it).
    fn append_custom(&self, message: Message) {
        let message = Arc::new(message);
        let _ = self
            .session
            .record(|s| s.append_message(Arc::clone(&message)));
        self.handle.push(Arc::clone(&message));
        self.emit(AgentEvent::MessageStart {
            message: Arc::clone(&message),
        });
        self.emit(AgentEvent::MessageEnd { message });
    }

    /// After a run: extensions' messages that were held for the end of a turn that never came.
    pub(super) fn flush_deferred(&self) {
        for m in self.handle.take_deferred() {
            self.append_custom(m);
        }
    }

    /// `message.send_user`: see the module comment.
    pub(super) async fn send_user(
        &self,
        text: String,
        deliver_as: Option<Delivery>,
    ) -> Result<Disposition, ControllerError> {
        let streaming_behavior = match deliver_as {
            None => None,
            Some(Delivery::Steer) => Some(StreamingBehavior::Steer),
            Some(Delivery::FollowUp) => Some(StreamingBehavior::FollowUp),
            Some(Delivery::NextTurn) => return Err(ControllerError::NextTurnUserMessage),
        };
        let req = PromptRequest {
            message: text,
            images: Vec::new(),
            streaming_behavior,
        };
        let out = self.prompt(req, Origin::Extension, || async {}).await?;
        Ok(out.disposition)
    }
}
