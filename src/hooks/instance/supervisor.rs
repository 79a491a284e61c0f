//! The life of a hook's processes: start one (spawn, `hello`, `register`), read its frames and
//! dispatch them, notice its death by any route (stdout EOF, leader exit, broken pipe, bad
//! frames), kill its group, restart with backoff, quarantine a crash loop, and stop it
//! gracefully on shutdown (SPEC 4.6).
//!
//! One task per instance runs [`supervise`]; within a generation the same task is the only
//! reader of the hook's stdout, so frames are handled in order and crash detection cannot race
//! with dispatch (`dispatch.rs` handles each frame). Before each frame the reader takes one of
//! the generation's call slots, which a `call` keeps while it is served, and a call read also
//! takes its share of the payload budget (its frame's size, see `conn`) before the next frame
//! is read; with all slots or all the budget taken the reader stops reading until a call is
//! done (backpressure: the hook's stdout pipe fills and its writes block — its replies and
//! logs wait behind its calls). So a flood of large calls holds at most one frame limit of
//! them in pi at a time.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use super::conn::{call_units, Conn};
use super::dispatch::{dispatch, forward_log, report_dropped_logs, CallHold};
use super::{fmt_tail, lock, HookErrorKind, HookState, RequestError, Shared, StartError};
use crate::hooks::exec_check::explain_spawn_error;
use crate::hooks::framing::{FrameError, FrameReader, FrameWriter, Incoming};
use crate::hooks::process::{
    self, hook_environment, HookProcess, HookStdin, HookStdout, HookVars, SpawnError, StderrDrain,
};
use crate::hooks::protocol::{
    Hello, HookMessage, HostInfo, HostMessage, Log, Register, PROTOCOL_VERSIONS,
};
use crate::hooks::registration::{self, Registration};
use crate::watchdog::{describe_status, kill_group, Child, ProcessGroup};

/// How long to keep reading stdout after the leader exited, for frames it wrote just before.
/// Bounded because a grandchild may hold stdout open forever.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(100);
/// How long to wait for the exit status after stdout closed, so the error can say how it died.
const STATUS_AFTER_EOF: Duration = Duration::from_millis(100);
/// How long to wait for stderr's last lines once the group is dead.
const STDERR_SETTLE: Duration = Duration::from_millis(300);
/// Stderr lines quoted in error messages.
const TAIL_LINES: usize = 8;

/// One running process and its connection.
pub(super) struct Generation {
    child: Child,
    pgid: ProcessGroup,
    reader: FrameReader<HookStdout>,
    stderr: StderrDrain,
    pub(super) conn: Arc<Conn>,
    pub(super) registration: Registration,
}

pub(super) enum StartFailure {
    Error(StartError),
    /// `shutdown` arrived during the start; the process is already gone.
    Stopped,
}

impl From<StartError> for StartFailure {
    fn from(e: StartError) -> Self {
        StartFailure::Error(e)
    }
}

/// How a handshake ended without an accepted `register`.
enum NotRegistered {
    Exited(Option<std::process::ExitStatus>),
    Closed,
    Framing(FrameError),
    Bad(String),
    Timeout,
    Stopped,
}

/// A `register` that arrived but cannot be accepted.
enum Refusal {
    /// Said without the hook's stderr: the hook chose a version pi did not offer.
    Version(StartError),
    /// A bad handshake, said with the hook's last stderr lines.
    Bad { hook: String, detail: String },
}

