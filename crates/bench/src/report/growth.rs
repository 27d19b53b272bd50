//! "How cost grows": per-call cost and memory across catalog sizes, bytes of
//! RSS per tool, and the soak's RSS round by round with a plateau verdict.

use std::fmt::Write as _;

use super::cells::{MB, Unit, format_value};
use super::model::{DownstreamReport, Figure, PairedReport, Report, SoakRound, TargetReport};
use crate::relay::RelayKind;

fn throughput_at(t: &TargetReport, in_flight: usize) -> Option<f64> {
    t.load.iter().find_map(|l| match l {
        Figure::Measured(l) if l.in_flight == in_flight => Some(l.throughput_per_sec),
        _ => None,
    })
}

fn server_cpu_at(t: &TargetReport, in_flight: usize) -> Option<f64> {
    t.load.iter().find_map(|l| match l {
        Figure::Measured(l) if l.in_flight == in_flight => l.server_cpu_us_per_call,
        _ => None,
    })
}

/// PERFORMANCE.md's per-call bar: the cost at the largest catalog within
/// 10% of the cost at the smallest. Of several shapes of the largest size
/// (large and wide), the costliest is judged.
pub fn growth_verdict(points: &[(usize, f64)]) -> Option<(usize, f64, usize, f64, bool)> {
    let small = points.iter().min_by_key(|p| p.0)?;
    let large = points
        .iter()
        .filter(|p| p.0 == points.iter().map(|p| p.0).max().unwrap_or(0))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    (small.0 != large.0 && small.1 > 0.0).then(|| {
        let factor = large.1 / small.1;
        (small.0, small.1, large.0, large.1, factor <= 1.10)
    })
}

fn growth_line(out: &mut String, what: &str, points: &[(usize, f64)], unit: Unit) {
    if let Some((small_n, small, large_n, large, within)) = growth_verdict(points) {
        let _ = writeln!(
            out,
            "- Per-call cost: {what} is {} at {} tools and {} at {} tools (×{:.2}; within 10%: {}).",
            format_value(small, unit),
            super::cells::thousands(small_n as u64),
            format_value(large, unit),
            super::cells::thousands(large_n as u64),
            large / small,
            if within { "yes" } else { "**no**" }
        );
    }
}

fn rss_after_load(t: &TargetReport) -> Option<u64> {
    Some(t.memory_after_load.measured()?.server.rss_bytes)
}

fn cell(value: Option<f64>, unit: Unit) -> String {
    value.map_or("—".into(), |v| format_value(v, unit))
}

/// Least-squares slope of `(x, y)` points; `None` with fewer than two
/// distinct `x`.
pub fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// A plateau when RSS grew from the middle round to the last by at most
/// half what it grew from the first round to the middle (the growth is
/// slowing down), or by at most 1% (round-to-round noise). A fixed
/// percentage alone called a steady climb of 1–2 MB a round a plateau.
/// Returns the verdict and the growth from the middle round to the last;
/// `None` with fewer than three rounds measured.
pub fn plateau(rounds: &[SoakRound]) -> Option<(bool, f64)> {
    let rss: Vec<f64> = rounds
        .iter()
        .filter_map(|r| r.server_rss_bytes)
        .map(|b| b as f64)
        .collect();
    if rss.len() < 3 {
        return None;
    }
    let (first, middle, last) = (rss[0], rss[(rss.len() - 1) / 2], rss[rss.len() - 1]);
    let late = last - middle;
    let allowed = (0.5 * (middle - first)).max(0.01 * middle);
    Some((late <= allowed, late / middle))
}

fn slope_line(out: &mut String, points: &[(f64, f64)]) {
    match slope(points) {
        Some(bytes_per_tool) => {
            let _ = writeln!(
                out,
                "- Memory: the least-squares slope of server RSS over catalog size is **{} per tool** ({} shapes).",
                format_value(bytes_per_tool, Unit::Bytes),
                points.len()
            );
        }
        None => {
            let _ = writeln!(
                out,
                "- Memory: fewer than two catalog sizes measured; no slope."
            );
        }
    }
}

