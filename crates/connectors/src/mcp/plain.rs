//! The direct route's POST to a plain `http://` downstream on hyper's
//! pooled HTTP/1 client, below reqwest.
//!
//! reqwest's layers above that same client (its redirect layer, its retry
//! layer, its per-request configuration) cost about a fifth of the
//! gateway's instructions per direct call, 12.4k of them parsing the URL
//! again twice per request whatever the redirect policy
//! (docs/performance.md, "Posting below reqwest"). Here the URL is parsed
//! once per session and the request goes straight to the client reqwest
//! itself wraps, built as reqwest builds it for this gateway (`TCP_NODELAY`,
//! the same TCP keepalive and user timeout, a 90 s idle pool, the system
//! resolver).
//!
//! What reqwest still gives the other routes is kept here or left to it:
//! - a downstream that is not plain `http://`, has a user or password in
//!   its URL, or any proxy variable in the environment (`HTTP_PROXY`,
//!   `http_proxy`, `ALL_PROXY`, `all_proxy`, set at all, even empty) is
//!   posted through reqwest, and so is every call on macOS and Windows;
//! - redirects follow the gateway's rule (`http.rs`, `pooled_client`) as
//!   reqwest applies it: a 307 or 308 whose `Location` is on the origin the
//!   call was posted to is followed with the same method, body and headers
//!   and a `Referer`, at most ten times; anything else is the answer;
//! - the answer is handed on as a `reqwest::Response`, so `post.rs` reads
//!   it exactly as before (its differential test runs both routes).
//!
//! A request that could not be sent is `StreamableHttpError::Io` with the
//! URL (scheme, host and path: never a query) and the cause, where reqwest
//! gave `Client`; both are the same unavailable-downstream error to the
//! caller (`errors.rs`).
//!
//! Must never: send through a proxy-less connection what the environment
//! says must go through a proxy; follow a redirect reqwest would not.

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use http::header::{LOCATION, REFERER};
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use reqwest::Url;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::post::HttpError;

/// The environment variables that make reqwest send an `http://` request
/// through a proxy.
const PROXY_VARIABLES: [&str; 4] = ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];
/// Redirects followed for one call at most (`http.rs`, `MAX_REDIRECTS`).
const MAX_REDIRECTS: usize = super::http::MAX_REDIRECTS;

type PlainClient = Client<HttpConnector, Full<Bytes>>;

/// Where a session's calls go on this route: the parsed form of its URL,
/// when the route may take them (see the module doc).
pub(crate) fn route(url: &Url) -> Option<Uri> {
    route_unless(proxied(), url)
}

fn route_unless(proxied: bool, url: &Url) -> Option<Uri> {
    let plain = url.scheme() == "http" && url.username().is_empty() && url.password().is_none();
    if !plain || proxied {
        return None;
    }
    // reqwest hands hyper the same parse of the same text.
    Uri::try_from(url.as_str()).ok()
}

/// Whether the environment names a proxy: read once, when reqwest reads it
/// for the gateway's client (`http.rs` calls [`read_proxy_variables`]
/// then). On macOS and Windows reqwest may also take the system's
/// settings, so there every call keeps it.
fn proxied() -> bool {
    read_proxy_variables()
}

pub(crate) fn read_proxy_variables() -> bool {
    static PROXIED: OnceLock<bool> = OnceLock::new();
    *PROXIED.get_or_init(|| {
        cfg!(any(target_os = "macos", windows))
            || PROXY_VARIABLES
                .iter()
                .any(|v| std::env::var_os(v).is_some())
    })
}

/// One client for the process, as `http.rs` keeps one reqwest client.
fn client() -> &'static PlainClient {
    static CLIENT: OnceLock<PlainClient> = OnceLock::new();
    CLIENT.get_or_init(|| {
        Client::builder(TokioExecutor::new())
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(connector())
    })
}

/// Connections set up as reqwest 0.13 sets up the gateway's client's
/// (`pooled_client`): no delay, TCP keepalive after 15 s every 15 s three
/// times, and on Linux a peer that acknowledges nothing for 30 s is given
/// up (`TCP_USER_TIMEOUT`) rather than retried for the kernel's ~15 minutes.
fn connector() -> HttpConnector {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.set_keepalive(Some(Duration::from_secs(15)));
    connector.set_keepalive_interval(Some(Duration::from_secs(15)));
    connector.set_keepalive_retries(Some(3));
    #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
    connector.set_tcp_user_timeout(Some(Duration::from_secs(30)));
    connector
}

