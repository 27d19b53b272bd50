//! JSON-RPC framing around rmcp's streamable HTTP service at `/mcp`.
//!
//! rmcp answers a body it cannot read as a JSON-RPC message with HTTP 415
//! and a line of plain text, and it has no batches. This layer reads the
//! body once (bounded by `server.max_request_bytes`) and then:
//! - a body that is not JSON is HTTP 400 with a JSON-RPC parse error
//!   (-32700), and JSON that is not a JSON-RPC message is HTTP 400 with an
//!   invalid-request error (-32600) carrying the message's `id` when it has
//!   one, as the streamable HTTP transport asks;
//! - an array is a batch. Protocol versions 2024-11-05 and 2025-03-26 (also
//!   assumed when the client sends no `MCP-Protocol-Version`) have batches:
//!   each message goes through rmcp on its own, with the request's headers,
//!   and the answers come back as one array in the order sent (HTTP 202 when
//!   nothing in it expects an answer). Later versions removed batches, so
//!   there an array is an invalid request.
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
//! Must never: answer a message twice, or let a batch bypass a check that a
//! single message meets (each element is a full request through rmcp).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderValue, Method, Request, Response, StatusCode, header};
use futures::StreamExt;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tower::Service;

/// Versions whose streamable HTTP transport carries batches.
const BATCH_VERSIONS: [&str; 2] = ["2024-11-05", "2025-03-26"];

/// Elements of one batch in flight at once through rmcp.
const BATCH_CONCURRENCY: usize = 16;

/// The `/mcp` service: rmcp's, with the framing above.
#[derive(Clone)]
pub(crate) struct Framing<S> {
    inner: S,
    max_body: usize,
}

impl<S> Framing<S> {
    pub(crate) fn new(inner: S, max_body: usize) -> Self {
        Self { inner, max_body }
    }
}

impl<S, B> Service<Request<Body>> for Framing<S>
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Each call clones the inner service, which is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let inner = self.inner.clone();
        let max_body = self.max_body;
        Box::pin(async move { Ok(frame(inner, max_body, request).await) })
    }
}

async fn frame<S, B>(inner: S, max_body: usize, request: Request<Body>) -> Response<Body>
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible> + Clone,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    if request.method() != Method::POST {
        return forward(inner, request).await;
    }
    let mut request = request;
    let accepts = Accepts::of(request.headers());
    if !(accepts.json || accepts.sse) {
        // Nothing we answer could be read.
        return plain(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: the client must accept application/json or text/event-stream".into(),
        );
    }
    // One of the two is enough: rmcp insists on both, but an answer here
    // is one JSON message, which either form carries.
    request.headers_mut().insert(
        header::ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    let response = frame_post(inner, max_body, request).await;
    if accepts.json {
        return response;
    }
    as_event_stream(response).await
}

async fn frame_post<S, B>(inner: S, max_body: usize, request: Request<Body>) -> Response<Body>
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible> + Clone,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    // rmcp refuses any other content type with 415, which stands.
    let json_body = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        });
    if !json_body {
        return forward(inner, request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, max_body).await else {
        // Over the bound, or a broken upload: rmcp's own answer for both.
        return plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Payload Too Large: request body exceeds {max_body} bytes"),
        );
    };
    if first_byte(&bytes) == Some(b'[') {
        return batch(inner, parts, bytes).await;
    }
    let response = forward(inner, Request::from_parts(parts, Body::from(bytes.clone()))).await;
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
        && let Some(error) = unreadable(&bytes)
    {
        return error;
    }
    if response.status() == StatusCode::BAD_REQUEST && !is_json(&response) {
        // rmcp's plain-text refusals of a message (an unsupported
        // `MCP-Protocol-Version`, say): the same words as a JSON-RPC error.
        let id = serde_json::from_slice::<Value>(&bytes)
            .map(|v| id_of(&v))
            .unwrap_or(Value::Null);
        let text = axum::body::to_bytes(response.into_body(), 64 * 1024)
            .await
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_else(|_| "Bad Request".into());
        return error_response(id, -32600, &text);
    }
    response
}

