//! `report.md`: one table per shape (each target's figure, the downstream's
//! own, the goal, the reference's published and here figures, the ratios),
//! then how cost grows with the catalog, then the soak.

use std::fmt::Write as _;

use super::cells::{Cell, MB, Unit, format_cell, format_ratio, format_value, reasons};
use super::growth;
use super::model::{DownstreamReport, Figure, Report, ShapeReport, TargetReport};
use super::reference::{self as bars, Applies, Bar, Better, ratio};
use crate::machine::{LoadSnapshot, LoadWindow};
use crate::relay::RelayKind;
use crate::stats::Distribution;

/// One table row.
struct Row {
    name: String,
    unit: Unit,
    better: Better,
    targets: Vec<Cell>,
    downstream: Cell,
    /// The downstream through the TCP relay, then through the HTTP relay:
    /// the same figure one loopback hop further away, then that hop with
    /// connecta's HTTP stacks.
    relayed: [Cell; 2],
    bar: Option<Bar>,
}

fn p50(d: &Distribution) -> f64 {
    d.p50_ms
}
fn p95(d: &Distribution) -> f64 {
    d.p95_ms
}
fn p99(d: &Distribution) -> f64 {
    d.p99_ms
}

struct Builder<'a> {
    report: &'a ShapeReport,
    ten_thousand: bool,
    rows: Vec<Row>,
}

impl Builder<'_> {
    fn downstream(&self) -> Option<&DownstreamReport> {
        self.report.downstream.measured()
    }

    fn relayed(&self) -> [Option<&DownstreamReport>; 2] {
        RelayKind::ALL.map(|kind| self.report.through(kind).measured())
    }

    fn row(
        &mut self,
        name: &str,
        unit: Unit,
        bar: Option<Bar>,
        target: impl Fn(&TargetReport) -> Cell,
        downstream: impl Fn(&DownstreamReport) -> Cell,
    ) {
        let bar = bar.filter(|b| b.applies == Applies::Any || self.ten_thousand);
        let relayed = self.relayed().map(|r| r.map_or(Cell::Missing, &downstream));
        let downstream = self.downstream().map_or(Cell::Missing, &downstream);
        self.rows.push(Row {
            name: name.to_owned(),
            unit,
            better: bar.map_or(Better::Lower, |b| b.better),
            targets: self.report.targets.iter().map(target).collect(),
            downstream,
            relayed,
            bar,
        });
    }

    fn higher(mut self) -> Self {
        if let Some(last) = self.rows.last_mut() {
            last.better = Better::Higher;
        }
        self
    }
}

fn none(_: &DownstreamReport) -> Cell {
    Cell::Missing
}

