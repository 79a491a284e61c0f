//! Pricing: a model's rates in dollars per million tokens, and what one assistant message's
//! usage cost at those rates.
//!
//! It lives beside the providers because every provider prices its message the moment the
//! message is finished (pi's `calculateCost`), so the cost travels with the message into
//! events, hooks and the session file and is never recomputed later with other rates. The
//! arithmetic repeats pi 1.6's operation for operation (`rate / 1e6 * tokens`; cache writes as
//! `(rate × short + input rate × 2 × hour-long) / 1e6`; the total summed input, output, cache
//! read, cache write in that order), so both programs write the same
//! doubles for the same usage.

use serde::{Deserialize, Serialize};

use crate::message::{js_number, Cost, Usage};

/// Tokens per priced unit: rates are quoted per million tokens.
const PER: f64 = 1_000_000.0;

/// A model's prices in dollars per million tokens (models.json `cost`). All zero means the
/// model is free or its prices are unknown; either way its messages cost 0. `tiers` are
/// other rates for requests whose input (with cache reads and writes) is larger than a
/// threshold, as pi 1.6 prices long-context requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CostRates {
    #[serde(serialize_with = "js_number")]
    pub input: f64,
    #[serde(serialize_with = "js_number")]
    pub output: f64,
    #[serde(serialize_with = "js_number")]
    pub cache_read: f64,
    #[serde(serialize_with = "js_number")]
    pub cache_write: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<CostTier>,
}

/// The rates that apply above `input_tokens_above` input tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CostTier {
    #[serde(serialize_with = "js_number")]
    pub input_tokens_above: f64,
    #[serde(serialize_with = "js_number")]
    pub input: f64,
    #[serde(serialize_with = "js_number")]
    pub output: f64,
    #[serde(serialize_with = "js_number")]
    pub cache_read: f64,
    #[serde(serialize_with = "js_number")]
    pub cache_write: f64,
}

