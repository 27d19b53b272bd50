//! The gateway fronts independent MCP servers at the same time:
//! `@modelcontextprotocol/server-everything` over stdio and over streamable
//! HTTP, `@modelcontextprotocol/server-memory` over stdio, and a server
//! written with the Python SDK. Their tools are searchable and callable, and
//! an image from server-everything arrives byte-for-byte intact.

mod support;

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use support::*;

struct Downstream(Child);

impl Drop for Downstream {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn wait_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "downstream on port {port} never listened"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn four_independent_servers_behind_one_endpoint() {
    let everything_port = free_port();
    let _everything_http = Downstream(
        Command::new(node())
            .arg(everything_js())
            .arg("streamableHttp")
            .env("PORT", everything_port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start server-everything over HTTP"),
    );
    let py_port = free_port();
    let _python_http = Downstream(
        Command::new(python())
            .arg(peers().join("py_server.py"))
            .args(["http", &py_port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Python SDK server"),
    );
    wait_port(everything_port);
    wait_port(py_port);
    let memory_file = tempfile::NamedTempFile::new().expect("temp file");
    let config = format!(
        r#"{everything}
[[connector]]
id = "everything-http"
url = "http://127.0.0.1:{everything_port}/mcp"

[[connector]]
id = "memory"
command = {node}
args = [{memory}]
env = {{ MEMORY_FILE_PATH = {memfile} }}

[[connector]]
id = "python"
url = "http://127.0.0.1:{py_port}/mcp"
"#,
        everything = everything_connector(),
        node = q(&node()),
        memory = q(&memory_js()),
        memfile = q(&memory_file.path().display().to_string()),
    );
    let gw = Gateway::start(&config);
    let health = gw.wait_catalogs().await;
    for c in health["connectors"].as_array().expect("connectors") {
        assert!(
            c["catalog"]["tools"].as_u64().unwrap_or(0) > 0,
            "no tools from {c}"
        );
    }
    let client = connect(&gw.url()).await;

    // Searchable: each server's tools come back under their own address.
    for (query, address) in [
        ("echo", "everything.echo"),
        ("echo", "everything-http.echo"),
        ("read graph", "memory.read_graph"),
        ("weather", "python.weather_lookup"),
    ] {
        let (page, err) = call(
            &client,
            "search_tools",
            json!({"query": query, "limit": 20}),
        )
        .await;
        assert!(!err, "{page}");
        let found: Vec<&str> = page["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["address"].as_str())
            .collect();
        assert!(found.contains(&address), "search {query:?} found {found:?}");
    }

    // Callable.
    for address in ["everything.echo", "everything-http.echo"] {
        let r = call_raw(
            &client,
            "call_tool",
            json!({"address": address, "args": {"message": "hi there"}}),
        )
        .await;
        assert_ne!(r.is_error, Some(true), "{r:?}");
        let text = r.content[0].as_text().expect("text").text.clone();
        assert_eq!(text, "Echo: hi there");
    }
    let (graph, err) = call(
        &client,
        "call_tool",
        json!({"address": "memory.read_graph", "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{graph}");
    assert!(graph["entities"].is_array(), "{graph}");
    let (weather, err) = call(&client, "call_tool", json!({"address": "python.weather_lookup", "args": {"city": "Oslo"}, "resultMode": "value"})).await;
    assert!(!err, "{weather}");
    assert_eq!(weather["sky"], "snow", "{weather}");

    // Writes are refused through call_tool and allowed through the boundary.
    let (refusal, err) = call(
        &client,
        "call_tool",
        json!({"address": "memory.create_entities", "args": {"entities": []}}),
    )
    .await;
    assert!(err);
    assert_eq!(
        refusal["error"]["code"],
        "destructive_tool_requires_approval"
    );
    // Its next action is the same call through the boundary, runnable as
    // given.
    let next = &refusal["error"]["nextAction"];
    assert_eq!(
        next["arguments"],
        json!({"address": "memory.create_entities", "args": {"entities": []}}),
        "{refusal}"
    );
    let (v, err) = call(
        &client,
        next["tool"].as_str().expect("a tool"),
        next["arguments"].clone(),
    )
    .await;
    assert!(!err, "the next action runs as given: {v}");
    let (created, err) = call(
        &client,
        "call_destructive_tool",
        json!({"address": "memory.create_entities", "reason": "test", "resultMode": "value",
               "args": {"entities": [{"name": "connecta", "entityType": "project", "observations": ["fronts servers"]}]}}),
    )
    .await;
    assert!(!err, "{created}");

    // The image block passes through untouched: compare with the server's own bytes.
    let direct = connect(&format!("http://127.0.0.1:{everything_port}/mcp")).await;
    let original = call_raw(&direct, "get-tiny-image", json!({})).await;
    let proxied = call_raw(
        &client,
        "call_tool",
        json!({"address": "everything.get-tiny-image"}),
    )
    .await;
    let image = |r: &rmcp::model::CallToolResult| {
        r.content
            .iter()
            .find_map(|c| c.as_image().map(|i| (i.data.clone(), i.mime_type.clone())))
            .expect("an image block")
    };
    assert_eq!(image(&proxied), image(&original));
    assert_eq!(proxied.content.len(), original.content.len());
    let _ = direct.cancel().await;
    let _ = client.cancel().await;
}