/// Spawns the hook and performs the handshake. On any failure the process group is killed
/// before returning. Pinned files are checked first, every time (by `process::spawn`), and
/// what runs is what was checked: a file that was replaced since is never run.
pub(super) async fn start_generation(shared: &Arc<Shared>) -> Result<Generation, StartFailure> {
    let spec = &shared.spec;
    let ctx = &shared.ctx;
    let hook = spec.name.clone();
    let HookProcess {
        mut child,
        pgid,
        stdin,
        stdout,
        mut stderr,
    } = spawn_hook(shared, &hook).await?;
    let mut writer = FrameWriter::with_max_frame(stdin, ctx.max_frame);
    let mut reader = FrameReader::with_max_frame(stdout, ctx.max_frame);
    let hello = hello(shared);

    // Racing the hello write is acceptable here: if the race is lost the process is killed,
    // so a half-written frame cannot confuse anyone.
    let outcome = tokio::select! {
        biased;
        _ = shared.stop.cancelled() => Err(NotRegistered::Stopped),
        r = tokio::time::timeout(
            spec.start_timeout,
            handshake(shared, &hello, &mut writer, &mut reader, &mut child),
        ) => r.unwrap_or(Err(NotRegistered::Timeout)),
    };
    let register = match outcome {
        Ok(r) => r,
        Err(why) => return Err(not_registered(why, shared, &mut child, pgid, &mut stderr).await),
    };
    let (registration, name) = match accept(shared, register, hook) {
        Ok(accepted) => accepted,
        Err(refusal) => {
            kill_group(&mut child, pgid).await;
            let e = match refusal {
                Refusal::Version(e) => e,
                Refusal::Bad { hook, detail } => StartError::BadHandshake {
                    hook,
                    detail,
                    stderr: settled_tail(&mut stderr).await,
                },
            };
            return Err(StartFailure::Error(e));
        }
    };
    Ok(Generation {
        child,
        pgid,
        reader,
        stderr,
        conn: Conn::start(name, writer, ctx.max_frame),
        registration,
    })
}

/// Spawns the hook's process with its environment, saying why when it cannot.
async fn spawn_hook(shared: &Shared, hook: &str) -> Result<HookProcess, StartError> {
    let spec = &shared.spec;
    let ctx = &shared.ctx;
    let version = PROTOCOL_VERSIONS.iter().copied().max().unwrap_or(1);
    let managed_home = ctx
        .managed_home
        .for_spec(spec)
        .map_err(|source| StartError::Spawn {
            hook: hook.to_string(),
            program: spec.program.clone(),
            source,
        })?;
    let vars = HookVars {
        hook_name: &spec.name,
        project_dir: &ctx.cwd,
        session_id: ctx.session_id.as_deref(),
        protocol_version: version,
        managed_home,
    };
    let env = hook_environment(spec, &vars, &|k| std::env::var_os(k));
    let spawned = process::spawn(spec, &ctx.cwd, &env, hook, ctx.supervision.stderr).await;
    spawned.map_err(|e| {
        let source = match e {
            SpawnError::Pin(source) => {
                return StartError::Integrity {
                    hook: hook.to_string(),
                    source,
                }
            }
            // "No such file or directory" about a file that exists helps nobody: say why.
            SpawnError::Spawn { source, .. } => explain_spawn_error(&spec.program, source),
            other => std::io::Error::other(other.to_string()),
        };
        StartError::Spawn {
            hook: hook.to_string(),
            program: spec.program.clone(),
            source,
        }
    })
}