impl CostRates {
    /// The four rates in models.json order, with their models.json key names.
    pub fn fields(&self) -> [(&'static str, f64); 4] {
        [
            ("input", self.input),
            ("output", self.output),
            ("cacheRead", self.cache_read),
            ("cacheWrite", self.cache_write),
        ]
    }

    /// The rates for a request of `usage`'s size: the tier with the highest threshold its
    /// input exceeds, else the base rates (1.6's `calculateCost`).
    fn rates_for(&self, usage: &Usage) -> [f64; 4] {
        let input_tokens = (usage.input + usage.cache_read + usage.cache_write) as f64;
        let mut rates = [self.input, self.output, self.cache_read, self.cache_write];
        let mut matched = -1.0;
        for t in &self.tiers {
            if input_tokens > t.input_tokens_above && t.input_tokens_above > matched {
                rates = [t.input, t.output, t.cache_read, t.cache_write];
                matched = t.input_tokens_above;
            }
        }
        rates
    }

    /// What `usage` costs at these rates, in dollars, per token kind and in total.
    pub fn cost_of(&self, usage: &Usage) -> Cost {
        let [input_rate, output_rate, read_rate, write_rate] = self.rates_for(usage);
        let part = |rate: f64, tokens: u64| (rate / PER) * tokens as f64;
        let input = part(input_rate, usage.input);
        let output = part(output_rate, usage.output);
        let cache_read = part(read_rate, usage.cache_read);
        // pi 1.6 prices hour-long cache writes at twice the input rate, in one expression.
        let long = usage.cache_write_1h.unwrap_or(0).min(usage.cache_write);
        let short = usage.cache_write - long;
        let cache_write = (write_rate * short as f64 + input_rate * 2.0 * long as f64) / PER;
        Cost {
            input,
            output,
            cache_read,
            cache_write,
            total: input + output + cache_read + cache_write,
            total_from_provider: Some(false),
        }
    }

    /// Sets `usage.cost` from its token counts, replacing whatever was there.
    pub fn price(&self, usage: &mut Usage) {
        usage.cost = self.cost_of(usage);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Usage {
        Usage {
            input,
            output,
            cache_read,
            cache_write,
            total_tokens: input + output + cache_read + cache_write,
            ..Usage::default()
        }
    }

    const SONNET: CostRates = CostRates {
        input: 3.0,
        output: 15.0,
        cache_read: 0.3,
        cache_write: 3.75,
        tiers: Vec::new(),
    };

    #[test]
    fn a_long_request_is_priced_at_the_highest_tier_it_exceeds_as_1_6_does() {
        let tier =
            |above: f64, input: f64, output: f64, cache_read: f64, cache_write: f64| CostTier {
                input_tokens_above: above,
                input,
                output,
                cache_read,
                cache_write,
            };
        // Listed lowest-last: the highest threshold exceeded wins, whatever the order.
        let rates = CostRates {
            tiers: vec![
                tier(200_000.0, 6.0, 22.5, 0.6, 7.5),
                tier(100_000.0, 4.0, 18.0, 0.4, 5.0),
            ],
            ..SONNET
        };
        // Each expected row is what pi 1.6.0's calculateCost returns for the same usage.
        let mut hour = usage(120_000, 7, 3, 2000);
        hour.cache_write_1h = Some(1000);
        let cases = [
            (
                usage(150_000, 1000, 60_000, 0),
                [0.9, 0.022500000000000003, 0.036, 0.0, 0.9585],
            ),
            (
                usage(90_000, 1000, 10_000, 1),
                [0.36, 0.018000000000000002, 0.004, 0.000005, 0.382005],
            ),
            (
                hour,
                [0.48, 0.000126, 0.0000012000000000000002, 0.013, 0.4931272],
            ),
            (
                usage(90_000, 1000, 10_000, 0),
                [0.27, 0.015000000000000001, 0.003, 0.0, 0.28800000000000003],
            ),
        ];
        for (u, [input, output, cache_read, cache_write, total]) in cases {
            let c = rates.cost_of(&u);
            assert_eq!(
                [c.input, c.output, c.cache_read, c.cache_write, c.total],
                [input, output, cache_read, cache_write, total],
                "{u:?}"
            );
        }
        let v = serde_json::to_value(&rates).unwrap();
        assert_eq!(v["tiers"][1]["inputTokensAbove"], 100000);
    }

    #[test]
    fn every_token_kind_is_priced_at_its_own_rate() {
        let c = SONNET.cost_of(&usage(1_000_000, 2_000_000, 10_000_000, 400_000));
        assert_eq!(c.input, 3.0);
        assert_eq!(c.output, 30.0);
        assert_eq!(c.cache_read, 3.0);
        assert_eq!(c.cache_write, 1.5);
        assert_eq!(c.total, 37.5);
    }

    #[test]
    fn cache_tokens_are_charged_at_cache_rates_not_the_input_rate() {
        // 1000 tokens read from the cache cost a tenth of 1000 fresh input tokens.
        let cached = SONNET.cost_of(&usage(0, 0, 1000, 0));
        let fresh = SONNET.cost_of(&usage(1000, 0, 0, 0));
        assert_eq!(cached.input, 0.0);
        assert!((cached.cache_read - 0.0003).abs() < 1e-15, "{cached:?}");
        assert!((fresh.input - 0.003).abs() < 1e-15, "{fresh:?}");
        let written = SONNET.cost_of(&usage(0, 0, 0, 1000));
        assert!((written.cache_write - 0.00375).abs() < 1e-15, "{written:?}");
        assert_eq!(written.total, written.cache_write);
    }

    #[test]
    fn the_arithmetic_is_pis_operation_for_operation() {
        // pi: (rate / 1000000) * tokens, then total = input + output + cacheRead + cacheWrite.
        // The values below are what node prints for the same expressions.
        let c = SONNET.cost_of(&usage(12, 7, 1000, 3));
        assert_eq!(c.input, (3.0 / 1e6) * 12.0);
        assert_eq!(c.input, 0.000036);
        assert_eq!(c.output, 0.000105);
        assert_eq!(c.cache_read, 0.0003);
        assert_eq!(c.cache_write, 0.00001125);
        assert_eq!(c.total, 0.00045224999999999996);
    }

    #[test]
    fn a_model_without_rates_costs_nothing() {
        let c = CostRates::default().cost_of(&usage(5000, 900, 40_000, 1200));
        assert_eq!(
            c,
            Cost {
                total_from_provider: Some(false),
                ..Cost::default()
            }
        );
    }

    #[test]
    fn price_replaces_a_stale_cost() {
        let mut u = usage(1_000_000, 0, 0, 0);
        u.cost.total = 99.0;
        SONNET.price(&mut u);
        assert_eq!(u.cost.input, 3.0);
        assert_eq!(u.cost.total, 3.0);
    }

    #[test]
    fn rates_serialize_as_pi_writes_a_model_cost() {
        let v = serde_json::to_string(&SONNET).unwrap();
        assert_eq!(
            v,
            r#"{"input":3,"output":15,"cacheRead":0.3,"cacheWrite":3.75}"#
        );
    }
}
