//! The pool around the programs: deadlines, cancellation, worker death,
//! admission, recycling and shutdown.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::*;
use connecta_sandbox::{
    AdmissionError, BindingNamespace, CodeRunRequest, CodeRuntime, FailureKind, QuickJsPool,
};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

async fn wait_for(mut cond: impl FnMut() -> bool, what: &str) {
    let until = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn l5_cpu_budget_excludes_time_spent_waiting_for_the_host() {
    let pool = pool().await;
    let r = run(
        &pool,
        "async () => { await connecta.sleep(600); return await connecta.sleep(10); }",
    )
    .await;
    assert_eq!(ok(&r), json!(10));
    pool.shutdown().await;
}

#[tokio::test]
async fn l3_wall_deadline_includes_host_waits_and_drops_the_call() {
    let mut o = options();
    o.wall_deadline = Duration::from_millis(400);
    let pool = pool_with(o).await;
    let host = Arc::new(TestHost::default());
    let started = Instant::now();
    let r = run_with_host(
        &pool,
        "async () => { await connecta.hang(); }",
        host.clone(),
    )
    .await;
    let msg = failed(&r, FailureKind::Timeout);
    assert!(msg.contains("wall-clock deadline of 400 ms"), "{msg}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(host.hung_started.load(Ordering::SeqCst));
    assert!(
        host.hung_dropped.load(Ordering::SeqCst),
        "the in-flight host call must be dropped"
    );
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn l2_x3_cancellation_mid_run_aborts_and_drops_host_calls() {
    let pool = pool().await;
    let host = Arc::new(TestHost::default());
    let mut req = request("async () => { console.log('before'); await connecta.hang(); }");
    let cancel = req.cancel.clone();
    let pid = pool.stats().worker_pids[0];
    let task = {
        let pool = pool.clone();
        let host = host.clone();
        req.cancel = cancel.clone();
        tokio::spawn(async move { pool.run(req, host).await })
    };
    wait_for(|| host.hung_started.load(Ordering::SeqCst), "the host call").await;
    cancel.cancel();
    let r = task.await.expect("run task");
    failed(&r, FailureKind::Abort);
    assert_eq!(r.logs, vec!["before"]);
    assert!(
        host.hung_dropped.load(Ordering::SeqCst),
        "the in-flight host call must be dropped"
    );
    wait_for(|| !alive(pid), "the cancelled worker to be reaped").await;
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn cancellation_of_a_busy_loop_is_immediate() {
    let mut o = options();
    o.cpu_budget = Duration::from_secs(30);
    let pool = pool_with(o).await;
    let req = request("async () => { while (true) {} }");
    let cancel = req.cancel.clone();
    let task = {
        let pool = pool.clone();
        tokio::spawn(async move { pool.run(req, Arc::new(TestHost::default())).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    cancel.cancel();
    let r = task.await.expect("run task");
    failed(&r, FailureKind::Abort);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn a_worker_killed_mid_run_fails_worker_exit_and_is_replaced() {
    let pool = pool().await;
    let host = Arc::new(TestHost::default());
    let pid = pool.stats().worker_pids[0];
    let task = {
        let pool = pool.clone();
        let host = host.clone();
        tokio::spawn(async move {
            run_with_host(&pool, "async () => { await connecta.hang(); }", host).await
        })
    };
    wait_for(|| host.hung_started.load(Ordering::SeqCst), "the host call").await;
    kill(Pid::from_raw(pid as i32), Signal::SIGKILL).expect("kill worker");
    let r = task.await.expect("run task");
    let msg = failed(&r, FailureKind::WorkerExit);
    assert!(msg.contains("SIGKILL"), "{msg}");
    wait_for(|| pool.stats().idle == 1, "the pool to refill").await;
    let stats = pool.stats();
    assert_ne!(stats.worker_pids, vec![pid]);
    assert_eq!(stats.replaced_total, 1);
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn an_idle_worker_killed_from_outside_is_skipped() {
    let pool = pool().await;
    let pid = pool.stats().worker_pids[0];
    kill(Pid::from_raw(pid as i32), Signal::SIGKILL).expect("kill worker");
    wait_for(
        || !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z ")),
        "the worker to die",
    )
    .await;
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn x3_a_worker_that_dies_before_its_run_starts_costs_the_run_nothing() {
    let pool = pool().await;
    let pid = pool.stats().worker_pids[0];
    // Stopped, the worker is still alive when the run is lent to it, and
    // never reads the program: its death is certain to come before a frame.
    kill(Pid::from_raw(pid as i32), Signal::SIGSTOP).expect("stop worker");
    let task = {
        let pool = pool.clone();
        tokio::spawn(async move {
            run(
                &pool,
                "async () => { const v = await connecta.echo(6); return v * 7; }",
            )
            .await
        })
    };
    wait_for(|| pool.stats().busy == 1, "the run to take the worker").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    kill(Pid::from_raw(pid as i32), Signal::SIGKILL).expect("kill worker");
    let r = task.await.expect("run task");
    assert_eq!(ok(&r), json!(42));
    assert!(!pool.stats().worker_pids.contains(&pid));
    assert!(pool.stats().replaced_total >= 1);
    pool.shutdown().await;
}

#[tokio::test]
async fn x3_a_worker_killed_after_its_first_frame_is_not_run_twice() {
    let pool = pool().await;
    let host = Arc::new(TestHost::default());
    let pid = pool.stats().worker_pids[0];
    let task = {
        let pool = pool.clone();
        let host = host.clone();
        tokio::spawn(async move {
            run_with_host(
                &pool,
                "async () => { console.log('once'); await connecta.hang(); }",
                host,
            )
            .await
        })
    };
    // The log line is the run's first frame; from then on a death is the run's.
    wait_for(|| host.hung_started.load(Ordering::SeqCst), "the host call").await;
    kill(Pid::from_raw(pid as i32), Signal::SIGKILL).expect("kill worker");
    let r = task.await.expect("run task");
    failed(&r, FailureKind::WorkerExit);
    assert_eq!(r.logs, vec!["once".to_owned()]);
    wait_for(|| pool.stats().idle == 1, "the pool to refill").await;
    assert_eq!(
        pool.stats().started_total,
        2,
        "one worker at start, one refill"
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn l7_admission_overload_is_immediate_when_the_queue_is_full() {
    let mut o = options();
    o.max_concurrent = 1;
    o.max_queued = 1;
    o.queue_timeout = Duration::from_secs(30);
    o.overload_retry_after = Duration::from_millis(750);
    let pool = pool_with(o).await;
    let never = CancellationToken::new();
    let held = pool.acquire(&never).await.expect("first slot");
    let queued = {
        let pool = pool.clone();
        tokio::spawn(async move { pool.acquire(&CancellationToken::new()).await.map(|_| ()) })
    };
    wait_for(|| pool.stats().queued == 1, "the queued caller").await;
    let started = Instant::now();
    let err = pool.acquire(&never).await.expect_err("overloaded");
    assert_eq!(
        err,
        AdmissionError::Overloaded {
            retry_after_ms: 750
        }
    );
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "overload must be immediate"
    );
    // The queued caller gets the slot once it frees up (FIFO).
    drop(held);
    queued.await.expect("task").expect("queued caller admitted");
    pool.shutdown().await;
}

#[tokio::test]
async fn l7_queue_wait_times_out_and_cancellation_is_terminal() {
    let mut o = options();
    o.max_concurrent = 1;
    o.queue_timeout = Duration::from_millis(100);
    let pool = pool_with(o).await;
    let held = pool.acquire(&CancellationToken::new()).await.expect("slot");
    let err = pool
        .acquire(&CancellationToken::new())
        .await
        .expect_err("timeout");
    assert!(matches!(err, AdmissionError::Overloaded { .. }));
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert_eq!(
        pool.acquire(&cancel).await.expect_err("cancelled"),
        AdmissionError::Cancelled
    );
    // Through the seam, overload maps to a failure result, never an error.
    let r = run(&pool, "async () => 1").await;
    let msg = failed(&r, FailureKind::Timeout);
    assert!(msg.contains("overloaded"), "{msg}");
    drop(held);
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn extra_workers_start_on_demand_up_to_max_concurrent() {
    let mut o = options();
    o.workers = 1;
    o.max_concurrent = 3;
    let pool = pool_with(o).await;
    let runs = (0..3).map(|_| {
        let pool = pool.clone();
        tokio::spawn(async move { run(&pool, "async () => connecta.sleep(300)").await })
    });
    for r in futures::future::join_all(runs).await {
        assert_eq!(ok(&r.expect("task")), json!(300));
    }
    assert_eq!(pool.stats().started_total, 3);
    pool.shutdown().await;
}

#[tokio::test]
async fn workers_are_recycled_after_runs_per_worker() {
    let mut o = options();
    o.runs_per_worker = 2;
    let pool = pool_with(o).await;
    let first = pool.stats().worker_pids;
    assert_healthy(&pool).await;
    assert_healthy(&pool).await;
    wait_for(|| pool.stats().idle == 1, "the replacement").await;
    let stats = pool.stats();
    assert_ne!(stats.worker_pids, first);
    assert_eq!(stats.replaced_total, 1);
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn back_to_back_runs_take_the_longest_idle_worker() {
    // Each worker makes its next run's engine after it answers; the run
    // that follows at once goes to the other, already prepared, worker.
    // With two runs per worker, two runs on one worker would recycle it.
    let mut o = options();
    o.workers = 2;
    o.runs_per_worker = 2;
    let pool = pool_with(o).await;
    let first = pool.stats().worker_pids;
    assert_healthy(&pool).await;
    assert_healthy(&pool).await;
    let stats = pool.stats();
    assert_eq!(stats.replaced_total, 0, "both runs went to one worker");
    assert_eq!(stats.worker_pids, first);
    assert_healthy(&pool).await;
    assert_eq!(pool.stats().replaced_total, 1);
    pool.shutdown().await;
}

#[tokio::test]
async fn a_run_after_a_recycle_waits_for_the_refill_instead_of_starting_another() {
    // Every second run recycles its worker; the next run comes at once,
    // while the refill is still starting. A worker started beside it would
    // outlive its run and leave the pool one over its warm set for good.
    let mut o = options();
    o.workers = 1;
    o.runs_per_worker = 2;
    let pool = pool_with(o).await;
    for _ in 0..6 {
        assert_healthy(&pool).await;
    }
    wait_for(|| pool.stats().starting == 0, "the last refill").await;
    let stats = pool.stats();
    assert_eq!(stats.worker_pids.len(), 1, "{stats:?}");
    assert_eq!(
        stats.started_total, 4,
        "one at start, one refill per two runs"
    );
    assert_eq!(stats.replaced_total, 3);
    pool.shutdown().await;
}

#[tokio::test]
async fn a_dropped_run_retires_its_worker() {
    let pool = pool().await;
    let host = Arc::new(TestHost::default());
    let pid = pool.stats().worker_pids[0];
    let task = {
        let pool = pool.clone();
        let host = host.clone();
        tokio::spawn(async move {
            run_with_host(&pool, "async () => { await connecta.hang(); }", host).await
        })
    };
    wait_for(|| host.hung_started.load(Ordering::SeqCst), "the host call").await;
    task.abort();
    let _ = task.await;
    wait_for(|| !alive(pid), "the abandoned worker to be reaped").await;
    wait_for(
        || pool.stats().busy == 0 && pool.stats().idle == 1,
        "the refill",
    )
    .await;
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn shutdown_kills_and_reaps_every_worker() {
    let mut o = options();
    o.workers = 2;
    let pool = pool_with(o).await;
    let host = Arc::new(TestHost::default());
    let task = {
        let pool = pool.clone();
        let host = host.clone();
        tokio::spawn(async move {
            run_with_host(&pool, "async () => { await connecta.hang(); }", host).await
        })
    };
    wait_for(|| host.hung_started.load(Ordering::SeqCst), "the host call").await;
    let pids = pool.stats().worker_pids;
    assert_eq!(pids.len(), 2);
    pool.shutdown().await;
    let r = task.await.expect("run task");
    failed(&r, FailureKind::WorkerExit);
    for pid in pids {
        assert!(!alive(pid), "worker {pid} survived shutdown");
    }
    assert!(pool.stats().worker_pids.is_empty());
    assert_eq!(
        pool.acquire(&CancellationToken::new())
            .await
            .expect_err("closed"),
        AdmissionError::Closed
    );
}

#[tokio::test]
async fn p4_ordinary_failures_reuse_the_worker_with_a_fresh_engine() {
    // Every run tears its engine down (with QuickJS's leak assertions on);
    // a worker that died doing so would show up as a replacement here.
    let pool = pool().await;
    let pid = pool.stats().worker_pids[0];
    for (program, kind) in [
        (
            "async () => { throw new Error('x'); }",
            Some(FailureKind::Exception),
        ),
        (
            "async () => { while (true) {} }",
            Some(FailureKind::Timeout),
        ),
        (
            "async () => { await new Promise(() => {}); }",
            Some(FailureKind::Timeout),
        ),
        (
            "async () => { const a = {}; a.a = a; return a; }",
            Some(FailureKind::InvalidOutput),
        ),
        ("async () => { connecta.sleep(5000); return 1; }", None),
        (
            "async () => { await connecta.nope(); }",
            Some(FailureKind::Exception),
        ),
        (
            "async () => { const f = (n) => f(n + 1); f(0); }",
            Some(FailureKind::Exception),
        ),
    ] {
        let r = run(&pool, program).await;
        assert_eq!(r.error.as_ref().map(|e| e.kind), kind, "{program}: {r:?}");
        assert_healthy(&pool).await;
    }
    let stats = pool.stats();
    assert_eq!(stats.worker_pids, vec![pid]);
    assert_eq!((stats.started_total, stats.replaced_total), (1, 0));
    pool.shutdown().await;
}

#[tokio::test]
async fn a_missing_worker_binary_fails_start() {
    let mut o = options();
    o.worker_program = "/nonexistent/connecta-worker".into();
    assert!(QuickJsPool::start(o).await.is_err());
}

/// P4: a worker builds its next engine with the bridge for the bindings
/// its last two runs named, when they named the same (the fourth run here
/// is on such an engine: its host call must work through it). A run
/// naming others gets an engine built for them, and nothing of the other
/// bindings reaches it (the second and fifth runs; the engine code's unit
/// tests cover which engine each run gets).
#[tokio::test]
async fn p4_a_run_naming_other_bindings_gets_an_engine_built_for_them() {
    let pool = pool().await;
    let host = Arc::new(TestHost::default());
    let run_with = |bindings: Vec<BindingNamespace>, program: &str| {
        pool.run(
            CodeRunRequest {
                program: program.into(),
                bindings,
                cancel: CancellationToken::new(),
            },
            host.clone(),
        )
    };
    let echo_only = || {
        vec![BindingNamespace {
            global: "connecta".into(),
            functions: vec!["echo".into()],
        }]
    };
    let tools = vec![BindingNamespace {
        global: "tools".into(),
        functions: vec!["echo".into()],
    }];
    let keys = "async () => Object.keys(connecta).join(',')";
    let all = bindings()[0].functions.join(",");
    let pid = pool.stats().worker_pids;

    assert_eq!(ok(&run_with(bindings(), keys).await), json!(all));
    assert_eq!(ok(&run_with(echo_only(), keys).await), json!("echo"));
    for _ in 0..2 {
        let r = run_with(
            echo_only(),
            "async () => [Object.keys(connecta).join(','), await connecta.echo(5)]",
        )
        .await;
        assert_eq!(ok(&r), json!(["echo", 5]));
    }
    let r = run_with(
        tools,
        "async () => [typeof connecta, Object.keys(tools).join(',')]",
    )
    .await;
    assert_eq!(ok(&r), json!(["undefined", "echo"]));
    assert_eq!(ok(&run_with(bindings(), keys).await), json!(all));
    assert_eq!(pool.stats().worker_pids, pid, "one worker ran them all");
    assert_eq!(host.calls.load(Ordering::SeqCst), 2);
    pool.shutdown().await;
}
