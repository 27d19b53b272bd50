//! JSON-RPC framing around rmcp's streamable HTTP service at `/mcp`, and
//! the admission of what it carries.
//!
//! rmcp answers a body it cannot read as a JSON-RPC message with HTTP 415
//! and a line of plain text, and it has no batches. This layer reads the
//! body once, whole, bounded by `server.max_request_bytes` and by
//! `server.request_body_timeout_ms` (HTTP 408 past it) while the request
//! holds only a place in the admission queue, and then:
//! - a single message asks for an admission slot (HTTP 503 with the
//!   message's `id` when none comes in time) and goes to rmcp, or, when it
//!   is a plain `tools/call`, to the handler directly (`direct.rs`);
//! - a body that is not JSON is HTTP 400 with a JSON-RPC parse error
//!   (-32700), and JSON that is not a JSON-RPC message is HTTP 400 with an
//!   invalid-request error (-32600) carrying the message's `id` when it has
//!   one, as the streamable HTTP transport asks;
//! - an array is a batch (`batch.rs`): each message is admitted and goes
//!   through rmcp on its own.
//!
//! - an `Accept` that admits only one of `application/json` and
//!   `text/event-stream` (or is absent) is enough: rmcp wants both, but the
//!   answer is one JSON message, sent as an event stream of one event to a
//!   client that reads only that. An `Accept` admitting neither keeps
//!   rmcp's 406.
//!
//! Everything else reaches rmcp untouched, including its own checks of
//! `Host`, `Origin` and `Content-Type`.
//!
//! Must never: answer a message twice, let a batch bypass a check that a
//! single message meets (each element is a full request through rmcp), or
//! hold an admission slot while a body is still arriving.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderValue, Method, Request, Response, StatusCode, header};
use serde_json::{Value, json};
use tower::Service;

use crate::admission::RequestAdmission;
use crate::direct::DirectCalls;

/// A batch that gathered this many bytes of answers gives its memory back
/// to the system once answered.
const RELEASE_AFTER_BYTES: usize = 1 << 20;

/// The bounds framing applies, from `[server]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FramingLimits {
    pub max_body: usize,
    pub body_timeout: Duration,
    pub max_batch_messages: usize,
    pub max_batch_answer_bytes: usize,
}

impl FramingLimits {
    pub(crate) fn of(s: &connecta_core::config::ServerConfig) -> FramingLimits {
        FramingLimits {
            max_body: s.max_request_bytes,
            body_timeout: s.request_body_timeout,
            max_batch_messages: s.max_batch_messages,
            max_batch_answer_bytes: s.max_batch_answer_bytes,
        }
    }
}

/// The `/mcp` service: rmcp's, with the framing and admission above.
#[derive(Clone)]
pub(crate) struct Framing<S> {
    /// Shared, not cloned with the framing for each request: rmcp's service
    /// copies its configuration (the allowed hosts, one string each) when
    /// cloned, which only the requests it serves need.
    inner: Arc<S>,
    admission: Arc<RequestAdmission>,
    limits: FramingLimits,
    /// See `AppState::release_memory`.
    release_memory: Option<fn()>,
    /// Plain `tools/call` messages served without rmcp's per-request
    /// service (`direct.rs`); `None` sends every message to rmcp.
    direct: Option<DirectCalls>,
}

impl<S> Framing<S> {
    pub(crate) fn new(
        inner: S,
        admission: Arc<RequestAdmission>,
        limits: FramingLimits,
        release_memory: Option<fn()>,
        direct: Option<DirectCalls>,
    ) -> Self {
        Self {
            inner: Arc::new(inner),
            admission,
            limits,
            release_memory,
            direct,
        }
    }
}

impl<S, B> Service<Request<Body>> for Framing<S>
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Each request forwarded clones the inner service, which is always
        // ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let framing = self.clone();
        Box::pin(async move { Ok(framing.frame(request).await) })
    }
}

