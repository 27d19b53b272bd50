//! The floor of any gateway's added cost, in two layers.
//!
//! A gateway in front of a downstream adds one loopback hop: the client's
//! request reaches the gateway, which makes its own to the downstream.
//!
//! - `connecta-bench tcp-relay` ([`serve`]) adds that hop and nothing
//!   else: each accepted connection gets one connection to the downstream,
//!   and bytes are copied both ways as they come (no HTTP, no JSON, no
//!   MCP). What it adds is what the hop itself costs on this machine:
//!   kernel copies and the wake-ups of one more process.
//! - `connecta-bench http-relay` ([`serve_http`]) adds the hop and the two
//!   HTTP stacks connecta is built on, and nothing of MCP: axum serves each
//!   request, which is read whole (so it keeps its length) but not parsed
//!   and posted to the downstream with a pooled reqwest client
//!   (keep-alive, `TCP_NODELAY`, as connecta's), and the answer is
//!   streamed back unread. What it adds beyond the TCP relay is
//!   what those stacks cost; what connecta adds beyond it is MCP and
//!   connecta's own work.
//!
//! Both run on a multi-threaded tokio runtime with one worker per core, as
//! connecta does, and set `TCP_NODELAY` on their connections, as connecta
//! does.

use std::net::SocketAddr;

use anyhow::Context;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// Which relay: bytes only, or HTTP through connecta's stacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelayKind {
    Tcp,
    Http,
}

impl RelayKind {
    /// Both, in the order the report shows them.
    pub const ALL: [RelayKind; 2] = [RelayKind::Tcp, RelayKind::Http];

    /// The `connecta-bench` subcommand that runs it.
    pub fn subcommand(self) -> &'static str {
        match self {
            RelayKind::Tcp => "tcp-relay",
            RelayKind::Http => "http-relay",
        }
    }

    /// What the report calls the downstream measured through it.
    pub fn column(self) -> &'static str {
        match self {
            RelayKind::Tcp => "downstream via TCP relay",
            RelayKind::Http => "downstream via HTTP relay",
        }
    }
}

/// Start a `kind` relay from `listener` to `to` on a task of its own,
/// until `shutdown`. Fails only when the HTTP relay's client cannot be
/// built, before anything is served.
pub fn spawn(
    kind: RelayKind,
    listener: TcpListener,
    to: SocketAddr,
    shutdown: CancellationToken,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    Ok(match kind {
        RelayKind::Tcp => tokio::spawn(serve(listener, to, shutdown)),
        RelayKind::Http => tokio::spawn(serve_http(listener, http_app(to)?, shutdown)),
    })
}

/// Relay every connection accepted on `listener` to `to` until `shutdown`.
/// A connection whose downstream cannot be reached is closed. Failures go
/// to stderr (the run's log for the relay): a relay that fails quietly
/// would be measured as a fast one.
async fn serve(listener: TcpListener, to: SocketAddr, shutdown: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.cancelled() => return,
        };
        let client = match accepted {
            Ok((client, _)) => client,
            Err(e) => {
                // Out of descriptors, say: wait instead of spinning, which
                // would show up as the relay's CPU.
                eprintln!("tcp-relay: accept failed: {e}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                relayed = relay(client, to) => {
                    if let Err(e) = relayed {
                        eprintln!("tcp-relay: {e:#}");
                    }
                }
                () = shutdown.cancelled() => {}
            }
        });
    }
}

/// How long a failed accept waits before the next.
const ACCEPT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(10);

/// Copy `client` ↔ a new connection to `to` until both directions have
/// ended; an end of one direction (a half-close) is passed on as one.
async fn relay(mut client: TcpStream, to: SocketAddr) -> anyhow::Result<()> {
    let mut downstream = TcpStream::connect(to)
        .await
        .with_context(|| format!("connecting to {to}"))?;
    client.set_nodelay(true)?;
    downstream.set_nodelay(true)?;
    tokio::io::copy_bidirectional(&mut client, &mut downstream)
        .await
        .context("copying")?;
    Ok(())
}

/// The largest request body the HTTP relay forwards.
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// The HTTP relay's router: every request read whole, not parsed, and
/// forwarded to `to`, the answer streamed back unread; a downstream that cannot be reached is a
/// 502. Built before the relay says it is ready, so a client that cannot
/// be built fails the launch, not the calls.
fn http_app(to: SocketAddr) -> anyhow::Result<axum::Router> {
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        // A relay passes a redirect on instead of following it.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .context("building the HTTP client")?;
    let base: std::sync::Arc<str> = format!("http://{to}").into();
    Ok(axum::Router::new()
        .fallback(move |request: Request| forward(client.clone(), base.clone(), request)))
}

