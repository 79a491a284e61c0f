//! [`AgentHandle`]: everything about the agent that other tasks read or change while a run is in
//! progress — the steering and follow-up queues, the run's cancellation tokens, the context,
//! the active tools, and the run's configuration, provider and tool registry. The loop reads
//! the configuration at each model call and tool batch, so a model, thinking level or queue
//! mode changed from outside (a session controller, a hook) takes effect at the next turn, as
//! in pi; nothing here waits for the run.

use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

use super::{AgentConfig, QueueMode};
use crate::message::{now_ms, Message, UserContent, UserMessage};
use crate::provider::Provider;
use crate::tools::ToolRegistry;

/// Messages waiting for the run. Steering and follow-up queues hold user messages and
/// extensions' messages alike (`queue_update` lists only the user's, as pi does).
#[derive(Default)]
struct Queues {
    steering: Vec<Message>,
    follow_up: Vec<Message>,
    /// Extensions' messages for the next run's start (`deliver_as: next_turn`).
    next_turn: Vec<Message>,
    /// Extensions' messages sent during a run without asking for a turn: they join the
    /// context when the current turn ends, never between a tool call and its result.
    deferred: Vec<Message>,
}

/// A queued user message: stamped when it was queued, as pi does.
fn user_message(content: UserContent) -> Message {
    Message::User(UserMessage {
        content,
        timestamp: now_ms(),
    })
}

/// The user messages' text, as `queue_update` shows the queues.
fn user_texts(list: &[Message]) -> Vec<String> {
    list.iter()
        .filter_map(|m| match m {
            Message::User(u) => Some(u.content.as_text()),
            _ => None,
        })
        .collect()
}

/// The run's configuration with the provider and tools it uses.
struct Setup {
    config: AgentConfig,
    provider: Arc<dyn Provider>,
    tools: Arc<ToolRegistry>,
}

struct Shared {
    queues: Mutex<Queues>,
    /// The current run's token (between runs, a fresh one for what happens in between: hook
    /// commands, compaction, session operations). Always a child of `root`.
    cancel: Mutex<CancellationToken>,
    /// Cancelled by [`AgentHandle::stop`]: this run and every later one are aborted.
    root: CancellationToken,
    /// Cancelled by [`AgentHandle::abort_retry`]: ends the current wait before a retry.
    retry: Mutex<CancellationToken>,
    /// The context, shared so hooks' host calls and queries can read it during a run. Its
    /// messages are the session's own allocations (see [`crate::session::AgentMessage`]), so
    /// reading or replacing it moves pointers, never the conversation.
    transcript: Mutex<Vec<Arc<Message>>>,
    /// The active tool names when narrowed by `set_active_tools`; `None` means every tool
    /// offered by default (see `ToolRegistry::offers`).
    active: Mutex<Option<Vec<String>>>,
    /// The per-file locks every file-mutating tool of this agent takes, nested calls and
    /// hooks' `tools.with_file_lock` included.
    mutations: Arc<crate::tools::mutation::MutationQueue>,
    setup: Mutex<Setup>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No critical section here panics; a poisoned lock still holds consistent data.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A cheap handle to steer, queue follow-ups, abort, reconfigure or read a running agent from
/// another task (signal handlers, the session controller, hooks' host calls).
#[derive(Clone)]
pub struct AgentHandle {
    shared: Arc<Shared>,
}

impl AgentHandle {
    pub(super) fn new(
        config: AgentConfig,
        provider: Arc<dyn Provider>,
        tools: Arc<ToolRegistry>,
    ) -> Self {
        let root = CancellationToken::new();
        AgentHandle {
            shared: Arc::new(Shared {
                queues: Mutex::default(),
                cancel: Mutex::new(root.child_token()),
                root,
                retry: Mutex::new(CancellationToken::new()),
                transcript: Mutex::default(),
                active: Mutex::default(),
                mutations: Arc::default(),
                setup: Mutex::new(Setup {
                    config,
                    provider,
                    tools,
                }),
            }),
        }
    }

    pub fn steer(&self, content: UserContent) {
        self.steer_message(user_message(content));
    }

    pub fn follow_up(&self, content: UserContent) {
        self.follow_up_message(user_message(content));
    }

    /// Queue any context message (an extension's included) as steering.
    pub fn steer_message(&self, message: Message) {
        lock(&self.shared.queues).steering.push(message);
    }

    /// Queue any context message (an extension's included) as a follow-up.
    pub fn follow_up_message(&self, message: Message) {
        lock(&self.shared.queues).follow_up.push(message);
    }

    /// Hold an extension's message for the next run's start.
    pub fn next_turn(&self, message: Message) {
        lock(&self.shared.queues).next_turn.push(message);
    }

    /// Hold an extension's message until the current turn ends.
    pub fn defer(&self, message: Message) {
        lock(&self.shared.queues).deferred.push(message);
    }

    pub(crate) fn take_next_turn(&self) -> Vec<Message> {
        std::mem::take(&mut lock(&self.shared.queues).next_turn)
    }

    pub(crate) fn take_deferred(&self) -> Vec<Message> {
        std::mem::take(&mut lock(&self.shared.queues).deferred)
    }

    /// The queued steering and follow-up user messages' text, as `queue_update` shows them.
    pub fn queued(&self) -> (Vec<String>, Vec<String>) {
        let q = lock(&self.shared.queues);
        (user_texts(&q.steering), user_texts(&q.follow_up))
    }

    /// How many messages wait in the queues.
    pub fn pending_count(&self) -> usize {
        let q = lock(&self.shared.queues);
        q.steering.len() + q.follow_up.len()
    }

