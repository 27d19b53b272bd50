//! Activity events are written off the call path: callers hand an event to an
//! [`ActivitySink`] (never blocks, never fails a call) and one background
//! [`ActivityWriter`] batches them into the store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use connecta_core::activity::ActivityEvent;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::Store;

/// Events buffered before the sink starts dropping (and counting) them.
const QUEUE_CAPACITY: usize = 16_384;
/// Events per store write at most.
const BATCH: usize = 512;

enum Msg {
    Event(Box<ActivityEvent>),
    Flush(oneshot::Sender<()>),
}

/// A cheap, cloneable handle for recording events.
#[derive(Clone)]
pub struct ActivitySink {
    tx: mpsc::Sender<Msg>,
    dropped: Arc<AtomicU64>,
}

impl std::fmt::Debug for ActivitySink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActivitySink").finish_non_exhaustive()
    }
}

impl ActivitySink {
    /// Record an event. Never blocks; if the writer has fallen 16k events
    /// behind, the event is dropped and counted (exported as a metric).
    pub fn record(&self, event: ActivityEvent) {
        if self.tx.try_send(Msg::Event(Box::new(event))).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Wait until every event recorded before this call is in the store.
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }

    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// The background task that owns the write side.
pub struct ActivityWriter {
    task: JoinHandle<()>,
}

impl ActivityWriter {
    pub fn spawn(store: Arc<dyn Store>) -> (ActivitySink, ActivityWriter) {
        let (tx, mut rx) = mpsc::channel::<Msg>(QUEUE_CAPACITY);
        let task = tokio::spawn(async move {
            let mut batch: Vec<ActivityEvent> = Vec::with_capacity(BATCH);
            let mut waiters: Vec<oneshot::Sender<()>> = Vec::new();
            while let Some(first) = rx.recv().await {
                let mut next = Some(first);
                while let Some(msg) = next.take() {
                    match msg {
                        Msg::Event(e) => batch.push(*e),
                        Msg::Flush(w) => waiters.push(w),
                    }
                    if batch.len() < BATCH {
                        next = rx.try_recv().ok();
                    }
                }
                if !batch.is_empty() {
                    if let Err(e) = store.activity_append(&batch).await {
                        // Activity is best-effort by design: a failed write is
                        // logged with its size, never with event contents.
                        tracing::warn!(error = %e, events = batch.len(), "could not write activity events");
                    }
                    batch.clear();
                }
                for w in waiters.drain(..) {
                    let _ = w.send(());
                }
            }
        });
        (
            ActivitySink {
                tx,
                dropped: Arc::new(AtomicU64::new(0)),
            },
            ActivityWriter { task },
        )
    }

    /// Finish writing once every sink clone is dropped.
    pub async fn finish(self) {
        let _ = self.task.await;
    }
}
