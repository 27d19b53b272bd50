//! Shared harness for the end-to-end tests: they run the real `connecta`
//! binary as a child process against real downstream MCP servers installed
//! under `tests/peers` (by `scripts/test`), and talk to it with real clients.

#![allow(dead_code)]

pub mod approvals;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_connecta"))
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the crate lives two levels below the repository root")
        .to_path_buf()
}

/// The installed test peers. Missing peers are a setup error, not a skip:
/// a test that silently skips proves nothing.
pub fn peers() -> PathBuf {
    let dir = repo_root().join("tests/peers");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/server-everything")
            .exists()
            && dir.join(".venv/bin/python").exists(),
        "test peers are not installed in {}: run scripts/test (it installs them)",
        dir.display()
    );
    dir
}

pub fn python() -> String {
    peers().join(".venv/bin/python").display().to_string()
}

pub fn python_modern() -> String {
    peers().join(".venv2/bin/python").display().to_string()
}

pub fn node() -> String {
    std::env::var("NODE").unwrap_or_else(|_| "node".into())
}

pub fn everything_js() -> String {
    peers()
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string()
}

pub fn memory_js() -> String {
    peers()
        .join("node_modules/@modelcontextprotocol/server-memory/dist/index.js")
        .display()
        .to_string()
}

/// TOML string literal.
pub fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// A `[[connector]]` table for the reference server
/// (`@modelcontextprotocol/server-everything`) over stdio, id `everything`.
pub fn everything_connector() -> String {
    format!(
        "[[connector]]\nid = \"everything\"\ncommand = {}\nargs = [{}, \"stdio\"]\n",
        q(&node()),
        q(&everything_js())
    )
}

/// A gateway the demo connector and nothing else.
pub fn demo_connector() -> String {
    format!(
        "[[connector]]\nid = \"demo\"\ncommand = {}\nargs = [\"demo-server\"]\n",
        q(&bin().display().to_string())
    )
}

/// A running `connecta serve`, stopped (SIGTERM) on drop.
pub struct Gateway {
    pub child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
    pub config_path: PathBuf,
    stderr: Arc<Mutex<String>>,
}

impl Gateway {
    /// Start the gateway with `[server]`/`[auth]` defaults for tests (open,
    /// loopback, ephemeral port) plus `body`.
    pub fn start(body: &str) -> Gateway {
        Gateway::start_raw(&format!("[auth]\nopen = true\n\n{body}"))
    }

    pub fn start_raw(config: &str) -> Gateway {
        Gateway::start_with_env(config, &[])
    }

