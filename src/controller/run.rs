//! Prompts and runs. `prompt` answers at once: a hook's `/command` runs right away (even
//! during a run) and is `handled`; otherwise the `input` chain and skill/template expansion
//! run, and the prompt either starts a run (`started`), is queued for the run in progress
//! with its `streamingBehavior` (`queued`), or — during a run without one — is refused. The
//! run goes on in a task of its own that holds the agent until the run has settled: the
//! agent loop, then the compaction checks (overflow-retry or threshold), then messages that
//! were queued as it ended, then `agent_settled`.
//!
//! Messages queued while streaming are pushed under the same lock that ends streaming, so a
//! follow-up sent just as a run settles is either delivered by that run or starts the next;
//! it is never stranded in the queue.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::OwnedMutexGuard;

use super::{
    lock, ControllerError, Core, Disposition, ImageInput, PromptOutcome, PromptRequest,
    QueuedMessages, SessionController, StreamingBehavior,
};
use crate::agent::events::AgentEvent;
use crate::agent::hooks::{InputOutcome, InputSource, Outcome};
use crate::agent::Agent;
use crate::hooks::events::NotifyEvent;
use crate::hooks::instance::HookInstance;
use crate::message::{
    now_ms, AssistantMessage, Content, Message, StopReason, UserContent, UserMessage,
};

/// Where a prompt comes from: the front end (its `input` source; hook commands, skills and
/// templates apply), or a hook's `message.send_user` (source `extension`, taken literally, as
/// pi's `sendUserMessage` is).
#[derive(Debug, Clone, Copy)]
pub(super) enum Origin {
    FrontEnd,
    Extension,
}

/// `/name args` when `name` is a hook's command.
fn split_command(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    Some((name, args.trim()))
}

/// Marks the hook whose command runs; when the command ends (or its caller gives up on it)
/// the mark is cleared and instances it retired are stopped.
struct CommandMark<'a> {
    core: &'a Core,
}

impl Drop for CommandMark<'_> {
    fn drop(&mut self) {
        *lock(&self.core.command) = None;
        let retired = std::mem::take(&mut *lock(&self.core.retired));
        if !retired.is_empty() {
            // Normally stopped (and awaited) by `finish_command`; this covers a caller that
            // dropped the command half-way.
            tokio::spawn(async move {
                crate::hooks::host::shutdown_all(&retired, "replaced").await;
            });
        }
    }
}

/// Ends the streaming a prompt began when no run takes it over (a hook handled the input, or
/// the caller dropped the prompt half-way).
pub(super) struct Starting<'a> {
    pub(super) core: Option<&'a Core>,
}

impl Starting<'_> {
    pub(super) fn hand_over(mut self) {
        self.core = None;
    }
}

impl Drop for Starting<'_> {
    fn drop(&mut self) {
        if let Some(core) = self.core {
            lock(&core.status).streaming = false;
            core.idle.send_replace(true);
        }
    }
}

impl Core {
    /// Runs the hook command `/name args` if a hook registered `name`.
    async fn run_command(&self, text: &str) -> Option<Result<PromptOutcome, ControllerError>> {
        let (name, args) = split_command(text)?;
        let hook = self.hooks().command_owner(name)?;
        Some(self.command(hook, name, args).await)
    }