/// Posts `body` to `uri` (the parse of `url`) with `headers`, following
/// redirects as reqwest does under the gateway's rule.
pub(crate) async fn post(
    uri: &Uri,
    url: &Url,
    mut headers: HeaderMap,
    body: Vec<u8>,
) -> Result<reqwest::Response, HttpError> {
    let body = Bytes::from(body);
    let mut uri = uri.clone();
    // The URLs redirected from, the call's own first.
    let mut previous: Vec<Url> = Vec::new();
    loop {
        let mut request = Request::new(Full::new(body.clone()));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = uri.clone();
        *request.headers_mut() = headers.clone();
        let response = client()
            .request(request)
            .await
            .map_err(|e| not_sent(&uri, e))?;
        if !matches!(
            response.status(),
            StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
        ) {
            return Ok(answer(response));
        }
        // As tower-http's redirect layer under reqwest reads `Location`.
        let Some(next) = response
            .headers()
            .get(LOCATION)
            .and_then(|l| resolve(std::str::from_utf8(l.as_bytes()).ok()?, &uri))
        else {
            return Ok(answer(response));
        };
        // As reqwest's redirect policy reads the two.
        let from = if previous.is_empty() {
            url.clone()
        } else {
            Url::parse(&uri.to_string()).map_err(|_| redirect_error(&uri, "an unreadable URL"))?
        };
        let to = Url::parse(&next.to_string())
            .map_err(|_| redirect_error(&uri, "an unreadable Location"))?;
        previous.push(from);
        if previous[0].origin() != to.origin() {
            return Ok(answer(response));
        }
        if previous.len() > MAX_REDIRECTS {
            return Err(redirect_error(&uri, "too many redirects"));
        }
        if let Some(referer) = previous.last().and_then(referer) {
            headers.insert(REFERER, referer);
        }
        uri = next;
    }
}

/// The answer as reqwest hands one out (its body read through reqwest's
/// stream, so `post.rs` reads both routes' answers alike).
fn answer(response: http::Response<hyper::body::Incoming>) -> reqwest::Response {
    reqwest::Response::from(response.map(reqwest::Body::wrap))
}

/// `Location` resolved against the URL it answered, as tower-http does.
fn resolve(location: &str, base: &Uri) -> Option<Uri> {
    let base = Url::parse(&base.to_string()).ok()?;
    Uri::try_from(String::from(base.join(location).ok()?)).ok()
}

/// The `Referer` reqwest sends when it follows a redirect from `from` (on
/// the same origin, so never from https to http).
fn referer(from: &Url) -> Option<HeaderValue> {
    let mut from = from.clone();
    let _ = from.set_username("");
    let _ = from.set_password(None);
    from.set_fragment(None);
    HeaderValue::from_str(from.as_str()).ok()
}

/// Where a request went, for an error: scheme, host and path, never a
/// query (which may carry what a credential would).
fn shown(uri: &Uri) -> String {
    let scheme = uri.scheme_str().unwrap_or("http");
    let authority = uri.authority().map_or("", |a| a.as_str());
    format!("{scheme}://{authority}{}", uri.path())
}

#[derive(Debug, thiserror::Error)]
enum PlainError {
    #[error("error sending request for url ({url}): {cause}")]
    NotSent {
        url: String,
        cause: String,
        #[source]
        source: hyper_util::client::legacy::Error,
    },
    #[error("error following redirect for url ({url}): {reason}")]
    Redirect { url: String, reason: &'static str },
}

fn not_sent(uri: &Uri, e: hyper_util::client::legacy::Error) -> HttpError {
    // The innermost cause says what happened ("Connection refused").
    let mut cause: &dyn std::error::Error = &e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let cause = cause.to_string();
    let error = PlainError::NotSent {
        url: shown(uri),
        cause,
        source: e,
    };
    StreamableHttpError::Io(std::io::Error::other(error))
}

fn redirect_error(uri: &Uri, reason: &'static str) -> HttpError {
    let error = PlainError::Redirect {
        url: shown(uri),
        reason,
    };
    StreamableHttpError::Io(std::io::Error::other(error))
}

#[cfg(test)]
mod tests {
    use connecta_core::error::ErrorCode;

    use super::*;
    use crate::mcp::errors::{SessionFate, from_service_error};

