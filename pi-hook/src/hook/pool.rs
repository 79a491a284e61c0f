//! Worker threads for requests: an idle worker takes the next job, and a new one is started
//! when none is idle, so a handler waiting on the user (a `ui.confirm` host call) never holds
//! up the requests behind it. Workers live until the hook exits.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use super::context::lock;

type Job = Box<dyn FnOnce() + Send>;

/// More than this many requests at once queue for a free worker.
const MAX_WORKERS: usize = 64;

pub(crate) struct Pool {
    tx: mpsc::Sender<Job>,
    rx: Arc<Mutex<mpsc::Receiver<Job>>>,
    idle: Arc<AtomicUsize>,
    started: AtomicUsize,
}

impl Pool {
    pub(crate) fn new() -> Pool {
        let (tx, rx) = mpsc::channel();
        Pool {
            tx,
            rx: Arc::new(Mutex::new(rx)),
            idle: Arc::new(AtomicUsize::new(0)),
            started: AtomicUsize::new(0),
        }
    }

    pub(crate) fn run(&self, job: impl FnOnce() + Send + 'static) {
        if self.idle.load(Ordering::Acquire) == 0
            && self.started.load(Ordering::Relaxed) < MAX_WORKERS
        {
            self.spawn();
        }
        if self.started.load(Ordering::Relaxed) == 0 {
            // No worker could start: serve it on the reader rather than never.
            job();
            return;
        }
        // The pool holds the receiver, so the channel cannot be closed here.
        let _ = self.tx.send(Box::new(job));
    }

    fn spawn(&self) {
        let rx = self.rx.clone();
        let idle = self.idle.clone();
        // Counted idle from the start: it is about to wait for the job that made it.
        idle.fetch_add(1, Ordering::AcqRel);
        let started = std::thread::Builder::new()
            .name("pi-hook-worker".into())
            .spawn(move || loop {
                let job = lock(&rx).recv();
                idle.fetch_sub(1, Ordering::AcqRel);
                match job {
                    Ok(job) => job(),
                    Err(_) => return,
                }
                idle.fetch_add(1, Ordering::AcqRel);
            });
        match started {
            Ok(_) => {
                self.started.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                self.idle.fetch_sub(1, Ordering::AcqRel);
                eprintln!("cannot start a worker thread: {e}");
            }
        }
    }
}
