//! The direct route's POST of a `tools/call`, read as rmcp's reqwest client
//! reads the answer to a request (status, content type, size limits, event
//! streams), except that a JSON body is handed back as bytes: the direct
//! route reads its call's answer out of it without rmcp's untagged reading of
//! every message and result type, which was the largest single cost left in
//! the gateway's half of a call (docs/performance.md, "Reading the
//! downstream's answer").
//!
//! Kept as rmcp has it, for a POST that carries a request: a 401 or 403 with
//! a challenge is `AuthRequired` / `InsufficientScope`; 202 and 204 are
//! `Accepted`; a 404 on a session is `SessionExpired`; a failure status with
//! a JSON body is read (within the JSON limit) for a JSON-RPC error; 429 and
//! 5xx are `HttpStatus` with their `Retry-After`; other failures keep their
//! status and a bounded prefix of the body; a success is an event stream
//! (each event within the event limit) or a JSON body (within the JSON
//! limit), anything else an unexpected content type. Error bodies are decoded
//! as UTF-8, lossily, before they are read (rmcp's client does the same in
//! this build: reqwest's `charset` feature is off). A test serves every
//! kind of answer to both and requires the same reading, and the same
//! request on the wire.
//!
//! Must never: buffer more than a limit allows; read a body it does not need.

use std::borrow::Cow;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt, TryStreamExt};
#[cfg(test)]
use http::HeaderValue;
use http::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, StatusCode};
use rmcp::model::{JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
    StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse, SseStream};

pub(crate) type HttpError = StreamableHttpError<reqwest::Error>;

const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";
const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// rmcp keeps a `Retry-After` only up to this length.
const MAX_RETRY_AFTER_BYTES: usize = 128;
/// What an error body that could not be read is shown as.
const BODY_READ_FAILURE: &str = "<failed to read response body>";

