//! Request admission for `/mcp`: a bounded number of messages in flight plus
//! a bounded FIFO queue with a wait timeout. Overload is HTTP 503 with
//! `Retry-After` and a JSON-RPC error carrying the message's `id` when it
//! could be read. `/health` and `/metrics` never come here.
//!
//! A request counts as pending while its body arrives, and asks for a slot
//! only once the body is whole: a slow client holds a pending place for at
//! most `server.request_body_timeout_ms`, never a slot. Pending places
//! (bodies being read plus requests queued for a slot) are bounded by
//! `max_concurrent_requests + max_queued_requests`, which bounds the bodies
//! held in memory. Each message of a batch
//! is admitted on its own (`framing.rs`), so a batch takes as many slots as
//! it has messages running.
//!
//! Must never: hand out a slot before a request's body has arrived.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, Response, StatusCode, header};
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub struct RequestAdmission {
    /// One per message allowed in flight (`server.max_concurrent_requests`).
    permits: Arc<Semaphore>,
    max_queued: usize,
    /// Requests waiting for a permit.
    queued: AtomicUsize,
    max_pending: usize,
    /// Requests reading their body or waiting for a permit.
    pending: Arc<AtomicUsize>,
    queue_timeout: Duration,
    pub(crate) rejected: AtomicU64,
    pub(crate) admitted: AtomicU64,
}

/// A pending request's place (its body arriving, then its wait for a
/// slot), given back on drop.
pub(crate) struct Pending {
    pending: Arc<AtomicUsize>,
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A slot: one message in flight, until dropped.
pub(crate) struct Admitted {
    _permit: OwnedSemaphorePermit,
}

/// No slot within the wait, or no room to wait.
#[derive(Debug)]
pub(crate) struct Overloaded;

impl RequestAdmission {
    pub fn new(max_concurrent: usize, max_queued: usize, queue_timeout: Duration) -> Self {
        RequestAdmission {
            permits: Arc::new(Semaphore::new(max_concurrent)),
            max_queued,
            queued: AtomicUsize::new(0),
            max_pending: max_concurrent.saturating_add(max_queued),
            pending: Arc::new(AtomicUsize::new(0)),
            queue_timeout,
            rejected: AtomicU64::new(0),
            admitted: AtomicU64::new(0),
        }
    }

    pub(crate) fn in_flight_and_queued(&self) -> (usize, usize) {
        (
            self.permits.available_permits(),
            self.queued.load(Ordering::Relaxed),
        )
    }

    /// A pending place for a request whose body is about to be read, or
    /// `Overloaded` when there are as many as slots and queue places.
    pub(crate) fn enter(&self) -> Result<Pending, Overloaded> {
        if self.pending.fetch_add(1, Ordering::AcqRel) >= self.max_pending {
            self.pending.fetch_sub(1, Ordering::AcqRel);
            self.rejected.fetch_add(1, Ordering::Relaxed);
            return Err(Overloaded);
        }
        Ok(Pending {
            pending: self.pending.clone(),
        })
    }

    /// A slot for a pending request: at once when one is free, else after
    /// waiting in the queue (when it has room) up to the queue timeout. The
    /// pending place is given back either way.
    pub(crate) async fn admit(&self, pending: Pending) -> Result<Admitted, Overloaded> {
        let permit = self.acquire().await;
        drop(pending);
        match permit {
            Ok(p) => {
                self.admitted.fetch_add(1, Ordering::Relaxed);
                Ok(Admitted { _permit: p })
            }
            Err(o) => {
                self.rejected.fetch_add(1, Ordering::Relaxed);
                Err(o)
            }
        }
    }

    /// A slot for one message whose text is already here (a batch's).
    pub(crate) async fn admit_one(&self) -> Result<Admitted, Overloaded> {
        let pending = self.enter()?;
        self.admit(pending).await
    }

    async fn acquire(&self) -> Result<OwnedSemaphorePermit, Overloaded> {
        if let Ok(p) = self.permits.clone().try_acquire_owned() {
            return Ok(p);
        }
        if self.queued.fetch_add(1, Ordering::AcqRel) >= self.max_queued {
            self.queued.fetch_sub(1, Ordering::AcqRel);
            return Err(Overloaded);
        }
        let waited =
            tokio::time::timeout(self.queue_timeout, self.permits.clone().acquire_owned()).await;
        self.queued.fetch_sub(1, Ordering::AcqRel);
        match waited {
            Ok(Ok(p)) => Ok(p),
            _ => Err(Overloaded),
        }
    }

    /// When to come back after an overload.
    pub(crate) fn retry_after_ms(&self) -> u64 {
        (self.queue_timeout.as_millis() as u64 / 2).max(100)
    }

    /// The JSON-RPC error for a message refused as overloaded.
    pub(crate) fn overloaded_error(&self, id: Value) -> Value {
        let retry_ms = self.retry_after_ms();
        json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": -32000,
                "message": format!("connecta is overloaded; retry after {retry_ms} ms"),
                "data": {"code": "unavailable", "retryable": true, "retryAfterMs": retry_ms}
            }
        })
    }

    /// HTTP 503 with `Retry-After` and the JSON-RPC error for `id`.
    pub(crate) fn overloaded(&self, id: Value) -> Response<Body> {
        let body = self.overloaded_error(id);
        let mut r = Response::new(Body::from(body.to_string()));
        *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        let secs = self.retry_after_ms().div_ceil(1000).max(1);
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn pending_places_are_given_back_whether_a_slot_comes_or_not() {
        let a = RequestAdmission::new(1, 1, Duration::from_millis(20));
        let first = a.admit_one().await.expect("a free slot");
        // Slots plus queue places: two bodies may be arriving at once.
        let p1 = a.enter().expect("room");
        let p2 = a.enter().expect("room");
        assert!(a.enter().is_err(), "two pending at most");
        drop(p2);
        assert!(a.admit(p1).await.is_err(), "the only slot is taken");
        assert_eq!(a.in_flight_and_queued().1, 0);
        drop(first);
        let p = a.enter().expect("room again");
        let _second = a.admit(p).await.expect("the slot is free");
        assert_eq!(a.in_flight_and_queued(), (0, 0));
        assert_eq!(a.pending.load(Ordering::Relaxed), 0);
        assert_eq!(a.admitted.load(Ordering::Relaxed), 2);
        assert_eq!(a.rejected.load(Ordering::Relaxed), 2);
    }

    #[tokio::test]
    async fn without_queue_places_a_body_is_still_read_while_a_slot_is_free() {
        let a = RequestAdmission::new(1, 0, Duration::from_millis(20));
        let p = a.enter().expect("a slot is free, so a body may arrive");
        let slot = a.admit(p).await.expect("and get the slot");
        let p = a.enter().expect("the admitted request is not pending");
        assert!(a.admit(p).await.is_err(), "no queue: refused at once");
        drop(slot);
    }

    #[test]
    fn an_overload_answers_the_message_s_id() {
        let a = RequestAdmission::new(1, 1, Duration::from_millis(5000));
        let e = a.overloaded_error(json!(42));
        assert_eq!(e["id"], 42);
        assert_eq!(e["error"]["data"]["retryAfterMs"], 2500);
    }
}
