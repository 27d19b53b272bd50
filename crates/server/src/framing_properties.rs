//! Property tests of the request framing (`framing.rs`, `batch.rs`,
//! `stdio_framing.rs`), and the checked-in corpus of hostile inputs in
//! `crates/server/corpus/`.
//!
//! rmcp stands behind framing in the binary; here a stub answers each
//! message the way rmcp does (a request with its id, a notification with
//! 202, what it cannot read with 415, a posted response with a JSON 400),
//! so the properties are about framing alone. The binary's own behaviour is
//! tested end to end in `crates/connecta/tests`.
//!
//! The budget is small and bounded: `PROPTEST_CASES` cases per property
//! (256 unless set), and at most five seconds of shrinking on a failure.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{Request, Response, StatusCode};
use proptest::prelude::*;
use serde_json::{Value, json};
use tower::{Service, ServiceExt};

use crate::admission::RequestAdmission;
use crate::batch::{BATCH_CONCURRENCY, MAX_DEPTH, depth};
use crate::framing::{Framing, FramingLimits, peek_id};

/// `PROPTEST_CASES` cases (proptest's default reads it; 256 unset).
fn config() -> ProptestConfig {
    ProptestConfig {
        max_shrink_time: 5_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Answers like rmcp does, counting the messages it was given and how
/// often it was cloned.
#[derive(Default)]
struct Stub {
    calls: Arc<AtomicUsize>,
    clones: Arc<AtomicUsize>,
    /// Bytes of padding in each result, to size answers.
    pad: usize,
}

impl Clone for Stub {
    fn clone(&self) -> Self {
        self.clones.fetch_add(1, Ordering::SeqCst);
        Stub {
            calls: self.calls.clone(),
            clones: self.clones.clone(),
            pad: self.pad,
        }
    }
}

impl Service<Request<Body>> for Stub {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let (calls, pad) = (self.calls.clone(), self.pad);
        Box::pin(async move {
            calls.fetch_add(1, Ordering::SeqCst);
            let bytes = axum::body::to_bytes(request.into_body(), usize::MAX)
                .await
                .unwrap_or_default();
            Ok(stub_answer(&bytes, pad))
        })
    }
}

fn stub_answer(bytes: &[u8], pad: usize) -> Response<Body> {
    let reply = |status: StatusCode, ct: &'static str, body: String| {
        let mut r = Response::new(Body::from(body));
        *r.status_mut() = status;
        r.headers_mut().insert(
            axum::http::header::CONTENT_TYPE,
            axum::http::HeaderValue::from_static(ct),
        );
        r
    };
    let unreadable = || reply(StatusCode::UNSUPPORTED_MEDIA_TYPE, "text/plain", "x".into());
    let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(bytes) else {
        return unreadable();
    };
    if m.get("jsonrpc") != Some(&json!("2.0")) {
        return unreadable();
    }
    let id = m.get("id");
    let id_ok = matches!(id, Some(Value::String(_) | Value::Number(_)));
    match (m.get("method"), id) {
        (Some(Value::String(method)), Some(_)) if id_ok => reply(
            StatusCode::OK,
            "application/json",
            json!({"jsonrpc": "2.0", "id": id, "result": {"method": method, "pad": "p".repeat(pad)}})
                .to_string(),
        ),
        (Some(Value::String(_)), None) => reply(StatusCode::ACCEPTED, "text/plain", String::new()),
        (None, Some(_)) if m.contains_key("result") || m.contains_key("error") => reply(
            StatusCode::BAD_REQUEST,
            "application/json",
            json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "a response"}})
                .to_string(),
        ),
        _ => unreadable(),
    }
}

fn limits(max_batch_messages: usize, max_batch_answer_bytes: usize) -> FramingLimits {
    FramingLimits {
        max_body: 4 << 20,
        body_timeout: Duration::from_secs(5),
        max_batch_messages,
        max_batch_answer_bytes,
    }
}

/// Frame `body` (POSTed as JSON under 2025-03-26); the answer, its body,
/// and how many messages reached the stub.
fn frame(body: Vec<u8>, limits: FramingLimits, pad: usize) -> (StatusCode, Bytes, usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let calls = Arc::new(AtomicUsize::new(0));
        let stub = Stub {
            calls: calls.clone(),
            pad,
            ..Stub::default()
        };
        let response = framed(stub, limits)
            .oneshot(post(body))
            .await
            .expect("infallible");
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("body");
        (status, bytes, calls.load(Ordering::SeqCst))
    })
}

fn framed(stub: Stub, limits: FramingLimits) -> Framing<Stub> {
    let admission = Arc::new(RequestAdmission::new(4, 8, Duration::from_secs(5)));
    Framing::new(stub, admission, limits, None, None)
}

