//! Nothing `pi` starts outlives it, even after `kill -9`: every process `pi` starts (hooks, the
//! bash tool's shells) is forked by one small watchdog process of `pi`'s own, a child
//! subreaper that kills everything below it when `pi` dies by any means.
//!
//! - `server`: the watchdog process (`pi __watchdog`), a single-threaded fork server.
//! - `client`: `pi`'s link to it: requests, and the task routing answers and exit notices.
//! - `keeper`: starting it, and replacing it (after killing what it left) should it die.
//! - `child`: [`Command`] and [`Child`], the API callers use, with or without a watchdog.
//! - `group`: stopping what was started: [`ProcessGroup`] signals, liveness and kill guards,
//!   [`kill_group`] and [`stop`].
//! - `wire`: the control messages as bytes; `procs`: finding and killing inherited processes.
//! - `foreground`: the terminal given away in `pi`'s own group: the external editor, Ctrl+Z.
//!
//! This is pi's one process module: everything that starts a process (hooks, MCP servers,
//! Claude Code hooks, the bash tool; not yet the short synchronous `!command` of a key value in
//! `config::value`) or signals one goes through `child` and `group`. Stopping
//! lives here rather than in a module of its own because it is the same concern as starting:
//! a process is started in a group so that it can be stopped as one, `Child`'s kill on drop
//! and the group signals must agree on which pid is a group, and the watchdog's own kill of
//! everything left (`procs`) is the last step of the same escalation.
//!
//! [`install`] runs in the `pi` binary only, for commands that start processes; without it
//! (library tests, benches) [`Command::spawn`] starts processes directly.

mod child;
mod client;
mod foreground;
mod group;
mod keeper;
mod procs;
mod server;
mod wire;

pub use child::{describe_status, pipe_receiver, Child, Command, Stdio};
pub use foreground::{run_in_foreground, suspend_foreground_group};
pub use group::{kill_group, stop, KillOnDrop, ProcessGroup, Stopped};
pub use server::serve;

/// The hidden subcommand that runs the watchdog.
pub const SUBCOMMAND: &str = "__watchdog";

/// Where the watchdog finds its end of the control socket: its standard input, the one
/// descriptor the standard library installs without a `pre_exec` hook (see `keeper`).
const SOCKET_FD: std::os::fd::RawFd = 0;

#[derive(Debug, thiserror::Error)]
pub enum WatchdogError {
    #[error("cannot start pi's process watchdog: {0}")]
    Start(#[source] std::io::Error),
    #[error("cannot make pi a child subreaper: {0}")]
    Subreaper(#[source] nix::errno::Errno),
    #[error("pi's process watchdog is not running (it died and is being replaced)")]
    Gone,
    #[error("pi's process watchdog did not answer a request to start a process")]
    NoAnswer,
    #[error("pi's process watchdog keeps dying; no more processes can be started")]
    KeepsDying,
    #[error("the exit status was lost: pi's process watchdog died before reporting it")]
    StatusLost,
}

/// Makes `pi` a child subreaper and starts its watchdog and the thread that replaces it should
/// it die. Call it from the main thread before the async runtime exists: the watchdog's
/// parent-death signal is tied to the thread that forks it.
pub fn install() -> Result<(), WatchdogError> {
    keeper::install()
}

/// Whether processes are started through the watchdog in this process.
pub fn installed() -> bool {
    client::get().is_some()
}
