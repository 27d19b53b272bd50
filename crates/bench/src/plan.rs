//! What a run measures: the catalog shapes and how many samples of each
//! figure. The full plan meets PERFORMANCE.md's sample counts (≥ 2,000 calls
//! per load level, ≥ 500 `execute_code` samples); the quick plan is for
//! routine use and says so in its report.

use serde::Serialize;

use crate::measure::Driver;

/// A synthetic catalog shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shape {
    pub name: String,
    pub connectors: usize,
    pub tools_per_connector: usize,
}

impl Shape {
    pub fn new(name: &str, connectors: usize, tools_per_connector: usize) -> Self {
        Self {
            name: name.to_owned(),
            connectors,
            tools_per_connector,
        }
    }

    pub fn total_tools(&self) -> usize {
        self.connectors * self.tools_per_connector
    }

    /// The four shapes of PERFORMANCE.md (the reference's logic lane).
    pub fn standard() -> Vec<Shape> {
        vec![
            Shape::new("small", 10, 10),
            Shape::new("medium", 25, 40),
            Shape::new("large", 100, 100),
            Shape::new("wide", 1, 10_000),
        ]
    }

    /// A standard shape by name, or a custom one written `<C>x<T>`.
    pub fn parse(text: &str) -> Result<Shape, String> {
        let text = text.trim();
        if let Some(shape) = Shape::standard().into_iter().find(|s| s.name == text) {
            return Ok(shape);
        }
        let (c, t) = text.split_once('x').ok_or_else(|| {
            format!("unknown shape {text:?} (small, medium, large, wide, or <C>x<T>)")
        })?;
        let c: usize = c
            .parse()
            .map_err(|_| format!("bad connector count in {text:?}"))?;
        let t: usize = t
            .parse()
            .map_err(|_| format!("bad tool count in {text:?}"))?;
        if c == 0 || t == 0 {
            return Err(format!("shape {text:?} has no tools"));
        }
        Ok(Shape::new(text, c, t))
    }

    /// The last connector's last tool: the address every call uses, as the
    /// reference harness does (the end of the catalog, not its start).
    pub fn probe(&self) -> (usize, usize) {
        (self.connectors - 1, self.tools_per_connector - 1)
    }
}

/// Sample counts.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub name: String,
    /// Warm samples of each search query and of the direct call.
    pub samples: usize,
    /// Requests before the warm samples that are not counted.
    pub warmup: usize,
    pub execute_samples: usize,
    pub batch_samples: usize,
    /// Calls per load level.
    pub load_calls: usize,
    pub in_flight: Vec<usize>,
    pub soak_rounds: usize,
    pub soak_calls: usize,
    pub soak_in_flight: usize,
    /// Seconds a second boot stays idle after its first `tools/list` before
    /// the settled cold search.
    pub cold_settle_secs: u64,
    /// Timed calls per side of the side-by-side per-call measurement…
    pub paired_calls: usize,
    /// …spread over this many fresh sets of servers.
    pub paired_instances: usize,
    /// Seconds a server may take to print its ready line.
    pub ready_timeout_secs: u64,
    /// The client that measures.
    pub driver: Driver,
}

impl Plan {
    pub fn full() -> Self {
        Self {
            name: "full".into(),
            samples: 500,
            warmup: 20,
            execute_samples: 500,
            batch_samples: 100,
            load_calls: 2_000,
            in_flight: vec![1, 16, 64],
            soak_rounds: 5,
            soak_calls: 2_000,
            soak_in_flight: 16,
            cold_settle_secs: 3,
            paired_calls: 4_000,
            paired_instances: 4,
            ready_timeout_secs: 120,
            driver: Driver::Rmcp,
        }
    }

    pub fn quick() -> Self {
        Self {
            name: "quick".into(),
            samples: 100,
            warmup: 10,
            execute_samples: 100,
            batch_samples: 20,
            load_calls: 500,
            in_flight: vec![1, 16, 64],
            soak_rounds: 3,
            soak_calls: 500,
            soak_in_flight: 16,
            cold_settle_secs: 2,
            paired_calls: 500,
            paired_instances: 1,
            ready_timeout_secs: 60,
            driver: Driver::Rmcp,
        }
    }

    /// The most clients any load level needs.
    pub fn max_in_flight(&self) -> usize {
        self.in_flight
            .iter()
            .copied()
            .chain([self.soak_in_flight])
            .max()
            .unwrap_or(1)
    }

    /// True when the plan meets PERFORMANCE.md's sample counts.
    pub fn qualifies(&self) -> bool {
        self.load_calls >= 2_000 && self.execute_samples >= 500
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_by_name_and_by_size() {
        assert_eq!(Shape::parse("large").map(|s| s.total_tools()), Ok(10_000));
        assert_eq!(Shape::parse("wide").map(|s| s.connectors), Ok(1));
        assert_eq!(Shape::parse("3x5"), Ok(Shape::new("3x5", 3, 5)));
        assert!(Shape::parse("0x5").is_err());
        assert!(Shape::parse("huge").is_err());
    }
}
