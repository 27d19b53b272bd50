//! How both surfaces end on a shutdown signal without losing an answer.
//!
//! Three steps, in this order: the requests in flight get
//! `server.shutdown_grace_ms` to finish with their real result; then the
//! gateway stops what is still running, and each of those answers
//! `executor_closed`; then, after a short window for writing those answers,
//! whatever is left is dropped. A surface must never cut its transport
//! before the first two steps, or a client gets an empty error for work that
//! may have happened downstream.

use std::future::Future;
use std::time::Duration;

use connecta_gateway::Gateway;

/// How long requests stopped at the end of the grace get to write their
/// `executor_closed` answer. Cancellation reaches every call path at once
/// (a downstream call, a sandbox run, a queue wait), so this is slack for
/// writing the responses, not for work.
const ANSWER_WINDOW: Duration = Duration::from_secs(5);

/// Wait for `settled` (the surface has no request left) through the grace
/// and the stop. `settled` is polled across both steps, never restarted.
/// `None` means even the stopped requests did not answer in time, and the
/// caller should drop what is left.
pub(crate) async fn drain<F: Future + Unpin>(
    settled: &mut F,
    gateway: &Gateway,
    grace: Duration,
) -> Option<F::Output> {
    if let Ok(out) = tokio::time::timeout(grace, &mut *settled).await {
        return Some(out);
    }
    tracing::warn!(
        grace_ms = grace.as_millis() as u64,
        "in-flight requests did not finish within the shutdown grace; stopping them"
    );
    gateway.stop_in_flight();
    let out = tokio::time::timeout(ANSWER_WINDOW, &mut *settled)
        .await
        .ok();
    if out.is_none() {
        tracing::warn!("stopped requests did not answer in time; dropping them");
    }
    out
}
