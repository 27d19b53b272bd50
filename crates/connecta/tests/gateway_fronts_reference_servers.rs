//! The gateway fronts independent MCP servers at the same time:
//! `@modelcontextprotocol/server-everything` over stdio and over streamable
//! HTTP, `@modelcontextprotocol/server-memory` over stdio, and a server
//! written with the Python SDK. Their tools are searchable and callable, and
//! an image from server-everything arrives byte-for-byte intact. Calls to
//! an HTTP server follow its same-origin redirects and go through the proxy
//! the gateway's environment names, and when it is gone its URL's query is
//! not repeated.

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

/// `python.weather_lookup` of `city`, called directly, says `sky`.
async fn assert_weather(client: &Client, city: &str, sky: &str) {
    let (weather, err) = call(
        client,
        "call_tool",
        json!({"address": "python.weather_lookup", "args": {"city": city}, "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{weather}");
    assert_eq!(weather["sky"], sky, "{weather}");
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
    let python_http = HttpPeer::python_sdk_server().await;
    let py_port = python_http.port;
    wait_port(everything_port);
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
    assert_weather(&client, "Oslo", "snow").await;

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

/// The Python SDK's server answers a POST to `/mcp/` with a 307 to `/mcp`.
/// Configured with the trailing slash, every request the gateway makes to
/// it is redirected: the handshake and the listing (rmcp's) and each call
/// (the gateway's own POST, `mcp/post.rs`) follow the same-origin 307,
/// direct and from a program.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_redirects_every_post_is_called_through_the_redirect() {
    let python_http = HttpPeer::python_sdk_server().await;
    let py_port = python_http.port;
    let config = format!(
        r#"[[connector]]
id = "python"
url = "http://127.0.0.1:{py_port}/mcp/"
"#
    );
    let gw = Gateway::start(&config);
    let health = gw.wait_catalogs().await;
    let python = &health["connectors"][0];
    assert!(
        python["catalog"]["tools"].as_u64().unwrap_or(0) > 0,
        "no tools from {python}"
    );
    let client = connect(&gw.url()).await;
    for (city, sky) in [("Oslo", "snow"), ("Lisbon", "clear"), ("Lima", "overcast")] {
        assert_weather(&client, city, sky).await;
    }
    let temperatures = program_ok(
        &client,
        "const out = [];
         for (const city of ['Oslo', 'Lima']) {
           const r = await connecta.call('python.weather_lookup', {city});
           out.push(r.tempC);
         }
         return out;",
    )
    .await;
    assert_eq!(temperatures, json!([4, 18]), "{temperatures}");
}

/// A forward proxy for plain HTTP: each request (in absolute form) is sent
/// on to its origin with `Connection: close` and the answer copied back
/// once the origin closes (enough for a server that answers in JSON; an
/// event stream would be held until it ends). Keeps each request's line
/// and whether its body was a `tools/call`.
fn forwarding_proxy() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let kept = kept.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                let mut parts = line.split_whitespace();
                let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
                    return;
                };
                let Some(rest) = target.strip_prefix("http://") else {
                    return;
                };
                let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
                let mut head = format!("{method} {path} HTTP/1.1\r\n");
                let mut length = 0usize;
                loop {
                    let mut header = String::new();
                    if matches!(reader.read_line(&mut header), Ok(0) | Err(_)) || header == "\r\n" {
                        break;
                    }
                    let lower = header.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if !lower.starts_with("connection:") {
                        head.push_str(&header);
                    }
                }
                head.push_str("connection: close\r\n\r\n");
                let mut body = vec![0u8; length];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let call = String::from_utf8_lossy(&body).contains("\"tools/call\"");
                kept.lock().expect("lock").push(format!(
                    "{} {}",
                    line.trim(),
                    if call { "tools/call" } else { "" }
                ));
                let Ok(mut origin) = std::net::TcpStream::connect(authority) else {
                    return;
                };
                let _ = origin.write_all(head.as_bytes());
                let _ = origin.write_all(&body);
                let mut answer = Vec::new();
                let _ = origin.read_to_end(&mut answer);
                let _ = reader.into_inner().write_all(&answer);
            });
        }
    });
    (port, seen)
}

/// With `HTTP_PROXY` set, every request to an `http://` downstream goes
/// through the proxy, its calls too (the gateway's own POST, not only
/// rmcp's), and the calls are answered.
#[tokio::test(flavor = "multi_thread")]
async fn calls_to_an_http_server_go_through_the_proxy_the_environment_names() {
    let python_http = HttpPeer::python_sdk_server().await;
    let py_port = python_http.port;
    let (proxy_port, seen) = forwarding_proxy();
    let proxy = format!("http://127.0.0.1:{proxy_port}");
    let config = format!(
        r#"[auth]
open = true

[[connector]]
id = "python"
url = "http://127.0.0.1:{py_port}/mcp"
"#
    );
    // A `NO_PROXY` from the environment the tests run in would send
    // loopback calls around the proxy.
    let gw = Gateway::start_with_env(
        &config,
        &[
            ("HTTP_PROXY", proxy.as_str()),
            ("NO_PROXY", ""),
            ("no_proxy", ""),
        ],
    );
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    for (city, sky) in [("Oslo", "snow"), ("Lima", "overcast")] {
        assert_weather(&client, city, sky).await;
    }
    let seen = seen.lock().expect("lock").clone();
    let calls = seen.iter().filter(|l| l.ends_with("tools/call")).count();
    assert_eq!(
        calls, 2,
        "the calls did not all go through the proxy: {seen:?}"
    );
    assert!(
        seen.iter().all(
            |l| l.starts_with(&format!("POST http://127.0.0.1:{py_port}/mcp "))
                || l.starts_with(&format!("GET http://127.0.0.1:{py_port}/mcp "))
                || l.starts_with(&format!("DELETE http://127.0.0.1:{py_port}/mcp "))
        ),
        "{seen:?}"
    );
}

/// An HTTP server's URL may carry a key in its query (some hosted servers
/// take one there). When the server goes away, the calls' errors, the
/// connector's health and the gateway's log say it is unreachable without
/// repeating the query.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_in_a_servers_url_is_not_repeated_when_the_server_is_gone() {
    const KEY: &str = "k3y-in-the-query-0451";
    let python_http = HttpPeer::python_sdk_server().await;
    let py_port = python_http.port;
    let config = format!(
        r#"[[connector]]
id = "python"
url = "http://127.0.0.1:{py_port}/mcp?key={KEY}"
"#
    );
    let gw = Gateway::start(&config);
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    assert_weather(&client, "Oslo", "snow").await;
    drop(python_http);
    // The first call finds the session's server gone; the next ones try
    // to connect again.
    for _ in 0..3 {
        let (failure, err) = call(
            &client,
            "call_tool",
            json!({"address": "python.weather_lookup", "args": {"city": "Oslo"}}),
        )
        .await;
        assert!(err, "{failure}");
        assert_eq!(failure["error"]["code"], "unavailable", "{failure}");
        let message = failure["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("python is unreachable"), "{failure}");
        assert!(!message.contains(KEY), "{failure}");
    }
    let health = gw
        .wait_health("the connector down", |v| {
            v["connectors"][0]["state"] != "ready"
        })
        .await;
    assert!(!health.to_string().contains(KEY), "{health:#}");
    // The failed connection is in the log (by its address) by now.
    let log = gw.wait_stderr(&format!("127.0.0.1:{py_port}")).await;
    assert!(!log.contains(KEY), "{log}");
}
