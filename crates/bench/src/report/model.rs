//! The report's data: what `report.json` holds and `report.md` renders.
//! Every figure is either measured, skipped (with the reason), or failed
//! (with the error): nothing is left blank and nothing is filled in.

use serde::Serialize;

use crate::launcher::StopOutcome;
use crate::machine::LoadWindow;
use crate::plan::{Plan, Shape};
use crate::relay::RelayKind;
use crate::rss::TreeMemory;
use crate::stats::Distribution;

/// One figure's outcome.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", content = "value", rename_all = "camelCase")]
pub enum Figure<T> {
    Measured(T),
    Skipped(String),
    Failed(String),
}

impl<T> Figure<T> {
    pub fn measured(&self) -> Option<&T> {
        match self {
            Figure::Measured(v) => Some(v),
            _ => None,
        }
    }

    pub fn from_result(result: anyhow::Result<T>) -> Self {
        match result {
            Ok(v) => Figure::Measured(v),
            Err(e) => Figure::Failed(format!("{e:#}")),
        }
    }
}

impl Figure<Samples> {
    /// The p50 of the successful samples, if there were any.
    pub fn p50_ms(&self) -> Option<f64> {
        self.measured()?.latency.as_ref().map(|l| l.p50_ms)
    }
}

/// Repeated samples of one request.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Samples {
    /// Latency of the successful samples; `None` if none succeeded.
    pub latency: Option<Distribution>,
    /// Samples that failed (transport error or a failed check).
    pub errors: usize,
    /// The first failure, for diagnosis.
    pub first_error: Option<String>,
    /// One response as received, shortened.
    pub sample_response: Option<String>,
}

/// A single timed request (the cold figures).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Single {
    pub ms: f64,
    pub sample_response: Option<String>,
}

/// Spawn to readiness.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Startup {
    /// Spawn to the ready line.
    pub ready_line_ms: f64,
    /// Spawn to the first successful `tools/list` (handshake included).
    pub first_list_ms: f64,
    /// `first_list_ms` minus the time a wrapping launcher spent before it
    /// started the server (its `spawnedAfterMs`), when it said.
    pub server_only_ms: Option<f64>,
}

/// What `tools/list` and `initialize` cost a conversation.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsList {
    pub tool_count: usize,
    pub tool_names: Vec<String>,
    pub pages: usize,
    /// Compact JSON of the `tools` array.
    pub tools_bytes: usize,
    /// UTF-8 bytes of the server's `instructions`.
    pub instructions_bytes: usize,
    /// Time for the whole walk (all pages).
    pub walk_ms: f64,
}

/// One load level.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Load {
    pub in_flight: usize,
    pub calls: usize,
    pub errors: usize,
    pub first_error: Option<String>,
    pub duration_ms: f64,
    /// Successful calls per second of wall time.
    pub throughput_per_sec: f64,
    pub latency: Option<Distribution>,
    /// CPU of the server and its descendants per call, in microseconds
    /// (10 ms tick resolution over the whole level).
    pub server_cpu_us_per_call: Option<f64>,
    /// CPU of the launched wrapper per call, when the server is not the
    /// launched process (for `serve-synthetic`: the in-process downstream).
    pub launcher_cpu_us_per_call: Option<f64>,
    /// CPU of this measuring process per call: on a small machine the
    /// client competes with the server for the same cores.
    pub driver_cpu_us_per_call: Option<f64>,
}

/// One soak round and the memory after it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SoakRound {
    pub round: usize,
    pub load: Load,
    pub server_rss_bytes: Option<u64>,
    pub workers_rss_bytes: Option<u64>,
}

/// The figures of one server command at one shape.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetReport {
    pub label: String,
    pub command: String,
    pub startup: Figure<Startup>,
    pub tools_list: Figure<ToolsList>,
    /// First `search_tools` after boot (the marker query).
    pub search_cold: Figure<Single>,
    /// The same first search on a second boot, made only after the server
    /// has been up and idle for the plan's settle: what a search costs
    /// before any search ran, without the downstream catalog fetch.
    pub search_cold_settled: Figure<Single>,
    /// The marker query (matches one tool), warm.
    pub search_warm: Figure<Samples>,
    /// A natural-language query, warm.
    pub search_natural: Figure<Samples>,
    /// A query every tool matches, warm.
    pub search_all: Figure<Samples>,
    /// A query nothing matches, warm.
    pub search_negative: Figure<Samples>,
    pub direct_call: Figure<Samples>,
    /// First `execute_code` after boot: a no-op program.
    pub execute_cold: Figure<Single>,
    /// A program with one host call.
    pub execute_warm: Figure<Samples>,
    /// A program with one 10-call `connecta.batch`.
    pub batch: Figure<Samples>,
    pub memory_before_load: Figure<TreeMemory>,
    pub load: Vec<Figure<Load>>,
    pub memory_after_load: Figure<TreeMemory>,
    pub soak: Figure<Vec<SoakRound>>,
    pub stop: Figure<StopOutcome>,
}

