//! The downstream OAuth client goes no closer to the gateway than the
//! connector's config allows, checked on the address it connects to, and
//! never through a proxy, through the real binary. A connector configured
//! at a loopback address publishes metadata whose registration and token
//! endpoints are at a host *name* that resolves to this machine (this
//! host's own name): the gateway refuses to connect there, unless the
//! connector sets `allow_private_network`. With `HTTP_PROXY` and friends
//! set, discovery and registration still go straight to the server.

mod support;

use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::{Value, json};
use support::*;

/// This machine's name, checked to resolve to one of its own (or its
/// private network's) addresses, as it does on most systems (`/etc/hosts`).
fn inward_name() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .expect("the host name")
        .trim()
        .to_owned();
    let resolved: Vec<std::net::IpAddr> =
        std::net::ToSocketAddrs::to_socket_addrs(&(name.as_str(), 0))
            .map(|a| a.map(|a| a.ip()).collect())
            .unwrap_or_default();
    let inward = |ip: &std::net::IpAddr| match ip {
        std::net::IpAddr::V4(v4) => v4.is_loopback() || v4.is_private(),
        std::net::IpAddr::V6(v6) => v6.is_loopback() || (v6.segments()[0] & 0xfe00) == 0xfc00,
    };
    assert!(
        !resolved.is_empty() && resolved.iter().all(inward),
        "this test needs the host name {name} to resolve to a loopback or private address (set in /etc/hosts on most systems); it resolves to {resolved:?}"
    );
    name
}

/// A listener on every interface that counts the connections it accepts
/// (and closes them): wherever the inward name leads, a connection lands
/// here.
fn counting_listener() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("0.0.0.0:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, count)
}

/// An MCP endpoint that needs OAuth and publishes RFC 9728 and RFC 8414
/// metadata; its registration and token endpoints are at `endpoints` (its
/// own origin when `None`). Records the paths it is asked for.
async fn metadata_server(endpoints: Option<String>) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let base = format!("http://127.0.0.1:{port}");
    let endpoints = endpoints.unwrap_or_else(|| base.clone());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let prm = json!({
        "resource": format!("{base}/mcp"),
        "authorization_servers": [base],
    });
    let asm = json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{endpoints}/token"),
        "registration_endpoint": format!("{endpoints}/register"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    });
    let record = |seen: &Arc<Mutex<Vec<String>>>, path: &str| {
        seen.lock().expect("lock").push(path.to_owned());
    };
    let (s1, s2, s3, s4) = (seen.clone(), seen.clone(), seen.clone(), seen.clone());
    let app = Router::new()
        .route(
            "/mcp",
            post(move || async move {
                record(&s1, "/mcp");
                (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Bearer")],
                    "",
                )
            }),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(move || async move {
                record(&s2, "/.well-known/oauth-protected-resource/mcp");
                axum::Json(prm)
            }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(move || async move {
                record(&s3, "/.well-known/oauth-authorization-server");
                axum::Json(asm)
            }),
        )
        .route(
            "/register",
            post(move || async move {
                record(&s4, "/register");
                (
                    StatusCode::CREATED,
                    axum::Json(json!({"client_id": "registered-client"})),
                )
                    .into_response()
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (port, seen)
}

fn oauth_connector(port: u16, extra: &str) -> String {
    format!(
        "[[connector]]\nid = \"notes\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n[connector.oauth]\n{extra}"
    )
}

async fn authorize(gw: &Gateway) -> (Value, bool) {
    let client = connect(&gw.url()).await;
    call(
        &client,
        "authorize_connector",
        json!({"connector": "notes"}),
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn endpoints_at_a_name_that_resolves_inward_are_refused_unless_private_networks_are_allowed()
{
    let name = inward_name();
    let (inward_port, connections) = counting_listener();
    let (port, _) = metadata_server(Some(format!("https://{name}:{inward_port}"))).await;

    // The connector is on a loopback address, as configured: its own
    // metadata is fetched. The registration endpoint is another service on
    // this machine, reached by a name: refused before any connection.
    let gw = Gateway::start(&oauth_connector(port, ""));
    let (v, is_error) = authorize(&gw).await;
    assert!(is_error, "{v}");
    // Said to be the server's configuration, not a network failure.
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("cannot be used as it is configured"),
        "{v}"
    );
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "the gateway connected"
    );
    gw.wait_stderr("closer to the gateway than the connector")
        .await;

    // An operator who allows private networks lets names lead there (the
    // TLS handshake then fails: this listener speaks no TLS).
    let allowed = Gateway::start(&oauth_connector(port, "allow_private_network = true\n"));
    let (v, is_error) = authorize(&allowed).await;
    assert!(is_error, "{v}");
    assert!(
        connections.load(Ordering::SeqCst) >= 1,
        "the allowed connector's registration never connected: {v}"
    );
}

/// A proxy that records the first line of each request and answers 502.
fn recording_proxy() -> (u16, Arc<Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let seen = lines.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut first = String::new();
                if reader.read_line(&mut first).is_ok() {
                    seen.lock().expect("lock").push(first.trim().to_owned());
                }
                let mut stream = reader.into_inner();
                let _ = stream.write_all(
                    b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                );
            });
        }
    });
    (port, lines)
}

#[tokio::test(flavor = "multi_thread")]
async fn discovery_and_registration_never_go_through_a_proxy_from_the_environment() {
    let (port, seen) = metadata_server(None).await;
    let (proxy_port, proxied) = recording_proxy();
    let proxy = format!("http://127.0.0.1:{proxy_port}");
    let gw = Gateway::start_with_env(
        &format!("[auth]\nopen = true\n\n{}", oauth_connector(port, "")),
        &[
            ("HTTP_PROXY", proxy.as_str()),
            ("HTTPS_PROXY", proxy.as_str()),
            ("ALL_PROXY", proxy.as_str()),
            ("http_proxy", proxy.as_str()),
        ],
    );
    let (v, is_error) = authorize(&gw).await;
    assert!(!is_error, "{v}");
    assert_eq!(v["status"], "consent_required", "{v}");
    let direct = seen.lock().expect("lock").clone();
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/register",
    ] {
        assert!(
            direct.iter().any(|p| p == path),
            "{path} not asked directly: {direct:?}"
        );
    }
    let proxied = proxied.lock().expect("lock").clone();
    assert!(
        !proxied
            .iter()
            .any(|l| l.contains("/.well-known/") || l.contains("/register")),
        "the OAuth client went through the proxy: {proxied:?}"
    );
}