impl<S, B> Framing<S>
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    async fn frame(self, request: Request<Body>) -> Response<Body> {
        if request.method() != Method::POST {
            let Ok(_slot) = self.admission.admit_one().await else {
                return self.admission.overloaded(Value::Null);
            };
            return forward(S::clone(&self.inner), request).await;
        }
        let mut request = request;
        let accepts = Accepts::of(request.headers());
        if !(accepts.json || accepts.sse) {
            // Nothing we answer could be read.
            return plain(
                StatusCode::NOT_ACCEPTABLE,
                "Not Acceptable: the client must accept application/json or text/event-stream"
                    .into(),
            );
        }
        // One of the two is enough: rmcp insists on both, but an answer here
        // is one JSON message, which either form carries.
        request.headers_mut().insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        let response = self.frame_post(request).await;
        if accepts.json {
            return response;
        }
        as_event_stream(response).await
    }

    async fn frame_post(self, request: Request<Body>) -> Response<Body> {
        let Ok(pending) = self.admission.enter() else {
            return self.admission.overloaded(Value::Null);
        };
        let (parts, body) = request.into_parts();
        let bytes = match read_body(body, self.limits).await {
            Ok(bytes) => bytes,
            Err(refusal) => return refusal,
        };
        // rmcp refuses any other content type with 415, which stands.
        let json_body = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
                essence.trim().eq_ignore_ascii_case("application/json")
            });
        if json_body && first_byte(&bytes) == Some(b'[') {
            drop(pending);
            let (response, gathered) = crate::batch::batch(
                S::clone(&self.inner),
                &self.admission,
                self.limits,
                parts,
                bytes,
            )
            .await;
            if gathered >= RELEASE_AFTER_BYTES
                && let Some(release) = self.release_memory
            {
                // Off the async workers: it takes the allocator's locks.
                tokio::task::spawn_blocking(release);
            }
            return response;
        }
        let Ok(_slot) = self.admission.admit(pending).await else {
            return self.admission.overloaded(peek_id(&bytes));
        };
        if json_body
            && let Some(direct) = &self.direct
            && let Some((call, actor)) = direct.take(&parts, &bytes)
        {
            return direct.answer(call, actor).await;
        }
        let request = Request::from_parts(parts, Body::from(bytes.clone()));
        if !json_body {
            return forward(S::clone(&self.inner), request).await;
        }
        let response = forward(S::clone(&self.inner), request).await;
        if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
            && let Some(error) = unreadable(&bytes)
        {
            return error;
        }
        if response.status() == StatusCode::BAD_REQUEST && !is_json(&response) {
            // rmcp's plain-text refusals of a message (an unsupported
            // `MCP-Protocol-Version`, say): the same words as a JSON-RPC error.
            let text = axum::body::to_bytes(response.into_body(), 64 * 1024)
                .await
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_else(|_| "Bad Request".into());
            return error_response(peek_id(&bytes), -32600, &text);
        }
        if response.status() == StatusCode::BAD_REQUEST {
            // rmcp's JSON-RPC error about the message (a response posted to
            // this stateless server) has no `id`: it gets the message's
            // (`null` when it has none), as JSON-RPC wants one there.
            return with_id(response, peek_id(&bytes)).await;
        }
        response
    }
}

/// A JSON-RPC error answer given the `id` it lacks (and its status kept).
async fn with_id(response: Response<Body>, id: Value) -> Response<Body> {
    let status = response.status();
    let Some(Value::Object(mut error)) = body_json(response).await else {
        return error_response(id, -32600, "Invalid Request");
    };
    error.entry("id").or_insert(id);
    json_response(status, &Value::Object(error))
}

/// The whole body, within the size bound and the body deadline; otherwise
/// the answer that refuses it (413, or 408 with the connection closed).
async fn read_body(body: Body, limits: FramingLimits) -> Result<Bytes, Response<Body>> {
    let max = limits.max_body;
    match tokio::time::timeout(limits.body_timeout, axum::body::to_bytes(body, max)).await {
        Ok(Ok(bytes)) => Ok(bytes),
        // Over the bound, or a broken upload: rmcp's own answer for both.
        Ok(Err(_)) => Err(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Payload Too Large: request body exceeds {max} bytes"),
        )),
        Err(_) => {
            let mut r = error_response(
                Value::Null,
                -32600,
                &format!(
                    "Request Timeout: the body did not arrive within {} ms (server.request_body_timeout_ms)",
                    limits.body_timeout.as_millis()
                ),
            );
            *r.status_mut() = StatusCode::REQUEST_TIMEOUT;
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Err(r)
        }
    }
}

/// The `id` of a single message, when it is one JSON-RPC allows; `null`
/// otherwise (not JSON, a batch, no id). Only the top level is read.
pub(crate) fn peek_id(bytes: &[u8]) -> Value {
    if first_byte(bytes) != Some(b'{') {
        return Value::Null;
    }
    #[derive(serde::Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let Ok(peek) = serde_json::from_slice::<Peek<'_>>(bytes) else {
        return Value::Null;
    };
    match peek.id.map(|raw| serde_json::from_str::<Value>(raw.get())) {
        Some(Ok(id @ (Value::String(_) | Value::Number(_)))) => id,
        _ => Value::Null,
    }
}

pub(crate) fn is_json(response: &Response<Body>) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// Which answer forms the client's `Accept` admits. No header admits any
/// (RFC 9110 §12.5.1).
struct Accepts {
    json: bool,
    sse: bool,
}

