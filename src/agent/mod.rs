//! The agent loop: turns (request → stream → tool calls → results → next request) until the
//! model stops, tool batches, steering and follow-up queues, abort.
//!
//! The loop never prints. It emits [`events::AgentEvent`]s on a channel that modes consume, and
//! calls [`hooks::AgentHooks`] at every extension point so the extension host can attach
//! without reshaping it.

mod batch;
pub mod events;
pub mod hooks;
mod model_call;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::message::{now_ms, AssistantMessage, Message, UserContent, UserMessage};
use crate::provider::retry::RetryPolicy;
use crate::provider::{Model, Provider, ThinkingLevel};
use crate::tools::mutation::MutationQueue;
use crate::tools::ToolRegistry;
use events::AgentEvent;
use hooks::{AgentHooks, InputOutcome};

/// How queued steering / follow-up messages are delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueMode {
    /// One queued message per turn boundary.
    #[default]
    OneAtATime,
    /// Everything queued at once.
    All,
}

impl QueueMode {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "one-at-a-time" => Some(Self::OneAtATime),
            "all" => Some(Self::All),
            _ => None,
        }
    }
}

/// Everything fixed for a run.
pub struct AgentConfig {
    pub model: Model,
    pub api_key: Option<String>,
    pub thinking: ThinkingLevel,
    pub system_prompt: String,
    pub retry: RetryPolicy,
    pub cwd: PathBuf,
    pub steering_mode: QueueMode,
    pub follow_up_mode: QueueMode,
    /// Environment for tool processes (PI_PROVIDER, PI_MODEL, …).
    pub tool_env: Vec<(String, String)>,
    /// Expands prompt text after the `input` chain (`/skill:…`, `/template args`); `None` when
    /// the text is not an expansion.
    pub expand: Option<Expander>,
}

/// See [`AgentConfig::expand`].
pub type Expander = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

#[derive(Default)]
struct Queues {
    steering: Vec<String>,
    follow_up: Vec<String>,
}

/// A cheap handle to steer, queue follow-ups or abort a running agent from another task
/// (signal handlers, RPC).
#[derive(Clone)]
pub struct AgentHandle {
    queues: Arc<Mutex<Queues>>,
    /// The current run's token (between runs, a fresh one for what happens in between: hook
    /// commands, compaction, session operations). Always a child of `root`.
    cancel: Arc<Mutex<CancellationToken>>,
    /// Cancelled by [`stop`](Self::stop): this run and every later one are aborted.
    root: CancellationToken,
    /// The context, shared so hooks' host calls can read it while a run is in progress.
    transcript: Arc<Mutex<Vec<Message>>>,
    /// The active tool names when narrowed by `set_active_tools`; `None` means all registered.
    active: Arc<Mutex<Option<Vec<String>>>>,
}

impl AgentHandle {
    pub fn steer(&self, text: impl Into<String>) {
        self.lock().steering.push(text.into());
    }

    pub fn follow_up(&self, text: impl Into<String>) {
        self.lock().follow_up.push(text.into());
    }

    /// The current run's cancellation token (nested work started by hooks hangs off it).
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Cancel the current run: the model stream stops, running tool process trees die and
    /// waits on hooks end.
    pub fn abort(&self) {
        self.cancel
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .cancel();
    }

    /// Abort the current run and everything after it (pi is exiting on a signal): a run that
    /// starts after this is aborted from the start.
    pub fn stop(&self) {
        self.root.cancel();
    }

    /// Installs a fresh token (a new run, or the time between runs) and returns it.
    fn fresh_token(&self) -> CancellationToken {
        let token = self.root.child_token();
        *self.cancel.lock().unwrap_or_else(|p| p.into_inner()) = token.clone();
        token
    }

