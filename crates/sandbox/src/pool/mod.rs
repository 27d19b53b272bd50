//! [`QuickJsPool`]: the `CodeRuntime` on a pool of pre-started worker
//! processes.
//!
//! The pool owns the workers' lifecycle: it starts `workers` of them at
//! [`QuickJsPool::start`], lends one per admitted run, starts extra workers
//! on demand up to `max_concurrent`, and replaces any worker whose run ended
//! abnormally (timeout, abort, crash, heap exhaustion, protocol violation) or
//! that reached `runs_per_worker`. Admission ([`QuickJsPool::acquire`]) is
//! separate from running ([`Lease::run`]) so the gateway admits before it
//! does any catalog work (contract L7).
//!
//! Must never: let a worker outlive the pool ([`QuickJsPool::shutdown`]
//! kills and reaps every one), reuse a worker after an abnormal end, or
//! start a run on a worker that has already exited.

mod admission;
mod options;
mod process;
mod run;

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use tokio::sync::{Notify, OwnedSemaphorePermit};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use admission::AdmissionError;
pub use options::PoolOptions;
pub use process::SpawnError;

use admission::Admission;
use process::WorkerProcess;
use run::{Fate, RunContext};

use crate::protocol::WorkerLimits;
use crate::{
    BindingHost, BindingNamespace, CodeRunFailure, CodeRunRequest, CodeRunResult, CodeRuntime,
    FailureKind,
};

/// Why a pool could not start.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("invalid sandbox pool options: {0}")]
    InvalidOptions(String),
    #[error(transparent)]
    Start(#[from] SpawnError),
}

/// A snapshot of the pool, for health pages and benchmarks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolStats {
    /// Workers waiting for a run.
    pub idle: usize,
    /// Workers running a program.
    pub busy: usize,
    /// Workers being started.
    pub starting: usize,
    /// Runs waiting for admission.
    pub queued: usize,
    /// Workers started since the pool began.
    pub started_total: u64,
    /// Workers retired (abnormal end, or recycled after `runs_per_worker`).
    pub replaced_total: u64,
    /// Pids of the live workers (idle and busy).
    pub worker_pids: Vec<u32>,
}

/// The QuickJS code runtime on a pool of isolated worker processes.
#[derive(Clone)]
pub struct QuickJsPool {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for QuickJsPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuickJsPool")
            .field("stats", &self.stats())
            .finish()
    }
}

struct Inner {
    options: PoolOptions,
    limits: WorkerLimits,
    admission: Admission,
    state: Mutex<State>,
    /// Fires at shutdown: in-flight runs kill their workers and return.
    shutdown: CancellationToken,
    /// Signalled whenever a worker leaves `busy` or `starting`.
    changed: Notify,
    /// Background starts and reaps, awaited by shutdown.
    tasks: TaskTracker,
}

#[derive(Default)]
struct State {
    /// Longest idle first: a worker builds its next run's engine after it
    /// answers, so the one that has waited longest is the one most surely
    /// ready (back-to-back runs alternate between warm workers).
    idle: VecDeque<WorkerProcess>,
    /// Pids of workers lent to runs.
    busy: BTreeSet<u32>,
    starting: usize,
    /// Of `starting`, the starts that refill the warm set.
    refilling: usize,
    /// Runs waiting for one of those instead of starting their own.
    awaiting: usize,
    started_total: u64,
    replaced_total: u64,
    closed: bool,
}

/// An admitted run: holds one concurrency slot until it is run or dropped.
#[derive(Debug)]
pub struct Lease {
    inner: Arc<Inner>,
    _permit: OwnedSemaphorePermit,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Inner")
    }
}

