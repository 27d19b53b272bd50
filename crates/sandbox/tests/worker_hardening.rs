//! The worker's hardening enforces on this kernel: the self-check's probes
//! are refused, and the pool's own workers run filtered, without privileges
//! to gain, with tight rlimits, an empty environment and cwd `/`.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use serde_json::Value;

#[test]
fn seccomp_self_check_refuses_files_sockets_exec_and_signals() {
    let out = std::process::Command::new(WORKER)
        .arg("--self-check")
        .env_clear()
        .output()
        .expect("run the self-check");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "self-check failed: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(stdout.trim()).expect("JSON report");
    assert_eq!(report["all_refused"], Value::Bool(true), "{report}");
    assert_eq!(report["hardening"]["seccomp"], Value::Bool(true));
    let probes = report["probes"].as_object().expect("probes");
    for name in [
        "open /etc/passwd",
        "tcp connect 127.0.0.1:9",
        "spawn /bin/true",
        "signal pid 1",
    ] {
        let outcome = probes[name].as_str().expect("outcome");
        assert!(outcome.starts_with("refused"), "{name}: {outcome}");
    }
    // The refusal is the filter's EPERM, not a missing file.
    let open = probes["open /etc/passwd"].as_str().expect("outcome");
    assert!(
        open.contains("not permitted") || open.contains("os error 1"),
        "{open}"
    );
}

#[tokio::test]
async fn pool_workers_run_filtered_with_tight_limits_and_no_environment() {
    let pool = pool().await;
    assert_healthy(&pool).await;
    let pid = pool.stats().worker_pids[0];

    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    assert!(status.contains("Seccomp:\t2"), "{status}");
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    // No capability in any set; a pool run as root has workers that are
    // `nobody` (the test suite runs as root in CI).
    for set in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
        assert!(
            status.contains(&format!("{set}:\t0000000000000000")),
            "{set}: {status}"
        );
    }
    if nix::unistd::geteuid().is_root() {
        let ids = |field: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(field))
                .map(|v| v.split_whitespace().collect::<Vec<_>>())
                .unwrap_or_default()
        };
        assert_eq!(ids("Uid:"), ["65534"; 4], "{status}");
        assert_eq!(ids("Gid:"), ["65534"; 4], "{status}");
        assert_eq!(ids("Groups:"), Vec::<&str>::new(), "{status}");
    }
    // One thread: clone is refused, and nothing in the worker needs it.
    assert!(status.contains("Threads:\t1"), "{status}");

    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    let line = |name: &str| {
        limits
            .lines()
            .find(|l| l.starts_with(name))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    assert!(line("Max core file size").contains(" 0 0 "), "{limits}");
    assert!(line("Max file size").contains(" 0 0 "), "{limits}");
    assert!(line("Max open files").contains(" 3 3 "), "{limits}");
    assert!(!line("Max address space").contains("unlimited"), "{limits}");

    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("environ");
    assert!(
        environ.is_empty(),
        "the worker must start with an empty environment"
    );
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).expect("cwd");
    assert_eq!(cwd, std::path::Path::new("/"));
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("fds")
        .count();
    assert_eq!(fds, 3, "only stdin, stdout and stderr stay open");

    pool.shutdown().await;
}
