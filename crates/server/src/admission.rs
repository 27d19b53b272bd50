//! Request admission for `/mcp`: a bounded number of requests in flight plus
//! a bounded FIFO queue with a wait timeout. Overload is HTTP 503 with
//! `Retry-After` and a JSON-RPC error body. `/health` and `/metrics` bypass
//! this layer entirely.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use tokio::sync::Semaphore;

use crate::AppState;

pub struct RequestAdmission {
    permits: Arc<Semaphore>,
    max_queued: usize,
    queued: AtomicUsize,
    queue_timeout: Duration,
    pub(crate) rejected: AtomicU64,
    pub(crate) admitted: AtomicU64,
}

impl RequestAdmission {
    pub fn new(max_concurrent: usize, max_queued: usize, queue_timeout: Duration) -> Self {
        RequestAdmission {
            permits: Arc::new(Semaphore::new(max_concurrent)),
            max_queued,
            queued: AtomicUsize::new(0),
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
}

pub(crate) async fn admit(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let a = &state.admission;
    let permit = match a.permits.clone().try_acquire_owned() {
        Ok(p) => p,
        Err(_) => {
            if a.queued.fetch_add(1, Ordering::AcqRel) >= a.max_queued {
                a.queued.fetch_sub(1, Ordering::AcqRel);
                return overloaded(a);
            }
            let waited =
                tokio::time::timeout(a.queue_timeout, a.permits.clone().acquire_owned()).await;
            a.queued.fetch_sub(1, Ordering::AcqRel);
            match waited {
                Ok(Ok(p)) => p,
                _ => return overloaded(a),
            }
        }
    };
    a.admitted.fetch_add(1, Ordering::Relaxed);
    let response = next.run(req).await;
    drop(permit);
    response
}

fn overloaded(a: &RequestAdmission) -> Response {
    a.rejected.fetch_add(1, Ordering::Relaxed);
    let retry_ms = (a.queue_timeout.as_millis() as u64 / 2).max(100);
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32000,
            "message": format!("connecta is overloaded; retry after {retry_ms} ms"),
            "data": {"code": "unavailable", "retryable": true, "retryAfterMs": retry_ms}
        }
    });
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let secs = retry_ms.div_ceil(1000).max(1);
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}
