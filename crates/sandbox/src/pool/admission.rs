//! Admission (contract L7): bounded concurrency plus a bounded FIFO queue
//! with a wait timeout, separate from running so the gateway can admit
//! before it does any catalog work.
//!
//! Must never: queue without bound, or hold a queued caller past its
//! cancellation or the queue timeout.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio_util::sync::CancellationToken;

/// Why a run was not admitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionError {
    /// Every slot is busy and the queue is full, or the queue wait timed
    /// out. Retryable: the gateway answers `executor_overloaded`.
    #[error("the code sandbox is overloaded; retry after {retry_after_ms} ms")]
    Overloaded { retry_after_ms: u64 },
    /// The caller's cancellation fired while waiting.
    #[error("the run was cancelled while waiting for admission")]
    Cancelled,
    /// The pool is shut down.
    #[error("the code sandbox is shut down")]
    Closed,
}

/// The admission gate. Permits are FIFO (tokio's semaphore is fair).
#[derive(Debug)]
pub(crate) struct Admission {
    slots: Arc<Semaphore>,
    queued: AtomicUsize,
    max_queued: usize,
    queue_timeout: Duration,
    retry_after_ms: u64,
}

/// Decrements the queue count however the wait ends.
struct Queued<'a>(&'a AtomicUsize);

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Admission {
    pub(crate) fn new(
        max_concurrent: usize,
        max_queued: usize,
        queue_timeout: Duration,
        retry_after: Duration,
    ) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(max_concurrent)),
            queued: AtomicUsize::new(0),
            max_queued,
            queue_timeout,
            retry_after_ms: u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX),
        }
    }

    pub(crate) async fn acquire(
        &self,
        cancel: &CancellationToken,
    ) -> Result<OwnedSemaphorePermit, AdmissionError> {
        if cancel.is_cancelled() {
            return Err(AdmissionError::Cancelled);
        }
        match self.slots.clone().try_acquire_owned() {
            Ok(permit) => return Ok(permit),
            Err(TryAcquireError::Closed) => return Err(AdmissionError::Closed),
            Err(TryAcquireError::NoPermits) => {}
        }
        let overloaded = AdmissionError::Overloaded {
            retry_after_ms: self.retry_after_ms,
        };
        if self.queued.fetch_add(1, Ordering::AcqRel) >= self.max_queued {
            self.queued.fetch_sub(1, Ordering::AcqRel);
            return Err(overloaded);
        }
        let _queued = Queued(&self.queued);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(AdmissionError::Cancelled),
            permit = self.slots.clone().acquire_owned() => permit.map_err(|_| AdmissionError::Closed),
            _ = tokio::time::sleep(self.queue_timeout) => Err(overloaded),
        }
    }

    /// Stops admitting: queued and future callers get `Closed`.
    pub(crate) fn close(&self) {
        self.slots.close();
    }

    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }
}
