//! Polling a device-code login (RFC 8628) as pi 1.6's `pollOAuthDeviceCodeFlow` does, for
//! every provider that has one (OpenAI Codex, GitHub Copilot): the user
//! enters a code on another machine while pi asks the provider, every interval, whether they
//! have. The rules are 1.6's so a provider sees the same pace from either pi: 5 seconds when
//! the server names no interval, never less than 1 second, `slow_down` obeyed (the server's
//! new interval, else 5 seconds more), and a deadline after which the login has timed out.
//!
//! Time is tokio's, so tests run the rules on a paused clock. The login is cancelled by
//! dropping the future, as every login is ([`super::flow`]): no poll is sent after that.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// 1.6's (and RFC 8628's) interval when the server names none.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(5);
/// No provider is asked more often than this, whatever it says.
pub const MINIMUM_INTERVAL: Duration = Duration::from_secs(1);
/// What `slow_down` adds when it names no interval (RFC 8628 section 3.5).
pub const SLOW_DOWN_INCREMENT: Duration = Duration::from_secs(5);

/// What one poll found (1.6's `OAuthDeviceCodePollResult`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Poll<T> {
    /// The user has not finished yet.
    Pending,
    /// Asked too often; `interval` is the server's new one when it names it (GitHub does).
    SlowDown {
        interval: Option<Duration>,
    },
    Complete(T),
    /// The login is over; the message says why.
    Failed(String),
}

/// How a device-code login is polled.
#[derive(Debug, Clone, Copy, Default)]
pub struct Schedule {
    /// The server's interval; [`DEFAULT_INTERVAL`] when `None`.
    pub interval: Option<Duration>,
    /// How long the code is valid; no deadline when `None`.
    pub expires_in: Option<Duration>,
    /// Whether to wait one interval before the first poll (GitHub asks for it).
    pub wait_before_first_poll: bool,
}

/// Why a device-code login ended without a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    #[error("Device flow timed out")]
    TimedOut,
    /// Timed out after the server asked to slow down: the local clock is often the cause.
    #[error(
        "Device flow timed out after one or more slow_down responses. This is often caused by \
         clock drift in WSL or VM environments. Please sync or restart the VM clock and try \
         again."
    )]
    TimedOutAfterSlowDown,
    #[error("{0}")]
    Failed(String),
}

fn at_least_minimum(interval: Duration) -> Duration {
    interval.max(MINIMUM_INTERVAL)
}

