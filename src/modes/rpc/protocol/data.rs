//! What RPC's records carry beyond the controller's vocabulary. A command's response data is
//! the controller's own result type (`crate::controller::types`), serialised as it is — one
//! vocabulary for every front end. What is left here is the usage figure `message_update`
//! events carry, which no controller operation returns.

use serde::{Deserialize, Serialize};

/// Token counts of one model call or a whole session, with their cost in dollars.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageCost {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub total: f64,
    /// Whether `total` is the provider's own figure rather than computed from prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_from_provider: Option<bool>,
}

/// pi-ai's `Usage`, as `message_update` carries it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// The part of `cacheWrite` written with one-hour retention (Anthropic only).
    #[serde(
        rename = "cacheWrite1h",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_write_1h: Option<u64>,
    /// Reasoning tokens, a subset of `output`, when the provider reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    pub total_tokens: u64,
    pub cost: UsageCost,
}