/// The `hello` pi opens the handshake with.
fn hello(shared: &Shared) -> HostMessage {
    let spec = &shared.spec;
    let ctx = &shared.ctx;
    HostMessage::Hello(Box::new(Hello {
        protocol_versions: PROTOCOL_VERSIONS.to_vec(),
        host: HostInfo {
            name: "pi".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        hook_name: spec.name.clone(),
        cwd: ctx.cwd.to_string_lossy().into_owned(),
        mode: ctx.mode.clone(),
        session_id: ctx.session_id.clone(),
        session_file: ctx.session_file.clone(),
        config: spec.config.clone(),
        capabilities: ctx.capabilities.clone(),
        model: ctx.model.get(),
        flags: ctx.flags.clone(),
    }))
}

/// Kills the group of a hook that did not register and says why, with its last stderr lines.
async fn not_registered(
    why: NotRegistered,
    shared: &Shared,
    child: &mut Child,
    pgid: ProcessGroup,
    stderr: &mut StderrDrain,
) -> StartFailure {
    let hook = shared.spec.name.clone();
    let (status, closed) = match why {
        NotRegistered::Stopped => {
            kill_group(child, pgid).await;
            return StartFailure::Stopped;
        }
        NotRegistered::Exited(status) => (status, false),
        NotRegistered::Closed => {
            // Usually the process is exiting; give it a moment so the error can say how.
            let status = tokio::time::timeout(STATUS_AFTER_EOF, child.wait())
                .await
                .ok()
                .and_then(Result::ok);
            (status, true)
        }
        NotRegistered::Framing(e) => {
            kill_group(child, pgid).await;
            let stderr = settled_tail(stderr).await;
            let detail = e.to_string();
            return StartFailure::Error(StartError::Framing {
                hook,
                detail,
                stderr,
            });
        }
        NotRegistered::Bad(detail) => {
            kill_group(child, pgid).await;
            let stderr = settled_tail(stderr).await;
            return StartFailure::Error(StartError::BadHandshake {
                hook,
                detail,
                stderr,
            });
        }
        NotRegistered::Timeout => {
            kill_group(child, pgid).await;
            let stderr = settled_tail(stderr).await;
            let after = shared.spec.start_timeout;
            return StartFailure::Error(StartError::HandshakeTimeout {
                hook,
                after,
                stderr,
            });
        }
    };
    kill_group(child, pgid).await;
    let tail = settled_tail(stderr).await;
    let said = if closed {
        "closed its stdout without registering"
    } else {
        "ended"
    };
    StartFailure::Error(StartError::Exited {
        hook,
        status: status.map_or_else(|| said.into(), |s| describe_status(&s)),
        code: status.and_then(|s| s.code()),
        stderr: tail,
    })
}

/// Checks and compiles a `register` once, here: a bad filter or name is a start failure, not
/// a gate that silently never runs. Returns the registration and the name the hook runs
/// under.
fn accept(
    shared: &Shared,
    register: Register,
    hook: String,
) -> Result<(Registration, String), Refusal> {
    if !PROTOCOL_VERSIONS.contains(&register.protocol_version) {
        return Err(Refusal::Version(StartError::VersionNotOffered {
            hook,
            chosen: register.protocol_version,
            offered: PROTOCOL_VERSIONS.to_vec(),
        }));
    }
    let registration = match registration::check(register, shared.spec.event_timeout) {
        Ok(r) => r,
        Err(e) => {
            let detail = format!("invalid `register`: {e}");
            return Err(Refusal::Bad { hook, detail });
        }
    };
    for note in &registration.notes {
        forward_log(
            shared,
            &hook,
            Log {
                level: "warn".into(),
                message: note.clone(),
            },
        );
    }
    let name = if registration.register.name.is_empty() {
        hook
    } else {
        registration.register.name.clone()
    };
    // A restarted hook keeps the name it ran under: its tools, its session-entry budget and
    // its place in `pi hooks` are kept by name, so a new name at each crash would start its
    // limits afresh.
    let before = shared.name();
    if shared.restarts.load(std::sync::atomic::Ordering::Relaxed) > 0 && name != before {
        let detail = format!(
            "a restarted hook must register under the name it ran under ({before:?}), \
             not {name:?}"
        );
        return Err(Refusal::Bad {
            hook: before,
            detail,
        });
    }
    Ok((registration, name))
}

async fn handshake(
    shared: &Shared,
    hello: &HostMessage,
    writer: &mut FrameWriter<HookStdin>,
    reader: &mut FrameReader<HookStdout>,
    child: &mut Child,
) -> Result<Register, NotRegistered> {
    if writer.write_message(hello).await.is_err() {
        // Broken pipe: the process is gone or closed stdin; its exit says more.
        return match tokio::time::timeout(STATUS_AFTER_EOF, child.wait()).await {
            Ok(Ok(status)) => Err(NotRegistered::Exited(Some(status))),
            _ => Err(NotRegistered::Closed),
        };
    }
    loop {
        tokio::select! {
            // Frames first: a hook that registers and exits at once has still registered.
            biased;
            m = reader.read_message() => match m {
                Ok(Some(Incoming::Message(HookMessage::Register(r)))) => {
                    return Ok(r)
                }
                Ok(Some(Incoming::Message(HookMessage::Log(l)))) => {
                    forward_log(shared, &shared.spec.name, l)
                }
                // pi's `registerProvider` in an extension's factory: providers a hook
                // registers before `register` are known before pi chooses its model.
                Ok(Some(Incoming::Message(HookMessage::Call(c))))
                    if c.method.starts_with("provider.") =>
                {
                    let answer = provider_call(shared, c);
                    if writer.write_message(&answer).await.is_err() {
                        return Err(NotRegistered::Closed);
                    }
                }
                Ok(Some(Incoming::Message(other))) => {
                    return Err(NotRegistered::Bad(format!(
                        "expected `register` first, got {}",
                        message_type(&other)
                    )))
                }
                Ok(Some(Incoming::Unrecognized { value, reason })) => {
                    // Hook 2.2: before `register` only `log` is accepted; a message type the
                    // host does not know is ignored and logged (3.1), as after the handshake.
                    let hook = &shared.spec.name;
                    match Incoming::unrecognized_type(&value) {
                        Some("register") => {
                            return Err(NotRegistered::Bad(format!("malformed `register`: {reason}")))
                        }
                        Some("log") => shared.notice_error(
                            HookErrorKind::BadReply,
                            format!("hook {hook} sent a malformed `log` message: {reason}; ignored"),
                        ),
                        Some(t @ ("reply" | "progress" | "call")) => {
                            return Err(NotRegistered::Bad(format!("expected `register` first, got `{t}`")))
                        }
                        Some(t) => shared.notice_error(
                            HookErrorKind::Unsupported,
                            format!("hook {hook} sent an unknown message type `{t}`; ignored"),
                        ),
                        None => shared.notice_error(
                            HookErrorKind::Unsupported,
                            format!("hook {hook} sent a message without a `type`; ignored"),
                        ),
                    }
                }
                Ok(None) => return Err(NotRegistered::Closed),
                Err(e) => return Err(NotRegistered::Framing(e)),
            },
            status = child.wait() => return Err(NotRegistered::Exited(status.ok())),
        }
    }
}

/// The answer to a `provider.*` call, from the providers every hook shares.
pub(super) fn provider_call(shared: &Shared, c: crate::hooks::protocol::Call) -> HostMessage {
    let env = Arc::new(crate::hooks::process::granted_env(&shared.spec));
    let r = shared
        .ctx
        .providers
        .handle(&shared.spec.name, &c.method, &c.params, &env);
    HostMessage::Result(crate::hooks::protocol::CallResult {
        id: c.id,
        value: r.as_ref().ok().cloned(),
        error: r.err(),
    })
}

fn message_type(m: &HookMessage) -> &'static str {
    match m {
        HookMessage::Register(_) => "`register`",
        HookMessage::Reply(_) => "`reply`",
        HookMessage::Progress(_) => "`progress`",
        HookMessage::Call(_) => "`call`",
        HookMessage::Log(_) => "`log`",
        HookMessage::Subscribe(_) => "`subscribe`",
        HookMessage::Unsubscribe(_) => "`unsubscribe`",
        HookMessage::CallCancel { .. } => "`call_cancel`",
    }
}

