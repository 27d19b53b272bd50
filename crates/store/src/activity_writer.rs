//! Activity events are written off the call path: callers hand an event to an
//! [`ActivitySink`] (never blocks, never fails a call) and one background
//! [`ActivityWriter`] batches them into the store.
//!
//! While the writer lingers for more events it sleeps: an event queued then
//! does not wake it (each wake-up cost a scheduler hand-off per call, and
//! often a second runtime thread woken to take it). Only a flush or a full
//! batch ends the linger early, through `Shared::wake`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use connecta_core::activity::ActivityEvent;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::Store;

/// Events buffered before the sink starts dropping (and counting) them.
const QUEUE_CAPACITY: usize = 16_384;
/// Events per store write at most.
const BATCH: usize = 512;
/// How long the writer waits after an event for more to join its write.
/// A write of one event costs the store a transaction (a WAL frame, a commit
/// and a round trip to SQLite's thread: about 40% of the gateway's CPU per
/// call at one call in flight, docs/performance.md); waiting turns those
/// into one write per batch. Most of a write's cost is per write, not per
/// event: 50 ms rather than 10, with the SQLite writer's own connection,
/// halved SQLite's thread time per call at one call in flight and took a
/// third of a context switch off each call (measured together,
/// docs/performance.md, "The activity log's writes"). A flush or a full
/// batch ends the wait.
const LINGER: Duration = Duration::from_millis(50);

enum Msg {
    Event(Box<ActivityEvent>),
    Flush(oneshot::Sender<()>),
}

/// What the sinks share with the writer besides the queue.
#[derive(Default)]
struct Shared {
    /// Ends the writer's linger: a flush is queued, or a batch is full.
    wake: Notify,
    dropped: AtomicU64,
}

/// A cheap, cloneable handle for recording events.
#[derive(Clone)]
pub struct ActivitySink {
    tx: mpsc::Sender<Msg>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ActivitySink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActivitySink").finish_non_exhaustive()
    }
}

impl ActivitySink {
    fn on(tx: mpsc::Sender<Msg>) -> ActivitySink {
        ActivitySink {
            tx,
            shared: Arc::new(Shared::default()),
        }
    }

    /// Record an event. Never blocks; if the writer has fallen 16k events
    /// behind, the event is dropped and counted (exported as a metric).
    pub fn record(&self, event: ActivityEvent) {
        if self.tx.try_send(Msg::Event(Box::new(event))).is_err() {
            self.shared.dropped.fetch_add(1, Ordering::Relaxed);
        } else if self.tx.max_capacity() - self.tx.capacity() >= BATCH {
            self.shared.wake.notify_one();
        }
    }

    /// Wait until every event recorded before this call is in the store.
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(tx)).await.is_ok() {
            self.shared.wake.notify_one();
            let _ = rx.await;
        }
    }

    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

/// The background task that owns the write side.
pub struct ActivityWriter {
    task: JoinHandle<()>,
}

