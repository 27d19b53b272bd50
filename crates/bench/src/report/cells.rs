//! Turning figures into table cells: a number with its unit, or a word that
//! says why there is no number. Error counts travel with the number.

use super::model::{Figure, Load, Samples, TargetReport};
use crate::stats::Distribution;

/// One table cell before formatting.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Value { value: f64, errors: usize },
    Skipped,
    Failed,
    Missing,
}

impl Cell {
    pub fn value(&self) -> Option<f64> {
        match self {
            Cell::Value { value, .. } => Some(*value),
            _ => None,
        }
    }

    pub fn of(value: Option<f64>) -> Self {
        value.map_or(Cell::Missing, |value| Cell::Value { value, errors: 0 })
    }

    /// A field of a figure, or why there is none.
    pub fn from_figure<T>(figure: &Figure<T>, pick: impl Fn(&T) -> Option<f64>) -> Self {
        match figure {
            Figure::Measured(v) => Cell::of(pick(v)),
            Figure::Skipped(_) => Cell::Skipped,
            Figure::Failed(_) => Cell::Failed,
        }
    }

    /// A statistic of a sampled figure, carrying its error count.
    pub fn from_samples(figure: &Figure<Samples>, stat: fn(&Distribution) -> f64) -> Self {
        match figure {
            Figure::Measured(s) => match &s.latency {
                Some(d) => Cell::Value {
                    value: stat(d),
                    errors: s.errors,
                },
                None => Cell::Failed,
            },
            Figure::Skipped(_) => Cell::Skipped,
            Figure::Failed(_) => Cell::Failed,
        }
    }

    /// A figure of the load level at `in_flight`; `absent` when the level
    /// was measured but `pick` finds nothing in it.
    pub fn from_load(
        loads: &[Figure<Load>],
        in_flight: usize,
        pick: impl Fn(&Load) -> Option<f64>,
        absent: Cell,
    ) -> Self {
        let found = loads.iter().find(|l| match l {
            Figure::Measured(load) => load.in_flight == in_flight,
            _ => true,
        });
        match found {
            Some(Figure::Measured(load)) => match pick(load) {
                Some(value) => Cell::Value {
                    value,
                    errors: load.errors,
                },
                None => absent,
            },
            Some(Figure::Skipped(_)) => Cell::Skipped,
            Some(Figure::Failed(_)) => Cell::Failed,
            None => Cell::Missing,
        }
    }
}

/// How a row's numbers are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Ms,
    Us,
    PerSec,
    Bytes,
    Mb,
    Count,
}

/// `1234567` → `1,234,567`.
pub fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

pub fn format_value(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Ms if value < 10.0 => format!("{value:.3} ms"),
        Unit::Ms if value < 1_000.0 => format!("{value:.1} ms"),
        Unit::Ms => format!("{} ms", thousands(value.round() as u64)),
        Unit::Us if value < 10.0 => format!("{value:.1} µs"),
        Unit::Us => format!("{} µs", thousands(value.round() as u64)),
        Unit::PerSec => format!("{} /s", thousands(value.round() as u64)),
        Unit::Bytes => format!("{} B", thousands(value.round() as u64)),
        Unit::Mb => format!("{value:.1} MB"),
        Unit::Count => thousands(value.round() as u64),
    }
}

pub fn format_cell(cell: &Cell, unit: Unit) -> String {
    match cell {
        Cell::Value { value, errors: 0 } => format_value(*value, unit),
        Cell::Value { value, errors } => {
            format!("{} ⚠ {errors} errors", format_value(*value, unit))
        }
        Cell::Skipped => "skipped".into(),
        Cell::Failed => "failed".into(),
        Cell::Missing => "—".into(),
    }
}

/// `×12.3`, or `—`.
pub fn format_ratio(ratio: Option<f64>) -> String {
    match ratio {
        Some(r) if r >= 10.0 => format!("×{r:.0}"),
        Some(r) => format!("×{r:.2}"),
        None => "—".into(),
    }
}

pub const MB: f64 = 1024.0 * 1024.0;

/// The skipped and failed figures of a target, for the notes under a table.
pub fn reasons(target: &TargetReport) -> Vec<String> {
    fn push<T>(out: &mut Vec<String>, name: &str, figure: &Figure<T>) {
        match figure {
            Figure::Skipped(why) => out.push(format!("{name} skipped: {why}")),
            Figure::Failed(why) => out.push(format!("{name} failed: {why}")),
            Figure::Measured(_) => {}
        }
    }
    fn push_errors(out: &mut Vec<String>, name: &str, figure: &Figure<Samples>) {
        if let Figure::Measured(s) = figure
            && s.errors > 0
        {
            out.push(format!(
                "{name}: {} of {} samples failed; first: {}",
                s.errors,
                s.errors + s.latency.as_ref().map_or(0, |d| d.samples),
                s.first_error.as_deref().unwrap_or("?")
            ));
        }
    }
    let mut out = Vec::new();
    let t = target;
    push(&mut out, "startup", &t.startup);
    push(&mut out, "tools/list", &t.tools_list);
    push(&mut out, "cold search", &t.search_cold);
    push(&mut out, "settled cold search", &t.search_cold_settled);
    for (name, f) in [
        ("warm search", &t.search_warm),
        ("natural search", &t.search_natural),
        ("all-matching search", &t.search_all),
        ("negative search", &t.search_negative),
        ("direct call", &t.direct_call),
        ("execute_code warm", &t.execute_warm),
        ("batch", &t.batch),
    ] {
        push(&mut out, name, f);
        push_errors(&mut out, name, f);
    }
    push(&mut out, "execute_code cold", &t.execute_cold);
    push(&mut out, "memory after load", &t.memory_after_load);
    for load in &t.load {
        match load {
            Figure::Measured(l) if l.errors > 0 => out.push(format!(
                "load at {} in flight: {} of {} calls failed; first: {}",
                l.in_flight,
                l.errors,
                l.calls,
                l.first_error.as_deref().unwrap_or("?")
            )),
            other => push(&mut out, "load", other),
        }
    }
    push(&mut out, "soak", &t.soak);
    push(&mut out, "stop", &t.stop);
    if let Figure::Measured(stop) = &t.stop
        && !stop.exited_on_sigterm
    {
        out.push("stop: the server did not exit within 10 s of SIGTERM and was killed".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn errors_are_never_hidden_behind_a_number() {
        let cell = Cell::Value {
            value: 1.5,
            errors: 3,
        };
        assert_eq!(format_cell(&cell, Unit::Ms), "1.500 ms ⚠ 3 errors");
    }
}
