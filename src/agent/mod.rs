//! The agent loop: turns (request → stream → tool calls → results → next request) until the
//! model stops, tool batches, steering and follow-up queues, abort.
//!
//! The loop never prints. It emits [`events::AgentEvent`]s on a channel that modes consume, and
//! calls [`hooks::AgentHooks`] at every extension point so the extension host can attach
//! without reshaping it.

mod batch;
pub mod events;
mod handle;
pub mod hooks;
mod model_call;
mod run_prompt;
pub mod tool_run;

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::message::{now_ms, AssistantMessage, Message, UserContent, UserMessage};
use crate::provider::retry::RetryPolicy;
use crate::provider::{Model, Provider, ThinkingLevel};
use crate::resources::system_prompt::SystemPrompt;
pub use crate::setting_types::QueueMode;
use crate::tools::ToolRegistry;
use events::AgentEvent;
pub use handle::AgentHandle;
use hooks::AgentHooks;

/// The run's configuration. The loop reads it at every model call and tool batch through the
/// [`AgentHandle`], so changes made there (a new model or thinking level, other queue modes)
/// apply from the next turn on.
#[derive(Clone)]
pub struct AgentConfig {
    pub model: Model,
    pub api_key: Option<String>,
    pub thinking: ThinkingLevel,
    /// The prompt pi builds, as named sections; `before_agent_start` may change it per run.
    pub system_prompt: SystemPrompt,
    pub retry: RetryPolicy,
    pub cwd: PathBuf,
    pub steering_mode: QueueMode,
    pub follow_up_mode: QueueMode,
}

impl AgentConfig {
    /// Environment for tool processes: which provider, model and thinking level the run uses.
    pub fn tool_env(&self) -> Vec<(String, String)> {
        vec![
            ("PI_PROVIDER".into(), self.model.provider.clone()),
            ("PI_MODEL".into(), self.model.id.clone()),
            ("PI_REASONING_LEVEL".into(), self.thinking.as_str().into()),
        ]
    }
}

/// Expands prompt text after the `input` chain (`/skill:…`, `/template args`); `None` when
/// the text is not an expansion.
pub type Expander = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

pub struct Agent {
    hooks: Arc<dyn AgentHooks>,
    events: mpsc::UnboundedSender<AgentEvent>,
    handle: AgentHandle,
    /// This run's system prompt after the `before_agent_start` chain.
    run_system_prompt: Option<String>,
    /// The sections the run declares in the transcript (the hooks' edits applied).
    run_sections: Option<SystemPrompt>,
    /// The configured prompt `run_system_prompt` was made from: when the configured one
    /// changes during the run (`tools.set_active`, a tool registered), a run prompt no hook
    /// changed follows it from the next request.
    run_base_prompt: Option<String>,
    observer: Option<EventObserver>,
    recorder: Option<Recorder>,
    /// Where boundary entries that are not messages are added (the session).
    boundary_store: Option<Arc<dyn hooks::BoundaryStore>>,
    next_turn: Option<Arc<dyn hooks::NextTurn>>,
    requests: Option<RequestObserver>,
    session_id: Option<SessionIdSource>,
}

/// The id of the session a request belongs to, asked at each request (the session may have
/// been replaced between them).
pub type SessionIdSource = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// A model request as it was sent, with what sent it: enough to send it again (the session
/// controller's cache warmer replays it to keep its prompt cache entry alive).
#[derive(Clone)]
pub struct SentRequest {
    pub request: crate::provider::Request,
    pub provider: Arc<dyn Provider>,
    pub hooks: Arc<dyn crate::provider::ProviderHooks>,
    /// The context when it was sent (before the `context` chains): the request stays worth
    /// repeating while the context still starts with these very messages.
    pub transcript: Vec<Arc<Message>>,
}

/// Sees every model request of a run just before it is sent (each attempt).
pub type RequestObserver = Arc<dyn Fn(&SentRequest) + Send + Sync>;

/// Sees every event synchronously, before any consumer.
pub type EventObserver = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Sees every finished message synchronously, before its `message_end` reaches anyone: what
/// must not lag behind the run (the session file) is written here, so a message is on disk
/// once `prompt` returns.
pub type Recorder = Arc<dyn Fn(&Arc<Message>) + Send + Sync>;

