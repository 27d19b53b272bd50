//! Activity events are written off the call path: callers hand an event to an
//! [`ActivitySink`] (never blocks, never fails a call) and one background
//! [`ActivityWriter`] batches them into the store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use connecta_core::activity::ActivityEvent;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::Store;

/// Events buffered before the sink starts dropping (and counting) them.
const QUEUE_CAPACITY: usize = 16_384;
/// Events per store write at most.
const BATCH: usize = 512;
/// How long the writer waits after an event for more to join its write.
/// A write of one event costs the store a transaction (a WAL frame, a commit
/// and a round trip to SQLite's thread: about 40% of the gateway's CPU per
/// call at one call in flight, docs/performance.md); a few milliseconds of
/// waiting turn those into one write per batch. A flush ends the wait.
const LINGER: Duration = Duration::from_millis(10);

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
            while collect(&mut rx, &mut batch, &mut waiters).await {
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

/// Gather the next write into `batch` (and the flushes it answers into
/// `waiters`): what is queued, then what arrives within [`LINGER`] of the
/// first message, until the batch is full or a flush asks for it. False
/// once every sink is gone and nothing is left.
async fn collect(
    rx: &mut mpsc::Receiver<Msg>,
    batch: &mut Vec<ActivityEvent>,
    waiters: &mut Vec<oneshot::Sender<()>>,
) -> bool {
    let Some(first) = rx.recv().await else {
        return false;
    };
    let linger_until = tokio::time::Instant::now() + LINGER;
    let mut next = Some(first);
    loop {
        while let Some(msg) = next.take() {
            match msg {
                Msg::Event(e) => batch.push(*e),
                Msg::Flush(w) => waiters.push(w),
            }
            if batch.len() < BATCH {
                next = rx.try_recv().ok();
            }
        }
        if batch.len() >= BATCH || !waiters.is_empty() {
            return true;
        }
        match tokio::time::timeout_at(linger_until, rx.recv()).await {
            Ok(Some(msg)) => next = Some(msg),
            // The linger is over, or every sink is gone.
            Ok(None) | Err(_) => return true,
        }
    }
}

#[cfg(test)]
mod tests {
    use connecta_core::activity::{Actor, CallRecord, Source};

    use super::*;

    fn event(i: usize) -> Msg {
        Msg::Event(Box::new(ActivityEvent::new(
            format!("ev-{i}"),
            1_000,
            "req-1",
            &Actor::anonymous(),
            CallRecord {
                connector_id: "a",
                tool_name: "t",
                source: Source::CallTool,
                duration_ms: 1,
                attempts: 1,
                error_code: None,
                friction: None,
            },
        )))
    }

    #[tokio::test(start_paused = true)]
    async fn events_a_millisecond_apart_share_one_write() {
        let (tx, mut rx) = mpsc::channel(16);
        let sender = tokio::spawn(async move {
            for i in 0..5 {
                tx.send(event(i)).await.expect("send");
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            // Long after the linger: the next write.
            tokio::time::sleep(LINGER * 3).await;
            tx.send(event(5)).await.expect("send");
        });
        let (mut batch, mut waiters) = (Vec::new(), Vec::new());
        assert!(collect(&mut rx, &mut batch, &mut waiters).await);
        assert_eq!(batch.len(), 5);
        batch.clear();
        assert!(collect(&mut rx, &mut batch, &mut waiters).await);
        assert_eq!(batch.len(), 1);
        sender.await.expect("sender");
        batch.clear();
        assert!(!collect(&mut rx, &mut batch, &mut waiters).await);
    }

    #[tokio::test(start_paused = true)]
    async fn a_flush_ends_the_wait() {
        let (tx, mut rx) = mpsc::channel(16);
        tx.send(event(0)).await.expect("send");
        let (done, _answer) = oneshot::channel();
        tx.send(Msg::Flush(done)).await.expect("send");
        let started = tokio::time::Instant::now();
        let (mut batch, mut waiters) = (Vec::new(), Vec::new());
        assert!(collect(&mut rx, &mut batch, &mut waiters).await);
        assert_eq!((batch.len(), waiters.len()), (1, 1));
        assert_eq!(started.elapsed(), Duration::ZERO);
    }
}
