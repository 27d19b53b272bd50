//! Latency histograms for `/metrics`: meta-tool requests, downstream calls
//! and `execute_code` programs, each by a closed set of labels.
//!
//! Cardinality is bounded by construction: a connector label is a connector
//! id from the config file (the series live in the connector's
//! [`crate::ConnectorHandle`], so an address a caller invents has none), a
//! meta-tool label is one of the seven names or `unknown`, and an outcome is
//! `ok` or one of the taxonomy's error codes (or, for programs, one of the
//! sandbox's failure kinds). Nothing a caller writes becomes a label.
//!
//! Recording is a lock of one histogram: every series is a slot in an array
//! indexed by its outcome, filled on its first observation. The call path
//! never allocates, hashes or formats a label.
//!
//! This module knows nothing of HTTP: the server crate encodes the
//! [`MetricsCollector`] into the exposition format.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use connecta_core::error::{ErrorCode, ToolError};
use connecta_sandbox::FailureKind;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::histogram::Histogram;

use crate::meta::MetaOutput;

/// The meta-tools, as `Gateway::call_meta` knows them; any other name a
/// caller sends is counted as `unknown`.
const META_TOOL_NAMES: [&str; 7] = [
    "execute_code",
    "search_tools",
    "call_tool",
    "call_destructive_tool",
    "get_result",
    "skills",
    "authorize_connector",
];

/// Bucket bounds in seconds: from a quarter millisecond (a direct call
/// through the gateway aims below that) to half a minute (the default
/// program deadline).
pub const LATENCY_BUCKETS: [f64; 16] = [
    0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
    10.0, 30.0,
];

/// `ok` plus every error code: the outcomes of a request or a downstream call.
const CALL_OUTCOMES: usize = 1 + ErrorCode::ALL.len();

fn call_outcome<T>(result: Result<T, &ToolError>) -> usize {
    match result {
        Ok(_) => 0,
        Err(e) => outcome_of_code(e.code),
    }
}

fn outcome_of_code(code: ErrorCode) -> usize {
    // `ALL` lists every code; the fallback cannot be reached.
    1 + ErrorCode::ALL
        .iter()
        .position(|c| *c == code)
        .unwrap_or_default()
}

fn call_outcome_name(index: usize) -> &'static str {
    match index.checked_sub(1) {
        None => "ok",
        Some(i) => ErrorCode::ALL[i].as_str(),
    }
}

/// How a program ended, for `connecta_execute_code_duration_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgramOutcome {
    Ok,
    /// The request was refused before a sandbox was asked (bad arguments,
    /// colliding shortcuts, code mode not running).
    Refused,
    /// Every sandbox was busy (`executor_overloaded`).
    Overloaded,
    /// The caller went away while waiting for a sandbox.
    Cancelled,
    /// The gateway was shutting down.
    Closed,
    Failed(FailureKind),
}

const PROGRAM_OUTCOMES: [&str; 11] = [
    "ok",
    "refused",
    "overloaded",
    "cancelled",
    "closed",
    "exception",
    "timeout",
    "abort",
    "worker_exit",
    "invalid_output",
    "output_limit",
];

impl ProgramOutcome {
    fn index(self) -> usize {
        match self {
            ProgramOutcome::Ok => 0,
            ProgramOutcome::Refused => 1,
            ProgramOutcome::Overloaded => 2,
            ProgramOutcome::Cancelled => 3,
            ProgramOutcome::Closed => 4,
            ProgramOutcome::Failed(FailureKind::Exception) => 5,
            ProgramOutcome::Failed(FailureKind::Timeout) => 6,
            ProgramOutcome::Failed(FailureKind::Abort) => 7,
            ProgramOutcome::Failed(FailureKind::WorkerExit) => 8,
            ProgramOutcome::Failed(FailureKind::InvalidOutput) => 9,
            ProgramOutcome::Failed(FailureKind::OutputLimit) => 10,
        }
    }
}

/// Histograms indexed by outcome, each created on its first observation.
#[derive(Debug)]
struct Series<const N: usize>([OnceLock<Histogram>; N]);

impl<const N: usize> Series<N> {
    fn new() -> Self {
        Series(std::array::from_fn(|_| OnceLock::new()))
    }

    fn observe(&self, outcome: usize, took: Duration) {
        if let Some(slot) = self.0.get(outcome) {
            slot.get_or_init(|| Histogram::new(LATENCY_BUCKETS))
                .observe(took.as_secs_f64());
        }
    }

    /// The series observed so far, with their outcome index.
    fn observed(&self) -> impl Iterator<Item = (usize, &Histogram)> {
        self.0
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.get().map(|h| (i, h)))
    }
}

/// The downstream calls of one connector, by outcome. Built with the
/// connector from config, so its label is never caller text.
#[derive(Debug)]
pub struct ConnectorCalls {
    id: String,
    by_outcome: Series<CALL_OUTCOMES>,
}

impl ConnectorCalls {
    pub(crate) fn new(id: &str) -> ConnectorCalls {
        ConnectorCalls {
            id: id.to_owned(),
            by_outcome: Series::new(),
        }
    }

