//! Supervision tests against real processes: `fixtures/hooks/testhook.py` in various modes.
//! Timeouts are short and backoffs tiny so the module stays fast; the only time assertions are
//! generous upper bounds.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use nix::unistd::Pid;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::hooks::protocol::CallError;
use crate::hooks::spec::{HookSource, HookSpec};

/// Whether a hook's process group (as the hook reports it) has a live member.
fn group_alive(pgid: Pid) -> bool {
    crate::watchdog::ProcessGroup::led_by(pgid).alive()
}

const SHORT: Duration = Duration::from_millis(300);
const LONG: Duration = Duration::from_secs(10);

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hooks/testhook.py")
}

use crate::test_support::python;

fn spec(mode: &str) -> HookSpec {
    let python = python();
    let mut s = HookSpec::new(format!("t-{mode}"), python, HookSource::Cli);
    s.args = vec![script().to_string_lossy().into_owned(), mode.to_string()];
    s.start_timeout = Duration::from_secs(5);
    s.env = vec![("EXTRA".into(), "1".into())];
    s
}

fn ctx(dir: &Path) -> HostContext {
    let mut c = HostContext::new(dir.to_path_buf(), "print");
    c.session_id = Some("sess-1".into());
    c.supervision.backoff_initial = Duration::from_millis(10);
    c.supervision.backoff_max = Duration::from_millis(40);
    c.supervision.shutdown_grace = Duration::from_millis(500);
    c.supervision.term_grace = Duration::from_millis(500);
    c
}

/// Serves the hooks' calls: `ui.confirm` takes `ui_delay` (a slow user), then says yes.
struct Handler {
    ui_delay: Duration,
}

#[async_trait]
impl CallHandler for Handler {
    async fn call(&self, _hook: &str, method: &str, params: Value) -> Result<Value, CallError> {
        match method {
            "ui.confirm" => {
                tokio::time::sleep(self.ui_delay).await;
                Ok(json!(true))
            }
            "echo" => Ok(params),
            _ => Err(CallError {
                code: "unknown_method".into(),
                message: method.into(),
            }),
        }
    }
}

struct Fixture {
    hook: Arc<HookInstance>,
    notices: mpsc::UnboundedReceiver<Notice>,
    _dir: tempfile::TempDir,
}

async fn try_start_with(
    spec: HookSpec,
    tweak: impl FnOnce(&mut HostContext),
) -> (Result<Arc<HookInstance>, StartError>, Fixture2) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ctx(dir.path());
    tweak(&mut c);
    let (tx, rx) = mpsc::unbounded_channel();
    let handler = Arc::new(Handler {
        ui_delay: Duration::from_millis(700),
    });
    let r = HookInstance::start(spec, c, handler, tx).await;
    (r, Fixture2 { notices: rx, dir })
}

struct Fixture2 {
    notices: mpsc::UnboundedReceiver<Notice>,
    dir: tempfile::TempDir,
}

async fn start(mode: &str) -> Fixture {
    start_with(spec(mode), |_| {}).await
}

async fn start_with(spec: HookSpec, tweak: impl FnOnce(&mut HostContext)) -> Fixture {
    let (r, f) = try_start_with(spec, tweak).await;
    let hook = r.unwrap_or_else(|e| panic!("start failed: {e}"));
    Fixture {
        hook,
        notices: f.notices,
        _dir: f.dir,
    }
}

impl Fixture {
    /// The next notice matching `pred` (others are skipped), within 10 s.
    async fn notice(&mut self, pred: impl Fn(&Notice) -> bool) -> Notice {
        let deadline = Instant::now() + LONG;
        loop {
            match tokio::time::timeout_at(deadline, self.notices.recv()).await {
                Ok(Some(n)) if pred(&n) => return n,
                Ok(Some(_)) => continue,
                Ok(None) => panic!("notice channel closed"),
                Err(_) => panic!("expected notice did not arrive"),
            }
        }
    }