/// The synthetic downstream measured directly with the same client.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DownstreamReport {
    pub startup: Figure<Startup>,
    /// The connector that is called, listed to the end (pagination walk).
    pub tools_list: Figure<ToolsList>,
    pub direct_call: Figure<Samples>,
    /// Measured through the relay only: the same downstream called
    /// directly, in turn with `direct_call` call by call, so the two differ
    /// by the hop and not by when they ran.
    pub alongside: Figure<Samples>,
    pub load: Vec<Figure<Load>>,
    pub memory_after_load: Figure<TreeMemory>,
    pub stop: Figure<StopOutcome>,
}

impl DownstreamReport {
    /// What the relay's hop adds to the direct call's p50: `direct_call`
    /// minus `alongside`, calls made in turn; `None` without both (the
    /// downstream measured alone has no `alongside`).
    pub fn hop_p50_ms(&self) -> Option<f64> {
        Some(self.direct_call.p50_ms()? - self.alongside.p50_ms()?)
    }
}

/// Everything measured at one shape.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShapeReport {
    pub shape: Shape,
    pub downstream: Figure<DownstreamReport>,
    /// The same downstream measured through a TCP relay (`crate::relay`):
    /// the downstream plus one loopback hop, the floor of a gateway's added
    /// cost. Its server figures (CPU per call, memory) are the relay's.
    pub tcp_relayed: Figure<DownstreamReport>,
    /// The same downstream through the HTTP relay (`crate::relay`): the
    /// hop and connecta's HTTP stacks (axum, reqwest), no MCP. Its server
    /// figures are that relay's.
    pub http_relayed: Figure<DownstreamReport>,
    pub targets: Vec<TargetReport>,
    /// How busy the machine was while this shape was measured.
    pub machine_load: LoadWindow,
}

impl ShapeReport {
    /// The downstream measured through a `kind` relay.
    pub fn through(&self, kind: RelayKind) -> &Figure<DownstreamReport> {
        match kind {
            RelayKind::Tcp => &self.tcp_relayed,
            RelayKind::Http => &self.http_relayed,
        }
    }
}

/// One side of the paired per-call measurement.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairedSide {
    pub shape: String,
    pub tools: usize,
    /// Latency of the successful calls; `None` if none succeeded.
    pub latency: Option<Distribution>,
    /// The p50 of each instance's calls, in order.
    pub instance_p50_ms: Vec<f64>,
    pub errors: usize,
    pub first_error: Option<String>,
    pub server_cpu_us_per_call: Option<f64>,
}

/// Direct calls to servers of several catalog sizes, up at once and called
/// in rotation (see `measure::paired`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Paired {
    /// Timed calls per side, over every instance.
    pub calls: usize,
    /// Fresh servers started per side, one after another.
    pub instances: usize,
    /// Calls to one side before the rotation moves on.
    pub block: usize,
    /// Untimed calls at the start of each block.
    pub settle: usize,
    pub wall_ms: f64,
    pub sides: Vec<PairedSide>,
}

/// The paired measurement of one target.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairedReport {
    pub label: String,
    pub paired: Figure<Paired>,
    /// How busy the machine was meanwhile.
    pub machine_load: LoadWindow,
}

/// Where and how the run happened.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    pub cpus: usize,
    pub cpu_model: Option<String>,
    pub kernel: Option<String>,
    pub memory_total_bytes: Option<u64>,
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema_version: u32,
    pub generated_at: String,
    pub mode: String,
    pub source_commit: Option<String>,
    pub machine: Machine,
    pub plan: Plan,
    pub shapes: Vec<ShapeReport>,
    /// Per-call cost across catalog sizes, per target; empty when the run
    /// has one catalog size.
    pub paired: Vec<PairedReport>,
    /// How busy the machine was over the whole run.
    pub machine_load: LoadWindow,
    pub wall_seconds: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(ms: &[f64]) -> Figure<Samples> {
        Figure::Measured(Samples {
            latency: Distribution::from_ms(ms.to_vec()),
            errors: 0,
            first_error: None,
            sample_response: None,
        })
    }

    fn report(direct_call: Figure<Samples>, alongside: Figure<Samples>) -> DownstreamReport {
        DownstreamReport {
            startup: Figure::Skipped("not measured here".into()),
            tools_list: Figure::Skipped("not measured here".into()),
            direct_call,
            alongside,
            load: Vec::new(),
            memory_after_load: Figure::Skipped("not measured here".into()),
            stop: Figure::Skipped("not measured here".into()),
        }
    }

    #[test]
    fn the_hop_is_the_relayed_p50_minus_the_straight_p50_of_calls_made_in_turn() {
        let relayed = report(samples(&[0.30, 0.32, 0.40]), samples(&[0.25, 0.26, 0.50]));
        let hop = relayed.hop_p50_ms().expect("both measured");
        assert!((hop - 0.06).abs() < 1e-9, "{hop}");
        // The downstream measured alone has no calls in turn: no hop.
        let alone = report(
            samples(&[0.30]),
            Figure::Skipped("measured only through the relay".into()),
        );
        assert_eq!(alone.hop_p50_ms(), None);
        // Nor when every call through the relay failed.
        let failed = report(samples(&[]), samples(&[0.25]));
        assert_eq!(failed.hop_p50_ms(), None);
    }
}
