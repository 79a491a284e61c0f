//! Where replayed decisions come from. [`DecisionSource`] is the seam: anything that can judge
//! one recorded tool call — a native pi hook ([`NativeHook`], here), or Claude Code command
//! hooks (`--claude-hooks`, which plug in as another implementation) — is asked call by call,
//! in recorded order, and answers a [`Decision`] in the gate's own terms.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::calls::RecordedCall;
use crate::hooks::calls::HostCalls;
use crate::hooks::host;
use crate::hooks::instance::{HookInstance, HostContext, StartError};
use crate::hooks::protocol::{parse_result, FailPolicy, GateReply};
use crate::hooks::sources;
use crate::hooks::spec::HookSource;

/// The gate's answer to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Allow,
    Block,
    Patch,
    /// The decider failed (timeout, crash, a reply of the wrong shape); `fails_closed` says
    /// whether the host would then have blocked the call.
    Error,
    /// The decider does not look at this tool (no subscription matches): allowed without a
    /// round trip, as in the host.
    NotAsked,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<Value>,
    /// For an `error`: whether the host would have blocked the call (`fail: "closed"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fails_closed: Option<bool>,
    /// For a `block`: what follows the reason in the model's result (Claude Code
    /// PostToolUseFailure hooks' feedback on the blocked call).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub feedback: Vec<String>,
    pub latency_us: u64,
}

impl Decision {
    pub(crate) fn new(outcome: Outcome, latency_us: u64) -> Decision {
        Decision {
            outcome,
            reason: None,
            patch: None,
            fails_closed: None,
            feedback: Vec::new(),
            latency_us,
        }
    }

    /// Whether the call would have run (a patched call runs, changed).
    pub fn runs(&self) -> bool {
        match self.outcome {
            Outcome::Allow | Outcome::Patch | Outcome::NotAsked => true,
            Outcome::Block => false,
            Outcome::Error => self.fails_closed == Some(false),
        }
    }

    /// `allow`, `block: why`, `patch {…}`, `error (fails closed): why`, `not asked`.
    pub fn summary(&self) -> String {
        match self.outcome {
            Outcome::Allow => "allow".into(),
            Outcome::NotAsked => "not asked (allow)".into(),
            Outcome::Block => format!(
                "block: {}",
                self.reason.as_deref().unwrap_or("no reason given")
            ),
            Outcome::Patch => format!("patch {}", self.patch.clone().unwrap_or(Value::Null)),
            Outcome::Error => format!(
                "error ({}): {}",
                if self.fails_closed == Some(false) {
                    "fails open: allow"
                } else {
                    "fails closed: block"
                },
                self.reason.as_deref().unwrap_or("")
            ),
        }
    }

    /// The same decision, not counting how long it took (what a diff compares). A call one
    /// source does not look at and the other allows is the same call run the same way.
    pub fn same_as(&self, other: &Decision) -> bool {
        let effective = |o: Outcome| {
            if o == Outcome::NotAsked {
                Outcome::Allow
            } else {
                o
            }
        };
        effective(self.outcome) == effective(other.outcome)
            && self.reason == other.reason
            && self.patch == other.patch
            && self.fails_closed == other.fails_closed
    }
}

/// Something that judges recorded tool calls.
#[async_trait]
pub trait DecisionSource: Send + Sync {
    /// The name shown in reports (the hook's registered name).
    fn name(&self) -> String;
    /// What the source would have decided about `call`. Never fails: a failure is a decision
    /// (`Outcome::Error`), as it is for the host.
    async fn decide(&self, call: &RecordedCall) -> Decision;
    /// Stops whatever the source started.
    async fn close(&self);
}

/// A native pi hook, started once (as `--hook CMD` would start it, in `print` mode without a
/// session) and asked `tool_call` exactly as the host's gate asks: only for tools its
/// subscription matches, with the host's payload and deadline.
pub struct NativeHook {
    hook: Arc<HookInstance>,
    fail: FailPolicy,
    deadline: Option<Duration>,
}

impl NativeHook {
    /// `deadline` overrides the subscription's reply deadline.
    pub async fn start(
        command: &str,
        cwd: &Path,
        deadline: Option<Duration>,
    ) -> Result<NativeHook, StartFailure> {
        let spec = sources::from_command(command, cwd, HookSource::Cli)
            .map_err(|e| StartFailure::Command(e.to_string()))?;
        let mut ctx = HostContext::new(cwd.to_path_buf(), "print");
        ctx.capabilities = host::capabilities("print");
        let calls = Arc::new(HostCalls::new("print", cwd.to_path_buf()));
        // Process notices (restarts, logs) are not part of a replay's report.
        let (tx, _rx) = mpsc::unbounded_channel();
        let hook = HookInstance::start(spec, ctx, calls, tx).await?;
        let fail = hook
            .spec()
            .fail
            .or(hook.registration().fail)
            .unwrap_or_default();
        Ok(NativeHook {
            hook,
            fail,
            deadline,
        })
    }
}

/// Why a hook for replay could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartFailure {
    #[error("{0}")]
    Command(String),
    #[error(transparent)]
    Start(#[from] StartError),
}

#[async_trait]
impl DecisionSource for NativeHook {
    fn name(&self) -> String {
        self.hook.name()
    }

    async fn decide(&self, call: &RecordedCall) -> Decision {
        let Some(wanted) = self
            .hook
            .subscriptions()
            .wants("tool_call", Some(&call.tool))
        else {
            return Decision::new(Outcome::NotAsked, 0);
        };
        let payload =
            json!({"tool_call_id": call.call_id, "tool_name": call.tool, "input": call.input});
        let t0 = Instant::now();
        let r = self
            .hook
            .request("tool_call", payload, self.deadline.unwrap_or(wanted))
            .await;
        let us = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
        let reply = r
            .map_err(|e| e.to_string())
            .and_then(|v| parse_result::<GateReply>(v).map_err(|e| e.to_string()));
        match reply {
            Ok(g) if g.block => {
                let mut d = Decision::new(Outcome::Block, us);
                d.reason = Some(g.reason.unwrap_or_default());
                d
            }
            Ok(GateReply { patch: Some(p), .. }) if !p.is_null() => {
                let mut d = Decision::new(Outcome::Patch, us);
                d.patch = Some(p);
                d
            }
            Ok(_) => Decision::new(Outcome::Allow, us),
            Err(why) => {
                let mut d = Decision::new(Outcome::Error, us);
                d.reason = Some(why);
                d.fails_closed = Some(self.fail == FailPolicy::Closed);
                d
            }
        }
    }

    async fn close(&self) {
        self.hook.shutdown("pi hook replay finished").await;
    }
}
