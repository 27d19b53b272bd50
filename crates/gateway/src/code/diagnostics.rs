//! Opt-in, request-local, payload-free diagnostics for one program run
//! (contract R6–R8, M10): timings and sizes as numbers, operation names from
//! a fixed set, nothing else — no addresses, arguments, results or code.

use std::time::Duration;

use serde_json::{Map, Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Search,
    Describe,
    Call,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Search => "search",
            Op::Describe => "describe",
            Op::Call => "call",
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Aggregate {
    count: u64,
    failures: u64,
    duration: Duration,
    bytes: u64,
    catalog: Duration,
    connector: Duration,
    children: u64,
}

impl Aggregate {
    fn to_value(&self, batch: bool) -> Value {
        let mut v = json!({
            "count": self.count,
            "failures": self.failures,
            "durationMs": ms(self.duration),
            "bytes": self.bytes,
            "catalogMs": ms(self.catalog),
            "connectorMs": ms(self.connector),
        });
        if batch {
            v["children"] = json!(self.children);
        }
        v
    }
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0
}

#[derive(Debug, Default)]
pub(crate) struct Diagnostics {
    ops: [Aggregate; 3],
    batch: Aggregate,
}

impl Diagnostics {
    pub(crate) fn record(
        &mut self,
        op: Op,
        duration: Duration,
        ok: bool,
        bytes: usize,
        split: Option<(Duration, Duration)>,
    ) {
        let a = &mut self.ops[op as usize];
        a.count += 1;
        a.failures += u64::from(!ok);
        a.duration += duration;
        a.bytes += bytes as u64;
        if let Some((catalog, connector)) = split {
            a.catalog += catalog;
            a.connector += connector;
        }
    }

    pub(crate) fn record_batch(
        &mut self,
        duration: Duration,
        children: usize,
        failures: usize,
        bytes: usize,
        catalog: Duration,
        connector: Duration,
    ) {
        let b = &mut self.batch;
        b.count += 1;
        b.failures += failures as u64;
        b.duration += duration;
        b.bytes += bytes as u64;
        b.catalog += catalog;
        b.connector += connector;
        b.children += children as u64;
    }

    /// The `diagnostics` block: used operation kinds only, plus timings.
    pub(crate) fn to_value(
        &self,
        admission: Duration,
        setup: Duration,
        executor: Duration,
        emitted: (usize, usize),
    ) -> Value {
        let mut operations = Map::new();
        for op in [Op::Search, Op::Describe, Op::Call] {
            let a = &self.ops[op as usize];
            if a.count > 0 {
                operations.insert(op.name().into(), a.to_value(false));
            }
        }
        if self.batch.count > 0 {
            operations.insert("batch".into(), self.batch.to_value(true));
        }
        let catalog: Duration =
            self.ops.iter().map(|a| a.catalog).sum::<Duration>() + self.batch.catalog;
        let connector: Duration =
            self.ops.iter().map(|a| a.connector).sum::<Duration>() + self.batch.connector;
        let mut v = json!({
            "timing": {
                "admissionMs": ms(admission),
                "setupMs": ms(setup),
                "executorMs": ms(executor),
                "catalogMs": ms(catalog),
                "connectorMs": ms(connector),
            },
            "operations": operations,
        });
        if emitted.0 > 0 {
            v["emitted"] = json!({"blocks": emitted.0, "bytes": emitted.1});
        }
        v
    }
}
