//! The two times `pi` gives the terminal away while it runs, both in `pi`'s own process group
//! (the foreground one), which is why they do not go through the watchdog: its children sit in
//! its own group or lead a new one, background groups that would be stopped (`SIGTTIN`) the
//! moment they read the terminal.
//!
//! - [`run_in_foreground`]: a program that takes over the terminal until it exits — the
//!   external editor (Ctrl+G). It inherits `pi`'s environment and standard streams, as the
//!   person's own editor expects, and is waited for (by pid, never `waitpid(-1)`).
//! - [`suspend_foreground_group`]: Ctrl+Z. The terminal is in raw mode, so the key reaches
//!   `pi` as a byte rather than as the terminal's `SIGTSTP`; `pi` sends that signal to its own
//!   process group itself, as the terminal would have, and the shell sees the job stop.
//!   Returns once the group is continued (`fg` sends `SIGCONT`).

use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::ExitStatus;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::getpgrp;

/// Runs `program args…` in `cwd` with the terminal as its standard streams and waits for it.
pub fn run_in_foreground(
    program: &OsString,
    args: &[OsString],
    cwd: &Path,
) -> io::Result<ExitStatus> {
    std::process::Command::new(program)
        .args(args)
        .current_dir(cwd)
        .status()
}

/// Stops `pi`'s process group with `SIGTSTP`; returns when it is continued.
pub fn suspend_foreground_group() -> io::Result<()> {
    killpg(getpgrp(), Signal::SIGTSTP).map_err(io::Error::from)
}
