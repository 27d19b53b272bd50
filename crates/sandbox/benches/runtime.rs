//! Sandbox latency: a program on a freshly started worker (cold), and warm
//! runs with and without one host call (directly, and through a connector
//! shortcut beside 1,000 others), through `CodeRuntime::run` with
//! hardening on, IPC included. Also prints the idle worker's RSS and a
//! per-run latency distribution (criterion's estimates are per-sample
//! means, which a loaded machine's tail pulls up), on one worker and, for
//! one host call, on two (the gateway's default).
//!
//! `cargo bench -p connecta-sandbox --bench runtime`

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use connecta_sandbox::{
    BindingHost, BindingNamespace, CodeRunRequest, CodeRuntime, HostError, PoolOptions,
    QuickJsPool, Shortcuts,
};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

const NOOP: &str = "async () => 1";
const ONE_CALL: &str =
    "async () => { const r = await connecta.call('ci.get_run', { runId: 42 }); return r; }";
/// The same call through a connector shortcut, beside 1,000 of them.
const ONE_SHORTCUT_CALL: &str =
    "async () => { const r = await connector_999.get_run({ runId: 42 }); return r; }";
const SHORTCUTS: usize = 1_000;

const WORKER: &str = env!("CARGO_BIN_EXE_connecta-sandbox-worker");

struct Echo;

#[async_trait]
impl BindingHost for Echo {
    async fn call(
        &self,
        _global: &str,
        _function: &str,
        args: Value,
    ) -> Result<Box<RawValue>, HostError> {
        let first = args.get(0).cloned().unwrap_or(Value::Null);
        serde_json::value::to_raw_value(&first).map_err(|e| HostError::untyped(e.to_string()))
    }
}

fn options(workers: usize) -> PoolOptions {
    let mut o = PoolOptions::new(WORKER, Vec::<String>::new());
    o.workers = workers;
    o.max_concurrent = workers;
    o.shortcuts = Shortcuts {
        global: "connecta".into(),
        function: "call".into(),
        aliases: (0..SHORTCUTS)
            .map(|i| (format!("connector_{i}"), format!("connector-{i}")))
            .collect(),
    };
    o
}

fn request(program: &str) -> CodeRunRequest {
    CodeRunRequest {
        program: program.into(),
        bindings: vec![BindingNamespace {
            global: "connecta".into(),
            functions: vec![
                "search".into(),
                "describe".into(),
                "call".into(),
                "batch".into(),
            ],
        }],
        cancel: CancellationToken::new(),
    }
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn bench(c: &mut Criterion) {
    // One thread: the run, the pipes and the I/O driver together, so the
    // figures are the sandbox's, not cross-thread wake-ups of the harness.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let host: Arc<dyn BindingHost> = Arc::new(Echo);

    let pool = rt.block_on(QuickJsPool::start(options(1))).expect("pool");
    let pid = pool.stats().worker_pids[0];
    eprintln!("idle worker RSS before any run: {:?} KiB", rss_kib(pid));

    let mut group = c.benchmark_group("sandbox");
    group.bench_function("warm_noop", |b| {
        b.to_async(&rt)
            .iter(|| async { pool.run(request(NOOP), host.clone()).await })
    });
    group.bench_function("warm_one_host_call", |b| {
        b.to_async(&rt).iter(|| async {
            let r = pool.run(request(ONE_CALL), host.clone()).await;
            debug_assert!(r.error.is_none());
            r
        })
    });
    group.bench_function("warm_one_shortcut_call_of_1000", |b| {
        b.to_async(&rt).iter(|| async {
            let r = pool.run(request(ONE_SHORTCUT_CALL), host.clone()).await;
            debug_assert!(r.error.is_none());
            r
        })
    });
    let pid = pool.stats().worker_pids[0];
    eprintln!("idle worker RSS after warm runs: {:?} KiB", rss_kib(pid));
    for (name, program) in [
        ("warm_noop", NOOP),
        ("warm_one_host_call", ONE_CALL),
        ("warm_one_shortcut_call_of_1000", ONE_SHORTCUT_CALL),
    ] {
        print_distribution(&rt, &pool, &host, name, program);
    }
    rt.block_on(pool.shutdown());
    // The gateway's default: two warm workers. Back to back, each run finds
    // the other worker's engine already built.
    let pool = rt.block_on(QuickJsPool::start(options(2))).expect("pool");
    print_distribution(
        &rt,
        &pool,
        &host,
        "warm_one_host_call on two workers",
        ONE_CALL,
    );
    rt.block_on(pool.shutdown());

    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("cold_first_program", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let pool = rt.block_on(QuickJsPool::start(options(1))).expect("pool");
                let started = Instant::now();
                let r = rt.block_on(pool.run(request("async () => 1"), host.clone()));
                total += started.elapsed();
                assert!(r.error.is_none());
                rt.block_on(pool.shutdown());
            }
            total
        })
    });
    group.finish();
}

/// Runs `program` 2,000 times back to back and prints its percentiles.
fn print_distribution(
    rt: &tokio::runtime::Runtime,
    pool: &QuickJsPool,
    host: &Arc<dyn BindingHost>,
    name: &str,
    program: &str,
) {
    let mut micros: Vec<u128> = (0..2000)
        .map(|_| {
            let started = Instant::now();
            let r = rt.block_on(pool.run(request(program), host.clone()));
            assert!(r.error.is_none());
            started.elapsed().as_micros()
        })
        .collect();
    micros.sort_unstable();
    eprintln!(
        "{name} per run over 2000 runs: p50 {} us, p95 {} us, p99 {} us",
        micros[1000], micros[1900], micros[1980]
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
