//! What a well-behaved program is promised by the runtime (contract clauses
//! in the test names). One pool serves every case in a test, which also
//! proves runs do not disturb each other.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use common::*;
use connecta_sandbox::{CodeRuntime, FailureKind};
use serde_json::json;

#[tokio::test]
async fn p1_async_arrow_fenced_and_bare_bodies_all_run() {
    let pool = pool().await;
    assert_eq!(
        ok(&run(&pool, "async () => { return 1 + 1; }").await),
        json!(2)
    );
    assert_eq!(
        ok(&run(&pool, "```javascript\nasync () => 'fenced'\n```").await),
        json!("fenced")
    );
    assert_eq!(
        ok(&run(&pool, "const v = await connecta.echo(3);\nreturn v * 2;").await),
        json!(6)
    );
    // A program ending in a line comment still closes.
    assert_eq!(ok(&run(&pool, "async () => 5 // done").await), json!(5));
    pool.shutdown().await;
}

#[tokio::test]
async fn p5_typescript_syntax_is_a_syntax_error() {
    let pool = pool().await;
    let r = run(
        &pool,
        "async (): Promise<number> => { const x: number = 1; return x; }",
    )
    .await;
    let msg = failed(&r, FailureKind::Exception);
    assert!(msg.starts_with("SyntaxError"), "{msg}");
    pool.shutdown().await;
}

#[tokio::test]
async fn p3_values_cross_as_json_both_ways() {
    let pool = pool().await;
    let r = run(
        &pool,
        r#"async () => {
            const back = await connecta.echo({ s: "é\n\"", n: 1.5, i: -3, b: false, z: null, a: [1, [2]], u: undefined });
            return { back, nan: NaN, date: new Date(0), arr: [undefined] };
        }"#,
    )
    .await;
    assert_eq!(
        ok(&r),
        json!({
            "back": { "s": "é\n\"", "n": 1.5, "i": -3, "b": false, "z": null, "a": [1, [2]] },
            "nan": null,
            "date": "1970-01-01T00:00:00.000Z",
            "arr": [null],
        })
    );
    // `undefined` is no value at all.
    assert_eq!(run(&pool, "async () => {}").await.value, None);
    pool.shutdown().await;
}

#[tokio::test]
async fn x9_values_outside_json_fail_invalid_output_with_a_path() {
    let pool = pool().await;
    for (program, needle) in [
        (
            "async () => { const a = { b: {} }; a.b.c = a; return a; }",
            "result.b.c",
        ),
        ("async () => ({ n: 10n })", "result.n is a BigInt"),
        ("async () => [1, () => 2]", "result[1] is a function"),
        ("async () => ({ s: Symbol('x') })", "result.s is a symbol"),
        ("async () => ({ p: connecta.echo(1) })", "missing `await`"),
        (
            "async () => { let v = []; for (let i = 0; i < 150; i++) v = [v]; return v; }",
            "nested more than",
        ),
    ] {
        let r = run(&pool, program).await;
        let msg = failed(&r, FailureKind::InvalidOutput);
        assert!(msg.contains(needle), "{program}: {msg}");
    }
    pool.shutdown().await;
}

