//! The last-override kind (`cache_warming_decision`): pi proposes an answer, every subscribed
//! hook is asked in load order with pi's proposal, and the last hook that gives an explicit
//! answer wins. A hook that fails is recorded (`hook_error`) and counts as no answer, so pi's
//! decision (or an earlier hook's) stands. Unlike the other kinds, what these waits serve is
//! not a run: the caller passes the token that ends them (the cache warmer's own).

use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{answer, micros, parse, Runner};
use crate::hooks::events::OverrideEvent;
use crate::hooks::protocol::{CacheWarmingAction, CacheWarmingReply};

/// The combined answer of a last-override event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Override<T> {
    pub value: T,
    /// Whether a hook's answer differs from pi's proposal.
    pub overridden: bool,
}

impl Runner {
    /// `cache_warming_decision`: pi's `proposed` action unless a hook answers; the last
    /// answer wins. `None` when `cancel` fires first (the refresh is no longer wanted).
    pub async fn cache_warming_decision(
        &self,
        payload: Value,
        proposed: CacheWarmingAction,
        cancel: &CancellationToken,
    ) -> Option<Override<CacheWarmingAction>> {
        let event = OverrideEvent::CacheWarmingDecision.name();
        let mut action = proposed;
        let mut answers = Vec::new();
        for (h, deadline) in self.subscribed(event, None) {
            let name = h.name();
            let t0 = Instant::now();
            let r = match self
                .ask(Some(cancel), &h, event, payload.clone(), deadline)
                .await
            {
                None => return None,
                Some(Ok(v)) => parse::<CacheWarmingReply>(&name, event, v),
                Some(Err(e)) => Err(e),
            };
            let lat = micros(t0);
            match r {
                Ok(CacheWarmingReply { action: Some(a) }) => {
                    action = a;
                    answers.push(answer(&name, a.as_str(), lat));
                }
                Ok(_) => answers.push(answer(&name, "continue", lat)),
                Err(e) => {
                    self.report_error(&name, event, &e);
                    answers.push(answer(&name, "error", lat));
                }
            }
        }
        self.decide(event, None, answers, action.as_str(), None);
        Some(Override {
            value: action,
            overridden: action != proposed,
        })
    }
}