/// Serve `app` ([`http_app`]) on `listener` until `shutdown`, then let the
/// requests in flight finish. Failures go to stderr, as [`serve`]'s do.
///
/// Unlike connecta, it serves with `axum::serve`, without connecta's
/// `RepollSelfWakes` (`crates/server/src/self_wake.rs`: hyper wakes a
/// connection's own task when its handler reads a request body, which
/// connecta absorbs); docs/performance.md "The HTTP stacks alone" says
/// what that leaves in its figures.
async fn serve_http(listener: TcpListener, app: axum::Router, shutdown: CancellationToken) {
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            eprintln!("http-relay: TCP_NODELAY: {e}");
        }
    });
    if let Err(e) = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
    {
        eprintln!("http-relay: serving: {e}");
    }
}

/// Headers that belong to one connection, not to the message (RFC 9110
/// §7.6.1, and the older `Keep-Alive` and `Proxy-Connection`), and `Host`,
/// which the next request gets from its URL. Headers a `Connection` header
/// names are dropped too ([`forwarded`]).
const NOT_FORWARDED: [&str; 10] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "host",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "proxy-authorization",
    "proxy-authenticate",
];

/// `headers` without the ones [`NOT_FORWARDED`] names and the ones its
/// `Connection` header names. A `Content-Length` stays: the body passes
/// unchanged, and hyper frames it by that length.
fn forwarded(mut headers: HeaderMap) -> HeaderMap {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|name| name.trim().to_ascii_lowercase())
        .filter(|name| !name.is_empty())
        .collect();
    for name in NOT_FORWARDED
        .iter()
        .copied()
        .chain(named.iter().map(String::as_str))
    {
        headers.remove(name);
    }
    headers
}