    /// Empties the steering and follow-up queues and returns their user messages' text
    /// (steering, follow-up).
    pub fn clear_queues(&self) -> (Vec<String>, Vec<String>) {
        let mut q = lock(&self.shared.queues);
        let steering = std::mem::take(&mut q.steering);
        let follow_up = std::mem::take(&mut q.follow_up);
        (user_texts(&steering), user_texts(&follow_up))
    }

    pub(super) fn take(&self, steering: bool, mode: QueueMode) -> Vec<Message> {
        let mut q = lock(&self.shared.queues);
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

    /// The current run's cancellation token (nested work started by hooks hangs off it).
    pub fn cancel_token(&self) -> CancellationToken {
        lock(&self.shared.cancel).clone()
    }

    /// Cancel the current run: the model stream stops, running tool process trees die and
    /// waits on hooks end.
    pub fn abort(&self) {
        lock(&self.shared.cancel).cancel();
        self.abort_retry();
    }

    /// Abort the current run and everything after it (pi is exiting on a signal): a run that
    /// starts after this is aborted from the start.
    pub fn stop(&self) {
        self.shared.root.cancel();
    }

    /// Whether [`stop`](Self::stop) was called.
    pub fn is_stopped(&self) -> bool {
        self.shared.root.is_cancelled()
    }

    /// Installs a fresh token for what starts now (a run, or an operation between runs) and
    /// returns it; an abort of what came before does not carry over. Only the owner of the
    /// agent (the one running it, or an operation that holds it) should call this: it replaces
    /// the token of a run in progress.
    pub fn fresh_token(&self) -> CancellationToken {
        let token = self.shared.root.child_token();
        *lock(&self.shared.cancel) = token.clone();
        token
    }

    /// Ends the wait before an automatic retry: the failed attempt's error becomes the turn's
    /// outcome and no further attempt is made.
    pub fn abort_retry(&self) {
        lock(&self.shared.retry).cancel();
    }

    /// A fresh retry token for one model call.
    pub(super) fn fresh_retry_token(&self) -> CancellationToken {
        let token = CancellationToken::new();
        *lock(&self.shared.retry) = token.clone();
        token
    }

    /// The current context: the list is new, the messages are shared.
    pub fn messages(&self) -> Vec<Arc<Message>> {
        lock(&self.shared.transcript).clone()
    }

    pub fn message_count(&self) -> usize {
        lock(&self.shared.transcript).len()
    }

    /// Replace the context between runs (after a compaction, a tree move or a fork: the
    /// session's context is the truth and the agent starts over from it).
    pub fn replace_messages(&self, messages: Vec<Arc<Message>>) {
        *lock(&self.shared.transcript) = messages;
    }

    /// Add a message to the context without an event (what the user's own shell command
    /// printed, for the next prompt).
    pub fn push(&self, m: impl Into<Arc<Message>>) {
        lock(&self.shared.transcript).push(m.into());
    }

    /// Narrow (or with `None`, restore) the tools offered to the model from the next call on.
    pub fn set_active_tools(&self, names: Option<Vec<String>>) {
        *lock(&self.shared.active) = names;
    }

    pub fn active_tools(&self) -> Option<Vec<String>> {
        lock(&self.shared.active).clone()
    }

    /// Add tools to a narrowed active list (tools registered while it is narrowed start
    /// active, as in pi); nothing to do while nothing narrowed it.
    pub fn extend_active_tools(&self, names: &[String]) {
        if let Some(list) = lock(&self.shared.active).as_mut() {
            for n in names {
                if !list.contains(n) {
                    list.push(n.clone());
                }
            }
        }
    }

    /// The run's per-file mutation locks.
    pub fn mutations(&self) -> Arc<crate::tools::mutation::MutationQueue> {
        self.shared.mutations.clone()
    }

    /// A copy of the run's configuration.
    pub fn config(&self) -> AgentConfig {
        lock(&self.shared.setup).config.clone()
    }

    /// What `f` reads of the run's configuration, without copying the rest (the model, the
    /// system prompt).
    pub fn read_config<R>(&self, f: impl FnOnce(&AgentConfig) -> R) -> R {
        f(&lock(&self.shared.setup).config)
    }

    /// Change the configuration; the next model call or tool batch uses it.
    pub fn update_config(&self, f: impl FnOnce(&mut AgentConfig)) {
        f(&mut lock(&self.shared.setup).config);
    }

    pub fn provider(&self) -> Arc<dyn Provider> {
        lock(&self.shared.setup).provider.clone()
    }

    /// Switch the provider (a model of another wire API) from the next model call on.
    pub fn set_provider(&self, provider: Arc<dyn Provider>) {
        lock(&self.shared.setup).provider = provider;
    }

    pub fn tools(&self) -> Arc<ToolRegistry> {
        lock(&self.shared.setup).tools.clone()
    }

    /// Replace the tool registry (hooks restarted, settings reloaded) from the next batch on.
    pub fn set_tools(&self, tools: Arc<ToolRegistry>) {
        lock(&self.shared.setup).tools = tools;
    }

    /// The configuration, provider and tools of one model call, read together.
    pub(super) fn snapshot(&self) -> (AgentConfig, Arc<dyn Provider>, Arc<ToolRegistry>) {
        let s = lock(&self.shared.setup);
        (s.config.clone(), s.provider.clone(), s.tools.clone())
    }

    /// The tools, and what `f` reads of the configuration, read together (a tool batch's).
    pub(super) fn tools_with<R>(
        &self,
        f: impl FnOnce(&AgentConfig) -> R,
    ) -> (R, Arc<ToolRegistry>) {
        let s = lock(&self.shared.setup);
        (f(&s.config), s.tools.clone())
    }
}
