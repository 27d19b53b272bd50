//! A small HTTP API standing in for a provider in the `api` connector tests
//! (an axum server on 127.0.0.1 inside the test process), the connector
//! config that wraps it, and CLI helpers that feed a secret on stdin.

#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use serde_json::{Value, json};

/// The secret the provider accepts (what `credential set` stores).
pub const GOOD_TOKEN: &str = "prov-TOKEN-7f3a9c1e5b2d48aa";

/// The key the provider accepts in its `api_key` query parameter; `+`, `/`
/// and `=` make its encoded form differ from the value.
pub const GOOD_KEY: &str = "kq+KEY/5e1f9a==77c3d2";

/// `GOOD_KEY` as it appears in a query string.
pub const GOOD_KEY_ENCODED: &str = "kq%2BKEY%2F5e1f9a%3D%3D77c3d2";

/// Everything the provider saw: raw request targets and `Authorization`s.
#[derive(Clone, Default)]
pub struct Seen {
    pub targets: Arc<Mutex<Vec<String>>>,
    pub auth: Arc<Mutex<Vec<String>>>,
}

impl Seen {
    pub fn targets(&self) -> Vec<String> {
        self.targets.lock().expect("lock").clone()
    }

    pub fn auth(&self) -> Vec<String> {
        self.auth.lock().expect("lock").clone()
    }

    pub fn count(&self) -> usize {
        self.targets.lock().expect("lock").len()
    }
}

pub struct Provider {
    pub port: u16,
    pub seen: Seen,
}

impl Provider {
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

fn authorized(headers: &HeaderMap) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        == Some(&format!("Bearer {GOOD_TOKEN}"))
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"message":"bad credentials"}"#,
    )
        .into_response()
}

async fn forecast(UrlPath(city): UrlPath<String>, headers: HeaderMap, req: Request) -> Response {
    if !authorized(&headers) {
        return unauthorized();
    }
    let days: u64 = req
        .uri()
        .query()
        .and_then(|q| q.split('&').find_map(|p| p.strip_prefix("days=")))
        .and_then(|d| d.parse().ok())
        .unwrap_or(1);
    axum::Json(json!({
        "data": {"city": city, "days": days, "forecast": [{"day": 1, "temp": 21.5, "sky": "clear"}]},
        "meta": {"source": "test-provider"}
    }))
    .into_response()
}

async fn echo_headers(headers: HeaderMap) -> Response {
    let map: serde_json::Map<String, Value> = headers
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v.to_str().unwrap_or(""))))
        .collect();
    axum::Json(Value::Object(map)).into_response()
}

/// A 400 that quotes the Authorization header back (a careless API).
async fn echo_error(headers: HeaderMap) -> Response {
    let auth = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    (
        StatusCode::BAD_REQUEST,
        format!(
            "invalid request; you sent Authorization: {auth}{}",
            headers
                .get("x-static")
                .and_then(|v| v.to_str().ok())
                .map(|v| format!(" and X-Static: {v}"))
                .unwrap_or_default()
        ),
    )
        .into_response()
}

async fn status(UrlPath(code): UrlPath<u16>) -> Response {
    let mut r = (
        StatusCode::from_u16(code).unwrap_or(StatusCode::IM_A_TEAPOT),
        "status as asked",
    )
        .into_response();
    if code == 429 || code == 503 {
        r.headers_mut()
            .insert(header::RETRY_AFTER, "1".parse().expect("header"));
    }
    r
}

async fn huge_declared() -> Response {
    // Declares 50 MB; sends the body lazily (nobody should wait for it).
    let stream =
        futures::stream::iter((0..50).map(|_| Ok::<_, std::io::Error>(vec![b'x'; 1 << 20])));
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_LENGTH, 50u64 << 20)
        .body(Body::from_stream(stream))
        .expect("response")
}

async fn huge_chunked() -> Response {
    let stream =
        futures::stream::iter((0..64).map(|_| Ok::<_, std::io::Error>(vec![b'y'; 64 * 1024])));
    Response::builder()
        .header(header::CONTENT_TYPE, "text/plain")
        .body(Body::from_stream(stream))
        .expect("response")
}

/// Checks the `api_key` query parameter and echoes the request target (with
/// the key) back, on success and on failure: a careless API.
async fn keyed(
    axum::extract::Query(params): axum::extract::Query<std::collections::HashMap<String, String>>,
    req: Request,
) -> Response {
    let target = req.uri().to_string();
    if params.get("api_key").map(String::as_str) == Some(GOOD_KEY) {
        axum::Json(json!({"ok": true, "target": target})).into_response()
    } else {
        (StatusCode::BAD_REQUEST, format!("bad key in {target}")).into_response()
    }
}

