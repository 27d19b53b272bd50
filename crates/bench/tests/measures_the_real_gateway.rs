//! A whole `run` against the real `connecta` binary through
//! `serve-synthetic`, once with the synthetic connectors over loopback HTTP
//! and once as stdio children: every figure of PERFORMANCE.md is measured
//! (code mode included: `execute_code` cold and warm, the 10-call batch,
//! sandbox workers in the memory figures), every response passes its check,
//! and connecta stops on SIGTERM.
//!
//! The sample counts are tiny: this proves the instrument works against the
//! gateway, not how fast the gateway is. No timing is asserted.

use std::path::{Path, PathBuf};
use std::process::Command;

use connecta_bench::launcher::shell_quote;
use connecta_bench::measure::{Driver, TargetSpec, paired};
use connecta_bench::plan::{Plan, Shape};
use connecta_bench::run::{RunOptions, run};
use serde_json::Value;

const BENCH: &str = env!("CARGO_BIN_EXE_connecta-bench");

/// The `connecta` binary of this build profile. Integration tests of this
/// crate only get this crate's own binaries from cargo, so the test asks
/// cargo for the workspace's test build, which includes `connecta` (its own
/// end-to-end tests need it). After `cargo nextest run --workspace` this is
/// a no-op: the same command line resolves the same features, so nothing is
/// rebuilt and the binary other tests are running is never replaced. A bare
/// `cargo build -p connecta` would resolve features without the workspace's
/// dev-dependencies and compile a second copy of the gateway's dependencies.
fn connecta_bin() -> PathBuf {
    let profile_dir = Path::new(BENCH).parent().expect("target/<profile>");
    let target_dir = profile_dir.parent().expect("target dir");
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("profile dir name");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args([
            "test",
            "--no-run",
            "--quiet",
            "--workspace",
            "--manifest-path",
        ])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target_dir);
    match profile {
        "debug" => {}
        "release" => {
            cargo.arg("--release");
        }
        other => {
            cargo.args(["--profile", other]);
        }
    }
    let status = cargo.status().expect("running cargo");
    assert!(status.success(), "building connecta failed: {status}");
    let bin = profile_dir.join("connecta");
    assert!(bin.exists(), "no connecta at {}", bin.display());
    bin
}

fn status(figure: &Value) -> &str {
    figure["status"].as_str().unwrap_or("?")
}

fn target(label: &str, connecta: &Path, downstream: &str) -> TargetSpec {
    TargetSpec {
        label: label.into(),
        command: format!(
            "{} serve-synthetic --connecta-bin {} --downstream {downstream}",
            shell_quote(BENCH),
            shell_quote(&connecta.to_string_lossy())
        ),
    }
}

