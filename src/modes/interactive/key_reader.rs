//! The terminal's keys for the interactive loop, read on a thread of our own that can be
//! parked while another program has the terminal (the external editor, the shell after
//! Ctrl+Z).
//!
//! crossterm's `EventStream` reads on a hidden thread that cannot be told to stop and start
//! again: dropping the stream and making a new one around a takeover now and then left no
//! reader at all, and every later key was lost. Here the thread polls in short slices and,
//! between two of them, parks when asked; [`KeyReader::pause`] returns only once it has, so
//! no key meant for the other program is read by `pi`, and [`KeyReader::resume`] lets it go on.
//!
//! Before its first key the thread may read the terminal's answers to the colour query
//! ([`super::terminal_colors`]): crossterm would take them for keys, so they are read here,
//! raw, and what was typed meanwhile goes on as keys ahead of everything else.

use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crossterm::event::{self, Event};
use tokio::sync::mpsc;

use super::terminal_colors::{Replies, TerminalColors};

/// How long one poll waits before the thread looks for a pause request: the longest a
/// takeover waits for the reader to step aside.
const SLICE: Duration = Duration::from_millis(40);

#[derive(Default)]
struct State {
    pause_requested: bool,
    parked: bool,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The key reader; the thread ends when this is dropped.
pub struct KeyReader {
    events: mpsc::UnboundedReceiver<io::Result<Event>>,
    shared: Arc<Shared>,
    /// The terminal's answer to the colour query, once read (or its wait ended).
    pub colors: Option<tokio::sync::oneshot::Receiver<TerminalColors>>,
}

impl KeyReader {
    /// The reader; `query_sent`: the colour query was just written, so its answers come
    /// first.
    pub fn start(query_sent: bool) -> KeyReader {
        let (tx, events) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared::default());
        let worker = shared.clone();
        let (colors_tx, colors_rx) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("pi-keys".into())
            .spawn(move || {
                if query_sent {
                    let (colors, typed) = read_answers();
                    let _ = colors_tx.send(colors);
                    for key in super::terminal_colors::typed_keys(&typed) {
                        let _ = tx.send(Ok(key));
                    }
                }
                read_keys(&worker, &tx)
            });
        if let Err(e) = spawned {
            // No thread, no keys: the loop sees the stream end and quits, as on a hang-up.
            shared.lock().closed = true;
            crate::term_eprintln!("pi: cannot read the terminal's keys: {e}");
        }
        KeyReader {
            events,
            shared,
            colors: query_sent.then_some(colors_rx),
        }
    }

    /// The next key, paste or resize; `None` once the terminal is gone.
    pub async fn next(&mut self) -> Option<io::Result<Event>> {
        self.events.recv().await
    }

    /// Returns once the reader has stopped reading the terminal.
    pub fn pause(&self) {
        let mut state = self.shared.lock();
        state.pause_requested = true;
        while !state.parked && !state.closed {
            state = self
                .shared
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Lets the reader read the terminal again.
    pub fn resume(&self) {
        self.shared.lock().pause_requested = false;
        self.shared.changed.notify_all();
    }
}

impl Drop for KeyReader {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.changed.notify_all();
    }
}

/// The terminal's answers to the colour query, read raw from stdin (crossterm's input) until
/// they are complete or 1.6's timeout passed, and the other bytes read meanwhile.
fn read_answers() -> (TerminalColors, Vec<u8>) {
    use nix::poll::{poll, PollFd, PollFlags};
    use std::os::fd::AsFd;
    let deadline = std::time::Instant::now() + super::terminal_colors::TIMEOUT;
    let stdin = io::stdin();
    let mut replies = Replies::default();
    let mut buf = [0u8; 4096];
    while !replies.done {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        let ms = u16::try_from(left.as_millis().max(1)).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, ms) {
            Ok(n) if n > 0 => {}
            Ok(_) => break,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        }
        match nix::unistd::read(std::os::fd::AsRawFd::as_raw_fd(&stdin), &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => replies.feed(&buf[..n]),
        }
    }
    replies.finish()
}

fn read_keys(shared: &Shared, tx: &mpsc::UnboundedSender<io::Result<Event>>) {
    loop {
        {
            let mut state = shared.lock();
            while state.pause_requested && !state.closed {
                state.parked = true;
                shared.changed.notify_all();
                state = shared
                    .changed
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            state.parked = false;
            if state.closed {
                return;
            }
        }
        let read = match event::poll(SLICE) {
            Ok(false) => continue,
            Ok(true) => event::read(),
            Err(e) => Err(e),
        };
        let failed = read.is_err();
        if tx.send(read).is_err() || failed {
            shared.lock().closed = true;
            shared.changed.notify_all();
            return;
        }
    }
}