fn is_json(response: &Response<Body>) -> bool {
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

async fn forward<S, B>(mut inner: S, request: Request<Body>) -> Response<Body>
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
fn unreadable(bytes: &[u8]) -> Option<Response<Body>> {
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
fn id_of(value: &Value) -> Value {
    match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    }
}

async fn batch<S, B>(inner: S, parts: axum::http::request::Parts, bytes: Bytes) -> Response<Body>
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible> + Clone,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    let version = parts
        .headers
        .get("mcp-protocol-version")
        .map(|v| v.to_str().unwrap_or("(not text)"));
    if let Some(v) = version
        && !BATCH_VERSIONS.contains(&v)
    {
        return invalid_request(
            Value::Null,
            &format!(
                "JSON-RPC batches are not part of MCP protocol version {v}; send one message per request"
            ),
        );
    }
    // Read once as a whole, under serde_json's nesting limit (raw elements
    // are not held to it): a body too deep to read is one parse error.
    if let Err(e) = serde_json::from_slice::<Value>(&bytes) {
        return parse_error(&e);
    }
    let elements: Vec<&RawValue> = match serde_json::from_slice(&bytes) {
        Ok(elements) => elements,
        Err(e) => return parse_error(&e),
    };
    if elements.is_empty() {
        return invalid_request(Value::Null, "an empty batch has nothing to answer");
    }
    let pending: Vec<_> = elements
        .iter()
        .map(|element| {
            let request = element_request(&parts, element.get());
            let inner = inner.clone();
            let text = element.get();
            async move {
                if let Some(id) = initialize_id(text) {
                    // MCP: initialize must not be part of a batch.
                    let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600,
                        "message": "Invalid Request: initialize must not be part of a JSON-RPC batch"}});
                    return Ok(Some(error));
                }
                element_answer(forward(inner, request).await, text).await
            }
        })
        .collect();
    let answers: Vec<Result<Option<Value>, Response<Body>>> = futures::stream::iter(pending)
        .buffered(BATCH_CONCURRENCY)
        .collect()
        .await;
    let mut out = Vec::with_capacity(answers.len());
    for answer in answers {
        match answer {
            Ok(Some(value)) => out.push(value),
            Ok(None) => {}
            // The request itself was refused (Host, Origin, Accept): the same
            // answer for the batch as for one message.
            Err(response) => return response,
        }
    }
    if out.is_empty() {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::ACCEPTED;
        return r;
    }
    json_response(StatusCode::OK, &Value::Array(out))
}

fn element_request(parts: &axum::http::request::Parts, text: &str) -> Request<Body> {
    let mut request = Request::new(Body::from(text.to_owned()));
    *request.method_mut() = parts.method.clone();
    *request.uri_mut() = parts.uri.clone();
    *request.version_mut() = parts.version;
    let headers = request.headers_mut();
    *headers = parts.headers.clone();
    headers.remove(header::CONTENT_LENGTH);
    // Headers that mirror one message's method and params describe no
    // element of an array.
    let mirrored: Vec<_> = headers
        .keys()
        .filter(|k| {
            let k = k.as_str();
            k == "mcp-method" || k == "mcp-name" || k.starts_with("mcp-param-")
        })
        .cloned()
        .collect();
    for k in mirrored {
        headers.remove(k);
    }
    *request.extensions_mut() = parts.extensions.clone();
    request
}

/// One element's part of the batch answer: its JSON-RPC response, nothing
/// for a notification or response, or `Err` with a refusal of the whole
/// request.
async fn element_answer(
    response: Response<Body>,
    text: &str,
) -> Result<Option<Value>, Response<Body>> {
    let status = response.status();
    if status == StatusCode::ACCEPTED {
        return Ok(None);
    }
    if status == StatusCode::UNSUPPORTED_MEDIA_TYPE
        && let Some(error) = unreadable(text.as_bytes())
    {
        let value = body_json(error).await;
        return Ok(value);
    }
    if status == StatusCode::BAD_REQUEST && is_json(&response) {
        // A JSON-RPC error about this element (a response posted to a
        // stateless server, say): its place in the array, id or not.
        let mut error = body_json(response).await;
        if let Some(Value::Object(e)) = &mut error {
            e.entry("id").or_insert(Value::Null);
        }
        return Ok(error);
    }
    if status != StatusCode::OK {
        return Err(response);
    }
    Ok(body_json(response).await)
}

/// The id of an `initialize` request, when `text` is one.
fn initialize_id(text: &str) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Peek {
        method: Option<String>,
        id: Option<Value>,
    }
    let peek: Peek = serde_json::from_str(text).ok()?;
    (peek.method.as_deref() == Some("initialize")).then(|| peek.id.unwrap_or(Value::Null))
}

async fn body_json(response: Response<Body>) -> Option<Value> {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn first_byte(bytes: &[u8]) -> Option<u8> {
    bytes.iter().copied().find(|b| !b.is_ascii_whitespace())
}

fn parse_error(e: &serde_json::Error) -> Response<Body> {
    error_response(
        Value::Null,
        -32700,
        &format!("Parse error: the body is not JSON ({e})"),
    )
}

fn invalid_request(id: Value, message: &str) -> Response<Body> {
    error_response(id, -32600, &format!("Invalid Request: {message}"))
}

fn error_response(id: Value, code: i64, message: &str) -> Response<Body> {
    json_response(
        StatusCode::BAD_REQUEST,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    )
}

fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let mut r = Response::new(Body::from(value.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
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
