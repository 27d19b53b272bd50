//! JSON-RPC batches at `/mcp` (protocol versions 2024-11-05 and 2025-03-26,
//! also assumed when the client sends no `MCP-Protocol-Version`; later
//! versions removed batches, so there an array is an invalid request).
//!
//! Each message goes through rmcp on its own, with the request's headers,
//! after its own admission (one slot per message running, at most
//! [`BATCH_CONCURRENCY`] of one batch at a time), and the answers come back
//! as one array in the order sent (HTTP 202 when nothing in it expects an
//! answer). Bounds keep a batch's memory small whatever it carries:
//! - more than `server.max_batch_messages` messages: the batch is refused
//!   before any of it runs (the count stops at the first one over);
//! - once its answers pass `server.max_batch_answer_bytes`, the requests
//!   not yet started are not run and answer an error each (notifications,
//!   which answer nothing, still run);
//! - answers are kept as the bytes rmcp wrote, never as parsed trees.
//!
//! Must never: run a message it then answers as refused, or answer one
//! twice.

use std::cell::Cell;
use std::convert::Infallible;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{Request, Response, StatusCode, header};
use futures::StreamExt;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tower::Service;

use crate::admission::RequestAdmission;
use crate::framing::{
    FramingLimits, body_json, forward, invalid_request, is_json, parse_error, unreadable,
};

/// Versions whose streamable HTTP transport carries batches.
const BATCH_VERSIONS: [&str; 2] = ["2024-11-05", "2025-03-26"];

/// Messages of one batch in flight at once through rmcp.
pub(crate) const BATCH_CONCURRENCY: usize = 16;

/// serde_json's own nesting limit (it reads 127 levels, not 128): a body
/// nested deeper is not JSON it would read, so it is one parse error for
/// the whole batch.
pub(crate) const MAX_DEPTH: usize = 127;

pub(crate) async fn batch<S, B>(
    inner: S,
    admission: &RequestAdmission,
    limits: FramingLimits,
    parts: axum::http::request::Parts,
    bytes: Bytes,
) -> (Response<Body>, usize)
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible> + Clone,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    let elements = match elements_of(&parts, &bytes, limits) {
        Ok(elements) => elements,
        Err(refusal) => return (refusal, 0),
    };
    let budget = Budget {
        used: AtomicUsize::new(0),
        max: limits.max_batch_answer_bytes,
        overloaded: AtomicBool::new(false),
    };
    let (parts, texts) = (&parts, &elements);
    let budget_ref = &budget;
    // By index: a closure over borrowed elements would need a lifetime
    // the stream cannot name.
    let answers: Vec<Result<Option<Bytes>, Response<Body>>> = futures::stream::iter(0..texts.len())
        .map(move |i| {
            let inner = inner.clone();
            let text = texts[i].get();
            run_element(inner, admission, budget_ref, text, move || {
                element_request(parts, text)
            })
        })
        .buffered(BATCH_CONCURRENCY)
        .collect()
        .await;
    let mut out: Vec<Bytes> = Vec::with_capacity(answers.len());
    for answer in answers {
        match answer {
            Ok(Some(bytes)) => out.push(bytes),
            Ok(None) => {}
            // The request itself was refused (Host, Origin, Accept): the same
            // answer for the batch as for one message.
            Err(response) => return (response, budget.used.into_inner()),
        }
    }
    if out.is_empty() {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::ACCEPTED;
        return (r, budget.used.into_inner());
    }
    let mut body = Vec::with_capacity(out.iter().map(|b| b.len() + 1).sum::<usize>() + 1);
    body.push(b'[');
    for (i, answer) in out.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(answer);
    }
    body.push(b']');
    drop(out);
    let mut r = Response::new(Body::from(body));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    (r, budget.used.into_inner())
}

