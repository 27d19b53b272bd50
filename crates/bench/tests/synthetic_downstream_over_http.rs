//! The synthetic downstream, started as its own process through the launcher
//! protocol and spoken to with the rmcp client: pagination, the tool shape,
//! argument validation, and exit on SIGTERM.

use std::time::Duration;

use connecta_bench::launcher::{
    ENV_CONNECTORS, ENV_TOOLS_PER_CONNECTOR, LaunchSpec, ServerProcess, shell_quote,
};
use connecta_bench::measure::checks::first_text;
use connecta_bench::measure::{Driver, connect, connect_with};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_connecta-bench");

async fn launch(connectors: usize, tools: usize, extra: &str) -> ServerProcess {
    let spec = LaunchSpec {
        command: format!("{} synthetic-downstream {extra}", shell_quote(BIN)),
        env: vec![
            (ENV_CONNECTORS.into(), connectors.to_string()),
            (ENV_TOOLS_PER_CONNECTOR.into(), tools.to_string()),
        ],
        ready_timeout: Duration::from_secs(30),
        log_file: None,
    };
    ServerProcess::launch(&spec)
        .await
        .expect("the downstream starts")
}

fn url(server: &ServerProcess, connector: usize) -> String {
    format!(
        "http://127.0.0.1:{}/connector_{connector}/mcp",
        server.ready.port
    )
}

#[tokio::test]
async fn tools_list_pages_through_every_tool_in_order() {
    let server = launch(3, 1_201, "").await;
    let client = connect(&url(&server, 2)).await.expect("initialize");
    let pages = client.list_all_pages().await.expect("tools/list");
    assert_eq!(pages.len(), 3, "500 tools per page");
    assert_eq!(pages[0].tools.len(), 500);
    assert!(pages[2].next_cursor.is_none());
    let names: Vec<String> = pages
        .iter()
        .flat_map(|p| p.tools.iter().map(|t| t.name.to_string()))
        .collect();
    let expected: Vec<String> = (0..1_201).map(|t| format!("lookup_record_{t}")).collect();
    assert_eq!(names, expected);

    let tool = &pages[2].tools.last().expect("a tool");
    assert_eq!(
        tool.description.as_deref(),
        Some("Retrieve synthetic performance record 1200 from shard 2. Marker markerccxtate.")
    );
    let annotations = tool.annotations.as_ref().expect("annotations");
    assert_eq!(annotations.read_only_hint, Some(true));
    assert_eq!(annotations.idempotent_hint, Some(true));
    assert_eq!(annotations.destructive_hint, Some(false));
    assert_eq!(
        serde_json::Value::Object((*tool.input_schema).clone()),
        json!({
            "type": "object",
            "properties": {"value": {"type": "integer"}},
            "required": ["value"],
            "additionalProperties": false
        })
    );
    assert!(tool.output_schema.is_some());
    client.close().await;
    let stop = server.stop(Duration::from_secs(5)).await.expect("stop");
    assert!(stop.exited_on_sigterm, "{stop:?}");
}

#[tokio::test]
async fn page_size_is_configurable_and_small_catalogs_have_one_page() {
    let server = launch(1, 10, "--page-size 4").await;
    let client = connect(&url(&server, 0)).await.expect("initialize");
    let pages = client.list_all_pages().await.expect("tools/list");
    assert_eq!(
        pages.iter().map(|p| p.tools.len()).collect::<Vec<_>>(),
        [4, 4, 2]
    );
    client.close().await;
    server.stop(Duration::from_secs(5)).await.expect("stop");

    let server = launch(2, 10, "").await;
    let client = connect(&url(&server, 1)).await.expect("initialize");
    let pages = client.list_all_pages().await.expect("tools/list");
    assert_eq!(pages.len(), 1);
    assert!(pages[0].next_cursor.is_none());
    client.close().await;
    server.stop(Duration::from_secs(5)).await.expect("stop");
}

#[tokio::test]
async fn calls_echo_connector_tool_and_value_as_structured_content_and_text() {
    let server = launch(4, 20, "").await;
    let client = connect(&url(&server, 3)).await.expect("initialize");
    let result = client
        .call("lookup_record_17", json!({"value": 42}))
        .await
        .expect("call");
    assert_eq!(result.is_error, Some(false));
    let expected = json!({"connector": 3, "tool": 17, "value": 42});
    assert_eq!(result.structured_content, Some(expected.clone()));
    assert_eq!(first_text(&result), Some(expected.to_string()));

    // Every connector is its own server at its own path.
    let other = connect(&url(&server, 0)).await.expect("initialize");
    let result = other
        .call("lookup_record_0", json!({"value": -5}))
        .await
        .expect("call");
    assert_eq!(
        result.structured_content,
        Some(json!({"connector": 0, "tool": 0, "value": -5}))
    );
    other.close().await;
    client.close().await;
    server.stop(Duration::from_secs(5)).await.expect("stop");
}

#[tokio::test]
async fn bad_arguments_are_error_results_and_unknown_tools_are_protocol_errors() {
    let server = launch(1, 5, "").await;
    let client = connect(&url(&server, 0)).await.expect("initialize");
    for args in [
        json!({"value": "7"}),
        json!({"value": 1.5}),
        json!({}),
        json!({"value": 1, "x": 2}),
    ] {
        let result = client
            .call("lookup_record_1", args.clone())
            .await
            .expect("a result");
        assert_eq!(result.is_error, Some(true), "{args}");
        assert!(result.structured_content.is_none());
    }
    assert!(
        client
            .call("lookup_record_5", json!({"value": 1}))
            .await
            .is_err()
    );
    assert!(
        client
            .call("delete_everything", json!({"value": 1}))
            .await
            .is_err()
    );
    client.close().await;
    server.stop(Duration::from_secs(5)).await.expect("stop");
}

#[tokio::test]
async fn a_connector_that_does_not_exist_has_no_endpoint() {
    let server = launch(2, 5, "").await;
    assert!(connect(&url(&server, 2)).await.is_err());
    server.stop(Duration::from_secs(5)).await.expect("stop");
}

#[tokio::test]
async fn the_raw_driver_sees_the_same_catalog_and_answers() {
    let server = launch(2, 700, "").await;
    let raw = connect_with(&url(&server, 1), Driver::Raw)
        .await
        .expect("initialize");
    let pages = raw.list_all_pages().await.expect("tools/list");
    assert_eq!(
        pages.iter().map(|p| p.tools.len()).collect::<Vec<_>>(),
        [500, 200]
    );
    let result = raw
        .call("lookup_record_699", json!({"value": 8}))
        .await
        .expect("call");
    assert_eq!(
        result.structured_content,
        Some(json!({"connector": 1, "tool": 699, "value": 8}))
    );
    let bad = raw
        .call("lookup_record_0", json!({"value": "8"}))
        .await
        .expect("a result");
    assert_eq!(bad.is_error, Some(true));
    assert!(
        raw.call("lookup_record_700", json!({"value": 1}))
            .await
            .is_err()
    );
    server.stop(Duration::from_secs(5)).await.expect("stop");
}