fn build_rows(report: &ShapeReport, in_flight: &[usize]) -> Vec<Row> {
    let mut b = Builder {
        report,
        ten_thousand: report.shape.total_tools() >= 10_000,
        rows: Vec::new(),
    };
    b.row(
        "startup: spawn → ready line",
        Unit::Ms,
        None,
        |t| Cell::from_figure(&t.startup, |s| Some(s.ready_line_ms)),
        |d| Cell::from_figure(&d.startup, |s| Some(s.ready_line_ms)),
    );
    b.row(
        "startup: server start → first `tools/list`",
        Unit::Ms,
        Some(bars::STARTUP),
        |t| {
            Cell::from_figure(&t.startup, |s| {
                Some(s.server_only_ms.unwrap_or(s.first_list_ms))
            })
        },
        |d| Cell::from_figure(&d.startup, |s| Some(s.first_list_ms)),
    );
    b.row(
        "`tools/list` bytes (tools array)",
        Unit::Bytes,
        None,
        |t| Cell::from_figure(&t.tools_list, |l| Some(l.tools_bytes as f64)),
        none,
    );
    b.row(
        "instructions bytes",
        Unit::Bytes,
        None,
        |t| Cell::from_figure(&t.tools_list, |l| Some(l.instructions_bytes as f64)),
        none,
    );
    b.row(
        "`tools/list` + instructions bytes",
        Unit::Bytes,
        Some(bars::TOOLS_LIST_BYTES),
        |t| {
            Cell::from_figure(&t.tools_list, |l| {
                Some((l.tools_bytes + l.instructions_bytes) as f64)
            })
        },
        none,
    );
    b.row(
        "downstream `tools/list` walk (all pages)",
        Unit::Ms,
        None,
        |_| Cell::Missing,
        |d| Cell::from_figure(&d.tools_list, |l| Some(l.walk_ms)),
    );
    b.row(
        "cold `search_tools`, first request after boot (catalog fetch included)",
        Unit::Ms,
        None,
        |t| Cell::from_figure(&t.search_cold, |s| Some(s.ms)),
        none,
    );
    b.row(
        "cold `search_tools`, first search after an idle settle",
        Unit::Ms,
        Some(bars::SEARCH_COLD),
        |t| Cell::from_figure(&t.search_cold_settled, |s| Some(s.ms)),
        none,
    );
    b.row(
        "warm `search_tools`, one match, p50",
        Unit::Ms,
        Some(bars::SEARCH_WARM_P50),
        |t| Cell::from_samples(&t.search_warm, p50),
        none,
    );
    b.row(
        "warm `search_tools`, one match, p95",
        Unit::Ms,
        None,
        |t| Cell::from_samples(&t.search_warm, p95),
        none,
    );
    b.row(
        "warm `search_tools`, matches every tool, p50",
        Unit::Ms,
        Some(bars::SEARCH_ALL_P50),
        |t| Cell::from_samples(&t.search_all, p50),
        none,
    );
    b.row(
        "warm `search_tools`, natural query, p50",
        Unit::Ms,
        None,
        |t| Cell::from_samples(&t.search_natural, p50),
        none,
    );
    b.row(
        "warm `search_tools`, no match, p50",
        Unit::Ms,
        None,
        |t| Cell::from_samples(&t.search_negative, p50),
        none,
    );
    b.row(
        "direct `call_tool`, 1 in flight, p50",
        Unit::Ms,
        Some(bars::DIRECT_P50),
        |t| Cell::from_samples(&t.direct_call, p50),
        |d| Cell::from_samples(&d.direct_call, p50),
    );
    b.row(
        "direct `call_tool`, 1 in flight, p95",
        Unit::Ms,
        Some(bars::DIRECT_P95),
        |t| Cell::from_samples(&t.direct_call, p95),
        |d| Cell::from_samples(&d.direct_call, p95),
    );
    b.row(
        "direct call straight to the downstream, in turn with each relay's, p50",
        Unit::Ms,
        None,
        |_| Cell::Missing,
        |d| match &d.alongside {
            Figure::Skipped(_) => Cell::Missing,
            alongside => Cell::from_samples(alongside, p50),
        },
    );
    b.row(
        "the relay's hop: direct call through it minus straight to the downstream, in turn, p50",
        Unit::Ms,
        None,
        |_| Cell::Missing,
        |d| Cell::of(d.hop_p50_ms()),
    );
    b.row(
        "10-call `connecta.batch` program, p50",
        Unit::Ms,
        None,
        |t| Cell::from_samples(&t.batch, p50),
        none,
    );
    b.row(
        "10-call `connecta.batch` program, p95",
        Unit::Ms,
        None,
        |t| Cell::from_samples(&t.batch, p95),
        none,
    );
    b.row(
        "`execute_code` cold (first program, no-op)",
        Unit::Ms,
        Some(bars::EXECUTE_COLD),
        |t| Cell::from_figure(&t.execute_cold, |s| Some(s.ms)),
        none,
    );
    b.row(
        "`execute_code` warm, one host call, p50",
        Unit::Ms,
        Some(bars::EXECUTE_WARM_P50),
        |t| Cell::from_samples(&t.execute_warm, p50),
        none,
    );
    b.row(
        "`execute_code` warm, one host call, p95",
        Unit::Ms,
        Some(bars::EXECUTE_WARM_P95),
        |t| Cell::from_samples(&t.execute_warm, p95),
        none,
    );
    for &n in in_flight {
        let at_64 = n == 64;
        b.row(
            &format!("load, {n} in flight: throughput"),
            Unit::PerSec,
            at_64.then_some(bars::THROUGHPUT_64),
            |t| Cell::from_load(&t.load, n, |l| Some(l.throughput_per_sec), Cell::Failed),
            |d| Cell::from_load(&d.load, n, |l| Some(l.throughput_per_sec), Cell::Failed),
        );
        b = b.higher();
        for (label, stat, bar) in [
            ("p50", p50 as fn(&Distribution) -> f64, None),
            ("p95", p95, None),
            ("p99", p99, at_64.then_some(bars::P99_64)),
        ] {
            b.row(
                &format!("load, {n} in flight: {label}"),
                Unit::Ms,
                bar,
                |t| Cell::from_load(&t.load, n, |l| l.latency.as_ref().map(stat), Cell::Failed),
                |d| Cell::from_load(&d.load, n, |l| l.latency.as_ref().map(stat), Cell::Failed),
            );
        }
        b.row(
            &format!("load, {n} in flight: server CPU per call"),
            Unit::Us,
            None,
            |t| Cell::from_load(&t.load, n, |l| l.server_cpu_us_per_call, Cell::Missing),
            |d| Cell::from_load(&d.load, n, |l| l.server_cpu_us_per_call, Cell::Missing),
        );
        b.row(
            &format!("load, {n} in flight: launcher + in-process downstream CPU per call"),
            Unit::Us,
            None,
            |t| Cell::from_load(&t.load, n, |l| l.launcher_cpu_us_per_call, Cell::Missing),
            none,
        );
        b.row(
            &format!("load, {n} in flight: driver (client) CPU per call"),
            Unit::Us,
            None,
            |t| Cell::from_load(&t.load, n, |l| l.driver_cpu_us_per_call, Cell::Missing),
            |d| Cell::from_load(&d.load, n, |l| l.driver_cpu_us_per_call, Cell::Missing),
        );
    }
    b.row(
        "RSS after load: server",
        Unit::Mb,
        Some(bars::GATEWAY_RSS_MB),
        |t| {
            Cell::from_figure(&t.memory_after_load, |m| {
                Some(m.server.rss_bytes as f64 / MB)
            })
        },
        |d| {
            Cell::from_figure(&d.memory_after_load, |m| {
                Some(m.server.rss_bytes as f64 / MB)
            })
        },
    );
    b.row(
        "RSS after load: server, of it mapped from files",
        Unit::Mb,
        None,
        |t| {
            Cell::from_figure(&t.memory_after_load, |m| {
                m.server.file_bytes.map(|f| f as f64 / MB)
            })
        },
        |d| {
            Cell::from_figure(&d.memory_after_load, |m| {
                m.server.file_bytes.map(|f| f as f64 / MB)
            })
        },
    );
    b.row(
        "RSS after load: sandbox workers (count)",
        Unit::Count,
        None,
        |t| {
            Cell::from_figure(&t.memory_after_load, |m| {
                Some(m.sandbox_workers.len() as f64)
            })
        },
        none,
    );
    b.row(
        "RSS after load: largest sandbox worker",
        Unit::Mb,
        Some(bars::WORKER_RSS_MB),
        |t| {
            Cell::from_figure(&t.memory_after_load, |m| {
                m.sandbox_workers
                    .iter()
                    .map(|w| w.rss_bytes as f64 / MB)
                    .reduce(f64::max)
            })
        },
        none,
    );
    b.row(
        "RSS after load: other children (total)",
        Unit::Mb,
        None,
        |t| {
            Cell::from_figure(&t.memory_after_load, |m| {
                Some(m.other_children_total() as f64 / MB)
            })
        },
        none,
    );
    b.row(
        "RSS after load: launcher + in-process downstream",
        Unit::Mb,
        None,
        |t| {
            Cell::from_figure(&t.memory_after_load, |m| {
                m.launcher.as_ref().map(|l| l.rss_bytes as f64 / MB)
            })
        },
        none,
    );
    b.rows
}