/// `body` POSTed as JSON under 2025-03-26.
fn post(body: impl Into<Body>) -> Request<Body> {
    Request::post("/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-03-26")
        .body(body.into())
        .expect("request")
}

/// The framing is cloned for each request; rmcp's service behind it (which
/// copies its configuration when cloned) only for a message forwarded to it.
#[tokio::test]
async fn a_request_clones_the_framing_without_rmcps_service_and_a_forwarded_message_once() {
    let stub = Stub::default();
    let (calls, clones) = (stub.calls.clone(), stub.clones.clone());
    let mut framing = framed(stub, limits(8, 1 << 20));
    // `Service::call` clones the framing (the future is dropped unpolled:
    // only the clone is of interest here).
    drop(framing.call(Request::get("/mcp").body(Body::empty()).expect("request")));
    for _ in 0..10 {
        drop(framing.clone());
    }
    assert_eq!(clones.load(Ordering::SeqCst), 0);
    let answer = framing
        .clone()
        .oneshot(post(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ))
        .await
        .expect("infallible");
    assert_eq!(answer.status(), StatusCode::ACCEPTED);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(clones.load(Ordering::SeqCst), 1);
}

/// One message of a generated batch, and what its answer must be.
#[derive(Debug, Clone)]
enum Msg {
    Request(String),
    Notification(String),
    Initialize,
    /// JSON that is not a JSON-RPC message.
    Garbage(Value),
    /// A response posted to the server.
    Response,
}

