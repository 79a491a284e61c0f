//! When and how the controller compacts its session: manually (`compact`, a hook's
//! `session.compact`), between the turns of a run and after a run whose context passed the
//! threshold (unless auto-compaction is off), and on a provider's context-overflow error (then the failed turn is retried
//! once). `session_before_compact` may cancel a compaction or
//! supply its summary; `session_compact` reports the stored entry. The summarizing itself is
//! the session library's ([`crate::session::compaction`]); its model calls are ours
//! ([`super::summarize`]).

use std::sync::Arc;

use serde_json::{json, Value};

use super::session_ops::OpError;
use super::summarize::{self, SummaryModel};
use super::{CompactOutcome, Core};
use crate::agent::events::AgentEvent;
use crate::hooks::events::{CancelableEvent, NotifyEvent};
use crate::hooks::runner::Moment;
use crate::message::{AssistantMessage, Message};
use crate::provider::retry::RetryPolicy;
use crate::provider::{Model, Provider, ThinkingLevel};
use crate::session::compaction::{
    self, estimate_context, is_context_overflow, should_compact, BranchSummaryResult,
    CompactionError, CompactionSettings,
};
use crate::session::{AgentMessage, Compaction, EntryKind, Session};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Manual,
    Threshold,
    Overflow,
}

impl Reason {
    /// How pi 1.6's `compaction_end.errorMessage` opens for a failure of this kind.
    fn failure_prefix(self) -> &'static str {
        match self {
            Reason::Manual => "Compaction failed: ",
            Reason::Threshold => "Auto-compaction failed: ",
            Reason::Overflow => "Context overflow recovery failed: ",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Manual => "manual",
            Reason::Threshold => "threshold",
            Reason::Overflow => "overflow",
        }
    }
}

/// The model that writes summaries, and the compaction settings.
pub struct Compactor {
    pub provider: Arc<dyn Provider>,
    pub model: Model,
    pub api_key: Option<String>,
    pub thinking: ThinkingLevel,
    pub retry: RetryPolicy,
    pub settings: CompactionSettings,
    /// `branchSummary.reserveTokens`.
    pub branch_reserve_tokens: u64,
}

impl Compactor {
    fn summary_model(&self) -> SummaryModel<'_> {
        let mut m = SummaryModel::new(self.provider.as_ref(), &self.model, self.api_key.as_deref());
        m.thinking = self.thinking;
        m.retry = self.retry;
        m
    }

    pub async fn summarize_branch(
        &self,
        messages: &[AgentMessage],
        custom_instructions: Option<&str>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<BranchSummaryResult, CompactionError> {
        summarize::summarize_branch(
            &self.summary_model(),
            messages,
            self.branch_reserve_tokens,
            custom_instructions,
            cancel,
        )
        .await
    }

    /// Whether the context is past the threshold. Only a usage reported after the latest
    /// compaction counts: an older one measured the context before it was compacted.
    pub fn over_threshold(&self, session: &Session) -> bool {
        if !self.settings.enabled {
            return false;
        }
        let path = session.branch(None);
        let start = path
            .iter()
            .rposition(|e| matches!(e.kind, EntryKind::Compaction(_)))
            .map_or(0, |i| i + 1);
        // Borrowed: this runs after every prompt, over what may be a long history.
        let since: Vec<&AgentMessage> = path[start..].iter().filter_map(|e| e.message()).collect();
        let est = estimate_context(&since);
        est.last_usage_index.is_some()
            && should_compact(est.tokens, self.model.context_window, &self.settings)
    }

    /// Whether `last` failed because the context was too long for the model.
    pub fn is_overflow(&self, last: &AssistantMessage) -> bool {
        is_context_overflow(last, self.model.context_window)
    }
}

impl Core {
    /// The model that writes summaries (the session's current one) and the settings; the
    /// threshold and overflow checks are off while auto-compaction is.
    pub(super) fn compactor(&self) -> Compactor {
        let config = self.handle.config();
        let env = self.env();
        let mut settings = env.compaction;
        settings.enabled = self.auto_compaction();
        Compactor {
            provider: self.handle.provider(),
            model: config.model,
            api_key: config.api_key,
            thinking: config.thinking,
            retry: config.retry,
            settings,
            branch_reserve_tokens: env.branch_reserve_tokens,
        }
    }

    fn compaction_end(
        &self,
        reason: Reason,
        result: Option<Value>,
        aborted: bool,
        will_retry: bool,
        error: Option<String>,
    ) {
        self.set_compacting(false);
        self.emit(AgentEvent::CompactionEnd {
            reason: reason.as_str().into(),
            result,
            aborted,
            will_retry,
            error_message: error,
        });
    }
}