impl QuickJsPool {
    /// Validates the options and starts the warm workers.
    pub async fn start(options: PoolOptions) -> Result<Self, PoolError> {
        options.validate().map_err(PoolError::InvalidOptions)?;
        let limits = options.limits();
        let inner = Arc::new(Inner {
            admission: Admission::new(
                options.max_concurrent,
                options.max_queued,
                options.queue_timeout,
                options.overload_retry_after,
            ),
            limits,
            options,
            state: Mutex::new(State::default()),
            shutdown: CancellationToken::new(),
            changed: Notify::new(),
            tasks: TaskTracker::new(),
        });
        let started = futures::future::join_all(
            (0..inner.options.workers).map(|_| WorkerProcess::spawn(&inner.options, &inner.limits)),
        )
        .await;
        let mut workers = Vec::new();
        let mut failure = None;
        for result in started {
            match result {
                Ok(w) => workers.push(w),
                Err(e) => failure = Some(e),
            }
        }
        if let Some(e) = failure {
            for w in workers {
                w.reap().await;
            }
            return Err(e.into());
        }
        {
            let mut st = inner.lock();
            st.started_total = workers.len() as u64;
            st.idle = workers.into();
        }
        Ok(Self { inner })
    }

    /// Admits one run: waits for a slot in FIFO order, or fails fast with
    /// `Overloaded` when the queue is full or the wait times out.
    pub async fn acquire(&self, cancel: &CancellationToken) -> Result<Lease, AdmissionError> {
        let permit = self.inner.admission.acquire(cancel).await?;
        Ok(Lease {
            inner: self.inner.clone(),
            _permit: permit,
        })
    }

    /// Stops admitting, ends in-flight runs, and kills and reaps every worker.
    pub async fn shutdown(&self) {
        let inner = &self.inner;
        inner.admission.close();
        inner.shutdown.cancel();
        let idle = {
            let mut st = inner.lock();
            st.closed = true;
            std::mem::take(&mut st.idle)
        };
        futures::future::join_all(idle.into_iter().map(WorkerProcess::reap)).await;
        loop {
            let changed = inner.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let st = inner.lock();
                if st.busy.is_empty() && st.starting == 0 {
                    break;
                }
            }
            changed.await;
        }
        inner.tasks.close();
        inner.tasks.wait().await;
    }

    pub fn stats(&self) -> PoolStats {
        let st = self.inner.lock();
        let mut pids: Vec<u32> = st.idle.iter().map(|w| w.pid).collect();
        pids.extend(st.busy.iter().copied());
        pids.sort_unstable();
        PoolStats {
            idle: st.idle.len(),
            busy: st.busy.len(),
            starting: st.starting,
            queued: self.inner.admission.queued(),
            started_total: st.started_total,
            replaced_total: st.replaced_total,
            worker_pids: pids,
        }
    }
}

impl Lease {
    /// Runs one program on a pooled worker. Never fails as a call: a failed
    /// program is `CodeRunResult::error`.
    ///
    /// A worker that dies before it sends a single frame for the run (killed
    /// while idle, just before the pool could see it) costs the run nothing:
    /// the program goes once more to another worker. It had made no host
    /// call, so nothing outside the sandbox saw it run.
    pub async fn run(self, request: CodeRunRequest, host: Arc<dyn BindingHost>) -> CodeRunResult {
        let inner = self.inner.clone();
        let deadline = Instant::now() + inner.options.wall_deadline;
        if request.cancel.is_cancelled() {
            return failure(FailureKind::Abort, "the run was cancelled");
        }
        if let Err(message) = validate_bindings(&request.bindings) {
            return failure(FailureKind::Exception, message);
        }
        let mut attempts_left = 2;
        loop {
            attempts_left -= 1;
            // Encoded per attempt: the frame moves into the worker's queue,
            // and a second attempt is rare.
            let frame = match run::encode_run(&request) {
                Ok(frame) => frame,
                Err(result) => return result,
            };
            let mut lent = match inner.checkout().await {
                Ok(lent) => lent,
                Err(result) => return result,
            };
            if request.cancel.is_cancelled() {
                return failure(FailureKind::Abort, "the run was cancelled");
            }
            let Some(worker) = lent.worker.as_mut() else {
                return failure(FailureKind::WorkerExit, "no sandbox worker is available");
            };
            let cx = RunContext {
                limits: &inner.limits,
                deadline,
                wall_deadline_ms: inner.options.wall_deadline.as_millis(),
                shutdown: &inner.shutdown,
            };
            let (result, fate) = run::drive(worker, cx, frame, &request, host.clone()).await;
            lent.give_back(fate);
            if fate == Fate::Unheard && attempts_left > 0 {
                tracing::warn!(
                    "a sandbox worker died before its run started; running it on another"
                );
                continue;
            }
            return result;
        }
    }
}

