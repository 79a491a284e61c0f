//! The one way `pi` starts a process: [`Command`] → [`Child`], through the watchdog when it is
//! installed (the `pi` binary), directly with tokio otherwise (library tests, benches), so every
//! caller has one code path.
//!
//! Pipes are made here in both cases (`pi` keeps its ends as async tokio pipes and passes the
//! child's ends along), and a child's exit status arrives on a watch channel: from the
//! watchdog's exit notice, or from the task waiting on a directly spawned child.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::process::ExitStatus;

use nix::fcntl::OFlag;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use tokio::net::unix::pipe;
use tokio::sync::watch;

use super::client;
use super::group::ProcessGroup;
use super::wire::{SpawnRequest, EXTRA_FDS};
use super::WatchdogError;

/// What one standard stream of the child is connected to.
#[derive(Debug)]
pub enum Stdio {
    Null,
    /// A new pipe; `pi`'s end is in [`Child`].
    Piped,
    /// This descriptor (the child gets its own copy; `pi`'s is closed once the child started).
    Fd(OwnedFd),
}

/// A process to start. The environment is exactly what [`Command::envs`] gives: nothing is
/// inherited from `pi`.
#[derive(Debug)]
pub struct Command {
    program: PathBuf,
    arg0: Option<OsString>,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: PathBuf,
    new_group: bool,
    die_with_parent: bool,
    stdio: [Stdio; 3],
    fds: Vec<(RawFd, OwnedFd)>,
}

impl Command {
    pub fn new(program: impl Into<PathBuf>) -> Command {
        Command {
            program: program.into(),
            arg0: None,
            args: Vec::new(),
            env: Vec::new(),
            cwd: PathBuf::from("."),
            new_group: false,
            die_with_parent: false,
            stdio: [Stdio::Null, Stdio::Null, Stdio::Null],
            fds: Vec::new(),
        }
    }