/// The synthetic downstream's own growth: the floor under every gateway row.
fn render_downstream(out: &mut String, report: &Report, max_in_flight: usize) {
    let mut rows = Vec::new();
    let mut points = Vec::new();
    for shape in &report.shapes {
        let Some(d) = shape.downstream.measured() else {
            continue;
        };
        let tools = shape.shape.total_tools();
        let p50 = d.direct_call.p50_ms();
        let throughput = d.load.iter().find_map(|l| match l {
            Figure::Measured(l) if l.in_flight == max_in_flight => Some(l.throughput_per_sec),
            _ => None,
        });
        let walk = d.tools_list.measured().map(|l| l.walk_ms);
        let rss = d.memory_after_load.measured().map(|m| m.server.rss_bytes);
        if let Some(rss) = rss {
            points.push((tools as f64, rss as f64));
        }
        rows.push(format!(
            "| {} | {} | {} | {} | {} | {} |",
            shape.shape.name,
            super::cells::thousands(tools as u64),
            cell(p50, Unit::Ms),
            cell(throughput, Unit::PerSec),
            cell(walk, Unit::Ms),
            cell(rss.map(|r| r as f64 / MB), Unit::Mb),
        ));
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "### downstream alone\n");
    let _ = writeln!(
        out,
        "| shape | tools | direct p50 | throughput at {max_in_flight} | `tools/list` walk of the probed connector | RSS after load |"
    );
    let _ = writeln!(out, "|{}", " --- |".repeat(6));
    for row in rows {
        let _ = writeln!(out, "{row}");
    }
    out.push('\n');
    slope_line(out, &points);
    out.push('\n');
}

pub fn render(out: &mut String, report: &Report) {
    let Some(first) = report.shapes.first() else {
        return;
    };
    let _ = writeln!(out, "## How cost grows\n");
    let max_in_flight = report.plan.in_flight.iter().copied().max().unwrap_or(1);
    render_downstream(out, report, max_in_flight);
    for (index, target) in first.targets.iter().enumerate() {
        let label = &target.label;
        let _ = writeln!(out, "### {label}\n");
        let _ = writeln!(
            out,
            "| shape | tools | direct p50 | downstream p50 | added p50 | a bare hop adds (TCP relay) | the hop with HTTP adds (HTTP relay) | warm search p50 | throughput at {max_in_flight} | server RSS after load |"
        );
        let _ = writeln!(out, "|{}", " --- |".repeat(10));
        let mut points = Vec::new();
        let mut calls = Vec::new();
        let mut cpu = Vec::new();
        for shape in &report.shapes {
            let Some(t) = shape.targets.get(index) else {
                continue;
            };
            let tools = shape.shape.total_tools();
            let ours = t.direct_call.p50_ms();
            let downstream = shape
                .downstream
                .measured()
                .and_then(|d| d.direct_call.p50_ms());
            let added = ours.zip(downstream).map(|(a, b)| a - b);
            let [hop, http_hop] = RelayKind::ALL.map(|kind| {
                shape
                    .through(kind)
                    .measured()
                    .and_then(DownstreamReport::hop_p50_ms)
            });
            let rss = rss_after_load(t);
            if let Some(rss) = rss {
                points.push((tools as f64, rss as f64));
            }
            if let Some(p50) = ours {
                calls.push((tools, p50));
            }
            if let Some(us) = server_cpu_at(t, max_in_flight) {
                cpu.push((tools, us));
            }
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                shape.shape.name,
                super::cells::thousands(tools as u64),
                cell(ours, Unit::Ms),
                cell(downstream, Unit::Ms),
                cell(added, Unit::Ms),
                cell(hop, Unit::Ms),
                cell(http_hop, Unit::Ms),
                cell(t.search_warm.p50_ms(), Unit::Ms),
                cell(throughput_at(t, max_in_flight), Unit::PerSec),
                cell(rss.map(|r| r as f64 / MB), Unit::Mb),
            );
        }
        out.push('\n');
        slope_line(out, &points);
        let paired = report.paired.iter().find(|p| &p.label == label);
        let sequential_note = if paired.and_then(|p| p.paired.measured()).is_some() {
            ", shapes measured one after another (not the verdict: the machine's load moves between shapes)"
        } else {
            ""
        };
        growth_line(
            out,
            &format!("direct `call_tool` p50{sequential_note}"),
            &calls,
            Unit::Ms,
        );
        growth_line(
            out,
            &format!("server CPU per call at {max_in_flight} in flight{sequential_note}"),
            &cpu,
            Unit::Us,
        );
        out.push('\n');
        if let Some(paired) = paired {
            render_paired(out, paired);
        }
        render_soak(out, report, index);
    }
}

