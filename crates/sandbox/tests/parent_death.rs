//! A gateway that dies without shutting its pool down leaves no worker
//! behind (`PR_SET_PDEATHSIG`). The "gateway" is this test binary re-run as
//! a helper that starts a pool, keeps one worker spinning in a loop, prints
//! its worker pids and waits to be killed.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

const HELPER_ENV: &str = "CONNECTA_SANDBOX_PDEATHSIG_HELPER";

/// Running, not a zombie and not gone.
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

#[test]
fn workers_die_with_a_killed_gateway() {
    let mut helper = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "pdeathsig_helper",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HELPER_ENV, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the helper");
    let stdout = helper.stdout.take().expect("helper stdout");
    let mut pids = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("helper output");
        // libtest prints `test pdeathsig_helper ... ` on the same line.
        if let Some((_, list)) = line.split_once("WORKER_PIDS ") {
            pids = list
                .split(',')
                .map(|p| p.parse::<u32>().expect("pid"))
                .collect();
            break;
        }
    }
    assert_eq!(pids.len(), 2, "the helper reports its workers");
    assert!(pids.iter().all(|p| running(*p)));
    helper.kill().expect("kill the helper");
    helper.wait().expect("reap the helper");
    let until = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|p| running(*p)) {
        assert!(
            Instant::now() < until,
            "workers outlived their gateway: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
#[ignore = "helper process for workers_die_with_a_killed_gateway"]
async fn pdeathsig_helper() {
    if std::env::var_os(HELPER_ENV).is_none() {
        return;
    }
    let mut o = options();
    o.workers = 2;
    // One worker spins without reading its pipe, so only the parent-death
    // signal (not end-of-file on stdin) can end it.
    o.cpu_budget = Duration::from_secs(120);
    o.wall_deadline = Duration::from_secs(120);
    let pool = pool_with(o).await;
    let spinning = pool.clone();
    tokio::spawn(async move { run(&spinning, "async () => { while (true) {} }").await });
    while pool.stats().busy == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let pids: Vec<String> = pool
        .stats()
        .worker_pids
        .iter()
        .map(u32::to_string)
        .collect();
    println!("WORKER_PIDS {}", pids.join(","));
    tokio::time::sleep(Duration::from_secs(60)).await;
}
