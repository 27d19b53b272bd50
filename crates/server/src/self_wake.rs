//! Polling a connection again at once when it wakes itself, instead of
//! through the scheduler.
//!
//! hyper's HTTP/1 server hands a request body to the handler through a
//! channel whose sender (the connection's dispatcher) registers the
//! connection task's waker; when the handler takes the body, the channel
//! wakes that waker, even when the whole body had arrived and the sender is
//! gone. The handler runs inside the connection's task, so the task is
//! woken while it runs, on every request with a body. tokio treats that as
//! a yield: the task goes to the back of the run queue and another worker
//! thread is woken to share the work (a futex wake, and that thread's
//! wake-up and sleep). `perf` counted it on every direct call.
//!
//! [`RepollSelfWakes`] polls the connection with a waker of its own: a wake
//! that arrives while it is polling the connection is noted, and once the
//! poll returns the connection is polled again at once, up to
//! [`MAX_INLINE_REPOLLS`] times and only while the task has cooperative
//! budget left; past that, the task yields as before. A wake at any other
//! time goes to the task's waker. No wake is lost: the note is made before
//! the check of whether a poll is running, and cleared after it ends.
//!
//! hyper's own yield (after 16 turns of its loop for a pipelining client) is
//! a self-wake too, and is absorbed the same way: a connection gets at most
//! `MAX_INLINE_REPOLLS + 1` such turns per scheduler poll, and socket I/O
//! spends the task's budget.
//!
//! Must never: drop a wake. Polling again without cause is harmless;
//! missing one leaves a connection stalled.
//!
//! hyper 1.12 and 1.13 both wake the dropped sender's waker
//! (`Receiver::poll_next` in `hyper/src/body/chan.rs`); should hyper stop,
//! this module still absorbs hyper's own yields, but measure before keeping
//! it (docs/performance.md, "A connection that wakes itself").

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures::task::AtomicWaker;

/// Polls in a row for one wake-up of the task; a connection that keeps
/// waking itself past this yields to the scheduler.
pub(crate) const MAX_INLINE_REPOLLS: usize = 4;

/// `inner`, polled again at once when it wakes itself during a poll.
pub(crate) struct RepollSelfWakes<F> {
    inner: Pin<Box<F>>,
    shared: Arc<Shared>,
    waker: Waker,
}

struct Shared {
    polling: AtomicBool,
    woken: AtomicBool,
    task: AtomicWaker,
}

impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Note first, then look: a poll that ends after the look sees the
        // note; one that ended before it gets the task's wake. The note is a
        // read-modify-write, as is its clearing at the start of a poll, so
        // a poll that clears it also sees what the waker did before it.
        self.woken.swap(true, Ordering::SeqCst);
        if !self.polling.load(Ordering::SeqCst) {
            self.task.wake();
        }
    }
}

impl<F: Future> RepollSelfWakes<F> {
    pub(crate) fn new(inner: F) -> Self {
        let shared = Arc::new(Shared {
            polling: AtomicBool::new(false),
            woken: AtomicBool::new(false),
            task: AtomicWaker::new(),
        });
        Self {
            inner: Box::pin(inner),
            waker: Waker::from(shared.clone()),
            shared,
        }
    }
}

