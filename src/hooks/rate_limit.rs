//! A per-second budget for what a hook may make pi record: its stderr lines and its `log`
//! frames. A hook can produce either faster than anyone can read, so past the budget the
//! excess is only counted, and the count is reported once the next second begins (or when
//! the source ends), as "… N lines dropped". One implementation serves both sources so they
//! cannot drift apart.

use std::time::{Duration, Instant};

/// Per-second budget of recorded items.
#[derive(Debug)]
pub struct RateLimit {
    per_sec: u32,
    window_start: Instant,
    in_window: u32,
    dropped: u64,
}

impl RateLimit {
    pub fn new(per_sec: u32, now: Instant) -> Self {
        RateLimit {
            per_sec,
            window_start: now,
            in_window: 0,
            dropped: 0,
        }
    }

    /// Whether to record an item now; when a new window starts with items dropped in the last
    /// one, also returns how many.
    pub fn admit(&mut self, now: Instant) -> (bool, Option<u64>) {
        let mut summary = None;
        if now.duration_since(self.window_start) >= Duration::from_secs(1) {
            if self.dropped > 0 {
                summary = Some(self.dropped);
            }
            self.window_start = now;
            self.in_window = 0;
            self.dropped = 0;
        }
        if self.in_window < self.per_sec {
            self.in_window += 1;
            (true, summary)
        } else {
            self.dropped += 1;
            (false, summary)
        }
    }

    /// Items dropped in the current window and not yet reported; resets the count, for the
    /// final summary when the source ends.
    pub fn take_dropped(&mut self) -> u64 {
        std::mem::take(&mut self.dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_per_second_and_one_summary_of_the_excess() {
        let t0 = Instant::now();
        let mut r = RateLimit::new(2, t0);
        assert_eq!(r.admit(t0), (true, None));
        assert_eq!(r.admit(t0), (true, None));
        assert_eq!(r.admit(t0), (false, None));
        assert_eq!(r.admit(t0), (false, None));
        // The next second: admitted again, with the summary of the two dropped.
        let t1 = t0 + Duration::from_secs(1);
        assert_eq!(r.admit(t1), (true, Some(2)));
        assert_eq!(r.admit(t1), (true, None));
        assert_eq!(r.admit(t1), (false, None));
        assert_eq!(r.take_dropped(), 1);
        assert_eq!(r.take_dropped(), 0);
    }
}
