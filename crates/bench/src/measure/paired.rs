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
    shape: Shape,
    server: ServerProcess,
    client: Arc<Client>,
    address: String,
    latencies: Vec<f64>,
    errors: usize,
    first_error: Option<String>,
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
    let (client, _, _) = first_list(
        &server.mcp_url(),
        Duration::from_secs(plan.ready_timeout_secs),
        plan.driver,
    )
    .await?;
    let (c, t) = shape.probe();
    let side = Side {
        shape: shape.clone(),
        server,
        client: Arc::new(client),
        address: address(c, t),
        latencies: Vec::with_capacity(plan.paired_calls),
        errors: 0,
        first_error: None,
    };
    // Load every catalog the way an agent does, by searching, then warm the
    // call path; neither is timed.
    let found = side
        .client
        .call("search_tools", json!({"query": marker(c, t)}))
        .await?;
    checks::mentions(&found, &side.address).map_err(|e| anyhow::anyhow!(e))?;
    for i in 0..plan.warmup {
        let _ = side.call(i).await;
    }
    Ok(side)
}

/// Start every side, call them in rotation until each has
/// `plan.paired_calls` timed calls, stop them. The CPU each server spent
/// over the rounds, divided by the calls it answered, is its CPU per call.
pub async fn measure(
    target: &TargetSpec,
    shapes: &[Shape],
    plan: &Plan,
    logs: &Path,
) -> anyhow::Result<Paired> {
    let mut sides = Vec::with_capacity(shapes.len());
    let mut failure = None;
    for shape in shapes {
        match start(target, shape, plan, logs).await {
            Ok(side) => sides.push(side),
            Err(e) => {
                failure = Some(e.context(format!("starting the {} side", shape.name)));
                break;
            }
        }
    }
    let measured = match failure {
        Some(e) => Err(e),
        None => Ok(rounds(&mut sides, plan.paired_calls).await),
    };
    for side in sides {
        let _ = side.server.stop(Duration::from_secs(10)).await;
    }
    measured
}

/// Calls to each side until it has `count` timed ones.
async fn rounds(sides: &mut [Side], count: usize) -> Paired {
    let cpu_before: Vec<Option<f64>> = sides.iter().map(Side::cpu_seconds).collect();
    let started = Instant::now();
    let blocks = count.div_ceil(BLOCK - SETTLE);
    let mut made = 0usize;
    for round in 0..blocks {
        let timed = (count - round * (BLOCK - SETTLE)).min(BLOCK - SETTLE);
        for k in rotation(round, sides.len()) {
            let side = &mut sides[k];
            for j in 0..SETTLE + timed {
                let value = made + j;
                let t = Instant::now();
                let response = side.call(value).await;
                let elapsed = ms(t.elapsed());
                let judged = response
                    .map_err(|e| format!("{e:#}"))
                    .and_then(|r| checks::echoes(&r, value as i64));
                match judged {
                    Ok(()) if j >= SETTLE => side.latencies.push(elapsed),
                    Ok(()) => {}
                    Err(e) => {
                        side.errors += 1;
                        side.first_error.get_or_insert(e);
                    }
                }
            }
        }
        made += SETTLE + timed;
    }
    let wall_ms = ms(started.elapsed());
    let sides = sides
        .iter_mut()
        .zip(cpu_before)
        .map(|(side, before)| PairedSide {
            shape: side.shape.name.clone(),
            tools: side.shape.total_tools(),
            latency: Distribution::from_ms(std::mem::take(&mut side.latencies)),
            errors: side.errors,
            first_error: side.first_error.take(),
            // Every call made, settling ones included, cost CPU.
            server_cpu_us_per_call: before
                .zip(side.cpu_seconds())
                .map(|(b, a)| (a - b) * 1e6 / made.max(1) as f64),
        })
        .collect();
    Paired {
        calls: count,
        block: BLOCK,
        settle: SETTLE,
        wall_ms,
        sides,
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