/// How the downstream answered the POST.
pub(crate) enum Posted {
    /// A JSON body, within the limit: one message.
    Json(Vec<u8>),
    /// An event stream, each event within the limit.
    Stream(BoxStream<'static, Result<Sse, SseError>>),
    /// A JSON-RPC error the downstream sent with a failure status.
    Error(Box<ServerJsonRpcMessage>),
    /// 202 or 204: taken, with no answer.
    Accepted,
}

/// Where and how a session's calls are posted, prepared once per session.
pub(crate) struct Target {
    pub(crate) url: reqwest::Url,
    /// The connector's headers, its credential and the negotiated
    /// `MCP-Protocol-Version`; rmcp refused its handshake if any of them
    /// clashed with a header it reserves (`Accept`, the session id,
    /// `Last-Event-Id`), but a `Content-Type` may be among them and
    /// replaces the POST's own, as with rmcp.
    pub(crate) headers: HeaderMap,
    pub(crate) limits: StreamableHttpResponseLimits,
}

impl Target {
    /// Posts `body` (one JSON-RPC request) on `session` and reads the head
    /// of the answer, and its body when that is not an event stream.
    pub(crate) async fn post(
        &self,
        http: &reqwest::Client,
        body: Vec<u8>,
        session: Option<&str>,
    ) -> Result<Posted, HttpError> {
        let mut request = http
            .post(self.url.clone())
            .header(ACCEPT, "text/event-stream, application/json")
            .header(CONTENT_TYPE, JSON)
            .headers(self.headers.clone());
        if let Some(id) = session {
            request = request.header(SESSION_ID, id);
        }
        let response = request
            .body(body)
            .send()
            .await
            .map_err(|e| StreamableHttpError::Client(e.without_url()))?;
        let status = response.status();
        if let Some(challenge) = challenge(&response)? {
            return Err(challenge);
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(Posted::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type = response.headers().get(CONTENT_TYPE).cloned();
        let is_json = content_type
            .as_ref()
            .is_some_and(|ct| media_type_is(ct.as_bytes(), JSON));
        let status_error = status_error(status, response.headers());
        if !status.is_success() {
            return self.failure(response, status, is_json, status_error).await;
        }
        if content_type
            .as_ref()
            .is_some_and(|ct| media_type_is(ct.as_bytes(), EVENT_STREAM))
        {
            let max = self.limits.max_sse_event_size;
            return Ok(Posted::Stream(bounded_events(response, max)));
        }
        if is_json {
            let length = response.content_length();
            let body = read_bounded(
                response.bytes_stream(),
                length,
                self.limits.max_json_response_size,
            )
            .await?;
            return Ok(Posted::Json(body));
        }
        let content_type = content_type.map(|ct| String::from_utf8_lossy(ct.as_bytes()).into());
        Err(StreamableHttpError::UnexpectedContentType(content_type))
    }

    /// A failure status: the JSON-RPC error its JSON body carries, or the
    /// status as an error.
    async fn failure(
        &self,
        response: reqwest::Response,
        status: StatusCode,
        is_json: bool,
        status_error: Option<HttpStatusError>,
    ) -> Result<Posted, HttpError> {
        let limits = &self.limits;
        let status_error = match status_error {
            Some(error) if !is_json || status == StatusCode::TOO_MANY_REQUESTS => {
                return Err(StreamableHttpError::HttpStatus(error));
            }
            other => other,
        };
        // A 401 or 403 without a challenge keeps its status.
        let auth = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
        let text = if is_json && !auth {
            let length = response.content_length();
            match read_bounded(
                response.bytes_stream(),
                length,
                limits.max_json_response_size,
            )
            .await
            {
                Ok(raw) => {
                    // Decoded before it is parsed, as rmcp does.
                    let text = lossy(&raw);
                    if let Ok(message @ JsonRpcMessage::Error(_)) =
                        serde_json::from_str::<ServerJsonRpcMessage>(&text)
                    {
                        return Ok(Posted::Error(Box::new(message)));
                    }
                    tracing::warn!("HTTP {status}: could not parse JSON body as a JSON-RPC error");
                    if raw.len() > limits.max_error_response_size {
                        lossy(&raw[..limits.max_error_response_size])
                    } else {
                        text
                    }
                }
                Err(error @ StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                    return Err(status_error.map_or(error, StreamableHttpError::HttpStatus));
                }
                Err(StreamableHttpError::Client(_)) => read_failure(limits),
                Err(error) => return Err(error),
            }
        } else {
            match read_prefix(response.bytes_stream(), limits.max_error_response_size).await {
                Ok(prefix) => lossy(&prefix),
                Err(_) => read_failure(limits),
            }
        };
        if let Some(error) = status_error {
            return Err(StreamableHttpError::HttpStatus(error));
        }
        Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
            format!("HTTP {status}: {text}"),
        )))
    }
}

/// `e` without the request's URL that reqwest keeps in its errors: a
/// downstream's URL may carry a key in its query, and these errors reach
/// the caller, the connector's health and the log. The connector's id says
/// which downstream it was.
pub(crate) fn without_url(e: HttpError) -> HttpError {
    match e {
        StreamableHttpError::Client(e) => StreamableHttpError::Client(e.without_url()),
        other => other,
    }
}

/// The error for a JSON answer that is not a JSON-RPC message, worded as
/// rmcp words it.
pub(crate) fn unreadable(e: &serde_json::Error, body: &[u8]) -> HttpError {
    const PREVIEW: usize = 256;
    let lossy = String::from_utf8_lossy(body);
    let mut end = lossy.len().min(PREVIEW);
    while !lossy.is_char_boundary(end) {
        end -= 1;
    }
    let shown = if body.is_empty() {
        "<empty>"
    } else {
        &lossy[..end]
    };
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
        "could not parse JSON response as ServerJsonRpcMessage: {e}: {shown}"
    )))
}

/// A 401 or 403 that carries a `WWW-Authenticate` challenge.
fn challenge(response: &reqwest::Response) -> Result<Option<HttpError>, HttpError> {
    let status = response.status();
    if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        return Ok(None);
    }
    let Some(header) = response.headers().get(WWW_AUTHENTICATE) else {
        return Ok(None);
    };
    let header = header.to_str().map_err(|_| {
        StreamableHttpError::UnexpectedServerResponse(Cow::from(
            "invalid www-authenticate header value",
        ))
    })?;
    Ok(Some(if status == StatusCode::UNAUTHORIZED {
        StreamableHttpError::AuthRequired(AuthRequiredError::new(header.to_owned()))
    } else {
        StreamableHttpError::InsufficientScope(InsufficientScopeError::new(
            header.to_owned(),
            scope_of(header),
        ))
    }))
}

