//! The probes of `pi hook check` that go past what the host's supervised instance shows: whether
//! a freshly started hook exits on its own when told to (`shutdown`) or when pi has gone (stdin
//! EOF), and whether it answers a `tool_execute` instead of leaving the host waiting.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::hooks::framing::{FrameReader, FrameWriter};
use crate::hooks::host;
use crate::hooks::instance::{HookInstance, RequestError};
use crate::hooks::process::{self, HookVars, StderrLimits};
use crate::hooks::protocol::{Hello, HostInfo, HostMessage, Register, PROTOCOL_VERSIONS};
use crate::hooks::spec::HookSpec;
use crate::watchdog;

/// How the hook is told to go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCue {
    /// `shutdown {reason}`, stdin left open: the hook must exit within the host's grace.
    Shutdown,
    /// stdin closed without a word, as when pi dies.
    Eof,
}

/// The host's grace after `shutdown` before it signals the group (hook-protocol.md §2.3).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Starts the hook once more, completes the handshake, gives the cue and sees whether it exits.
pub async fn exit_probe(spec: &HookSpec, cwd: &Path, cue: ExitCue) -> (bool, String) {
    let vars = HookVars {
        hook_name: &spec.name,
        project_dir: cwd,
        session_id: None,
        protocol_version: PROTOCOL_VERSIONS.iter().copied().max().unwrap_or(1),
        // `pi hook check` runs the command it is given as a `--hook` would: not managed.
        managed_home: None,
    };
    let env = process::hook_environment(spec, &vars, &|k| std::env::var_os(k));
    let mut p = match process::spawn(spec, cwd, &env, &spec.name, StderrLimits::default()).await {
        Ok(p) => p,
        Err(e) => return (false, e.to_string()),
    };
    let mut w = FrameWriter::new(p.stdin);
    let mut r = FrameReader::new(p.stdout);
    let hello = HostMessage::Hello(Box::new(Hello {
        protocol_versions: PROTOCOL_VERSIONS.to_vec(),
        host: HostInfo {
            name: "pi".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        hook_name: spec.name.clone(),
        cwd: cwd.display().to_string(),
        mode: "print".into(),
        session_id: None,
        session_file: None,
        config: spec.config.clone(),
        capabilities: host::capabilities("print"),
        model: None,
        flags: Default::default(),
    }));
    let registered = async {
        w.write_message(&hello).await.ok()?;
        r.read_message().await.ok().flatten()
    };
    let outcome = match tokio::time::timeout(spec.start_timeout, registered).await {
        Ok(Some(_)) => {
            let t0 = Instant::now();
            let told = match cue {
                ExitCue::Eof => {
                    drop(w);
                    None
                }
                ExitCue::Shutdown => {
                    let sent = w
                        .write_message(&HostMessage::Shutdown {
                            reason: "pi hook check".into(),
                        })
                        .await;
                    // Kept open: the hook must go because it was told, not because of EOF.
                    Some((sent, w))
                }
            };
            if let Some((Err(e), _)) = &told {
                (false, format!("cannot send shutdown: {e}"))
            } else {
                let wait = match cue {
                    ExitCue::Shutdown => SHUTDOWN_GRACE,
                    ExitCue::Eof => Duration::from_secs(2),
                };
                let exited = tokio::time::timeout(wait, p.child.wait()).await;
                drop(told);
                match exited {
                    Ok(Ok(status)) => (
                        true,
                        format!(
                            "exited in {} ms ({})",
                            t0.elapsed().as_millis(),
                            watchdog::describe_status(&status)
                        ),
                    ),
                    _ => match cue {
                        ExitCue::Shutdown => (
                            false,
                            "still running 2 s after `shutdown` (the host would SIGTERM its group now)"
                                .into(),
                        ),
                        ExitCue::Eof => (false, "still running 2 s after its stdin closed".into()),
                    },
                }
            }
        }
        _ => (false, "no register during the probe".into()),
    };
    watchdog::kill_group(&mut p.child, p.pgid).await;
    outcome
}

/// A tool name no real hook registers.
const PROBE_TOOL: &str = "pi_hook_check_unregistered_tool";

/// Sends `tool_execute` for a tool the hook did not register: a conforming hook answers it
/// (an `error` reply), so the host never waits out its 10-minute tool cap on a hook that lost
/// track of a request. No registered tool is run: a check must not have side effects.
pub async fn tool_execute_probe(
    h: &HookInstance,
    reg: &Register,
    event_timeout: Duration,
) -> (bool, String) {
    let wait = event_timeout.min(Duration::from_secs(5));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let t0 = Instant::now();
    let run = h.execute_tool(
        PROBE_TOOL,
        "check_call_1",
        serde_json::json!({}),
        CancellationToken::new(),
        tx,
    );
    match tokio::time::timeout(wait, run).await {
        Ok(Err(RequestError::ErrorReply { message, .. })) => (
            true,
            format!(
                "an error reply for an unregistered tool in {} µs: {message}",
                t0.elapsed().as_micros()
            ),
        ),
        Ok(Ok(v)) => (
            true,
            format!(
                "a result for an unregistered tool in {} µs: {v}",
                t0.elapsed().as_micros()
            ),
        ),
        Ok(Err(e)) => (false, e.to_string()),
        Err(_) if reg.tools.is_empty() => (
            true,
            format!(
                "n/a: no reply within {} ms to a tool_execute, but the hook registers no tools, \
                 so the host never sends it one",
                wait.as_millis()
            ),
        ),
        Err(_) => (
            false,
            format!(
                "no reply within {} ms to a tool_execute for a tool it did not register; \
                 answer every request (an `error` reply), or the host waits up to its tool cap",
                wait.as_millis()
            ),
        ),
    }
}
