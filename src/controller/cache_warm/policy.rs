//! The numbers of prompt-cache warming, with no clock and no I/O: which requests may be
//! replayed, how long their cache entry lives, when the refresh is due, when warming must give
//! up, and whether a refresh pays for itself. The warmer (`super`) owns the timers and asks
//! these functions at each step, so every rule here is unit-tested on plain values.

use std::time::{Duration, Instant};

use crate::hooks::protocol::CacheWarmingAction;
use crate::message::Usage;
use crate::provider::{Model, ThinkingLevel};

/// During a run, warming never goes on longer than this after the request it keeps warm.
pub const MAX_AGE: Duration = Duration::from_secs(60 * 60);
/// Between runs the horizon is shorter: the chance of a next request fades with time.
pub const MAX_IDLE_AGE: Duration = Duration::from_secs(30 * 60);
/// A refresh is sent only when it is expected to save at least this many dollars.
pub const MINIMUM_EXPECTED_SAVINGS: f64 = 0.05;
/// pi's measured chance that a real request arrives within one cache lifetime between runs.
pub const IDLE_CONTINUATION_PROBABILITY: f64 = 0.15;
/// The refresh keeps at least this much of the lifetime in hand.
const MARGIN: Duration = Duration::from_secs(10);

/// Whether the agent is running (a long tool call) or waiting for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Streaming,
    Idle,
}

/// The lifetime of the cache entry a request to `model` writes. pi's requests use the short
/// retention tier; a model without a lifetime for it is not eligible.
pub fn ttl(model: &Model) -> Option<Duration> {
    let seconds = model.prompt_cache.short?;
    Duration::try_from_secs_f64(seconds).ok()
}

/// When the refresh is due: at 90% of the lifetime, but never later than ten seconds before
/// it ends; `None` when the lifetime is too short to keep that margin.
pub fn delay(ttl: Duration) -> Option<Duration> {
    if ttl <= MARGIN {
        return None;
    }
    let ms = (ttl.as_millis() as f64 * 0.9).min((ttl - MARGIN).as_millis() as f64);
    Some(Duration::from_millis((ms.floor() as u64).max(1)))
}

/// Whether the request, replayed with a one-token output cap, reads the same cache entry.
/// Anthropic's budget-based thinking derives its budget from `max_tokens` and keys the cache on
/// it, so a capped replay would miss (and could still think at length).
pub fn replayable(model: &Model, thinking: ThinkingLevel) -> bool {
    let thinks = model.reasoning && thinking != ThinkingLevel::Off;
    if !thinks || model.api != "anthropic-messages" {
        return true;
    }
    model
        .compat
        .get("forceAdaptiveThinking")
        .and_then(serde_json::Value::as_bool)
        == Some(true)
}

/// When the next refresh is due and the latest moment it still is one; why warming stops
/// instead, when it must.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub at: Instant,
    /// A timer can fire late (a suspended laptop, a busy machine). Past half the margin the
    /// refresh would likely write the entry again at full price rather than keep it warm.
    pub deadline: Instant,
}

/// The next refresh of a run that started at `started`, asked at `now`.
pub fn next_slot(
    now: Instant,
    started: Instant,
    phase: Phase,
    ttl: Duration,
    delay: Duration,
) -> Result<Slot, &'static str> {
    let at = now + delay;
    let (limit, reason) = match phase {
        Phase::Streaming => (MAX_AGE, "one-hour safety limit reached"),
        Phase::Idle => (MAX_IDLE_AGE, "30-minute idle safety limit reached"),
    };
    let end = started + limit;
    if at > end || now >= end {
        return Err(reason);
    }
    Ok(Slot {
        at,
        deadline: at + ttl.saturating_sub(delay) / 2,
    })
}

/// Whether a run already scheduled at `at` may go on once the agent settled.
pub fn idle_allows(now: Instant, started: Instant, at: Instant) -> bool {
    let end = started + MAX_IDLE_AGE;
    at <= end && now < end
}

/// pi's estimate for one refresh.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    /// Dollars this refresh costs: the prompt read from cache plus one output token.
    pub warm_cost: f64,
    /// Extra dollars the next request pays if the entry is lost.
    pub miss_cost: f64,
    pub continuation_probability: f64,
    pub expected_savings: f64,
    /// Whether there was anything to price (a prompt size and non-zero rates).
    pub economics_available: bool,
    pub action: CacheWarmingAction,
}

/// Whether refreshing the entry of a `prompt_tokens`-token prompt to `model` pays in `phase`.
pub fn evaluate(model: &Model, prompt_tokens: u64, phase: Phase) -> Decision {
    let price = |input: u64, output: u64, cache_read: u64, cache_write: u64| {
        let usage = Usage {
            input,
            output,
            cache_read,
            cache_write,
            ..Usage::default()
        };
        model.cost.cost_of(&usage).total
    };
    let hit = price(0, 0, prompt_tokens, 0);
    let miss = if model.cost.cache_write > 0.0 {
        price(0, 0, 0, prompt_tokens)
    } else {
        price(prompt_tokens, 0, 0, 0)
    };
    let warm_cost = price(0, 1, prompt_tokens, 0);
    let miss_cost = (miss - hit).max(0.0);
    let continuation_probability = match phase {
        Phase::Idle => IDLE_CONTINUATION_PROBABILITY,
        Phase::Streaming => 1.0,
    };
    let expected_savings = continuation_probability * miss_cost - warm_cost;
    Decision {
        warm_cost,
        miss_cost,
        continuation_probability,
        expected_savings,
        economics_available: prompt_tokens > 0 && (hit > 0.0 || miss > 0.0),
        action: if expected_savings >= MINIMUM_EXPECTED_SAVINGS {
            CacheWarmingAction::Warm
        } else {
            CacheWarmingAction::Stop
        },
    }
}

