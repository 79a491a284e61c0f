//! The RPC server: `--mode rpc`'s front end over the session controller. Commands are read
//! from stdin and dispatched as they arrive — a query is answered while a prompt's run
//! streams, nothing waits behind a run — and every output record (events, responses, the
//! extension UI's requests) is written by one writer task, so records interleave but never
//! tear.
//!
//! Order is kept where a client can see it. A command is first driven inline, up to its
//! first wait: commands that never wait (queries, setters) are answered in the order they
//! came, and one that waits (a prompt, a compaction, a shell command) has done its
//! synchronous part — a prompt has marked the session streaming — before the next line is
//! read; it then finishes in a task of its own. And a response goes out only after every
//! event its command emitted: the writer drains the events that are already queued before
//! it writes a response (a queued prompt's `queue_update` precedes its answer, as in pi).
//!
//! The writer and the reader of stdin start before the controller does: a hook may open a
//! dialog while it starts (from `session_start`), and its answer must be able to arrive. The
//! reader hands dialog answers to the hooks' UI ([`RpcUi`]) at once and keeps every other
//! record, in order, for [`Server::serve`] once the controller is there.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::dispatch::{dispatch, Written};
pub use super::events::EventMapper;
use super::framing::{LineReader, LineWriter, MAX_LINE};
use super::protocol::{decode_line, DecodeError, Incoming, Outgoing, Response};
use super::ui_bridge::RpcUi;
use crate::agent::events::AgentEvent;
use crate::controller::SessionController;

/// stdin's read buffer: a 1 MB command arrives in a few reads.
const READ_BUFFER: usize = 64 * 1024;

/// A running server: the writer task and the sender the records it writes come through.
pub struct Server {
    out: mpsc::UnboundedSender<Outgoing>,
    written: Written,
    ui: Arc<RpcUi>,
    /// Commands still running in tasks of their own.
    tasks: TaskTracker,
    finish: CancellationToken,
    writer: JoinHandle<()>,
}

/// What the reader of stdin passes on to [`Server::serve`], in the order it came.
pub struct Listener {
    records: mpsc::UnboundedReceiver<Result<Incoming, DecodeError>>,
    reader: JoinHandle<std::io::Result<()>>,
}

impl Server {
    /// Starts the writer on `output`: the controller's `events` (mapped to RPC's) and every
    /// record sent through [`Server::outgoing`], the hooks' UI requests among them. `mapper`
    /// says which events are sent (pi's own `hook_*` only when the client asked).
    pub fn start<W>(
        events: mpsc::UnboundedReceiver<AgentEvent>,
        output: W,
        mapper: EventMapper,
    ) -> Server
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, records) = mpsc::unbounded_channel();
        let (written, acked) = mpsc::unbounded_channel();
        let finish = CancellationToken::new();
        let ui = RpcUi::new(out.clone());
        let inputs = Inputs {
            events,
            records,
            acked,
            ui: ui.clone(),
        };
        let writer = tokio::spawn(write_all(inputs, output, mapper, finish.clone()));
        Server {
            ui,
            out,
            written,
            tasks: TaskTracker::new(),
            finish,
            writer,
        }
    }

    /// The client as the hooks' UI: dialogs become `extension_ui_request` records.
    pub fn ui(&self) -> Arc<RpcUi> {
        self.ui.clone()
    }

    /// Where other parts send records to the client.
    pub fn outgoing(&self) -> mpsc::UnboundedSender<Outgoing> {
        self.out.clone()
    }

    /// Starts reading `input`: dialog answers go to the hooks' UI at once, every other record
    /// waits for [`Server::serve`]. At EOF (or `stop`) every open dialog is dismissed.
    pub fn listen<R>(&self, input: R, stop: CancellationToken) -> Listener
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        let (tx, records) = mpsc::unbounded_channel();
        let ui = self.ui.clone();
        let reader = tokio::spawn(async move {
            let mut lines = LineReader::new(BufReader::with_capacity(READ_BUFFER, input));
            let ended = loop {
                let line = tokio::select! {
                    line = lines.next_line() => line,
                    _ = stop.cancelled() => break Ok(()),
                };
                let record = match line {
                    Err(e) => break Err(e),
                    Ok(None) => break Ok(()),
                    Ok(Some(super::framing::Line::Record(bytes))) => decode_line(&bytes),
                    Ok(Some(super::framing::Line::TooLong { len })) => {
                        Err(DecodeError::TooLong { len, max: MAX_LINE })
                    }
                };
                match record {
                    Ok(Incoming::UiResponse(answer)) => {
                        ui.answer(answer);
                    }
                    other => {
                        if tx.send(other).is_err() {
                            break Ok(());
                        }
                    }
                }
            };
            // Nobody is left to answer a dialog.
            ui.close();
            ended
        });
        Listener { records, reader }
    }

    /// Dispatches what `listener` passes on until stdin ends (or `stop`). An I/O error reading
    /// stdin ends it with that error.
    pub async fn serve(
        &self,
        controller: &SessionController,
        mut listener: Listener,
        stop: CancellationToken,
    ) -> std::io::Result<()> {
        loop {
            let record = tokio::select! {
                r = listener.records.recv() => r,
                _ = stop.cancelled() => break,
            };
            match record {
                None => break,
                Some(Ok(Incoming::Command(envelope))) => {
                    self.run(dispatch(
                        controller.clone(),
                        envelope.id,
                        envelope.command,
                        self.written.clone(),
                    ));
                }
                // Answered by the reader; listed for the match to be whole.
                Some(Ok(Incoming::UiResponse(answer))) => {
                    self.ui.answer(answer);
                }
                Some(Err(e)) => self.on_decode_error(e),
            }
        }
        listener.reader.abort();
        match listener.reader.await {
            Ok(ended) => ended,
            // Aborted above: we stopped reading, nothing failed.
            Err(_) => Ok(()),
        }
    }

    fn on_decode_error(&self, e: DecodeError) {
        match e.response() {
            Some(r) => self.respond(r),
            None => tracing::warn!("ignored RPC input: {e}"),
        }
    }

    fn respond(&self, r: Response) {
        // Fails only once the writer has stopped, when nobody reads any more.
        let _ = self.out.send(Outgoing::Response(r));
    }

    /// Drives a command inline up to its first wait, then lets it finish in a task.
    fn run(&self, command: impl Future<Output = Option<Response>> + Send + 'static) {
        let mut command = Box::pin(command);
        // A waker that does nothing is enough for this first poll: a future that is not ready
        // is polled again (with the task's waker) as soon as it is spawned.
        let mut cx = Context::from_waker(Waker::noop());
        match Pin::as_mut(&mut command).poll(&mut cx) {
            Poll::Ready(r) => r.into_iter().for_each(|r| self.respond(r)),
            Poll::Pending => {
                let out = self.out.clone();
                self.tasks.spawn(async move {
                    if let Some(r) = command.await {
                        let _ = out.send(Outgoing::Response(r));
                    }
                });
            }
        }
    }

    /// Waits up to `limit` for the commands still running to answer (the caller has aborted
    /// what runs); `false` if some did not.
    pub async fn settle(&self, limit: std::time::Duration) -> bool {
        self.tasks.close();
        tokio::time::timeout(limit, self.tasks.wait()).await.is_ok()
    }

    /// Writes what is already queued, then stops the writer. Events emitted after this (by
    /// work still running when the client left) are not written.
    pub async fn finish(self) {
        self.finish.cancel();
        let _ = self.writer.await;
    }
}