    /// A copy of the current context.
    pub fn messages(&self) -> Vec<Message> {
        self.transcript
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Replace the context between runs (after a compaction, a tree move or a fork: the
    /// session's context is the truth and the agent starts over from it).
    pub fn replace_messages(&self, messages: Vec<Message>) {
        *self.transcript.lock().unwrap_or_else(|p| p.into_inner()) = messages;
    }

    /// Narrow (or with `None`, restore) the tools offered to the model from the next call on.
    pub fn set_active_tools(&self, names: Option<Vec<String>>) {
        *self.active.lock().unwrap_or_else(|p| p.into_inner()) = names;
    }

    pub fn active_tools(&self) -> Option<Vec<String>> {
        self.active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn push(&self, m: Message) {
        self.transcript
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(m);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queues> {
        self.queues.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn take(&self, steering: bool, mode: QueueMode) -> Vec<String> {
        let mut q = self.lock();
        let list = if steering {
            &mut q.steering
        } else {
            &mut q.follow_up
        };
        match mode {
            QueueMode::All => std::mem::take(list),
            QueueMode::OneAtATime if list.is_empty() => Vec::new(),
            QueueMode::OneAtATime => vec![list.remove(0)],
        }
    }

    fn snapshot(&self) -> (Vec<String>, Vec<String>) {
        let q = self.lock();
        (q.steering.clone(), q.follow_up.clone())
    }
}

pub struct Agent {
    config: AgentConfig,
    provider: Arc<dyn Provider>,
    tools: Arc<ToolRegistry>,
    hooks: Arc<dyn AgentHooks>,
    events: mpsc::UnboundedSender<AgentEvent>,
    handle: AgentHandle,
    mutations: Arc<MutationQueue>,
    /// This run's system prompt after the `before_agent_start` chain.
    run_system_prompt: Option<String>,
    observer: Option<EventObserver>,
}

/// Sees every event synchronously, before any consumer: what must not lag behind the run
/// (the session file) is written here, so a message is on disk once `prompt` returns.
pub type EventObserver = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

impl Agent {
    pub fn new(
        config: AgentConfig,
        provider: Arc<dyn Provider>,
        tools: Arc<ToolRegistry>,
        hooks: Arc<dyn AgentHooks>,
        events: mpsc::UnboundedSender<AgentEvent>,
    ) -> Self {
        let root = CancellationToken::new();
        Agent {
            config,
            provider,
            tools,
            hooks,
            events,
            handle: AgentHandle {
                queues: Arc::default(),
                cancel: Arc::new(Mutex::new(root.child_token())),
                root,
                transcript: Arc::default(),
                active: Arc::default(),
            },
            mutations: Arc::default(),
            run_system_prompt: None,
            observer: None,
        }
    }

    pub fn observe(&mut self, observer: EventObserver) {
        self.observer = Some(observer);
    }

    pub fn handle(&self) -> AgentHandle {
        self.handle.clone()
    }

    pub fn messages(&self) -> Vec<Message> {
        self.handle.messages()
    }

    /// Start from an earlier conversation (a resumed session's context).
    pub fn load_messages(&mut self, messages: Vec<Message>) {
        *self
            .handle
            .transcript
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = messages;
    }

    /// Whether a registered tool is currently offered to the model.
    fn is_active(&self, name: &str) -> bool {
        match self.handle.active_tools() {
            Some(list) => list.iter().any(|n| n == name),
            None => true,
        }
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
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
    async fn push_message(&mut self, message: Message, run: &mut Vec<Message>) -> Message {
        self.emit(AgentEvent::MessageStart {
            message: message.clone(),
        });
        self.finish_message(message, run).await
    }

    /// The `message_end` half of [`Self::push_message`], for a message whose start was
    /// already emitted while it streamed.
    async fn finish_message(&mut self, message: Message, run: &mut Vec<Message>) -> Message {
        let replaced = self.hooks.message_end(message.clone()).await;
        let message = if std::mem::discriminant(&replaced) == std::mem::discriminant(&message) {
            replaced
        } else {
            tracing::warn!("message_end hook changed the message role; ignored");
            message
        };
        self.emit(AgentEvent::MessageEnd {
            message: message.clone(),
        });
        self.handle.push(message.clone());
        run.push(message.clone());
        message
    }

    fn queue_update(&self) {
        let (steering, follow_up) = self.handle.snapshot();
        self.emit(AgentEvent::QueueUpdate {
            steering,
            follow_up,
        });
    }

    /// Run one prompt to completion. Returns the last assistant message, if a turn ran.
    pub async fn prompt(&mut self, content: UserContent) -> Option<AssistantMessage> {
        // A fresh token per run, so an abort of the previous run does not leak into this one
        // (nor, once it ends, into what happens before the next).
        let cancel = self.handle.fresh_token();
        let last = self.prompt_run(content, &cancel).await;
        self.handle.fresh_token();
        last
    }

    async fn prompt_run(
        &mut self,
        content: UserContent,
        cancel: &CancellationToken,
    ) -> Option<AssistantMessage> {
        let content = match content {
            UserContent::Text(text) => match self.hooks.input(text).await {
                InputOutcome::Continue(t) => {
                    let expanded = self.config.expand.as_ref().and_then(|f| f(&t));
                    // pi stores a prompt as one text block, never a bare string.
                    UserContent::Blocks(vec![crate::message::Content::text(expanded.unwrap_or(t))])
                }
                InputOutcome::Handled => return None,
            },
            blocks => blocks,
        };
        let prompt_text = content.as_text();
        // Hooks chain from the configured prompt on every run, so an appending hook does not
        // append again and again.
        let start = self
            .hooks
            .before_agent_start(&prompt_text, self.config.system_prompt.clone())
            .await;
        self.run_system_prompt = Some(start.system_prompt);

        self.emit(AgentEvent::AgentStart);
        // pi opens the first turn before the prompt's messages, so they belong to turn 0.
        self.emit(AgentEvent::TurnStart {
            turn_index: 0,
            timestamp: now_ms(),
        });
        let mut run = Vec::new();
        for m in start.messages {
            self.push_message(m, &mut run).await;
        }
        let user = Message::User(UserMessage {
            content,
            timestamp: now_ms(),
        });
        self.push_message(user, &mut run).await;

        let last = self.run_turns(cancel, &mut run).await;
        self.emit(AgentEvent::AgentEnd { messages: run });
        last
    }

    /// Run again from the current context without a new user message (pi's `continue`): after
    /// an overflow was compacted away, the failed turn is retried this way.
    pub async fn continue_run(&mut self) -> Option<AssistantMessage> {
        let cancel = self.handle.fresh_token();
        if self.run_system_prompt.is_none() {
            self.run_system_prompt = Some(self.config.system_prompt.clone());
        }
        self.emit(AgentEvent::AgentStart);
        self.emit(AgentEvent::TurnStart {
            turn_index: 0,
            timestamp: now_ms(),
        });
        let mut run = Vec::new();
        let last = self.run_turns(&cancel, &mut run).await;
        self.emit(AgentEvent::AgentEnd { messages: run });
        self.handle.fresh_token();
        last
    }

    async fn run_turns(
        &mut self,
        cancel: &CancellationToken,
        run: &mut Vec<Message>,
    ) -> Option<AssistantMessage> {
        let mut turn_index = 0usize;
        let mut last = None;
        loop {
            if turn_index > 0 {
                self.emit(AgentEvent::TurnStart {
                    turn_index,
                    timestamp: now_ms(),
                });
            }
            let (assistant, started) = self.call_model(cancel).await;
            let message = if started {
                self.finish_message(Message::Assistant(assistant), run)
                    .await
            } else {
                self.push_message(Message::Assistant(assistant), run).await
            };
            let Message::Assistant(assistant) = message.clone() else {
                return last;
            };
            last = Some(assistant.clone());
            let failed = matches!(
                assistant.stop_reason,
                crate::message::StopReason::Error | crate::message::StopReason::Aborted
            );
            let calls: Vec<_> = assistant.tool_calls().into_iter().cloned().collect();
            let results = if failed || calls.is_empty() {
                Vec::new()
            } else {
                self.run_batch(&calls, cancel, run).await
            };
            self.emit(AgentEvent::TurnEnd {
                turn_index,
                message: message.clone(),
                tool_results: results.clone(),
            });
            if failed {
                return last;
            }
            let boundary = self.hooks.turn_end(turn_index, &message, &results).await;
            for m in boundary.messages {
                self.push_message(m, run).await;
            }
            turn_index += 1;

            if cancel.is_cancelled() {
                // The batch was aborted: end with an aborted assistant message, as pi does.
                let m = &self.config.model;
                let mut aborted = AssistantMessage::empty(&m.api, &m.provider, &m.id);
                aborted.stop_reason = crate::message::StopReason::Aborted;
                aborted.error_message = Some("Request was aborted".into());
                self.push_message(Message::Assistant(aborted.clone()), run)
                    .await;
                return Some(aborted);
            }
            let steering = self.handle.take(true, self.config.steering_mode);
            if !steering.is_empty() {
                self.queue_update();
                for s in steering {
                    self.push_message(Message::user(s), run).await;
                }
                continue;
            }
            if !calls.is_empty() || boundary.continue_run {
                continue;
            }
            let follow = self.handle.take(false, self.config.follow_up_mode);
            if !follow.is_empty() {
                self.queue_update();
                for s in follow {
                    self.push_message(Message::user(s), run).await;
                }
                continue;
            }
            let settle = self.hooks.agent_before_settle(&self.messages()).await;
            let cont = settle.continue_run;
            for m in settle.messages {
                self.push_message(m, run).await;
            }
            if !cont {
                return last;
            }
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod abort_tests;