impl Accepts {
    fn of(headers: &axum::http::HeaderMap) -> Accepts {
        let mut a = Accepts {
            json: false,
            sse: false,
        };
        let values: Vec<&str> = headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        if values.is_empty() {
            return Accepts {
                json: true,
                sse: true,
            };
        }
        for range in values.iter().flat_map(|v| v.split(',')) {
            let mut params = range.split(';');
            let media = params.next().unwrap_or("").trim().to_ascii_lowercase();
            // `q=0` means "not acceptable" (RFC 9110 §12.4.2).
            let refused = params.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            if refused {
                continue;
            }
            match media.as_str() {
                "*/*" => {
                    a.json = true;
                    a.sse = true;
                }
                "application/*" | "application/json" => a.json = true,
                "text/*" | "text/event-stream" => a.sse = true,
                _ => {}
            }
        }
        a
    }
}

/// A JSON answer re-sent as a one-event stream, for a client that reads
/// only `text/event-stream`. Anything else is passed on as it is.
async fn as_event_stream(response: Response<Body>) -> Response<Body> {
    if !is_json(&response) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the answer could not be read".into(),
        );
    };
    // Compact JSON has no raw line breaks, so it is one `data:` line.
    let mut event = Vec::with_capacity(bytes.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(&bytes);
    event.extend_from_slice(b"\n\n");
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Response::from_parts(parts, Body::from(event))
}

pub(crate) async fn forward<S, B>(mut inner: S, request: Request<Body>) -> Response<Body>
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible>,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    match inner.call(request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    }
}

/// A 415 from rmcp on a JSON content type means the body is not a
/// JSON-RPC message it can read: the JSON-RPC error for it.
pub(crate) fn unreadable(bytes: &[u8]) -> Option<Response<Body>> {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return Some(parse_error(&e)),
    };
    Some(invalid_request(
        id_of(&value),
        "the body is not a JSON-RPC 2.0 message (it needs \"jsonrpc\": \"2.0\", a string or integer id, a method and object or array params; or a result or error with an id)",
    ))
}

/// The message's `id` when it is one JSON-RPC allows, else `null`.
pub(crate) fn id_of(value: &Value) -> Value {
    match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    }
}

pub(crate) async fn body_json(response: Response<Body>) -> Option<Value> {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

pub(crate) fn first_byte(bytes: &[u8]) -> Option<u8> {
    bytes.iter().copied().find(|b| !b.is_ascii_whitespace())
}

pub(crate) fn parse_error(e: &serde_json::Error) -> Response<Body> {
    error_response(
        Value::Null,
        -32700,
        &format!("Parse error: the body is not JSON ({e})"),
    )
}

pub(crate) fn invalid_request(id: Value, message: &str) -> Response<Body> {
    error_response(id, -32600, &format!("Invalid Request: {message}"))
}

pub(crate) fn error_response(id: Value, code: i64, message: &str) -> Response<Body> {
    json_response(
        StatusCode::BAD_REQUEST,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    )
}

pub(crate) fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let mut r = Response::new(Body::from(value.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

pub(crate) fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut r = Response::new(Body::from(text));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_echoes_only_an_id_json_rpc_allows() {
        assert_eq!(id_of(&json!({"id": 5})), json!(5));
        assert_eq!(id_of(&json!({"id": "a"})), json!("a"));
        assert_eq!(id_of(&json!({"id": {"x": 1}})), Value::Null);
        assert_eq!(id_of(&json!([1])), Value::Null);
    }

    #[test]
    fn accept_admits_json_or_an_event_stream() {
        let of = |v: Option<&str>| {
            let mut h = axum::http::HeaderMap::new();
            if let Some(v) = v {
                h.insert(header::ACCEPT, HeaderValue::from_str(v).expect("header"));
            }
            let a = Accepts::of(&h);
            (a.json, a.sse)
        };
        assert_eq!(of(None), (true, true));
        assert_eq!(
            of(Some("application/json, text/event-stream")),
            (true, true)
        );
        assert_eq!(of(Some("*/*")), (true, true));
        assert_eq!(of(Some("Application/JSON;q=0.9")), (true, false));
        assert_eq!(of(Some("text/event-stream")), (false, true));
        assert_eq!(of(Some("text/html, image/png")), (false, false));
        assert_eq!(
            of(Some("application/json;q=0, text/event-stream")),
            (false, true)
        );
    }

    #[test]
    fn a_batch_is_recognised_past_leading_whitespace() {
        assert_eq!(first_byte(b" \n\t[{}]"), Some(b'['));
        assert_eq!(first_byte(b"{}"), Some(b'{'));
        assert_eq!(first_byte(b"  "), None);
    }
}
