//! Starting watchdogs and replacing a dead one. A watchdog's parent-death signal fires when
//! the *thread* that forked it ends, so it must never be forked by a runtime thread that may
//! be retired when idle. The first one is forked by [`install`] on the main thread, which
//! lives as long as `pi`, while `pi` has no other thread: the child then runs the watchdog
//! straight away, without the exec of this large binary (a millisecond or two of start-up, on
//! the path of every hook's start). Replacements are started later, when `pi` has threads, so
//! the keeper thread (also started by [`install`], and as long-lived) execs them, and spawns
//! wait for each.
//!
//! If the watchdog dies while `pi` runs, its children are reparented to `pi` (a subreaper
//! too). The keeper waits until the watchdog is reaped (only then are the orphans surely
//! ours), kills and reaps every child of `pi` outside `pi`'s own process group — everything
//! the watchdog started leads its own group or sits in the watchdog's — settling the exit
//! statuses of the processes `pi` knows, then starts a new watchdog. `pi` never calls
//! `waitpid(-1)`: it reaps exactly the processes it killed.

use std::os::fd::{AsRawFd, OwnedFd};
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
    let forked = if only_thread() {
        Some(Watchdog::fork())
    } else {
        None
    };
    std::thread::Builder::new()
        .name("pi-watchdog".into())
        .spawn(move || match forked.unwrap_or_else(|| Watchdog::start(0)) {
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
    pid: Pid,
    link: Arc<Link>,
    started: Instant,
}

impl Watchdog {
    /// Starts one. Its end of the socket pair becomes its standard input: the standard library
    /// installs it there in the child (without close-on-exec) while `pi`'s copy stays
    /// close-on-exec, so no other process `pi` starts can inherit it — and with nothing to run
    /// between fork and exec the standard library can use `posix_spawn` from any thread.
    fn start(generation: u64) -> Result<Watchdog, WatchdogError> {
        let (ours, theirs) = socket_pair()?;
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
        let pid = i32::try_from(child.id())
            .map(Pid::from_raw)
            .map_err(|e| WatchdogError::Start(std::io::Error::other(e)))?;
        Ok(Watchdog {
            pid,
            link: Arc::new(Link::new(ours, generation)),
            started: Instant::now(),
        })
    }

    /// The first watchdog, as a forked copy of `pi` that runs the watchdog instead of
    /// returning. Only while `pi` has no other thread ([`only_thread`]): no lock can then be
    /// held in the copy, so it may run ordinary code. It stays as undumpable as `pi` (an exec
    /// would have reset that), and it gets what the exec'd one gets: its own process group, `/`
    /// as its directory, the socket on standard input and `/dev/null` on the others; the
    /// watchdog closes every other descriptor it inherited, `pi`'s end of the socket among
    /// them.
    fn fork() -> Result<Watchdog, WatchdogError> {
        use nix::unistd::{dup2, fork, setpgid, ForkResult};
        let (ours, theirs) = socket_pair()?;
        let parent = getpid();
        // SAFETY: `pi` has a single thread here (checked by the caller), so the child is a
        // complete copy of a process in which no other thread held a lock; it never returns
        // from this function (`_exit`).
        match unsafe { fork() } {
            Ok(ForkResult::Child) => {
                let _ = setpgid(Pid::from_raw(0), Pid::from_raw(0));
                let _ = nix::unistd::chdir("/");
                let ready = dup2(theirs.as_raw_fd(), SOCKET_FD).is_ok()
                    && nix::fcntl::open("/dev/null", OFlag::O_RDWR, nix::sys::stat::Mode::empty())
                        .and_then(|null| {
                            dup2(null, 1)?;
                            dup2(null, 2)?;
                            nix::unistd::close(null)
                        })
                        .is_ok();
                let code = if ready {
                    super::server::serve_on(parent.as_raw(), SOCKET_FD)
                } else {
                    1
                };
                // SAFETY: ends the child without running `pi`'s exit handlers or flushing
                // buffers that are `pi`'s.
                unsafe { nix::libc::_exit(code) }
            }
            Ok(ForkResult::Parent { child }) => Ok(Watchdog {
                pid: child,
                link: Arc::new(Link::new(ours, 0)),
                started: Instant::now(),
            }),
            Err(e) => Err(WatchdogError::Start(e.into())),
        }
    }
}

/// The control socket: `pi`'s end (close-on-exec, non-blocking, read by the runtime's reactor)
/// and the watchdog's.
fn socket_pair() -> Result<(OwnedFd, OwnedFd), WatchdogError> {
    let start_err = |e: nix::errno::Errno| WatchdogError::Start(e.into());
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(start_err)?;
    fcntl(ours.as_raw_fd(), FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(start_err)?;
    Ok((ours, theirs))
}

/// Whether the calling thread is the process's only one (so forking without an exec is safe).
fn only_thread() -> bool {
    std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.count() == 1)
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
        let _ = nix::sys::signal::kill(watchdog.pid, nix::sys::signal::Signal::SIGKILL);
        let _ = loop {
            match waitpid(watchdog.pid, None) {
                Err(nix::errno::Errno::EINTR) => {}
                other => break other,
            }
        };
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
