//! Lazy namespace globals (contract A2): the pool's shortcut table makes
//! each alias a global whose properties call one binding function, and
//! changes nothing for any other name.

mod common;

use common::{failed, ok, options, pool_with, run};
use connecta_sandbox::{FailureKind, PoolError, PoolOptions, QuickJsPool, Shortcuts};
use serde_json::json;

fn shortcuts(aliases: &[(&str, &str)]) -> Shortcuts {
    Shortcuts {
        global: "connecta".into(),
        function: "callNamespace".into(),
        aliases: aliases
            .iter()
            .map(|(a, t)| ((*a).to_owned(), (*t).to_owned()))
            .collect(),
    }
}

async fn pool_with_shortcuts(aliases: &[(&str, &str)]) -> QuickJsPool {
    let mut o = options();
    o.shortcuts = shortcuts(aliases);
    pool_with(o).await
}

#[tokio::test]
async fn a2_a_shortcut_call_reaches_the_namespace_function_with_its_target() {
    let pool = pool_with_shortcuts(&[("ci_svc", "ci-svc"), ("docs", "docs")]).await;
    let r = run(
        &pool,
        "async () => [await ci_svc.get_run({ runId: 7 }), await docs['get-page']()]",
    )
    .await;
    assert_eq!(
        ok(&r),
        json!([
            { "target": "ci-svc", "tool": "get_run", "args": { "runId": 7 } },
            { "target": "docs", "tool": "get-page", "args": {} },
        ])
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn a2_a_shortcut_reads_as_a_defined_global_and_keeps_its_identity() {
    let pool = pool_with_shortcuts(&[("ci_svc", "ci-svc")]).await;
    let r = run(
        &pool,
        "async () => [typeof ci_svc, 'ci_svc' in globalThis, globalThis.ci_svc === ci_svc, \
         typeof ci_svc.anything, ci_svc[Symbol.iterator] === undefined]",
    )
    .await;
    assert_eq!(ok(&r), json!(["object", true, true, "function", true]));
    pool.shutdown().await;
}

#[tokio::test]
async fn a5_shortcuts_are_frozen_for_the_program() {
    let pool = pool_with_shortcuts(&[("ci_svc", "ci-svc")]).await;
    // Sloppy writes do nothing, to the global or into the namespace.
    let r = run(
        &pool,
        "async () => { ci_svc = 1; ci_svc.get_run = 2; return [typeof ci_svc, \
         typeof ci_svc.get_run, Object.keys(ci_svc).length]; }",
    )
    .await;
    assert_eq!(ok(&r), json!(["object", "function", 0]));
    // Strict ones throw.
    let r = run(&pool, "async () => { 'use strict'; ci_svc = 1; }").await;
    let message = failed(&r, FailureKind::Exception);
    assert!(message.contains("TypeError"), "{message}");
    pool.shutdown().await;
}

#[tokio::test]
async fn names_that_are_not_aliases_resolve_as_without_shortcuts() {
    let pool = pool_with_shortcuts(&[("ci_svc", "ci-svc")]).await;
    let r = run(
        &pool,
        "async () => { x_new = 5; return [typeof nothing_here, globalThis.x_new, \
         globalThis.toString === Object.prototype.toString, \
         globalThis.__proto__ === Object.getPrototypeOf(globalThis), \
         'hasOwnProperty' in globalThis, 'nothing_here' in globalThis]; }",
    )
    .await;
    assert_eq!(ok(&r), json!(["undefined", 5, true, true, true, false]));
    let r = run(&pool, "async () => nothing_here").await;
    let message = failed(&r, FailureKind::Exception);
    assert!(message.contains("ReferenceError"), "{message}");
    let r = run(
        &pool,
        "async () => { 'use strict'; undeclared_strict = 1; }",
    )
    .await;
    let message = failed(&r, FailureKind::Exception);
    assert!(message.contains("ReferenceError"), "{message}");
    pool.shutdown().await;
}

#[tokio::test]
async fn only_the_aliases_a_program_spells_are_defined() {
    let pool = pool_with_shortcuts(&[("ci_svc", "ci-svc"), ("other_svc", "other")]).await;
    let r = run(
        &pool,
        "async () => { const names = Object.getOwnPropertyNames(globalThis); \
         return [names.includes('ci_svc'), names.includes('other' + '_svc'), \
         typeof globalThis['other' + '_svc']]; }",
    )
    .await;
    // A name built at run time is not spelled…
    assert_eq!(ok(&r), json!([true, false, "undefined"]));
    // …a literal that `eval` reads is.
    let r = run(&pool, "async () => typeof eval('other_svc')").await;
    assert_eq!(ok(&r), json!("object"));
    pool.shutdown().await;
}

#[tokio::test]
async fn ten_thousand_aliases_are_all_reachable() {
    let aliases: Vec<(String, String)> = (0..10_000)
        .map(|i| (format!("connector_{i}"), format!("connector-{i}")))
        .collect();
    let pairs: Vec<(&str, &str)> = aliases
        .iter()
        .map(|(a, t)| (a.as_str(), t.as_str()))
        .collect();
    let pool = pool_with_shortcuts(&pairs).await;
    let r = run(
        &pool,
        "async () => [(await connector_0.a()).target, (await connector_9999.b()).target]",
    )
    .await;
    assert_eq!(ok(&r), json!(["connector-0", "connector-9999"]));
    pool.shutdown().await;
}

#[tokio::test]
async fn a_shortcut_table_that_is_not_identifiers_is_refused_at_start() {
    for bad in [
        shortcuts(&[("my-svc", "my-svc")]),
        shortcuts(&[("svc", "a"), ("svc", "b")]),
        Shortcuts {
            global: String::new(),
            ..shortcuts(&[("svc", "svc")])
        },
    ] {
        let mut o: PoolOptions = options();
        o.shortcuts = bad.clone();
        match QuickJsPool::start(o).await {
            Err(PoolError::InvalidOptions(m)) => assert!(m.contains("shortcut"), "{m}"),
            Err(other) => panic!("{bad:?}: {other}"),
            Ok(pool) => {
                pool.shutdown().await;
                panic!("{bad:?} was accepted");
            }
        }
    }
}
