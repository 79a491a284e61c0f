//! Starting watchdogs and replacing a dead one. Every watchdog is forked by the keeper thread,
//! which [`install`] starts from the main thread and which lives as long as `pi`: a watchdog's
//! parent-death signal fires when the *thread* that forked it ends, so it must never be forked
//! by a runtime thread that may be retired when idle. The first one starts while `pi` goes on
//! with its own start-up (exec'ing this large binary takes about a millisecond), and spawns
//! wait for it.
//!
//! If the watchdog dies while `pi` runs, its children are reparented to `pi` (a subreaper
//! too). The keeper waits until the watchdog is reaped (only then are the orphans surely
//! ours), kills and reaps every child of `pi` outside `pi`'s own process group — everything
//! the watchdog started leads its own group or sits in the watchdog's — settling the exit
//! statuses of the processes `pi` knows, then starts a new watchdog. `pi` never calls
//! `waitpid(-1)`: it reaps exactly the processes it killed.

use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{getpgrp, getpid, Pid};

use super::client::{Client, Link};
use super::procs;
use super::{WatchdogError, SOCKET_FD, SUBCOMMAND};

/// A watchdog that dies sooner than this after its start counts as a failed start; after
/// [`MAX_FAILED_STARTS`] in a row `pi` stops restarting it and spawns fail with the reason.
const SHORT_LIFE: Duration = Duration::from_secs(1);
const MAX_FAILED_STARTS: u32 = 3;

/// Makes `pi` a subreaper and starts the keeper thread, which starts the first watchdog while
/// `pi` goes on with its own start-up (a spawn waits until it is up, and fails with the reason
/// if it cannot start). Idempotent. Call it from the main thread: the keeper thread then lives
/// as long as `pi`, and the watchdog's parent-death signal is tied to the thread that forks it.
pub(super) fn install() -> Result<(), WatchdogError> {
    if super::client::get().is_some() {
        return Ok(());
    }
    nix::sys::prctl::set_child_subreaper(true).map_err(WatchdogError::Subreaper)?;
    let (deaths, died) = mpsc::channel();
    let client = Client::new(deaths);
    let keeper = client.clone();
    std::thread::Builder::new()
        .name("pi-watchdog".into())
        .spawn(move || match Watchdog::start(0) {
            Ok(first) => {
                keeper.up(first.link.clone());
                keep(keeper, first, died);
            }
            Err(e) => keeper.failed(e),
        })
        .map_err(WatchdogError::Start)?;
    super::client::set(client);
    Ok(())
}

/// One running watchdog as `pi` holds it.
struct Watchdog {
    child: std::process::Child,
    link: Arc<Link>,
    started: Instant,
}

impl Watchdog {
    /// Starts one. Its end of the socket pair becomes its standard input: the standard library
    /// installs it there in the child (without close-on-exec) while `pi`'s copy stays
    /// close-on-exec, so no other process `pi` starts can inherit it — and with nothing to run
    /// between fork and exec the standard library can use `posix_spawn` from any thread.
    fn start(generation: u64) -> Result<Watchdog, WatchdogError> {
        let start_err = |e: nix::errno::Errno| WatchdogError::Start(e.into());
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(start_err)?;
        // pi's end is read by the runtime's reactor.
        fcntl(ours.as_raw_fd(), FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(start_err)?;
        // `/proc/self/exe` is this very binary even if its file was replaced or deleted since.
        let mut cmd = std::process::Command::new("/proc/self/exe");
        cmd.arg0("pi")
            .arg(SUBCOMMAND)
            .arg(getpid().to_string())
            .arg(SOCKET_FD.to_string())
            // pi's environment may hold API keys, and the watchdog is dumpable.
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        // `cmd` holds pi's copy of the watchdog's end until it is dropped with it.
        let child = cmd.spawn().map_err(WatchdogError::Start)?;
        Ok(Watchdog {
            child,
            link: Arc::new(Link::new(ours, generation)),
            started: Instant::now(),
        })
    }
}

/// The keeper thread: waits for news of the current watchdog's death (from the task reading
/// its socket, or from a failed send), buries it and starts the next, for the life of `pi`.
fn keep(client: Arc<Client>, mut watchdog: Watchdog, died: mpsc::Receiver<u64>) {
    let mut failed_starts = 0;
    for generation in died {
        if generation != watchdog.link.generation {
            continue; // news of one already replaced
        }
        client.restarting();
        // Its socket is closed, so it is dying; should it be stuck instead, it is not serving
        // anyone either. Once it is reaped, all it left behind is pi's.
        let _ = watchdog.child.kill();
        let _ = watchdog.child.wait();
        bury(&client);
        tracing::warn!("pi's process watchdog died; the processes it ran were killed");
        if watchdog.started.elapsed() >= SHORT_LIFE {
            failed_starts = 0;
        } else {
            failed_starts += 1;
        }
        if failed_starts >= MAX_FAILED_STARTS {
            client.failed(WatchdogError::KeepsDying);
            return;
        }
        match Watchdog::start(generation + 1) {
            Ok(w) => {
                client.up(w.link.clone());
                watchdog = w;
            }
            Err(e) => {
                client.failed(e);
                return;
            }
        }
    }
}

/// After the watchdog died: kill and reap what it left to pi, settle the statuses pi knows,
/// and fail what cannot be answered any more.
fn bury(client: &Client) {
    let me = getpid().as_raw();
    let own_group = getpgrp().as_raw();
    loop {
        let orphans: Vec<procs::Stat> = procs::children_of(me)
            .into_iter()
            .filter(|c| c.pgrp != own_group)
            .collect();
        if orphans.is_empty() {
            break;
        }
        for o in orphans.iter().filter(|o| !o.dead) {
            procs::kill_child(o);
        }
        for o in &orphans {
            // Exactly the processes just killed; SIGKILL makes this return promptly.
            let status = loop {
                match waitpid(Pid::from_raw(o.pid), None) {
                    Err(nix::errno::Errno::EINTR) => {}
                    other => break other,
                }
            };
            let raw = match status {
                Ok(WaitStatus::Signaled(_, sig, core)) => sig as i32 | if core { 0x80 } else { 0 },
                Ok(WaitStatus::Exited(_, code)) => (code & 0xff) << 8,
                _ => continue,
            };
            client.settle(o.pid, ExitStatus::from_raw(raw));
        }
    }
    client.lose_the_rest();
}