fn render_shape(out: &mut String, report: &ShapeReport, in_flight: &[usize]) {
    let shape = &report.shape;
    let _ = writeln!(
        out,
        "## {}: {} × {} = {} tools\n",
        shape.name,
        shape.connectors,
        shape.tools_per_connector,
        super::cells::thousands(shape.total_tools() as u64)
    );
    let _ = writeln!(out, "{}\n", load_line(&report.machine_load));
    let rows: Vec<Row> = build_rows(report, in_flight)
        .into_iter()
        .filter(|r| {
            r.targets
                .iter()
                .chain([&r.downstream])
                .chain(&r.relayed)
                .any(|c| *c != Cell::Missing)
        })
        .collect();
    let labels: Vec<&str> = report.targets.iter().map(|t| t.label.as_str()).collect();
    let pair = labels.len() >= 2;
    // The bars are about a gateway: without one they have nothing to judge.
    let bars = !labels.is_empty();
    let mut header = String::from("| figure |");
    for label in &labels {
        let _ = write!(header, " {label} |");
    }
    if pair {
        let _ = write!(header, " {} vs {} |", labels[0], labels[1]);
    }
    header.push_str(" downstream alone |");
    for kind in RelayKind::ALL {
        let _ = write!(header, " {} |", kind.column());
    }
    if bars {
        header.push_str(" goal | published | here | vs here | goal met |");
    }
    let columns = header.matches('|').count() - 1;
    let _ = writeln!(out, "{header}");
    let _ = writeln!(out, "|{}", " --- |".repeat(columns));
    for row in &rows {
        let _ = write!(out, "| {} |", row.name);
        for cell in &row.targets {
            let _ = write!(out, " {} |", format_cell(cell, row.unit));
        }
        if pair {
            let r = match (row.targets[0].value(), row.targets[1].value()) {
                (Some(a), Some(b)) => ratio(row.better, a, b),
                _ => None,
            };
            let _ = write!(out, " {} |", format_ratio(r));
        }
        for cell in [&row.downstream].into_iter().chain(&row.relayed) {
            let _ = write!(out, " {} |", format_cell(cell, row.unit));
        }
        if bars {
            let ours = row.targets.first().and_then(Cell::value);
            let (goal, published, here, vs_here, met): (String, String, String, String, String) =
                match row.bar {
                    Some(bar) => (
                        bar.goal_text.to_owned(),
                        bar.published.map_or("—".into(), |p| p.text.to_owned()),
                        bar.here.map_or("—".into(), |h| h.text.to_owned()),
                        format_ratio(ours.and_then(|v| bar.ratio_vs_here(v))),
                        ours.map_or_else(
                            || "—".to_owned(),
                            |v| {
                                if bar.meets_goal(v) {
                                    "yes".to_owned()
                                } else {
                                    "**no**".to_owned()
                                }
                            },
                        ),
                    ),
                    None => Default::default(),
                };
            let _ = write!(out, " {goal} | {published} | {here} | {vs_here} | {met} |");
        }
        out.push('\n');
    }
    out.push('\n');
    let relayed = RelayKind::ALL.map(|kind| (kind.column(), report.through(kind)));
    for (name, figure) in [("downstream alone", &report.downstream)]
        .into_iter()
        .chain(relayed)
    {
        match figure {
            Figure::Failed(e) => {
                let _ = writeln!(out, "- {name} failed: {e}");
            }
            Figure::Skipped(why) => {
                let _ = writeln!(out, "- {name} skipped: {why}");
            }
            Figure::Measured(_) => {}
        }
    }
    for target in &report.targets {
        for reason in reasons(target) {
            let _ = writeln!(out, "- {}: {reason}", target.label);
        }
    }
    out.push('\n');
}

