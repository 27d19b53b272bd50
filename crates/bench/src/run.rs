//! A whole run: for each shape, the downstream alone, the downstream
//! through a TCP relay and through an HTTP relay, then each target; then
//! the report files. Targets are measured one after another, never
//! at once, so they do not share the two cores.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::machine::WindowStart;
use crate::measure::{TargetSpec, downstream, paired, target};
use crate::plan::{Plan, Shape};
use crate::relay::RelayKind;
use crate::report::model::{DownstreamReport, Figure, Machine, PairedReport, Report, ShapeReport};
use crate::report::{self};

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub shapes: Vec<Shape>,
    pub plan: Plan,
    pub targets: Vec<TargetSpec>,
    /// This binary, to start the synthetic downstream alone.
    pub bench_exe: PathBuf,
    /// Where `report.md`, `report.json` and `logs/` go.
    pub out_dir: PathBuf,
    /// Measure the synthetic downstream alone at each shape.
    pub measure_downstream: bool,
}

/// The downstream at `shape` measured alone, or through a `relay`, unless
/// the downstream is not measured at all.
async fn measure_downstream(
    options: &RunOptions,
    shape: &Shape,
    relay: Option<RelayKind>,
    logs: &Path,
) -> Figure<DownstreamReport> {
    if !options.measure_downstream {
        return Figure::Skipped("--no-downstream".into());
    }
    let (bench, plan) = (&options.bench_exe, &options.plan);
    Figure::from_result(match relay {
        None => {
            eprintln!("  downstream alone…");
            let log = logs.join(format!("{}-downstream.log", shape.name));
            downstream::measure(bench, shape, plan, Some(log)).await
        }
        Some(kind) => {
            eprintln!("  {}…", kind.column());
            downstream::measure_relayed(bench, kind, shape, plan, logs).await
        }
    })
}

/// Run, write the report, return it.
pub async fn run(options: &RunOptions) -> anyhow::Result<Report> {
    let started = Instant::now();
    let run_window = WindowStart::now();
    let logs = options.out_dir.join("logs");
    std::fs::create_dir_all(&logs)?;
    let mut shapes = Vec::new();
    for shape in &options.shapes {
        eprintln!(
            "connecta-bench: {} ({} × {} = {} tools)",
            shape.name,
            shape.connectors,
            shape.tools_per_connector,
            shape.total_tools()
        );
        let window = WindowStart::now();
        let downstream = measure_downstream(options, shape, None, &logs).await;
        let tcp_relayed = measure_downstream(options, shape, Some(RelayKind::Tcp), &logs).await;
        let http_relayed = measure_downstream(options, shape, Some(RelayKind::Http), &logs).await;
        let mut targets = Vec::new();
        for spec in &options.targets {
            eprintln!("  {}…", spec.label);
            let log = logs.join(format!("{}-{}.log", shape.name, sanitize(&spec.label)));
            targets.push(target::measure(spec, shape, &options.plan, Some(log)).await);
        }
        shapes.push(ShapeReport {
            shape: shape.clone(),
            downstream,
            tcp_relayed,
            http_relayed,
            targets,
            machine_load: window.finish(),
        });
    }
    let sides = paired::sides(&options.shapes);
    let mut paired_reports = Vec::new();
    if !sides.is_empty() {
        let names: Vec<&str> = sides.iter().map(|s| s.name.as_str()).collect();
        for spec in &options.targets {
            eprintln!(
                "  {}: per-call cost, {} side by side…",
                spec.label,
                names.join(" / ")
            );
            let window = WindowStart::now();
            let measured = paired::measure(spec, &sides, &options.plan, &logs).await;
            paired_reports.push(PairedReport {
                label: spec.label.clone(),
                paired: Figure::from_result(measured),
                machine_load: window.finish(),
            });
        }
    }
    let report = Report {
        schema_version: 1,
        generated_at: now_rfc3339(),
        mode: options.plan.name.clone(),
        source_commit: source_commit(),
        machine: machine(),
        plan: options.plan.clone(),
        shapes,
        paired: paired_reports,
        machine_load: run_window.finish(),
        wall_seconds: started.elapsed().as_secs_f64(),
    };
    report::write(&report, &options.out_dir)?;
    Ok(report)
}

fn sanitize(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

/// `git rev-parse HEAD` where the run happens, with `-dirty` when the tree
/// has changes: a figure belongs to the code that produced it.
fn source_commit() -> Option<String> {
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let mut commit = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    let dirty = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .is_some_and(|o| !o.stdout.is_empty());
    if dirty {
        commit.push_str("-dirty");
    }
    Some(commit)
}

fn machine() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, m)| m.trim().to_owned());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|k| format!("Linux {}", k.trim()));
    let memory_total_bytes = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024);
    Machine {
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cpu_model,
        kernel,
        memory_total_bytes,
    }
}
