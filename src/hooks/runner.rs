//! The runner: every semantics kind of SPEC 4.3 implemented once, over the loaded hooks in load
//! order. Each method takes an event, asks the subscribed hooks (a tool-name filter that does
//! not match costs no round trip; no subscribers cost nothing), combines the replies by the
//! kind's rule, and records what each hook answered as `hook_decision` / `hook_error` events.
//!
//! Hooks are reached through the [`Endpoint`] trait, so these rules are unit-tested with
//! in-memory endpoints and run unchanged over real hook processes. Every wait on a hook ends
//! at once when the run it serves is aborted (`runner_abort.rs`).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::events::{
    AwaitedEvent, BoundaryEvent, CancelableEvent, ChainEvent, CollectEvent, DeciderEvent, Event,
    GateEvent, NotifyEvent,
};
use super::protocol::{
    parse_result, BoundaryProposal, BoundaryReply, CancelableReply, DiscoverReply, FailPolicy,
    GateReply, InjectedMessage, TrustAnswer, TrustReply, UserBashReply,
};
use super::spec::HookMode;
use crate::agent::events::{AgentEvent, HookAnswer, HookDecision};

/// Why one hook could not answer one request.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct EndpointError {
    /// `timeout`, `crashed`, `framing`, `error_reply`, `not_running`, `bad_reply`, …
    pub kind: String,
    pub message: String,
}

impl EndpointError {
    pub fn bad_reply(hook: &str, event: &str, detail: impl std::fmt::Display) -> Self {
        EndpointError {
            kind: "bad_reply".into(),
            message: format!("hook {hook} sent a reply to {event} that does not have the expected shape: {detail}"),
        }
    }
}

/// One loaded hook as the runner sees it.
#[async_trait]
pub trait Endpoint: Send + Sync {
    fn name(&self) -> String;
    /// The reply deadline if this hook subscribed to `event` (for tool events, for this tool).
    fn wants(&self, event: &str, tool: Option<&str>) -> Option<Duration>;
    fn fail_policy(&self) -> FailPolicy;
    fn mode(&self) -> HookMode;
    /// Whether this is a required (managed) hook: no tool runs while it is down, and its gate
    /// has the last look at a tool call's input.
    fn required(&self) -> bool {
        false
    }
    /// For a required hook that is not running: the user-facing reason every tool call is
    /// refused ("policy degraded: managed hook X is not running: …"). `None` otherwise.
    fn required_down(&self) -> Option<String> {
        None
    }
    /// For an ordinary hook that never started and whose policy fails closed: why it did not
    /// start. It never said which calls it gates, so it refuses every one. `None` otherwise.
    fn start_failed(&self) -> Option<String> {
        None
    }
    async fn request(
        &self,
        event: &str,
        payload: Value,
        deadline: Duration,
    ) -> Result<Value, EndpointError>;
    fn notify(&self, event: &str, payload: Value);
    /// Feedback for the model on a call the gate blocked (`payload` is `tool_call`'s with
    /// the block's `reason`): Claude Code's PostToolUseFailure runs for blocked calls too. A
    /// hook process has none: its `tool_result` is for calls that ran.
    async fn blocked(&self, _payload: &Value) -> Vec<String> {
        Vec::new()
    }
    /// Whether this hook is asked about `moment` (see [`Moment`]); a hook process never is.
    fn at(&self, _moment: Moment) -> bool {
        false
    }
    /// Its answer at `moment`: the reason it blocks what was about to happen, if it does.
    async fn moment(
        &self,
        _moment: Moment,
        _payload: &Value,
    ) -> Result<Option<String>, EndpointError> {
        Ok(None)
    }
}

/// How a chain ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainEnd {
    /// Every subscribed hook answered (or failed), or one stopped the chain.
    Whole,
    /// An abort ended it before every subscribed hook had answered.
    Aborted,
}

