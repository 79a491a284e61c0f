//! Prompt-cache warming (pi's `cacheWarming`): after each model request of the session, the
//! controller keeps that request's provider cache entry alive by sending the same request
//! again, capped at one output token, shortly before the entry would expire — during a long
//! tool call, and (mode `idle`, the default) for up to 30 minutes after the run settled. A
//! refresh is not a turn: nothing enters the context; its usage is stored as a `usage` entry
//! of kind `cache_warm`, so it counts toward the session's totals.
//!
//! Only one request is kept warm: each new request replaces the run. A run is a task on the
//! controller's runtime that sleeps until the refresh is due; it ends (its token cancelled)
//! on a new prompt, an operation that replaces the context, a session replacement or exit,
//! and on its own when the context moved on, the model changed, a safety limit was reached, a
//! refresh would come too late, or pi (or a hook's `cache_warming_decision`) decided that the
//! refresh does not pay for itself. The numbers live in [`policy`].

pub mod policy;

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;

use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use self::policy::{Phase, Slot};
use super::Core;
use crate::agent::events::AgentEvent;
use crate::agent::SentRequest;
use crate::config::CacheWarmingMode;
use crate::hooks::protocol::CacheWarmingAction;
use crate::message::{Message, StopReason};
use crate::provider::CallContext;

/// The `usage` entry kind of a refresh.
pub const USAGE_KIND: &str = "cache_warm";

/// The request being kept warm and how far along its warming is.
struct Run {
    id: u64,
    sent: SentRequest,
    ttl: std::time::Duration,
    delay: std::time::Duration,
    started: Instant,
    phase: Phase,
    /// The refresh the timer waits for, once scheduled.
    slot: Option<Slot>,
    cancel: CancellationToken,
}

#[derive(Default)]
struct State {
    run: Option<Run>,
    next_id: u64,
}

/// The controller's cache warmer: at most one run at a time.
#[derive(Default)]
pub(crate) struct CacheWarmer {
    state: Mutex<State>,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    // Nothing here panics while holding the lock; poisoned state is still whole.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl CacheWarmer {
    /// A session request was just sent: keep its cache entry warm from now on, replacing
    /// whatever was kept warm before.
    pub(crate) fn start(&self, core: &Arc<Core>, sent: &SentRequest) {
        let mut state = lock(&self.state);
        Self::clear(&mut state);
        let model = &sent.request.model;
        let eligible = if core.cache_warming() == CacheWarmingMode::Off {
            Err("cache warming disabled")
        } else if !policy::replayable(model, sent.request.thinking) {
            Err("request cannot be replayed safely")
        } else {
            policy::ttl(model)
                .and_then(|ttl| policy::delay(ttl).map(|d| (ttl, d)))
                .ok_or("cache lifetime unavailable")
        };
        let (ttl, delay) = match eligible {
            Ok(t) => t,
            Err(reason) => {
                tracing::debug!(reason, "cache warming not started");
                return;
            }
        };
        state.next_id += 1;
        let id = state.next_id;
        let cancel = CancellationToken::new();
        state.run = Some(Run {
            id,
            sent: sent.clone(),
            ttl,
            delay,
            started: Instant::now(),
            phase: Phase::Streaming,
            slot: None,
            cancel: cancel.clone(),
        });
        let core = Arc::downgrade(core);
        tokio::spawn(async move { warm(core, id, cancel).await });
    }

    /// The run settled: warming goes on between runs only in mode `idle`, and only within
    /// the idle safety limit.
    pub(crate) fn on_settled(&self, mode: CacheWarmingMode) {
        let mut state = lock(&self.state);
        let Some(run) = state.run.as_mut() else {
            return;
        };
        if mode == CacheWarmingMode::Streaming {
            return Self::stop(&mut state, "agent run settled");
        }
        run.phase = Phase::Idle;
        let at = run.slot.map_or_else(Instant::now, |s| s.at);
        if !policy::idle_allows(Instant::now(), run.started, at) {
            Self::stop(&mut state, "30-minute idle safety limit reached");
        }
    }

    /// Stop warming (a new prompt, the context replaced, the session replaced, exit).
    pub(crate) fn cancel(&self) {
        Self::stop(&mut lock(&self.state), "inactive");
    }

    fn clear(state: &mut State) {
        if let Some(run) = state.run.take() {
            run.cancel.cancel();
        }
    }

    fn stop(state: &mut State, reason: &'static str) {
        Self::clear(state);
        tracing::debug!(reason, "cache warming stopped");
    }

    /// Stop run `id` if it is still the current one.
    fn stop_run(&self, id: u64, reason: &'static str) {
        let mut state = lock(&self.state);
        if state.run.as_ref().is_some_and(|r| r.id == id) {
            Self::stop(&mut state, reason);
        }
    }

    /// Schedule run `id`'s next refresh; `None` when the run is over.
    fn schedule(&self, id: u64) -> Option<Slot> {
        let mut state = lock(&self.state);
        let run = state.run.as_mut().filter(|r| r.id == id)?;
        match policy::next_slot(Instant::now(), run.started, run.phase, run.ttl, run.delay) {
            Ok(slot) => {
                run.slot = Some(slot);
                Some(slot)
            }
            Err(reason) => {
                Self::stop(&mut state, reason);
                None
            }
        }
    }