/// One sentence on how busy the machine was over a window.
pub fn load_line(w: &LoadWindow) -> String {
    let avg = |s: &LoadSnapshot| format!("{:.2}", s.loadavg[0]);
    let pct = |p: Option<f64>| p.map_or("unknown".to_owned(), |p| format!("{p:.0}%"));
    let compilers = w.before.compilers.max(w.after.compilers);
    format!(
        "load average (1 min) {} → {}; all cores {} busy, others {}; {} at either end.",
        avg(&w.before),
        avg(&w.after),
        pct(w.busy_percent),
        pct(w.others_percent),
        match compilers {
            0 => "no compiler running".to_owned(),
            1 => "1 compiler process running".to_owned(),
            n => format!("up to {n} compiler processes running"),
        }
    )
}

/// The whole markdown report.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# connecta-bench report\n");
    let _ = writeln!(
        out,
        "Generated {} in {:.0} s, {} mode{}. Commit {}.\n",
        report.generated_at,
        report.wall_seconds,
        report.mode,
        if report.plan_qualifies() {
            ""
        } else {
            " (fewer samples than PERFORMANCE.md asks: routine check, not a qualifying run)"
        },
        report.source_commit.as_deref().unwrap_or("unknown")
    );
    let m = &report.machine;
    let _ = writeln!(
        out,
        "Machine: {} CPUs ({}), {}, {} of memory.\n",
        m.cpus,
        m.cpu_model.as_deref().unwrap_or("unknown model"),
        m.kernel.as_deref().unwrap_or("unknown kernel"),
        m.memory_total_bytes
            .map_or("unknown".into(), |b| format_value(b as f64 / MB, Unit::Mb))
    );
    let _ = writeln!(
        out,
        "The machine is shared: the load line under each shape says how busy it was while that \
         shape ran (\"others\" is CPU this run did not spend). Over the whole run: {}\n",
        load_line(&report.machine_load)
    );
    let p = &report.plan;
    let _ = writeln!(
        out,
        "Plan: {} warm samples per query and direct call, {} `execute_code` samples, {} batch samples, \
         {} calls per load level at {:?} in flight, soak {} × {} calls at {} in flight; \
         the settled cold search waits {} s after the first `tools/list`.\n",
        p.samples,
        p.execute_samples,
        p.batch_samples,
        p.load_calls,
        p.in_flight,
        p.soak_rounds,
        p.soak_calls,
        p.soak_in_flight,
        p.cold_settle_secs
    );
    if let Some(first) = report.shapes.first() {
        for t in &first.targets {
            let _ = writeln!(out, "- **{}**: `{}`", t.label, t.command);
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "Times are client-observed over loopback streamable HTTP with the {} (keep-alive, \
         one client per in-flight worker); percentiles are nearest-rank. \"vs here\" is how many \
         times better than the reference measured on this machine kind, against the end of its \
         range that favours the reference. \"downstream alone\" is the synthetic downstream called \
         directly with the same client; \"downstream via TCP relay\" is the same downstream \
         called through `connecta-bench tcp-relay`, which copies each connection's bytes to it \
         and back: one more loopback hop and no work, the floor of a gateway's added cost (its \
         server CPU and RSS are the relay's; it has no startup figure, since it starts in front \
         of a running downstream; its direct calls are made in turn with calls straight to the \
         downstream, and their difference is the hop's row). \"downstream via HTTP relay\" is the \
         same through `connecta-bench http-relay`, which serves each request with axum and posts \
         it unread to the downstream with a pooled reqwest client, the HTTP stacks connecta is \
         built on, and streams the answer back unread: the hop with HTTP and no MCP. Goal rows marked 10,000 tools in PERFORMANCE.md show their \
         bars only at the 10,000-tool shapes.\n",
        match report.plan.driver {
            crate::measure::Driver::Rmcp => "rmcp client",
            crate::measure::Driver::Raw => "raw JSON-RPC driver (reqwest POSTs)",
        }
    );
    for shape in &report.shapes {
        render_shape(&mut out, shape, &report.plan.in_flight);
    }
    growth::render(&mut out, report);
    out
}

impl Report {
    fn plan_qualifies(&self) -> bool {
        self.plan.qualifies()
    }
}