/// Why a hook's compaction cannot be stored.
#[derive(Debug, thiserror::Error)]
enum SuppliedError {
    #[error("session_before_compact: `compaction.summary` (a non-empty string) is required")]
    NoSummary,
    #[error(
        "session_before_compact: `compaction.first_kept_entry_id` {0:?} is not in the session"
    )]
    UnknownEntry(String),
}

/// A hook's own compaction (`{"compaction": {summary, first_kept_entry_id?, tokens_before?,
/// usage?, details?}}`), stored with `fromHook: true`.
fn supplied(
    v: &Value,
    prep: &compaction::Preparation,
    session: &Session,
) -> Result<Compaction, SuppliedError> {
    let summary = v
        .get("summary")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or(SuppliedError::NoSummary)?;
    let first_kept = match v.get("first_kept_entry_id").and_then(Value::as_str) {
        Some(id) if session.entry(id).is_none() => {
            return Err(SuppliedError::UnknownEntry(id.to_string()))
        }
        Some(id) => id.to_string(),
        None => prep.first_kept_entry_id.clone(),
    };
    Ok(Compaction {
        summary: summary.to_string(),
        first_kept_entry_id: Some(first_kept),
        tokens_before: v
            .get("tokens_before")
            .and_then(Value::as_u64)
            .unwrap_or(prep.tokens_before),
        details: v.get("details").cloned().filter(|d| !d.is_null()),
        usage: v.get("usage").cloned().filter(|u| !u.is_null()),
        from_hook: Some(true),
        retained_tail: None,
        system_message: None,
        extra: Default::default(),
    })
}

/// The outcome of one compaction: stored, or cancelled by the named hook.
pub(super) enum Compacted {
    Stored(CompactOutcome),
    Cancelled(String),
}

impl Core {
    /// Compact the session now. Past the threshold with nothing that may be cut, nothing at all
    /// happens (`Ok(None)`). The caller holds the agent.
    pub(super) async fn compact_now(
        &self,
        reason: Reason,
        custom_instructions: Option<String>,
        will_retry: bool,
    ) -> Result<Option<Compacted>, OpError> {
        let compactor = self.compactor();
        let runner = self.runner();
        let prepared = self.prepare_compaction(&runner, &compactor.settings);
        // Past the threshold with nothing that may be cut (everything is recent): not an event
        // worth a word; asked for explicitly, it is an answer.
        if reason == Reason::Threshold && prepared.is_err() {
            return Ok(None);
        }
        self.set_compacting(true);
        self.emit(AgentEvent::CompactionStart {
            reason: reason.as_str().into(),
        });
        let fail = |e: String| {
            let said = format!("{}{e}", reason.failure_prefix());
            self.compaction_end(reason, None, false, false, Some(said));
            OpError::Failed(e)
        };
        if reason == Reason::Manual && prepared.is_err() {
            // Claude Code's PreCompact sees every `/compact`, even one pi will answer with
            // "nothing to compact"; its block still cancels.
            let verdict = runner
                .moment(
                    Moment::NothingToCompact,
                    &json!({"trigger": "manual",
                            "custom_instructions": custom_instructions.as_deref().unwrap_or("")}),
                )
                .await;
            if let Some((by, _)) = verdict.blocked {
                self.compaction_end(reason, None, true, false, None);
                return Ok(Some(Compacted::Cancelled(by)));
            }
        }
        let (prep, branch_entries) = prepared.map_err(|e| fail(e.to_string()))?;
        // The payload repeats the history being summarized: built only when a hook will read it.
        let verdict = if runner.any_wants(CancelableEvent::SessionBeforeCompact, None) {
            runner
                .cancelable(
                    CancelableEvent::SessionBeforeCompact,
                    json!({
                        "preparation": prep.to_hook_payload(),
                        "branch_entries": branch_entries,
                        "custom_instructions": custom_instructions,
                        "reason": reason.as_str(),
                        "will_retry": will_retry,
                    }),
                )
                .await
        } else {
            Default::default()
        };
        if let Some(by) = verdict.cancelled_by {
            self.compaction_end(reason, None, true, false, None);
            return Ok(Some(Compacted::Cancelled(by)));
        }
        let hook_compaction = verdict
            .result
            .as_ref()
            .and_then(|r| r.get("compaction"))
            .filter(|v| !v.is_null())
            .cloned();
        let entry = self
            .compaction_entry(hook_compaction, &prep, &compactor, custom_instructions)
            .await
            .map_err(fail)?;
        let outcome = self
            .store_compaction(entry, &runner, reason, will_retry)
            .map_err(fail)?;
        // The same result `compact` answers with, as pi's `compaction_end` carries it.
        let result = serde_json::to_value(&outcome).ok();
        self.compaction_end(reason, result, false, will_retry, None);
        Ok(Some(Compacted::Stored(outcome)))
    }