async fn settled_tail(stderr: &mut StderrDrain) -> Vec<String> {
    stderr.settle(STDERR_SETTLE).await;
    stderr.tail.last(TAIL_LINES)
}

fn is_call(incoming: &Incoming) -> bool {
    matches!(incoming, Incoming::Message(HookMessage::Call(_)))
}

/// How a generation ended.
enum Ending {
    Stopped,
    Crash { kind: HookErrorKind, detail: String },
}

enum Why {
    Stop,
    Eof,
    Exited(Option<std::process::ExitStatus>),
    Framing(FrameError),
    BrokenPipe,
}

impl Generation {
    /// Reads and dispatches frames until the process dies or `stop` fires. On return the
    /// process group is gone (killed on a crash, stopped gracefully on shutdown).
    async fn run(&mut self, shared: &Arc<Shared>) -> Ending {
        let why = loop {
            // A call slot before every frame: when the hook has every slot busy, this waits
            // (reading nothing) until one of its calls finishes.
            let slot = match self.conn.call_slots.clone().try_acquire_owned() {
                Ok(slot) => Some(slot),
                Err(_) => tokio::select! {
                    biased;
                    _ = shared.stop.cancelled() => break Why::Stop,
                    slot = self.conn.call_slots.clone().acquire_owned() => slot.ok(),
                    status = self.child.wait() => break Why::Exited(status.ok()),
                    _ = self.conn.write_failed.cancelled() => break Why::BrokenPipe,
                },
            };
            let read = tokio::select! {
                biased;
                _ = shared.stop.cancelled() => break Why::Stop,
                m = self.reader.read_sized() => m,
                // The leader's exit is enough: a grandchild holding stdout must not delay
                // crash detection.
                status = self.child.wait() => break Why::Exited(status.ok()),
                _ = self.conn.write_failed.cancelled() => break Why::BrokenPipe,
            };
            let (incoming, len) = match read {
                Ok(Some(got)) => got,
                Ok(None) => break Why::Eof,
                Err(e) => break Why::Framing(e),
            };
            // A call also takes its share of the payload budget before anything more is read:
            // while the calls being served hold it all, this waits (reading nothing).
            let hold = match (slot, is_call(&incoming)) {
                (Some(slot), true) => match self.payload_room(shared, len).await {
                    Ok(payload) => Some(CallHold::new(slot, payload)),
                    Err(why) => break why,
                },
                _ => None,
            };
            dispatch(shared, &self.conn, incoming, hold);
        };
        let (kind, what) = match why {
            Why::Stop => {
                self.stop_gracefully(shared).await;
                return Ending::Stopped;
            }
            Why::Exited(status) => {
                self.drain_after_exit(shared).await;
                (
                    HookErrorKind::Crashed,
                    status.map_or_else(|| "ended".into(), |s| describe_status(&s)),
                )
            }
            Why::Eof | Why::BrokenPipe => {
                let status = tokio::time::timeout(STATUS_AFTER_EOF, self.child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok);
                let what = match (status, matches!(why, Why::Eof)) {
                    (Some(s), _) => describe_status(&s),
                    (None, true) => "closed its stdout while still running".into(),
                    (None, false) => "stopped reading its stdin (broken pipe)".into(),
                };
                (HookErrorKind::Crashed, what)
            }
            Why::Framing(e) => (
                HookErrorKind::Framing,
                format!("sent an invalid frame: {e}"),
            ),
        };
        kill_group(&mut self.child, self.pgid).await;
        let tail = settled_tail(&mut self.stderr).await;
        Ending::Crash {
            kind,
            detail: format!("{what}{}", fmt_tail(&tail)),
        }
    }