/// A worker lent to one run. Dropped without [`Lent::give_back`] (the run's
/// future was dropped mid-run), the worker is retired.
struct Lent {
    inner: Arc<Inner>,
    worker: Option<WorkerProcess>,
}

impl Lent {
    fn give_back(&mut self, fate: Fate) {
        let Some(mut worker) = self.worker.take() else {
            return;
        };
        worker.runs += 1;
        let recycle = worker.runs >= self.inner.options.runs_per_worker;
        let mut st = self.inner.lock();
        st.busy.remove(&worker.pid);
        if fate == Fate::Reuse && !recycle && !st.closed {
            st.idle.push_back(worker);
            drop(st);
        } else {
            drop(st);
            self.inner.retire(worker);
        }
        self.inner.changed.notify_waiters();
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if self.worker.is_some() {
            self.give_back(Fate::Retire);
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a panic elsewhere; the state is still
        // consistent enough to shut down.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes an idle worker that is still alive, or waits for a refill
    /// that no other run waits for, or starts one. (A run that started its
    /// own beside a refill would leave one worker more than the warm set,
    /// for good; the refill, started first, is also ready first.)
    async fn checkout(self: &Arc<Self>) -> Result<Lent, CodeRunResult> {
        loop {
            let mut refill = None;
            let candidate = {
                let mut st = self.lock();
                if st.closed {
                    return Err(failure(
                        FailureKind::WorkerExit,
                        "the code sandbox is shut down",
                    ));
                }
                let candidate = st.idle.pop_front();
                match &candidate {
                    Some(w) => {
                        st.busy.insert(w.pid);
                    }
                    None if st.refilling > st.awaiting => {
                        st.awaiting += 1;
                        // Registered before the lock is let go: the refill
                        // cannot land unseen in between.
                        let mut changed = Box::pin(self.changed.notified());
                        changed.as_mut().enable();
                        refill = Some((changed, AwaitingRefill(self)));
                    }
                    None => st.starting += 1,
                }
                candidate
            };
            if let Some((changed, _awaiting)) = refill {
                changed.await;
                continue;
            }
            match candidate {
                Some(mut worker) => {
                    if worker.has_exited() {
                        self.lock().busy.remove(&worker.pid);
                        self.retire(worker);
                        continue;
                    }
                    return Ok(Lent {
                        inner: self.clone(),
                        worker: Some(worker),
                    });
                }
                None => {
                    let started = WorkerProcess::spawn(&self.options, &self.limits).await;
                    let mut st = self.lock();
                    st.starting -= 1;
                    self.changed.notify_waiters();
                    return match started {
                        Ok(worker) if !st.closed => {
                            st.started_total += 1;
                            st.busy.insert(worker.pid);
                            Ok(Lent {
                                inner: self.clone(),
                                worker: Some(worker),
                            })
                        }
                        Ok(worker) => {
                            drop(st);
                            self.tasks.spawn(worker.reap());
                            Err(failure(
                                FailureKind::WorkerExit,
                                "the code sandbox is shut down",
                            ))
                        }
                        Err(e) => {
                            drop(st);
                            tracing::error!("sandbox worker failed to start: {e}");
                            Err(failure(
                                FailureKind::WorkerExit,
                                format!("no sandbox worker could be started: {e}"),
                            ))
                        }
                    };
                }
            }
        }
    }

    /// Kills a worker now, reaps it in the background, and refills the
    /// warm set.
    fn retire(self: &Arc<Self>, mut worker: WorkerProcess) {
        worker.kill();
        self.lock().replaced_total += 1;
        match tokio::runtime::Handle::try_current() {
            Ok(_) => {
                self.tasks.spawn(worker.reap());
            }
            // Outside a runtime (a lease dropped during teardown):
            // `kill_on_drop` and tokio's orphan reaping take over.
            Err(_) => drop(worker),
        }
        self.refill();
    }

    /// Starts workers until the warm count is met again.
    fn refill(self: &Arc<Self>) {
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let deficit = {
            let mut st = self.lock();
            if st.closed {
                return;
            }
            let live = st.idle.len() + st.busy.len() + st.starting;
            let deficit = self.options.workers.saturating_sub(live);
            st.starting += deficit;
            st.refilling += deficit;
            deficit
        };
        for _ in 0..deficit {
            let inner = self.clone();
            self.tasks.spawn(async move {
                let started = WorkerProcess::spawn(&inner.options, &inner.limits).await;
                let leftover = {
                    let mut st = inner.lock();
                    st.starting -= 1;
                    st.refilling -= 1;
                    match started {
                        Ok(worker) if !st.closed => {
                            st.started_total += 1;
                            st.idle.push_back(worker);
                            None
                        }
                        Ok(worker) => Some(worker),
                        Err(e) => {
                            tracing::error!("sandbox worker failed to start: {e}");
                            None
                        }
                    }
                };
                inner.changed.notify_waiters();
                if let Some(worker) = leftover {
                    worker.reap().await;
                }
            });
        }
    }
}

/// A run's claim on a refill in flight, given up when its wait ends
/// (or its future is dropped).
struct AwaitingRefill<'a>(&'a Inner);

impl Drop for AwaitingRefill<'_> {
    fn drop(&mut self) {
        self.0.lock().awaiting -= 1;
    }
}