    /// What may be cut from the branch, and the branch as JSON for the hooks that will read it
    /// (it is large: every entry of a long session, once more; built only when wanted).
    fn prepare_compaction(
        &self,
        runner: &crate::hooks::runner::Runner,
        settings: &CompactionSettings,
    ) -> Result<(compaction::Preparation, Vec<Value>), CompactionError> {
        let s = self.session.lock();
        let path = s.branch(None);
        compaction::prepare(&path, settings).map(|prep| {
            let entries: Vec<Value> =
                if runner.any_wants(CancelableEvent::SessionBeforeCompact, None) {
                    path.iter()
                        .filter_map(|e| serde_json::to_value(e).ok())
                        .collect()
                } else {
                    Vec::new()
                };
            (prep, entries)
        })
    }

    /// The compaction entry: the one a hook supplied, or the model's summary of `prep`.
    async fn compaction_entry(
        &self,
        hook_compaction: Option<Value>,
        prep: &compaction::Preparation,
        compactor: &Compactor,
        custom_instructions: Option<String>,
    ) -> Result<Compaction, String> {
        match hook_compaction {
            Some(v) => {
                let s = self.session.lock();
                supplied(&v, prep, &s).map_err(|e| e.to_string())
            }
            None => {
                let cancel = self.handle.cancel_token().child_token();
                let summary = summarize::compact(
                    &compactor.summary_model(),
                    prep,
                    custom_instructions.as_deref(),
                    cancel,
                )
                .await
                .map_err(|e| e.to_string())?;
                Ok(summary.to_entry())
            }
        }
    }

    /// Appends `entry` to the session, reloads the agent's context from it and tells the hooks
    /// (`session_compact`).
    fn store_compaction(
        &self,
        entry: Compaction,
        runner: &crate::hooks::runner::Runner,
        reason: Reason,
        will_retry: bool,
    ) -> Result<CompactOutcome, String> {
        let from_hook = entry.from_hook == Some(true);
        let id = self
            .session
            .record(|s| s.append_compaction(entry.clone()))
            .map_err(|e| e.to_string())?;
        self.reload_agent();
        let stored = {
            let s = self.session.lock();
            s.entry(&id).and_then(|e| serde_json::to_value(e).ok())
        };
        runner.notify(NotifyEvent::SessionCompact, None, || {
            json!({
                "compaction_entry": stored,
                "from_extension": from_hook,
                "reason": reason.as_str(),
                "will_retry": will_retry,
            })
        });
        Ok(CompactOutcome {
            summary: entry.summary,
            first_kept_entry_id: entry.first_kept_entry_id,
            tokens_before: entry.tokens_before,
            estimated_tokens_after: Some(self.estimated_context_tokens()),
            usage: entry.usage,
            details: entry.details,
        })
    }

    /// After a run: an overflow is compacted and the turn retried once; otherwise a context past
    /// the threshold is compacted. Returns the retried run's last message, if there was one.
    /// The caller is the run, which holds the agent.
    pub(super) async fn after_run(
        &self,
        agent: &mut crate::agent::Agent,
        last: Option<AssistantMessage>,
    ) -> Option<AssistantMessage> {
        let compactor = self.compactor();
        let overflow = last.as_ref().is_some_and(|m| compactor.is_overflow(m));
        if overflow && compactor.settings.enabled {
            let compacted = self.compact_now(Reason::Overflow, None, true).await;
            // A silent overflow (a reply that ended normally past the window) is compacted but not
            // retried: its answer stands.
            let retry = last
                .as_ref()
                .is_some_and(|m| m.stop_reason != crate::message::StopReason::Stop);
            if let (Ok(Some(Compacted::Stored(_))), true) = (compacted, retry) {
                // The failed reply is history now; the retry starts from the compacted context
                // without it.
                let mut messages = agent.messages();
                if matches!(messages.last().map(|m| m.as_ref()), Some(Message::Assistant(a)) if compactor.is_overflow(a))
                {
                    messages.pop();
                    agent.load_messages(messages);
                }
                return agent.continue_run().await;
            }
            return None;
        }
        let over = compactor.over_threshold(&self.session.lock());
        if over {
            let _ = self.compact_now(Reason::Threshold, None, false).await;
        }
        None
    }
}

/// Threshold compaction between the turns of a run, as pi 1.6 does it before the next model
/// call (besides the check after the run).
pub(super) struct BetweenTurns {
    pub core: std::sync::Weak<Core>,
}

#[async_trait::async_trait]
impl crate::agent::hooks::NextTurn for BetweenTurns {
    async fn prepare(&self) {
        let Some(core) = self.core.upgrade() else {
            return;
        };
        let over = core.compactor().over_threshold(&core.session.lock());
        if over {
            let _ = core.compact_now(Reason::Threshold, None, false).await;
        }
    }
}
