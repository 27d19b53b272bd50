//! SIGTERM drains: a request in flight when the signal arrives gets its real
//! answer if it finishes within `server.shutdown_grace_ms`, and a typed
//! `executor_closed` result if it does not — never an empty HTTP 500 or a
//! lost stdio response. New connections are refused once the signal is in.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

fn config(grace_ms: u64) -> String {
    format!(
        "[server]\nshutdown_grace_ms = {grace_ms}\n\n# One program at a time, so a second one waits in the sandbox queue.\n[code]\nworkers = 1\nmax_concurrent = 1\n\n{}\n{}",
        python_connector("py"),
        demo_connector()
    )
}

/// `tools/call` over plain HTTP, so the test sees the status and body the
/// client gets rather than an SDK's reading of them.
async fn post_call(url: String, name: &str, arguments: Value) -> (u16, String) {
    let body = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments}
    });
    let resp = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2025-06-18")
        .json(&body)
        .send()
        .await
        .expect("the gateway answered the request it accepted");
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap_or_default())
}

/// The call's structured value and `isError`, from a 200 JSON-RPC body.
fn tool_result(status: u16, body: &str) -> (Value, bool) {
    assert_eq!(
        status, 200,
        "a request in flight at shutdown gets a real answer: {body}"
    );
    let v: Value = serde_json::from_str(body).expect("a JSON-RPC body");
    let r = &v["result"];
    let value = r["structuredContent"].clone();
    let value = if value.is_null() {
        r["content"][0]["text"]
            .as_str()
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or(Value::Null)
    } else {
        value
    };
    (value, r["isError"] == json!(true))
}

/// Wait until `/metrics` shows `n` `/mcp` requests admitted, i.e. in flight.
async fn wait_admitted(gw: &Gateway, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let admitted = metric(gw, "connecta_requests_admitted_total").await;
        if admitted >= n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "requests never reached the gateway"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn sigterm(pid: u32) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM sent");
}

#[tokio::test(flavor = "multi_thread")]
async fn http_requests_in_flight_at_sigterm_get_their_real_results() {
    let mut gw = Gateway::start(&config(30_000));
    gw.wait_catalogs().await;
    let url = gw.url();
    let slow_call = tokio::spawn(post_call(
        url.clone(),
        "call_tool",
        json!({"address": "py.hang", "args": {"seconds": 2}, "resultMode": "value"}),
    ));
    let program = "async () => { const r = await py.hang({seconds: 2}); return {r}; }";
    let running_program = tokio::spawn(post_call(
        url.clone(),
        "execute_code",
        json!({"code": program}),
    ));
    wait_admitted(&gw, 2).await;
    // Give the second program a moment to reach the sandbox queue behind the first.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let queued_program = tokio::spawn(post_call(url, "execute_code", json!({"code": program})));
    wait_admitted(&gw, 3).await;

    sigterm(gw.pid());
    // The listener closes at once: a new client is refused, not left hanging.
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", gw.port)).is_ok() {
        assert!(
            Instant::now() < deadline,
            "still accepting connections after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let (status, body) = slow_call.await.expect("task");
    let (v, is_error) = tool_result(status, &body);
    assert!(!is_error, "{body}");
    assert!(v.to_string().contains("woke up"), "{body}");
    for task in [running_program, queued_program] {
        let (status, body) = task.await.expect("task");
        let (v, is_error) = tool_result(status, &body);
        assert!(!is_error, "{body}");
        assert!(v.to_string().contains("woke up"), "{body}");
    }
    let exit = gw.stop();
    assert!(exit.success(), "{exit:?}\n{}", gw.stderr());
}

#[tokio::test(flavor = "multi_thread")]
async fn http_requests_outlasting_the_grace_answer_executor_closed() {
    let mut gw = Gateway::start(&config(500));
    gw.wait_catalogs().await;
    let url = gw.url();
    let started = Instant::now();
    let call = tokio::spawn(post_call(
        url.clone(),
        "call_tool",
        json!({"address": "py.hang", "args": {"seconds": 120}}),
    ));
    let program = tokio::spawn(post_call(
        url,
        "execute_code",
        json!({"code": "async () => py.hang({seconds: 120})"}),
    ));
    wait_admitted(&gw, 2).await;
    sigterm(gw.pid());
    for task in [call, program] {
        let (status, body) = task.await.expect("task");
        let (v, is_error) = tool_result(status, &body);
        assert!(is_error, "{body}");
        assert_eq!(v["error"]["code"], "executor_closed", "{body}");
        assert_eq!(v["error"]["retryable"], false, "{body}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "stopped at the end of the grace, not when the call ended"
    );
    let exit = gw.stop();
    assert!(exit.success(), "{exit:?}\n{}", gw.stderr());
}

#[test]
fn stdio_call_in_flight_at_sigterm_gets_its_real_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config_path = dir.path().join("connecta.toml");
    std::fs::write(
        &config_path,
        format!("[auth]\nopen = true\n\n{}", config(30_000)),
    )
    .expect("write config");
    let mut child = Command::new(bin())
        .args(["serve", "--stdio", "--config"])
        .arg(&config_path)
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn connecta --stdio");
    let mut stdin = child.stdin.take().expect("stdin");
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line) {
                let _ = tx.send(v);
            }
        }
    });
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").expect("write to connecta");
        stdin.flush().expect("flush");
    };
    let answer = |id: u64| loop {
        let v = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("connecta answered on stdout");
        if v["id"] == json!(id) {
            return v;
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "shutdown-test", "version": "0"}}}),
    );
    answer(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // A first call proves the connector is up, so the slow one below is the
    // only thing in flight when the signal arrives.
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "call_tool", "arguments": {"address": "py.hang", "args": {"seconds": 0}}}}),
    );
    let warm = answer(2);
    assert_ne!(warm["result"]["isError"], json!(true), "{warm}");
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "call_tool", "arguments": {"address": "py.hang", "args": {"seconds": 2}}}}),
    );
    std::thread::sleep(Duration::from_millis(500));
    sigterm(child.id());
    let v = answer(3);
    assert_ne!(v["result"]["isError"], json!(true), "{v}");
    assert!(v.to_string().contains("woke up"), "{v}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(Instant::now() < deadline, "connecta did not exit");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
}
