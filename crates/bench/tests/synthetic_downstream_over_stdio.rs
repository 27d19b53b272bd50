//! The synthetic downstream in stdio mode, as the gateway starts it: one
//! connector per process, spoken to over the child's stdout and stdin.

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, PaginatedRequestParams};
use serde_json::json;
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_connecta-bench");

#[tokio::test]
async fn one_connector_pages_and_answers_over_stdio() {
    let mut command = Command::new(BIN);
    command.args([
        "synthetic-downstream",
        "--stdio",
        "--connector-index",
        "4",
        "--tools",
        "600",
        "--page-size",
        "250",
    ]);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let stdin = child.stdin.take().expect("stdin");
    let client = ().serve((stdout, stdin)).await.expect("initialize over stdio");

    let mut sizes = Vec::new();
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor
            .clone()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = client.list_tools(params).await.expect("tools/list");
        sizes.push(page.tools.len());
        names.extend(page.tools.iter().map(|t| t.name.to_string()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(sizes, [250, 250, 100]);
    assert_eq!(names.first().map(String::as_str), Some("lookup_record_0"));
    assert_eq!(names.last().map(String::as_str), Some("lookup_record_599"));

    let args = json!({"value": 9}).as_object().cloned().expect("object");
    let result = client
        .call_tool(CallToolRequestParams::new("lookup_record_599").with_arguments(args))
        .await
        .expect("call");
    assert_eq!(
        result.structured_content,
        Some(json!({"connector": 4, "tool": 599, "value": 9}))
    );

    let bad = json!({"value": true}).as_object().cloned().expect("object");
    let result = client
        .call_tool(CallToolRequestParams::new("lookup_record_0").with_arguments(bad))
        .await
        .expect("a result");
    assert_eq!(result.is_error, Some(true));
    client.cancel().await.expect("close");
    // Its stdin closed, the downstream exits by itself.
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait())
        .await
        .expect("exits once its stdin closes")
        .expect("wait");
    assert!(status.success(), "{status}");
}
