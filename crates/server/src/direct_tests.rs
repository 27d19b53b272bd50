//! The direct lane (`direct.rs`) against rmcp: each request of a table goes
//! to the router with the lane and to the router without it, over one
//! gateway, and both answers must be the same; the table also says which
//! requests the lane takes, so a lane that takes nothing fails too.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode};
use connecta_core::config::parse_config;
use connecta_gateway::Gateway;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::direct::DirectCalls;
use crate::{AppState, ConnectaServer, router_with};

const TOKEN: &str = "direct-lane-test-token";

struct Case {
    what: &'static str,
    headers: Vec<(&'static str, &'static str)>,
    body: Value,
    /// Whether the lane serves it (otherwise rmcp does).
    taken: bool,
}

fn call(params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
}

fn search() -> Value {
    call(json!({"name": "search_tools", "arguments": {"query": "weather"}}))
}

fn case(
    what: &'static str,
    headers: &[(&'static str, &'static str)],
    body: Value,
    taken: bool,
) -> Case {
    Case {
        what,
        headers: headers.to_vec(),
        body,
        taken,
    }
}

/// A plain call with `Host: host`.
fn host(what: &'static str, host: &'static str, taken: bool) -> Case {
    case(what, &[("host", host)], search(), taken)
}

/// A plain call from localhost naming protocol `version`.
fn version(what: &'static str, version: &'static str, taken: bool) -> Case {
    let headers = [("host", "localhost"), ("mcp-protocol-version", version)];
    case(what, &headers, search(), taken)
}

fn cases() -> Vec<Case> {
    let plain = [("host", "127.0.0.1:8787")];
    let mut with_id = search();
    with_id["id"] = json!("req-1");
    let mut fractional_id = search();
    fractional_id["id"] = json!(1.5);
    let mut extra_key = search();
    extra_key["extra"] = json!(1);
    let mut old_jsonrpc = search();
    old_jsonrpc["jsonrpc"] = json!("1.0");
    vec![
        case("a plain call", &plain, search(), true),
        case("a string id", &plain, with_id, true),
        case("a fractional id", &plain, fractional_id, false),
        host("localhost on another port", "localhost:9", true),
        host("an upper-case host", "LOCALHOST", true),
        host("IPv6 loopback", "[::1]:8787", true),
        host("a configured host", "gw.example:443", true),
        host("a configured host on another port", "gw.example:444", false),
        host("a host not allowed", "evil.example", false),
        host("a malformed host", "a b", false),
        case("no host", &[], search(), false),
        case(
            "two hosts",
            &[("host", "127.0.0.1"), ("host", "evil.example")],
            search(),
            false,
        ),
        case(
            "an origin not allowed",
            &[("host", "localhost"), ("origin", "http://evil.example")],
            search(),
            false,
        ),
        case(
            "an allowed origin",
            &[("host", "localhost"), ("origin", "http://app.example:3000")],
            search(),
            false,
        ),
        version("an older protocol version", "2025-06-18", true),
        version("the oldest protocol version", "2024-11-05", true),
        version("the per-request revision", "2026-07-28", false),
        version("an unknown protocol version", "1999-01-01", false),
        case(
            "two protocol versions",
            &[
                ("host", "localhost"),
                ("mcp-protocol-version", "2025-06-18"),
                ("mcp-protocol-version", "2025-03-26"),
            ],
            search(),
            false,
        ),
        case(
            "a standard header",
            &[("host", "localhost"), ("mcp-method", "tools/list")],
            search(),
            false,
        ),
        case(
            "a session id",
            &[("host", "localhost"), ("mcp-session-id", "abc")],
            search(),
            false,
        ),
        case(
            "a charset on the content type",
            &[
                ("host", "localhost"),
                ("content-type", "application/json; charset=utf-8"),
            ],
            search(),
            true,
        ),
        case(
            "a progress token (rmcp's client sends one)",
            &plain,
            call(
                json!({"name": "search_tools", "arguments": {"query": "weather"}, "_meta": {"progressToken": 1}}),
            ),
            true,
        ),
        case(
            "a string progress token",
            &plain,
            call(json!({"_meta": {"progressToken": "p"}, "name": "search_tools", "arguments": {}})),
            true,
        ),
        case(
            "null _meta",
            &plain,
            call(json!({"_meta": null, "name": "search_tools", "arguments": {}})),
            true,
        ),
        case(
            "a progress token that is not one",
            &plain,
            call(
                json!({"_meta": {"progressToken": {"a": 1}}, "name": "search_tools", "arguments": {}}),
            ),
            false,
        ),
        case(
            "a protocol version in _meta",
            &[
                ("host", "localhost"),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            call(
                json!({"_meta": {"progressToken": 1, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}, "name": "search_tools", "arguments": {}}),
            ),
            false,
        ),
        case(
            "other _meta",
            &plain,
            call(json!({"_meta": {"trace": "x"}, "name": "search_tools", "arguments": {}})),
            false,
        ),
        case(
            "null arguments",
            &plain,
            call(json!({"name": "search_tools", "arguments": null})),
            true,
        ),
        case(
            "no arguments",
            &plain,
            call(json!({"name": "search_tools"})),
            true,
        ),
        case(
            "arguments not an object",
            &plain,
            call(json!({"name": "search_tools", "arguments": [1]})),
            false,
        ),
        case(
            "a name not a string",
            &plain,
            call(json!({"name": 5, "arguments": {}})),
            false,
        ),
        case(
            "retry state",
            &plain,
            call(
                json!({"name": "call_destructive_tool", "arguments": {}, "requestState": "x", "inputResponses": {}}),
            ),
            false,
        ),
        case("an extra top-level key", &plain, extra_key, false),
        case("JSON-RPC 1.0", &plain, old_jsonrpc, false),
        case(
            "an unknown meta-tool",
            &plain,
            call(json!({"name": "nope", "arguments": {}})),
            true,
        ),
        case(
            "a call to an unknown tool",
            &plain,
            call(
                json!({"name": "call_tool", "arguments": {"tool": "nowhere.nothing", "arguments": {}}}),
            ),
            true,
        ),
        case(
            "a destructive call",
            &plain,
            call(
                json!({"name": "call_destructive_tool", "arguments": {"tool": "nowhere.nothing", "arguments": {}}}),
            ),
            true,
        ),
        case(
            "tools/list",
            &plain,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            false,
        ),
    ]
}

async fn gateway(dir: &std::path::Path) -> Arc<Gateway> {
    let text = format!(
        "[auth]\nbearer_tokens = [\"{TOKEN}\"]\n[server]\ndata_dir = {:?}\nallowed_hosts = [\"gw.example:443\"]\nallowed_origins = [\"http://app.example:3000\"]\n",
        dir.display().to_string()
    );
    let env = |_: &str| None;
    let config = parse_config(&text, "t.toml", &env).expect("config parses");
    let store = connecta_store::open(None, dir).await.expect("store");
    Gateway::start(config, store, None)
        .await
        .expect("gateway starts")
}

async fn send(router: &Router, case: &Case) -> (StatusCode, Option<String>, Bytes) {
    let mut request = Request::post("/mcp")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::from(case.body.to_string()))
        .expect("request");
    let headers = request.headers_mut();
    if !case.headers.iter().any(|(n, _)| *n == "content-type") {
        headers.insert("content-type", "application/json".parse().expect("value"));
    }
    for (name, value) in &case.headers {
        headers.append(*name, value.parse().expect("value"));
    }
    let response = router.clone().oneshot(request).await.expect("answer");
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().expect("text").to_owned());
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body");
    (status, content_type, body)
}