    /// Waits for a restart to begin and complete.
    async fn running_again(&mut self) {
        self.notice(|n| {
            matches!(
                n,
                Notice::State {
                    state: HookState::Restarting,
                    ..
                }
            )
        })
        .await;
        self.notice(|n| {
            matches!(
                n,
                Notice::State {
                    state: HookState::Running,
                    ..
                }
            )
        })
        .await;
        assert_eq!(self.hook.state(), HookState::Running);
    }

    /// Everything already received (non-blocking).
    fn drain(&mut self) -> Vec<Notice> {
        let mut v = Vec::new();
        while let Ok(n) = self.notices.try_recv() {
            v.push(n);
        }
        v
    }

    async fn echo_works(&self) {
        let v = self
            .hook
            .request("echo", json!({"ok": 1}), LONG)
            .await
            .unwrap();
        assert_eq!(v["echo"], json!({"ok": 1}));
    }

    async fn pgid(&self) -> Pid {
        let v = self.hook.request("pid", json!({}), LONG).await.unwrap();
        Pid::from_raw(v["pgid"].as_i64().unwrap() as i32)
    }
}

#[tokio::test]
async fn handshake_request_command_and_shutdown() {
    let mut f = start("echo").await;
    assert_eq!(f.hook.name(), "echo-hook");
    assert_eq!(f.hook.spec().name, "t-echo");
    assert_eq!(f.hook.registration().subscriptions[0].event, "tool_call");
    assert_eq!(f.hook.state(), HookState::Running);
    let v = f.hook.request("echo", json!({"a": 1}), LONG).await.unwrap();
    assert_eq!(v, json!({"echo": {"a": 1}, "seen": 0}));
    let v = f.hook.command("greet", "a b", LONG).await.unwrap();
    assert_eq!(v, json!({"command": "greet", "args": "a b"}));
    let e = f.hook.request("fail", json!({}), LONG).await.unwrap_err();
    assert!(matches!(&e, RequestError::ErrorReply { message, .. } if message == "nope"));
    assert_eq!(e.to_string(), "hook echo-hook answered with an error: nope");
    assert_eq!(f.hook.latency().count, 2);
    let pgid = f.pgid().await;
    f.hook.shutdown("test over").await;
    assert_eq!(f.hook.state(), HookState::Stopped);
    assert!(!group_alive(pgid));
    f.notice(|n| matches!(n, Notice::Log { message, .. } if message == "shutdown: test over"))
        .await;
    let e = f.hook.request("echo", json!({}), LONG).await.unwrap_err();
    assert!(matches!(
        e,
        RequestError::NotRunning {
            state: HookState::Stopped,
            ..
        }
    ));
    assert_eq!(f.hook.restarts(), 0);
}

#[tokio::test]
async fn notify_is_ordered_and_never_blocks() {
    let f = start("echo").await;
    f.hook.notify("one", json!({}));
    f.hook.notify("two", json!({}));
    let v = f.hook.request("echo", json!(null), LONG).await.unwrap();
    assert_eq!(v["seen"], 2);
    // The hook stops reading for a second; 30 MB of notifications must not block the caller.
    f.hook.notify("stall", json!({}));
    let big = "x".repeat(10_000);
    let t0 = Instant::now();
    for _ in 0..3000 {
        f.hook.notify("spam", json!({ "big": big }));
    }
    assert!(t0.elapsed() < Duration::from_secs(5));
    let v = f.hook.request("echo", json!(null), LONG).await.unwrap();
    assert!(v["seen"].as_u64().unwrap() >= 3);
    f.hook.shutdown("done").await;
}

#[tokio::test]
async fn deadline_times_out_sends_cancel_and_drops_the_late_reply() {
    let mut f = start("echo").await;
    let e = f.hook.request("hang", json!({}), SHORT).await.unwrap_err();
    assert!(matches!(e, RequestError::Timeout { after, .. } if after == SHORT));
    assert_eq!(e.to_string(), "hook echo-hook did not reply within 300 ms");
    f.notice(|n| matches!(n, Notice::Log { message, .. } if message.starts_with("cancel ")))
        .await;
    // The hook also sent a late reply; it must be dropped without an "unknown id" error.
    f.echo_works().await;
    let unknown = f.drain().into_iter().any(|n| {
        matches!(
            n,
            Notice::Error {
                kind: HookErrorKind::UnknownId,
                ..
            }
        )
    });
    assert!(!unknown);
    f.hook.shutdown("done").await;
}