    /// `argv[0]` when it should differ from the program (which may be `/proc/self/fd/N`).
    pub fn arg0(mut self, arg0: impl Into<OsString>) -> Command {
        self.arg0 = Some(arg0.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The child's complete environment.
    pub fn envs<I, K, V>(mut self, env: I) -> Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.env
            .extend(env.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Command {
        self.cwd = dir.into();
        self
    }

    /// Makes the child lead a new process group, whose id is then its pid.
    pub fn new_process_group(mut self) -> Command {
        self.new_group = true;
        self
    }

    /// Has the kernel SIGKILL the child when its parent dies (`PR_SET_PDEATHSIG`): the
    /// watchdog, or without one the thread that spawned it. A second line of defence for
    /// long-lived children; it makes starting the child a little dearer (a fork).
    pub fn die_with_parent(mut self) -> Command {
        self.die_with_parent = true;
        self
    }

    pub fn stdin(mut self, s: Stdio) -> Command {
        self.stdio[0] = s;
        self
    }

    pub fn stdout(mut self, s: Stdio) -> Command {
        self.stdio[1] = s;
        self
    }

    pub fn stderr(mut self, s: Stdio) -> Command {
        self.stdio[2] = s;
        self
    }

    /// Installs `fd` in the child at `target` (3 to 9), inherited across its exec.
    pub fn fd(mut self, target: RawFd, fd: OwnedFd) -> Command {
        self.fds.push((target, fd));
        self
    }

    /// Starts the process. The error is the operating system's (a missing program, a bad
    /// working directory) or, when the watchdog cannot be reached, [`WatchdogError`].
    pub async fn spawn(self) -> io::Result<Child> {
        if let Some((bad, _)) = self.fds.iter().find(|(t, _)| !EXTRA_FDS.contains(t)) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("descriptor number {bad} is outside 3..=9"),
            ));
        }
        let Command {
            program,
            arg0,
            args,
            env,
            cwd,
            new_group,
            die_with_parent,
            stdio,
            fds,
        } = self;
        // The child's ends (or null) and pi's ends of the pipes.
        let mut child_ends: [Option<OwnedFd>; 3] = [None, None, None];
        let mut ours: [Option<OwnedFd>; 3] = [None, None, None];
        for (i, s) in stdio.into_iter().enumerate() {
            match s {
                Stdio::Null => {}
                Stdio::Fd(fd) => child_ends[i] = Some(fd),
                Stdio::Piped => {
                    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
                    let (theirs, mine) = if i == 0 { (read, write) } else { (write, read) };
                    child_ends[i] = Some(theirs);
                    ours[i] = Some(mine);
                }
            }
        }
        let arg0 = arg0.unwrap_or_else(|| program.clone().into_os_string());
        let (pid, status) = match client::get() {
            Some(c) => {
                let req = SpawnRequest {
                    id: 0,
                    program,
                    arg0,
                    args,
                    env,
                    cwd,
                    new_group,
                    die_with_parent,
                    stdio: [0, 1, 2].map(|i| child_ends[i].is_some()),
                    fd_targets: fds.iter().map(|(t, _)| *t).collect(),
                };
                let mut passed: Vec<OwnedFd> = child_ends.into_iter().flatten().collect();
                passed.extend(fds.into_iter().map(|(_, fd)| fd));
                let started = c.spawn(req, passed).await?;
                (started.pid, started.status)
            }
            None => {
                let direct = Direct {
                    program,
                    arg0,
                    args,
                    env,
                    cwd,
                    new_group,
                    die_with_parent,
                };
                direct.spawn(child_ends, fds)?
            }
        };
        let [stdin, stdout, stderr] = ours;
        let mut child = Child {
            pid,
            group: new_group,
            stdin: None,
            stdout: None,
            stderr: None,
            status,
        };
        // From here on a failure drops `child`, which kills the process.
        child.stdin = stdin.map(pipe_sender).transpose()?;
        child.stdout = stdout.map(pipe_receiver).transpose()?;
        child.stderr = stderr.map(pipe_receiver).transpose()?;
        Ok(child)
    }
}

/// `pi`'s end of a fresh pipe as an async reader. tokio's checked constructor would ask the
/// kernel what the descriptor is and which flags it has (an fstat and two fcntl calls); a
/// fresh pipe end has no status flags to keep, so one fcntl makes it non-blocking. Only this
/// end: O_NONBLOCK belongs to an end's open file, and the child's end stays blocking.
pub fn pipe_receiver(fd: OwnedFd) -> io::Result<pipe::Receiver> {
    set_nonblocking(&fd)?;
    pipe::Receiver::from_owned_fd_unchecked(fd)
}

/// [`pipe_receiver`] for the writing end.
fn pipe_sender(fd: OwnedFd) -> io::Result<pipe::Sender> {
    set_nonblocking(&fd)?;
    pipe::Sender::from_owned_fd_unchecked(fd)
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    use nix::fcntl::{fcntl, FcntlArg};
    fcntl(fd.as_raw_fd(), FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
    Ok(())
}

/// A started process: pipes for the streams that were [`Stdio::Piped`], its exit status when
/// it has one, and SIGKILL (to its group, if it leads one) when dropped while still running.
#[derive(Debug)]
pub struct Child {
    pid: Pid,
    group: bool,
    pub stdin: Option<pipe::Sender>,
    pub stdout: Option<pipe::Receiver>,
    pub stderr: Option<pipe::Receiver>,
    status: watch::Receiver<Option<ExitStatus>>,
}

impl Child {
    /// Its pid (and, with a new process group, its group id).
    pub fn id(&self) -> Pid {
        self.pid
    }

    /// The process group it leads, when it was started in a new one.
    pub fn group(&self) -> Option<ProcessGroup> {
        self.group.then(|| ProcessGroup::led_by(self.pid))
    }

    /// Waits for the exit status; may be called again after it returned. Cancel safe.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        match self.status.wait_for(Option::is_some).await {
            Ok(s) => (*s).ok_or_else(|| io::Error::other(WatchdogError::StatusLost)),
            Err(_) => Err(io::Error::other(WatchdogError::StatusLost)),
        }
    }

    /// The exit status if it has exited.
    pub fn try_wait(&self) -> Option<ExitStatus> {
        *self.status.borrow()
    }

    /// Whether the process has certainly not been reaped yet, so its pid is still its own.
    fn unreaped(&self) -> bool {
        self.status.borrow().is_none() && self.status.has_changed().is_ok()
    }

    /// SIGKILLs the process (and its group, if it leads one) unless it was already reaped.
    pub fn start_kill(&self) {
        if !self.unreaped() {
            return;
        }
        if self.group {
            let _ = killpg(self.pid, Signal::SIGKILL);
        }
        let _ = kill(self.pid, Signal::SIGKILL);
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.start_kill();
    }
}