async fn create_item(headers: HeaderMap, axum::Json(body): axum::Json<Value>) -> Response {
    if !authorized(&headers) {
        return unauthorized();
    }
    (StatusCode::CREATED, axum::Json(json!({"created": body}))).into_response()
}

async fn record(State(seen): State<Seen>, req: Request, next: axum::middleware::Next) -> Response {
    seen.targets
        .lock()
        .expect("lock")
        .push(req.uri().to_string());
    if let Some(a) = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        seen.auth.lock().expect("lock").push(a.to_owned());
    }
    next.run(req).await
}

/// Start the provider on 127.0.0.1 (an ephemeral port) in this process.
pub async fn start_provider() -> Provider {
    let seen = Seen::default();
    let app = Router::new()
        .route("/v1/forecast/{city}", get(forecast))
        .route("/v1/headers", get(echo_headers))
        .route("/v1/echo-error", get(echo_error))
        .route("/v1/status/{code}", get(status))
        .route(
            "/v1/redirect",
            get(|| async {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, "/v1/forecast/redirected")],
                )
            }),
        )
        .route("/v1/huge-declared", get(huge_declared))
        .route("/v1/huge-chunked", get(huge_chunked))
        .route("/v1/items", post(create_item))
        .route("/v1/keyed", get(keyed))
        .route("/admin/{*rest}", any(|| async { "the admin area" }))
        .fallback(|| async { (StatusCode::NOT_FOUND, "no route") })
        .layer(axum::middleware::from_fn_with_state(seen.clone(), record));
    Provider {
        port: serve(app).await,
        seen,
    }
}

/// Serve `app` on 127.0.0.1 (an ephemeral port) in this process.
async fn serve(app: Router) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the provider");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    port
}

/// The `api` connector wrapping the provider. `extra` goes inside the
/// `[[connector]]` table before its sub-tables.
pub fn connector_toml(id: &str, base_url: &str, allow_private: bool) -> String {
    format!(
        r#"
[[connector]]
id = "{id}"
kind = "api"
base_url = "{base_url}"
allow_private_network = {allow_private}
max_response_bytes = 1000000
max_request_bytes = 4096

[connector.credential]
label = "Provider API token"
help = "Create a token in the provider's settings page."

[connector.test]
tool = "get_forecast"
args = {{ city = "Paris" }}

[[connector.tool]]
name = "get_forecast"
description = "Weather forecast for a city"
read_only = true
method = "GET"
path = "/forecast/{{city}}"
query = ["days"]
project = "/data"
input_schema = {{ type = "object", properties = {{ city = {{ type = "string", minLength = 1 }}, days = {{ type = "integer", minimum = 1, maximum = 14 }} }}, required = ["city"], additionalProperties = false }}
output_schema = {{ type = "object", required = ["city", "forecast"] }}

[[connector.tool]]
name = "forecast_fields"
description = "Only the city and the temperatures"
read_only = true
path = "/forecast/{{city}}"
project = ["data.city", "data.forecast[].temp"]
input_schema = {{ type = "object", properties = {{ city = {{ type = "string" }} }}, required = ["city"] }}

[[connector.tool]]
name = "request_headers"
description = "Echo the request headers (a careless API)"
read_only = true
path = "/headers"
header_args = {{ trace = "X-Trace-Id" }}
headers = {{ X-Client = "connecta-tests" }}
input_schema = {{ type = "object", properties = {{ trace = {{ type = "string" }} }} }}

[[connector.tool]]
name = "echo_error"
description = "Fails quoting the Authorization header"
read_only = true
path = "/echo-error"
input_schema = {{ type = "object" }}

[[connector.tool]]
name = "status"
description = "Answer with the given status"
read_only = true
path = "/status/{{code}}"
input_schema = {{ type = "object", properties = {{ code = {{ type = "integer" }} }}, required = ["code"] }}

[[connector.tool]]
name = "redirect"
description = "Redirects elsewhere"
read_only = true
path = "/redirect"
input_schema = {{ type = "object" }}

[[connector.tool]]
name = "huge_declared"
description = "Declares a body over the cap"
read_only = true
path = "/huge-declared"
input_schema = {{ type = "object" }}

[[connector.tool]]
name = "huge_chunked"
description = "Streams a body over the cap"
read_only = true
path = "/huge-chunked"
input_schema = {{ type = "object" }}

[[connector.tool]]
name = "create_item"
description = "Create an item"
read_only = false
method = "POST"
path = "/items"
input_schema = {{ type = "object", properties = {{ name = {{ type = "string" }} }}, required = ["name"] }}
"#
    )
}