#[tokio::test]
async fn time_serving_ui_calls_does_not_count_against_the_deadline() {
    // The handler takes 700 ms to answer `ui.confirm`; the deadline is 300 ms.
    let f = start("echo").await;
    let v = f.hook.request("ui", json!({}), SHORT).await.unwrap();
    assert_eq!(v, json!({"ui": true}));
    f.hook.shutdown("done").await;
}

#[tokio::test]
async fn crash_at_start_reports_exit_code_and_stderr() {
    let (r, _f) = try_start_with(spec("crash_start"), |_| {}).await;
    let Err(e) = r else { panic!("started") };
    assert!(
        matches!(&e, StartError::Exited { code: Some(1), stderr, .. }
            if stderr.iter().any(|l| l.contains("boom: missing config"))),
        "{e:?}"
    );
    assert_eq!(e.kind(), HookErrorKind::StartFailed);
    let msg = e.to_string();
    assert!(
        msg.contains("hook t-crash_start exited with code 1 during start-up"),
        "{msg}"
    );
    assert!(msg.contains("boom: missing config"), "{msg}");
}

#[tokio::test]
async fn no_register_within_the_start_timeout() {
    let mut s = spec("no_register");
    s.start_timeout = Duration::from_millis(500);
    let t0 = Instant::now();
    let (r, _f) = try_start_with(s, |_| {}).await;
    let Err(e) = r else { panic!("started") };
    assert!(t0.elapsed() < LONG);
    assert!(matches!(e, StartError::HandshakeTimeout { .. }), "{e:?}");
    assert!(
        e.to_string().contains("did not register within 500 ms"),
        "{e}"
    );
}

#[tokio::test]
async fn unoffered_protocol_version_and_missing_program() {
    let (r, _f) = try_start_with(spec("bad_version"), |_| {}).await;
    assert!(matches!(
        r,
        Err(StartError::VersionNotOffered { chosen: 99, .. })
    ));
    let mut s = spec("echo");
    s.program = PathBuf::from("/nonexistent/pi-hook");
    let (r, _f) = try_start_with(s, |_| {}).await;
    let Err(e) = r else { panic!("started") };
    assert!(matches!(e, StartError::Spawn { .. }));
    assert!(e.to_string().contains("/nonexistent/pi-hook"), "{e}");
}

#[tokio::test]
async fn crash_mid_request_fails_at_once_then_restarts() {
    let mut f = start("echo").await;
    let t0 = Instant::now();
    let e = f.hook.request("crash", json!({}), LONG).await.unwrap_err();
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "waited for the deadline"
    );
    let RequestError::Crashed { detail, .. } = &e else {
        panic!("{e:?}")
    };
    assert!(detail.contains("exited with code 3"), "{detail}");
    assert!(detail.contains("dying"), "{detail}");
    f.notice(|n| {
        matches!(
            n,
            Notice::Error {
                kind: HookErrorKind::Crashed,
                ..
            }
        )
    })
    .await;
    f.running_again().await;
    f.echo_works().await;
    assert_eq!(f.hook.restarts(), 1);
    f.hook.shutdown("done").await;
}

#[tokio::test]
async fn a_restarted_hook_cannot_take_a_new_name_and_start_its_limits_afresh() {
    let mut f = start("rename").await;
    let first = f.hook.name();
    assert!(first.starts_with("renamed-"), "{first}");
    let _ = f.hook.request("crash", json!({}), LONG).await;
    f.notice(|n| {
        matches!(
            n,
            Notice::Error { kind: HookErrorKind::BadHandshake, message, .. }
                if message.contains("must register under the name it ran under")
        )
    })
    .await;
    assert_eq!(f.hook.name(), first, "the hook kept its first name");
    f.hook.shutdown("done").await;
}