/// "exited with code 1" / "was killed by SIGKILL".
pub fn describe_status(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        format!("exited with code {code}")
    } else if let Some(sig) = status.signal() {
        match Signal::try_from(sig) {
            Ok(s) => format!("was killed by {s}"),
            Err(_) => format!("was killed by signal {sig}"),
        }
    } else {
        format!("ended ({status})")
    }
}

/// Spawning without a watchdog, with tokio.
struct Direct {
    program: PathBuf,
    arg0: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: PathBuf,
    new_group: bool,
    die_with_parent: bool,
}

type StatusRx = watch::Receiver<Option<ExitStatus>>;

impl Direct {
    fn spawn(
        self,
        stdio: [Option<OwnedFd>; 3],
        fds: Vec<(RawFd, OwnedFd)>,
    ) -> io::Result<(Pid, StatusRx)> {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.arg0(&self.arg0)
            .args(&self.args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.cwd);
        let [i, o, e] = stdio.map(|s| s.map_or_else(std::process::Stdio::null, Into::into));
        cmd.stdin(i).stdout(o).stderr(e);
        if self.new_group {
            cmd.process_group(0);
        }
        let mut plan = [(-1, -1); 7];
        for (slot, (target, fd)) in plan.iter_mut().zip(&fds) {
            *slot = (fd.as_raw_fd(), *target);
        }
        let count = fds.len().min(plan.len());
        if self.die_with_parent || count > 0 {
            let die = self.die_with_parent;
            // SAFETY: only async-signal-safe calls (prctl, fcntl, dup2) on data prepared before
            // the fork; nothing is allocated.
            unsafe {
                cmd.pre_exec(move || direct_child_setup(die, &mut plan[..count]));
            }
        }
        let mut child = cmd.spawn()?;
        drop(cmd);
        drop(fds);
        let pid = child
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .map(Pid::from_raw)
            .ok_or_else(|| io::Error::other("the started process has no pid"))?;
        let (tx, rx) = watch::channel(None);
        tokio::spawn(async move {
            if let Ok(status) = child.wait().await {
                tx.send_replace(Some(status));
            }
        });
        Ok((pid, rx))
    }
}

/// Between fork and exec of a directly spawned child. In `pi` the descriptors to install may
/// sit anywhere, even at one another's targets, so each is first moved above the range.
fn direct_child_setup(die_with_parent: bool, plan: &mut [(RawFd, RawFd)]) -> io::Result<()> {
    use nix::fcntl::{fcntl, FcntlArg};
    if die_with_parent {
        nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
    }
    let above = EXTRA_FDS.end() + 1;
    for (fd, _) in plan.iter_mut() {
        *fd = fcntl(*fd, FcntlArg::F_DUPFD_CLOEXEC(above))?;
    }
    for (fd, target) in plan.iter() {
        nix::unistd::dup2(*fd, *target)?;
    }
    Ok(())
}
