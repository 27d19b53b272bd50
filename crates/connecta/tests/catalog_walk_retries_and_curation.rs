//! The catalog is walked page by page to the end, and a page that fails
//! fails the whole catalog (a partial catalog is never served). `maxRetries`
//! honours a downstream's `Retry-After` exactly, or declines a window longer
//! than ten seconds rather than shortening it (contract Y4). Include/exclude
//! globs and annotation overrides shape what agents can see and call.
//!
//! The paging and rate-limiting downstream is `tests/peers/scripted_http_server.py`,
//! a plain MCP-over-HTTP server whose misbehaviour is scripted per run.

mod support;

use serde_json::{Value, json};
use support::*;

fn http_connector(id: &str, url: &str) -> String {
    format!("[[connector]]\nid = {}\nurl = {}\n", q(id), q(url))
}

/// The `limited` tool's attempt times (monotonic milliseconds).
async fn attempts(client: &Client, connector: &str) -> Vec<i64> {
    let (v, err) = call(
        client,
        "call_tool",
        json!({"address": format!("{connector}.attempts"), "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{v}");
    let list = if v.is_array() { &v } else { &v["value"] };
    list.as_array()
        .unwrap_or_else(|| panic!("attempt times: {v}"))
        .iter()
        .map(|t| t.as_i64().expect("a time"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paginated_catalog_is_walked_to_its_last_page() {
    let peer = HttpPeer::start(
        "scripted_http_server.py",
        &["--pages", "4", "--per-page", "2"],
    )
    .await;
    let gw = Gateway::start(&http_connector("walk", &peer.url()));
    let health = gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;

    // Tools from the first and the last page are both callable.
    for address in ["walk.page1_tool1", "walk.page4_tool2"] {
        let (v, err) = call(
            &c,
            "call_tool",
            json!({"address": address, "resultMode": "value"}),
        )
        .await;
        assert!(!err, "{address}: {v}");
        assert_eq!(
            v,
            json!({"value": address.trim_start_matches("walk.")}),
            "{address}"
        );
    }
    // And searchable: the last page's tools are in the index.
    let (page, err) = call(
        &c,
        "search_tools",
        json!({"query": "tool 2 on page 4", "connector": "walk", "limit": 20}),
    )
    .await;
    assert!(!err, "{page}");
    let names: Vec<&str> = page["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|m| m["address"].as_str())
        .collect();
    assert!(names.contains(&"walk.page4_tool2"), "{page}");
    let tools = health["connectors"][0]["catalog"]["tools"].as_u64();
    assert_eq!(tools, Some(4 * 2 + 2), "{health}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_page_fails_the_whole_catalog_and_nothing_partial_is_served() {
    let broken = HttpPeer::start(
        "scripted_http_server.py",
        &["--pages", "3", "--per-page", "2", "--broken-page", "2"],
    )
    .await;
    let gw = Gateway::start(&format!(
        "{}\n{}",
        http_connector("broken", &broken.url()),
        demo_connector()
    ));
    let health = gw
        .wait_health("the broken catalog reported", |v| {
            v["connectors"]
                .as_array()
                .is_some_and(|cs| cs.iter().any(|c| c["catalogError"].is_string()))
        })
        .await;
    let entry = health["connectors"]
        .as_array()
        .expect("connectors")
        .iter()
        .find(|c| c["id"] == "broken")
        .expect("broken listed")
        .clone();
    assert!(entry["catalog"].is_null(), "no partial catalog: {entry}");
    assert_eq!(health["status"], "degraded", "{health}");
    let c = connect(&gw.url()).await;

    // A tool from the page that did load is not served from a partial list.
    let (v, err) = call(&c, "call_tool", json!({"address": "broken.page1_tool1"})).await;
    assert!(err, "{v}");
    assert_eq!(v["error"]["code"], "catalog_lookup_failed", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("broken")),
        "{v}"
    );
    // Search does not offer it either; the healthy connector still works.
    let (page, _) = call(
        &c,
        "search_tools",
        json!({"query": "page 1 tool 1", "limit": 50}),
    )
    .await;
    assert!(
        !page.to_string().contains("broken.page1_tool1"),
        "a partial catalog leaked into search: {page}"
    );
    let (list, err) = call(&c, "search_tools", json!({"connector": "demo"})).await;
    assert!(!err, "{list}");
    assert!(!list["tools"].as_array().expect("tools").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn y4_max_retries_honours_a_short_retry_after_exactly() {
    let rate_limited = HttpPeer::start(
        "scripted_http_server.py",
        &[
            "--limited-failures",
            "2",
            "--limited-status",
            "429",
            "--retry-after",
            "1",
        ],
    )
    .await;
    let unavailable = HttpPeer::start(
        "scripted_http_server.py",
        &[
            "--limited-failures",
            "1",
            "--limited-status",
            "503",
            "--retry-after",
            "1",
        ],
    )
    .await;
    let gw = Gateway::start(&format!(
        "{}\n{}",
        http_connector("rl", &rate_limited.url()),
        http_connector("down", &unavailable.url())
    ));
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;

    // Two 429s with `Retry-After: 1`, two retries allowed: the third attempt
    // answers, and each retry waited the whole second the downstream asked.
    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "rl.limited", "maxRetries": 2, "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(v["value"], "answered after 3 attempts", "{v}");
    let times = attempts(&c, "rl").await;
    assert_eq!(times.len(), 3, "{times:?}");
    for gap in times.windows(2).map(|w| w[1] - w[0]) {
        assert!(gap >= 1_000, "a retry came before Retry-After: {times:?}");
    }

    // A 503 with `Retry-After` is retried the same way.
    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "down.limited", "maxRetries": 1, "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{v}");
    let times = attempts(&c, "down").await;
    assert_eq!(times.len(), 2, "{times:?}");
    assert!(times[1] - times[0] >= 1_000, "{times:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn y4_retries_run_out_typed_and_a_window_beyond_ten_seconds_is_declined() {
    let twice = HttpPeer::start(
        "scripted_http_server.py",
        &["--limited-failures", "5", "--retry-after", "1"],
    )
    .await;
    let long = HttpPeer::start(
        "scripted_http_server.py",
        &["--limited-failures", "5", "--retry-after", "30"],
    )
    .await;
    let gw = Gateway::start(&format!(
        "{}\n{}\n{}",
        http_connector("twice", &twice.url()),
        http_connector("long", &long.url()),
        demo_connector()
    ));
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;

    // Retries exhausted: the last failure comes back typed, with its window.
    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "twice.limited", "maxRetries": 1}),
    )
    .await;
    assert!(err, "{v}");
    assert_eq!(v["error"]["code"], "rate_limited", "{v}");
    assert_eq!(v["error"]["retryable"], true, "{v}");
    assert_eq!(v["error"]["retryAfterMs"], 1_000, "{v}");
    assert_eq!(attempts(&c, "twice").await.len(), 2);

    // Thirty seconds is beyond the ten-second ceiling: no retry at all, and
    // the window is reported verbatim rather than shortened.
    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "long.limited", "maxRetries": 2}),
    )
    .await;
    assert!(err, "{v}");
    assert_eq!(v["error"]["code"], "rate_limited", "{v}");
    assert_eq!(v["error"]["retryAfterMs"], 30_000, "{v}");
    assert_eq!(attempts(&c, "long").await.len(), 1, "declined, not retried");

    // A program sees the same window verbatim and makes one attempt (Y1).
    let (v, err) = program(
        &c,
        "async () => { try { await connecta.call('long.limited'); return 'no'; } \
         catch (e) { return {code: e.code, retryable: e.retryable, after: e.retryAfterMs}; } }",
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(
        v["result"],
        json!({"code": "rate_limited", "retryable": true, "after": 30_000}),
        "{v}"
    );
    assert_eq!(attempts(&c, "long").await.len(), 2, "one attempt per call");
}

#[tokio::test(flavor = "multi_thread")]
async fn include_exclude_and_overrides_shape_what_agents_see_and_call() {
    let gw = Gateway::start(&format!(
        r#"
[[connector]]
id = "py"
command = {python}
args = [{server}, "stdio"]
include_tools = ["weather_*", "lookup*", "forget_city"]
exclude_tools = ["lookup-record"]

[connector.overrides.weather_lookup]
destructive = true

[connector.overrides.forget_city]
read_only = true
destructive = false
"#,
        python = q(&python()),
        server = q(&peers().join("py_server.py").display().to_string()),
    ));
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;

    let (page, err) = call(
        &c,
        "search_tools",
        json!({"connector": "py", "limit": 50, "safety": "all"}),
    )
    .await;
    assert!(!err, "{page}");
    let mut names: Vec<&str> = page["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|m| m["address"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        vec!["py.forget_city", "py.lookup_record", "py.weather_lookup"],
        "include then exclude: {page}"
    );

    // Excluded and never-included tools do not exist for agents.
    for address in ["py.lookup-record", "py.big_text"] {
        let (v, err) = call(&c, "call_tool", json!({"address": address})).await;
        assert!(err, "{v}");
        assert_eq!(v["error"]["code"], "unknown_tool", "{address}: {v}");
    }
    // An override that marks a read-only tool destructive moves it behind
    // the approval boundary...
    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "py.weather_lookup", "args": {"city": "Oslo"}}),
    )
    .await;
    assert!(err, "{v}");
    assert_eq!(
        v["error"]["code"], "destructive_tool_requires_approval",
        "{v}"
    );
    // ...and one that marks a tool read-only lets call_tool reach it.
    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "py.forget_city", "args": {"city": "Oslo"}}),
    )
    .await;
    assert!(!err, "{v}");
    let approval_page: Value = call(
        &c,
        "search_tools",
        json!({"connector": "py", "safety": "approvalRequired", "limit": 50}),
    )
    .await
    .0;
    let approval: Vec<&str> = approval_page["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|m| m["address"].as_str())
        .collect();
    assert_eq!(approval, vec!["py.weather_lookup"], "{approval_page}");
}
