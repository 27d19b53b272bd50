//! Per-connector call admission: a concurrency cap and a rolling-window call
//! budget. Exhaustion is a retryable `rate_limited` carrying the exact wait.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use connecta_core::config::RateLimit;
use connecta_core::error::{ErrorCode, ToolError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

pub struct CallAdmission {
    connector: String,
    concurrency: Option<(Arc<Semaphore>, usize)>,
    window: Option<(RateLimit, Mutex<VecDeque<Instant>>)>,
}

/// Held for the duration of a call.
pub struct CallPermit {
    _permit: Option<OwnedSemaphorePermit>,
}

impl CallAdmission {
    pub fn new(connector: &str, max_concurrency: Option<usize>, rate: Option<RateLimit>) -> Self {
        CallAdmission {
            connector: connector.to_owned(),
            concurrency: max_concurrency.map(|n| (Arc::new(Semaphore::new(n)), n)),
            window: rate.map(|r| (r, Mutex::new(VecDeque::with_capacity(r.calls as usize)))),
        }
    }

    pub fn admit(&self) -> Result<CallPermit, ToolError> {
        let permit = match &self.concurrency {
            Some((sem, n)) => match sem.clone().try_acquire_owned() {
                Ok(p) => Some(p),
                Err(_) => {
                    return Err(ToolError::new(
                        ErrorCode::RateLimited,
                        format!(
                            "{} already has {n} calls in flight (its max_concurrency)",
                            self.connector
                        ),
                    )
                    .retry_after(50));
                }
            },
            None => None,
        };
        if let Some((rate, calls)) = &self.window {
            let now = Instant::now();
            let mut calls = calls.lock().unwrap_or_else(|p| p.into_inner());
            while calls
                .front()
                .is_some_and(|t| now.duration_since(*t) >= rate.per)
            {
                calls.pop_front();
            }
            if calls.len() >= rate.calls as usize {
                let oldest = calls.front().copied().unwrap_or(now);
                let wait = rate
                    .per
                    .saturating_sub(now.duration_since(oldest))
                    .max(Duration::from_millis(1));
                return Err(ToolError::new(
                    ErrorCode::RateLimited,
                    format!(
                        "{} allows {} calls per {} s; try again in {} ms",
                        self.connector,
                        rate.calls,
                        rate.per.as_secs(),
                        wait.as_millis()
                    ),
                )
                .retry_after(wait.as_millis() as u64));
            }
            calls.push_back(now);
        }
        Ok(CallPermit { _permit: permit })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn rolling_window_reports_the_exact_wait() {
        let a = CallAdmission::new(
            "svc",
            None,
            Some(RateLimit {
                calls: 2,
                per: Duration::from_secs(10),
            }),
        );
        a.admit().expect("first");
        tokio::time::advance(Duration::from_secs(4)).await;
        a.admit().expect("second");
        let e = a.admit().err().expect("third is limited");
        assert_eq!(e.code, ErrorCode::RateLimited);
        assert!(e.retryable);
        assert_eq!(e.retry_after_ms, Some(6_000));
        tokio::time::advance(Duration::from_secs(6)).await;
        a.admit().expect("window moved");
    }

    #[test]
    fn concurrency_cap() {
        let a = CallAdmission::new("svc", Some(1), None);
        let p = a.admit().expect("first");
        assert_eq!(
            a.admit().err().map(|e| e.code),
            Some(ErrorCode::RateLimited)
        );
        drop(p);
        a.admit().expect("released");
    }
}