impl Agent {
    pub fn new(
        config: AgentConfig,
        provider: Arc<dyn Provider>,
        tools: Arc<ToolRegistry>,
        hooks: Arc<dyn AgentHooks>,
        events: mpsc::UnboundedSender<AgentEvent>,
    ) -> Self {
        Agent {
            hooks,
            events,
            handle: AgentHandle::new(config, provider, tools),
            run_system_prompt: None,
            run_sections: None,
            run_base_prompt: None,
            observer: None,
            recorder: None,
            boundary_store: None,
            next_turn: None,
            requests: None,
            session_id: None,
        }
    }

    /// Where each request's session id comes from (none without it).
    pub fn session_id_from(&mut self, source: SessionIdSource) {
        self.session_id = Some(source);
    }

    pub fn observe(&mut self, observer: EventObserver) {
        self.observer = Some(observer);
    }

    /// Sees every finished message (each `message_end`) just before its event, as the very
    /// allocation the context keeps: the session stores that one, so a run adds each message
    /// to memory once.
    pub fn record(&mut self, recorder: Recorder) {
        self.recorder = Some(recorder);
    }

    /// Sees each model request just before it is sent.
    pub fn observe_requests(&mut self, observer: RequestObserver) {
        self.requests = Some(observer);
    }

    /// Where the boundary hooks' entries go (custom entries, context edits, compactions).
    pub fn boundary_store(&mut self, store: Arc<dyn hooks::BoundaryStore>) {
        self.boundary_store = Some(store);
    }

    /// What prepares each later turn of a run (threshold compaction).
    pub fn prepare_turns(&mut self, next_turn: Arc<dyn hooks::NextTurn>) {
        self.next_turn = Some(next_turn);
    }

    pub fn handle(&self) -> AgentHandle {
        self.handle.clone()
    }

    pub fn messages(&self) -> Vec<Arc<Message>> {
        self.handle.messages()
    }

    /// Start from an earlier conversation (a resumed session's context), sharing its messages.
    pub fn load_messages(&mut self, messages: Vec<Arc<Message>>) {
        self.handle.replace_messages(messages);
    }

    fn emit(&self, event: AgentEvent) {
        if let Some(o) = &self.observer {
            o(&event);
        }
        self.hooks.event(&event);
        let _ = self.events.send(event);
    }

    /// Append a message to the context with its `message_start` / `message_end` pair; the
    /// `message_end` chain may replace it (same role only).
    async fn push_message(
        &mut self,
        message: Message,
        run: &mut Vec<Arc<Message>>,
    ) -> Arc<Message> {
        let message = Arc::new(message);
        self.emit(AgentEvent::MessageStart {
            message: Arc::clone(&message),
        });
        self.finish_message(message, run).await
    }

    /// The `message_end` half of [`Self::push_message`], for a message whose start was
    /// already emitted while it streamed. The context, the session, the run's list and the
    /// events all share the one allocation.
    async fn finish_message(
        &mut self,
        message: Arc<Message>,
        run: &mut Vec<Arc<Message>>,
    ) -> Arc<Message> {
        let replaced = self.hooks.message_end(Arc::clone(&message)).await;
        let shared = if std::mem::discriminant(replaced.as_ref())
            == std::mem::discriminant(message.as_ref())
        {
            replaced
        } else {
            tracing::warn!("message_end hook changed the message role; ignored");
            message
        };
        self.emit_message_end(&shared);
        self.handle.push(Arc::clone(&shared));
        run.push(Arc::clone(&shared));
        shared
    }

    /// `message_end` for a finished message: the recorder first, then the event.
    fn emit_message_end(&self, message: &Arc<Message>) {
        if let Some(r) = &self.recorder {
            r(message);
        }
        self.emit(AgentEvent::MessageEnd {
            message: Arc::clone(message),
        });
    }

    fn queue_update(&self) {
        let (steering, follow_up) = self.handle.queued();
        self.emit(AgentEvent::QueueUpdate {
            steering,
            follow_up,
        });
    }

    /// Run one prompt to completion. Returns the last assistant message, if a turn ran.
    pub async fn prompt(&mut self, content: UserContent) -> Option<AssistantMessage> {
        let content = match content {
            // pi stores a prompt as one text block, never a bare string.
            UserContent::Text(t) => UserContent::Blocks(vec![crate::message::Content::text(t)]),
            blocks => blocks,
        };
        self.start(Message::User(UserMessage {
            content,
            timestamp: now_ms(),
        }))
        .await
    }

