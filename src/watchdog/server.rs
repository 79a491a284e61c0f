//! The watchdog process itself (`pi __watchdog PPID FD`): a single-threaded fork server with no
//! async runtime, started by `pi` and owning every process `pi` starts.
//!
//! Why it exists: a process that `setsid`s or double-forks leaves its process group and its
//! parent, so neither `killpg` nor the kernel's parent-death signal reaches it, and when `pi`
//! is SIGKILLed no code of `pi` runs at all. Orphans are reparented to their nearest *ancestor*
//! that is a child subreaper, so the watchdog — a subreaper that forks every process itself —
//! inherits all of them, whatever they do. It learns that `pi` died from the end of its control
//! socket (or, second line, its parent-death signal), then SIGKILLs every process below it,
//! pass after pass, until it has no child left, and exits.
//!
//! It holds no secrets (its environment is empty: unlike `pi` it is dumpable), keeps only its
//! control socket open, sits in its own process group so a terminal's Ctrl-C does not reach
//! it, and keeps descriptors 3..=9 occupied so a descriptor installed there in a child can
//! never land on one of its own.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::IoSliceMut;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use nix::errno::Errno;
use nix::fcntl::{fcntl, open, FcntlArg, FdFlag, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{sigprocmask, SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::socket::{recvmsg, send, ControlMessageOwned, MsgFlags, UnixAddr};
use nix::sys::stat::Mode;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{dup2, getpid, getppid, Pid};

use super::procs;
use super::wire::{self, Reply, SpawnRequest, EXTRA_FDS};

/// Signals that end the watchdog (after it has killed everything below it), read from a
/// signalfd instead of handled asynchronously. SIGTERM is also its parent-death signal.
const ENDING: [Signal; 4] = [
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];
/// Descriptors one request may carry: three standard streams and the extra range.
const MAX_FDS: usize = 3 + 7;
/// How long (ms) a teardown pass waits for SIGCHLD before looking again (a child in
/// uninterruptible sleep dies late; new orphans may have arrived meanwhile).
const TEARDOWN_PASS_MS: u16 = 50;

/// Runs the watchdog; returns its exit code. `args` are what follows `__watchdog`.
pub fn serve(mut args: impl Iterator<Item = OsString>) -> i32 {
    let mut number = || args.next()?.to_str()?.parse::<i32>().ok();
    let (Some(parent), Some(fd)) = (number(), number()) else {
        term_eprintln!("pi __watchdog is started by pi itself, not by hand");
        return 2;
    };
    serve_on(parent, fd)
}

/// The watchdog's life once it knows `pi`'s pid and where its end of the socket is: from
/// [`serve`] after an exec, or in a child `pi` forked (see `keeper`).
pub(super) fn serve_on(parent: i32, fd: RawFd) -> i32 {
    match Server::start(parent, fd) {
        Ok(Some(mut server)) => {
            server.run();
            server.teardown();
            0
        }
        // `pi` died before the watchdog was set up: nothing was started, nothing to kill.
        Ok(None) => 0,
        Err(_) => 1,
    }
}

/// The lowest descriptor the control socket may sit at: above [`EXTRA_FDS`].
const SOCKET_FLOOR: RawFd = *EXTRA_FDS.end() + 1;

struct Server {
    sock: OwnedFd,
    signals: SignalFd,
    /// Keeps 3..=9 occupied (see the module doc).
    _reserved: Vec<OwnedFd>,
    /// Processes started for `pi` and not yet reaped: their exits are reported.
    started: HashSet<i32>,
    /// A request whose chunks are still arriving, with its descriptors.
    partial: Option<(Vec<u8>, Vec<OwnedFd>)>,
    buf: Vec<u8>,
}

impl Server {
    fn start(parent: i32, fd: RawFd) -> Result<Option<Server>, Errno> {
        let _ = nix::sys::prctl::set_name(c"pi-watchdog");
        // `pi` passes its end of the socket pair at this number (its standard input). It moves
        // above the range where started processes get extra descriptors, close-on-exec, and
        // the standard descriptor it came in on reads /dev/null like the others.
        let moved = fcntl(fd, FcntlArg::F_DUPFD_CLOEXEC(SOCKET_FLOOR))?;
        // SAFETY: `fcntl` just returned it; nothing else owns it.
        let sock = unsafe { OwnedFd::from_raw_fd(moved) };
        let null = open("/dev/null", OFlag::O_RDWR | OFlag::O_CLOEXEC, Mode::empty())?;
        dup2(null, fd)?;
        nix::unistd::close(null)?;
        close_inherited(moved);
        let reserved = reserve_extra_range()?;
        // Blocked first, so the parent-death signal set below waits in the signalfd.
        let mut mask = SigSet::empty();
        mask.add(Signal::SIGCHLD);
        for s in ENDING {
            mask.add(s);
        }
        sigprocmask(SigmaskHow::SIG_BLOCK, Some(&mask), None)?;
        let signals = SignalFd::with_flags(&mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)?;
        nix::sys::prctl::set_child_subreaper(true)?;
        nix::sys::prctl::set_pdeathsig(Signal::SIGTERM)?;
        // The parent-death signal only covers deaths after it was set.
        if getppid().as_raw() != parent {
            return Ok(None);
        }
        Ok(Some(Server {
            sock,
            signals,
            _reserved: reserved,
            started: HashSet::new(),
            partial: None,
            buf: vec![0; wire::CHUNK + 1],
        }))
    }

    /// Serves until `pi` is gone (socket closed) or an ending signal arrives.
    fn run(&mut self) {
        loop {
            let (sock_ready, signal_ready) = {
                let mut fds = [
                    PollFd::new(self.sock.as_fd(), PollFlags::POLLIN),
                    PollFd::new(self.signals.as_fd(), PollFlags::POLLIN),
                ];
                match poll(&mut fds, PollTimeout::NONE) {
                    Ok(_) | Err(Errno::EINTR) => {}
                    Err(_) => return,
                }
                let ready = |f: &PollFd| f.revents().is_some_and(|r| !r.is_empty());
                (ready(&fds[0]), ready(&fds[1]))
            };
            if signal_ready && self.signals_say_end() {
                return;
            }
            if sock_ready && !self.receive() {
                return;
            }
        }
    }

    /// Reaps what exited (reporting processes it started); true when an ending signal came.
    fn signals_say_end(&mut self) -> bool {
        let mut end = false;
        while let Ok(Some(info)) = self.signals.read_signal() {
            if info.ssi_signo != Signal::SIGCHLD as u32 {
                end = true;
            }
        }
        self.reap();
        end
    }

    fn reap(&mut self) {
        loop {
            match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => return,
                Ok(status) => {
                    let Some(pid) = status.pid() else { continue };
                    if !self.started.remove(&pid.as_raw()) {
                        continue; // an orphan that was reparented here: reaped, unreported
                    }
                    if let Some(raw) = raw_status(&status) {
                        self.reply(Reply::Exited {
                            pid: pid.as_raw(),
                            status: raw,
                        });
                    }
                }
                Err(Errno::EINTR) => {}
                Err(_) => return, // ECHILD: no children at all
            }
        }
    }

    /// Reads one message; false when the socket is closed (pi is gone).
    fn receive(&mut self) -> bool {
        let mut cmsg = nix::cmsg_space!([RawFd; MAX_FDS]);
        let (len, fds, flags) = {
            let mut iov = [IoSliceMut::new(&mut self.buf)];
            let msg = match recvmsg::<UnixAddr>(
                self.sock.as_raw_fd(),
                &mut iov,
                Some(&mut cmsg),
                MsgFlags::MSG_CMSG_CLOEXEC,
            ) {
                Ok(m) => m,
                Err(Errno::EINTR | Errno::EAGAIN) => return true,
                Err(_) => return false,
            };
            let mut fds = Vec::new();
            for c in msg.cmsgs().into_iter().flatten() {
                if let ControlMessageOwned::ScmRights(raw) = c {
                    // SAFETY: the kernel just installed these descriptors for us.
                    fds.extend(
                        raw.into_iter()
                            .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
                    );
                }
            }
            (msg.bytes, fds, msg.flags)
        };
        if len == 0 {
            return false; // no message is empty: this is the end of the stream
        }
        let (part, more) = match wire::split_chunk(&self.buf[..len]) {
            Ok(p) => p,
            Err(_) => return true,
        };
        let (mut bytes, mut held) = self.partial.take().unwrap_or_default();
        bytes.extend_from_slice(part);
        held.extend(fds);
        if flags.intersects(MsgFlags::MSG_TRUNC | MsgFlags::MSG_CTRUNC) {
            // Not something pi sends; answer it as malformed rather than guess.
            bytes.clear();
        }
        if more {
            self.partial = Some((bytes, held));
        } else {
            self.handle(&bytes, held);
        }
        true
    }

    fn handle(&mut self, bytes: &[u8], fds: Vec<OwnedFd>) {
        let reply = match wire::decode_request(bytes) {
            Ok(req) if req.fd_count() == fds.len() => {
                let id = req.id;
                match spawn(req, fds) {
                    Ok(pid) => {
                        self.started.insert(pid);
                        Reply::Spawned { id, pid }
                    }
                    Err(e) => Reply::Failed {
                        id,
                        errno: e.raw_os_error().unwrap_or(Errno::EIO as i32),
                    },
                }
            }
            _ => match wire::request_id(bytes) {
                Some(id) => Reply::Failed {
                    id,
                    errno: Errno::EINVAL as i32,
                },
                None => return,
            },
        };
        self.reply(reply);
    }

    fn reply(&self, reply: Reply) {
        let bytes = wire::encode_reply(reply);
        loop {
            match send(self.sock.as_raw_fd(), &bytes, MsgFlags::MSG_NOSIGNAL) {
                Err(Errno::EINTR) => {}
                // A failure means pi is gone; the closed socket ends the loop next.
                _ => return,
            }
        }
    }

    /// SIGKILLs every process below the watchdog and reaps it, pass after pass, until there is
    /// no child left: each pass's dead leave their own children to us for the next pass.
    fn teardown(&mut self) {
        let me = getpid().as_raw();
        loop {
            loop {
                match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) => break,
                    Ok(_) | Err(Errno::EINTR) => {}
                    Err(_) => return, // ECHILD: nothing left below us
                }
            }
            for child in procs::children_of(me) {
                if !child.dead {
                    procs::kill_child(&child);
                }
            }
            let mut fds = [PollFd::new(self.signals.as_fd(), PollFlags::POLLIN)];
            let _ = poll(&mut fds, PollTimeout::from(TEARDOWN_PASS_MS));
            while let Ok(Some(_)) = self.signals.read_signal() {}
        }
    }
}