    /// The share of the payload budget a call of `len` frame bytes holds, once the calls
    /// being served leave room for it; or why the hook's generation ends first.
    async fn payload_room(
        &mut self,
        shared: &Arc<Shared>,
        len: usize,
    ) -> Result<OwnedSemaphorePermit, Why> {
        let units = call_units(len);
        let budget = self.conn.call_bytes.clone();
        if let Ok(p) = budget.clone().try_acquire_many_owned(units) {
            return Ok(p);
        }
        tokio::select! {
            biased;
            _ = shared.stop.cancelled() => Err(Why::Stop),
            // The budget is never closed: an error cannot happen, and would end the hook.
            p = budget.acquire_many_owned(units) => p.map_err(|_| Why::Stop),
            status = self.child.wait() => Err(Why::Exited(status.ok())),
            _ = self.conn.write_failed.cancelled() => Err(Why::BrokenPipe),
        }
    }

    /// Frames written just before the leader exited (a last reply, a log line) still count;
    /// calls only while a slot and room for their payload are free (nothing waits for them
    /// once the hook is gone).
    async fn drain_after_exit(&mut self, shared: &Arc<Shared>) {
        let until = Instant::now() + DRAIN_AFTER_EXIT;
        loop {
            tokio::select! {
                m = self.reader.read_sized() => match m {
                    Ok(Some((incoming, len))) => {
                        let slot = self.conn.call_slots.clone().try_acquire_owned().ok();
                        let payload = self
                            .conn
                            .call_bytes
                            .clone()
                            .try_acquire_many_owned(call_units(len))
                            .ok();
                        let hold = slot.zip(payload).map(|(s, p)| CallHold::new(s, p));
                        dispatch(shared, &self.conn, incoming, hold)
                    }
                    _ => return,
                },
                _ = tokio::time::sleep_until(until) => return,
            }
        }
    }

