//! The HTTP server's boundaries through the real binary: `Host` and `Origin`
//! values come from configuration, `/health` answers while every `/mcp` slot
//! is taken, a stash expires, and SIGINT stops the gateway as gracefully as
//! SIGTERM, leaving no child behind.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

async fn post_init(gw: &Gateway, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut req = reqwest::Client::new()
        .post(gw.url())
        .header("Accept", "application/json, text/event-stream")
        .json(&initialize());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.expect("answered")
}

#[tokio::test(flavor = "multi_thread")]
async fn hosts_and_origins_accepted_are_the_configured_ones() {
    let gw = Gateway::start(&format!(
        "[server]\nallowed_hosts = [\"gateway.internal\"]\nallowed_origins = [\"https://app.example.com\"]\n\n{}",
        demo_connector()
    ));
    assert_eq!(post_init(&gw, &[]).await.status(), 200, "loopback");
    assert_eq!(
        post_init(&gw, &[("Host", "gateway.internal")])
            .await
            .status(),
        200,
        "a configured host"
    );
    assert_eq!(
        post_init(&gw, &[("Host", "evil.example.com")])
            .await
            .status(),
        403,
        "an unlisted host (DNS rebinding)"
    );
    let allowed = post_init(&gw, &[("Origin", "https://app.example.com")]).await;
    assert_eq!(allowed.status(), 200);
    assert_eq!(
        allowed
            .headers()
            .get("access-control-allow-origin")
            .and_then(|v| v.to_str().ok()),
        Some("https://app.example.com")
    );
    let foreign = post_init(&gw, &[("Origin", "https://evil.example.com")]).await;
    assert_eq!(foreign.status(), 403, "an unlisted origin");
    assert!(
        foreign
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_no_origins_configured_a_browser_origin_is_refused() {
    let gw = Gateway::start(&demo_connector());
    let r = post_init(&gw, &[("Origin", "https://somewhere.example")]).await;
    assert_eq!(r.status(), 403);
    assert_eq!(
        post_init(&gw, &[]).await.status(),
        200,
        "non-browser clients"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn health_answers_while_every_mcp_slot_is_taken() {
    // Occupy the only slot with a call that hangs.
    let (gw, busy) = one_slot_taken(8, 6000).await;
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    // Once the slot is taken, the next /mcp request is refused at once...
    let refused = loop {
        let r = post_init(&gw, &[]).await;
        if r.status() == 503 {
            break r;
        }
        assert!(Instant::now() < deadline, "the slot never filled");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        refused.headers().get("retry-after").is_some(),
        "a 503 says when to come back"
    );
    // ...while /health is outside the queue and answers.
    let health = http
        .get(format!("{}/health", gw.base()))
        .send()
        .await
        .expect("health");
    assert_eq!(health.status(), 200);
    let body: Value = health.json().await.expect("json");
    assert_eq!(body["connectors"][0]["id"], "py");
    let (_client, (v, err)) = busy.await.expect("the busy call ends");
    assert!(err, "{v}");
    assert_eq!(v["error"]["code"], "timeout", "{v}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stash_expires_and_paging_it_then_says_why() {
    let gw = Gateway::start(&format!(
        "[limits]\nresult_cap_bytes = 2000\nstash_ttl_secs = 1\n\n{}",
        python_connector("py")
    ));
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;
    let (notice, err) = call(
        &c,
        "call_tool",
        json!({"address": "py.big_text", "args": {"kilobytes": 8}}),
    )
    .await;
    assert!(!err, "{notice}");
    let id = notice["resultId"].as_str().expect("resultId").to_owned();
    let (page, err) = call(&c, "get_result", json!({"id": id})).await;
    assert!(!err, "fresh: {page}");
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    let (gone, err) = call(&c, "get_result", json!({"id": id})).await;
    assert!(err, "{gone}");
    assert_eq!(gone["error"]["code"], "not_found", "{gone}");
    let message = gone["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("expired") && message.contains("1 second"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_stops_gracefully_and_reaps_every_child() {
    let gw = Gateway::start(&format!("{}\n{}", python_connector("py"), demo_connector()));
    gw.wait_catalogs().await;
    let pid = gw.pid();
    let children = descendants(pid);
    assert!(children.len() >= 2, "downstream children: {children:?}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("signal");
    let mut gw = gw;
    let status = gw.stop();
    assert!(status.success(), "{status:?}\n{}", gw.stderr());
    let deadline = Instant::now() + Duration::from_secs(10);
    while children.iter().any(|&c| alive(c)) {
        assert!(
            Instant::now() < deadline,
            "children outlived the gateway: {children:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
