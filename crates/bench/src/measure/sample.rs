//! Timing requests: one at a time (`sequential`) or many in flight (`load`).
//! The clock covers the request only; the response is checked after the
//! clock stops, and a failed check counts as an error beside the figure,
//! never as a timed success.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use futures::future::BoxFuture;

use rmcp::model::CallToolResult;

use super::checks;
use super::client::Client;
use crate::report::model::{Load, Samples, Single};
use crate::stats::{Distribution, ms};

/// What a request returns: a tool result or the transport's error.
pub type Response = anyhow::Result<CallToolResult>;

/// Judges a response to request `index`.
pub type Check = Arc<dyn Fn(usize, &CallToolResult) -> Result<(), String> + Send + Sync>;

fn judge(index: usize, response: &Response, check: &Check) -> Result<(), String> {
    match response {
        Ok(result) => check(index, result),
        Err(e) => Err(format!("{e:#}")),
    }
}

/// Time request 0 once.
pub async fn single<F, Fut>(f: F, check: Check) -> anyhow::Result<Single>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Response>,
{
    let started = Instant::now();
    let response = f().await;
    let elapsed = ms(started.elapsed());
    judge(0, &response, &check).map_err(|e| anyhow::anyhow!(e))?;
    Ok(Single {
        ms: elapsed,
        sample_response: response.ok().as_ref().map(checks::sample),
    })
}

/// `warmup` untimed requests, then `count` timed ones, one after another.
/// Request indices run on from the warm-up's.
pub async fn sequential<F, Fut>(warmup: usize, count: usize, mut f: F, check: Check) -> Samples
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Response>,
{
    for i in 0..warmup {
        let _ = f(i).await;
    }
    let mut latencies = Vec::with_capacity(count);
    let mut errors = 0;
    let mut first_error = None;
    let mut sample_response = None;
    for i in warmup..warmup + count {
        let started = Instant::now();
        let response = f(i).await;
        let elapsed = ms(started.elapsed());
        match judge(i, &response, &check) {
            Ok(()) => {
                latencies.push(elapsed);
                if sample_response.is_none() {
                    sample_response = response.ok().as_ref().map(checks::sample);
                }
            }
            Err(e) => {
                errors += 1;
                first_error.get_or_insert(e);
            }
        }
    }
    Samples {
        latency: Distribution::from_ms(latencies),
        errors,
        first_error,
        sample_response,
    }
}

/// A request for the load generator: given a client and the call index.
pub type LoadCall = Arc<dyn Fn(Arc<Client>, usize) -> BoxFuture<'static, Response> + Send + Sync>;

/// `calls` requests with `in_flight` workers, each on its own client
/// (`clients[w % clients.len()]`), pulling call indices from one counter.
pub async fn load(
    clients: &[Arc<Client>],
    calls: usize,
    in_flight: usize,
    call: LoadCall,
    check: Check,
) -> Load {
    let in_flight = in_flight.max(1);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..in_flight.min(calls.max(1)))
        .map(|w| {
            let client = clients[w % clients.len()].clone();
            let next = next.clone();
            let call = call.clone();
            let check = check.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut errors = 0usize;
                let mut first_error = None;
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= calls {
                        break;
                    }
                    let t = Instant::now();
                    let response = call(client.clone(), index).await;
                    let elapsed = ms(t.elapsed());
                    match judge(index, &response, &check) {
                        Ok(()) => latencies.push(elapsed),
                        Err(e) => {
                            errors += 1;
                            first_error.get_or_insert(e);
                        }
                    }
                }
                (latencies, errors, first_error)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(calls);
    let mut errors = 0;
    let mut first_error = None;
    for worker in workers {
        match worker.await {
            Ok((l, e, f)) => {
                latencies.extend(l);
                errors += e;
                if first_error.is_none() {
                    first_error = f;
                }
            }
            Err(join) => {
                errors += 1;
                first_error.get_or_insert(format!("load worker panicked: {join}"));
            }
        }
    }
    let duration = started.elapsed();
    Load {
        in_flight,
        calls,
        errors,
        first_error,
        duration_ms: ms(duration),
        throughput_per_sec: latencies.len() as f64 / duration.as_secs_f64().max(1e-9),
        latency: Distribution::from_ms(latencies),
        server_cpu_us_per_call: None,
        launcher_cpu_us_per_call: None,
        driver_cpu_us_per_call: None,
    }
}