async fn forward(client: reqwest::Client, base: std::sync::Arc<str>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let body = match axum::body::to_bytes(body, MAX_REQUEST_BYTES).await {
        Ok(body) => body,
        Err(e) => {
            return (StatusCode::BAD_REQUEST, format!("reading the request: {e}")).into_response();
        }
    };
    let answer = client
        .request(parts.method, format!("{base}{path}"))
        .headers(forwarded(parts.headers))
        .body(body)
        .send()
        .await;
    match answer {
        Ok(mut answer) => {
            let status = answer.status();
            let headers = forwarded(std::mem::take(answer.headers_mut()));
            let mut response = Response::new(Body::from_stream(answer.bytes_stream()));
            *response.status_mut() = status;
            *response.headers_mut() = headers;
            response
        }
        Err(e) => {
            eprintln!("http-relay: {e:#}");
            (StatusCode::BAD_GATEWAY, format!("{e:#}")).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A listener on a loopback port of its own, and its address.
    async fn loopback() -> (TcpListener, SocketAddr) {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local address");
        (listener, addr)
    }

    /// A downstream that reads each connection to its end, then answers
    /// with the bytes reversed and closes; it counts its connections.
    async fn reversing_server() -> (SocketAddr, Arc<AtomicUsize>) {
        let (listener, addr) = loopback().await;
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut all = Vec::new();
                    if s.read_to_end(&mut all).await.is_ok() {
                        all.reverse();
                        let _ = s.write_all(&all).await;
                    }
                });
            }
        });
        (addr, accepted)
    }

    /// A `kind` relay to `to`: its address, and what stops it.
    async fn started(kind: RelayKind, to: SocketAddr) -> (SocketAddr, CancellationToken) {
        let (listener, addr) = loopback().await;
        let shutdown = CancellationToken::new();
        spawn(kind, listener, to, shutdown.clone()).expect("the relay starts");
        (addr, shutdown)
    }

    async fn relay_to(to: SocketAddr) -> (SocketAddr, CancellationToken) {
        started(RelayKind::Tcp, to).await
    }

    /// A loopback address nothing listens on any more.
    async fn gone_address() -> SocketAddr {
        loopback().await.1
    }

    /// Write `text`, end the write side, read the answer to its end.
    async fn exchange(stream: &mut TcpStream, text: &[u8]) -> Vec<u8> {
        stream.write_all(text).await.expect("write");
        stream.shutdown().await.expect("shut down the write side");
        let mut back = Vec::new();
        stream
            .read_to_end(&mut back)
            .await
            .expect("read to the end");
        back
    }

    #[tokio::test]
    async fn a_half_close_is_passed_on_and_the_answer_still_comes_back() {
        let (downstream, accepted) = reversing_server().await;
        let (relay, _shutdown) = relay_to(downstream).await;
        // Two connections at once, each answered on its own: the downstream
        // answers only after the client's end of writing reaches it.
        let mut a = TcpStream::connect(relay)
            .await
            .expect("connect to the relay");
        let mut b = TcpStream::connect(relay)
            .await
            .expect("connect to the relay");
        let (back_a, back_b) = tokio::time::timeout(
            Duration::from_secs(10),
            futures::future::join(exchange(&mut a, b"abc"), exchange(&mut b, b"wxyz")),
        )
        .await
        .expect("both answers");
        assert_eq!(back_a, b"cba");
        assert_eq!(back_b, b"zyxw");
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            2,
            "one downstream connection each"
        );
    }

    #[tokio::test]
    async fn a_downstream_that_is_gone_closes_the_connection() {
        let gone = gone_address().await;
        let (relay, _shutdown) = relay_to(gone).await;
        let mut client = TcpStream::connect(relay)
            .await
            .expect("connect to the relay");
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut rest))
            .await
            .expect("the relay closes the connection");
        // Reset or orderly close, either ends the read without data.
        assert!(read.is_err() || rest.is_empty(), "{read:?} {rest:?}");
    }

    /// A downstream that answers every request with what it received, a
    /// session header, and for `/redirect` a 307; it counts its
    /// connections.
    async fn echoing_http_server() -> (SocketAddr, Arc<AtomicUsize>) {
        use axum::http::HeaderValue;
        let app = axum::Router::new().fallback(|request: Request| async move {
            let (parts, body) = request.into_parts();
            let body = axum::body::to_bytes(body, 1 << 20)
                .await
                .unwrap_or_default();
            if parts.uri.path() == "/redirect" {
                return (
                    StatusCode::TEMPORARY_REDIRECT,
                    [(header::LOCATION, "/elsewhere")],
                )
                    .into_response();
            }
            let text = |name: &str| parts.headers.get(name).and_then(|h| h.to_str().ok());
            let seen = serde_json::json!({
                "method": parts.method.as_str(),
                "uri": parts.uri.to_string(),
                "host": text("host"),
                "session": text("mcp-session-id"),
                "contentLength": text("content-length"),
                "body": String::from_utf8_lossy(&body),
            });
            let mut response = axum::Json(seen).into_response();
            response
                .headers_mut()
                .insert("mcp-session-id", HeaderValue::from_static("s-2"));
            response
        });
        let (listener, addr) = loopback().await;
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        let listener = listener.tap_io(move |_| {
            count.fetch_add(1, Ordering::SeqCst);
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        (addr, accepted)
    }

    async fn http_relay_to(to: SocketAddr) -> (SocketAddr, CancellationToken) {
        started(RelayKind::Http, to).await
    }

    #[tokio::test]
    async fn the_http_relay_forwards_the_request_and_the_answer_unread() {
        let (downstream, accepted) = echoing_http_server().await;
        let (relay, _shutdown) = http_relay_to(downstream).await;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let answer = client
            .post(format!("http://{relay}/connector_3/mcp?x=1"))
            .header("mcp-session-id", "s-1")
            .body(r#"{"jsonrpc":"2.0"}"#)
            .send()
            .await
            .expect("an answer through the relay");
        assert_eq!(answer.status(), 200);
        assert_eq!(answer.headers()["mcp-session-id"], "s-2");
        let length = answer.headers().get(header::CONTENT_LENGTH).cloned();
        let seen = answer.bytes().await.expect("the answer's body");
        // The answer keeps its length: framed by it, not re-chunked.
        assert_eq!(
            length.and_then(|l| l.to_str().ok()?.parse::<usize>().ok()),
            Some(seen.len())
        );
        let seen: serde_json::Value = serde_json::from_slice(&seen).expect("JSON");
        assert_eq!(seen["method"], "POST");
        assert_eq!(seen["uri"], "/connector_3/mcp?x=1");
        assert_eq!(seen["host"], downstream.to_string());
        assert_eq!(seen["session"], "s-1");
        assert_eq!(seen["contentLength"], "17");
        assert_eq!(seen["body"], r#"{"jsonrpc":"2.0"}"#);

        // Calls one after another share one kept-alive downstream connection.
        for _ in 0..5 {
            let again = client
                .post(format!("http://{relay}/connector_3/mcp"))
                .body("{}")
                .send()
                .await
                .expect("an answer through the relay");
            assert_eq!(again.status(), 200);
            let _ = again.bytes().await;
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);

        // A redirect is passed on, not followed.
        let moved = client
            .post(format!("http://{relay}/redirect"))
            .send()
            .await
            .expect("an answer through the relay");
        assert_eq!(moved.status(), 307);
        assert_eq!(moved.headers()[header::LOCATION], "/elsewhere");
    }

    #[tokio::test]
    async fn the_http_relay_streams_an_answer_as_it_comes() {
        // The downstream sends one event, then holds the stream open.
        let (release, held) = tokio::sync::oneshot::channel::<()>();
        let held = Arc::new(std::sync::Mutex::new(Some(held)));
        let app = axum::Router::new().fallback(move || {
            let held = held.lock().unwrap_or_else(|p| p.into_inner()).take();
            async move {
                let first = futures::stream::once(async {
                    Ok::<_, std::io::Error>(axum::body::Bytes::from_static(b"data: 1\n\n"))
                });
                let rest = futures::stream::once(async move {
                    if let Some(held) = held {
                        let _ = held.await;
                    }
                    Ok(axum::body::Bytes::from_static(b"data: 2\n\n"))
                });
                (
                    [(header::CONTENT_TYPE, "text/event-stream")],
                    Body::from_stream(futures::StreamExt::chain(first, rest)),
                )
            }
        });
        let (listener, downstream) = loopback().await;
        tokio::spawn(async move { axum::serve(listener, app).await });
        let (relay, _shutdown) = http_relay_to(downstream).await;
        let mut answer = reqwest::get(format!("http://{relay}/events"))
            .await
            .expect("an answer through the relay");
        let first = tokio::time::timeout(Duration::from_secs(10), answer.chunk())
            .await
            .expect("the first event before the stream ends")
            .expect("a chunk");
        assert_eq!(first.as_deref(), Some(&b"data: 1\n\n"[..]));
        let _ = release.send(());
        let rest = answer.bytes().await.expect("the rest");
        assert_eq!(&rest[..], b"data: 2\n\n");
    }

    #[tokio::test]
    async fn the_http_relay_answers_502_when_the_downstream_is_gone() {
        let gone = gone_address().await;
        let (relay, _shutdown) = http_relay_to(gone).await;
        let answer = reqwest::get(format!("http://{relay}/mcp"))
            .await
            .expect("an answer from the relay itself");
        assert_eq!(answer.status(), 502);
    }

    #[tokio::test]
    async fn the_http_relay_refuses_a_body_over_its_limit_without_forwarding_it() {
        // Nothing listens there: a forwarded request would be a 502.
        let gone = gone_address().await;
        let (relay, _shutdown) = http_relay_to(gone).await;
        let answer = reqwest::Client::new()
            .post(format!("http://{relay}/mcp"))
            .body(vec![b' '; MAX_REQUEST_BYTES + 1])
            .send()
            .await
            .expect("an answer from the relay itself");
        assert_eq!(answer.status(), 400);
    }

    #[test]
    fn hop_by_hop_headers_and_the_ones_connection_names_are_not_forwarded() {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("connection", "x-hop, Keep-Alive"),
            ("x-hop", "1"),
            ("keep-alive", "timeout=5"),
            ("te", "trailers"),
            ("host", "127.0.0.1:1"),
            ("transfer-encoding", "chunked"),
            ("proxy-connection", "keep-alive"),
            ("content-length", "17"),
            ("mcp-session-id", "s-1"),
            ("accept", "application/json"),
        ] {
            headers.append(
                header::HeaderName::from_static(name),
                header::HeaderValue::from_static(value),
            );
        }
        let kept = forwarded(headers);
        let mut names: Vec<&str> = kept.keys().map(|k| k.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["accept", "content-length", "mcp-session-id"]);
    }

    /// Whether `addr` refuses connections within a second: the relay's
    /// listener is dropped once its accept loop has returned.
    async fn stops_accepting(addr: SocketAddr) -> bool {
        for _ in 0..200 {
            if TcpStream::connect(addr).await.is_err() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        false
    }

    #[tokio::test]
    async fn each_relay_stops_accepting_on_shutdown() {
        let (downstream, _) = echoing_http_server().await;
        for kind in RelayKind::ALL {
            let (relay, shutdown) = started(kind, downstream).await;
            shutdown.cancel();
            assert!(
                stops_accepting(relay).await,
                "the {} still accepts",
                kind.column()
            );
        }
    }
}