/// The batch's messages, or the answer that refuses the whole batch.
fn elements_of<'b>(
    parts: &axum::http::request::Parts,
    bytes: &'b [u8],
    limits: FramingLimits,
) -> Result<Vec<&'b RawValue>, Response<Body>> {
    let version = parts
        .headers
        .get("mcp-protocol-version")
        .map(|v| v.to_str().unwrap_or("(not text)"));
    if let Some(v) = version
        && !BATCH_VERSIONS.contains(&v)
    {
        return Err(invalid_request(
            Value::Null,
            &format!(
                "JSON-RPC batches are not part of MCP protocol version {v}; send one message per request"
            ),
        ));
    }
    let elements = match split(bytes, limits.max_batch_messages) {
        Ok(elements) => elements,
        Err(Split::NotJson(e)) => return Err(parse_error(&e)),
        Err(Split::TooDeep) => {
            return Err(crate::framing::error_response(
                Value::Null,
                -32700,
                &format!("Parse error: the body is nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        Err(Split::TooMany) => {
            return Err(invalid_request(
                Value::Null,
                &format!(
                    "a batch may carry at most {} messages (server.max_batch_messages); send fewer per request",
                    limits.max_batch_messages
                ),
            ));
        }
    };
    if elements.is_empty() {
        return Err(invalid_request(
            Value::Null,
            "an empty batch has nothing to answer",
        ));
    }
    Ok(elements)
}

/// What one batch has spent.
struct Budget {
    /// Bytes of answers gathered so far.
    used: AtomicUsize,
    max: usize,
    /// A message found no slot: the ones after it do not wait again.
    overloaded: AtomicBool,
}

async fn run_element<S, B>(
    inner: S,
    admission: &RequestAdmission,
    budget: &Budget,
    text: &str,
    request: impl FnOnce() -> Request<Body>,
) -> Result<Option<Bytes>, Response<Body>>
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible>,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    let peek = Peek::of(text);
    if peek.is_initialize {
        // MCP: initialize must not be part of a batch.
        return Ok(Some(error_bytes(
            &peek.id,
            -32600,
            "Invalid Request: initialize must not be part of a JSON-RPC batch",
            None,
        )));
    }
    if peek.expects_answer && budget.used.load(Ordering::Acquire) >= budget.max {
        return Ok(Some(error_bytes(
            &peek.id,
            -32000,
            &format!(
                "not run: this batch's answers passed {} bytes (server.max_batch_answer_bytes); send this message again on its own",
                budget.max
            ),
            Some(json!({"code": "result_too_large", "retryable": true})),
        )));
    }
    if budget.overloaded.load(Ordering::Acquire) {
        return Ok(Some(overloaded_bytes(admission, &peek.id)));
    }
    let Ok(slot) = admission.admit_one().await else {
        budget.overloaded.store(true, Ordering::Release);
        return Ok(Some(overloaded_bytes(admission, &peek.id)));
    };
    let response = forward(inner, request()).await;
    let answer = element_answer(response, text).await;
    drop(slot);
    if let Ok(Some(bytes)) = &answer {
        budget.used.fetch_add(bytes.len(), Ordering::AcqRel);
    }
    answer
}

fn overloaded_bytes(admission: &RequestAdmission, id: &Value) -> Bytes {
    Bytes::from(admission.overloaded_error(id.clone()).to_string())
}

fn error_bytes(id: &Value, code: i64, message: &str, data: Option<Value>) -> Bytes {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    Bytes::from(json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string())
}

/// Why a body could not be split into a batch's messages.
#[derive(Debug)]
pub(crate) enum Split {
    NotJson(serde_json::Error),
    TooDeep,
    TooMany,
}

/// The messages of a batch body, as the raw text of each, without reading
/// more than `max + 1` of them. The body is checked for JSON nesting first
/// (raw elements are not held to serde_json's limit).
pub(crate) fn split(bytes: &[u8], max: usize) -> Result<Vec<&RawValue>, Split> {
    if depth(bytes) > MAX_DEPTH {
        return Err(Split::TooDeep);
    }
    let over = Cell::new(false);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let elements = match de.deserialize_seq(Bounded { max, over: &over }) {
        Ok(elements) => elements,
        Err(_) if over.get() => return Err(Split::TooMany),
        Err(e) => return Err(Split::NotJson(e)),
    };
    de.end().map_err(Split::NotJson)?;
    Ok(elements)
}

/// Reads at most `max` elements; one more sets `over` and stops the read.
struct Bounded<'a> {
    max: usize,
    over: &'a Cell<bool>,
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Vec<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(element) = seq.next_element::<&'de RawValue>()? {
            if out.len() == self.max {
                self.over.set(true);
                return Err(serde::de::Error::custom("too many batch elements"));
            }
            out.push(element);
        }
        Ok(out)
    }
}

