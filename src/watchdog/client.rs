//! `pi`'s side of the watchdog: the one global link to the running watchdog, sending spawn
//! requests, and the task that routes its replies and exit notices to the waiting callers.
//!
//! The socket is read by a task on the async runtime (started with the first spawn of each
//! watchdog), so an answer wakes the waiting task directly: a relay thread in between would
//! cost every tool call two more wake-ups. When the socket closes, the task tells the keeper
//! thread (`keeper`), which buries the dead watchdog and publishes the next link here.

use std::collections::HashMap;
use std::io::{self, IoSlice};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::socket::{recv, sendmsg, ControlMessage, MsgFlags, UnixAddr};
use nix::unistd::Pid;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::sync::{oneshot, watch};

use super::wire::{self, Reply, SpawnRequest};
use super::WatchdogError;

/// How long a spawn waits for a replacement watchdog to come up.
const RESTART_WAIT: Duration = Duration::from_secs(10);
/// How long a spawn waits for its answer (a fork and an exec: milliseconds) before giving up
/// on a watchdog that stopped serving (say, a SIGSTOPped one). A late answer finds nobody
/// waiting, and its process is killed.
const REPLY_WAIT: Duration = Duration::from_secs(30);

/// The started process as the caller gets it: its pid and the place its exit status appears.
pub(super) struct Started {
    pub pid: Pid,
    pub status: watch::Receiver<Option<ExitStatus>>,
}

/// `pi`'s end of one watchdog's control socket (non-blocking).
pub(super) struct Link {
    sock: OwnedFd,
    /// Which watchdog of this `pi` it is (0 for the first).
    pub(super) generation: u64,
    reading: AtomicBool,
}

impl Link {
    pub(super) fn new(sock: OwnedFd, generation: u64) -> Link {
        Link {
            sock,
            generation,
            reading: AtomicBool::new(false),
        }
    }
}

/// For the reactor: the link's socket.
struct LinkFd(Arc<Link>);

impl AsRawFd for LinkFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.sock.as_raw_fd()
    }
}

#[derive(Clone)]
enum State {
    Up(Arc<Link>),
    Restarting,
    Failed(Arc<WatchdogError>),
}

type Waiter = oneshot::Sender<io::Result<Started>>;

pub(super) struct Client {
    state: watch::Sender<State>,
    pending: Mutex<HashMap<u64, Waiter>>,
    exits: Mutex<HashMap<i32, watch::Sender<Option<ExitStatus>>>>,
    next_id: AtomicU64,
    /// Keeps the chunks of one request contiguous on the socket.
    send_lock: Mutex<()>,
    /// News of a watchdog's death (its generation), for the keeper thread.
    deaths: Mutex<mpsc::Sender<u64>>,
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

pub(super) fn set(client: Arc<Client>) {
    // `install` runs once, on the main thread; a second client would simply be unused.
    let _ = CLIENT.set(client);
}

impl Client {
    /// A client whose first watchdog is still starting: spawns wait for [`Client::up`].
    pub(super) fn new(deaths: mpsc::Sender<u64>) -> Arc<Client> {
        Arc::new(Client {
            state: watch::Sender::new(State::Restarting),
            pending: Mutex::new(HashMap::new()),
            exits: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            send_lock: Mutex::new(()),
            deaths: Mutex::new(deaths),
        })
    }

    pub(super) fn restarting(&self) {
        self.state.send_replace(State::Restarting);
    }

    pub(super) fn up(&self, link: Arc<Link>) {
        self.state.send_replace(State::Up(link));
    }

    pub(super) fn failed(&self, e: WatchdogError) {
        self.state.send_replace(State::Failed(Arc::new(e)));
    }

    fn died(&self, generation: u64) {
        let _ = lock(&self.deaths).send(generation);
    }