/// What one hook's reply did to a chained value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing changed.
    Continue,
    /// The value changed; the label is what the hook did (`transform`, `patch`, …).
    Changed(&'static str),
    /// The value changed and the chain ends here (`input`'s `handled`).
    Stop(&'static str),
}

/// The gate's combined decision.
#[derive(Debug, Clone, PartialEq)]
pub enum GateVerdict {
    Allow {
        input: Value,
        patched_by: Vec<String>,
    },
    Block {
        reason: String,
        /// The blocking hook asked the run to end after this batch.
        terminate: bool,
    },
}

/// The cancelable kind's combined result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CancelVerdict {
    pub cancelled_by: Option<String>,
    /// The last non-empty result (event-specific fields), if no hook cancelled.
    pub result: Option<serde_json::Map<String, Value>>,
}

/// `resources_discover` results with paths made absolute.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Discovered {
    pub skill_paths: Vec<PathBuf>,
    pub prompt_paths: Vec<PathBuf>,
    pub theme_paths: Vec<PathBuf>,
}

pub struct Runner {
    hooks: Vec<Arc<dyn Endpoint>>,
    events: Option<mpsc::UnboundedSender<AgentEvent>>,
    abort: OnceLock<abort::AbortSource>,
    /// The hooks' session-entry budgets (shared with the host calls): what a boundary reply
    /// adds is written to the session like `session.append_entry`'s entries, and counts alike.
    entries: OnceLock<Arc<super::budget::EntryLedger>>,
}

/// Parse a reply's `result` by the protocol's one rule (`protocol::parse_result`): `null` is
/// the type's default, an object is parsed strictly, anything else is a wrong shape.
fn parse<T: DeserializeOwned + Default>(
    hook: &str,
    event: &str,
    v: Value,
) -> Result<T, EndpointError> {
    parse_result(v).map_err(|e| EndpointError::bad_reply(hook, event, e))
}

fn micros(t: Instant) -> u64 {
    t.elapsed().as_micros().min(u128::from(u64::MAX)) as u64
}

/// What the model reads when a hook blocks a call without a reason (pi 1.6's text).
const NO_REASON: &str = "Tool execution was blocked";

fn answer(hook: &str, outcome: &str, latency_us: u64) -> HookAnswer {
    HookAnswer {
        hook: hook.to_string(),
        outcome: outcome.to_string(),
        reason: None,
        patch: None,
        latency_us,
    }
}

impl Runner {
    pub fn new(
        hooks: Vec<Arc<dyn Endpoint>>,
        events: Option<mpsc::UnboundedSender<AgentEvent>>,
    ) -> Self {
        Runner {
            hooks,
            events,
            abort: OnceLock::new(),
            entries: OnceLock::new(),
        }
    }

    /// The entry budgets the host calls keep, so boundary replies are charged to them too.
    pub fn share_entry_ledger(&self, ledger: Arc<super::budget::EntryLedger>) {
        let _ = self.entries.set(ledger);
    }