/// The deepest nesting of arrays and objects in `bytes`, read as JSON text
/// (brackets inside strings do not count). Stops counting past
/// [`MAX_DEPTH`].
pub(crate) fn depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > MAX_DEPTH {
                    return deepest;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// What the batch needs to know of one message before running it.
struct Peek {
    id: Value,
    is_initialize: bool,
    /// A request (it has a method and an id): it has an answer to gather.
    expects_answer: bool,
}

impl Peek {
    fn of(text: &str) -> Peek {
        #[derive(serde::Deserialize)]
        struct Fields<'a> {
            #[serde(borrow)]
            method: Option<&'a RawValue>,
            #[serde(borrow)]
            id: Option<&'a RawValue>,
        }
        let Ok(f) = serde_json::from_str::<Fields<'_>>(text) else {
            // Not a message: rmcp answers it (an error, which is small).
            return Peek {
                id: Value::Null,
                is_initialize: false,
                expects_answer: true,
            };
        };
        let id = match f.id.map(|raw| serde_json::from_str::<Value>(raw.get())) {
            Some(Ok(id @ (Value::String(_) | Value::Number(_)))) => id,
            _ => Value::Null,
        };
        let method = f
            .method
            .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok());
        Peek {
            is_initialize: method.as_deref() == Some("initialize"),
            expects_answer: f.id.is_some() || method.is_none(),
            id,
        }
    }
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

/// One element's part of the batch answer: its JSON-RPC response as rmcp
/// wrote it, nothing for a notification or response, or `Err` with a
/// refusal of the whole request.
async fn element_answer(
    response: Response<Body>,
    text: &str,
) -> Result<Option<Bytes>, Response<Body>> {
    let status = response.status();
    if status == StatusCode::ACCEPTED {
        return Ok(None);
    }
    if status == StatusCode::UNSUPPORTED_MEDIA_TYPE
        && let Some(error) = unreadable(text.as_bytes())
    {
        return Ok(body_bytes(error).await);
    }
    if status == StatusCode::BAD_REQUEST && is_json(&response) {
        // A JSON-RPC error about this element (a response posted to a
        // stateless server, say): its place in the array, id or not.
        let mut error = body_json(response).await;
        if let Some(Value::Object(e)) = &mut error {
            e.entry("id").or_insert(Value::Null);
        }
        return Ok(error.map(|e| Bytes::from(e.to_string())));
    }
    if status != StatusCode::OK {
        return Err(response);
    }
    Ok(body_bytes(response).await)
}

/// A JSON answer's bytes, trimmed; `None` when it is not JSON.
async fn body_bytes(response: Response<Body>) -> Option<Bytes> {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .ok()?;
    serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).ok()?;
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    let end = bytes.iter().rposition(|b| !b.is_ascii_whitespace())? + 1;
    Some(bytes.slice(start..end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_split_without_reading_past_its_bound() {
        let ok = split(br#"[{"id":1}, 2, "x"]"#, 3).expect("three fit");
        assert_eq!(ok.len(), 3);
        assert!(matches!(split(b"[1,2,3,4]", 3), Err(Split::TooMany)));
        assert!(matches!(split(b"[1,2", 3), Err(Split::NotJson(_))));
        assert!(matches!(split(b"[1] x", 3), Err(Split::NotJson(_))));
        let deep = format!("[{}{}]", "[".repeat(200), "]".repeat(200));
        assert!(matches!(split(deep.as_bytes(), 3), Err(Split::TooDeep)));
    }

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        assert_eq!(depth(br#"[{"a": "[[[\"[["}]"#), 2);
        assert_eq!(depth(b"1"), 0);
        assert_eq!(depth(br#"["\\", [1]]"#), 2);
    }

    #[test]
    fn a_message_s_id_and_kind_are_read_without_running_it() {
        let p = Peek::of(r#"{"jsonrpc":"2.0","id":3,"method":"initialize"}"#);
        assert!(p.is_initialize && p.expects_answer);
        assert_eq!(p.id, json!(3));
        let n = Peek::of(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(!n.expects_answer);
        let odd = Peek::of(r#"{"id":{"x":1},"method":"ping"}"#);
        assert_eq!(odd.id, Value::Null);
        assert!(Peek::of("7").expects_answer);
    }
}