    /// Run `id`'s request and phase if it may still refresh now; stops it otherwise.
    fn check(&self, core: &Core, id: u64) -> Option<(SentRequest, Phase)> {
        let mut state = lock(&self.state);
        let run = state.run.as_ref().filter(|r| r.id == id)?;
        let reason = match core.cache_warming() {
            CacheWarmingMode::Off => Some("cache warming disabled"),
            CacheWarmingMode::Streaming if run.phase == Phase::Idle => Some("agent run settled"),
            _ if !is_current(core, &run.sent) => Some("conversation context changed"),
            _ if run.slot.is_some_and(|s| Instant::now() > s.deadline) => {
                Some("cache refresh deadline missed")
            }
            _ => None,
        };
        if let Some(reason) = reason {
            Self::stop(&mut state, reason);
            return None;
        }
        Some((run.sent.clone(), run.phase))
    }
}

/// Whether the request is still the one the next request repeats: the same model, and a
/// context that still starts with the very messages it was sent with.
fn is_current(core: &Core, sent: &SentRequest) -> bool {
    let config = core.handle.config();
    let was = &sent.request.model;
    if config.model.provider != was.provider || config.model.id != was.id {
        return false;
    }
    let now = core.handle.messages();
    now.len() >= sent.transcript.len()
        && sent
            .transcript
            .iter()
            .zip(&now)
            .all(|(a, b)| Arc::ptr_eq(a, b))
}

/// The prompt size of the newest assistant reply in the context.
fn last_prompt_tokens(core: &Core) -> u64 {
    core.handle
        .messages()
        .iter()
        .rev()
        .find_map(|m| match m.as_ref() {
            Message::Assistant(a) => Some(policy::prompt_tokens(&a.usage)),
            _ => None,
        })
        .unwrap_or(0)
}

/// One run's timer: wait for each refresh, decide, send, until the run ends.
async fn warm(core: Weak<Core>, id: u64, cancel: CancellationToken) {
    loop {
        let Some(slot) = core.upgrade().and_then(|c| c.warmer.schedule(id)) else {
            return;
        };
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep_until(slot.at.into()) => {}
        }
        let Some(core) = core.upgrade() else {
            return;
        };
        if !refresh(&core, id, &cancel).await {
            return;
        }
    }
}

/// One refresh; false when the run is over.
async fn refresh(core: &Arc<Core>, id: u64, cancel: &CancellationToken) -> bool {
    let Some((sent, phase)) = core.warmer.check(core, id) else {
        return false;
    };
    let decision = policy::evaluate(&sent.request.model, last_prompt_tokens(core), phase);
    let payload = json!({
        "warm_cost": decision.warm_cost,
        "miss_cost": decision.miss_cost,
        "continuation_probability": decision.continuation_probability,
        "action": decision.action.as_str(),
    });
    let Some(answer) = core
        .runner()
        .cache_warming_decision(payload, decision.action, cancel)
        .await
    else {
        return false;
    };
    // The hooks took time: the context, the mode or the clock may have moved on meanwhile.
    let Some((sent, _)) = core.warmer.check(core, id) else {
        return false;
    };
    if answer.value == CacheWarmingAction::Stop {
        let reason = if answer.overridden {
            "stopped by extension"
        } else if decision.economics_available {
            "expected savings below threshold"
        } else {
            "cache economics unavailable"
        };
        core.warmer.stop_run(id, reason);
        return false;
    }
    let mut request = sent.request.clone();
    request.model.max_tokens = 1;
    let (deltas, _keep) = mpsc::unbounded_channel();
    let ctx = CallContext {
        deltas,
        cancel: cancel.child_token(),
        hooks: sent.hooks.clone(),
    };
    // Best effort: a failed refresh costs nothing and changes nothing; there is no retry.
    let reply = sent.provider.stream(&request, &ctx).await;
    if cancel.is_cancelled() {
        return false;
    }
    match reply {
        Ok(msg) if !matches!(msg.stop_reason, StopReason::Error | StopReason::Aborted) => {
            let note = answer.overridden.then_some("extension override");
            record(core, &msg, note);
        }
        Ok(msg) => tracing::debug!(error = ?msg.error_message, "cache refresh failed"),
        Err(e) => tracing::debug!(error = %e, "cache refresh failed"),
    }
    true
}

/// The refresh's usage, as a `usage` entry, announced as `entry_appended`.
fn record(core: &Core, msg: &crate::message::AssistantMessage, note: Option<&str>) {
    let usage = serde_json::to_value(&msg.usage).unwrap_or_default();
    let appended = core
        .session
        .record(|s| s.append_usage(USAGE_KIND, &msg.provider, &msg.model, usage, note));
    match appended {
        Ok(id) => {
            let entry = core
                .session
                .lock()
                .entry(&id)
                .and_then(|e| serde_json::to_value(e).ok());
            if let Some(entry) = entry {
                core.emit(AgentEvent::EntryAppended { entry });
            }
        }
        Err(e) => tracing::warn!(error = %e, "could not record a cache refresh's usage"),
    }
}
