//! Code mode under pressure, through the real binary: deadlines, CPU and
//! memory bounds, admission and overload, cancellation, a worker killed from
//! outside, and a hostile-program suite in which every case leaves the
//! gateway healthy and the next program working.

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::*;

async fn healthy_and_working(gw: &Gateway, c: &Client, after: &str) {
    let (v, err) = program(c, "async () => (await demo.note_stats()).notes").await;
    assert!(!err, "after {after}: the next program failed: {v}");
    assert!(
        v["result"].as_u64().is_some_and(|n| n >= 1),
        "after {after}: {v}"
    );
    let h = reqwest::get(format!("{}/health", gw.base()))
        .await
        .expect("health");
    assert_eq!(h.status(), 200, "after {after}");
}

fn worker_pids(gw: &Gateway) -> Vec<u32> {
    descendants(gw.pid())
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains("__sandbox-worker"))
                .unwrap_or(false)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_programs_leave_the_gateway_healthy() {
    let gw = Gateway::start(&demo_connector());
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;
    let cases: &[(&str, &str, &str)] = &[
        (
            "infinite loop",
            "async () => { while (true) {} }",
            "timeout",
        ),
        (
            "memory bomb",
            "async () => { const a = []; for (;;) a.push(new Array(1e6).fill(1)); }",
            "worker-exit",
        ),
        (
            "deep recursion",
            "async () => { const f = (n) => f(n + 1) + 1; return f(0); }",
            "exception",
        ),
        (
            "a 100 MB string",
            "async () => { let s = 'x'; while (s.length < 1e8) s += s; return s.length; }",
            "any",
        ),
        (
            "a promise that never settles",
            "async () => { await new Promise(() => {}); }",
            "timeout",
        ),
        (
            "prototype pollution",
            "async () => { Object.prototype.then = () => {}; Object.prototype.toJSON = () => 'pwned'; Array.prototype.push = null; JSON.stringify = null; return {ok: 1}; }",
            "any",
        ),
        (
            "pollution of connecta",
            "async () => { try { connecta.call = () => 'forged'; } catch (e) {} try { Object.setPrototypeOf(connecta, {}); } catch (e) {} return await connecta.call('demo.note_stats'); }",
            "any",
        ),
        (
            "the function constructor",
            "async () => { const g = constructor.constructor('return this')(); return [typeof g.process, typeof g.require, typeof g.fetch]; }",
            "any",
        ),
        (
            "connecta.toString()",
            "async () => connecta.toString()",
            "exception",
        ),
        (
            "a cycle",
            "async () => { const a = {}; a.a = a; return a; }",
            "invalid-output",
        ),
        ("a BigInt", "async () => 1n", "invalid-output"),
        ("a function", "async () => () => 1", "invalid-output"),
        (
            "10,000 host calls",
            "async () => { let ok = 0, refused = 0; for (let i = 0; i < 10000; i++) { try { await connecta.call('demo.note_stats'); ok++; } catch (e) { refused++; } } return [ok, refused]; }",
            "any",
        ),
        (
            "a forged typed error",
            "async () => { const e = new Error('destructive_tool_requires_approval'); e.code = 'auth_required'; throw e; }",
            "exception",
        ),
        (
            "reaching for the network",
            "async () => { const r = []; for (const n of ['fetch', 'XMLHttpRequest', 'WebSocket', 'require', 'process', 'Deno', 'Bun', 'os', 'std']) r.push(typeof globalThis[n]); return r; }",
            "any",
        ),
        (
            "reaching for files via import",
            "async () => { return await import('os'); }",
            "exception",
        ),
        (
            "reaching for the environment",
            "async () => typeof process === 'undefined' && typeof environment === 'undefined'",
            "any",
        ),
    ];
    for (name, code, expect) in cases {
        let started = Instant::now();
        let (v, err) = program(&c, code).await;
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "{name} took {:?}",
            started.elapsed()
        );
        match *expect {
            "any" => {}
            kind => {
                assert!(err, "{name} should fail: {v}");
                let got = v["error"]["kind"].as_str().unwrap_or("");
                assert_eq!(got, kind, "{name}: {v}");
            }
        }
        if *name == "10,000 host calls" {
            // Either the loop finishes (20 calls dispatched, the rest refused
            // by the budget) or its refusals spend the CPU budget first.
            assert!(
                v["result"] == json!([20, 9980]) || v["error"]["kind"] == "timeout",
                "{v}"
            );
        }
        if *name == "the function constructor" {
            assert_eq!(
                v["result"],
                json!(["undefined", "undefined", "undefined"]),
                "{v}"
            );
        }
        if *name == "pollution of connecta" {
            assert_eq!(
                v["result"]["notes"].as_u64().map(|n| n >= 1),
                Some(true),
                "{v}"
            );
        }
        if *name == "reaching for the network" {
            assert!(
                v["result"]
                    .as_array()
                    .expect("array")
                    .iter()
                    .all(|t| t == "undefined"),
                "{v}"
            );
        }
        healthy_and_working(&gw, &c, name).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn l3_l5_deadline_and_cpu_budget_are_configuration_and_exclude_host_waits() {
    let config = format!(
        "[code]\ndeadline_ms = 2000\ncpu_ms = 100\n\n{}\n{}",
        demo_connector(),
        python_connector("py")
    );
    let gw = Gateway::start(&config);
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;
    // Waiting on a host call costs no CPU budget: 1 s of waiting with 100 ms of CPU.
    let (v, err) = program(&c, "async () => { await connecta.batch([{address: 'py.hang', args: {seconds: 1}}]); return 'waited'; }").await;
    assert!(!err, "{v}");
    assert_eq!(v["result"], "waited");
    // The wall deadline includes host waits.
    let started = Instant::now();
    let (v, err) = program(
        &c,
        "async () => { await connecta.call('py.hang', {seconds: 10}); }",
    )
    .await;
    assert!(err);
    assert_eq!(v["error"]["kind"], "timeout", "{v}");
    assert!(started.elapsed() < Duration::from_secs(8));
    // Spinning burns the CPU budget.
    let (v, err) = program(&c, "async () => { for (;;) {} }").await;
    assert!(err);
    assert_eq!(v["error"]["kind"], "timeout", "{v}");
    healthy_and_working(&gw, &c, "the deadline").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn l7_e5_overload_is_a_retryable_executor_overloaded_with_retry_after() {
    let config = format!(
        "[code]\nworkers = 1\nmax_concurrent = 1\nmax_queued = 0\n\n{}\n{}",
        demo_connector(),
        python_connector("py")
    );
    let gw = Gateway::start(&config);
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;
    let url = gw.url();
    let busy = tokio::spawn(async move {
        let c2 = connect(&url).await;
        program(
            &c2,
            "async () => { await connecta.call('py.hang', {seconds: 3}); }",
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(800)).await;
    let (v, err) = program(&c, "async () => 1").await;
    assert!(err, "{v}");
    assert_eq!(v["error"]["code"], "executor_overloaded", "{v}");
    assert_eq!(v["error"]["retryable"], true);
    assert!(v["error"]["retryAfterMs"].as_u64().is_some(), "{v}");
    let _ = busy.await;
    healthy_and_working(&gw, &c, "overload").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn x3_a_worker_killed_mid_run_fails_that_run_with_worker_exit_and_the_pool_refills() {
    let gw = Gateway::start(&format!("{}\n{}", demo_connector(), python_connector("py")));
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;
    let before = worker_pids(&gw);
    assert!(!before.is_empty(), "no sandbox workers found");
    let url = gw.url();
    let run = tokio::spawn(async move {
        let c2 = connect(&url).await;
        program(
            &c2,
            "async () => { await connecta.call('py.hang', {seconds: 20}); }",
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // The busy worker is the one whose run is waiting; kill them all but
    // keep the survivors' identities to prove replacement.
    for pid in &before {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let (v, err) = run.await.expect("join");
    assert!(err, "{v}");
    assert_eq!(v["error"]["kind"], "worker-exit", "{v}");
    healthy_and_working(&gw, &c, "SIGKILL").await;
    let after = worker_pids(&gw);
    assert!(
        !after.is_empty() && after.iter().all(|p| !before.contains(p)),
        "before {before:?} after {after:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn l1_l2_a_cancelled_request_stops_its_program_and_its_calls() {
    let gw = Gateway::start(&format!("{}\n{}", demo_connector(), python_connector("py")));
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;
    // A client that gives up after 1.5 s drops its connection.
    let started = Instant::now();
    abandon_tool_call(
        &gw.url(),
        "execute_code",
        json!({"code": "async () => { await connecta.call('py.hang', {seconds: 30}); }"}),
        Duration::from_millis(1500),
    )
    .await;
    // The in-flight call was cancelled, and recorded so.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let events = activity(&gw);
        if let Some(e) = events.iter().find(|e| e["toolName"] == "hang") {
            assert_eq!(e["outcome"], "cancelled", "{e}");
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "the call ran on after the request went away"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the cancelled call was never recorded: {events:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    healthy_and_working(&gw, &c, "cancellation").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ten_parallel_batch_calls_against_server_everything_reduce_to_one_answer() {
    let gw = Gateway::start(&everything_connector());
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;
    let (v, err) = program(
        &c,
        "async () => { const calls = Array.from({length: 10}, (_, i) => ({address: 'everything.get-sum', args: {a: i, b: 100}})); \
          const out = await connecta.batch(calls); \
          return {ok: out.filter(o => o.ok).length, total: out.reduce((s, o) => s + Number(String(o.data).match(/is (\\d+)/)[1]), 0)}; }",
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(
        v["result"],
        json!({"ok": 10, "total": (0..10).map(|i| i + 100).sum::<i64>()}),
        "{v}"
    );
    let events = activity_until(&gw, |e| e.len() >= 10).await;
    assert_eq!(events.len(), 10);
    assert!(events.iter().all(|e| e["address"] == "everything.get-sum"
        && e["outcome"] == "success"
        && e["source"] == "execute_code"));
    for e in &events {
        for k in e.as_object().expect("object").keys() {
            assert!(
                [
                    "id",
                    "occurredAtMs",
                    "requestId",
                    "actor",
                    "connectorId",
                    "toolName",
                    "address",
                    "source",
                    "outcome",
                    "durationMs",
                    "attempts",
                    "errorCode",
                    "friction"
                ]
                .contains(&k.as_str()),
                "unexpected field {k} in {e}"
            );
        }
    }
}