impl<F: Future> Future for RepollSelfWakes<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        this.shared.task.register(cx.waker());
        let mut own = Context::from_waker(&this.waker);
        for _ in 0..=MAX_INLINE_REPOLLS {
            this.shared.woken.swap(false, Ordering::SeqCst);
            this.shared.polling.store(true, Ordering::SeqCst);
            let poll = this.inner.as_mut().poll(&mut own);
            this.shared.polling.store(false, Ordering::SeqCst);
            if poll.is_ready() {
                return poll;
            }
            if !this.shared.woken.swap(false, Ordering::SeqCst) {
                return Poll::Pending;
            }
            if !tokio::task::coop::has_budget_remaining() {
                break;
            }
        }
        // Still waking itself (or out of budget): yield as before.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts the wakes the task's waker receives.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Wakes its own waker during each of its first `self_wakes` polls,
    /// then stays pending; counts its polls.
    struct SelfWaking {
        self_wakes: usize,
        polls: Arc<AtomicUsize>,
        waker: Arc<std::sync::Mutex<Option<Waker>>>,
    }

    impl Future for SelfWaking {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            *self.waker.lock().expect("lock") = Some(cx.waker().clone());
            if self.self_wakes > 0 {
                self.self_wakes -= 1;
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        }
    }

    /// A task waker that counts its wakes.
    fn counted() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        (count, waker)
    }

    fn setup(
        self_wakes: usize,
    ) -> (
        RepollSelfWakes<SelfWaking>,
        Arc<AtomicUsize>,
        Arc<std::sync::Mutex<Option<Waker>>>,
    ) {
        let polls = Arc::new(AtomicUsize::new(0));
        let waker = Arc::new(std::sync::Mutex::new(None));
        let fut = RepollSelfWakes::new(SelfWaking {
            self_wakes,
            polls: polls.clone(),
            waker: waker.clone(),
        });
        (fut, polls, waker)
    }

    #[test]
    fn a_wake_during_the_poll_polls_again_at_once_without_waking_the_task() {
        let (mut fut, polls, _) = setup(1);
        let (count, task) = counted();
        let mut cx = Context::from_waker(&task);
        assert!(Pin::new(&mut fut).poll(&mut cx).is_pending());
        assert_eq!(polls.load(Ordering::SeqCst), 2, "polled again at once");
        assert_eq!(count.0.load(Ordering::SeqCst), 0, "the task was not woken");
    }

    #[test]
    fn a_future_that_keeps_waking_itself_yields_to_the_scheduler() {
        let (mut fut, polls, _) = setup(usize::MAX);
        let (count, task) = counted();
        let mut cx = Context::from_waker(&task);
        assert!(Pin::new(&mut fut).poll(&mut cx).is_pending());
        assert_eq!(polls.load(Ordering::SeqCst), MAX_INLINE_REPOLLS + 1);
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "the task yields");
    }

    #[test]
    fn a_wake_between_polls_reaches_the_task() {
        let (mut fut, polls, inner_waker) = setup(0);
        let (count, task) = counted();
        let mut cx = Context::from_waker(&task);
        assert!(Pin::new(&mut fut).poll(&mut cx).is_pending());
        assert_eq!(polls.load(Ordering::SeqCst), 1);
        let waker = inner_waker
            .lock()
            .expect("lock")
            .clone()
            .expect("registered");
        std::thread::spawn(move || waker.wake())
            .join()
            .expect("waking thread");
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "the wake was passed on");
    }

    #[test]
    fn a_wake_reaches_the_waker_of_the_latest_poll() {
        let (mut fut, _, inner_waker) = setup(0);
        let (first, waker) = counted();
        assert!(
            Pin::new(&mut fut)
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
        let (second, waker) = counted();
        assert!(
            Pin::new(&mut fut)
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
        inner_waker
            .lock()
            .expect("lock")
            .clone()
            .expect("registered")
            .wake();
        assert_eq!(first.0.load(Ordering::SeqCst), 0);
        assert_eq!(second.0.load(Ordering::SeqCst), 1, "the task moved on");
    }

    /// Stands where tokio's task would: forwards every wake to the task and
    /// counts those that arrive while it is polling `inner` (to tokio, a
    /// yield).
    struct CountSelfWakes<F> {
        inner: Pin<Box<F>>,
        seen: Arc<Seen>,
        waker: Waker,
    }

    struct Seen {
        polling: AtomicBool,
        self_wakes: Arc<AtomicUsize>,
        task: AtomicWaker,
    }

    impl<F: Future> CountSelfWakes<F> {
        fn new(inner: F, self_wakes: Arc<AtomicUsize>) -> Self {
            let seen = Arc::new(Seen {
                polling: AtomicBool::new(false),
                self_wakes,
                task: AtomicWaker::new(),
            });
            Self {
                inner: Box::pin(inner),
                waker: Waker::from(seen.clone()),
                seen,
            }
        }
    }

    impl Wake for Seen {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            if self.polling.load(Ordering::SeqCst) {
                self.self_wakes.fetch_add(1, Ordering::SeqCst);
            }
            self.task.wake();
        }
    }

    impl<F: Future> Future for CountSelfWakes<F> {
        type Output = F::Output;
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            let this = self.get_mut();
            this.seen.task.register(cx.waker());
            this.seen.polling.store(true, Ordering::SeqCst);
            let poll = this
                .inner
                .as_mut()
                .poll(&mut Context::from_waker(&this.waker));
            this.seen.polling.store(false, Ordering::SeqCst);
            poll
        }
    }

    /// Serves 50 requests with bodies from one client over hyper
    /// connections built as `connections::serve` builds them, `wrap`ped or
    /// not, and returns how often they woke themselves as tokio would see it.
    async fn self_wakes_seen_by_the_task(wrap: bool) -> usize {
        use hyper_util::rt::{TokioExecutor, TokioIo};
        use hyper_util::server::conn::auto::Builder;
        use hyper_util::service::TowerToHyperService;

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let self_wakes = Arc::new(AtomicUsize::new(0));
        let counter = self_wakes.clone();
        let connections = tokio_util::task::TaskTracker::new();
        let tracker = connections.clone();
        // The client may open more than one connection (a pooled one is
        // returned to its pool a moment after its answer).
        let accepting = tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.expect("accept");
                let app = axum::Router::new().route(
                    "/echo",
                    axum::routing::post(|body: axum::body::Bytes| async move { body }),
                );
                let conn = async move {
                    let _ = Builder::new(TokioExecutor::new())
                        .serve_connection_with_upgrades(
                            TokioIo::new(stream),
                            TowerToHyperService::new(app),
                        )
                        .await;
                };
                if wrap {
                    tracker.spawn(CountSelfWakes::new(
                        RepollSelfWakes::new(conn),
                        counter.clone(),
                    ));
                } else {
                    tracker.spawn(CountSelfWakes::new(conn, counter.clone()));
                }
            }
        });
        let client = reqwest::Client::new();
        for i in 0..50 {
            let text = format!("request {i}");
            assert_eq!(echo(&client, addr, text.clone()).await, text);
        }
        drop(client);
        accepting.abort();
        connections.close();
        connections.wait().await;
        self_wakes.load(Ordering::SeqCst)
    }

    // One thread: every wake seen during a poll then comes from the polled
    // connection itself (on more threads the I/O driver may wake a task
    // while it runs, which no wrapper can absorb).
    #[tokio::test]
    async fn hyper_wakes_its_connection_while_it_runs_and_the_wrapper_keeps_that_from_tokio() {
        // Without the wrapper, hyper's body channel wakes the connection's
        // task during its own poll on every request with a body. Should this
        // fall to zero, hyper has stopped; see this module's last paragraph.
        let bare = self_wakes_seen_by_the_task(false).await;
        assert!(
            bare >= 50,
            "hyper woke its connection {bare} times in 50 requests"
        );
        assert_eq!(self_wakes_seen_by_the_task(true).await, 0);
    }

    /// `connections::serve` with one echo route; the address and a stop.
    async fn echo_server() -> (
        std::net::SocketAddr,
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<std::io::Result<()>>,
    ) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let app = axum::Router::new().route(
            "/echo",
            axum::routing::post(|body: axum::body::Bytes| async move { body }),
        );
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(crate::connections::serve(
            listener,
            app,
            std::time::Duration::from_secs(5),
            async move {
                let _ = stopped.await;
            },
        ));
        (addr, stop, server)
    }

    async fn echo(client: &reqwest::Client, addr: std::net::SocketAddr, text: String) -> String {
        let answer = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            client
                .post(format!("http://{addr}/echo"))
                .body(text)
                .send()
                .await
                .expect("sent")
                .text()
                .await
                .expect("answer")
        });
        answer.await.expect("the connection answered")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn connections_served_through_it_answer_every_request_with_a_body() {
        // Real HTTP/1 over loopback through `connections::serve`, each
        // request with a body (the self-waking case), on one kept-alive
        // connection: every answer arrives and none stalls.
        let (addr, stop, server) = echo_server().await;
        let client = reqwest::Client::new();
        for i in 0..200 {
            let text = format!("request {i}");
            assert_eq!(echo(&client, addr, text.clone()).await, text);
        }
        drop(client);
        let _ = stop.send(());
        server.await.expect("join").expect("served");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn http2_connections_answer_concurrent_requests_with_bodies() {
        // One HTTP/2 connection carrying 64 requests at once: its task
        // drives every stream and is woken for each.
        let (addr, stop, server) = echo_server().await;
        let client = reqwest::Client::builder()
            .http2_prior_knowledge()
            .build()
            .expect("client");
        let version = client
            .post(format!("http://{addr}/echo"))
            .body("version")
            .send()
            .await
            .expect("sent")
            .version();
        assert_eq!(version, reqwest::Version::HTTP_2);
        let answers = futures::future::join_all((0..64).map(|i| {
            let client = client.clone();
            async move { (i, echo(&client, addr, format!("stream {i}")).await) }
        }))
        .await;
        for (i, answer) in answers {
            assert_eq!(answer, format!("stream {i}"));
        }
        drop(client);
        let _ = stop.send(());
        server.await.expect("join").expect("served");
    }
}