/// What the writer writes.
struct Inputs {
    events: mpsc::UnboundedReceiver<AgentEvent>,
    records: mpsc::UnboundedReceiver<Outgoing>,
    /// Records whose sender waits for them to be written.
    acked: mpsc::UnboundedReceiver<(Outgoing, oneshot::Sender<()>)>,
    /// Told of every UI request written, so it can bound what waits.
    ui: Arc<RpcUi>,
}

/// The one writer: events as they come, and each other record after the events already
/// queued; on `finish`, whatever is queued, then stop.
async fn write_all<W: AsyncWrite + Unpin>(
    mut inputs: Inputs,
    output: W,
    mapper: EventMapper,
    finish: CancellationToken,
) {
    let mut w = Writer {
        out: LineWriter::new(output),
        mapper,
        broken: false,
        ui: inputs.ui.clone(),
    };
    let (mut events_open, mut records_open, mut acked_open) = (true, true, true);
    while events_open || records_open || acked_open {
        tokio::select! {
            biased;
            ev = inputs.events.recv(), if events_open => match ev {
                Some(ev) => w.event(ev).await,
                None => events_open = false,
            },
            rec = inputs.records.recv(), if records_open => match rec {
                Some(rec) => {
                    w.drain(&mut inputs.events).await;
                    w.record(&rec).await;
                }
                None => records_open = false,
            },
            rec = inputs.acked.recv(), if acked_open => match rec {
                Some((rec, written)) => {
                    w.drain(&mut inputs.events).await;
                    w.record(&rec).await;
                    let _ = written.send(());
                }
                None => acked_open = false,
            },
            _ = finish.cancelled() => break,
        }
    }
    w.drain(&mut inputs.events).await;
    while let Ok(rec) = inputs.records.try_recv() {
        w.record(&rec).await;
    }
    while let Ok((rec, written)) = inputs.acked.try_recv() {
        w.record(&rec).await;
        let _ = written.send(());
    }
}

struct Writer<W> {
    out: LineWriter<W>,
    mapper: EventMapper,
    /// The client closed stdout: records are dropped from then on.
    broken: bool,
    ui: Arc<RpcUi>,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    /// Every event already queued.
    async fn drain(&mut self, events: &mut mpsc::UnboundedReceiver<AgentEvent>) {
        while let Ok(ev) = events.try_recv() {
            self.event(ev).await;
        }
    }

    async fn event(&mut self, ev: AgentEvent) {
        if let Some(ev) = self.mapper.map(ev) {
            self.record(&Outgoing::Event(ev)).await;
        }
    }

    async fn record(&mut self, rec: &Outgoing) {
        self.write(rec).await;
        if let Outgoing::UiRequest(req) = rec {
            self.ui.written(req);
        }
    }

    async fn write(&mut self, rec: &Outgoing) {
        if self.broken {
            return;
        }
        if let Err(e) = self.out.write(rec).await {
            match e {
                super::framing::WriteError::Io(_) => {
                    tracing::warn!("RPC output closed: {e}");
                    self.broken = true;
                }
                super::framing::WriteError::Encode(_) => tracing::error!("{e}"),
            }
        }
    }
}