/// Calls `poll` by `schedule` until it completes or fails, or the deadline passes.
pub async fn poll_device_code<T, F, Fut>(schedule: Schedule, mut poll: F) -> Result<T, DeviceError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Poll<T>>,
{
    let deadline = schedule.expires_in.map(|d| Instant::now() + d);
    let left = || deadline.map(|d| d.saturating_duration_since(Instant::now()));
    let mut interval = at_least_minimum(schedule.interval.unwrap_or(DEFAULT_INTERVAL));
    let mut slowed_down = false;
    if schedule.wait_before_first_poll {
        tokio::time::sleep(left().map_or(interval, |l| l.min(interval))).await;
    }
    while left() != Some(Duration::ZERO) {
        match poll().await {
            Poll::Complete(value) => return Ok(value),
            Poll::Failed(message) => return Err(DeviceError::Failed(message)),
            Poll::Pending => {}
            Poll::SlowDown { interval: asked } => {
                slowed_down = true;
                // The server's own figure where it gives one: a client-kept one can stay too
                // short forever under a drifting clock.
                interval = at_least_minimum(
                    asked
                        .filter(|d| !d.is_zero())
                        .unwrap_or(interval + SLOW_DOWN_INCREMENT),
                );
            }
        }
        match left() {
            Some(Duration::ZERO) => break,
            Some(l) => tokio::time::sleep(l.min(interval)).await,
            None => tokio::time::sleep(interval).await,
        }
    }
    Err(if slowed_down {
        DeviceError::TimedOutAfterSlowDown
    } else {
        DeviceError::TimedOut
    })
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// When each poll was sent, in whole seconds since the start.
    type Calls = Arc<Mutex<Vec<u64>>>;

    /// A poll answering `answers` in turn (then `Pending`), noting when it was called.
    fn scripted(
        answers: Vec<Poll<&'static str>>,
    ) -> (
        Calls,
        impl FnMut() -> std::future::Ready<Poll<&'static str>>,
    ) {
        let start = Instant::now();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let seen = calls.clone();
        let mut answers = answers.into_iter();
        let poll = move || {
            seen.lock()
                .unwrap()
                .push(start.elapsed().as_millis() as u64 / 1000);
            std::future::ready(answers.next().unwrap_or(Poll::Pending))
        };
        (calls, poll)
    }

    fn secs(s: u64) -> Option<Duration> {
        Some(Duration::from_secs(s))
    }

    #[tokio::test(start_paused = true)]
    async fn polls_at_once_then_every_interval_until_complete() {
        let (calls, poll) = scripted(vec![Poll::Pending, Poll::Pending, Poll::Complete("ok")]);
        let schedule = Schedule {
            interval: secs(3),
            expires_in: secs(60),
            ..Schedule::default()
        };
        assert_eq!(poll_device_code(schedule, poll).await, Ok("ok"));
        assert_eq!(*calls.lock().unwrap(), [0, 3, 6]);
    }

    #[tokio::test(start_paused = true)]
    async fn five_seconds_without_an_interval_and_never_under_one() {
        let (calls, poll) = scripted(vec![Poll::Pending, Poll::Complete("ok")]);
        poll_device_code(Schedule::default(), poll).await.unwrap();
        assert_eq!(*calls.lock().unwrap(), [0, 5]);

        let (calls, poll) = scripted(vec![Poll::Pending, Poll::Pending, Poll::Complete("ok")]);
        let schedule = Schedule {
            interval: Some(Duration::ZERO),
            ..Schedule::default()
        };
        poll_device_code(schedule, poll).await.unwrap();
        assert_eq!(*calls.lock().unwrap(), [0, 1, 2]);
    }

    #[tokio::test(start_paused = true)]
    async fn slow_down_adds_five_seconds_or_takes_the_servers_interval() {
        let (calls, poll) = scripted(vec![
            Poll::SlowDown { interval: None },
            Poll::SlowDown { interval: secs(20) },
            Poll::Pending,
            Poll::Complete("ok"),
        ]);
        let schedule = Schedule {
            interval: secs(2),
            ..Schedule::default()
        };
        poll_device_code(schedule, poll).await.unwrap();
        // 2 + 5 after the first, the server's 20 after the second, and 20 kept.
        assert_eq!(*calls.lock().unwrap(), [0, 7, 27, 47]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_ends_it_in_1_6s_words() {
        let (calls, poll) = scripted(vec![]);
        let schedule = Schedule {
            interval: secs(4),
            expires_in: secs(10),
            ..Schedule::default()
        };
        let err = poll_device_code(schedule, poll).await.unwrap_err();
        assert_eq!(err.to_string(), "Device flow timed out");
        // The last wait is cut short by the deadline, and no poll is sent past it.
        assert_eq!(*calls.lock().unwrap(), [0, 4, 8]);

        let (_, poll) = scripted(vec![Poll::SlowDown { interval: None }]);
        let schedule = Schedule {
            interval: secs(1),
            expires_in: secs(10),
            ..Schedule::default()
        };
        let err = poll_device_code(schedule, poll).await.unwrap_err();
        assert_eq!(err, DeviceError::TimedOutAfterSlowDown);
        assert!(
            err.to_string().contains("clock drift in WSL or VM"),
            "{err}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_ends_it_and_a_first_wait_is_kept() {
        let (calls, poll) = scripted(vec![Poll::Failed("access_denied".into())]);
        let schedule = Schedule {
            interval: secs(5),
            wait_before_first_poll: true,
            ..Schedule::default()
        };
        let err = poll_device_code(schedule, poll).await.unwrap_err();
        assert_eq!(err, DeviceError::Failed("access_denied".into()));
        assert_eq!(*calls.lock().unwrap(), [5]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_login_polls_no_more() {
        let (calls, poll) = scripted(vec![]);
        let schedule = Schedule {
            interval: secs(5),
            ..Schedule::default()
        };
        let cancelled =
            tokio::time::timeout(Duration::from_secs(12), poll_device_code(schedule, poll)).await;
        assert!(cancelled.is_err());
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(*calls.lock().unwrap(), [0, 5, 10]);
    }
}