    async fn command(
        &self,
        hook: Arc<HookInstance>,
        name: &str,
        args: &str,
    ) -> Result<PromptOutcome, ControllerError> {
        *lock(&self.command) = Some(hook.clone());
        let mark = CommandMark { core: self };
        let reply = hook.command(name, args, hook.spec().event_timeout).await;
        // The hook answered; an older generation it belonged to may now stop.
        let retired = std::mem::take(&mut *lock(&self.retired));
        drop(mark);
        crate::hooks::host::shutdown_all(&retired, "replaced").await;
        match reply {
            Ok(v) => {
                let text = v
                    .get("text")
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_string);
                self.emit(AgentEvent::HookCommand {
                    hook: hook.name(),
                    name: name.to_string(),
                    text: text.clone(),
                });
                Ok(PromptOutcome {
                    disposition: Disposition::Handled,
                    command_text: text,
                })
            }
            Err(e) => Err(ControllerError::CommandFailed {
                name: name.to_string(),
                message: e.to_string(),
            }),
        }
    }

    /// The `input` chain, then skill and template expansion; `None` when a hook handled it.
    async fn process_input(
        &self,
        text: String,
        images: &[ImageInput],
        origin: Origin,
    ) -> Option<UserContent> {
        let source = match origin {
            Origin::FrontEnd => self.fixed.input_source,
            Origin::Extension => InputSource::Extension,
        };
        let text = match self.current_hooks.get().input(text, source).await {
            InputOutcome::Continue(t) => t,
            InputOutcome::Handled => return None,
        };
        let expanded = match origin {
            Origin::FrontEnd => self
                .env()
                .resources
                .expander()
                .and_then(|expand| expand(&text)),
            Origin::Extension => None,
        };
        // pi stores a prompt as blocks: its text, then its images.
        let mut blocks = vec![Content::text(expanded.unwrap_or(text))];
        blocks.extend(images.iter().map(ImageInput::content));
        Some(UserContent::Blocks(blocks))
    }

    fn queue(&self, content: UserContent, how: StreamingBehavior) {
        match how {
            StreamingBehavior::Steer => self.handle.steer(content),
            StreamingBehavior::FollowUp => self.handle.follow_up(content),
        }
        let (steering, follow_up) = self.handle.queued();
        self.emit(AgentEvent::QueueUpdate {
            steering,
            follow_up,
        });
    }

    pub(super) async fn prompt<F: Future<Output = ()> + Send>(
        &self,
        req: PromptRequest,
        origin: Origin,
        on_start: impl FnOnce() -> F + Send,
    ) -> Result<PromptOutcome, ControllerError> {
        if matches!(origin, Origin::FrontEnd) {
            if let Some(done) = self.run_command(&req.message).await {
                return done;
            }
        }
        // Input is processed once; the loop only decides, under the status lock, whether it
        // is queued for the run in progress or starts the next one.
        let mut content: Option<UserContent> = None;
        let aborts = loop {
            if self.is_streaming() {
                let Some(how) = req.streaming_behavior else {
                    return Err(ControllerError::Busy);
                };
                if content.is_none() {
                    content = self
                        .process_input(req.message.clone(), &req.images, origin)
                        .await;
                    if content.is_none() {
                        return Ok(PromptOutcome::of(Disposition::Handled));
                    }
                }
                let status = lock(&self.status);
                if status.streaming {
                    if let Some(c) = content.take() {
                        self.queue(c, how);
                    }
                    return Ok(PromptOutcome::of(Disposition::Queued));
                }
                // The run settled meanwhile: this prompt starts the next one.
                continue;
            }
            if let Some(aborts) = self.begin_streaming(&mut lock(&self.status)) {
                break aborts;
            }
        };
        // Until the run task owns it, streaming ends with this future, however it ends.
        let starting = Starting { core: Some(self) };
        let agent = self.take_agent(aborts).await;
        let content = match content {
            Some(c) => Some(c),
            None => self.process_input(req.message, &req.images, origin).await,
        };
        let Some(content) = content else {
            return Ok(PromptOutcome::of(Disposition::Handled));
        };
        let trigger = Message::User(UserMessage {
            content,
            timestamp: now_ms(),
        });
        if !self
            .spawn_run(starting, agent, trigger, aborts, on_start)
            .await
        {
            return Ok(PromptOutcome::of(Disposition::Handled));
        }
        Ok(PromptOutcome::of(Disposition::Started))
    }

    /// Marks a run as starting unless one streams; the abort count it starts under.
    pub(super) fn begin_streaming(&self, status: &mut super::Status) -> Option<u64> {
        if status.streaming {
            return None;
        }
        status.streaming = true;
        self.idle.send_replace(false);
        Some(status.aborts)
    }

    /// The agent for a run that began streaming (it waits for whatever holds it to finish).
    pub(super) async fn take_agent(&self, aborts: u64) -> OwnedMutexGuard<Agent> {
        let agent = self.agent.clone().lock_owned().await;
        self.handle.fresh_token();
        if lock(&self.status).aborts != aborts {
            // Aborted while it waited for the agent: the run starts (and ends) aborted.
            self.handle.abort();
        }
        agent
    }

    /// Starts the run in a task of its own; false when the controller is going away.
    pub(super) async fn spawn_run<F: Future<Output = ()> + Send>(
        &self,
        starting: Starting<'_>,
        agent: OwnedMutexGuard<Agent>,
        trigger: Message,
        aborts: u64,
        on_start: impl FnOnce() -> F + Send,
    ) -> bool {
        let Some(core) = self.arc() else {
            return false;
        };
        starting.hand_over();
        // A new run sends its own request; whatever was kept warm is not it.
        self.warmer.cancel();
        on_start().await;
        tokio::spawn(async move { core.run(agent, trigger, aborts).await });
        true
    }

    /// `steer` / `follow_up`: the message is queued, whether or not a run is in progress (it
    /// waits for the next one otherwise).
    async fn enqueue(
        &self,
        how: StreamingBehavior,
        message: String,
        images: &[ImageInput],
    ) -> Result<PromptOutcome, ControllerError> {
        if let Some((name, _)) = split_command(&message) {
            if self.hooks().command_owner(name).is_some() {
                return Err(ControllerError::CommandNotQueueable(name.to_string()));
            }
        }
        let Some(content) = self.process_input(message, images, Origin::FrontEnd).await else {
            return Ok(PromptOutcome::of(Disposition::Handled));
        };
        // Under the lock that ends streaming, so a run that is settling still delivers it.
        let _status = lock(&self.status);
        self.queue(content, how);
        Ok(PromptOutcome::of(Disposition::Queued))
    }

    /// Abort the run in progress; it will not go on with queued messages.
    pub(super) fn abort_run(&self) {
        lock(&self.status).aborts += 1;
        self.handle.abort();
    }

    /// One session-level run: the agent loop, then compaction, then what was queued as it
    /// ended, until nothing is left; then `agent_settled`.
    async fn run(&self, mut agent: OwnedMutexGuard<Agent>, trigger: Message, aborts: u64) {
        self.mcp_before_run().await;
        self.drop_missing_tools();
        let mut last = agent.start(trigger).await;
        loop {
            if !self.handle.is_stopped() {
                if let Some(retried) = self.after_run(&mut agent, last.clone()).await {
                    last = Some(retried);
                }
            }
            // The last actionable boundary: the run ended (compacted, retried) with nothing
            // queued and was not aborted.
            if !self.handle.is_stopped()
                && !is_aborted(last.as_ref())
                && lock(&self.status).aborts == aborts
                && self.handle.pending_count() == 0
            {
                let outcome = match last.as_ref().map(|m| m.stop_reason) {
                    Some(StopReason::Error) => Outcome::Error,
                    _ => Outcome::Completed,
                };
                if agent.settle_boundary(outcome).await {
                    if let Some(l) = agent.continue_run().await {
                        last = Some(l);
                    }
                    continue;
                }
            }
            // Decided under the lock queued messages are pushed under: either this run takes
            // them, or streaming ends before anyone can queue for it.
            let (aborted, go_on) = {
                let mut status = lock(&self.status);
                let aborted = is_aborted(last.as_ref()) || status.aborts != aborts;
                let go_on =
                    !aborted && !self.handle.is_stopped() && self.handle.pending_count() > 0;
                if !go_on {
                    // User shell commands that finished during the run, and extensions'
                    // messages held for a turn's end, join the context now.
                    self.flush_pending_bash();
                    self.flush_deferred();
                    status.streaming = false;
                }
                (aborted, go_on)
            };
            if go_on {
                if let Some(l) = agent.run_queued().await {
                    last = Some(l);
                }
                continue;
            }
            self.warmer.on_settled(self.cache_warming());
            self.runner()
                .notify(NotifyEvent::AgentSettled, None, || serde_json::json!({}));
            self.emit(AgentEvent::AgentSettled { aborted });
            break;
        }
        drop(agent);
        self.idle.send_replace(true);
    }
}