/// The verdict on per-call cost: servers of each size up at once, called in
/// rotation with one call in flight.
fn render_paired(out: &mut String, report: &PairedReport) {
    let paired = match &report.paired {
        Figure::Measured(p) => p,
        Figure::Failed(e) => {
            let _ = writeln!(out, "Per-call cost side by side failed: {e}\n");
            return;
        }
        Figure::Skipped(why) => {
            let _ = writeln!(out, "Per-call cost side by side skipped: {why}\n");
            return;
        }
    };
    let _ = writeln!(
        out,
        "Per-call cost side by side: one server per shape, all running, called in rotation with one call in flight — blocks of {} direct `call_tool` calls, the first {} of each untimed — until each has {} timed calls, over {} fresh set{} of servers ({:.1} s):\n",
        paired.block,
        paired.settle,
        super::cells::thousands(paired.calls as u64),
        paired.instances,
        if paired.instances == 1 { "" } else { "s" },
        paired.wall_ms / 1e3
    );
    let _ = writeln!(
        out,
        "{}\n",
        super::markdown::load_line(&report.machine_load)
    );
    let _ = writeln!(
        out,
        "| shape | tools | p50 | p95 | p99 | p50 of each set | server CPU per call | failed |"
    );
    let _ = writeln!(out, "|{}", " --- |".repeat(8));
    let mut latency = Vec::new();
    let mut cpu = Vec::new();
    for side in &paired.sides {
        let d = side.latency.as_ref();
        if let Some(d) = d {
            latency.push((side.tools, d.p50_ms));
        }
        if let Some(us) = side.server_cpu_us_per_call {
            cpu.push((side.tools, us));
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            side.shape,
            super::cells::thousands(side.tools as u64),
            cell(d.map(|d| d.p50_ms), Unit::Ms),
            cell(d.map(|d| d.p95_ms), Unit::Ms),
            cell(d.map(|d| d.p99_ms), Unit::Ms),
            side.instance_p50_ms
                .iter()
                .map(|&v| format_value(v, Unit::Ms))
                .collect::<Vec<_>>()
                .join(", "),
            cell(side.server_cpu_us_per_call, Unit::Us),
            side.errors,
        );
    }
    out.push('\n');
    for side in &paired.sides {
        if let Some(e) = &side.first_error {
            let _ = writeln!(out, "- {}: first failed call: {e}", side.shape);
        }
    }
    growth_line(
        out,
        "direct `call_tool` p50 side by side",
        &latency,
        Unit::Ms,
    );
    growth_line(out, "server CPU per call side by side", &cpu, Unit::Us);
    out.push('\n');
}

fn render_soak(out: &mut String, report: &Report, index: usize) {
    let mut wrote_header = false;
    for shape in &report.shapes {
        let Some(t) = shape.targets.get(index) else {
            continue;
        };
        let Figure::Measured(rounds) = &t.soak else {
            continue;
        };
        if rounds.is_empty() {
            continue;
        }
        if !wrote_header {
            let _ = writeln!(
                out,
                "Soak ({} rounds of {} calls at {} in flight), server RSS after each round:\n",
                report.plan.soak_rounds, report.plan.soak_calls, report.plan.soak_in_flight
            );
            wrote_header = true;
        }
        let series: Vec<String> = rounds
            .iter()
            .map(|r| cell(r.server_rss_bytes.map(|b| b as f64 / MB), Unit::Mb))
            .collect();
        let errors: usize = rounds.iter().map(|r| r.load.errors).sum();
        let verdict = match plateau(rounds) {
            Some((true, g)) => format!(
                "plateau ({:+.1}% from the middle round to the last)",
                g * 100.0
            ),
            Some((false, g)) => format!(
                "**still climbing** ({:+.1}% from the middle round to the last)",
                g * 100.0
            ),
            None => "too few rounds to judge".into(),
        };
        let _ = writeln!(
            out,
            "- {}: {} — {verdict}{}",
            shape.shape.name,
            series.join(" → "),
            if errors > 0 {
                format!(" ⚠ {errors} failed calls")
            } else {
                String::new()
            }
        );
    }
    if wrote_header {
        out.push('\n');
    }
}