#[tokio::test]
async fn framing_faults_kill_and_restart_the_hook() {
    let mut f = start("echo").await;
    for (i, fault) in [
        "garbage",
        "oversized",
        "truncated",
        "bad_json",
        "not_object",
    ]
    .into_iter()
    .enumerate()
    {
        let old = f.pgid().await;
        let e = f.hook.request(fault, json!({}), LONG).await.unwrap_err();
        assert!(matches!(e, RequestError::Framing { .. }), "{fault}: {e:?}");
        f.notice(|n| {
            matches!(
                n,
                Notice::Error {
                    kind: HookErrorKind::Framing,
                    ..
                }
            )
        })
        .await;
        assert!(!group_alive(old), "{fault}: old process survived");
        f.running_again().await;
        f.echo_works().await;
        assert_eq!(f.hook.restarts(), i as u32 + 1);
    }
    f.hook.shutdown("done").await;
}

#[tokio::test]
async fn wrong_reply_shape_and_unknown_ids_are_not_fatal() {
    let mut f = start("echo").await;
    let e = f
        .hook
        .request("wrong_reply", json!({}), LONG)
        .await
        .unwrap_err();
    assert!(matches!(e, RequestError::BadReply { .. }), "{e:?}");
    let v = f.hook.request("unknown_id", json!({}), LONG).await.unwrap();
    assert_eq!(v, json!({"text": "still fine"}));
    let notices = f.drain();
    let has = |k: HookErrorKind| {
        notices
            .iter()
            .any(|n| matches!(n, Notice::Error { kind, .. } if *kind == k))
    };
    assert!(has(HookErrorKind::UnknownId), "{notices:?}");
    assert!(has(HookErrorKind::Unsupported), "{notices:?}");
    assert_eq!(f.hook.restarts(), 0);
    assert_eq!(f.hook.state(), HookState::Running);
    f.hook.shutdown("done").await;
}

#[tokio::test]
async fn stdout_closed_while_alive_is_a_crash() {
    let mut f = start("echo").await;
    let old = f.pgid().await;
    let e = f
        .hook
        .request("close_stdout", json!({}), LONG)
        .await
        .unwrap_err();
    assert!(
        matches!(&e, RequestError::Crashed { detail, .. }
            if detail.contains("closed its stdout while still running")),
        "{e:?}"
    );
    assert!(!group_alive(old));
    f.running_again().await;
    f.echo_works().await;
    f.hook.shutdown("done").await;
}

#[tokio::test]
async fn stderr_flood_does_not_block_requests() {
    let f = start("echo").await;
    let v = f.hook.request("flood", json!({}), LONG).await.unwrap();
    assert_eq!(v, json!({"text": "flooded"}));
    f.echo_works().await;
    f.hook.shutdown("done").await;
}

#[tokio::test]
async fn grandchild_holding_stdout_does_not_hide_the_crash() {
    let mut f = start("echo").await;
    let old = f.pgid().await;
    let t0 = Instant::now();
    let e = f
        .hook
        .request("grandchild", json!({}), LONG)
        .await
        .unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(&e, RequestError::Crashed { detail, .. } if detail.contains("exited with code 4")),
        "{e:?}"
    );
    // The orphaned `sleep 60` was in the group and is gone too.
    assert!(!group_alive(old));
    f.running_again().await;
    let new = f.pgid().await;
    f.hook.shutdown("done").await;
    assert!(!group_alive(new));
}

#[tokio::test]
async fn hook_ignoring_sigterm_is_killed_by_shutdown() {
    // Real grace periods here (2 s + 1 s).
    let f = start_with(spec("ignore_term"), |c| {
        c.supervision = Supervision::default()
    })
    .await;
    let pgid = f.pgid().await;
    let t0 = Instant::now();
    f.hook.shutdown("bye").await;
    let took = t0.elapsed();
    assert!(took < Duration::from_millis(4500), "{took:?}");
    assert!(!group_alive(pgid));
    assert_eq!(f.hook.state(), HookState::Stopped);
}