fn msg() -> impl Strategy<Value = Msg> {
    prop_oneof![
        4 => "[a-z/]{1,12}".prop_map(Msg::Request),
        2 => "[a-z/]{1,12}".prop_map(Msg::Notification),
        1 => Just(Msg::Initialize),
        1 => json_value().prop_filter("not an object", |v| !v.is_object()).prop_map(Msg::Garbage),
        1 => Just(Msg::Response),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[ -~\\[\\]{}\"\\\\]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The batch text for `msgs`; requests get ids 0, 1, 2… in order.
fn batch_text(msgs: &[Msg]) -> String {
    let items: Vec<String> = msgs
        .iter()
        .enumerate()
        .map(|(i, m)| match m {
            Msg::Request(method) => {
                json!({"jsonrpc": "2.0", "id": i, "method": method}).to_string()
            }
            Msg::Notification(method) => {
                json!({"jsonrpc": "2.0", "method": format!("notifications/{method}")}).to_string()
            }
            Msg::Initialize => {
                json!({"jsonrpc": "2.0", "id": i, "method": "initialize", "params": {}}).to_string()
            }
            Msg::Garbage(v) => v.to_string(),
            Msg::Response => json!({"jsonrpc": "2.0", "id": i, "result": {}}).to_string(),
        })
        .collect();
    format!("[{}]", items.join(","))
}

fn is_error_with(answer: &Value, code: i64, id: &Value) -> bool {
    answer["jsonrpc"] == "2.0" && answer["error"]["code"] == code && &answer["id"] == id
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_body_gets_one_well_formed_answer(
        body in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..256),
            json_value().prop_map(|v| v.to_string().into_bytes()),
            prop::collection::vec(msg(), 0..8).prop_map(|m| batch_text(&m).into_bytes()),
        ]
    ) {
        let (status, bytes, _) = frame(body, limits(100, 1 << 20), 0);
        prop_assert!(
            [200, 202, 400, 415].contains(&status.as_u16()),
            "status {status}"
        );
        if status == StatusCode::BAD_REQUEST {
            let v: Value = serde_json::from_slice(&bytes).expect("a 400 is a JSON-RPC error");
            prop_assert_eq!(&v["jsonrpc"], "2.0");
            prop_assert!(v.as_object().is_some_and(|o| o.contains_key("id")));
            prop_assert!(matches!(v["id"], Value::Null | Value::String(_) | Value::Number(_)));
            prop_assert!([-32700, -32600].contains(&v["error"]["code"].as_i64().unwrap_or(0)));
        }
        if status == StatusCode::OK {
            prop_assert!(serde_json::from_slice::<Value>(&bytes).is_ok());
        }
    }

    #[test]
    fn a_batch_answers_each_request_once_in_order(msgs in prop::collection::vec(msg(), 1..40)) {
        let (status, bytes, calls) = frame(batch_text(&msgs).into_bytes(), limits(100, 1 << 20), 0);
        // Every message but initialize reaches rmcp, once.
        let run = msgs.iter().filter(|m| !matches!(m, Msg::Initialize)).count();
        prop_assert_eq!(calls, run);
        let expected: Vec<&Msg> = msgs
            .iter()
            .filter(|m| !matches!(m, Msg::Notification(_)))
            .collect();
        if expected.is_empty() {
            prop_assert_eq!(status, StatusCode::ACCEPTED);
            prop_assert!(bytes.is_empty());
            return Ok(());
        }
        prop_assert_eq!(status, StatusCode::OK);
        let answers: Vec<Value> = serde_json::from_slice(&bytes).expect("an array");
        prop_assert_eq!(answers.len(), expected.len());
        let ids: Vec<Value> = msgs
            .iter()
            .enumerate()
            .filter(|(_, m)| !matches!(m, Msg::Notification(_)))
            .map(|(i, _)| json!(i))
            .collect();
        for ((answer, m), id) in answers.iter().zip(&expected).zip(&ids) {
            let ok = match m {
                Msg::Request(method) => &answer["id"] == id && &answer["result"]["method"] == method,
                Msg::Initialize => is_error_with(answer, -32600, id),
                Msg::Garbage(_) | Msg::Response => {
                    is_error_with(answer, -32600, &Value::Null)
                }
                Msg::Notification(_) => false,
            };
            prop_assert!(ok, "{:?} answered {}", m, answer);
        }
    }

    #[test]
    fn a_batch_over_the_message_cap_runs_nothing(max in 1usize..20, extra in 1usize..20) {
        let msgs = vec![Msg::Request("ping".into()); max + extra];
        let (status, bytes, calls) = frame(batch_text(&msgs).into_bytes(), limits(max, 1 << 20), 0);
        prop_assert_eq!(status, StatusCode::BAD_REQUEST);
        prop_assert_eq!(calls, 0);
        let v: Value = serde_json::from_slice(&bytes).expect("error");
        prop_assert_eq!(&v["error"]["code"], -32600);
    }

    #[test]
    fn the_answer_budget_bounds_what_runs(
        n in 1usize..60,
        pad in 0usize..3000,
        budget in 1usize..40_000,
    ) {
        let msgs = vec![Msg::Request("tools/list".into()); n];
        let (status, bytes, calls) = frame(batch_text(&msgs).into_bytes(), limits(100, budget), pad);
        prop_assert_eq!(status, StatusCode::OK);
        let answers: Vec<Value> = serde_json::from_slice(&bytes).expect("an array");
        prop_assert_eq!(answers.len(), n, "every request is answered");
        let mut ran = 0;
        for (i, a) in answers.iter().enumerate() {
            prop_assert_eq!(&a["id"], &json!(i));
            if a["result"].is_object() {
                ran += 1;
            } else {
                prop_assert_eq!(&a["error"]["data"]["code"], "result_too_large");
            }
        }
        prop_assert_eq!(ran, calls, "only what ran has a result");
        // Once past the budget nothing new starts: at most the messages in
        // flight at that moment finish after it.
        let one = pad + 40;
        prop_assert!(calls <= budget.div_ceil(one) + BATCH_CONCURRENCY, "{calls} ran");
    }

    #[test]
    fn nesting_depth_is_read_as_serde_json_reads_it(
        levels in 0usize..200,
        noise in "[ -~\\[\\]{}\"\\\\]{0,8}",
        object in any::<bool>(),
    ) {
        let (open, close) = if object { ("{\"k\":", "}") } else { ("[", "]") };
        let inner = serde_json::to_string(&noise).expect("a string");
        let text = format!("{}{inner}{}", open.repeat(levels), close.repeat(levels));
        let parsed = serde_json::from_str::<Value>(&text).is_ok();
        prop_assert_eq!(depth(text.as_bytes()) <= MAX_DEPTH, parsed, "{} levels", levels);
    }

    #[test]
    fn only_a_top_level_string_or_number_id_is_read(id in json_value(), wrap in any::<bool>()) {
        let message = json!({"jsonrpc": "2.0", "id": id.clone(), "method": "ping"});
        let body = if wrap { json!([message]) } else { message };
        let read = peek_id(body.to_string().as_bytes());
        let expected = match (&id, wrap) {
            (Value::String(_) | Value::Number(_), false) => id.clone(),
            _ => Value::Null,
        };
        prop_assert_eq!(read, expected);
    }

    #[test]
    fn every_stdio_line_is_passed_on_or_answered_once(lines in prop::collection::vec(stdio_line(), 0..12)) {
        let input: String = lines.iter().map(|l| format!("{}\n", l.text)).collect();
        let (answered, passed) = stdio(input, 200);
        let messages: Vec<&str> = lines
            .iter()
            .filter(|l| l.kind == LineKind::Message)
            .map(|l| l.text.as_str())
            .collect();
        let passed: Vec<&str> = passed.lines().collect();
        prop_assert_eq!(passed, messages, "messages reach rmcp whole, in order");
        let refused = lines
            .iter()
            .filter(|l| matches!(l.kind, LineKind::NotJson | LineKind::NotMessage | LineKind::TooLong))
            .count();
        prop_assert_eq!(answered.len(), refused);
        let codes: Vec<i64> = answered.iter().map(|a| a["error"]["code"].as_i64().unwrap_or(0)).collect();
        let expected: Vec<i64> = lines
            .iter()
            .filter_map(|l| match l.kind {
                LineKind::NotJson => Some(-32700),
                LineKind::NotMessage | LineKind::TooLong => Some(-32600),
                _ => None,
            })
            .collect();
        prop_assert_eq!(codes, expected);
        for a in &answered {
            prop_assert!(a.as_object().is_some_and(|o| o.contains_key("id")));
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Message,
    Blank,
    NotJson,
    NotMessage,
    TooLong,
}

#[derive(Debug, Clone)]
struct StdioLine {
    text: String,
    kind: LineKind,
}

fn stdio_line() -> impl Strategy<Value = StdioLine> {
    let line = |kind: LineKind| move |text: String| StdioLine { text, kind };
    prop_oneof![
        3 => ("[a-z/]{1,10}", 0i64..1000).prop_map(|(m, id)| StdioLine {
            text: json!({"jsonrpc": "2.0", "id": id, "method": m}).to_string(),
            kind: LineKind::Message,
        }),
        1 => "[ \t]{0,3}".prop_map(line(LineKind::Blank)),
        1 => "[a-z]{1,10}\\{".prop_map(line(LineKind::NotJson)),
        1 => json_value()
            .prop_filter("short", |v| v.to_string().len() <= 200)
            .prop_filter("not a message", |v| {
                !(v["jsonrpc"] == "2.0" && (v["method"].is_string() || v.get("result").is_some() || v.get("error").is_some()))
            })
            .prop_map(|v| StdioLine { text: v.to_string(), kind: LineKind::NotMessage }),
        1 => "[a-z]{201,300}".prop_map(line(LineKind::TooLong)),
    ]
}

/// What `serve --stdio`'s framing answers to `input`, and what it passes
/// to rmcp.
fn stdio(input: String, max_line: usize) -> (Vec<Value>, String) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut client, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, mut client_out) = tokio::io::duplex(1 << 16);
        let framed = crate::stdio_framing::frame(server_in, server_out, max_line);
        client.write_all(input.as_bytes()).await.expect("write");
        drop(client);
        let mut passed = String::new();
        let mut to_rmcp = framed.to_rmcp;
        to_rmcp.read_to_string(&mut passed).await.expect("read");
        drop(framed.from_rmcp);
        framed.reader.await.expect("reader");
        framed.writer.await.expect("writer");
        let mut out = String::new();
        client_out.read_to_string(&mut out).await.expect("read");
        let answered = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("each answer is JSON"))
            .collect();
        (answered, passed)
    })
}