    /// Run from a starting message: the user's prompt, or an extension's message that asked
    /// for a turn. Its text is what `before_agent_start` sees as the prompt.
    pub async fn start(&mut self, trigger: Message) -> Option<AssistantMessage> {
        // A fresh token per run, so an abort of the previous run does not leak into this one
        // (nor, once it ends, into what happens before the next).
        let cancel = self.handle.fresh_token();
        let last = self.prompt_run(trigger, &cancel).await;
        self.handle.fresh_token();
        last
    }

    async fn prompt_run(
        &mut self,
        trigger: Message,
        cancel: &CancellationToken,
    ) -> Option<AssistantMessage> {
        let prompt_text = trigger
            .user_content()
            .map(UserContent::as_text)
            .unwrap_or_default();
        // Hooks chain from the configured prompt on every run, so an appending hook does not
        // append again and again.
        let base = self.handle.config().system_prompt;
        let start = self
            .hooks
            .before_agent_start(&prompt_text, base.clone())
            .await;
        self.run_system_prompt = Some(start.system_prompt);
        self.run_sections = Some(start.sections);
        self.run_base_prompt = Some(base.text().to_string());

        self.emit(AgentEvent::AgentStart);
        // pi opens the first turn before the prompt's messages, so they belong to turn 0.
        self.emit(AgentEvent::TurnStart {
            turn_index: 0,
            timestamp: now_ms(),
        });
        // pi's order: the prompt's system message when it changed, the starting message, the
        // extensions' messages held for this prompt, then those `before_agent_start` added.
        let mut run: Vec<Arc<Message>> = Vec::new();
        self.declare_system(&mut run).await;
        self.push_message(trigger, &mut run).await;
        for m in self.handle.take_next_turn() {
            self.push_message(m, &mut run).await;
        }
        for m in start.messages {
            self.push_message(m, &mut run).await;
        }

        let last = self.run_turns(cancel, &mut run).await;
        self.emit(AgentEvent::AgentEnd { messages: run });
        last
    }

    /// Run again from the current context without a new user message (pi's `continue`): after
    /// an overflow was compacted away, the failed turn is retried this way.
    pub async fn continue_run(&mut self) -> Option<AssistantMessage> {
        let cancel = self.handle.fresh_token();
        self.keep_run_prompt();
        self.emit(AgentEvent::AgentStart);
        self.emit(AgentEvent::TurnStart {
            turn_index: 0,
            timestamp: now_ms(),
        });
        let mut run: Vec<Arc<Message>> = Vec::new();
        self.declare_system(&mut run).await;
        let last = self.run_turns(&cancel, &mut run).await;
        self.emit(AgentEvent::AgentEnd { messages: run });
        self.handle.fresh_token();
        last
    }

    /// Run the messages that were queued after the last run ended (a follow-up that arrived
    /// as it settled): steering first, then follow-ups, each by its queue mode. `None` when the
    /// queues were empty and nothing ran.
    pub async fn run_queued(&mut self) -> Option<AssistantMessage> {
        let config = self.handle.config();
        let mut queued = self.handle.take(true, config.steering_mode);
        if queued.is_empty() {
            queued = self.handle.take(false, config.follow_up_mode);
        }
        if queued.is_empty() {
            return None;
        }
        let cancel = self.handle.fresh_token();
        self.keep_run_prompt();
        self.emit(AgentEvent::AgentStart);
        self.emit(AgentEvent::TurnStart {
            turn_index: 0,
            timestamp: now_ms(),
        });
        self.queue_update();
        let mut run: Vec<Arc<Message>> = Vec::new();
        self.declare_system(&mut run).await;
        for m in queued {
            self.push_message(m, &mut run).await;
        }
        let last = self.run_turns(&cancel, &mut run).await;
        self.emit(AgentEvent::AgentEnd { messages: run });
        self.handle.fresh_token();
        last
    }

