//! Latency distributions. Percentiles are nearest-rank (the smallest sample
//! with at least `p`% of samples at or below it), the method the reference
//! harness uses, so p50/p95/p99 compare like for like. No interpolation: a
//! reported p99 is a latency some request actually had.

use std::time::Duration;

use serde::Serialize;

/// Nearest-rank percentile of an ascending slice; `fraction` in `[0, 1]`.
/// `None` for an empty slice.
pub fn percentile(sorted: &[f64], fraction: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (sorted.len() as f64 * fraction.clamp(0.0, 1.0)).ceil() as usize;
    Some(sorted[rank.saturating_sub(1).min(sorted.len() - 1)])
}

/// Summary of a set of latencies, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Distribution {
    pub samples: usize,
    pub min_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
}

impl Distribution {
    /// `None` when there are no samples: a figure without samples is not a
    /// figure.
    pub fn from_ms(mut values: Vec<f64>) -> Option<Self> {
        values.retain(|v| v.is_finite());
        values.sort_by(f64::total_cmp);
        let p = |f| percentile(&values, f);
        Some(Self {
            samples: values.len(),
            min_ms: *values.first()?,
            p50_ms: p(0.50)?,
            p95_ms: p(0.95)?,
            p99_ms: p(0.99)?,
            max_ms: *values.last()?,
            mean_ms: values.iter().sum::<f64>() / values.len() as f64,
        })
    }

    pub fn from_durations(values: &[Duration]) -> Option<Self> {
        Self::from_ms(values.iter().map(|d| ms(*d)).collect())
    }
}

/// A duration in fractional milliseconds.
pub fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