#[tokio::test]
async fn a_crash_loop_is_quarantined() {
    let mut f = start("register_then_exit").await;
    f.notice(|n| {
        matches!(
            n,
            Notice::State {
                state: HookState::Quarantined,
                ..
            }
        )
    })
    .await;
    assert_eq!(f.hook.state(), HookState::Quarantined);
    assert_eq!(f.hook.restarts(), 5);
    let e = f.hook.request("echo", json!({}), LONG).await.unwrap_err();
    assert!(matches!(
        e,
        RequestError::NotRunning {
            state: HookState::Quarantined,
            ..
        }
    ));
    assert_eq!(e.to_string(), "hook flaky is quarantined");
    f.hook.shutdown("done").await;
    assert_eq!(f.hook.state(), HookState::Stopped);
}

#[tokio::test]
async fn environment_is_minimal() {
    let f = start("echo").await;
    let v = f.hook.request("env", json!({}), LONG).await.unwrap();
    let env = v["env"].as_object().unwrap();
    assert_eq!(env["PI_HOOK_NAME"], "t-echo");
    assert_eq!(env["PI_SESSION_ID"], "sess-1");
    assert_eq!(env["PI_PROTOCOL_VERSION"], "1");
    assert_eq!(env["EXTRA"], "1");
    let allowed = [
        "PATH",
        "HOME",
        "USER",
        "LANG",
        "TERM",
        "TMPDIR",
        "SHELL",
        "PI_HOOK_NAME",
        "PI_PROJECT_DIR",
        "PI_SESSION_ID",
        "PI_PROTOCOL_VERSION",
        "EXTRA",
        // Python itself sets this when it coerces the C locale (PEP 538).
        "LC_CTYPE",
    ];
    for k in env.keys() {
        assert!(allowed.contains(&k.as_str()), "unexpected variable {k}");
    }
    f.hook.shutdown("done").await;
}

#[tokio::test]
async fn tool_execution_streams_progress_and_can_be_cancelled() {
    let mut f = start("echo").await;
    let (ptx, mut prx) = mpsc::unbounded_channel();
    let v = f
        .hook
        .execute_tool("count", "c1", json!({}), CancellationToken::new(), ptx)
        .await
        .unwrap();
    assert_eq!(v["content"][0]["text"], "done");
    assert_eq!(prx.recv().await.unwrap().content[0]["text"], "1");
    assert_eq!(prx.recv().await.unwrap().content[0]["text"], "2");

    let (ptx, mut prx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let hook = f.hook.clone();
    let c2 = cancel.clone();
    let run =
        tokio::spawn(async move { hook.execute_tool("slow", "c2", json!({}), c2, ptx).await });
    assert_eq!(prx.recv().await.unwrap().content[0]["text"], "1");
    assert_eq!(prx.recv().await.unwrap().content[0]["text"], "2");
    cancel.cancel();
    let e = run.await.unwrap().unwrap_err();
    assert!(matches!(e, RequestError::Cancelled { .. }), "{e:?}");
    f.notice(|n| matches!(n, Notice::Log { message, .. } if message.starts_with("cancel ")))
        .await;
    f.echo_works().await;
    f.hook.shutdown("done").await;
}

#[tokio::test]
async fn shutdown_fails_requests_in_flight() {
    let f = start("echo").await;
    let hook = f.hook.clone();
    let pending = tokio::spawn(async move { hook.request("hang", json!({}), LONG).await });
    // Make sure the request is on its way before stopping.
    f.echo_works().await;
    f.hook.shutdown("done").await;
    let e = pending.await.unwrap().unwrap_err();
    assert!(
        matches!(
            e,
            RequestError::NotRunning {
                state: HookState::Stopped,
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn latency_percentiles_over_a_bounded_reservoir() {
    let mut l = Latency::default();
    for i in 1..=2000u64 {
        l.record(Duration::from_micros(i));
    }
    let s = l.stats();
    assert_eq!(s.count, 2000);
    // Only the last 1024 samples (977..=2000) remain.
    assert!((1480..=1500).contains(&s.p50_us), "{s:?}");
    assert!((1980..=2000).contains(&s.p99_us), "{s:?}");
}
