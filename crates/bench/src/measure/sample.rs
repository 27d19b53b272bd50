//! Timing requests: one at a time (`sequential`), two servers in turn
//! (`alternating`), or many in flight (`load`).
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

/// Timed responses, judged, on their way to [`Samples`] (or a load's
/// figures).
#[derive(Default)]
struct Tally {
    latencies: Vec<f64>,
    errors: usize,
    first_error: Option<String>,
    sample_response: Option<String>,
}

impl Tally {
    fn add(&mut self, i: usize, response: Response, elapsed: f64, check: &Check) {
        match judge(i, &response, check) {
            Ok(()) => {
                self.latencies.push(elapsed);
                if self.sample_response.is_none() {
                    self.sample_response = response.ok().as_ref().map(checks::sample);
                }
            }
            Err(e) => self.error(e),
        }
    }

    fn error(&mut self, e: String) {
        self.errors += 1;
        self.first_error.get_or_insert(e);
    }

    /// `other`'s samples after these (its first error only if none here).
    fn merge(&mut self, other: Tally) {
        self.latencies.extend(other.latencies);
        self.errors += other.errors;
        self.first_error = self.first_error.take().or(other.first_error);
        self.sample_response = self.sample_response.take().or(other.sample_response);
    }

    fn finish(self) -> Samples {
        Samples {
            latency: Distribution::from_ms(self.latencies),
            errors: self.errors,
            first_error: self.first_error,
            sample_response: self.sample_response,
        }
    }
}

/// Time request `i` of `f` into `tally`.
async fn timed<F, Fut>(f: &mut F, i: usize, tally: &mut Tally, check: &Check)
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Response>,
{
    let started = Instant::now();
    let response = f(i).await;
    tally.add(i, response, ms(started.elapsed()), check);
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
    let mut tally = Tally::default();
    for i in warmup..warmup + count {
        timed(&mut f, i, &mut tally, &check).await;
    }
    tally.finish()
}

/// Two servers sampled in turn, call by call: `count` timed requests to
/// each after `warmup` untimed pairs, the first of each pair alternating
/// between `a` and `b` (`paired::rotation`), so a machine that gets busier
/// or quieter during the run moves both alike. Both get the same request
/// index.
pub async fn alternating<A, FutA, B, FutB>(
    warmup: usize,
    count: usize,
    mut a: A,
    mut b: B,
    check: Check,
) -> (Samples, Samples)
where
    A: FnMut(usize) -> FutA,
    FutA: Future<Output = Response>,
    B: FnMut(usize) -> FutB,
    FutB: Future<Output = Response>,
{
    for i in 0..warmup {
        for side in super::paired::rotation(i, 2) {
            let _ = if side == 0 { a(i).await } else { b(i).await };
        }
    }
    let (mut tally_a, mut tally_b) = (Tally::default(), Tally::default());
    for i in warmup..warmup + count {
        for side in super::paired::rotation(i, 2) {
            if side == 0 {
                timed(&mut a, i, &mut tally_a, &check).await;
            } else {
                timed(&mut b, i, &mut tally_b, &check).await;
            }
        }
    }
    (tally_a.finish(), tally_b.finish())
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
                let mut tally = Tally::default();
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= calls {
                        break;
                    }
                    let t = Instant::now();
                    let response = call(client.clone(), index).await;
                    tally.add(index, response, ms(t.elapsed()), &check);
                }
                tally
            })
        })
        .collect();
    let mut all = Tally::default();
    for worker in workers {
        match worker.await {
            Ok(tally) => all.merge(tally),
            Err(join) => all.error(format!("load worker panicked: {join}")),
        }
    }
    let duration = started.elapsed();
    Load {
        in_flight,
        calls,
        errors: all.errors,
        first_error: all.first_error,
        duration_ms: ms(duration),
        throughput_per_sec: all.latencies.len() as f64 / duration.as_secs_f64().max(1e-9),
        latency: Distribution::from_ms(all.latencies),
        server_cpu_us_per_call: None,
        launcher_cpu_us_per_call: None,
        driver_cpu_us_per_call: None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use rmcp::model::ContentBlock;

    use super::*;

    fn answer(text: &str) -> Response {
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    #[tokio::test]
    async fn alternating_takes_turns_and_tallies_each_side_apart() {
        let order = Arc::new(Mutex::new(Vec::new()));
        let side = |name: &'static str| {
            let order = order.clone();
            move |i: usize| {
                order
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((name, i));
                // `b` answers request 3 wrongly.
                std::future::ready(answer(if name == "b" && i == 3 {
                    "wrong"
                } else {
                    "right"
                }))
            }
        };
        let check: Check = Arc::new(|_, r| {
            let text = r
                .content
                .first()
                .and_then(|c| c.as_text())
                .map(|t| t.text.as_str());
            if text == Some("right") {
                Ok(())
            } else {
                Err("a wrong answer".into())
            }
        });
        let (a, b) = alternating(1, 4, side("a"), side("b"), check).await;
        let order = order.lock().unwrap_or_else(|p| p.into_inner()).clone();
        assert_eq!(
            order,
            [
                ("a", 0),
                ("b", 0),
                ("b", 1),
                ("a", 1),
                ("a", 2),
                ("b", 2),
                ("b", 3),
                ("a", 3),
                ("a", 4),
                ("b", 4),
            ]
        );
        assert_eq!(a.errors, 0);
        assert_eq!(a.latency.as_ref().map(|l| l.samples), Some(4));
        assert_eq!(b.errors, 1);
        assert_eq!(b.first_error.as_deref(), Some("a wrong answer"));
        assert_eq!(b.latency.as_ref().map(|l| l.samples), Some(3));
    }
}
