//! Per-call cost across catalog sizes, measured side by side: one server of
//! the same command per shape (the run's smallest catalog and each of its
//! largest), all up at once and called in rotation — a block of calls to one
//! side, then a block to the next, round `i` starting with side `i mod n` —
//! so a machine whose load drifts during the run weighs on every side alike.
//! Shapes measured one after another cannot show a 10% difference on a
//! shared machine: its load moves more than that between them. The first
//! calls of each block are not timed (the process just woke up and its
//! caches belong to the other servers), so the figure is the steady
//! per-call cost, like the direct call's. Only one call is ever in flight,
//! so the servers never compete for the cores.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::checks;
use super::client::Client;
use super::target::{TargetSpec, first_list, protocol_env};
use crate::cpu;
use crate::launcher::{LaunchSpec, ServerProcess};
use crate::plan::{Plan, Shape};
use crate::report::model::{Paired, PairedSide};
use crate::stats::{Distribution, ms};
use crate::synthetic::{address, marker};

/// The shapes to compare: the smallest catalog of the run and every shape of
/// the largest size (large and wide are both 10,000 tools). Empty when the
/// run has only one catalog size.
pub fn sides(shapes: &[Shape]) -> Vec<Shape> {
    let Some(smallest) = shapes.iter().min_by_key(|s| s.total_tools()) else {
        return Vec::new();
    };
    let largest = shapes.iter().map(Shape::total_tools).max().unwrap_or(0);
    if largest == smallest.total_tools() {
        return Vec::new();
    }
    let mut sides = vec![smallest.clone()];
    for shape in shapes.iter().filter(|s| s.total_tools() == largest) {
        if !sides.contains(shape) {
            sides.push(shape.clone());
        }
    }
    sides
}

/// Calls to one side before the rotation moves on.
pub const BLOCK: usize = 25;
/// Calls at the start of each block that are made but not timed.
pub const SETTLE: usize = 5;

/// The order of round `round` over `n` sides: a rotation, so each side
/// comes first, second, … equally often.
pub fn rotation(round: usize, n: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |k| (round + k) % n)
}

struct Side {
    server: ServerProcess,
    client: Arc<Client>,
    address: String,
}

impl Side {
    async fn call(&self, value: usize) -> anyhow::Result<rmcp::model::CallToolResult> {
        self.client
            .call(
                "call_tool",
                json!({"address": &self.address, "args": {"value": value}, "resultMode": "value"}),
            )
            .await
    }

    fn cpu_seconds(&self) -> Option<f64> {
        self.server
            .server_pid()
            .and_then(|pid| cpu::tree_cpu_seconds(pid).ok())
    }
}

async fn start(
    target: &TargetSpec,
    shape: &Shape,
    plan: &Plan,
    logs: &Path,
) -> anyhow::Result<Side> {
    let spec = LaunchSpec {
        command: target.command.clone(),
        env: protocol_env(shape),
        ready_timeout: Duration::from_secs(plan.ready_timeout_secs),
        log_file: Some(logs.join(format!("paired-{}.log", shape.name))),
    };
    let server = ServerProcess::launch(&spec).await?;
    let (c, t) = shape.probe();
    let address = address(c, t);
    let ready = async {
        let (client, _, _) = first_list(
            &server.mcp_url(),
            Duration::from_secs(plan.ready_timeout_secs),
            plan.driver,
        )
        .await?;
        // Load every catalog the way an agent does, by searching; not timed.
        let found = client
            .call("search_tools", json!({"query": marker(c, t)}))
            .await?;
        checks::mentions(&found, &address).map_err(|e| anyhow::anyhow!(e))?;
        anyhow::Ok(client)
    }
    .await;
    let client = match ready {
        Ok(client) => client,
        Err(e) => {
            let _ = server.stop(Duration::from_secs(10)).await;
            return Err(e);
        }
    };
    let side = Side {
        server,
        client: Arc::new(client),
        address,
    };
    // Warm the call path; not timed.
    for i in 0..plan.warmup {
        let _ = side.call(i).await;
    }
    Ok(side)
}

/// What one side gathered over every instance.
#[derive(Default)]
struct Tally {
    latencies: Vec<f64>,
    instance_p50_ms: Vec<f64>,
    errors: usize,
    first_error: Option<String>,
    cpu_seconds: Option<f64>,
    calls_made: usize,
}