/// The `waitpid` status word for an exit or a death by signal (what `ExitStatus::from_raw`
/// takes); `None` for stops and continues, which are not exits.
fn raw_status(status: &WaitStatus) -> Option<i32> {
    match *status {
        WaitStatus::Exited(_, code) => Some((code & 0xff) << 8),
        WaitStatus::Signaled(_, sig, core) => Some(sig as i32 | if core { 0x80 } else { 0 }),
        _ => None,
    }
}

/// Closes every descriptor but the standard streams and the control socket: whatever `pi`
/// inherited from its own parent must not be held open by the watchdog or passed on.
fn close_inherited(keep: RawFd) {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let open: Vec<RawFd> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    for fd in open {
        if fd > 2 && fd != keep {
            // The directory's own descriptor is among them and already closed: EBADF.
            let _ = nix::unistd::close(fd);
        }
    }
}

/// Fills every free descriptor number in [`EXTRA_FDS`] with `/dev/null`.
fn reserve_extra_range() -> Result<Vec<OwnedFd>, Errno> {
    let mut held = Vec::new();
    for target in EXTRA_FDS {
        if fcntl(target, FcntlArg::F_GETFD).is_ok() {
            continue;
        }
        let fd = open(
            "/dev/null",
            OFlag::O_RDONLY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        // SAFETY: `open` just returned it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        if fd.as_raw_fd() == target {
            held.push(fd);
        } else {
            dup2(fd.as_raw_fd(), target)?;
            fcntl(target, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
            // SAFETY: `dup2` just made `target` a descriptor of ours.
            held.push(unsafe { OwnedFd::from_raw_fd(target) });
        }
    }
    Ok(held)
}

/// Starts one process as `req` says, with `fds` (already checked to match `req`).
fn spawn(req: SpawnRequest, fds: Vec<OwnedFd>) -> std::io::Result<i32> {
    let mut fds = fds.into_iter();
    let mut stdio = |given: bool| match given.then(|| fds.next()).flatten() {
        Some(fd) => Stdio::from(fd),
        None => Stdio::null(),
    };
    let mut cmd = Command::new(&req.program);
    cmd.arg0(&req.arg0)
        .args(&req.args)
        .env_clear()
        .envs(req.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&req.cwd)
        .stdin(stdio(req.stdio[0]))
        .stdout(stdio(req.stdio[1]))
        .stderr(stdio(req.stdio[2]));
    if req.new_group {
        cmd.process_group(0);
    }
    // Received descriptors are all above the reserved range (it is full), so installing one at
    // its target can never overwrite another that is still to be installed.
    let extras: Vec<OwnedFd> = fds.collect();
    let mut plan = [(-1, -1); EXTRA_FDS_LEN];
    for (slot, (fd, target)) in plan.iter_mut().zip(extras.iter().zip(&req.fd_targets)) {
        *slot = (fd.as_raw_fd(), *target);
    }
    let count = extras.len().min(EXTRA_FDS_LEN);
    // Without work between fork and exec the standard library uses posix_spawn (a vfork):
    // much cheaper than a fork, and the bash tool starts a shell per call.
    if req.die_with_parent || count > 0 {
        let me = getpid();
        let die = req.die_with_parent;
        // SAFETY: the closure only makes async-signal-safe calls (sigprocmask, prctl, getppid,
        // dup2) on data prepared before the fork, and allocates nothing.
        unsafe {
            cmd.pre_exec(move || child_setup(me, die, &plan[..count]));
        }
    }
    let spawned = cmd.spawn();
    // The parent's copies of the child's descriptors close here: end-of-file on a pipe must
    // depend on the child alone.
    drop(cmd);
    drop(extras);
    // The std `Child` is dropped unreaped: `reap` collects every exit with waitpid.
    spawned.map(|child| child.id() as i32)
}

const EXTRA_FDS_LEN: usize = (*EXTRA_FDS.end() - *EXTRA_FDS.start() + 1) as usize;

/// In the child, between fork and exec.
fn child_setup(
    watchdog: Pid,
    die_with_parent: bool,
    plan: &[(RawFd, RawFd)],
) -> std::io::Result<()> {
    // The watchdog blocks the signals it reads from its signalfd; the child starts clean.
    sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
    if die_with_parent {
        nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
        // The signal only covers deaths after it was set.
        if getppid() != watchdog {
            return Err(Errno::ESRCH.into());
        }
    }
    for &(fd, target) in plan {
        // dup2 leaves the new descriptor inheritable: it survives the exec, as it must.
        dup2(fd, target)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn statuses_round_trip_through_exit_status() {
        let exited = raw_status(&WaitStatus::Exited(Pid::from_raw(1), 3)).unwrap();
        assert_eq!(std::process::ExitStatus::from_raw(exited).code(), Some(3));
        let killed = raw_status(&WaitStatus::Signaled(
            Pid::from_raw(1),
            Signal::SIGKILL,
            false,
        ))
        .unwrap();
        let status = std::process::ExitStatus::from_raw(killed);
        assert_eq!((status.code(), status.signal()), (None, Some(9)));
        assert_eq!(
            raw_status(&WaitStatus::Stopped(Pid::from_raw(1), Signal::SIGSTOP)),
            None
        );
    }
}