fn assert_every_figure_measured(t: &Value) {
    let label = t["label"].as_str().unwrap_or("?");
    assert_eq!(
        status(&t["startup"]),
        "measured",
        "{label}: {}",
        t["startup"]
    );
    let listed = &t["toolsList"]["value"];
    assert_eq!(listed["toolCount"], 7, "{label}: the seven meta-tools");
    assert!(
        listed["toolNames"]
            .as_array()
            .is_some_and(|names| names.iter().any(|n| n == "execute_code")),
        "{label}: {listed}"
    );
    for cold in ["searchCold", "searchColdSettled", "executeCold"] {
        assert_eq!(status(&t[cold]), "measured", "{label} {cold}: {}", t[cold]);
    }
    for (figure, samples) in [
        ("searchWarm", 10),
        ("searchNatural", 10),
        ("searchAll", 10),
        ("searchNegative", 10),
        ("directCall", 10),
        ("executeWarm", 10),
        ("batch", 4),
    ] {
        assert_eq!(status(&t[figure]), "measured", "{label} {figure}");
        assert_eq!(
            t[figure]["value"]["errors"], 0,
            "{label} {figure}: {}",
            t[figure]
        );
        assert_eq!(
            t[figure]["value"]["latency"]["samples"], samples,
            "{label} {figure}"
        );
    }
    let loads = t["load"].as_array().expect("load levels");
    assert_eq!(loads.len(), 2, "{label}");
    for load in loads {
        assert_eq!(status(load), "measured", "{label}: {load}");
        assert_eq!(load["value"]["errors"], 0, "{label}: {load}");
        assert_eq!(load["value"]["latency"]["samples"], 40, "{label}");
        // connecta runs behind serve-synthetic: the wrapper is its own row.
        assert!(
            load["value"]["launcherCpuUsPerCall"].is_number(),
            "{label}: {load}"
        );
    }
    let memory = &t["memoryAfterLoad"]["value"];
    assert!(memory["server"]["rssBytes"].as_u64().unwrap_or(0) > 0);
    assert!(
        memory["sandboxWorkers"]
            .as_array()
            .is_some_and(|w| !w.is_empty()),
        "{label}: programs ran, so sandbox workers exist: {memory}"
    );
    assert_eq!(t["soak"]["value"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        t["stop"]["value"]["exitedOnSigterm"], true,
        "{label}: {}",
        t["stop"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_figure_is_measured_against_connecta_over_http_and_stdio_connectors() {
    let connecta = connecta_bin();
    let out_dir = std::env::temp_dir().join(format!("connecta-bench-real-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let options = RunOptions {
        shapes: vec![Shape::new("tiny", 3, 12)],
        plan: Plan {
            name: "test".into(),
            samples: 10,
            warmup: 2,
            execute_samples: 10,
            batch_samples: 4,
            load_calls: 40,
            in_flight: vec![1, 4],
            soak_rounds: 2,
            soak_calls: 20,
            soak_in_flight: 4,
            cold_settle_secs: 0,
            paired_calls: 10,
            paired_instances: 1,
            ready_timeout_secs: 60,
            driver: Driver::Rmcp,
        },
        targets: vec![
            target("http", &connecta, "http"),
            target("stdio", &connecta, "stdio"),
        ],
        bench_exe: BENCH.into(),
        out_dir: out_dir.clone(),
        measure_downstream: false,
    };
    run(&options).await.expect("the run completes");

    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("report.json")).expect("report.json"),
    )
    .expect("valid JSON");
    let shape = &json["shapes"][0];
    assert!(shape["machineLoad"]["before"]["loadavg"].is_array());
    for t in shape["targets"].as_array().expect("targets") {
        assert_every_figure_measured(t);
    }
    let md = std::fs::read_to_string(out_dir.join("report.md")).expect("report.md");
    assert!(
        md.contains("| figure | http | stdio | http vs stdio |"),
        "{md}"
    );
    assert!(!md.contains("failed"), "{md}");
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// The per-call verdict's measurement: a small and a larger catalog up at
/// once, called in rotation; every call answered and checked, CPU per call
/// read for each side, the servers stopped afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalog_sizes_are_measured_side_by_side_against_connecta() {
    let connecta = connecta_bin();
    let logs = std::env::temp_dir().join(format!("connecta-bench-paired-{}", std::process::id()));
    std::fs::create_dir_all(&logs).expect("logs dir");
    let shapes = [
        Shape::new("tiny", 2, 3),
        Shape::new("wider", 4, 30),
        Shape::new("one", 1, 120),
    ];
    let sides = paired::sides(&shapes);
    assert_eq!(sides.len(), 3, "the smallest and both of the largest");
    let plan = Plan {
        paired_calls: 24,
        paired_instances: 2,
        warmup: 2,
        ..Plan::quick()
    };
    let measured = paired::measure(&target("http", &connecta, "http"), &sides, &plan, &logs)
        .await
        .expect("every side starts");
    assert_eq!(measured.calls, 24);
    assert_eq!(measured.instances, 2);
    let names: Vec<&str> = measured.sides.iter().map(|s| s.shape.as_str()).collect();
    assert_eq!(names, ["tiny", "wider", "one"]);
    for side in &measured.sides {
        assert_eq!(side.errors, 0, "{}: {:?}", side.shape, side.first_error);
        assert_eq!(
            side.latency.as_ref().map(|d| d.samples),
            Some(24),
            "{}",
            side.shape
        );
        assert_eq!(side.instance_p50_ms.len(), 2, "{}", side.shape);
        assert!(
            side.server_cpu_us_per_call.is_some(),
            "{}: the gateway's CPU is read",
            side.shape
        );
    }
    assert_eq!(measured.sides[2].tools, 120);
    for entry in std::fs::read_dir(&logs).expect("logs") {
        let name = entry.expect("entry").file_name();
        assert!(name.to_string_lossy().starts_with("paired-"), "{name:?}");
    }
    let _ = std::fs::remove_dir_all(&logs);
}