    pub fn start_with_env(config: &str, env: &[(&str, &str)]) -> Gateway {
        let dir = tempfile::tempdir().expect("tempdir");
        let config_path = dir.path().join("connecta.toml");
        std::fs::write(&config_path, config).expect("write config");
        let mut cmd = Command::new(bin());
        cmd.args(["serve", "--config"])
            .arg(&config_path)
            .args(["--listen", "127.0.0.1:0"])
            .env("RUST_LOG", "info,connecta_connectors=debug")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .current_dir(dir.path());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn connecta");
        let stderr = Arc::new(Mutex::new(String::new()));
        let err = child.stderr.take().expect("stderr");
        let sink = stderr.clone();
        // Whole lines only: a line the gateway writes in pieces is never
        // seen half-written, and a character split between reads stays one.
        std::thread::spawn(move || {
            let mut reader = BufReader::new(err);
            let mut line = Vec::new();
            while let Ok(n) = reader.read_until(b'\n', &mut line) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .expect("stderr lock")
                    .push_str(&String::from_utf8_lossy(&line));
                line.clear();
            }
        });
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            for _ in lines {}
        });
        let line = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(l) => l,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "connecta did not print its ready line; stderr:\n{}",
                    stderr.lock().expect("lock")
                );
            }
        };
        let ready: Value = serde_json::from_str(&line).expect("ready line is JSON");
        assert_eq!(ready["type"], "ready");
        let port = ready["port"].as_u64().expect("port") as u16;
        Gateway {
            child,
            port,
            dir,
            config_path,
            stderr,
        }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn url(&self) -> String {
        format!("{}/mcp", self.base())
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("lock").clone()
    }

    /// Waits until the gateway's standard error contains `needle` (it is
    /// read by another thread, so a line logged just now may not be in yet).
    pub async fn wait_stderr(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = self.stderr();
            if text.contains(needle) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "stderr never showed {needle:?}:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// SIGTERM, then wait for exit.
    pub fn stop(&mut self) -> ExitStatus {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "connecta did not stop within 30 s of SIGTERM; stderr:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Poll `/health` until `pred` holds (catalog loads are asynchronous).
    pub async fn wait_health(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        let http = reqwest::Client::new();
        loop {
            if let Ok(r) = http.get(format!("{}/health", self.base())).send().await
                && let Ok(v) = r.json::<Value>().await
            {
                if pred(&v) {
                    return v;
                }
                if Instant::now() > deadline {
                    panic!(
                        "health never showed {what}: {v:#}\nstderr:\n{}",
                        self.stderr()
                    );
                }
            }
            if Instant::now() > deadline {
                panic!("health never answered; stderr:\n{}", self.stderr());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Wait until every connector has a catalog.
    pub async fn wait_catalogs(&self) -> Value {
        self.wait_health("every catalog loaded", |v| {
            v["connectors"]
                .as_array()
                .is_some_and(|cs| cs.iter().all(|c| c["catalog"].is_object()))
        })
        .await
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

pub type Client = RunningService<rmcp::RoleClient, ()>;

pub async fn connect(url: &str) -> Client {
    connect_with(StreamableHttpClientTransportConfig::with_uri(
        url.to_owned(),
    ))
    .await
}

pub async fn connect_with(cfg: StreamableHttpClientTransportConfig) -> Client {
    ().serve(StreamableHttpClientTransport::from_config(cfg))
        .await
        .expect("MCP client connects")
}

/// Call a meta-tool; returns (structured value, is_error).
pub async fn call(client: &Client, name: &str, args: Value) -> (Value, bool) {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let r = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .expect("tools/call answered");
    let value = r.structured_content.clone().unwrap_or_else(|| {
        r.content
            .first()
            .and_then(|c| c.as_text())
            .and_then(|t| serde_json::from_str(&t.text).ok())
            .unwrap_or(Value::Null)
    });
    (value, r.is_error == Some(true))
}

/// Call and return the raw result (content blocks and all).
pub async fn call_raw(client: &Client, name: &str, args: Value) -> rmcp::model::CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .expect("tools/call answered")
}

/// `connecta check --config PATH`; returns (status, stdout, stderr).
pub fn check_config(path: &Path) -> (ExitStatus, String, String) {
    run(
        Command::new(bin()).args(["check", "--config"]).arg(path),
        Duration::from_secs(30),
    )
}

/// Run a command to completion with a timeout; returns (status, stdout, stderr).
pub fn run(cmd: &mut Command, timeout: Duration) -> (ExitStatus, String, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "command timed out after {timeout:?}; stdout:\n{}\nstderr:\n{}",
                o.join().unwrap_or_default(),
                e.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (
        status,
        o.join().unwrap_or_default(),
        e.join().unwrap_or_default(),
    )
}

/// Descendant processes of `pid` (via /proc), for orphan checks.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut all: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat"))
                && let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r)
            {
                let fields: Vec<&str> = rest.split_whitespace().collect();
                if let Some(ppid) = fields.get(1).and_then(|x| x.parse::<u32>().ok()) {
                    all.push((p, ppid));
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for (c, pp) in &all {
            if *pp == p && !out.contains(c) {
                out.push(*c);
                frontier.push(*c);
            }
        }
    }
    out
}

pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .map(|(_, r)| r.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// POST a `tools/call` to `url` and give up after `after`: for a stateless
/// request, dropping the connection is the cancellation. Panics if the
/// request was answered in time.
pub async fn abandon_tool_call(url: &str, name: &str, arguments: Value, after: Duration) {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}});
    let r = reqwest::Client::builder()
        .timeout(after)
        .build()
        .expect("client")
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .json(&body)
        .send()
        .await;
    assert!(r.is_err(), "the request should have been abandoned");
}

/// POST a ping with this bearer token: (status, WWW-Authenticate, body).
pub async fn ping_with_token(gw: &Gateway, token: Option<&str>) -> (u16, String, String) {
    let mut req = reqwest::Client::new()
        .post(gw.url())
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let r = req.send().await.expect("answered");
    let status = r.status().as_u16();
    let challenge = r
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (status, challenge, r.text().await.expect("body"))
}

/// Writes a config for `serve --stdio` in `dir` (open, its data under
/// `dir/data`) with `body` after it; returns its path.
pub fn stdio_config(dir: &Path, body: &str) -> PathBuf {
    let config = dir.join("connecta.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\ndata_dir = {}\n[auth]\nopen = true\n{body}",
            q(&dir.join("data").display().to_string()),
        ),
    )
    .expect("write config");
    config
}

/// Calls read-only `address` (no arguments) with this bearer token through
/// a real MCP client, and returns the activity event the call left.
pub async fn call_and_find_event(gw: &Gateway, token: &str, address: &str) -> Value {
    let client = connect_with(
        StreamableHttpClientTransportConfig::with_uri(gw.url()).auth_header(token.to_owned()),
    )
    .await;
    let (v, err) = call(
        &client,
        "call_tool",
        serde_json::json!({"address": address, "args": {}}),
    )
    .await;
    assert!(!err, "{v}");
    let tool = address.split_once('.').map_or(address, |(_, t)| t);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(e) = activity(gw).into_iter().find(|e| e["toolName"] == tool) {
            return e;
        }
        assert!(Instant::now() < deadline, "the call was never recorded");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Starts `call_destructive_tool demo.create_note {title, body}` with
/// `reason` on its own client (under the `ask` policy it waits for a human).
pub fn destructive_create_note(
    gw: &Gateway,
    title: &'static str,
    body: &'static str,
    reason: &'static str,
) -> tokio::task::JoinHandle<(Value, bool)> {
    let url = gw.url();
    tokio::spawn(async move {
        let client = connect(&url).await;
        call(
            &client,
            "call_destructive_tool",
            serde_json::json!({"address": "demo.create_note", "args": {"title": title, "body": body},
                   "reason": reason}),
        )
        .await
    })
}

/// Run a program through `execute_code`; returns (structured value, is_error).
pub async fn program(client: &Client, code: &str) -> (Value, bool) {
    call(client, "execute_code", serde_json::json!({ "code": code })).await
}

/// The Python SDK server as a stdio connector with this id.
/// Run a program that must succeed; its `result`.
pub async fn program_ok(client: &Client, code: &str) -> Value {
    let (v, err) = program(client, code).await;
    assert!(!err, "program failed: {v:#}\n{code}");
    v["result"].clone()
}

/// Run a program that must fail; its `error`.
pub async fn program_fails(client: &Client, code: &str) -> Value {
    let (v, err) = program(client, code).await;
    assert!(err, "program should fail: {v:#}\n{code}");
    v["error"].clone()
}

pub fn python_connector(id: &str) -> String {
    format!(
        "[[connector]]\nid = {}\ncommand = {}\nargs = [{}, \"stdio\"]\n",
        q(id),
        q(&python()),
        q(&peers().join("py_server.py").display().to_string())
    )
}

/// A gateway with one `/mcp` slot and no queue, and a `py.hang` call of
/// `seconds` (timing out after `timeout_ms`) started on it; the slot is
/// taken once a request is refused with 503. The task ends with the client
/// and the call's result.
pub async fn one_slot_taken(
    seconds: u64,
    timeout_ms: u64,
) -> (Gateway, tokio::task::JoinHandle<(Client, (Value, bool))>) {
    let gw = Gateway::start(&format!(
        "[server]\nmax_concurrent_requests = 1\nmax_queued_requests = 0\n\n{}",
        python_connector("py")
    ));
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    let busy = tokio::spawn(async move {
        let args = serde_json::json!({
            "address": "py.hang", "args": {"seconds": seconds}, "timeoutMs": timeout_ms
        });
        let r = call(&client, "call_tool", args).await;
        (client, r)
    });
    // Returned only once the call holds the slot: a request of the
    // caller's sent before that could take the slot first and have the
    // hanging call refused instead.
    let deadline = Instant::now() + Duration::from_secs(10);
    while metric(&gw, "connecta_request_permits_available").await != 0 {
        assert!(
            !busy.is_finished(),
            "the hanging call ended without the slot"
        );
        assert!(
            Instant::now() < deadline,
            "the hanging call never took the slot"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (gw, busy)
}

/// The gateway's `/metrics` text (served outside `/mcp`'s admission).
pub async fn metrics_text(gw: &Gateway) -> String {
    reqwest::get(format!("{}/metrics", gw.base()))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text")
}

/// The counter or gauge `name` from `/metrics`.
pub async fn metric(gw: &Gateway, name: &str) -> u64 {
    let text = metrics_text(gw).await;
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /metrics:\n{text}"))
}

/// Activity events (newest first) as JSON, read through the CLI.
pub fn activity(gw: &Gateway) -> Vec<Value> {
    let (status, out, err) = run(
        Command::new(bin())
            .args(["activity", "tail", "--json", "-n", "1000", "--config"])
            .arg(&gw.config_path),
        Duration::from_secs(30),
    );
    assert!(status.success(), "{err}");
    let mut v: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    v.reverse();
    v
}

/// Waits until the activity log (newest first) satisfies `done`, and returns
/// it: events are written off the request path, so a call's event may land
/// a moment after its answer.
pub async fn activity_until(gw: &Gateway, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let events = activity(gw);
        if done(&events) {
            return events;
        }
        assert!(
            Instant::now() < deadline,
            "the activity log never reached the expected state: {events:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Contract E2 against `tests/peers/py_elicit_server.py` as connector
/// `id`: its `ask_name` asks for input mid-call, which fails
/// `input_required_unsupported`; the connector then answers `greet`.
pub async fn a_mid_call_question_fails_and_the_connector_goes_on(c: &Client, id: &str) {
    let (v, err) = call(
        c,
        "call_tool",
        serde_json::json!({"address": format!("{id}.ask_name"), "args": {}}),
    )
    .await;
    assert!(err, "{v}");
    assert_eq!(v["error"]["code"], "input_required_unsupported", "{v}");
    assert_eq!(v["error"]["retryable"], false, "{v}");
    greets(c, id, "Ana").await;
}

/// `greet {name}` on connector `id` (`py_elicit_server.py`) says hello.
pub async fn greets(c: &Client, id: &str, name: &str) {
    let (v, err) = call(
        c,
        "call_tool",
        serde_json::json!({"address": format!("{id}.greet"), "args": {"name": name}}),
    )
    .await;
    assert!(!err, "{v}");
    assert!(v.to_string().contains(&format!("hello {name}")), "{v}");
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A Python peer listening on a free loopback port; killed on drop.
pub struct HttpPeer {
    child: Child,
    pub port: u16,
}

impl HttpPeer {
    /// Run `tests/peers/<script> PORT args…` and wait until it accepts.
    pub async fn start(script: &str, args: &[&str]) -> HttpPeer {
        HttpPeer::start_on(free_port(), script, args).await
    }

    /// [`HttpPeer::start`] on a given port (a peer restarted in place).
    pub async fn start_on(port: u16, script: &str, args: &[&str]) -> HttpPeer {
        let mut all = vec![port.to_string()];
        all.extend(args.iter().map(|a| a.to_string()));
        HttpPeer::launch(port, script, &all).await
    }

    /// The Python SDK's server (`py_server.py http PORT`) on a free port.
    pub async fn python_sdk_server() -> HttpPeer {
        let port = free_port();
        HttpPeer::launch(port, "py_server.py", &["http".into(), port.to_string()]).await
    }

    /// Run `tests/peers/<script> args…`, which listens on `port`, and wait
    /// until it accepts.
    async fn launch(port: u16, script: &str, args: &[String]) -> HttpPeer {
        let child = Command::new(python())
            .arg(peers().join(script))
            .args(args)
            .spawn()
            .expect("python peer");
        let peer = HttpPeer { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "{script} never listened");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        peer
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// POST a JSON body to one of the peer's test routes; it must answer 200.
    pub async fn post(&self, path: &str, body: Value) {
        let r = reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}{path}", self.port))
            .json(&body)
            .send()
            .await
            .expect("peer");
        assert_eq!(r.status().as_u16(), 200, "{path}");
    }

    /// The OAuth peer's counters (`GET /stats`).
    pub async fn stats(&self) -> Value {
        reqwest::get(format!("http://127.0.0.1:{}/stats", self.port))
            .await
            .expect("stats")
            .json()
            .await
            .expect("json")
    }
}

/// The OAuth peer's `whoami` through the gateway's `call_tool`.
pub async fn whoami(client: &Client) -> (Value, bool) {
    call(
        client,
        "call_tool",
        serde_json::json!({"address": "notes.whoami", "args": {}}),
    )
    .await
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
