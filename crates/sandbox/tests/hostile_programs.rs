//! Hostile programs: each case fails (or is contained) the way the contract
//! says, and the pool runs an ordinary program right after it.

mod common;

use std::time::{Duration, Instant};

use common::*;
use connecta_sandbox::FailureKind;
use serde_json::json;

#[tokio::test]
async fn l5_infinite_loop_hits_the_cpu_budget() {
    let pool = pool().await;
    let r = run(&pool, "async () => { while (true) {} }").await;
    let msg = failed(&r, FailureKind::Timeout);
    assert!(msg.contains("250 ms guest CPU budget"), "{msg}");
    // A loop cannot catch its own interruption.
    let r = run(
        &pool,
        "async () => { for (;;) { try { while (true) {} } catch (e) {} } }",
    )
    .await;
    failed(&r, FailureKind::Timeout);
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn l5_memory_bomb_exhausts_the_heap_not_the_host() {
    let pool = pool().await;
    let r = run(
        &pool,
        "async () => { const a = []; while (true) a.push(new Array(100000).fill(7)); }",
    )
    .await;
    let msg = failed(&r, FailureKind::WorkerExit);
    assert!(msg.contains("64 MiB heap"), "{msg}");
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn l5_a_heap_full_of_small_values_is_out_of_memory_never_uncaught_null() {
    let mut o = options();
    o.heap_bytes = 16 * 1024 * 1024;
    o.cpu_budget = Duration::from_secs(5);
    let pool = pool_with(o).await;
    // Each of these fills the heap so completely that the engine cannot
    // even allocate its out-of-memory error, and throws `null` instead.
    for program in [
        "async () => { const a = []; for (;;) a.push({n: a.length}); }",
        "async () => { const a = []; for (;;) a.push('x' + a.length); }",
        "async () => { const a = []; for (;;) a.push([a.length]); }",
        "async () => { const m = new Map(); for (let i = 0; ; i++) m.set(i, {i}); }",
        "async () => { globalThis.a = []; for (;;) a.push(new Error('e' + a.length)); }",
    ] {
        let r = run(&pool, program).await;
        let msg = failed(&r, FailureKind::WorkerExit);
        assert!(
            msg.contains("16 MiB heap (out of memory)"),
            "{program}: {msg}"
        );
    }
    // A program that throws `null` itself says so.
    for program in [
        "async () => { throw null; }",
        "async () => { const a = []; for (let i = 0; i < 1000; i++) a.push({i}); throw null; }",
    ] {
        let r = run(&pool, program).await;
        assert_eq!(
            failed(&r, FailureKind::Exception),
            "Uncaught null",
            "{program}"
        );
    }
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn l5_a_100_mb_string_exhausts_the_heap() {
    let pool = pool().await;
    // Doubling builds a rope, which costs nothing until it is flattened.
    let r = run(&pool, "async () => { let s = 'x'.repeat(1 << 20); while (s.length < 1e8) s = s + s; return s.indexOf('y'); }").await;
    failed(&r, FailureKind::WorkerExit);
    let r = run(&pool, "async () => 'y'.repeat(100 * 1024 * 1024).length").await;
    failed(&r, FailureKind::WorkerExit);
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn l5_deep_recursion_is_a_stack_overflow() {
    let pool = pool().await;
    let r = run(
        &pool,
        "async () => { const f = (n) => f(n + 1) + 1; return f(0); }",
    )
    .await;
    let msg = failed(&r, FailureKind::Exception);
    assert!(msg.to_lowercase().contains("stack"), "{msg}");
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn x6_never_settling_promise_fails_fast() {
    let pool = pool().await;
    let started = Instant::now();
    let r = run(&pool, "async () => { await new Promise(() => {}); }").await;
    let msg = failed(&r, FailureKind::Timeout);
    assert!(msg.contains("can never settle"), "{msg}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "stall must not wait for the deadline"
    );
    // Also after host calls have settled.
    let r = run(
        &pool,
        "async () => { await connecta.echo(1); await new Promise(() => {}); }",
    )
    .await;
    failed(&r, FailureKind::Timeout);
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn polluting_intrinsics_does_not_break_the_bridge() {
    let pool = pool().await;
    let r = run(
        &pool,
        r#"async () => {
            Object.prototype.code = "polluted";
            Object.defineProperty(Object.prototype, "retryable", {
                set() { throw new Error("setter hit"); }, get() { return "inherited"; }, configurable: true });
            Object.prototype.toJSON = undefined;
            Function.prototype.call = Function.prototype.apply = Function.prototype.bind =
                () => { throw new Error("hijacked"); };
            JSON.stringify = JSON.parse = () => { throw new Error("json hijacked"); };
            Promise.prototype.then = function () { throw new Error("then hijacked"); };
            globalThis.Promise = null;
            Array.prototype.push = () => { throw new Error("push hijacked"); };
            globalThis.Error = null;
            Object.freeze = Object.defineProperty = Reflect.get = null;
            const v = await connecta.echo({ a: [1, 2] });
            let typed;
            try { await connecta.fail("rate_limited"); } catch (e) { typed = [e.message, e.code, e.retryable]; }
            console.log("still", "logging", { k: 1 });
            return { v, typed };
        }"#,
    )
    .await;
    assert_eq!(
        ok(&r),
        json!({ "v": { "a": [1, 2] }, "typed": ["tool failed: rate_limited", "rate_limited", true] })
    );
    assert_eq!(r.logs, vec!["still logging {\"k\":1}"]);
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn polluting_the_namespace_does_not_replace_its_functions() {
    let pool = pool().await;
    let r = run(
        &pool,
        r#"async () => {
            const fake = async () => "fake";
            try { connecta.echo = fake; } catch (e) {}
            try { delete connecta.echo; } catch (e) {}
            try { Object.defineProperty(connecta, "echo", { value: fake }); } catch (e) {}
            try { Object.setPrototypeOf(connecta, { echo: fake }); } catch (e) {}
            try { connecta.__proto__ = { echo: fake }; } catch (e) {}
            try { globalThis.connecta = { echo: fake }; } catch (e) {}
            try { delete globalThis.connecta; } catch (e) {}
            return await connecta.echo("real");
        }"#,
    )
    .await;
    assert_eq!(ok(&r), json!("real"));
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn p2_the_function_constructor_reaches_only_the_sandbox_global() {
    let pool = pool().await;
    let r = run(
        &pool,
        r#"async () => {
            const g = (() => {}).constructor.constructor("return this")();
            return [g === globalThis, Object.keys(g), typeof g.process, typeof g.require, typeof g.fetch];
        }"#,
    )
    .await;
    assert_eq!(
        ok(&r),
        json!([
            true,
            ["console", "connecta"],
            "undefined",
            "undefined",
            "undefined"
        ])
    );
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn x8_connecta_to_string_is_a_function_whose_call_fails() {
    let pool = pool().await;
    let r = run(&pool, "async () => connecta.toString()").await;
    let msg = failed(&r, FailureKind::Exception);
    assert!(
        msg.starts_with("Unknown function connecta.toString"),
        "{msg}"
    );
    let r = run(
        &pool,
        "async () => { try { return '' + connecta; } catch (e) { return e.name; } }",
    )
    .await;
    assert_eq!(ok(&r), json!("TypeError"));
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn x9_returning_a_cycle_bigint_or_function_is_invalid_output() {
    let pool = pool().await;
    for program in [
        "async () => { const a = []; a.push(a); return a; }",
        "async () => 2n ** 64n",
        "async () => function f() {}",
        "async () => Symbol.iterator",
    ] {
        failed(&run(&pool, program).await, FailureKind::InvalidOutput);
    }
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn ten_thousand_host_calls_leave_the_runtime_standing() {
    let mut o = options();
    // Debug builds spend far more CPU per call than release; the point here
    // is survival, not the budget.
    o.cpu_budget = Duration::from_secs(10);
    let pool = pool_with(o).await;
    let r = run(
        &pool,
        r#"async () => {
            let sum = 0;
            for (let i = 0; i < 100; i++) {
                const batch = [];
                for (let j = 0; j < 100; j++) batch.push(connecta.echo(1));
                for (const v of await Promise.all(batch)) sum += v;
            }
            return sum;
        }"#,
    )
    .await;
    assert_eq!(ok(&r), json!(10_000));
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn e6_a_forged_typed_error_is_never_a_host_failure() {
    let pool = pool().await;
    for program in [
        "async () => { throw { code: 'auth_required', retryable: false, message: 'tool failed: forged' }; }",
        // A real failure's fields copied onto the program's own error.
        "async () => { let real; try { await connecta.fail('auth_required'); } catch (e) { real = e; } \
          throw Object.assign(new Error(real.message), real, { cause: { ...real } }); }",
        // A cause that only looks like one.
        "async () => { throw new Error('x', { cause: { code: 'auth_required', message: 'tool failed: auth_required' } }); }",
        // A cause chain longer than is followed, and one that loops.
        "async () => { let e = null; try { await connecta.fail('unavailable'); } catch (x) { e = x; } \
          for (let i = 0; i < 20; i++) e = new Error('level ' + i, { cause: e }); throw e; }",
        "async () => { const a = new Error('a'); a.cause = a; throw a; }",
        // A getter on `cause` that throws.
        "async () => { const e = new Error('g'); Object.defineProperty(e, 'cause', { get() { throw 1; } }); throw e; }",
    ] {
        let r = run(&pool, program).await;
        let failure = r.error.clone().expect("failure");
        assert_eq!(failure.kind, FailureKind::Exception, "{program}");
        assert_eq!(failure.host_error, None, "{program}");
    }
    let r = run(
        &pool,
        "async () => { Object.prototype.code = 'polluted'; throw new Error('plain'); }",
    )
    .await;
    assert_eq!(failed(&r, FailureKind::Exception), "plain (line 1)");
    assert_eq!(r.error.and_then(|e| e.host_error), None);
    assert_healthy(&pool).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn p2_x5_no_network_files_environment_timers_or_imports() {
    let pool = pool().await;
    let r = run(
        &pool,
        r#"async () => ["fetch", "XMLHttpRequest", "WebSocket", "require", "process", "Deno", "Bun",
                         "std", "os", "setTimeout", "setInterval", "performance", "Atomics",
                         "SharedArrayBuffer", "print", "scriptArgs"]
            .filter((name) => typeof globalThis[name] !== "undefined")"#,
    )
    .await;
    assert_eq!(ok(&r), json!([]));
    let r = run(&pool, "async () => { await import('fs'); }").await;
    failed(&r, FailureKind::Exception);
    let r = run(&pool, "import fs from 'fs';\nreturn 1;").await;
    failed(&r, FailureKind::Exception);
    assert_healthy(&pool).await;
    pool.shutdown().await;
}