fn failure(kind: FailureKind, message: impl Into<String>) -> CodeRunResult {
    CodeRunResult {
        value: None,
        logs: Vec::new(),
        error: Some(CodeRunFailure {
            kind,
            message: message.into(),
            host_error: None,
        }),
    }
}

/// Binding globals must be portable identifiers, unique, and not `console`.
fn validate_bindings(bindings: &[BindingNamespace]) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    for ns in bindings {
        let g = ns.global.as_str();
        let mut chars = g.chars();
        let identifier = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !identifier {
            return Err(format!("binding global `{g}` is not an identifier"));
        }
        if g == "console" {
            return Err("binding global `console` is reserved".into());
        }
        if !seen.insert(g) {
            return Err(format!("binding global `{g}` is declared twice"));
        }
    }
    Ok(())
}

/// `CodeRuntime::run` is `acquire` + `Lease::run`. Admission failures map
/// onto the seam's kinds: `Overloaded` → `timeout` (the admission wait is a
/// budget; the message carries `retry after N ms`), `Cancelled` → `abort`,
/// `Closed` → `worker-exit`. Callers that need the typed admission error
/// (the gateway does, for `executor_overloaded`) call `acquire` themselves.
#[async_trait]
impl CodeRuntime for QuickJsPool {
    fn language(&self) -> &'static str {
        "javascript"
    }

    fn isolation(&self) -> &'static str {
        "process"
    }

    async fn run(&self, request: CodeRunRequest, host: Arc<dyn BindingHost>) -> CodeRunResult {
        match self.acquire(&request.cancel).await {
            Ok(lease) => lease.run(request, host).await,
            Err(e) => {
                let kind = match e {
                    AdmissionError::Overloaded { .. } => FailureKind::Timeout,
                    AdmissionError::Cancelled => FailureKind::Abort,
                    AdmissionError::Closed => FailureKind::WorkerExit,
                };
                failure(kind, e.to_string())
            }
        }
    }
}
