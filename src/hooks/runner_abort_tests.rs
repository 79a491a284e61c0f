//! The runner's abort rules with in-memory hooks that never answer. The abort is sent when the
//! hook has been asked (nothing is timed); the generous timeouts only turn a hang into a
//! failure.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use tokio::sync::{Barrier, Notify};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::hooks::events::{AwaitedEvent, CancelableEvent, ChainEvent};
use crate::hooks::instance::HURRIED_GRACE;

const HANG: Duration = Duration::from_secs(10);

enum Answer {
    Now(Value),
    /// Never; the request only ends when its future is dropped.
    Never,
    /// Once every hook sharing the barrier has been asked.
    Together(Arc<Barrier>),
}

struct Hook {
    name: &'static str,
    events: Vec<&'static str>,
    answer: Answer,
    /// The deadlines it was asked with.
    asked: Mutex<Vec<Duration>>,
    asked_now: Notify,
    /// Requests dropped before they answered (withdrawn).
    withdrawn: Arc<AtomicUsize>,
}

fn hook(name: &'static str, events: &[&'static str], answer: Answer) -> Arc<Hook> {
    Arc::new(Hook {
        name,
        events: events.to_vec(),
        answer,
        asked: Mutex::new(Vec::new()),
        asked_now: Notify::new(),
        withdrawn: Arc::default(),
    })
}

struct CountDrop(Arc<AtomicUsize>);

impl Drop for CountDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl Endpoint for Hook {
    fn name(&self) -> String {
        self.name.into()
    }
    fn wants(&self, event: &str, _tool: Option<&str>) -> Option<Duration> {
        self.events
            .contains(&event)
            .then_some(Duration::from_secs(60))
    }
    fn fail_policy(&self) -> FailPolicy {
        FailPolicy::Open
    }
    fn mode(&self) -> HookMode {
        HookMode::Enforce
    }
    async fn request(
        &self,
        _event: &str,
        _payload: Value,
        deadline: Duration,
    ) -> Result<Value, EndpointError> {
        self.asked.lock().unwrap().push(deadline);
        self.asked_now.notify_one();
        match &self.answer {
            Answer::Now(v) => Ok(v.clone()),
            Answer::Never => {
                let _pending = CountDrop(self.withdrawn.clone());
                std::future::pending().await
            }
            Answer::Together(barrier) => {
                barrier.wait().await;
                Ok(Value::Null)
            }
        }
    }
    fn notify(&self, _event: &str, _payload: Value) {}
}

fn runner(
    hooks: &[Arc<Hook>],
) -> (
    Runner,
    CancellationToken,
    mpsc::UnboundedReceiver<AgentEvent>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let r = Runner::new(
        hooks
            .iter()
            .map(|h| h.clone() as Arc<dyn Endpoint>)
            .collect(),
        Some(tx),
    );
    let token = CancellationToken::new();
    let t = token.clone();
    r.attach_abort(move || t.clone());
    (r, token, rx)
}

fn decisions(rx: &mut mpsc::UnboundedReceiver<AgentEvent>) -> Vec<HookDecision> {
    std::iter::from_fn(|| rx.try_recv().ok())
        .filter_map(|e| match e {
            AgentEvent::HookDecision(d) => Some(d),
            _ => None,
        })
        .collect()
}

fn ok(_: &Value) -> Result<(), String> {
    Ok(())
}

/// Runs `work` and aborts the run once `waiting` has been asked.
async fn abort_when_asked<T>(
    waiting: &Hook,
    token: &CancellationToken,
    work: impl std::future::Future<Output = T>,
) -> T {
    let abort = async {
        waiting.asked_now.notified().await;
        token.cancel();
    };
    let run = async { tokio::join!(work, abort).0 };
    tokio::time::timeout(HANG, run)
        .await
        .expect("the runner kept waiting after the abort")
}

#[tokio::test]
async fn an_abort_blocks_a_waiting_gate_and_withdraws_its_request() {
    let gate = hook("guard", &["tool_call"], Answer::Never);
    let (r, token, mut rx) = runner(std::slice::from_ref(&gate));
    let v = abort_when_asked(&gate, &token, r.gate("c1", "bash", json!({}), &ok)).await;
    assert_eq!(
        v,
        GateVerdict::Block {
            reason:
                "Blocked: the run was aborted while hook guard was deciding, so bash did not run."
                    .into(),
            terminate: false,
        }
    );
    assert_eq!(gate.withdrawn.load(Ordering::SeqCst), 1);
    let d = decisions(&mut rx);
    assert_eq!(d[0].outcome, "block");
    assert_eq!(d[0].answers[0].outcome, "error");
}

