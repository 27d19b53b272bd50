//! SSRF protection through the real binary: without
//! `allow_private_network`, an `api` connector refuses loopback, private,
//! link-local and metadata addresses, whether written as an IPv4 literal, an
//! IPv6 literal, an IPv4-mapped IPv6 literal, or a name that resolves to
//! loopback (the check is on the resolved address). A live provider listens
//! on the loopback targets, so a guard that let a request through would be
//! seen there; for 10/8 and 169.254.169.254 a broken guard would try to
//! connect and end in `timeout`/`unavailable` instead of the refusal this test
//! asserts (nothing listens there in a test environment).
//!
//! The whole classification table (CGNAT, NAT64, 6to4, `fd00:ec2::254`, …)
//! is covered without sending anything by the unit tests of
//! `connectors/src/api/fetch.rs`.

mod api_support;
mod support;

use api_support::*;
use serde_json::json;
use support::*;

#[tokio::test(flavor = "multi_thread")]
async fn loopback_private_and_metadata_targets_are_refused_on_the_resolved_address() {
    let provider = start_provider().await;
    let port = provider.port;
    let targets = [
        ("v4", format!("http://127.0.0.1:{port}/v1")),
        ("v6", format!("http://[::1]:{port}/v1")),
        ("mapped", format!("http://[::ffff:127.0.0.1]:{port}/v1")),
        ("name", format!("http://localhost:{port}/v1")),
        ("private", "http://10.0.0.1/v1".to_owned()),
        ("metadata", "http://169.254.169.254/latest".to_owned()),
    ];
    let mut config = String::new();
    for (id, url) in &targets {
        config.push_str(&connector_toml(id, url, false));
    }
    // The same provider, opted in: reachable.
    config.push_str(&connector_toml("optin", &provider.base_url(), true));
    let gw = Gateway::start(&config);
    gw.wait_catalogs().await;
    set_credential(&gw.config_path, "optin", GOOD_TOKEN, &[]);
    for (id, _) in &targets {
        set_credential(&gw.config_path, id, GOOD_TOKEN, &[]);
    }
    let client = connect(&gw.url()).await;
    for (id, url) in &targets {
        let (v, err) = call(
            &client,
            "call_tool",
            json!({"address": format!("{id}.get_forecast"), "args": {"city": "Paris"}}),
        )
        .await;
        assert!(err, "{url} must be refused: {v}");
        assert_eq!(v["error"]["code"], "connector_call_failed", "{url}: {v}");
        assert_eq!(v["error"]["refusal"], "address", "{url}: {v}");
        assert_eq!(v["error"]["retryable"], false);
        let msg = v["error"]["message"].as_str().unwrap_or_default();
        let class = match *id {
            "private" => "a private address",
            "metadata" => "a cloud metadata address",
            _ => "a loopback address",
        };
        assert!(msg.contains(class), "{url}: {msg}");
        assert!(msg.contains("allow_private_network"), "{msg}");
    }
    assert_eq!(
        provider.seen.count(),
        0,
        "no refused request reached the provider: {:?}",
        provider.seen.targets()
    );
    let (v, err) = call(
        &client,
        "call_tool",
        json!({"address": "optin.get_forecast", "args": {"city": "Paris"}}),
    )
    .await;
    assert!(!err, "opted in: {v}");
    assert_eq!(provider.seen.count(), 1);
    client.cancel().await.ok();
}