/// One case of `corpus/http.json`.
#[derive(serde::Deserialize)]
struct HttpCase {
    name: String,
    /// The body as text, or generated: `repeat` copies of `message` as a
    /// batch, or `nest` levels of arrays.
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    repeat: Option<(usize, Value)>,
    #[serde(default)]
    nest: Option<usize>,
    status: u16,
    #[serde(default)]
    code: Option<i64>,
    #[serde(default)]
    answers: Option<usize>,
    /// Messages that reach rmcp.
    runs: usize,
}

#[test]
fn the_corpus_of_hostile_bodies_is_answered_as_written_down() {
    let text = include_str!("../corpus/http.json");
    let cases: Vec<HttpCase> = serde_json::from_str(text).expect("corpus/http.json");
    assert!(cases.len() >= 10, "the corpus lost its cases");
    for case in cases {
        let body = match (&case.body, &case.repeat, case.nest) {
            (Some(b), None, None) => b.clone(),
            (None, Some((n, message)), None) => {
                let one = message.to_string();
                format!("[{}]", vec![one; *n].join(","))
            }
            (None, None, Some(n)) => format!("{}{}", "[".repeat(n), "]".repeat(n)),
            _ => panic!("{}: one of body, repeat, nest", case.name),
        };
        let (status, bytes, calls) = frame(body.into_bytes(), limits(100, 8 << 20), 0);
        assert_eq!(status.as_u16(), case.status, "{}", case.name);
        let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if let Some(code) = case.code {
            assert_eq!(v["error"]["code"], code, "{}: {v}", case.name);
        }
        assert_eq!(calls, case.runs, "{}", case.name);
        if let Some(n) = case.answers {
            assert_eq!(v.as_array().map(Vec::len), Some(n), "{}: {v}", case.name);
        }
    }
}
