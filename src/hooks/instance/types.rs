//! The instance's public vocabulary: the host context and supervision settings it is started
//! with, the call-handler trait, states, notices, and the error types callers branch on. Kept
//! apart from the machinery so the API reads in one place.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use crate::hooks::managed_env::ManagedHome;
use crate::hooks::process::StderrLimits;
use crate::hooks::protocol::{CallError, HostCapabilities, DEFAULT_MAX_FRAME};

/// What the host tells every hook about itself, plus supervision settings.
#[derive(Debug, Clone)]
pub struct HostContext {
    /// The project directory: the hooks' working directory and `PI_PROJECT_DIR`.
    pub cwd: PathBuf,
    /// `print`, `json`, `interactive` or `rpc`.
    pub mode: String,
    pub session_id: Option<String>,
    pub session_file: Option<String>,
    pub capabilities: HostCapabilities,
    /// Largest frame accepted from and sent to a hook.
    pub max_frame: usize,
    pub supervision: Supervision,
    /// Unknown command-line flags, offered to hooks in `hello`.
    pub flags: serde_json::Map<String, Value>,
    /// The `HOME` of managed hooks whose entry sets none: created when the first one starts,
    /// shared by every clone of this context, removed with the last.
    pub managed_home: ManagedHome,
    /// `hello.model`, shared by every clone of this context and kept current by the controller.
    pub model: crate::hooks::model_calls::HelloModel,
    /// Providers hooks registered while pi starts (`provider.register`), shared likewise.
    pub providers: crate::hooks::provider_calls::HookProviders,
}

impl HostContext {
    pub fn new(cwd: PathBuf, mode: impl Into<String>) -> Self {
        HostContext {
            cwd,
            mode: mode.into(),
            session_id: None,
            session_file: None,
            capabilities: HostCapabilities::default(),
            max_frame: DEFAULT_MAX_FRAME,
            supervision: Supervision::default(),
            flags: serde_json::Map::new(),
            managed_home: ManagedHome::default(),
            model: Default::default(),
            providers: Default::default(),
        }
    }
}

/// The host's cap on how long a hook tool may run (SPEC 4.9): `tool_execute` carries it as
/// `deadline_ms` and is cancelled when it passes, whatever the hook would like.
pub const TOOL_DEADLINE_CAP: Duration = Duration::from_secs(600);
/// Lowers [`TOOL_DEADLINE_CAP`] (never raises it), in milliseconds.
pub const TOOL_TIMEOUT_ENV: &str = "PI_HOOK_TOOL_TIMEOUT_MS";
/// Once a signal asked pi to exit, each wait of the shutdown (the `session_shutdown` replies,
/// the grace after `shutdown`, the grace after SIGTERM) is cut to this, so pi exits within
/// about a second whatever its hooks do.
pub const HURRIED_GRACE: Duration = Duration::from_millis(200);

/// Restart and shutdown timing (SPEC 4.6) and the per-hook bounds of SPEC 4.9. Only tests
/// change the defaults (and `PI_HOOK_TOOL_TIMEOUT_MS` the tool cap).
#[derive(Debug, Clone)]
pub struct Supervision {
    /// First restart delay; doubles per crash in the window, up to `backoff_max`.
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
    /// More than `max_restarts` crashes within `restart_window` quarantine the hook.
    pub restart_window: Duration,
    pub max_restarts: usize,
    /// After `shutdown` and closing stdin, how long the hook may take to exit by itself.
    pub shutdown_grace: Duration,
    /// After SIGTERM to the group, how long before SIGKILL.
    pub term_grace: Duration,
    /// Both graces once the instance was hurried (a signal): see [`HURRIED_GRACE`].
    pub hurried_grace: Duration,
    pub stderr: StderrLimits,
    /// `log` frames recorded per second; the rest are counted and summarised.
    pub logs_per_sec: u32,
    /// How long a hook tool may run before it is cancelled: [`TOOL_DEADLINE_CAP`], or less.
    pub tool_deadline: Duration,
}

impl Default for Supervision {
    fn default() -> Self {
        let stderr = StderrLimits::default();
        Supervision {
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_secs(5),
            restart_window: Duration::from_secs(60),
            max_restarts: 5,
            shutdown_grace: Duration::from_secs(2),
            term_grace: Duration::from_secs(1),
            hurried_grace: HURRIED_GRACE,
            logs_per_sec: stderr.lines_per_sec,
            stderr,
            tool_deadline: env_tool_deadline(),
        }
    }
}

/// [`TOOL_DEADLINE_CAP`] as lowered by `PI_HOOK_TOOL_TIMEOUT_MS`, read once per process (so a
/// bad value is reported once).
fn env_tool_deadline() -> Duration {
    static CAP: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| {
        let value = std::env::var_os(TOOL_TIMEOUT_ENV);
        tool_deadline(value.as_deref().map(|v| v.to_string_lossy()).as_deref()).unwrap_or_else(
            |e| {
                tracing::warn!("{e}");
                TOOL_DEADLINE_CAP
            },
        )
    })
}

