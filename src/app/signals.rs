//! Ctrl+C and SIGTERM. The first signal stops the agent — the running model stream, tool
//! process trees and every wait on a hook end at once, and nothing new runs — and hurries the
//! hooks' shutdown (its graces shrink to a few hundred milliseconds), so the run exits with
//! 130 or 143 as pi does, within about a second whatever the hooks do. A second signal exits
//! at once: every hook's process group is killed first, so even then nothing outlives pi.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use tokio::signal::unix::{signal, SignalKind};
use tokio_util::sync::CancellationToken;

use crate::controller::WeakController;

pub const SIGINT_EXIT: i32 = 130;
pub const SIGTERM_EXIT: i32 = 143;

pub struct Signals {
    code: Arc<AtomicI32>,
    arrived: CancellationToken,
}

impl Signals {
    /// The exit code owed to a received signal, if any.
    pub fn received(&self) -> Option<i32> {
        match self.code.load(Ordering::SeqCst) {
            0 => None,
            c => Some(c),
        }
    }

    /// Cancelled when the first signal has arrived.
    pub fn token(&self) -> CancellationToken {
        self.arrived.clone()
    }
}

/// Installs the handlers for the controller's run. The controller is held weakly: the handler
/// must not keep it (and through it the event stream) alive.
pub fn install(controller: WeakController) -> std::io::Result<Signals> {
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let code = Arc::new(AtomicI32::new(0));
    let arrived = CancellationToken::new();
    let (c, first) = (code.clone(), arrived.clone());
    tokio::spawn(async move {
        loop {
            let got = tokio::select! {
                Some(()) = int.recv() => SIGINT_EXIT,
                Some(()) = term.recv() => SIGTERM_EXIT,
                else => break,
            };
            if c.compare_exchange(0, got, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                // A second signal while exiting: give up waiting.
                force_exit(got, &controller);
            }
            if let Some(c) = controller.upgrade() {
                c.stop();
            }
            first.cancel();
        }
    });
    Ok(Signals { code, arrived })
}

/// Exits with `code` now, without the graceful shutdown — but not before every hook's process
/// group is killed, since no destructor or shutdown runs after this.
fn force_exit(code: i32, controller: &WeakController) -> ! {
    if let Some(c) = controller.upgrade() {
        for h in c.hook_instances() {
            h.kill_now();
        }
    }
    std::process::exit(code)
}