#[cfg(test)]
mod verdict_tests {
    use super::growth_verdict;

    #[test]
    fn the_costliest_largest_shape_is_held_to_ten_percent_of_the_smallest() {
        let points = [(100, 1.0), (1_000, 1.2), (10_000, 1.05), (10_000, 1.09)];
        assert_eq!(
            growth_verdict(&points),
            Some((100, 1.0, 10_000, 1.09, true))
        );
        let points = [(100, 1.0), (10_000, 1.05), (10_000, 1.2)];
        assert_eq!(growth_verdict(&points).map(|v| v.4), Some(false));
        assert_eq!(growth_verdict(&[(100, 1.0)]), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Load;

    #[test]
    fn slope_is_bytes_per_tool() {
        let points = [
            (100.0, 10_000_000.0),
            (1_000.0, 10_900_000.0),
            (10_000.0, 19_900_000.0),
        ];
        let s = slope(&points).expect("two sizes");
        assert!((s - 1_000.0).abs() < 1e-6, "{s}");
        assert_eq!(slope(&[(100.0, 1.0)]), None);
        assert_eq!(slope(&[(100.0, 1.0), (100.0, 2.0)]), None);
    }

    fn round(round: usize, rss: u64) -> SoakRound {
        SoakRound {
            round,
            load: Load {
                in_flight: 16,
                calls: 1,
                errors: 0,
                first_error: None,
                duration_ms: 1.0,
                throughput_per_sec: 1.0,
                latency: None,
                server_cpu_us_per_call: None,
                launcher_cpu_us_per_call: None,
                driver_cpu_us_per_call: None,
            },
            server_rss_bytes: Some(rss),
            workers_rss_bytes: None,
        }
    }

    #[test]
    fn a_plateau_is_flat_from_the_middle_round_on() {
        let flat = [
            round(1, 100),
            round(2, 120),
            round(3, 121),
            round(4, 122),
            round(5, 123),
        ];
        assert_eq!(plateau(&flat).map(|p| p.0), Some(true));
        let climbing = [
            round(1, 100),
            round(2, 120),
            round(3, 140),
            round(4, 160),
            round(5, 180),
        ];
        assert_eq!(plateau(&climbing).map(|p| p.0), Some(false));
        assert_eq!(plateau(&flat[..2]), None);
    }

    /// The large shape's soak in the full run of 2026-12-06 (MB): under
    /// 5% from the middle round to the last, yet climbing as fast late as
    /// early. A growth that halves, or one within 1%, is a plateau.
    #[test]
    fn a_steady_climb_of_a_few_percent_is_not_a_plateau() {
        let mb = |v: &[u64]| -> Vec<SoakRound> {
            v.iter()
                .enumerate()
                .map(|(i, m)| round(i + 1, m * 100_000))
                .collect()
        };
        let steady = mb(&[740, 755, 770, 793, 800]);
        assert_eq!(plateau(&steady).map(|p| p.0), Some(false));
        let slowing = mb(&[611, 624, 633, 640, 643]);
        assert_eq!(plateau(&slowing).map(|p| p.0), Some(true));
        let noise = mb(&[500, 500, 500, 502, 504]);
        assert_eq!(plateau(&noise).map(|p| p.0), Some(true));
        let quick_climb = mb(&[500, 510, 520]);
        assert_eq!(plateau(&quick_climb).map(|p| p.0), Some(false));
    }
}