#[tokio::test]
async fn output_limit_applies_to_the_value() {
    let mut o = options();
    o.max_value_bytes = 1000;
    let pool = pool_with(o).await;
    let r = run(&pool, "async () => 'x'.repeat(2000)").await;
    let msg = failed(&r, FailureKind::OutputLimit);
    assert!(msg.contains("1000-byte bound"), "{msg}");
    assert_eq!(
        ok(&run(&pool, "async () => 'x'.repeat(900)").await),
        json!("x".repeat(900))
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn p4_nothing_survives_between_runs() {
    let pool = pool().await;
    ok(&run(&pool, "async () => { globalThis.leak = 1; Object.prototype.polluted = 2; Array.prototype.push = null; }").await);
    let r = run(
        &pool,
        "async () => [typeof leak, ({}).polluted === undefined, typeof [].push]",
    )
    .await;
    assert_eq!(ok(&r), json!(["undefined", true, "function"]));
    pool.shutdown().await;
}

#[tokio::test]
async fn e6_x8_namespace_reads_are_functions_but_unknown_calls_fail() {
    let pool = pool().await;
    let r = run(
        &pool,
        "async () => [typeof connecta.toString, typeof connecta.nope, typeof connecta.echo, Object.keys(connecta).length]",
    )
    .await;
    assert_eq!(
        ok(&r),
        json!(["function", "function", "function", common::FUNCTIONS.len()])
    );
    for name in ["toString", "nope", "hasOwnProperty"] {
        let r = run(
            &pool,
            &format!("async () => {{ await connecta.{name}(); }}"),
        )
        .await;
        let msg = failed(&r, FailureKind::Exception);
        assert!(
            msg.starts_with(&format!("Unknown function connecta.{name}")),
            "{msg}"
        );
    }
    pool.shutdown().await;
}

#[tokio::test]
async fn declared_names_like_proto_and_constructor_are_ordinary_functions() {
    let pool = pool().await;
    let r = run(
        &pool,
        "async () => [await connecta.__proto__(), await connecta.constructor(), Object.getPrototypeOf(connecta)]",
    )
    .await;
    assert_eq!(
        ok(&r),
        json!([{ "called": "__proto__" }, { "called": "constructor" }, null])
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn e1_e2_host_errors_keep_every_typed_field_inside_the_program() {
    let pool = pool().await;
    let r = run(
        &pool,
        r#"async () => {
            try { await connecta.fail("rate_limited"); }
            catch (e) {
                return { isError: e instanceof Error, message: e.message, code: e.code,
                         retryable: e.retryable, retryAfterMs: e.retryAfterMs,
                         details: e.details, nextAction: e.nextAction };
            }
        }"#,
    )
    .await;
    assert_eq!(
        ok(&r),
        json!({
            "isError": true, "message": "tool failed: rate_limited", "code": "rate_limited",
            "retryable": true, "retryAfterMs": 1500, "details": { "connector": "ci" },
            "nextAction": { "tool": "search_tools", "arguments": { "query": "ci" } },
        })
    );
    let r = run(&pool, "async () => { try { await connecta.failUntyped() } catch (e) { return [e.message, e.code === undefined] } }").await;
    assert_eq!(ok(&r), json!(["plain failure", true]));
    pool.shutdown().await;
}

#[tokio::test]
async fn e1_e6_an_escaped_host_failure_is_the_one_the_host_sent() {
    let pool = pool().await;
    for program in [
        "async () => { await connecta.fail('unavailable'); }",
        "async () => { try { await connecta.fail('unavailable'); } catch (e) { throw e; } }",
        "async () => { try { await connecta.fail('unavailable'); } catch (e) { throw new Error('wrapped', { cause: e }); } }",
        // Several levels down, after other failures.
        "async () => { await connecta.fail('x').catch(() => 0); try { await connecta.fail('unavailable'); } \
          catch (e) { throw new TypeError('a', { cause: new Error('b', { cause: e }) }); } }",
    ] {
        let r = run(&pool, program).await;
        let failure = r.error.clone().expect("failure");
        assert_eq!(failure.kind, FailureKind::Exception, "{program}");
        assert_eq!(
            failure.host_error,
            Some(Box::new(typed_failure("unavailable"))),
            "{program}"
        );
    }
    // The words alone are the program's own error, as is a typed failure
    // that did not escape.
    for program in [
        "async () => { try { await connecta.fail('unavailable'); } catch (e) { throw new Error(e.message); } }",
        "async () => { await connecta.fail('unavailable').catch(() => 0); throw new Error('tool failed: unavailable'); }",
        "async () => { try { await connecta.failUntyped(); } catch (e) { throw e; } }",
    ] {
        let r = run(&pool, program).await;
        assert_eq!(r.error.expect("failure").host_error, None, "{program}");
    }
    pool.shutdown().await;
}

#[tokio::test]
async fn m2_a_host_call_the_program_does_not_await_is_answered_before_the_run_ends() {
    let pool = pool().await;
    for run_no in 0..100 {
        let host = Arc::new(TestHost::default());
        let r = run_with_host(
            &pool,
            "async () => { connecta.sleep(5); connecta.echo('unawaited'); return 1; }",
            host.clone(),
        )
        .await;
        assert_eq!(ok(&r), json!(1));
        assert_eq!(host.calls.load(Ordering::SeqCst), 2, "run {run_no}");
    }
    // A failing program's unawaited calls reach the host too.
    let host = Arc::new(TestHost::default());
    let r = run_with_host(
        &pool,
        "async () => { connecta.echo(1); throw new Error('no'); }",
        host.clone(),
    )
    .await;
    assert!(r.error.is_some());
    assert_eq!(host.calls.load(Ordering::SeqCst), 1);
    pool.shutdown().await;
}

#[tokio::test]
async fn r5_logs_are_captured_in_order_and_ride_along_with_failures() {
    let pool = pool().await;
    let r = run(
        &pool,
        r#"async () => {
            console.log("a", 1, { k: [true] }); console.info("b"); console.warn("c");
            await connecta.echo(0);
            console.error("d"); console.debug(undefined, null);
            throw new TypeError("bad");
        }"#,
    )
    .await;
    assert_eq!(
        failed(&r, FailureKind::Exception),
        "TypeError: bad (line 5)"
    );
    assert_eq!(
        r.logs,
        vec!["a 1 {\"k\":[true]}", "b", "c", "d", "undefined null"]
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn r5_logs_are_capped_with_a_marker() {
    let mut o = options();
    o.max_log_bytes = 100;
    let pool = pool_with(o).await;
    let r = run(
        &pool,
        "async () => { for (let i = 0; i < 50; i++) console.log('0123456789'); return 1; }",
    )
    .await;
    assert_eq!(ok(&r), json!(1));
    assert_eq!(r.logs.len(), 11, "{:?}", r.logs);
    assert!(r.logs.last().expect("marker").contains("truncated"));
    pool.shutdown().await;
}

#[tokio::test]
async fn l6_over_bound_arguments_fail_that_call_before_the_host_sees_them() {
    let mut o = options();
    o.max_arg_bytes = 1024;
    let pool = pool_with(o).await;
    let host = Arc::new(TestHost::default());
    let r = run_with_host(
        &pool,
        r#"async () => {
            let msg;
            try { await connecta.echo("x".repeat(5000)); } catch (e) { msg = e.message; }
            return [msg, await connecta.echo("small")];
        }"#,
        host.clone(),
    )
    .await;
    let v = ok(&r);
    assert!(
        v[0].as_str().expect("message").contains("1024-byte bound"),
        "{v}"
    );
    assert!(
        !v[0].as_str().expect("message").contains("echo"),
        "names no address: {v}"
    );
    assert_eq!(v[1], json!("small"));
    assert_eq!(
        host.calls.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "only the small call reached the host"
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn l6_over_bound_results_fail_that_call() {
    let mut o = options();
    o.max_result_bytes = 1024;
    let pool = pool_with(o).await;
    let r = run(
        &pool,
        r#"async () => {
            let msg;
            try { await connecta.big(5000); } catch (e) { msg = e.message; }
            return [msg, (await connecta.big(10)).length];
        }"#,
    )
    .await;
    let v = ok(&r);
    assert!(
        v[0].as_str().expect("message").contains("1024-byte bound"),
        "{v}"
    );
    assert_eq!(v[1], json!(10));
    pool.shutdown().await;
}

#[tokio::test]
async fn arguments_outside_json_fail_the_call_not_the_run() {
    let pool = pool().await;
    let r = run(
        &pool,
        "async () => { try { await connecta.echo({ f() {} }); } catch (e) { return e.message; } }",
    )
    .await;
    let v = ok(&r);
    assert!(
        v.as_str()
            .expect("message")
            .contains("arguments[0].f is a function"),
        "{v}"
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn host_calls_in_flight_are_bounded_per_run() {
    let mut o = options();
    o.max_inflight_calls = 10;
    let pool = pool_with(o).await;
    let r = run(
        &pool,
        r#"async () => {
            const started = [];
            for (let i = 0; i < 15; i++) started.push(connecta.echo(i).then(() => "ok", (e) => e.message));
            const first = await Promise.all(started);
            // Once settled, the slots are free again.
            const again = await Promise.all([1, 2, 3].map((n) => connecta.echo(n)));
            let refused;
            const more = [];
            for (let i = 0; i < 11; i++) more.push(connecta.sleep(1).catch((e) => { refused = e; }));
            await Promise.all(more);
            return [first.filter((m) => m === "ok").length, first[14], again,
                    [refused.code, refused.retryable, refused.details]];
        }"#,
    )
    .await;
    let v = ok(&r);
    assert_eq!(v[0], json!(10));
    assert!(
        v[1].as_str()
            .expect("message")
            .contains("too many host calls in flight"),
        "{v}"
    );
    assert_eq!(v[2], json!([1, 2, 3]));
    assert_eq!(
        v[3],
        json!(["budget_exceeded", false, { "budget": "calls_in_flight" }])
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn host_calls_receive_all_arguments_as_an_array() {
    let pool = pool().await;
    let r = run(
        &pool,
        "async () => connecta.call('ci.get_run', { runId: 42 })",
    )
    .await;
    assert_eq!(
        ok(&r),
        json!({ "address": "ci.get_run", "args": { "runId": 42 } })
    );
    let r = run(
        &pool,
        "async () => Promise.all([1, 2, 3].map((n) => connecta.echo(n)))",
    )
    .await;
    assert_eq!(ok(&r), json!([1, 2, 3]));
    pool.shutdown().await;
}

#[tokio::test]
async fn runtime_describes_itself() {
    let pool = pool().await;
    assert_eq!(pool.language(), "javascript");
    assert_eq!(pool.isolation(), "process");
    pool.shutdown().await;
}