    /// SPEC 4.6: `shutdown`, close stdin, grace, SIGTERM to the group, SIGKILL to the group,
    /// reap; then make sure no grandchild of the group survives either. Once the instance is
    /// hurried (a signal), every grace is cut to `hurried_grace`, also mid-way.
    async fn stop_gracefully(&mut self, shared: &Arc<Shared>) {
        let sup = &shared.ctx.supervision;
        let reason = lock(&shared.stop_reason).clone();
        let _ = self.conn.send(&HostMessage::Shutdown { reason });
        self.conn.close_stdin();
        let mut exited = self.wait_exit(shared, sup.shutdown_grace).await;
        if !exited {
            tracing::debug!(hook = %self.conn.hook, "hook did not exit after shutdown; SIGTERM");
            self.pgid.signal(Signal::SIGTERM);
            exited = self.wait_exit(shared, sup.term_grace).await;
        }
        if !exited {
            tracing::debug!(hook = %self.conn.hook, "hook ignored SIGTERM; SIGKILL");
            self.pgid.signal(Signal::SIGKILL);
            let _ = self.child.wait().await;
        }
        // The leader is reaped; processes it left behind in its group get the same treatment.
        if !self.pgid.clear(grace(shared, sup.term_grace)).await {
            tracing::warn!(hook = %self.conn.hook, "hook processes survived SIGKILL");
        }
        self.stderr.settle(STDERR_SETTLE).await;
    }

    /// Waits up to `within` (cut short if the instance is hurried meanwhile) for the leader to
    /// exit, still reading stdout so a hook blocked on a full pipe can finish, and still
    /// honouring its last replies and logs. Its calls are not served any more.
    async fn wait_exit(&mut self, shared: &Arc<Shared>, within: Duration) -> bool {
        let hurry = &shared.limits.hurry;
        let mut hurried = hurry.is_cancelled();
        let mut until = Instant::now() + grace(shared, within);
        let mut reading = true;
        loop {
            tokio::select! {
                biased;
                _ = self.child.wait() => return true,
                m = self.reader.read_message(), if reading => match m {
                    Ok(Some(Incoming::Message(HookMessage::Reply(r)))) => {
                        let _ = self.conn.deliver(r);
                    }
                    Ok(Some(Incoming::Message(HookMessage::Log(l)))) => {
                        forward_log(shared, &self.conn.hook, l)
                    }
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => reading = false,
                },
                _ = hurry.cancelled(), if !hurried => {
                    hurried = true;
                    until = until.min(Instant::now() + shared.ctx.supervision.hurried_grace);
                }
                _ = tokio::time::sleep_until(until) => return false,
            }
        }
    }
}