    /// Sends a spawn request with its descriptors and waits for the pid. `fds` are closed in
    /// `pi` once sent. Cancel safe: a process started for a caller that gave up is killed.
    pub(super) async fn spawn(
        self: &Arc<Self>,
        mut req: SpawnRequest,
        fds: Vec<OwnedFd>,
    ) -> io::Result<Started> {
        let mut link = self.link(None).await?;
        let mut retried = false;
        loop {
            self.read(&link);
            req.id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let (tx, rx) = oneshot::channel();
            lock(&self.pending).insert(req.id, tx);
            let guard = PendingGuard {
                client: self,
                id: req.id,
            };
            match self.send(&link, &wire::encode_request(&req), &fds) {
                Ok(()) => {
                    drop(fds);
                    let started = match tokio::time::timeout(REPLY_WAIT, rx).await {
                        Ok(answer) => answer.unwrap_or_else(|_| Err(gone())),
                        Err(_) => Err(io::Error::other(WatchdogError::NoAnswer)),
                    };
                    drop(guard);
                    return started;
                }
                // The watchdog died under us: once the keeper has started the next one, once
                // more.
                Err(Errno::EPIPE | Errno::ECONNRESET | Errno::ENOTCONN) if !retried => {
                    drop(guard);
                    retried = true;
                    self.died(link.generation);
                    link = self.link(Some(link.generation)).await?;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The current link, once there is one (and newer than `dead`, if given).
    async fn link(&self, dead: Option<u64>) -> io::Result<Arc<Link>> {
        let mut rx = self.state.subscribe();
        let settled = rx.wait_for(|s| match s {
            State::Up(l) => Some(l.generation) != dead,
            State::Restarting => false,
            State::Failed(_) => true,
        });
        let state = match tokio::time::timeout(RESTART_WAIT, settled).await {
            Ok(Ok(s)) => s.clone(),
            _ => return Err(gone()),
        };
        match state {
            State::Up(link) => Ok(link),
            State::Failed(e) => Err(io::Error::other(e)),
            State::Restarting => Err(gone()),
        }
    }

    /// Starts the task reading `link`, unless it runs already.
    fn read(self: &Arc<Self>, link: &Arc<Link>) {
        if !link.reading.swap(true, Ordering::AcqRel) {
            tokio::spawn(self.clone().read_loop(link.clone()));
        }
    }

    /// Routes messages until the socket closes, then reports the death to the keeper.
    async fn read_loop(self: Arc<Self>, link: Arc<Link>) {
        // SAFETY: `LinkFd` holds the `Link` that owns the socket, so the descriptor stays open
        // and the same for as long as the `AsyncFd` exists.
        let registered =
            unsafe { AsyncFd::register_with_interest(LinkFd(link.clone()), Interest::READABLE) };
        if let Ok(afd) = registered {
            let mut buf = [0u8; wire::MAX_REPLY];
            loop {
                let Ok(mut ready) = afd.readable().await else {
                    break;
                };
                match ready.try_io(|fd| {
                    recv(fd.as_raw_fd(), &mut buf, MsgFlags::empty()).map_err(io::Error::from)
                }) {
                    Ok(Ok(0)) => break, // no message is empty: the end of the stream
                    Ok(Ok(n)) => self.route(&buf[..n]),
                    Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                    Ok(Err(_)) => break,
                    Err(_would_block) => {}
                }
            }
        }
        self.died(link.generation);
    }

    fn route(&self, message: &[u8]) {
        match wire::decode_reply(message) {
            Ok(Reply::Spawned { id, pid }) => self.spawned(id, pid),
            Ok(Reply::Failed { id, errno }) => {
                if let Some(tx) = lock(&self.pending).remove(&id) {
                    let _ = tx.send(Err(io::Error::from_raw_os_error(errno)));
                }
            }
            Ok(Reply::Exited { pid, status }) => self.settle(pid, ExitStatus::from_raw(status)),
            Err(e) => tracing::warn!("bad message from pi's process watchdog: {e}"),
        }
    }

    /// Sends one request, its descriptors on the first chunk. The socket is non-blocking: when
    /// the watchdog's queue is full, waits for room (briefly: it reads as fast as it forks).
    fn send(&self, link: &Link, bytes: &[u8], fds: &[OwnedFd]) -> Result<(), Errno> {
        let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
        let rights = [ControlMessage::ScmRights(&raw)];
        let _contiguous = lock(&self.send_lock);
        let deadline = Instant::now() + REPLY_WAIT;
        for (i, message) in wire::chunks(bytes).enumerate() {
            let cmsgs: &[ControlMessage] = if i == 0 && !raw.is_empty() {
                &rights
            } else {
                &[]
            };
            loop {
                match sendmsg::<UnixAddr>(
                    link.sock.as_raw_fd(),
                    &[IoSlice::new(&message)],
                    cmsgs,
                    MsgFlags::MSG_NOSIGNAL,
                    None,
                ) {
                    Ok(_) => break,
                    Err(Errno::EINTR) => {}
                    Err(Errno::EAGAIN) if Instant::now() < deadline => {
                        wait_writable(link.sock.as_fd())
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
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

    /// `pid` (a process pi started) ended with `status`.
    pub(super) fn settle(&self, pid: i32, status: ExitStatus) {
        if let Some(tx) = lock(&self.exits).remove(&pid) {
            tx.send_replace(Some(status));
        }
    }

    /// After a watchdog died and what it left was buried: statuses it collected but never sent
    /// are lost (their waiters get an error), and spawns it never answered fail.
    pub(super) fn lose_the_rest(&self) {
        lock(&self.exits).clear();
        for (_, tx) in lock(&self.pending).drain() {
            let _ = tx.send(Err(gone()));
        }
    }
}

fn wait_writable(fd: BorrowedFd<'_>) {
    let mut fds = [PollFd::new(fd, PollFlags::POLLOUT)];
    let _ = poll(&mut fds, PollTimeout::from(100u8));
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
fn kill_process_and_group(pid: i32) {
    let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
}

fn gone() -> io::Error {
    io::Error::other(WatchdogError::Gone)
}