/// The prompt size of the last real request, as its provider reported it.
pub fn prompt_tokens(usage: &Usage) -> u64 {
    usage.input + usage.cache_read + usage.cache_write
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::cost::CostRates;
    use crate::provider::PromptCache;

    fn model(short: Option<f64>, rates: (f64, f64, f64, f64)) -> Model {
        let mut m = crate::test_support::faux_model();
        m.prompt_cache = PromptCache { short, long: None };
        m.cost = CostRates {
            input: rates.0,
            output: rates.1,
            cache_read: rates.2,
            cache_write: rates.3,
            tiers: Vec::new(),
        };
        m
    }

    #[test]
    fn the_refresh_is_due_at_ninety_percent_keeping_ten_seconds() {
        let s = Duration::from_secs;
        assert_eq!(delay(s(300)), Some(s(270)));
        assert_eq!(delay(s(3600)), Some(s(3240)));
        // Short lifetimes keep the ten seconds rather than the ten percent.
        assert_eq!(delay(s(60)), Some(s(50)));
        assert_eq!(
            delay(Duration::from_millis(10_200)),
            Some(Duration::from_millis(200))
        );
        assert_eq!(delay(s(10)), None);
        assert_eq!(delay(s(3)), None);
    }

    #[test]
    fn only_models_with_a_short_lifetime_are_eligible() {
        let rates = (3.0, 15.0, 0.3, 3.75);
        assert_eq!(
            ttl(&model(Some(300.0), rates)),
            Some(Duration::from_secs(300))
        );
        assert_eq!(ttl(&model(None, rates)), None);
        let mut long_only = model(None, rates);
        long_only.prompt_cache.long = Some(3600.0);
        assert_eq!(ttl(&long_only), None);
    }

    #[test]
    fn budget_thinking_on_anthropic_cannot_be_replayed() {
        let mut m = model(Some(300.0), (0.0, 0.0, 0.0, 0.0));
        m.api = "anthropic-messages".into();
        m.reasoning = true;
        assert!(replayable(&m, ThinkingLevel::Off));
        assert!(!replayable(&m, ThinkingLevel::High));
        m.compat = serde_json::json!({"forceAdaptiveThinking": true});
        assert!(replayable(&m, ThinkingLevel::High));
        m.api = "openai-completions".into();
        m.compat = serde_json::json!({});
        assert!(replayable(&m, ThinkingLevel::High));
    }

    #[test]
    fn slots_stop_at_the_safety_limits() {
        let t0 = Instant::now();
        let ttl = Duration::from_secs(300);
        let d = delay(ttl).unwrap();
        let slot = next_slot(t0, t0, Phase::Streaming, ttl, d).unwrap();
        assert_eq!(slot.at, t0 + d);
        assert_eq!(slot.deadline, t0 + d + Duration::from_secs(15));
        // 56 minutes in: the next refresh would come after the hour.
        let late = t0 + Duration::from_secs(56 * 60);
        assert_eq!(
            next_slot(late, t0, Phase::Streaming, ttl, d),
            Err("one-hour safety limit reached")
        );
        // Idle warming gives up after half an hour.
        let idle = t0 + Duration::from_secs(26 * 60);
        assert_eq!(
            next_slot(idle, t0, Phase::Idle, ttl, d),
            Err("30-minute idle safety limit reached")
        );
        assert!(next_slot(idle, t0, Phase::Streaming, ttl, d).is_ok());
        assert!(idle_allows(t0, t0, t0 + d));
        assert!(!idle_allows(idle, t0, idle + d));
    }

    #[test]
    fn a_refresh_is_sent_only_when_it_pays() {
        // 100k tokens at Sonnet's rates: missing costs 0.345 more than a hit.
        let m = model(Some(300.0), (3.0, 15.0, 0.3, 3.75));
        let busy = evaluate(&m, 100_000, Phase::Streaming);
        assert!((busy.miss_cost - 0.345).abs() < 1e-9, "{busy:?}");
        assert!((busy.warm_cost - 0.030015).abs() < 1e-9, "{busy:?}");
        assert_eq!(busy.action, CacheWarmingAction::Warm);
        // Idle, only a 15% chance of a next request: 0.05175 - 0.030015 < 0.05.
        let idle = evaluate(&m, 100_000, Phase::Idle);
        assert_eq!(idle.continuation_probability, 0.15);
        assert_eq!(idle.action, CacheWarmingAction::Stop);
        // Cheap reads and dear writes make idle warming worth it.
        let dear = model(Some(300.0), (1.0, 1.0, 0.1, 10.0));
        assert_eq!(
            evaluate(&dear, 100_000, Phase::Idle).action,
            CacheWarmingAction::Warm
        );
        // Without a cache-write price a miss costs plain input.
        let plain = model(Some(300.0), (2.0, 8.0, 0.5, 0.0));
        assert!((evaluate(&plain, 1_000_000, Phase::Streaming).miss_cost - 1.5).abs() < 1e-9);
        // Nothing to price: no prompt, or a free model.
        let none = evaluate(&m, 0, Phase::Streaming);
        assert!(!none.economics_available);
        assert_eq!(none.action, CacheWarmingAction::Stop);
        let free = evaluate(&model(Some(300.0), (0.0, 0.0, 0.0, 0.0)), 5000, Phase::Idle);
        assert!(!free.economics_available);
    }
}
