//! `/health` reports liveness and per-connector status; `connecta doctor`
//! checks a deployment end to end and says what is wrong; bearer tokens gate
//! `/mcp` (and never `/health`); unknown Host headers are refused.

mod support;

use std::process::Command;
use std::time::Duration;

use support::*;

const TOKEN: &str = "test-token-0123456789abcdef";

#[tokio::test(flavor = "multi_thread")]
async fn health_and_doctor_report_a_working_deployment() {
    let gw = Gateway::start(&demo_connector());
    let health = gw.wait_catalogs().await;
    assert_eq!(health["status"], "ok");
    assert_eq!(health["store"], "sqlite");
    assert_eq!(health["connectors"][0]["id"], "demo");
    assert_eq!(health["connectors"][0]["state"], "ready");
    assert_eq!(health["connectors"][0]["catalog"]["tools"], 7);
    let (status, out, err) = run(
        Command::new(bin()).args(["doctor", "--url", &gw.base()]),
        Duration::from_secs(60),
    );
    assert!(status.success(), "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        out.contains("call_tool: demo.") && out.contains("looks healthy"),
        "{out}"
    );
    let metrics = metrics_text(&gw).await;
    assert!(
        metrics.contains("connecta_connector_ready{connector=\"demo\"} 1"),
        "{metrics}"
    );
}

#[test]
fn doctor_says_plainly_when_nothing_is_there() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let (status, out, _) = run(
        Command::new(bin()).args(["doctor", "--url", &format!("http://127.0.0.1:{port}")]),
        Duration::from_secs(60),
    );
    assert!(!status.success());
    assert!(
        out.contains("cannot reach") && out.contains("is connecta running there?"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bearer_tokens_gate_mcp_but_not_health() {
    let config = format!(
        "[auth]\nbearer_tokens = [\"${{CONNECTA_TEST_TOKEN}}\"]\n\n{}",
        demo_connector()
    );
    let gw = Gateway::start_with_env(&config, &[("CONNECTA_TEST_TOKEN", TOKEN)]);
    let http = reqwest::Client::new();
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let no_token = http
        .post(gw.url())
        .header("Accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .expect("answered");
    assert_eq!(no_token.status(), 401);
    assert!(no_token.headers().get("www-authenticate").is_some());
    let wrong = http
        .post(gw.url())
        .bearer_auth("test-token-0123456789abcdeX")
        .header("Accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .expect("answered");
    assert_eq!(wrong.status(), 401);
    let ok = http
        .post(gw.url())
        .bearer_auth(TOKEN)
        .header("Accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .expect("answered");
    assert_eq!(ok.status(), 200);
    assert_eq!(
        http.get(format!("{}/health", gw.base()))
            .send()
            .await
            .expect("health")
            .status(),
        200
    );
    let bad_host = http
        .post(gw.url())
        .bearer_auth(TOKEN)
        .header("Host", "evil.example.com")
        .header("Accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .expect("answered");
    assert_eq!(bad_host.status(), 403);
    let (status, out, _) = run(
        Command::new(bin())
            .args(["doctor", "--url", &gw.base()])
            .env_remove("CONNECTA_TOKEN"),
        Duration::from_secs(60),
    );
    assert!(!status.success());
    assert!(out.contains("needs a bearer token"), "{out}");
    let (status, out, err) = run(
        Command::new(bin())
            .args(["doctor", "--url", &gw.base()])
            .env("CONNECTA_TOKEN", TOKEN),
        Duration::from_secs(60),
    );
    assert!(status.success(), "{out}\n{err}");
    // The token never appears in the logs.
    assert!(!gw.stderr().contains(TOKEN));
}