impl ActivityWriter {
    pub fn spawn(store: Arc<dyn Store>) -> (ActivitySink, ActivityWriter) {
        let (tx, mut rx) = mpsc::channel::<Msg>(QUEUE_CAPACITY);
        let sink = ActivitySink::on(tx);
        let shared = sink.shared.clone();
        let task = tokio::spawn(async move {
            let mut batch: Vec<ActivityEvent> = Vec::with_capacity(BATCH);
            let mut waiters: Vec<oneshot::Sender<()>> = Vec::new();
            while collect(&mut rx, &shared.wake, &mut batch, &mut waiters).await {
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
        (sink, ActivityWriter { task })
    }

    /// Finish writing once every sink clone is dropped.
    pub async fn finish(self) {
        let _ = self.task.await;
    }
}

/// Gather the next write into `batch` (and the flushes it answers into
/// `waiters`): what is queued, then what arrives within [`LINGER`] of the
/// first message, until the batch is full or a flush asks for it (either
/// signals `wake`). False once every sink is gone and nothing is left.
async fn collect(
    rx: &mut mpsc::Receiver<Msg>,
    wake: &Notify,
    batch: &mut Vec<ActivityEvent>,
    waiters: &mut Vec<oneshot::Sender<()>>,
) -> bool {
    let Some(first) = rx.recv().await else {
        return false;
    };
    let linger_until = tokio::time::Instant::now() + LINGER;
    take_queued(rx, Some(first), batch, waiters);
    loop {
        if batch.len() >= BATCH || !waiters.is_empty() {
            return true;
        }
        // Asleep, not waiting on the queue: events queued meanwhile are
        // taken when the linger ends.
        let over = tokio::select! {
            () = tokio::time::sleep_until(linger_until) => true,
            () = wake.notified() => false,
        };
        take_queued(rx, None, batch, waiters);
        if over {
            return true;
        }
    }
}

/// `first`, then what is queued, into `batch` (until it is full) and
/// `waiters`.
fn take_queued(
    rx: &mut mpsc::Receiver<Msg>,
    first: Option<Msg>,
    batch: &mut Vec<ActivityEvent>,
    waiters: &mut Vec<oneshot::Sender<()>>,
) {
    let mut next = first.or_else(|| rx.try_recv().ok());
    while let Some(msg) = next.take() {
        match msg {
            Msg::Event(e) => batch.push(*e),
            Msg::Flush(w) => waiters.push(w),
        }
        if batch.len() < BATCH {
            next = rx.try_recv().ok();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_event;

    use std::pin::pin;
    use std::sync::atomic::AtomicUsize;
    use std::task::{Context, Poll, Wake, Waker};

    use super::*;

    fn event(i: usize) -> Msg {
        Msg::Event(Box::new(test_event(i)))
    }

    /// Counts how often a task would have been woken.
    #[derive(Default)]
    struct Wakes(AtomicUsize);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
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
        let (mut batch, mut waiters, wake) = (Vec::new(), Vec::new(), Notify::new());
        assert!(collect(&mut rx, &wake, &mut batch, &mut waiters).await);
        assert_eq!(batch.len(), 5);
        batch.clear();
        assert!(collect(&mut rx, &wake, &mut batch, &mut waiters).await);
        assert_eq!(batch.len(), 1);
        sender.await.expect("sender");
        batch.clear();
        assert!(!collect(&mut rx, &wake, &mut batch, &mut waiters).await);
    }

    #[tokio::test(start_paused = true)]
    async fn a_flush_ends_the_wait() {
        let (tx, mut rx) = mpsc::channel(16);
        tx.send(event(0)).await.expect("send");
        let (done, _answer) = oneshot::channel();
        tx.send(Msg::Flush(done)).await.expect("send");
        let started = tokio::time::Instant::now();
        let (mut batch, mut waiters) = (Vec::new(), Vec::new());
        assert!(collect(&mut rx, &Notify::new(), &mut batch, &mut waiters).await);
        assert_eq!((batch.len(), waiters.len()), (1, 1));
        assert_eq!(started.elapsed(), Duration::ZERO);
    }

    /// Events recorded while the writer lingers leave it asleep (a wake-up
    /// per call was a scheduler hand-off per call); the linger's end wakes
    /// it once and the write takes them all.
    #[tokio::test(start_paused = true)]
    async fn events_during_the_linger_do_not_wake_the_writer() {
        let (tx, mut rx) = mpsc::channel(16);
        let sink = ActivitySink::on(tx);
        sink.record(test_event(0));
        let (mut batch, mut waiters) = (Vec::new(), Vec::new());
        let wakes = Arc::new(Wakes::default());
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        {
            let mut gather = pin!(collect(
                &mut rx,
                &sink.shared.wake,
                &mut batch,
                &mut waiters
            ));
            assert!(gather.as_mut().poll(&mut cx).is_pending());
            for i in 1..4 {
                sink.record(test_event(i));
            }
            assert_eq!(wakes.0.load(Ordering::SeqCst), 0);
            tokio::time::sleep(LINGER).await;
            assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
            assert_eq!(gather.as_mut().poll(&mut cx), Poll::Ready(true));
        }
        assert_eq!(batch.len(), 4);
    }

    /// What one `collect` gathers from a queue holding one event while
    /// `meanwhile` runs beside it: whether it went on, the batch, the
    /// flushes and how long it took.
    async fn lingering_beside(
        meanwhile: impl AsyncFnOnce(ActivitySink),
        capacity: usize,
    ) -> (bool, usize, usize, Duration, mpsc::Receiver<Msg>) {
        let (tx, mut rx) = mpsc::channel(capacity);
        let sink = ActivitySink::on(tx);
        sink.record(test_event(0));
        let started = tokio::time::Instant::now();
        let (mut batch, mut waiters) = (Vec::new(), Vec::new());
        let (gathered, ()) = tokio::join!(
            collect(&mut rx, &sink.shared.wake, &mut batch, &mut waiters),
            meanwhile(sink.clone()),
        );
        (gathered, batch.len(), waiters.len(), started.elapsed(), rx)
    }

    #[tokio::test(start_paused = true)]
    async fn a_flush_during_the_linger_ends_it() {
        let (gathered, events, flushes, took, _rx) = lingering_beside(
            async |sink| {
                tokio::time::sleep(Duration::from_millis(1)).await;
                // Answered once the writer writes: only queued here (the
                // first poll sends it and signals the writer).
                let _ = tokio::time::timeout(Duration::ZERO, sink.flush()).await;
            },
            16,
        )
        .await;
        assert!(gathered);
        assert_eq!((events, flushes), (1, 1));
        assert_eq!(took, Duration::from_millis(1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_batch_ends_the_linger() {
        let (gathered, events, _, took, mut rx) = lingering_beside(
            async |sink| {
                tokio::time::sleep(Duration::from_millis(1)).await;
                for i in 1..=BATCH {
                    sink.record(test_event(i));
                }
            },
            2 * BATCH,
        )
        .await;
        assert!(gathered);
        assert_eq!(events, BATCH);
        assert_eq!(took, Duration::from_millis(1));
        // The one over the batch waits for the next write.
        assert!(rx.try_recv().is_ok());
    }
}