/// The `scope=` a challenge names, quoted or bare.
fn scope_of(header: &str) -> Option<String> {
    let at = header.to_ascii_lowercase().find("scope=")? + "scope=".len();
    let value = &header[at..];
    if let Some(quoted) = value.strip_prefix('"') {
        return quoted.find('"').map(|end| quoted[..end].to_owned());
    }
    let end = value
        .find(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .unwrap_or(value.len());
    (end > 0).then(|| value[..end].to_owned())
}

/// 429 and 5xx, with the first `Retry-After` if it is short and UTF-8.
fn status_error(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(RETRY_AFTER)
        .filter(|v| v.as_bytes().len() <= MAX_RETRY_AFTER_BYTES)
        // Any UTF-8, as rmcp keeps it (`to_str` would take only ASCII).
        .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
        .map(str::to_owned);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

/// Whether a `Content-Type` names `expected`, parameters and case aside.
fn media_type_is(value: &[u8], expected: &str) -> bool {
    value
        .split(|b| *b == b';')
        .next()
        .and_then(|essence| std::str::from_utf8(essence).ok())
        .is_some_and(|essence| {
            essence
                .trim_matches([' ', '\t'])
                .eq_ignore_ascii_case(expected)
        })
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read_failure(limits: &StreamableHttpResponseLimits) -> String {
    BODY_READ_FAILURE[..BODY_READ_FAILURE.len().min(limits.max_error_response_size)].to_owned()
}

/// The whole body, refused as soon as it (or its declared length) is over
/// `max`.
async fn read_bounded<S, B>(
    stream: S,
    length: Option<u64>,
    max: usize,
) -> Result<Vec<u8>, HttpError>
where
    S: Stream<Item = Result<B, reqwest::Error>>,
    B: AsRef<[u8]>,
{
    let too_large = || StreamableHttpError::ResponseBodyTooLarge { max_size: max };
    if length.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    let mut stream = std::pin::pin!(stream);
    // A declared length only refuses; it never sizes the buffer.
    let mut body = Vec::new();
    while let Some(chunk) = stream
        .try_next()
        .await
        .map_err(StreamableHttpError::Client)?
    {
        let chunk = chunk.as_ref();
        if chunk.len() > max - body.len() {
            return Err(too_large());
        }
        body.extend_from_slice(chunk);
    }
    Ok(body)
}

/// At most `max` bytes of a diagnostic body; the rest is not read.
async fn read_prefix<S, B>(stream: S, max: usize) -> Result<Vec<u8>, reqwest::Error>
where
    S: Stream<Item = Result<B, reqwest::Error>>,
    B: AsRef<[u8]>,
{
    let mut stream = std::pin::pin!(stream);
    let mut prefix = Vec::new();
    while prefix.len() < max {
        let Some(chunk) = stream.try_next().await? else {
            break;
        };
        let chunk = chunk.as_ref();
        let room = max - prefix.len();
        prefix.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
    Ok(prefix)
}

#[derive(Debug, thiserror::Error)]
enum EventStreamError {
    #[error(transparent)]
    Body(reqwest::Error),
    #[error("SSE event exceeded the maximum size of {max_size} bytes")]
    EventTooLarge { max_size: usize },
}

/// Whether an event stream from [`Target::post`] ended because an event
/// was over the limit (picking the stream up again would meet it again).
pub(crate) fn is_event_too_large(e: &SseError) -> bool {
    matches!(
        e,
        SseError::Body(source) if matches!(
            source.downcast_ref::<EventStreamError>(),
            Some(EventStreamError::EventTooLarge { .. })
        )
    )
}

/// The body as events, ending with an error at the first event over `max`
/// bytes (counted as the parser will keep it) or the first failed read.
fn bounded_events(
    response: reqwest::Response,
    max: usize,
) -> BoxStream<'static, Result<Sse, SseError>> {
    let checked =
        response
            .bytes_stream()
            .scan((EventSize::new(max), false), move |(size, failed), item| {
                if *failed {
                    return std::future::ready(None);
                }
                let checked = match item {
                    Ok(chunk) if size.observe(&chunk) => Ok(chunk),
                    Ok(_) => Err(EventStreamError::EventTooLarge { max_size: max }),
                    Err(e) => Err(EventStreamError::Body(e)),
                };
                *failed = checked.is_err();
                std::future::ready(Some(checked))
            });
    SseStream::from_bytes_stream(checked).boxed()
}

/// The size of the event being read, as the event-stream parser keeps it:
/// each field line and the newline joining it to the next; comments and
/// the blank line that ends an event are not kept.
#[derive(Debug)]
struct EventSize {
    max: usize,
    kept: usize,
    line: usize,
    comment: bool,
    after_cr: bool,
}

impl EventSize {
    fn new(max: usize) -> Self {
        EventSize {
            max,
            kept: 0,
            line: 0,
            comment: false,
            after_cr: false,
        }
    }

    /// Counts `chunk`; false once the event is over the limit.
    fn observe(&mut self, chunk: &[u8]) -> bool {
        for &byte in chunk {
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                continue;
            }
            let within = match byte {
                b'\r' => {
                    self.after_cr = true;
                    self.end_line()
                }
                b'\n' => self.end_line(),
                _ => {
                    if self.line == 0 {
                        self.comment = byte == b':';
                    }
                    self.line = self.line.saturating_add(1);
                    self.within()
                }
            };
            if !within {
                return false;
            }
        }
        true
    }

    fn end_line(&mut self) -> bool {
        if self.line == 0 {
            self.kept = 0;
        } else if !self.comment {
            self.kept = self.kept.saturating_add(self.line).saturating_add(1);
        }
        self.line = 0;
        self.comment = false;
        self.within()
    }

    fn within(&self) -> bool {
        self.kept.saturating_add(self.line) <= self.max
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use rmcp::model::{
        CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, NumberOrString,
    };
    use rmcp::transport::streamable_http_client::{
        StreamableHttpClient, StreamableHttpPostResponse,
    };
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// One canned answer: status, headers, body.
    type Canned = (u16, Vec<(&'static str, &'static str)>, Vec<u8>);

    /// How a canned answer's body is framed on the wire.
    #[derive(Clone, Copy, Debug)]
    enum Framing {
        Length,
        Chunked,
        /// A `Content-Length` 100 bytes longer than the body, then the
        /// connection closes.
        Short,
    }

    fn answers() -> Vec<(Canned, Framing)> {
        let error_not_utf8 = br#"{"jsonrpc":"2.0","id":"c-1","error":{"code":1,"message":""#
            .iter()
            .chain(b"\xff\"}}")
            .copied()
            .collect::<Vec<u8>>();
        let ok = json!({"jsonrpc": "2.0", "id": "c-1", "result": {"content": []}}).to_string();
        let json = || vec![("content-type", "application/json")];
        let long_retry: &'static str = Box::leak("1".repeat(129).into_boxed_str());
        let mut all: Vec<(Canned, Framing)> =
            canned().into_iter().map(|c| (c, Framing::Length)).collect();
        all.extend([
            ((200, json(), ok.clone().into()), Framing::Chunked),
            (
                (
                    200,
                    vec![("content-type", "text/event-stream")],
                    format!("data: {ok}\r\n\r\n").into(),
                ),
                Framing::Chunked,
            ),
            ((200, json(), ok.clone().into()), Framing::Short),
            (
                (500, vec![("content-type", "text/plain")], b"down".to_vec()),
                Framing::Short,
            ),
            (
                (400, vec![("content-type", "text/plain")], b"bad".to_vec()),
                Framing::Short,
            ),
            ((400, json(), error_not_utf8.clone()), Framing::Length),
            ((500, json(), error_not_utf8), Framing::Length),
            (
                (503, vec![("retry-after", long_retry)], vec![]),
                Framing::Length,
            ),
            (
                (
                    429,
                    vec![("retry-after", "5"), ("retry-after", "6")],
                    vec![],
                ),
                Framing::Length,
            ),
            (
                (503, vec![("retry-after", "5\u{a0}")], vec![]),
                Framing::Length,
            ),
            (
                (
                    200,
                    vec![("content-type", "text/event-stream")],
                    format!("data: {ok}\n\n").into(),
                ),
                Framing::Short,
            ),
        ]);
        // Redirects: followed on the same origin (307 and 308 only, with a
        // `Referer`), answered as they are otherwise.
        let redirect = |status: u16, location: Option<&'static str>| {
            let headers = location.map(|l| vec![("location", l)]).unwrap_or_default();
            ((status, headers, b"moved".to_vec()), Framing::Length)
        };
        all.extend([
            redirect(307, Some("/0")),
            redirect(308, Some("1?page=2#top")),
            redirect(307, Some("http://localhost:1/0")),
            redirect(301, Some("/0")),
            redirect(303, Some("/0")),
            redirect(307, None),
            redirect(307, Some("http://[::1")),
        ]);
        // One that redirects to itself until the client gives up.
        static LOOPING: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
        let looping = all.len();
        let to_itself = LOOPING.get_or_init(|| Box::leak(format!("/{looping}").into_boxed_str()));
        all.push(redirect(308, Some(to_itself)));
        all
    }

    fn canned() -> Vec<Canned> {
        let ok = json!({"jsonrpc": "2.0", "id": "c-1", "result": {"content": []}}).to_string();
        let rpc_error =
            json!({"jsonrpc": "2.0", "id": "c-1", "error": {"code": -32602, "message": "bad"}})
                .to_string();
        let json = vec![("content-type", "application/json")];
        let sse = |body: &str| {
            (
                200,
                vec![("content-type", "text/event-stream")],
                body.into(),
            )
        };
        vec![
            (200, json.clone(), ok.clone().into()),
            (
                201,
                vec![("content-type", "Application/JSON; charset=utf-8")],
                ok.clone().into(),
            ),
            (200, json.clone(), b"nope".to_vec()),
            (200, json.clone(), vec![b' '; 2000]),
            sse(&format!("event: message\ndata: {ok}\n\n")),
            sse(&format!(
                ": comment\r\nid: 1\r\nretry: 5\r\ndata: {ok}\r\n\r\n"
            )),
            sse(&format!("data: {}\n\n", "x".repeat(100))),
            (202, vec![], vec![]),
            (204, vec![], vec![]),
            (404, vec![("content-type", "text/plain")], b"gone".to_vec()),
            (
                401,
                vec![("www-authenticate", "Bearer resource_metadata=\"m\"")],
                vec![],
            ),
            (401, json.clone(), rpc_error.clone().into()),
            (
                403,
                vec![(
                    "www-authenticate",
                    "Bearer error=\"insufficient_scope\", scope=\"a b\"",
                )],
                vec![],
            ),
            (
                403,
                vec![("www-authenticate", "Bearer scope=read,x")],
                vec![],
            ),
            (403, vec![], b"no".to_vec()),
            (
                429,
                vec![("content-type", "application/json"), ("retry-after", "3")],
                ok.clone().into(),
            ),
            (
                503,
                vec![("retry-after", "Wed, 21 Oct 2026 07:28:00 GMT")],
                b"busy".to_vec(),
            ),
            (500, json.clone(), rpc_error.clone().into()),
            (500, json.clone(), ok.clone().into()),
            (500, json.clone(), vec![b' '; 2000]),
            (400, json.clone(), rpc_error.into()),
            (400, vec![("content-type", "text/plain")], vec![b'e'; 100]),
            (400, json.clone(), b"{\"not\": \"an error\"}".to_vec()),
            (200, vec![("content-type", "text/plain")], b"hi".to_vec()),
            (200, vec![], b"hi".to_vec()),
        ]
    }

    /// A request as it arrived: its request line, its headers (lower-cased,
    /// sorted, without `host`) and body.
    type Seen = Arc<std::sync::Mutex<Vec<(Vec<String>, Vec<u8>)>>>;

    /// Serves `answers()[n]` at `/n`, one request per connection, and keeps
    /// each request.
    async fn serve(listener: TcpListener, seen: Seen) {
        let answers = answers();
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            let (head, start, length) = loop {
                let n = socket.read(&mut buf).await.expect("a request");
                request.extend_from_slice(&buf[..n]);
                if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&request[..end]).to_lowercase();
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |v| v.trim().parse::<usize>().expect("a length"));
                    break (head, end + 4, length);
                }
            };
            while request.len() < start + length {
                let n = socket.read(&mut buf).await.expect("a body");
                request.extend_from_slice(&buf[..n]);
            }
            // The request line first, then the headers but `host`, sorted.
            let mut headers: Vec<String> = head
                .lines()
                .skip(1)
                .filter(|l| !l.starts_with("host:"))
                .map(str::to_owned)
                .collect();
            headers.sort();
            headers.insert(0, head.lines().next().unwrap_or_default().to_owned());
            seen.lock()
                .expect("the requests")
                .push((headers, request[start..].to_vec()));
            let n: usize = head
                .split_whitespace()
                .nth(1)
                .and_then(|path| path.trim_start_matches('/').split('?').next()?.parse().ok())
                .expect("a case number");
            let ((status, headers, body), framing) = &answers[n];
            let reason = StatusCode::from_u16(*status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("");
            let mut out = format!("HTTP/1.1 {status} {reason}\r\n").into_bytes();
            for (k, v) in headers {
                out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
            }
            out.extend_from_slice(b"connection: close\r\n");
            match framing {
                Framing::Length => {
                    out.extend_from_slice(
                        format!("content-length: {}\r\n\r\n", body.len()).as_bytes(),
                    );
                    out.extend_from_slice(body);
                }
                Framing::Short => {
                    out.extend_from_slice(
                        format!("content-length: {}\r\n\r\n", body.len() + 100).as_bytes(),
                    );
                    out.extend_from_slice(body);
                }
                Framing::Chunked => {
                    out.extend_from_slice(b"transfer-encoding: chunked\r\n\r\n");
                    // Two chunks, split inside the body.
                    let (a, b) = body.split_at(body.len() / 2);
                    for part in [a, b] {
                        out.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
                        out.extend_from_slice(part);
                        out.extend_from_slice(b"\r\n");
                    }
                    out.extend_from_slice(b"0\r\n\r\n");
                }
            }
            socket.write_all(&out).await.expect("an answer");
        }
    }

    fn limits() -> StreamableHttpResponseLimits {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_json_response_size = 1024;
        limits.max_sse_event_size = 64;
        limits.max_error_response_size = 32;
        limits
    }

    async fn events(stream: BoxStream<'static, Result<Sse, SseError>>) -> String {
        let seen: Vec<String> = stream
            .map(|e| match e {
                Ok(e) => format!("{:?} {:?} {:?} {:?}", e.event, e.data, e.id, e.retry),
                Err(e) => format!("error {e}"),
            })
            .collect()
            .await;
        format!("events {seen:?}")
    }

    async fn ours(outcome: Result<Posted, HttpError>) -> String {
        match outcome {
            Ok(Posted::Json(body)) => match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(m) => format!("json {m:?}"),
                Err(e) => format!("{:?}", unreadable(&e, &body)),
            },
            Ok(Posted::Error(m)) => format!("json {m:?}"),
            Ok(Posted::Stream(s)) => events(s).await,
            Ok(Posted::Accepted) => "accepted".to_owned(),
            Err(e) => format!("{e:?}"),
        }
    }

    /// rmcp's reading, but for the request's URL, which connecta keeps
    /// out of its errors (`without_url`).
    async fn theirs(outcome: Result<StreamableHttpPostResponse, HttpError>) -> String {
        match outcome.map_err(without_url) {
            Ok(StreamableHttpPostResponse::Json(m, _)) => format!("json {m:?}"),
            Ok(StreamableHttpPostResponse::Sse(s, _)) => events(s).await,
            Ok(StreamableHttpPostResponse::Accepted) => "accepted".to_owned(),
            Ok(_) => "something else".to_owned(),
            Err(e) => format!("{e:?}"),
        }
    }

    /// The requests `seen` since the last look.
    fn taken(seen: &Seen) -> Vec<(Vec<String>, Vec<u8>)> {
        std::mem::take(&mut *seen.lock().expect("the requests"))
    }

    #[tokio::test]
    async fn every_answer_to_a_call_is_read_as_rmcps_client_reads_it() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let port = listener.local_addr().expect("an address").port();
        let requests = Seen::default();
        tokio::spawn(serve(listener, requests.clone()));
        // The gateway's own client, with its redirect rule, on both sides.
        let http = crate::mcp::http::pooled_client().expect("a client");
        let message = ClientJsonRpcMessage::request(
            ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new(
                "echo",
            ))),
            NumberOrString::String(Arc::from("c-1")),
        );
        let body = serde_json::to_vec(&message).expect("a request");
        // A connector's own `Content-Type` replaces the POST's, as rmcp
        // leaves it.
        let headers: HashMap<HeaderName, HeaderValue> = [
            (
                HeaderName::from_static("x-tenant"),
                HeaderValue::from_static("t"),
            ),
            (
                CONTENT_TYPE,
                HeaderValue::from_static("application/json; charset=utf-8"),
            ),
        ]
        .into();
        let mut seen = std::collections::BTreeSet::new();
        let mut redirect_refused = false;
        for n in 0..answers().len() {
            let uri = format!("http://127.0.0.1:{port}/{n}");
            let target = Target {
                url: reqwest::Url::parse(&uri).expect("a URL"),
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                limits: limits(),
            };
            for session in [Some("s-1"), None] {
                let rmcp = theirs(
                    http.post_message_with_response_limits(
                        Arc::from(uri.as_str()),
                        message.clone(),
                        session.map(Arc::from),
                        None,
                        headers.clone(),
                        limits(),
                    )
                    .await,
                )
                .await;
                let rmcp_sent = taken(&requests);
                let mine = ours(target.post(&http, body.clone(), session).await).await;
                let case = format!("answer {n} ({:?}), session {session:?}", answers()[n]);
                assert_eq!(mine, rmcp, "{case}");
                assert_eq!(taken(&requests), rmcp_sent, "the requests sent, {case}");
                seen.insert(mine.split([' ', '(', '{']).next().map(str::to_owned));
                redirect_refused |= mine.contains("kind: Redirect");
            }
        }
        // The cases reach every way an answer can be read.
        for kind in [
            "json",
            "events",
            "accepted",
            "SessionExpired",
            "AuthRequired",
            "InsufficientScope",
            "HttpStatus",
            "UnexpectedServerResponse",
            "ResponseBodyTooLarge",
            "UnexpectedContentType",
        ] {
            assert!(
                seen.contains(&Some(kind.to_owned())),
                "no case read as {kind}: {seen:?}"
            );
        }
        assert!(redirect_refused, "no redirect loop was refused");
    }

    #[tokio::test]
    async fn an_event_over_the_limit_is_told_from_a_broken_stream() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let port = listener.local_addr().expect("an address").port();
        tokio::spawn(serve(listener, Seen::default()));
        let http = reqwest::Client::new();
        let first_error = |n: usize| {
            let http = http.clone();
            async move {
                let url = format!("http://127.0.0.1:{port}/{n}");
                let target = Target {
                    url: reqwest::Url::parse(&url).expect("a URL"),
                    headers: HeaderMap::new(),
                    limits: limits(),
                };
                let Ok(Posted::Stream(stream)) = target.post(&http, b"{}".to_vec(), None).await
                else {
                    panic!("answer {n} is not an event stream");
                };
                let mut errors = std::pin::pin!(stream.filter_map(|e| std::future::ready(e.err())));
                errors.next().await.expect("an error")
            }
        };
        let (mut over, mut cut) = (None, None);
        for (n, ((status, headers, body), framing)) in answers().iter().enumerate() {
            let stream = *status == 200 && headers.contains(&("content-type", "text/event-stream"));
            match framing {
                Framing::Length if stream && body.split(|b| *b == b'\n').any(|l| l.len() > 64) => {
                    over = Some(n)
                }
                Framing::Short if stream => cut = Some(n),
                _ => {}
            }
        }
        let over = first_error(over.expect("an oversized event")).await;
        assert!(is_event_too_large(&over), "{over}");
        let cut = first_error(cut.expect("a stream cut short")).await;
        assert!(!is_event_too_large(&cut), "{cut}");
    }
}
