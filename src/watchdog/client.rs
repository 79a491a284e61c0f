//! `pi`'s side of the watchdog: starting it, the one global link to it, sending spawn
//! requests, and the reader thread that routes its replies and exit notices to the waiting
//! tasks.
//!
//! The reader is a plain thread rather than a task: it blocks on the socket, and it is also
//! the thread that starts replacement watchdogs. A watchdog's parent-death signal fires when
//! the *thread* that forked it ends, so it must be forked by a thread that lives as long as
//! `pi` (the main thread for the first one, this thread for the rest), never by a runtime
//! thread that may be retired when idle.
//!
//! If the watchdog dies while `pi` runs, its children are reparented to `pi` (a subreaper
//! too). The reader waits until the watchdog is reaped (only then are the orphans surely
//! ours), kills and reaps every child of `pi` outside `pi`'s own process group — everything
//! the watchdog started leads its own group or sits in the watchdog's — completing the exit
//! statuses of the processes it knows, then starts a new watchdog. `pi` never calls
//! `waitpid(-1)`: it reaps exactly the processes it killed.

use std::collections::HashMap;
use std::io::{self, IoSlice};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, FdFlag};
use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::socket::{
    recv, sendmsg, socketpair, AddressFamily, ControlMessage, MsgFlags, SockFlag, SockType,
    UnixAddr,
};
use nix::sys::wait::waitpid;
use nix::unistd::{getpgrp, getpid, Pid};
use tokio::sync::{oneshot, watch};

use super::procs;
use super::wire::{self, Reply, SpawnRequest};
use super::{WatchdogError, SUBCOMMAND};

/// How long a spawn waits for a replacement watchdog to come up.
const RESTART_WAIT: Duration = Duration::from_secs(10);
/// How long a spawn waits for its answer (a fork and an exec: milliseconds) before giving up
/// on a watchdog that stopped serving (say, a SIGSTOPped one). A late answer finds nobody
/// waiting, and its process is killed.
const REPLY_WAIT: Duration = Duration::from_secs(30);
/// A watchdog that dies sooner than this after its start counts as a failed start; after
/// [`MAX_FAILED_STARTS`] in a row `pi` stops restarting it and spawns fail with the reason.
const SHORT_LIFE: Duration = Duration::from_secs(1);
const MAX_FAILED_STARTS: u32 = 3;

/// The started process as the caller gets it: its pid and the place its exit status appears.
pub(super) struct Started {
    pub pid: Pid,
    pub status: watch::Receiver<Option<ExitStatus>>,
}

#[derive(Clone)]
enum Link {
    Up(Arc<OwnedFd>),
    Restarting,
    Failed(Arc<WatchdogError>),
}

type Waiter = oneshot::Sender<io::Result<Started>>;

pub(super) struct Client {
    link: watch::Sender<Link>,
    pending: Mutex<HashMap<u64, Waiter>>,
    exits: Mutex<HashMap<i32, watch::Sender<Option<ExitStatus>>>>,
    next_id: AtomicU64,
    /// Keeps the chunks of one request contiguous on the socket.
    send_lock: Mutex<()>,
}

static CLIENT: OnceLock<Arc<Client>> = OnceLock::new();

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No critical section here panics; a poisoned map is still consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The installed client, if `install` ran in this process.
pub(super) fn get() -> Option<&'static Arc<Client>> {
    CLIENT.get()
}

/// Makes `pi` a subreaper, starts the watchdog from the calling thread (call it from the main
/// thread, before any runtime exists) and the reader thread. Idempotent.
pub(super) fn install() -> Result<(), WatchdogError> {
    if CLIENT.get().is_some() {
        return Ok(());
    }
    nix::sys::prctl::set_child_subreaper(true).map_err(WatchdogError::Subreaper)?;
    let first = Watchdog::start()?;
    let client = Arc::new(Client {
        link: watch::Sender::new(Link::Up(first.sock.clone())),
        pending: Mutex::new(HashMap::new()),
        exits: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(1),
        send_lock: Mutex::new(()),
    });
    let reader = client.clone();
    std::thread::Builder::new()
        .name("pi-watchdog".into())
        .spawn(move || reader.read_loop(first))
        .map_err(WatchdogError::Start)?;
    // A second caller lost a race it cannot have (main thread only); its client would simply
    // be unused.
    let _ = CLIENT.set(client);
    Ok(())
}

