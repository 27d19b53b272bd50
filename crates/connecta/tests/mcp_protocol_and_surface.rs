//! The MCP surface over raw HTTP: `server/discover` (2026-07-28) is answered
//! at once, `initialize` works for 2025-11-25 / 2025-06-18 / 2025-03-26, the
//! tool list is exactly the meta-tools with correct annotations, and the
//! instructions and the serialized tool list stay within their budgets.
//! The `execute_code` description names the connectors and the live budgets.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

async fn post(url: &str, body: Value, version: Option<&str>) -> (u16, Value) {
    let method = body["method"].as_str().unwrap_or_default().to_owned();
    let mut req = reqwest::Client::new()
        .post(url)
        .header("Mcp-Method", method)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(v) = version {
        req = req.header("MCP-Protocol-Version", v);
    }
    let resp = req.send().await.expect("POST answered");
    let status = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    let json = serde_json::from_str(&text).unwrap_or_else(|_| {
        // An SSE body: take the last data line.
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .rfind(|d| !d.trim().is_empty())
            .and_then(|d| serde_json::from_str(d.trim()).ok())
            .unwrap_or(Value::Null)
    });
    (status, json)
}

#[tokio::test(flavor = "multi_thread")]
async fn discover_and_every_initialize_revision_are_answered() {
    let gw = Gateway::start(&demo_connector());
    let url = gw.url();
    let started = Instant::now();
    let (status, discover) = post(
        &url,
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}}),
        Some("2026-07-28"),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "discover must never hang"
    );
    assert_eq!(status, 200, "{discover}");
    assert!(
        discover["result"]["supportedVersions"]
            .as_array()
            .expect("versions")
            .iter()
            .any(|v| v == "2026-07-28"),
        "{discover}"
    );
    let instructions = discover["result"]["instructions"]
        .as_str()
        .expect("instructions");
    assert!(instructions.len() <= 1_000, "{} bytes", instructions.len());

    for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let (status, init) = post(
            &url,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
            None,
        )
        .await;
        assert_eq!(status, 200, "{init}");
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        assert_eq!(init["result"]["serverInfo"]["name"], "connecta");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_list_is_the_meta_tools_within_budget() {
    let gw = Gateway::start(&demo_connector());
    let client = connect(&gw.url()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "execute_code",
            "search_tools",
            "call_tool",
            "call_destructive_tool",
            "authorize_connector",
            "get_result",
            "skills"
        ]
    );
    let ann = |n: &str| {
        tools
            .iter()
            .find(|t| t.name == n)
            .and_then(|t| t.annotations.clone())
            .expect("annotations")
    };
    for ro in [
        "execute_code",
        "search_tools",
        "call_tool",
        "get_result",
        "skills",
    ] {
        assert_eq!(ann(ro).read_only_hint, Some(true), "{ro}");
    }
    assert_eq!(ann("call_destructive_tool").destructive_hint, Some(true));
    assert_eq!(ann("call_destructive_tool").read_only_hint, Some(false));
    let exec = tools
        .iter()
        .find(|t| t.name == "execute_code")
        .expect("execute_code");
    let desc = exec.description.as_deref().unwrap_or_default();
    assert!(desc.contains("Connectors: demo."), "{desc}");
    assert!(
        desc.contains("20 calls") && desc.contains("batch <= 10") && desc.contains("15 s per call"),
        "{desc}"
    );
    let bytes = serde_json::to_vec(&tools).expect("serializes").len();
    let info = client.peer_info().expect("server info");
    let instructions = info.instructions.clone().unwrap_or_default();
    println!(
        "tools/list: {bytes} bytes; instructions: {} bytes",
        instructions.len()
    );
    assert!(instructions.len() <= 1_000);
    assert!(
        bytes + instructions.len() <= 5_500,
        "tools/list {bytes} + instructions {}",
        instructions.len()
    );
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn meta_tool_arguments_are_strict_and_errors_are_typed() {
    let gw = Gateway::start(&demo_connector());
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    let (e, err) = call(&client, "search_tools", json!({"query": "x", "bogus": 1})).await;
    assert!(err);
    assert_eq!(e["error"]["code"], "invalid_args");
    let (e, err) = call(&client, "search_tools", json!({"limit": 101})).await;
    assert!(err);
    assert_eq!(e["error"]["code"], "invalid_args");
    let (e, err) = call(
        &client,
        "call_tool",
        json!({"address": "demo.get_note", "args": {"id": 1}, "maxRetries": 3}),
    )
    .await;
    assert!(err);
    assert_eq!(e["error"]["code"], "invalid_args");
    let (e, err) = call(&client, "call_tool", json!({"address": "nowhere.tool"})).await;
    assert!(err);
    assert_eq!(e["error"]["code"], "unknown_address");
    assert_eq!(e["error"]["retryable"], false);
    assert_eq!(e["error"]["nextAction"]["tool"], "search_tools");
    let (e, err) = call(
        &client,
        "call_tool",
        json!({"address": "demo.get_note", "args": {"id": 99999}}),
    )
    .await;
    assert!(err);
    assert_eq!(e["error"]["code"], "connector_call_failed");
    // fields projection, with misses reported.
    let r = call_raw(
        &client,
        "call_tool",
        json!({"address": "demo.list_notes", "fields": ["notes[].id", "nope"]}),
    )
    .await;
    let v = r.structured_content.clone().expect("structured");
    assert!(
        v["notes"][0]["id"].is_number() && v["notes"][0].get("title").is_none(),
        "{v}"
    );
    let texts: Vec<String> = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert!(texts.iter().any(|t| t.contains("nope")), "{texts:?}");
    // skills
    let (s, err) = call(&client, "skills", json!({})).await;
    assert!(!err);
    assert_eq!(s["skills"][0]["name"], "usage");
    let (u, err) = call(&client, "skills", json!({"name": "usage"})).await;
    assert!(!err);
    assert!(
        u["text"]
            .as_str()
            .expect("text")
            .contains("call_destructive_tool")
    );
    // Its text block is the compact JSON of the same value (§1.2).
    let raw = call_raw(&client, "skills", json!({"name": "usage"})).await;
    let text = raw.content[0].as_text().expect("a text block").text.clone();
    let parsed: Value = serde_json::from_str(&text).expect("the text block is JSON");
    assert_eq!(Some(parsed), raw.structured_content);
    // authorize_connector: the honest answer for a connector with no auth.
    let (a, err) = call(&client, "authorize_connector", json!({"connector": "demo"})).await;
    assert!(!err);
    assert_eq!(a["status"], "not_required");
    let _ = client.cancel().await;
}