fn is_aborted(last: Option<&AssistantMessage>) -> bool {
    last.is_some_and(|m| m.stop_reason == StopReason::Aborted)
}

impl SessionController {
    /// `prompt`: see the module comment.
    pub async fn prompt(&self, req: PromptRequest) -> Result<PromptOutcome, ControllerError> {
        self.core.prompt(req, Origin::FrontEnd, || async {}).await
    }

    /// `prompt`, awaiting `on_start` once the prompt is accepted as `started` and before its
    /// run emits anything: a front end that answers there (RPC) is sure its answer precedes
    /// the run's `agent_start`.
    pub async fn prompt_with<F: Future<Output = ()> + Send>(
        &self,
        req: PromptRequest,
        on_start: impl FnOnce() -> F + Send,
    ) -> Result<PromptOutcome, ControllerError> {
        self.core.prompt(req, Origin::FrontEnd, on_start).await
    }

    /// `steer` / `follow_up`: queue a message (`queued`), for the run in progress or, when
    /// none runs, the next one; `handled` when an `input` hook consumed it. Skills and
    /// templates are expanded; hook commands cannot be queued.
    pub async fn queue_message(
        &self,
        how: StreamingBehavior,
        message: String,
        images: Vec<ImageInput>,
    ) -> Result<PromptOutcome, ControllerError> {
        self.core.enqueue(how, message, &images).await
    }

    /// `abort`: end the run in progress (and any automatic retry) at once, then wait until
    /// it has settled. It does not go on with queued messages; they stay queued for the next
    /// run (see `clear_queue`).
    pub async fn abort(&self) {
        self.core.abort_run();
        self.wait_idle().await;
    }

    /// `abort_retry`: stop waiting for an automatic retry; the failed attempt's error stands.
    pub fn abort_retry(&self) {
        self.core.handle.abort_retry();
    }

    /// `clear_queue`: remove the queued steering and follow-up messages and return their text.
    pub fn clear_queue(&self) -> QueuedMessages {
        let (steering, follow_up) = self.core.handle.clear_queues();
        // Sent even when nothing was queued, as pi 1.6 does.
        self.core.emit(AgentEvent::QueueUpdate {
            steering: Vec::new(),
            follow_up: Vec::new(),
        });
        QueuedMessages {
            steering,
            follow_up,
        }
    }

    /// Whether a run is in progress (from a prompt's acceptance to its settling).
    pub fn is_streaming(&self) -> bool {
        self.core.is_streaming()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_into_name_and_trimmed_arguments() {
        assert_eq!(split_command("/op a b "), Some(("op", "a b")));
        assert_eq!(split_command("/op"), Some(("op", "")));
        assert_eq!(split_command("op"), None);
    }
}