#[tokio::test]
async fn the_direct_lane_answers_exactly_as_rmcp_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gateway = gateway(dir.path()).await;
    let state = AppState::new(gateway);
    let direct = lane(&state, CancellationToken::new());
    let with = router_with(state.clone(), CancellationToken::new(), true);
    let without = router_with(state, CancellationToken::new(), false);
    for case in cases() {
        let ours = send(&with, &case).await;
        let theirs = send(&without, &case).await;
        assert_eq!(
            (ours.0, &ours.1),
            (theirs.0, &theirs.1),
            "{}: status and content type",
            case.what
        );
        let as_json = |b: &Bytes| serde_json::from_slice::<Value>(b).ok();
        match (as_json(&ours.2), as_json(&theirs.2)) {
            (Some(a), Some(b)) => assert_eq!(a, b, "{}: answer", case.what),
            _ => assert_eq!(ours.2, theirs.2, "{}: answer", case.what),
        }
        assert_eq!(takes(&direct, &case), case.taken, "{}: taken", case.what);
        if case.taken {
            // Served, not refused by a layer in front of both.
            let answer: Value = serde_json::from_slice(&ours.2).expect("JSON");
            assert_eq!(ours.0, StatusCode::OK, "{}", case.what);
            assert_eq!(answer["id"], case.body["id"], "{}", case.what);
            assert!(
                answer["result"]["content"].is_array(),
                "{}: {answer}",
                case.what
            );
        }
    }
}

/// Whether the lane takes a case, asked as framing asks it.
fn takes(direct: &DirectCalls, case: &Case) -> bool {
    let mut request = Request::post("/mcp").body(()).expect("request");
    for (name, value) in &case.headers {
        request
            .headers_mut()
            .append(*name, value.parse().expect("value"));
    }
    request
        .extensions_mut()
        .insert(connecta_core::activity::Actor::stdio());
    let (parts, ()) = request.into_parts();
    direct
        .take(&parts, case.body.to_string().as_bytes())
        .is_some()
}

/// The lane rmcp's router would have, for asking it directly.
fn lane(state: &AppState, dropped: CancellationToken) -> DirectCalls {
    let server = ConnectaServer::new(state.gateway.clone());
    let hosts = crate::allowed_hosts(&state.gateway.config);
    DirectCalls::new(server, &hosts, dropped)
}

/// On the server's last shutdown step (`serve_http` cancels the token it
/// gave the router) a call still owed an answer gets rmcp's empty 500 on
/// both routes. A current-thread runtime: rmcp's handler task cannot run
/// before its answer is given up.
#[tokio::test(flavor = "current_thread")]
async fn a_call_the_server_drops_gets_rmcp_s_empty_500() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = AppState::new(gateway(dir.path()).await);
    let dropped = CancellationToken::new();
    dropped.cancel();
    let with = router_with(state.clone(), dropped.clone(), true);
    let without = router_with(state.clone(), dropped.clone(), false);
    let case = host("a plain call", "localhost", true);
    assert!(takes(&lane(&state, dropped), &case));
    let ours = send(&with, &case).await;
    let theirs = send(&without, &case).await;
    assert_eq!(ours.0, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(ours, theirs);
}