    #[test]
    fn only_plain_http_without_a_proxy_or_a_user_goes_below_reqwest() {
        let url = |s: &str| Url::parse(s).expect("a URL");
        let taken = route_unless(false, &url("http://127.0.0.1:8080/mcp?tenant=a"));
        assert_eq!(
            taken.map(|u| u.to_string()).as_deref(),
            Some("http://127.0.0.1:8080/mcp?tenant=a")
        );
        for refused in [
            "https://example.com/mcp",
            "http://user@example.com/mcp",
            "http://user:secret@example.com/mcp",
            "http://:secret@example.com/mcp",
        ] {
            assert_eq!(route_unless(false, &url(refused)), None, "{refused}");
        }
        assert_eq!(route_unless(true, &url("http://127.0.0.1:8080/mcp")), None);
    }

    /// One socket option of `fd`, as an integer.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn option(fd: std::os::fd::RawFd, level: libc::c_int, name: libc::c_int) -> libc::c_int {
        let mut value: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `fd` is an open socket for the call, and `value` and
        // `len` are valid for writes of the size `len` says.
        let rc =
            unsafe { libc::getsockopt(fd, level, name, (&raw mut value).cast(), &raw mut len) };
        assert_eq!(rc, 0, "getsockopt({level}, {name})");
        value
    }

    /// The socket of this process connected to `peer`.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn socket_to(peer: std::net::SocketAddr) -> std::os::fd::RawFd {
        for entry in std::fs::read_dir("/proc/self/fd").expect("the process's files") {
            let Some(fd) = entry
                .ok()
                .and_then(|e| e.file_name().to_str()?.parse::<std::os::fd::RawFd>().ok())
            else {
                continue;
            };
            // SAFETY: an all-zero `sockaddr_storage` is valid, and
            // `getpeername` writes at most `len` bytes into it.
            let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            let rc = unsafe { libc::getpeername(fd, (&raw mut addr).cast(), &raw mut len) };
            if rc != 0 || libc::c_int::from(addr.ss_family) != libc::AF_INET {
                continue;
            }
            // SAFETY: the family says the storage holds a `sockaddr_in`.
            let v4 = unsafe { &*(&raw const addr).cast::<libc::sockaddr_in>() };
            let ip = std::net::Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr));
            if std::net::SocketAddr::from((ip, u16::from_be(v4.sin_port))) == peer {
                return fd;
            }
        }
        panic!("no socket connected to {peer}");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_plain_routes_connections_are_set_up_as_reqwest_sets_up_the_gateways() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let peer = listener.local_addr().expect("an address");
        // Answers one request and keeps the connection open.
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.expect("a connection");
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.ends_with(b"\r\n\r\n{}") {
                let n = socket.read(&mut buf).await.expect("a request");
                assert!(n > 0, "the request was cut short");
                request.extend_from_slice(&buf[..n]);
            }
            let answer = b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";
            socket.write_all(answer).await.expect("an answer");
            tokio::time::sleep(Duration::from_secs(30)).await;
        });
        let url = Url::parse(&format!("http://{peer}/mcp")).expect("a URL");
        let uri = route_unless(false, &url).expect("a plain route");
        let answer = post(&uri, &url, HeaderMap::new(), b"{}".to_vec())
            .await
            .expect("an answer");
        assert_eq!(answer.status(), StatusCode::ACCEPTED);
        let fd = socket_to(peer);
        assert_eq!(option(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY), 1);
        assert_eq!(option(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE), 1);
        assert_eq!(option(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE), 15);
        assert_eq!(option(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL), 15);
        assert_eq!(option(fd, libc::IPPROTO_TCP, libc::TCP_KEEPCNT), 3);
        assert_eq!(
            option(fd, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT),
            30_000
        );
    }

    #[tokio::test]
    async fn a_call_that_could_not_be_sent_names_the_url_without_its_query_and_resets_the_session()
    {
        // A port nothing listens on: bound, then closed.
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
            listener.local_addr().expect("an address").port()
        };
        let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp?key=hunter2")).expect("a URL");
        let uri = route_unless(false, &url).expect("a plain route");
        let Err(e) = post(&uri, &url, HeaderMap::new(), b"{}".to_vec()).await else {
            panic!("nothing listens there");
        };
        let text = e.to_string();
        assert!(
            text.contains(&format!("http://127.0.0.1:{port}/mcp")) && text.contains("refused"),
            "{text}"
        );
        assert!(!text.contains("hunter2"), "{text}");
        let (error, fate) = from_service_error("demo", &super::super::direct::transport_error(e));
        assert_eq!(error.code, ErrorCode::Unavailable);
        assert!(error.retryable);
        assert!(matches!(fate, SessionFate::Reset));
        assert!(!error.message.contains("hunter2"), "{}", error.message);
    }
}
