//! Retry policy for transient provider failures (429, 5xx, dropped streams): exponential
//! backoff from `retry.baseDelayMs` (2 s → 4 s → 8 s by default, as pi), at most
//! `retry.maxRetries` attempts, a server's `Retry-After` honoured up to
//! `retry.provider.maxRetryDelayMs`. The agent loop applies it so it can surface
//! `auto_retry_start` / `auto_retry_end` events between attempts.

use super::ProviderError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub enabled: bool,
    pub max_retries: u32,
    pub base_delay_ms: u64,
    pub max_delay_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            enabled: true,
            max_retries: 3,
            base_delay_ms: 2000,
            max_delay_ms: 60_000,
        }
    }
}

impl RetryPolicy {
    /// The delay before retry number `attempt` (1-based), or `None` when the error is not
    /// transient or the attempts are used up.
    pub fn delay_for(&self, attempt: u32, err: &ProviderError) -> Option<u64> {
        if !self.enabled || attempt > self.max_retries || !err.is_retryable() {
            return None;
        }
        let backoff = self
            .base_delay_ms
            .saturating_mul(1u64 << (attempt - 1).min(20));
        let wanted = match err.retry_after_ms() {
            Some(ms) => backoff.max(ms),
            None => backoff,
        };
        Some(wanted.min(self.max_delay_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16) -> ProviderError {
        ProviderError::Http {
            status,
            message: String::new(),
            retry_after_ms: None,
        }
    }

    #[test]
    fn backoff_doubles_and_stops_after_max() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay_for(1, &http(500)), Some(2000));
        assert_eq!(p.delay_for(2, &http(429)), Some(4000));
        assert_eq!(p.delay_for(3, &http(503)), Some(8000));
        assert_eq!(p.delay_for(4, &http(503)), None);
    }

    #[test]
    fn client_errors_are_not_retried() {
        assert_eq!(RetryPolicy::default().delay_for(1, &http(400)), None);
        assert_eq!(
            RetryPolicy::default().delay_for(1, &ProviderError::Aborted),
            None
        );
    }

    #[test]
    fn retry_after_is_honoured_but_capped() {
        let p = RetryPolicy::default();
        let e = ProviderError::Http {
            status: 429,
            message: String::new(),
            retry_after_ms: Some(120_000),
        };
        assert_eq!(p.delay_for(1, &e), Some(60_000));
    }
}