/// Why `PI_HOOK_TOOL_TIMEOUT_MS` was not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{TOOL_TIMEOUT_ENV}={value:?} is not a positive number of milliseconds; hook tools keep the \
     {} ms cap",
    TOOL_DEADLINE_CAP.as_millis()
)]
pub struct BadToolTimeout {
    pub value: String,
}

/// The tool cap for an optional `PI_HOOK_TOOL_TIMEOUT_MS` value: it can lower the cap, never
/// raise it.
pub fn tool_deadline(value: Option<&str>) -> Result<Duration, BadToolTimeout> {
    let Some(v) = value else {
        return Ok(TOOL_DEADLINE_CAP);
    };
    match v.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms).min(TOOL_DEADLINE_CAP)),
        _ => Err(BadToolTimeout {
            value: v.to_string(),
        }),
    }
}

/// Serves the calls a hook makes to the host (`call` frames).
#[async_trait]
pub trait CallHandler: Send + Sync {
    async fn call(&self, hook: &str, method: &str, params: Value) -> Result<Value, CallError>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookState {
    Starting,
    Running,
    Restarting,
    /// Crash-looped: not restarted again in this session.
    Quarantined,
    Stopped,
}

impl HookState {
    pub fn as_str(self) -> &'static str {
        match self {
            HookState::Starting => "starting",
            HookState::Running => "running",
            HookState::Restarting => "restarting",
            HookState::Quarantined => "quarantined",
            HookState::Stopped => "stopped",
        }
    }
}

impl std::fmt::Display for HookState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookErrorKind {
    StartFailed,
    HandshakeTimeout,
    BadHandshake,
    Crashed,
    Framing,
    Timeout,
    BadReply,
    ErrorReply,
    UnknownId,
    /// A message type the host does not know (ignored).
    Unsupported,
    /// The executable does not match its `sha256` pin: it was not (re)started.
    Integrity,
    /// A `subscribe` or `unsubscribe` was refused; the subscriptions did not change.
    BadSubscription,
}

impl HookErrorKind {
    /// The `kind` of a `hook_error` line, snake_case like every other kind.
    pub fn as_str(self) -> &'static str {
        match self {
            HookErrorKind::StartFailed => "start_failed",
            HookErrorKind::HandshakeTimeout => "handshake_timeout",
            HookErrorKind::BadHandshake => "bad_handshake",
            HookErrorKind::Crashed => "crashed",
            HookErrorKind::Framing => "framing",
            HookErrorKind::Timeout => "timeout",
            HookErrorKind::BadReply => "bad_reply",
            HookErrorKind::ErrorReply => "error_reply",
            HookErrorKind::UnknownId => "unknown_id",
            HookErrorKind::Unsupported => "unsupported",
            HookErrorKind::Integrity => "integrity",
            HookErrorKind::BadSubscription => "bad_subscription",
        }
    }
}

impl std::fmt::Display for HookErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Things that happen to a hook outside any one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    Error {
        hook: String,
        kind: HookErrorKind,
        message: String,
    },
    State {
        hook: String,
        state: HookState,
    },
    Log {
        hook: String,
        level: String,
        message: String,
    },
}

/// Why a request to a hook has no result. Every message names the hook.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RequestError {
    #[error("hook {hook} did not reply within {} ms", after.as_millis())]
    Timeout { hook: String, after: Duration },
    #[error("hook {hook} crashed: {detail}")]
    Crashed { hook: String, detail: String },
    #[error("hook {hook} broke the protocol: {detail}")]
    Framing { hook: String, detail: String },
    #[error("hook {hook} answered with an error: {message}")]
    ErrorReply { hook: String, message: String },
    /// A well-framed `reply` of the wrong shape. Fails this request only.
    #[error("hook {hook} sent a malformed reply: {detail}")]
    BadReply { hook: String, detail: String },
    #[error("hook {hook} is {state}")]
    NotRunning { hook: String, state: HookState },
    #[error("request to hook {hook} was cancelled")]
    Cancelled { hook: String },
    /// The request itself exceeds the frame limit (a host-side problem, not the hook's).
    #[error("request to hook {hook} is larger than the {max}-byte frame limit")]
    TooLarge { hook: String, max: usize },
}

impl RequestError {
    /// A stable short name for the failure, for event streams and `pi hooks` output:
    /// `timeout`, `crashed`, `framing`, `error_reply`, `bad_reply`, `not_running`, `cancelled`,
    /// `too_large`.
    pub fn kind_str(&self) -> &'static str {
        match self {
            RequestError::Timeout { .. } => "timeout",
            RequestError::Crashed { .. } => "crashed",
            RequestError::Framing { .. } => "framing",
            RequestError::ErrorReply { .. } => "error_reply",
            RequestError::BadReply { .. } => "bad_reply",
            RequestError::NotRunning { .. } => "not_running",
            RequestError::Cancelled { .. } => "cancelled",
            RequestError::TooLarge { .. } => "too_large",
        }
    }

    /// The notice kind this failure corresponds to, for uniform reporting.
    pub fn kind(&self) -> Option<HookErrorKind> {
        match self {
            RequestError::Timeout { .. } => Some(HookErrorKind::Timeout),
            RequestError::Crashed { .. } => Some(HookErrorKind::Crashed),
            RequestError::Framing { .. } => Some(HookErrorKind::Framing),
            RequestError::ErrorReply { .. } => Some(HookErrorKind::ErrorReply),
            RequestError::BadReply { .. } => Some(HookErrorKind::BadReply),
            RequestError::NotRunning { .. }
            | RequestError::Cancelled { .. }
            | RequestError::TooLarge { .. } => None,
        }
    }
}