/// One running watchdog as `pi` holds it.
struct Watchdog {
    child: std::process::Child,
    sock: Arc<OwnedFd>,
    started: Instant,
}

impl Watchdog {
    fn start() -> Result<Watchdog, WatchdogError> {
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(|e| WatchdogError::Start(e.into()))?;
        let fd: RawFd = theirs.as_raw_fd();
        // `/proc/self/exe` is this very binary even if its file was replaced or deleted since.
        let mut cmd = std::process::Command::new("/proc/self/exe");
        cmd.arg0("pi")
            .arg(SUBCOMMAND)
            .arg(getpid().to_string())
            .arg(fd.to_string())
            // pi's environment may hold API keys, and the watchdog is dumpable.
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        // SAFETY: only fcntl(2) runs between fork and exec. The flag is per descriptor, so the
        // parent's copy stays close-on-exec (no other child may inherit it).
        unsafe {
            cmd.pre_exec(move || {
                fcntl(fd, FcntlArg::F_SETFD(FdFlag::empty()))?;
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(WatchdogError::Start)?;
        drop(theirs);
        Ok(Watchdog {
            child,
            sock: Arc::new(ours),
            started: Instant::now(),
        })
    }
}

impl Client {
    /// Sends a spawn request with its descriptors and waits for the pid. `fds` are closed in
    /// `pi` once sent. Cancel safe: a process started for a caller that gave up is killed.
    pub(super) async fn spawn(
        self: &Arc<Self>,
        mut req: SpawnRequest,
        fds: Vec<OwnedFd>,
    ) -> io::Result<Started> {
        let mut sock = self.link().await?;
        let mut retried = false;
        loop {
            req.id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let (tx, rx) = oneshot::channel();
            lock(&self.pending).insert(req.id, tx);
            let guard = PendingGuard {
                client: self,
                id: req.id,
            };
            match self.send(&sock, &wire::encode_request(&req), &fds) {
                Ok(()) => {
                    drop(fds);
                    let started = match tokio::time::timeout(REPLY_WAIT, rx).await {
                        Ok(answer) => answer.unwrap_or_else(|_| Err(gone())),
                        Err(_) => Err(io::Error::other(WatchdogError::NoAnswer)),
                    };
                    drop(guard);
                    return started;
                }
                // The watchdog died under us: once the reader has started the next one, once
                // more.
                Err(Errno::EPIPE | Errno::ECONNRESET | Errno::ENOTCONN) if !retried => {
                    drop(guard);
                    retried = true;
                    sock = self.next_link(&sock).await?;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    async fn link(&self) -> io::Result<Arc<OwnedFd>> {
        let mut rx = self.link.subscribe();
        let ready = tokio::time::timeout(
            RESTART_WAIT,
            rx.wait_for(|l| !matches!(l, Link::Restarting)),
        )
        .await;
        let link = match ready {
            Ok(Ok(l)) => l.clone(),
            _ => return Err(gone()),
        };
        match link {
            Link::Up(sock) => Ok(sock),
            Link::Failed(e) => Err(io::Error::other(e)),
            Link::Restarting => Err(gone()),
        }
    }

    /// The link after `old` died.
    async fn next_link(&self, old: &Arc<OwnedFd>) -> io::Result<Arc<OwnedFd>> {
        let mut rx = self.link.subscribe();
        let _ = tokio::time::timeout(
            RESTART_WAIT,
            rx.wait_for(|l| !matches!(l, Link::Up(s) if Arc::ptr_eq(s, old))),
        )
        .await;
        self.link().await
    }

    fn send(&self, sock: &OwnedFd, bytes: &[u8], fds: &[OwnedFd]) -> Result<(), Errno> {
        let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
        let rights = [ControlMessage::ScmRights(&raw)];
        let _contiguous = lock(&self.send_lock);
        for (i, message) in wire::chunks(bytes).enumerate() {
            let cmsgs: &[ControlMessage] = if i == 0 && !raw.is_empty() {
                &rights
            } else {
                &[]
            };
            loop {
                match sendmsg::<UnixAddr>(
                    sock.as_raw_fd(),
                    &[IoSlice::new(&message)],
                    cmsgs,
                    MsgFlags::MSG_NOSIGNAL,
                    None,
                ) {
                    Ok(_) => break,
                    Err(Errno::EINTR) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// The reader thread: serves one watchdog after another for the life of `pi`.
    fn read_loop(self: Arc<Self>, mut watchdog: Watchdog) {
        let mut failed_starts = 0;
        loop {
            let ready = self.serve(&watchdog);
            self.link.send_replace(Link::Restarting);
            // Its socket is closed, so it is dying; should it be stuck instead, it is not
            // serving anyone either. Once it is reaped, all it left behind is pi's.
            let _ = watchdog.child.kill();
            let _ = watchdog.child.wait();
            self.bury();
            if ready && watchdog.started.elapsed() >= SHORT_LIFE {
                failed_starts = 0;
            } else {
                failed_starts += 1;
            }
            tracing::warn!("pi's process watchdog died; its processes were killed");
            if failed_starts >= MAX_FAILED_STARTS {
                self.link
                    .send_replace(Link::Failed(Arc::new(WatchdogError::KeepsDying)));
                return;
            }
            match Watchdog::start() {
                Ok(w) => {
                    self.link.send_replace(Link::Up(w.sock.clone()));
                    watchdog = w;
                }
                Err(e) => {
                    self.link.send_replace(Link::Failed(Arc::new(e)));
                    return;
                }
            }
        }
    }

    /// Routes messages until the socket closes; whether the watchdog said it was ready.
    fn serve(&self, watchdog: &Watchdog) -> bool {
        let mut ready = false;
        let mut buf = [0u8; wire::MAX_REPLY];
        loop {
            let n = match recv(watchdog.sock.as_raw_fd(), &mut buf, MsgFlags::empty()) {
                Ok(0) => return ready,
                Ok(n) => n,
                Err(Errno::EINTR) => continue,
                Err(_) => return ready,
            };
            match wire::decode_reply(&buf[..n]) {
                Ok(Reply::Ready) => ready = true,
                Ok(Reply::Spawned { id, pid }) => self.spawned(id, pid),
                Ok(Reply::Failed { id, errno }) => {
                    if let Some(tx) = lock(&self.pending).remove(&id) {
                        let _ = tx.send(Err(io::Error::from_raw_os_error(errno)));
                    }
                }
                Ok(Reply::Exited { pid, status }) => {
                    self.settle(pid, ExitStatus::from_raw(status));
                }
                Err(e) => tracing::warn!("bad message from pi's process watchdog: {e}"),
            }
        }
    }

    fn spawned(&self, id: u64, pid: i32) {
        // Registered before anyone learns the pid, so its exit notice cannot be missed.
        let (tx, status) = watch::channel(None);
        lock(&self.exits).insert(pid, tx);
        let started = Started {
            pid: Pid::from_raw(pid),
            status,
        };
        let waiter = lock(&self.pending).remove(&id);
        let delivered = waiter.is_some_and(|tx| tx.send(Ok(started)).is_ok());
        if !delivered {
            // Nobody waits for it any more (the spawn was cancelled).
            kill_process_and_group(pid);
        }
    }

    fn settle(&self, pid: i32, status: ExitStatus) {
        if let Some(tx) = lock(&self.exits).remove(&pid) {
            tx.send_replace(Some(status));
        }
    }

    /// After the watchdog died: kill and reap what it left to pi, settle the statuses pi
    /// knows, and fail what cannot be answered any more.
    fn bury(&self) {
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
                        Err(Errno::EINTR) => {}
                        other => break other,
                    }
                };
                if let Ok(nix::sys::wait::WaitStatus::Signaled(_, sig, core)) = status {
                    let raw = sig as i32 | if core { 0x80 } else { 0 };
                    self.settle(o.pid, ExitStatus::from_raw(raw));
                } else if let Ok(nix::sys::wait::WaitStatus::Exited(_, code)) = status {
                    self.settle(o.pid, ExitStatus::from_raw((code & 0xff) << 8));
                }
            }
        }
        // Statuses the dead watchdog collected but never sent are lost: waiters get an error.
        lock(&self.exits).clear();
        for (_, tx) in lock(&self.pending).drain() {
            let _ = tx.send(Err(gone()));
        }
    }
}

/// Removes a spawn's waiter if the spawn future is dropped before the reply.
struct PendingGuard<'a> {
    client: &'a Client,
    id: u64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        lock(&self.client.pending).remove(&self.id);
    }
}

/// SIGKILL to a process and to the group it leads, if it leads one. A group id is never a
/// live process's pid unless that process leads it, so this cannot reach strangers.
pub(super) fn kill_process_and_group(pid: i32) {
    let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
}

fn gone() -> io::Error {
    io::Error::other(WatchdogError::Gone)
}
