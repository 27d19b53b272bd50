//! What can be refused about a call is refused before anything is called,
//! and the refusal is recorded: a bad `fields` path on a write used to be
//! found only after the write had happened, which then reported an error
//! (and invited a retry that wrote again). Under the `never` approval
//! policy an unknown tool is `unknown_tool`, not a rejection. Oversized
//! results name the connector's own cap, and echo the caller's field paths
//! clamped.

mod support;

use serde_json::{Value, json};
use support::*;

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("<none>")
}

async fn count_notes(client: &Client, q: &str) -> usize {
    let (v, err) = call(
        client,
        "call_tool",
        json!({"address": "demo.search_notes", "args": {"query": q}, "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{v}");
    v["notes"].as_array().map_or(0, Vec::len)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_with_a_bad_field_path_is_refused_before_it_is_made() {
    let gw = Gateway::start(&demo_connector());
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    assert_eq!(count_notes(&client, "UNWRITTEN").await, 0);

    for fields in [json!(["id[0]"]), json!([""]), json!([])] {
        let (v, err) = call(
            &client,
            "call_destructive_tool",
            json!({
                "address": "demo.create_note",
                "args": {"title": "UNWRITTEN", "body": "must not be written"},
                "reason": "test",
                "fields": fields,
            }),
        )
        .await;
        assert!(err, "{v}");
        assert_eq!(code(&v), "invalid_args", "{v}");
    }
    assert_eq!(
        count_notes(&client, "UNWRITTEN").await,
        0,
        "no refused call wrote a note"
    );

    // A read-only call's bad arguments are refused the same way, and every
    // refusal naming a real connector is in the activity log.
    for args in [
        json!({"address": "demo.list_notes", "maxRetries": 3}),
        json!({"address": "demo.list_notes", "timeoutMs": 0}),
        json!({"address": "demo.list_notes", "fields": []}),
        json!({"address": "demo.list_notes", "fields": ["a..b"]}),
    ] {
        let (v, err) = call(&client, "call_tool", args.clone()).await;
        assert!(err, "{args}: {v}");
        assert_eq!(code(&v), "invalid_args", "{args}: {v}");
    }
    let _ = client.cancel().await;
    let refused = |events: &[Value], tool: &str| {
        events
            .iter()
            .filter(|e| e["toolName"] == tool && e["errorCode"] == "invalid_args")
            .count()
    };
    let events = activity_until(&gw, |e| e.len() >= 7).await;
    assert_eq!(refused(&events, "create_note"), 3, "{events:?}");
    assert_eq!(refused(&events, "list_notes"), 4, "{events:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn under_never_an_unknown_tool_is_unknown_not_rejected() {
    let gw = Gateway::start(&format!(
        "[approvals]\npolicy = \"never\"\n\n{}",
        demo_connector()
    ));
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    let (v, err) = call(
        &client,
        "call_destructive_tool",
        json!({"address": "demo.no_such_tool", "args": {}}),
    )
    .await;
    assert!(err, "{v}");
    assert_eq!(code(&v), "unknown_tool", "{v}");
    let (v, err) = call(
        &client,
        "call_destructive_tool",
        json!({"address": "demo.delete_note", "args": {"id": 1}}),
    )
    .await;
    assert!(err, "{v}");
    assert_eq!(code(&v), "approval_rejected", "{v}");
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_results_name_the_connectors_cap_and_echo_paths_clamped() {
    let gw = Gateway::start(&format!("{}result_cap_bytes = 200\n", demo_connector()));
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    let (v, err) = call(&client, "call_tool", json!({"address": "demo.list_notes"})).await;
    assert!(!err, "{v}");
    assert_eq!(v["truncated"], true, "{v}");
    let hint = v["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains("over this connector's 200 byte cap"),
        "{hint}"
    );
    let head = v["head"].as_str().unwrap_or_default();
    assert!(
        head.len() <= 100,
        "the head is at most half the cap: {head}"
    );

    let long = "k".repeat(40_000);
    let raw = call_raw(
        &client,
        "call_tool",
        json!({"address": "demo.get_note", "args": {"id": 1}, "fields": ["title", long]}),
    )
    .await;
    let text = serde_json::to_string(&raw).expect("serializes");
    assert!(text.contains("matched nothing"), "{text}");
    assert!(
        text.len() < 4_000,
        "the echoed paths are clamped: {} bytes",
        text.len()
    );
    let _ = client.cancel().await;
}