    async fn run_turns(
        &mut self,
        cancel: &CancellationToken,
        run: &mut Vec<Arc<Message>>,
    ) -> Option<AssistantMessage> {
        let mut turn_index = 0usize;
        // The last assistant message, copied out once when the run ends.
        let mut last: Option<Arc<Message>> = None;
        let assistant_of = |m: Option<Arc<Message>>| match m.as_deref() {
            Some(Message::Assistant(a)) => Some(a.clone()),
            _ => None,
        };
        loop {
            if turn_index > 0 {
                if let Some(next) = &self.next_turn {
                    next.prepare().await;
                }
                self.emit(AgentEvent::TurnStart {
                    turn_index,
                    timestamp: now_ms(),
                });
                // Tools registered or narrowed during the run are declared before the request.
                self.declare_system(run).await;
            }
            let (assistant, started) = self.call_model(cancel).await;
            let message = if started {
                self.finish_message(Arc::new(Message::Assistant(assistant)), run)
                    .await
            } else {
                self.push_message(Message::Assistant(assistant), run).await
            };
            let Message::Assistant(assistant) = message.as_ref() else {
                return assistant_of(last);
            };
            last = Some(Arc::clone(&message));
            let outcome = match assistant.stop_reason {
                crate::message::StopReason::Error => hooks::Outcome::Error,
                crate::message::StopReason::Aborted => hooks::Outcome::Aborted,
                _ if cancel.is_cancelled() => hooks::Outcome::Aborted,
                _ => hooks::Outcome::Completed,
            };
            let failed = matches!(
                assistant.stop_reason,
                crate::message::StopReason::Error | crate::message::StopReason::Aborted
            );
            let calls = assistant.tool_calls();
            let (results, terminated) = if failed || calls.is_empty() {
                (Vec::new(), false)
            } else {
                let b = self.run_batch(&calls, cancel, run).await;
                (b.results, b.terminate)
            };
            // The hooks' boundary first (on failed and aborted turns too), then the stream's
            // `turn_end`.
            let boundary = self
                .hooks
                .turn_end(turn_index, &message, &results, outcome)
                .await;
            let applied = self.apply_boundary("turn_end", boundary.entries, run).await;
            // Sent during the turn without asking for one: now that the tool results are in.
            for m in self.handle.take_deferred() {
                self.push_message(m, run).await;
            }
            self.emit(AgentEvent::TurnEnd {
                turn_index,
                message: Arc::clone(&message),
                tool_results: results.clone(),
            });
            if failed {
                return assistant_of(last);
            }
            let go_on = boundary.continue_run && applied && self.can_continue("turn_end");
            turn_index += 1;

            if cancel.is_cancelled() {
                return Some(self.aborted_turn(turn_index, run).await);
            }
            if self.take_queued(true, run).await {
                continue;
            }
            // Every result of the batch asked to terminate: no follow-up call for it, as if
            // the model had stopped (a boundary hook's `continue` and queued follow-ups still
            // count).
            if (!calls.is_empty() && !terminated) || go_on {
                continue;
            }
            if self.take_queued(false, run).await {
                continue;
            }
            return assistant_of(last);
        }
    }

    /// The batch was aborted: the run ends with an aborted assistant message in a turn of its
    /// own, as pi 1.6 does.
    async fn aborted_turn(
        &mut self,
        turn_index: usize,
        run: &mut Vec<Arc<Message>>,
    ) -> AssistantMessage {
        self.emit(AgentEvent::TurnStart {
            turn_index,
            timestamp: now_ms(),
        });
        let config = self.handle.config();
        let m = config.model;
        let mut aborted = AssistantMessage::empty(&m.api, &m.provider, &m.id);
        aborted.stop_reason = crate::message::StopReason::Aborted;
        // pi 1.6 makes the request with the aborted signal; fetch refuses at once.
        aborted.error_message = Some("This operation was aborted".into());
        aborted.duration_ms = Some(0);
        aborted.thinking_level = Some(config.thinking.as_str().to_string());
        let message = self
            .push_message(Message::Assistant(aborted.clone()), run)
            .await;
        self.emit(AgentEvent::TurnEnd {
            turn_index,
            message,
            tool_results: Vec::new(),
        });
        aborted
    }

    /// Moves the queued steering (`steering`) or follow-up messages into the run, as the
    /// queue's mode lets them go; whether there were any (then the run goes on).
    async fn take_queued(&mut self, steering: bool, run: &mut Vec<Arc<Message>>) -> bool {
        let mode = self.handle.read_config(|c| {
            if steering {
                c.steering_mode
            } else {
                c.follow_up_mode
            }
        });
        let queued = self.handle.take(steering, mode);
        if queued.is_empty() {
            return false;
        }
        self.queue_update();
        for m in queued {
            self.push_message(m, run).await;
        }
        true
    }
}

mod boundary;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod abort_tests;