/// `within`, or the hurried grace if that is shorter and the instance has been hurried.
fn grace(shared: &Shared, within: Duration) -> Duration {
    if shared.limits.hurry.is_cancelled() {
        within.min(shared.ctx.supervision.hurried_grace)
    } else {
        within
    }
}

/// Runs the instance: the current generation until it ends, then restarts (with backoff) or
/// quarantine, until `stop`.
pub(super) async fn supervise(shared: Arc<Shared>, mut generation: Generation) {
    let sup = shared.ctx.supervision.clone();
    let mut crashes: VecDeque<Instant> = VecDeque::new();
    'life: loop {
        *lock(&shared.limits.pgid) = Some(generation.pgid);
        let ending = generation.run(&shared).await;
        *lock(&shared.limits.pgid) = None;
        let conn = generation.conn.clone();
        let hook = conn.hook.clone();
        report_dropped_logs(&shared, &hook);
        let (mut kind, mut message, mut dead_conn) = match ending {
            Ending::Stopped => {
                shared.set_state(HookState::Stopped, None);
                conn.fail_all(|| RequestError::NotRunning {
                    hook: hook.clone(),
                    state: HookState::Stopped,
                });
                break 'life;
            }
            Ending::Crash { kind, detail } => {
                let err = if kind == HookErrorKind::Framing {
                    RequestError::Framing { hook, detail }
                } else {
                    RequestError::Crashed { hook, detail }
                };
                (kind, err.to_string(), Some((conn, err)))
            }
        };
        // Set when a restart was refused because the executable no longer matches its pin:
        // retrying cannot help, so the hook is quarantined at once.
        let mut refused = false;
        loop {
            let now = Instant::now();
            while crashes
                .front()
                .is_some_and(|t| now.duration_since(*t) > sup.restart_window)
            {
                crashes.pop_front();
            }
            crashes.push_back(now);
            let quarantined = refused || crashes.len() > sup.max_restarts;
            *lock(&shared.last_error) = Some(message.clone());
            shared.notice_error(kind, message);
            // State first, so no new request is sent to the dead connection; then fail the
            // requests that were in flight, at once.
            shared.set_state(
                if quarantined {
                    HookState::Quarantined
                } else {
                    HookState::Restarting
                },
                None,
            );
            if let Some((conn, err)) = dead_conn.take() {
                conn.fail_all(|| err.clone());
            }
            if quarantined {
                let why = if refused {
                    format!(
                        "hook {} was not restarted: its executable fails its sha256 pin; \
                         quarantined for this session",
                        shared.name()
                    )
                } else {
                    format!(
                        "hook {} crashed {} times within {} s; quarantined for this session",
                        shared.name(),
                        crashes.len(),
                        sup.restart_window.as_secs()
                    )
                };
                shared.notice_error(kind, why);
                shared.stop.cancelled().await;
                break 'life;
            }
            let exp = u32::try_from(crashes.len().saturating_sub(1))
                .unwrap_or(u32::MAX)
                .min(16);
            let delay = sup
                .backoff_initial
                .saturating_mul(1u32 << exp)
                .min(sup.backoff_max);
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = shared.stop.cancelled() => break 'life,
            }
            shared
                .restarts
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            match start_generation(&shared).await {
                Ok(g) => {
                    shared.set_state(
                        HookState::Running,
                        Some((g.registration.clone(), g.conn.clone())),
                    );
                    generation = g;
                    continue 'life;
                }
                Err(StartFailure::Error(e)) => {
                    refused = matches!(e, StartError::Integrity { .. });
                    kind = e.kind();
                    message = e.to_string();
                }
                Err(StartFailure::Stopped) => break 'life,
            }
        }
    }
    shared.set_state(HookState::Stopped, None);
    shared.stopped.send_replace(true);
}