    /// Charges `hook` for the entries `reply` adds to `proposal` (those not already in it: a
    /// hook passing on an earlier hook's entries is not charged for them); on `too_large`
    /// nothing is charged and the reply is not applied.
    fn charge_boundary(
        &self,
        hook: &str,
        event: &'static str,
        proposal: &BoundaryProposal,
        reply: &BoundaryReply,
    ) -> Result<(), EndpointError> {
        let Some(ledger) = self.entries.get() else {
            return Ok(());
        };
        let replaced = reply.entries.iter().flatten();
        let messages = reply.messages.iter().map(super::budget::json_size);
        let sizes: Vec<usize> = replaced
            .filter(|d| !proposal.entries.contains(d))
            .map(super::budget::json_size)
            .chain(messages)
            .collect();
        let mut charged = 0usize;
        for size in sizes {
            if let Err(e) = ledger.charge(hook, event, size) {
                ledger.refund(hook, charged);
                return Err(EndpointError {
                    kind: super::budget::TooLarge::CODE.into(),
                    message: format!("hook {hook}'s {event} reply: {e}"),
                });
            }
            charged += size;
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Whether any hook wants this event (so callers can skip building its payload).
    pub fn any_wants(&self, event: impl Into<Event>, tool: Option<&str>) -> bool {
        let event = event.into().name();
        self.hooks.iter().any(|h| h.wants(event, tool).is_some())
    }

    /// Every hook's feedback on a call the gate blocked (see [`Endpoint::blocked`]), in load
    /// order.
    pub async fn blocked_feedback(
        &self,
        call_id: &str,
        tool: &str,
        input: &Value,
        reason: &str,
    ) -> Vec<String> {
        let payload = json!({"tool_call_id": call_id, "tool_name": tool, "input": input,
                             "reason": reason});
        let mut out = Vec::new();
        for h in &self.hooks {
            out.extend(h.blocked(&payload).await);
        }
        out
    }

    fn subscribed(&self, event: &str, tool: Option<&str>) -> Vec<(Arc<dyn Endpoint>, Duration)> {
        self.hooks
            .iter()
            .filter_map(|h| h.wants(event, tool).map(|d| (h.clone(), d)))
            .collect()
    }

    fn emit(&self, ev: AgentEvent) {
        if let Some(tx) = &self.events {
            let _ = tx.send(ev);
        }
    }

    /// Put an event in the run's stream (a nested tool call's `tool_execution_*`).
    pub fn emit_event(&self, ev: AgentEvent) {
        self.emit(ev);
    }

    fn report_error(&self, hook: &str, event: &str, e: &EndpointError) {
        tracing::warn!(hook, event, error = %e, "hook failed");
        self.emit(AgentEvent::HookError {
            hook: hook.to_string(),
            event: event.to_string(),
            kind: e.kind.clone(),
            message: e.message.clone(),
        });
    }

    fn decide(
        &self,
        event: &str,
        call: Option<(&str, &str)>,
        answers: Vec<HookAnswer>,
        outcome: &str,
        reason: Option<String>,
    ) {
        if answers.is_empty() {
            return;
        }
        self.emit(AgentEvent::HookDecision(HookDecision {
            event: event.to_string(),
            tool_call_id: call.map(|c| c.0.to_string()),
            tool_name: call.map(|c| c.1.to_string()),
            answers,
            outcome: outcome.to_string(),
            reason,
        }));
    }

    /// notify: sent in order, no reply, nothing awaited.
    pub fn notify(&self, ev: NotifyEvent, tool: Option<&str>, payload: impl FnOnce() -> Value) {
        let event = ev.name();
        let subs = self.subscribed(event, tool);
        if subs.is_empty() {
            return;
        }
        let payload = payload();
        for (h, _) in subs {
            h.notify(event, payload.clone());
        }
    }

    /// awaited notify: every subscriber acknowledges (or fails, logged) before this returns.
    /// An abort stops the asking; `session_shutdown` is bounded instead (`runner_abort.rs`).
    pub async fn awaited(&self, ev: AwaitedEvent, payload: Value) {
        let event = ev.name();
        if ev == AwaitedEvent::SessionShutdown {
            return self.session_shutdown(payload).await;
        }
        let abort = self.abort_token();
        for (h, deadline) in self.subscribed(event, None) {
            match self
                .ask(abort.as_ref(), &h, event, payload.clone(), deadline)
                .await
            {
                None => break,
                Some(Err(e)) => self.report_error(&h.name(), event, &e),
                Some(Ok(_)) => {}
            }
        }
    }

    /// Record a gate's block and return it.
    fn gate_block(
        &self,
        call_id: &str,
        tool: &str,
        answers: Vec<HookAnswer>,
        reason: String,
    ) -> GateVerdict {
        self.decide(
            "tool_call",
            Some((call_id, tool)),
            answers,
            "block",
            Some(reason.clone()),
        );
        GateVerdict::Block {
            reason,
            terminate: false,
        }
    }

    /// A required hook that is down refuses every tool call, whatever it subscribed to; so
    /// does a fail-closed hook that never started (it never said what it gates).
    fn policy_block(&self, call_id: &str, tool: &str) -> Option<GateVerdict> {
        if let Some(blocked) = self.start_failed_block(call_id, tool) {
            return Some(blocked);
        }
        let (name, why) = self
            .hooks
            .iter()
            .find_map(|h| h.required_down().map(|why| (h.name(), why)))?;
        let e = EndpointError {
            kind: "policy_degraded".into(),
            message: why.clone(),
        };
        self.report_error(&name, "tool_call", &e);
        let mut a = answer(&name, "error", 0);
        a.reason = Some(why.clone());
        let reason = format!("Blocked: {why}. No tool can run until that hook is running again.");
        Some(self.gate_block(call_id, tool, vec![a], reason))
    }

    fn start_failed_block(&self, call_id: &str, tool: &str) -> Option<GateVerdict> {
        let (name, why) = self
            .hooks
            .iter()
            .find_map(|h| h.start_failed().map(|why| (h.name(), why)))?;
        let e = EndpointError {
            kind: "not_running".into(),
            message: why.clone(),
        };
        self.report_error(&name, "tool_call", &e);
        let mut a = answer(&name, "error", 0);
        a.reason = Some(why.clone());
        let reason = format!(
            "Blocked: hook {name} failed (it did not start: {why}) and its policy fails closed, \
             so {tool} did not run."
        );
        Some(self.gate_block(call_id, tool, vec![a], reason))
    }

    /// gate (`tool_call`): load order; patches accumulate and later hooks see them; the first
    /// block wins and stops the chain; a failing hook blocks unless its policy is open; an
    /// aborted run blocks.
    ///
    /// Required (managed) hooks load first, so a later hook could patch the input after they
    /// approved it. When that happens the subscribed required hooks are asked once more with
    /// the final input, so what runs is always what the administrator's policy has seen.
    pub async fn gate(
        &self,
        call_id: &str,
        tool: &str,
        input: Value,
        validate: &crate::agent::hooks::Validate,
    ) -> GateVerdict {
        if let Some(blocked) = self.policy_block(call_id, tool) {
            return blocked;
        }
        let event = GateEvent::ToolCall.name();
        let mut current = input;
        let mut patched_by = Vec::new();
        let mut answers = Vec::new();
        let subs = self.subscribed(event, Some(tool));
        let mut recheck: Vec<_> = subs.iter().filter(|(h, _)| h.required()).cloned().collect();
        let mut queue: std::collections::VecDeque<_> = subs.into();
        let abort = self.abort_token();
        // Whether a non-required hook changed the input after the required hooks saw it.
        let mut unseen_patch = false;
        while let Some((h, deadline)) = queue.pop_front() {
            let name = h.name();
            let shadow = h.mode() == HookMode::Shadow;
            let payload = json!({"tool_call_id": call_id, "tool_name": tool, "input": current});
            let t0 = Instant::now();
            let reply = match self.ask(abort.as_ref(), &h, event, payload, deadline).await {
                None => {
                    answers.push(abort::aborted(&name, micros(t0)));
                    let reason = format!(
                        "Blocked: the run was aborted while hook {name} was deciding, so {tool} did not run."
                    );
                    return self.gate_block(call_id, tool, answers, reason);
                }
                Some(Ok(v)) => parse::<GateReply>(&name, event, v),
                Some(Err(e)) => Err(e),
            };
            let lat = micros(t0);
            match reply {
                Err(e) => {
                    self.report_error(&name, event, &e);
                    let mut a = answer(&name, "error", lat);
                    a.reason = Some(e.message.clone());
                    answers.push(a);
                    if !shadow && h.fail_policy() == FailPolicy::Closed {
                        let reason = format!(
                            "Blocked: hook {name} failed ({}) and its policy fails closed, so {tool} did not run.",
                            e.message
                        );
                        return self.gate_block(call_id, tool, answers, reason);
                    }
                }
                Ok(r) if r.block => {
                    let mut a = answer(&name, if shadow { "would_block" } else { "block" }, lat);
                    a.reason = r.reason.clone();
                    answers.push(a);
                    if !shadow {
                        // The model reads the hook's own reason, as pi 1.6's does an
                        // extension's; the event (and so the UI) names the hook.
                        let named = match &r.reason {
                            Some(why) => format!("Blocked by hook {name}: {why}"),
                            None => format!("Blocked by hook {name}"),
                        };
                        let seen = r.reason.unwrap_or_else(|| NO_REASON.into());
                        self.decide(
                            "tool_call",
                            Some((call_id, tool)),
                            answers,
                            "block",
                            Some(named),
                        );
                        let blocked = GateVerdict::Block {
                            reason: seen,
                            terminate: false,
                        };
                        return match blocked {
                            GateVerdict::Block { reason, .. } => GateVerdict::Block {
                                reason,
                                terminate: r.terminate,
                            },
                            allowed => allowed,
                        };
                    }
                }
                Ok(GateReply { patch: Some(p), .. }) => {
                    let mut a = answer(&name, if shadow { "would_patch" } else { "patch" }, lat);
                    a.patch = Some(p.clone());
                    answers.push(a);
                    if !shadow {
                        unseen_patch |= !h.required();
                        json_patch::merge(&mut current, &p);
                        // Checked at once, so the block names the hook whose patch broke it.
                        if let Err(e) = validate(&current) {
                            let reason = format!(
                                "Blocked: arguments patched by hook {name} are invalid: {e}"
                            );
                            if let Some(last) = answers.last_mut() {
                                last.outcome = "block".into();
                                last.reason = Some(reason.clone());
                            }
                            return self.gate_block(call_id, tool, answers, reason);
                        }
                        patched_by.push(name);
                    }
                }
                Ok(_) => answers.push(answer(&name, "allow", lat)),
            }
            if queue.is_empty() && std::mem::take(&mut unseen_patch) {
                // Once, after the last hook: the required hooks judge the final input.
                queue.extend(recheck.drain(..));
            }
        }
        let outcome = if patched_by.is_empty() {
            "allow"
        } else {
            "patched"
        };
        self.decide(event, Some((call_id, tool)), answers, outcome, None);
        GateVerdict::Allow {
            input: current,
            patched_by,
        }
    }

    /// chain: each hook gets the accumulated value (`payload_of`), `apply` folds its reply in
    /// and says whether it changed anything; a failing hook is skipped and reported; an abort
    /// ends the chain with the value so far.
    pub async fn chain<A>(
        &self,
        ev: ChainEvent,
        tool: Option<(&str, &str)>,
        acc: A,
        payload_of: impl Fn(&A) -> Value,
        apply: impl Fn(&mut A, Value, &str) -> Result<Step, EndpointError>,
    ) -> A {
        self.chain_to_end(ev, tool, acc, payload_of, apply).await.0
    }

    /// [`Runner::chain`], saying whether an abort cut it short before every subscribed hook
    /// had answered — for a chain whose skipped hooks may have had to change the value (a
    /// `tool_result` redaction).
    pub async fn chain_to_end<A>(
        &self,
        ev: ChainEvent,
        tool: Option<(&str, &str)>,
        mut acc: A,
        payload_of: impl Fn(&A) -> Value,
        apply: impl Fn(&mut A, Value, &str) -> Result<Step, EndpointError>,
    ) -> (A, ChainEnd) {
        let event = ev.name();
        let subs = self.subscribed(event, tool.map(|t| t.1));
        if subs.is_empty() {
            return (acc, ChainEnd::Whole);
        }
        let mut answers = Vec::new();
        let mut changed = false;
        let mut end = ChainEnd::Whole;
        let abort = self.abort_token();
        for (h, deadline) in subs {
            let name = h.name();
            let shadow = h.mode() == HookMode::Shadow;
            let t0 = Instant::now();
            let asked = self
                .ask(abort.as_ref(), &h, event, payload_of(&acc), deadline)
                .await;
            let lat = micros(t0);
            let Some(res) = asked else {
                answers.push(abort::aborted(&name, lat));
                end = ChainEnd::Aborted;
                break;
            };
            let outcome = match res {
                // A shadow hook's reply is reported, never applied.
                Ok(v) if shadow => Ok(if v.is_null() {
                    Step::Continue
                } else {
                    Step::Changed("would_patch")
                }),
                Ok(v) => apply(&mut acc, v, &name),
                Err(e) => Err(e),
            };
            match outcome {
                Ok(Step::Changed(what)) => {
                    changed |= !shadow;
                    answers.push(answer(&name, what, lat));
                }
                Ok(Step::Stop(what)) => {
                    answers.push(answer(&name, what, lat));
                    self.decide(event, tool, answers, what, None);
                    return (acc, ChainEnd::Whole);
                }
                Ok(Step::Continue) => answers.push(answer(&name, "continue", lat)),
                Err(e) => {
                    self.report_error(&name, event, &e);
                    let mut a = answer(&name, "error", lat);
                    a.reason = Some(e.message);
                    answers.push(a);
                }
            }
        }
        let outcome = if changed { "patched" } else { "unchanged" };
        self.decide(event, tool, answers, outcome, None);
        (acc, end)
    }

    /// first decider (`project_trust`): the first yes/no wins; a failing hook passes to the next.
    pub async fn decide_trust(&self, cwd: &str) -> Option<(bool, bool, String)> {
        let event = DeciderEvent::ProjectTrust.name();
        let mut answers = Vec::new();
        let mut decided = None;
        let abort = self.abort_token();
        for (h, deadline) in self.subscribed(event, None) {
            let name = h.name();
            let t0 = Instant::now();
            let r = match self
                .ask(abort.as_ref(), &h, event, json!({"cwd": cwd}), deadline)
                .await
            {
                None => {
                    answers.push(abort::aborted(&name, micros(t0)));
                    break;
                }
                Some(Ok(v)) => parse::<TrustReply>(&name, event, v),
                Some(Err(e)) => Err(e),
            };
            let lat = micros(t0);
            match r {
                Ok(TrustReply { trusted, remember }) => {
                    let verdict = match trusted {
                        TrustAnswer::Yes => Some(true),
                        TrustAnswer::No => Some(false),
                        _ => None,
                    };
                    let word = match verdict {
                        Some(true) => "trust",
                        Some(false) => "distrust",
                        None => "undecided",
                    };
                    answers.push(answer(&name, word, lat));
                    if let Some(t) = verdict {
                        decided = Some((t, remember, name));
                        break;
                    }
                }
                Err(e) => {
                    self.report_error(&name, event, &e);
                    answers.push(answer(&name, "error", lat));
                }
            }
        }
        let outcome = match &decided {
            Some((true, ..)) => "trusted",
            Some((false, ..)) => "untrusted",
            None => "undecided",
        };
        self.decide(event, None, answers, outcome, None);
        decided
    }

    /// first decider (`user_bash`): the first hook that answers with a result ran the command.
    /// A failing hook, or an abort, fails closed: `Err` means the command must not run.
    pub async fn user_bash(&self, payload: Value) -> Result<Option<(Value, String)>, String> {
        let event = DeciderEvent::UserBash.name();
        let abort = self.abort_token();
        for (h, deadline) in self.subscribed(event, None) {
            let name = h.name();
            let reply = match self
                .ask(abort.as_ref(), &h, event, payload.clone(), deadline)
                .await
            {
                None => {
                    return Err(format!(
                    "the run was aborted while hook {name} was deciding; the command was not run"
                ))
                }
                Some(Ok(v)) => parse::<UserBashReply>(&name, event, v),
                Some(Err(e)) => Err(e),
            };
            match reply {
                Ok(UserBashReply { result: Some(r) }) => {
                    return Ok(Some((serde_json::to_value(r).unwrap_or(Value::Null), name)))
                }
                Ok(_) => {}
                Err(e) => {
                    self.report_error(&name, event, &e);
                    return Err(format!(
                        "hook {name} failed ({}); the command was not run",
                        e.message
                    ));
                }
            }
        }
        Ok(None)
    }

    /// cancelable (`session_before_*`): `cancel` stops at once; otherwise the last non-empty
    /// result wins whole; failures are logged and count as no result; an abort ends the asking
    /// (the aborted hook's answer counts as no result).
    pub async fn cancelable(&self, ev: CancelableEvent, payload: Value) -> CancelVerdict {
        let event = ev.name();
        let mut verdict = CancelVerdict::default();
        let mut answers = Vec::new();
        let abort = self.abort_token();
        for (h, deadline) in self.subscribed(event, None) {
            let name = h.name();
            let t0 = Instant::now();
            let r = match self
                .ask(abort.as_ref(), &h, event, payload.clone(), deadline)
                .await
            {
                None => {
                    answers.push(abort::aborted(&name, micros(t0)));
                    break;
                }
                Some(Ok(v)) => parse::<CancelableReply>(&name, event, v),
                Some(Err(e)) => Err(e),
            };
            let lat = micros(t0);
            match r {
                Ok(r) if r.cancel => {
                    answers.push(answer(&name, "cancel", lat));
                    verdict.cancelled_by = Some(name);
                    verdict.result = None;
                    break;
                }
                Ok(r) if !r.rest.is_empty() => {
                    answers.push(answer(&name, "replace", lat));
                    verdict.result = Some(r.rest);
                }
                Ok(_) => answers.push(answer(&name, "continue", lat)),
                Err(e) => {
                    self.report_error(&name, event, &e);
                    answers.push(answer(&name, "error", lat));
                }
            }
        }
        let outcome = if verdict.cancelled_by.is_some() {
            "cancelled"
        } else {
            "allow"
        };
        self.decide(event, None, answers, outcome, None);
        verdict
    }

    /// collect (`resources_discover`): every hook's paths, concatenated in load order. A
    /// relative path is relative to the payload's `cwd` (the project's, as the seeds have it:
    /// pi resolves what an extension discovers against the cwd).
    pub async fn collect(&self, ev: CollectEvent, payload: Value) -> Discovered {
        let event = ev.name();
        let cwd = payload["cwd"]
            .as_str()
            .map(PathBuf::from)
            .unwrap_or_default();
        let mut out = Discovered::default();
        let abort = self.abort_token();
        for (h, deadline) in self.subscribed(event, None) {
            let name = h.name();
            let r = match self
                .ask(abort.as_ref(), &h, event, payload.clone(), deadline)
                .await
            {
                None => break,
                Some(Ok(v)) => parse::<DiscoverReply>(&name, event, v),
                Some(Err(e)) => Err(e),
            };
            match r {
                Ok(r) => {
                    let abs = |p: &String| cwd.join(p);
                    out.skill_paths.extend(r.skill_paths.iter().map(abs));
                    out.prompt_paths.extend(r.prompt_paths.iter().map(abs));
                    out.theme_paths.extend(r.theme_paths.iter().map(abs));
                }
                Err(e) => self.report_error(&name, event, &e),
            }
        }
        out
    }

    /// boundary (`turn_end`, `agent_before_settle`): each hook sees the proposal so far
    /// (entries to add, whether to continue) and may replace or extend it; an abort ends it
    /// with the proposal so far.
    pub async fn boundary(&self, ev: BoundaryEvent, base: Value) -> BoundaryProposal {
        let event = ev.name();
        let mut proposal = BoundaryProposal::default();
        let abort = self.abort_token();
        for (h, deadline) in self.subscribed(event, None) {
            let name = h.name();
            let mut payload = base.clone();
            if let Value::Object(m) = &mut payload {
                m.insert(
                    "proposal".into(),
                    serde_json::to_value(&proposal).unwrap_or(Value::Null),
                );
            }
            let r = match self.ask(abort.as_ref(), &h, event, payload, deadline).await {
                None => break,
                Some(Ok(v)) => parse::<BoundaryReply>(&name, event, v),
                Some(Err(e)) => Err(e),
            };
            match r {
                Ok(r) if h.mode() == HookMode::Shadow => {
                    tracing::info!(hook = %name, event, continue_run = ?r.continue_run, "shadow hook's boundary proposal not applied");
                }
                Ok(r) => match self.charge_boundary(&name, event, &proposal, &r) {
                    Ok(()) => proposal.apply(r),
                    Err(e) => self.report_error(&name, event, &e),
                },
                Err(e) => self.report_error(&name, event, &e),
            }
        }
        proposal
    }
}

/// A hook-injected message as a context message: the extension's own (`role: "custom"`),
/// stored as a `custom_message` entry and sent to the model as a user message.
pub fn injected_to_message(m: &InjectedMessage) -> crate::message::Message {
    crate::message::Message::Custom(crate::message::CustomMessage {
        custom_type: m.custom_type.clone(),
        content: m.content.clone().into(),
        display: m.display,
        details: m.details.clone(),
        timestamp: crate::message::now_ms(),
    })
}

#[path = "runner_abort.rs"]
mod abort;
pub use abort::SESSION_SHUTDOWN_GRACE;

#[path = "runner_override.rs"]
mod last_override;
pub use last_override::Override;

#[path = "runner_moments.rs"]
mod moments;
pub use moments::{Moment, MomentVerdict};

#[cfg(test)]
#[path = "runner_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "runner_abort_tests.rs"]
mod abort_tests;
