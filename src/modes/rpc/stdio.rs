//! stdin and stdout for the RPC server. When they are pipes (how a program drives pi) they are
//! read and written directly by the runtime's reactor (non-blocking file descriptors), which
//! takes a thread hand-off off every command's round trip: tokio's own stdin and stdout run
//! each read and write on a blocking thread. Anything else (a terminal, a file) keeps tokio's.
//!
//! Non-blocking mode belongs to the open file description, which a pipe pi was given is not
//! shared with anyone who reads or writes it blocking (the client holds the other ends), so
//! setting it is safe there and only there.

use std::os::fd::{AsFd, OwnedFd};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// A dup of `fd` if it is a FIFO.
fn fifo(fd: std::os::fd::BorrowedFd<'_>) -> Option<OwnedFd> {
    use nix::sys::stat::SFlag;
    let stat = nix::sys::stat::fstat(std::os::fd::AsRawFd::as_raw_fd(&fd)).ok()?;
    if stat.st_mode & SFlag::S_IFMT.bits() != SFlag::S_IFIFO.bits() {
        return None;
    }
    fd.try_clone_to_owned().ok()
}

/// The server's input: stdin.
pub fn input() -> Box<dyn AsyncRead + Unpin + Send> {
    let stdin = std::io::stdin();
    if let Some(fd) = fifo(stdin.as_fd()) {
        if let Ok(r) = pipe::Receiver::from_owned_fd(fd) {
            return Box::new(r);
        }
    }
    Box::new(tokio::io::stdin())
}

/// The server's output: stdout.
#[allow(clippy::disallowed_methods)] // only `framing::encode_line` writes: terminal-safe JSON
pub fn output() -> Box<dyn AsyncWrite + Unpin + Send> {
    let stdout = std::io::stdout();
    if let Some(fd) = fifo(stdout.as_fd()) {
        if let Ok(w) = pipe::Sender::from_owned_fd(fd) {
            return Box::new(w);
        }
    }
    Box::new(tokio::io::stdout())
}
