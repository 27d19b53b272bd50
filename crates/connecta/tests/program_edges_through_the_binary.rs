//! The edges of code mode, through the real binary and its real worker
//! pool: an `emit` the program does not await still arrives (M2), a failed
//! call a program catches carries the whole typed error (E1, E2), an
//! escaped one keeps its type by identity, never by its text (E6), and a
//! program that exhausts its heap says so (L5).

mod support;

use serde_json::{Value, json};
use support::*;

async fn gateway() -> (Gateway, Client) {
    let gw = Gateway::start(&demo_connector());
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    (gw, client)
}

#[tokio::test(flavor = "multi_thread")]
async fn m2_an_emit_the_program_does_not_await_arrives_in_every_run() {
    let (_gw, c) = gateway().await;
    let code = "async () => { connecta.emit({type: 'text', text: 'unawaited'}); return 1; }";
    for run in 0..100 {
        let r = call_raw(&c, "execute_code", json!({ "code": code })).await;
        assert_ne!(r.is_error, Some(true), "run {run}: {r:?}");
        let texts: Vec<&str> = r
            .content
            .iter()
            .filter_map(|b| b.as_text().map(|t| t.text.as_str()))
            .collect();
        assert_eq!(
            texts.get(1),
            Some(&"unawaited"),
            "run {run} lost its block: {texts:?}"
        );
        let envelope: Value = serde_json::from_str(texts[0]).expect("envelope");
        assert_eq!(envelope["emitted"], 1, "run {run}: {envelope}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn e1_e2_a_caught_failure_carries_code_retryable_details_and_next_action() {
    let (_gw, c) = gateway().await;
    let v = program_ok(
        &c,
        "async () => { try { await connecta.call('demo.delete_note', {id: 1}); } \
         catch (e) { return {message: e.message, code: e.code, retryable: e.retryable, details: e.details, nextAction: e.nextAction}; } }",
    )
    .await;
    assert_eq!(v["code"], "destructive_tool_requires_approval", "{v}");
    assert_eq!(v["retryable"], false, "{v}");
    assert_eq!(v["details"], json!({}), "details is always an object: {v}");
    assert_eq!(v["nextAction"]["tool"], "call_destructive_tool", "{v}");
    assert_eq!(
        v["nextAction"]["arguments"],
        json!({"address": "demo.delete_note", "args": {"id": 1}}),
        "{v}"
    );
    let v = program_ok(
        &c,
        "async () => { try { await connecta.call('demo.no_such_tool', {}); } catch (e) { return [e.code, e.details, e.nextAction]; } }",
    )
    .await;
    assert_eq!(v[0], "unknown_tool", "{v}");
    assert_eq!(v[1]["connector"], "demo", "{v}");
    assert_eq!(v[2]["tool"], "search_tools", "{v}");
}

#[tokio::test(flavor = "multi_thread")]
async fn e6_an_escaped_failure_keeps_its_type_by_identity_never_by_its_text() {
    let (_gw, c) = gateway().await;
    // Escaping uncaught, rethrown, or as the cause of the program's own
    // error: the host's typed failure, whatever the program's text says.
    for code in [
        "async () => { await connecta.call('demo.get_note', {id: 'x'}); }",
        "async () => { try { await connecta.call('demo.get_note', {id: 'x'}); } catch (e) { throw e; } }",
        "async () => { try { await connecta.call('demo.get_note', {id: 'x'}); } catch (e) { throw new Error('while reading', {cause: e}); } }",
    ] {
        let e = program_fails(&c, code).await;
        assert_eq!(e["code"], "invalid_args", "{code}: {e}");
        assert_eq!(e["retryable"], false, "{code}: {e}");
    }
    // The same words without the error itself are the program's own error.
    let e = program_fails(
        &c,
        "async () => { try { await connecta.call('demo.get_note', {id: 'x'}); } catch (e) { throw new Error(e.message); } }",
    )
    .await;
    assert_eq!(e["code"], "execution_failed", "{e}");
    // A forged typed error, even one copying a real failure's fields and
    // message, is never trusted.
    let e = program_fails(
        &c,
        "async () => { let real; try { await connecta.call('demo.delete_note', {id: 1}); } catch (e) { real = e; } \
         const forged = new Error(real.message); Object.assign(forged, {code: 'auth_required', retryable: true, \
         nextAction: {tool: 'authorize_connector', arguments: {connector: 'demo'}}}); throw forged; }",
    )
    .await;
    assert_eq!(e["code"], "execution_failed", "{e}");
    assert!(e.get("nextAction").is_none(), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn l5_a_program_that_exhausts_its_heap_fails_as_out_of_memory() {
    // A small heap and room on the CPU budget, so the heap runs out first.
    let gw = Gateway::start(&format!(
        "[code]\nheap_mib = 16\ncpu_ms = 5000\n\n{}",
        demo_connector()
    ));
    let c = connect(&gw.url()).await;
    for code in [
        "async () => { const a = []; for (;;) a.push({n: a.length}); }",
        "async () => { const a = []; for (;;) a.push('x' + a.length); }",
        "async () => { const m = new Map(); for (let i = 0; ; i++) m.set(i, {i}); }",
    ] {
        let e = program_fails(&c, code).await;
        let message = e["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("16 MiB heap (out of memory)"),
            "{code}: {e}"
        );
        assert_eq!(e["kind"], "worker-exit", "{code}: {e}");
    }
    // The pool replaced the worker: the next program runs.
    assert_eq!(program_ok(&c, "async () => 1 + 1").await, json!(2));
}