/// An `api` connector whose credential goes in the `api_key` query
/// parameter, raw.
pub fn query_key_connector_toml(id: &str, base_url: &str) -> String {
    format!(
        r#"
[[connector]]
id = "{id}"
kind = "api"
base_url = "{base_url}"
allow_private_network = true

[connector.credential]
label = "Provider API key"
placement = "query"
query_param = "api_key"
scheme = "raw"

[connector.test]
tool = "whoami"

[[connector.tool]]
name = "whoami"
description = "Echo the request target"
read_only = true
path = "/keyed"
input_schema = {{ type = "object" }}
"#
    )
}

/// `call_tool` with the result as a plain value (`resultMode: "value"`).
pub async fn call_tool(
    client: &super::support::Client,
    address: &str,
    args: Value,
) -> (Value, bool) {
    super::support::call(
        client,
        "call_tool",
        json!({"address": address, "args": args, "resultMode": "value"}),
    )
    .await
}

/// The error code of a failed call's answer.
pub fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("<none>")
}

/// Run `connecta <args>` with `stdin` fed in and closed; returns (status,
/// stdout, stderr).
pub fn cli(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> (ExitStatus, String, String) {
    let mut cmd = Command::new(super::support::bin());
    cmd.args(args)
        .env_remove("CONNECTA_VAULT_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn connecta");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.as_bytes()).expect("write stdin");
    drop(input);
    let out = wait_output(child, Duration::from_secs(60));
    (out.status, out.stdout, out.stderr)
}

pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

fn wait_output(child: std::process::Child, timeout: Duration) -> Output {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = rx
        .recv_timeout(timeout)
        .expect("the command finished in time")
        .expect("the command ran");
    Output {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `connecta credential set <id> --config <file>` with the value on stdin.
pub fn set_credential(config: &Path, id: &str, value: &str, env: &[(&str, &str)]) {
    let (status, out, err) = cli(
        &[
            "credential",
            "set",
            id,
            "--config",
            &config.display().to_string(),
        ],
        &format!("{value}\n"),
        env,
    );
    assert!(status.success(), "credential set failed:\n{out}\n{err}");
    assert!(
        !out.contains(value) && !err.contains(value),
        "set echoed the value"
    );
}

/// What the echo provider saw of one request.
#[derive(Clone, Debug)]
pub struct Echoed {
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    pub authorization: Option<String>,
    pub body: Option<Value>,
}

/// A provider that answers every request with what it saw (method, path,
/// query, the headers besides `Authorization`, the JSON body), standing in
/// for the API an OpenAPI document describes.
pub struct EchoProvider {
    pub port: u16,
    pub seen: Arc<Mutex<Vec<Echoed>>>,
}

impl EchoProvider {
    pub fn requests(&self) -> Vec<Echoed> {
        self.seen.lock().expect("lock").clone()
    }
}

async fn echo(State(seen): State<Arc<Mutex<Vec<Echoed>>>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let body: Option<Value> = serde_json::from_slice(&bytes).ok();
    let headers: serde_json::Map<String, Value> = parts
        .headers
        .iter()
        .filter(|(k, _)| *k != header::AUTHORIZATION)
        .map(|(k, v)| (k.to_string(), json!(v.to_str().unwrap_or(""))))
        .collect();
    seen.lock().expect("lock").push(Echoed {
        method: parts.method.to_string(),
        target: parts.uri.to_string(),
        authorization: parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        body: body.clone(),
    });
    axum::Json(json!({
        "method": parts.method.as_str(),
        "path": parts.uri.path(),
        "query": parts.uri.query(),
        "headers": headers,
        "body": body,
    }))
    .into_response()
}

/// Start the echo provider on 127.0.0.1 (an ephemeral port) in this process.
pub async fn start_echo_provider() -> EchoProvider {
    let seen: Arc<Mutex<Vec<Echoed>>> = Arc::default();
    let app = Router::new().fallback(any(echo)).with_state(seen.clone());
    EchoProvider {
        port: serve(app).await,
        seen,
    }
}