pub(super) fn fmt_tail(lines: &[String]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        format!("; last stderr:\n  {}", lines.join("\n  "))
    }
}

/// Why a hook could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("hook {hook}: cannot run {}: {source}", program.display())]
    Spawn {
        hook: String,
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("hook {hook} {status} during start-up{}", fmt_tail(.stderr))]
    Exited {
        hook: String,
        /// "exited with code 1", "was killed by SIGSEGV", "closed its stdout".
        status: String,
        code: Option<i32>,
        stderr: Vec<String>,
    },
    #[error("hook {hook} did not register within {} ms{}", after.as_millis(), fmt_tail(.stderr))]
    HandshakeTimeout {
        hook: String,
        after: Duration,
        stderr: Vec<String>,
    },
    #[error("hook {hook} sent a bad handshake: {detail}{}", fmt_tail(.stderr))]
    BadHandshake {
        hook: String,
        detail: String,
        stderr: Vec<String>,
    },
    #[error("hook {hook} chose protocol version {chosen}; the host offers {offered:?}")]
    VersionNotOffered {
        hook: String,
        chosen: u32,
        offered: Vec<u32>,
    },
    #[error("hook {hook} broke the protocol during start-up: {detail}{}", fmt_tail(.stderr))]
    Framing {
        hook: String,
        detail: String,
        stderr: Vec<String>,
    },
    /// The pin check failed, so nothing was spawned.
    #[error("hook {hook}: {source}")]
    Integrity {
        hook: String,
        #[source]
        source: crate::hooks::spec::PinError,
    },
    /// A required hook could not start and the managed policy says `requiredHookFailure:
    /// "exit"`. `reason` is the "policy degraded: …" sentence, which quotes `source`.
    #[error(
        "pi does not start because the managed policy sets requiredHookFailure: \"exit\": {reason}"
    )]
    Required {
        reason: String,
        source: Box<StartError>,
    },
}

impl StartError {
    pub fn kind(&self) -> HookErrorKind {
        match self {
            StartError::Spawn { .. } | StartError::Exited { .. } => HookErrorKind::StartFailed,
            StartError::HandshakeTimeout { .. } => HookErrorKind::HandshakeTimeout,
            StartError::BadHandshake { .. } | StartError::VersionNotOffered { .. } => {
                HookErrorKind::BadHandshake
            }
            StartError::Framing { .. } => HookErrorKind::Framing,
            StartError::Integrity { .. } => HookErrorKind::Integrity,
            StartError::Required { source, .. } => source.kind(),
        }
    }
}

/// Round-trip latency of `event` requests, over the last [`LATENCY_SAMPLES`] replies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LatencyStats {
    /// All replies ever measured (not only those in the reservoir).
    pub count: u64,
    pub p50_us: u64,
    pub p99_us: u64,
}

pub const LATENCY_SAMPLES: usize = 1024;

#[derive(Default)]
pub(super) struct Latency {
    samples: VecDeque<u64>,
    count: u64,
}

impl Latency {
    pub(super) fn record(&mut self, d: Duration) {
        if self.samples.len() >= LATENCY_SAMPLES {
            self.samples.pop_front();
        }
        self.samples
            .push_back(u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
        self.count += 1;
    }

    pub(super) fn stats(&self) -> LatencyStats {
        let mut v: Vec<u64> = self.samples.iter().copied().collect();
        v.sort_unstable();
        let pick = |q: f64| -> u64 {
            if v.is_empty() {
                return 0;
            }
            let i = ((v.len() as f64 - 1.0) * q).round() as usize;
            v[i.min(v.len() - 1)]
        };
        LatencyStats {
            count: self.count,
            p50_us: pick(0.50),
            p99_us: pick(0.99),
        }
    }
}

#[cfg(test)]
mod tool_deadline_tests {
    use super::*;

    #[test]
    fn the_environment_can_lower_the_tool_cap_but_never_raise_it() {
        assert_eq!(tool_deadline(None), Ok(TOOL_DEADLINE_CAP));
        assert_eq!(tool_deadline(Some("1500")), Ok(Duration::from_millis(1500)));
        assert_eq!(tool_deadline(Some("99999999999")), Ok(TOOL_DEADLINE_CAP));
        for bad in ["0", "-5", "ten", ""] {
            let e = tool_deadline(Some(bad)).unwrap_err();
            assert!(
                e.to_string().contains("PI_HOOK_TOOL_TIMEOUT_MS") && e.to_string().contains(bad),
                "{e}"
            );
        }
    }
}