/// Start every side, call them in rotation until each has its share of
/// `plan.paired_calls` timed calls, stop them; `plan.paired_instances`
/// times, with fresh servers each time, so that what one process happened
/// to get (its memory layout, its threads' cores) is averaged out. The CPU
/// each server spent over the rounds, divided by the calls it answered, is
/// its CPU per call.
pub async fn measure(
    target: &TargetSpec,
    shapes: &[Shape],
    plan: &Plan,
    logs: &Path,
) -> anyhow::Result<Paired> {
    let instances = plan.paired_instances.max(1);
    let per_instance = plan.paired_calls.div_ceil(instances);
    let mut tallies: Vec<Tally> = shapes.iter().map(|_| Tally::default()).collect();
    let started = Instant::now();
    for instance in 0..instances {
        let mut sides = Vec::with_capacity(shapes.len());
        let mut failure = None;
        for shape in shapes {
            match start(target, shape, plan, logs).await {
                Ok(side) => sides.push(side),
                Err(e) => {
                    failure = Some(e.context(format!(
                        "starting the {} side (instance {})",
                        shape.name,
                        instance + 1
                    )));
                    break;
                }
            }
        }
        if failure.is_none() {
            rounds(&mut sides, per_instance, &mut tallies).await;
        }
        for side in sides {
            let _ = side.server.stop(Duration::from_secs(10)).await;
        }
        if let Some(e) = failure {
            return Err(e);
        }
    }
    let wall_ms = ms(started.elapsed());
    let sides = shapes
        .iter()
        .zip(tallies)
        .map(|(shape, t)| PairedSide {
            shape: shape.name.clone(),
            tools: shape.total_tools(),
            latency: Distribution::from_ms(t.latencies),
            instance_p50_ms: t.instance_p50_ms,
            errors: t.errors,
            first_error: t.first_error,
            // Every call made, settling ones included, cost CPU.
            server_cpu_us_per_call: t.cpu_seconds.map(|s| s * 1e6 / t.calls_made.max(1) as f64),
        })
        .collect();
    Ok(Paired {
        calls: per_instance * instances,
        instances,
        block: BLOCK,
        settle: SETTLE,
        wall_ms,
        sides,
    })
}

/// Calls to each side until it has `count` timed ones, tallied.
async fn rounds(sides: &mut [Side], count: usize, tallies: &mut [Tally]) {
    let cpu_before: Vec<Option<f64>> = sides.iter().map(Side::cpu_seconds).collect();
    let first: Vec<usize> = tallies.iter().map(|t| t.latencies.len()).collect();
    let blocks = count.div_ceil(BLOCK - SETTLE);
    let mut made = 0usize;
    for round in 0..blocks {
        let timed = (count - round * (BLOCK - SETTLE)).min(BLOCK - SETTLE);
        for k in rotation(round, sides.len()) {
            let (side, tally) = (&sides[k], &mut tallies[k]);
            for j in 0..SETTLE + timed {
                let value = made + j;
                let t = Instant::now();
                let response = side.call(value).await;
                let elapsed = ms(t.elapsed());
                let judged = response
                    .map_err(|e| format!("{e:#}"))
                    .and_then(|r| checks::echoes(&r, value as i64));
                match judged {
                    Ok(()) if j >= SETTLE => tally.latencies.push(elapsed),
                    Ok(()) => {}
                    Err(e) => {
                        tally.errors += 1;
                        tally.first_error.get_or_insert(e);
                    }
                }
            }
        }
        made += SETTLE + timed;
    }
    for ((side, tally), (before, first)) in sides
        .iter()
        .zip(tallies.iter_mut())
        .zip(cpu_before.into_iter().zip(first))
    {
        // One unreadable instance makes the sum unknown.
        let spent = before.zip(side.cpu_seconds()).map(|(b, a)| a - b);
        tally.cpu_seconds = if tally.calls_made == 0 {
            spent
        } else {
            tally.cpu_seconds.zip(spent).map(|(total, s)| total + s)
        };
        tally.calls_made += made;
        let mut mine = tally.latencies[first..].to_vec();
        mine.sort_by(f64::total_cmp);
        if let Some(p50) = crate::stats::percentile(&mine, 0.5) {
            tally.instance_p50_ms.push(p50);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_shape_is_set_beside_every_largest_one() {
        let names = |shapes: Vec<Shape>| shapes.into_iter().map(|s| s.name).collect::<Vec<_>>();
        assert_eq!(names(sides(&Shape::standard())), ["small", "large", "wide"]);
        assert_eq!(
            names(sides(&[Shape::new("a", 2, 5), Shape::new("b", 1, 5)])),
            ["b", "a"]
        );
        assert!(sides(&[Shape::new("a", 2, 5), Shape::new("b", 5, 2)]).is_empty());
        assert!(sides(&[]).is_empty());
    }

    #[test]
    fn each_side_leads_a_round_in_turn() {
        let orders: Vec<Vec<usize>> = (0..3).map(|r| rotation(r, 3).collect()).collect();
        assert_eq!(orders, [[0, 1, 2], [1, 2, 0], [2, 0, 1]]);
    }
}
