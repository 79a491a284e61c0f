//! Ctrl+C and SIGTERM: the first signal aborts the running agent (the model stream stops and
//! tool process trees are killed), and the run then exits with 130 or 143 as pi does.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use tokio::signal::unix::{signal, SignalKind};

use crate::agent::AgentHandle;

pub struct Signals {
    code: Arc<AtomicI32>,
}

impl Signals {
    /// The exit code owed to a received signal, if any.
    pub fn received(&self) -> Option<i32> {
        match self.code.load(Ordering::SeqCst) {
            0 => None,
            c => Some(c),
        }
    }
}

pub fn install(handle: AgentHandle) -> std::io::Result<Signals> {
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let code = Arc::new(AtomicI32::new(0));
    let c = code.clone();
    tokio::spawn(async move {
        loop {
            let got = tokio::select! {
                Some(()) = int.recv() => 130,
                Some(()) = term.recv() => 143,
                else => break,
            };
            if c.compare_exchange(0, got, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                // A second signal while aborting: give up waiting.
                std::process::exit(got);
            }
            handle.abort();
        }
    });
    Ok(Signals { code })
}