    /// One attempt of a downstream call, as the call path mapped it.
    pub(crate) fn observe<T>(&self, result: Result<T, &ToolError>, took: Duration) {
        self.by_outcome.observe(call_outcome(result), took);
    }
}

/// Every histogram the gateway records. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// By meta-tool (the seven in `META_TOOL_NAMES` order, then `unknown`).
    requests: Vec<Series<CALL_OUTCOMES>>,
    connectors: Vec<Arc<ConnectorCalls>>,
    programs: Series<{ PROGRAM_OUTCOMES.len() }>,
}

impl Metrics {
    pub(crate) fn new(connectors: Vec<Arc<ConnectorCalls>>) -> Metrics {
        Metrics {
            inner: Arc::new(Inner {
                requests: (0..=META_TOOL_NAMES.len()).map(|_| Series::new()).collect(),
                connectors,
                programs: Series::new(),
            }),
        }
    }

    /// One meta-tool call, from its arrival at the gateway to its answer.
    pub(crate) fn request(&self, tool: &str, output: &MetaOutput, took: Duration) {
        let tool = META_TOOL_NAMES
            .iter()
            .position(|n| *n == tool)
            .unwrap_or(META_TOOL_NAMES.len());
        let outcome = match output.error() {
            Some(e) => call_outcome::<()>(Err(e)),
            None => 0,
        };
        self.inner.requests[tool].observe(outcome, took);
    }

    /// One `execute_code` run, admission included.
    pub(crate) fn program(&self, outcome: ProgramOutcome, took: Duration) {
        self.inner.programs.observe(outcome.index(), took);
    }

    /// What the server registers with its Prometheus registry.
    pub fn collector(&self) -> MetricsCollector {
        MetricsCollector(self.clone())
    }
}

/// Encodes the gateway's histograms on each scrape.
#[derive(Debug)]
pub struct MetricsCollector(Metrics);

impl Collector for MetricsCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let inner = &self.0.inner;
        let mut family = encoder.encode_descriptor(
            "connecta_request_duration_seconds",
            "Meta-tool calls (tools/call over HTTP or stdio), from arrival at the gateway to the answer, by meta-tool and outcome (ok or the error code).",
            None,
            MetricType::Histogram,
        )?;
        for (t, series) in inner.requests.iter().enumerate() {
            let tool = META_TOOL_NAMES.get(t).copied().unwrap_or("unknown");
            for (o, h) in series.observed() {
                let labels = [("tool", tool), ("outcome", call_outcome_name(o))];
                h.encode(family.encode_family(&labels)?)?;
            }
        }
        let mut family = encoder.encode_descriptor(
            "connecta_downstream_call_duration_seconds",
            "Calls of a connector's tools (each attempt), by connector and outcome (ok or the error code).",
            None,
            MetricType::Histogram,
        )?;
        for c in &inner.connectors {
            for (o, h) in c.by_outcome.observed() {
                let labels = [
                    ("connector", c.id.as_str()),
                    ("outcome", call_outcome_name(o)),
                ];
                h.encode(family.encode_family(&labels)?)?;
            }
        }
        let mut family = encoder.encode_descriptor(
            "connecta_execute_code_duration_seconds",
            "execute_code programs, admission included, by outcome.",
            None,
            MetricType::Histogram,
        )?;
        for (o, h) in inner.programs.observed() {
            let labels = [("outcome", PROGRAM_OUTCOMES[o])];
            h.encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_has_a_distinct_closed_name() {
        let names: Vec<&str> = (0..CALL_OUTCOMES).map(call_outcome_name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        assert_eq!(names[0], "ok");
        for code in ErrorCode::ALL {
            assert_eq!(call_outcome_name(outcome_of_code(*code)), code.as_str());
        }
        let kinds = [
            FailureKind::Exception,
            FailureKind::Timeout,
            FailureKind::Abort,
            FailureKind::WorkerExit,
            FailureKind::InvalidOutput,
            FailureKind::OutputLimit,
        ];
        let mut seen: Vec<usize> = kinds
            .iter()
            .map(|k| ProgramOutcome::Failed(*k).index())
            .collect();
        seen.extend(
            [
                ProgramOutcome::Ok,
                ProgramOutcome::Refused,
                ProgramOutcome::Overloaded,
                ProgramOutcome::Cancelled,
                ProgramOutcome::Closed,
            ]
            .map(ProgramOutcome::index),
        );
        seen.sort_unstable();
        assert_eq!(seen, (0..PROGRAM_OUTCOMES.len()).collect::<Vec<_>>());
    }

    #[test]
    fn an_unknown_meta_tool_shares_one_series() {
        let m = Metrics::new(Vec::new());
        let ok = MetaOutput::value(serde_json::json!({}));
        m.request("invented-by-a-caller-1", &ok, Duration::from_millis(1));
        m.request("invented-by-a-caller-2", &ok, Duration::from_millis(1));
        let unknown = &m.inner.requests[META_TOOL_NAMES.len()];
        let observed: Vec<usize> = unknown.observed().map(|(i, _)| i).collect();
        assert_eq!(observed, vec![0]);
    }
}
