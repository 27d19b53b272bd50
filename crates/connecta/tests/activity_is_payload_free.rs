//! Every attempted call leaves one payload-free activity event: a marker
//! passed in arguments (and echoed in results and errors) never reaches the
//! store, and `connecta activity tail` prints the events.

mod support;

use std::process::Command;
use std::time::Duration;

use serde_json::json;
use support::*;

const MARKER: &str = "PAYLOAD-MARKER-7f3a9c";

/// `connecta activity tail` as a person reads it (the table, not JSON).
fn table(gw: &Gateway) -> String {
    let (status, table, err) = run(
        Command::new(bin())
            .args(["activity", "tail", "--config"])
            .arg(&gw.config_path),
        Duration::from_secs(30),
    );
    assert!(status.success(), "{err}");
    table
}

#[tokio::test(flavor = "multi_thread")]
async fn no_event_carries_arguments_results_or_error_text() {
    let mut gw = Gateway::start(&demo_connector());
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;

    // Success with the marker in args and in the result.
    let (_, err) = call(&client, "call_destructive_tool", json!({"address": "demo.create_note", "reason": MARKER, "args": {"title": MARKER, "body": MARKER}})).await;
    assert!(!err);
    let (v, err) = call(
        &client,
        "call_tool",
        json!({"address": "demo.search_notes", "args": {"query": MARKER}}),
    )
    .await;
    assert!(!err, "{v}");
    // Refusals and failures carrying the marker.
    let (_, err) = call(
        &client,
        "call_tool",
        json!({"address": "demo.delete_note", "args": {"id": MARKER}}),
    )
    .await;
    assert!(err);
    let (_, err) = call(
        &client,
        "call_tool",
        json!({"address": "demo.get_note", "args": {"id": MARKER}}),
    )
    .await;
    assert!(err, "schema-invalid arguments are refused");
    let (_, err) = call(
        &client,
        "call_tool",
        json!({"address": "demo.no_such_tool", "args": {"x": MARKER}}),
    )
    .await;
    assert!(err, "unknown tool");
    let (_, err) = call(
        &client,
        "call_tool",
        json!({"address": format!("{MARKER}.x")}),
    )
    .await;
    assert!(err, "unknown connector");
    let _ = client.cancel().await;
    let status = gw.stop();
    assert!(status.success());

    // The raw database file (and its WAL) never contain the marker.
    for name in ["connecta.db", "connecta.db-wal"] {
        let path = gw.data_dir().join(name);
        if let Ok(bytes) = std::fs::read(&path) {
            assert!(
                !bytes.windows(MARKER.len()).any(|w| w == MARKER.as_bytes()),
                "{} contains the marker",
                path.display()
            );
        }
    }

    let (status, out, err) = run(
        Command::new(bin())
            .args(["activity", "tail", "--json", "-n", "50", "--config"])
            .arg(&gw.config_path),
        Duration::from_secs(30),
    );
    assert!(status.success(), "{err}");
    let events: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    // Five events: the unknown connector leaves none (V3).
    assert_eq!(events.len(), 5, "{out}");
    let codes: Vec<&str> = events
        .iter()
        .map(|e| e["errorCode"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(
        codes,
        vec![
            "-",
            "-",
            "destructive_tool_requires_approval",
            "invalid_args",
            "unknown_tool"
        ]
    );
    assert_eq!(events[0]["source"], "call_destructive_tool");
    assert_eq!(events[2]["friction"], "destructive_reroute");
    assert_eq!(events[3]["friction"], "schema_retry");
    assert!(!out.contains(MARKER), "{out}");
    for e in &events {
        let keys: Vec<&String> = e.as_object().expect("object").keys().collect();
        for k in keys {
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
                "unexpected field {k}"
            );
        }
    }
    // The human table too.
    let table = table(&gw);
    assert!(
        table.contains("demo.get_note") && table.contains("invalid_args"),
        "{table}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_table_shows_control_characters_of_caller_text_escaped() {
    let mut gw = Gateway::start(&demo_connector());
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    let (_, err) = call(
        &client,
        "call_tool",
        json!({"address": "demo.\u{1b}[2J\u{1b}[31mFAKE\nforged row"}),
    )
    .await;
    assert!(err, "unknown tool");
    let _ = client.cancel().await;
    gw.stop();
    let table = table(&gw);
    assert!(!table.contains('\u{1b}'), "{table:?}");
    assert!(
        !table.lines().any(|l| l.starts_with("forged row")),
        "{table}"
    );
    assert!(table.contains("demo.\\u{1b}[2J"), "{table}");
}