#[tokio::test]
async fn an_aborted_run_asks_no_hook_and_its_gate_blocks() {
    let gate = hook("guard", &["tool_call"], Answer::Now(Value::Null));
    let (r, token, _rx) = runner(std::slice::from_ref(&gate));
    token.cancel();
    let v = r.gate("c1", "bash", json!({}), &ok).await;
    assert!(matches!(v, GateVerdict::Block { .. }), "{v:?}");
    assert!(gate.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_aborted_chain_ends_with_the_value_so_far() {
    let first = hook("first", &["input"], Answer::Now(json!("+first")));
    let stuck = hook("stuck", &["input"], Answer::Never);
    let last = hook("last", &["input"], Answer::Now(json!("+last")));
    let (r, token, mut rx) = runner(&[first, stuck.clone(), last.clone()]);
    let chain = r.chain(
        ChainEvent::Input,
        None,
        String::from("text"),
        |acc| json!(acc),
        |acc, v, _| {
            acc.push_str(v.as_str().unwrap_or_default());
            Ok(Step::Changed("transform"))
        },
    );
    let out = abort_when_asked(&stuck, &token, chain).await;
    assert_eq!(out, "text+first");
    assert_eq!(stuck.withdrawn.load(Ordering::SeqCst), 1);
    assert!(
        last.asked.lock().unwrap().is_empty(),
        "no hook is asked after the abort"
    );
    let d = decisions(&mut rx);
    assert_eq!(d[0].outcome, "patched");
    assert_eq!(d[0].answers.len(), 2);
    assert!(d[0].answers[1]
        .reason
        .as_deref()
        .is_some_and(|r| r.contains("aborted")));
}

#[tokio::test]
async fn an_aborted_cancelable_keeps_earlier_results_and_cancels_nothing() {
    let event = "session_before_fork";
    let first = hook("first", &[event], Answer::Now(json!({"skip": true})));
    let stuck = hook("stuck", &[event], Answer::Never);
    let (r, token, _rx) = runner(&[first, stuck.clone()]);
    let v = abort_when_asked(
        &stuck,
        &token,
        r.cancelable(CancelableEvent::SessionBeforeFork, json!({})),
    )
    .await;
    assert_eq!(v.cancelled_by, None);
    assert_eq!(
        v.result.and_then(|m| m.get("skip").cloned()),
        Some(json!(true))
    );
}

#[tokio::test]
async fn session_shutdown_asks_everyone_at_once_with_at_most_the_grace() {
    // Each answers only once both were asked: asked one after the other, neither would.
    let barrier = Arc::new(Barrier::new(2));
    let a = hook(
        "a",
        &["session_shutdown"],
        Answer::Together(barrier.clone()),
    );
    let b = hook("b", &["session_shutdown"], Answer::Together(barrier));
    let (r, _token, _rx) = runner(&[a.clone(), b.clone()]);
    tokio::time::timeout(
        HANG,
        r.awaited(AwaitedEvent::SessionShutdown, json!({"reason": "quit"})),
    )
    .await
    .expect("the subscribers were not asked at once");
    for h in [&a, &b] {
        // They asked for 60 s.
        assert_eq!(*h.asked.lock().unwrap(), vec![SESSION_SHUTDOWN_GRACE]);
    }
}

#[tokio::test]
async fn session_shutdown_after_a_signal_is_still_sent_but_barely_waited_for() {
    let a = hook("a", &["session_shutdown"], Answer::Never);
    let (r, token, _rx) = runner(std::slice::from_ref(&a));
    token.cancel();
    let t0 = std::time::Instant::now();
    tokio::time::timeout(
        HANG,
        r.awaited(AwaitedEvent::SessionShutdown, json!({"reason": "quit"})),
    )
    .await
    .expect("session_shutdown waited for a hook that never answers");
    assert!(t0.elapsed() >= HURRIED_GRACE, "it was given its grace");
    assert_eq!(a.asked.lock().unwrap().len(), 1, "it was still told");
    assert_eq!(a.withdrawn.load(Ordering::SeqCst), 1);
}
