//! Hostile request shapes against the real binary: a JSON-RPC batch of
//! 10,000 messages, clients that send half a request and wait, and batches
//! that would gather more answers than the gateway keeps. Memory is read
//! from the spawned server's `/proc/<pid>/status` (a bound on memory is a
//! correctness property here, not a timing).

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A `/proc/<pid>/status` field in bytes (`VmRSS`, `VmHWM`).
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let line = status
        .lines()
        .find(|l| l.starts_with(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"));
    line.split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a number of kB")
}

async fn post(gw: &Gateway, body: String, headers: &[(&str, &str)]) -> (u16, String) {
    let mut req = reqwest::Client::new()
        .post(gw.url())
        .timeout(Duration::from_secs(60))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.expect("answered");
    let status = resp.status().as_u16();
    (status, resp.text().await.expect("body"))
}

fn tools_list_batch(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| {
            format!(r#"{{"jsonrpc": "2.0", "id": {i}, "method": "tools/list", "params": {{}}}}"#)
        })
        .collect();
    format!("[{}]", items.join(","))
}

const V0326: (&str, &str) = ("MCP-Protocol-Version", "2025-03-26");

/// The server's peak RSS so far, asserted under 100 MB.
fn rss_peak_under_100_mb(gw: &Gateway, before: u64) -> u64 {
    let peak = status_kib(gw.pid(), "VmHWM");
    eprintln!("RSS before {before} kB, peak {peak} kB");
    assert!(
        peak < 100 * 1024,
        "the server's RSS peaked at {peak} kB (before the batch: {before} kB)"
    );
    peak
}

/// Waits (15 s at most) for the server's RSS to come back within 20% of
/// `before`.
async fn rss_returns_near(gw: &Gateway, before: u64, peak: u64) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = status_kib(gw.pid(), "VmRSS");
        if now * 5 <= before * 6 {
            eprintln!("RSS after {now} kB");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "RSS stayed at {now} kB after the batch (before: {before} kB, peak {peak} kB)"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ten_thousand_message_batch_keeps_rss_under_100_mb_and_gives_it_back() {
    let gw = Gateway::start(&demo_connector());
    gw.wait_catalogs().await;
    // Warm every path the attack takes once, so the baseline includes it.
    let (status, _) = post(&gw, tools_list_batch(3), &[V0326]).await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = status_kib(gw.pid(), "VmRSS");

    let attack = tools_list_batch(10_000);
    assert!(attack.len() > 500_000, "{} bytes", attack.len());
    let (status, text) = post(&gw, attack, &[V0326]).await;
    let peak = rss_peak_under_100_mb(&gw, before);
    // Refused whole, before any of it ran.
    assert_eq!(status, 400, "{}", &text[..text.len().min(300)]);
    let v: Value = serde_json::from_str(&text).expect("a JSON-RPC error");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("server.max_batch_messages")),
        "{v}"
    );
    // Back within 20% of where it was.
    rss_returns_near(&gw, before, peak).await;
    // And the gateway still serves.
    let (status, _) = post(
        &gw,
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string(),
        &[V0326],
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_allowed_10_000_messages_is_held_by_its_answer_budget() {
    // With the message cap lifted, the answer budget alone bounds memory:
    // the requests after it are not run and say so, each with its id.
    let gw = Gateway::start(&format!(
        "[server]\nmax_batch_messages = 10000\nmax_batch_answer_bytes = 1048576\n\n{}",
        demo_connector()
    ));
    gw.wait_catalogs().await;
    let (status, _) = post(&gw, tools_list_batch(3), &[V0326]).await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = status_kib(gw.pid(), "VmRSS");
    let admitted = metric(&gw, "connecta_requests_admitted_total").await;

    let (status, text) = post(&gw, tools_list_batch(10_000), &[V0326]).await;
    assert_eq!(status, 200);
    let answers: Vec<Value> = serde_json::from_str(&text).expect("an array");
    assert_eq!(answers.len(), 10_000);
    let ran = answers.iter().filter(|a| a["result"].is_object()).count();
    assert!(ran > 0, "some answers fit the budget");
    assert!(ran < 1_000, "{ran} answers gathered within 1 MiB?");
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a["id"], i, "answers keep their order and ids");
        if a["error"].is_object() {
            assert_eq!(a["error"]["code"], -32000, "{a}");
            assert_eq!(a["error"]["data"]["code"], "result_too_large", "{a}");
        }
    }
    // Only what ran was admitted: the rest never reached rmcp.
    let admitted_now = metric(&gw, "connecta_requests_admitted_total").await;
    assert_eq!(admitted_now - admitted, ran as u64);

    let peak = rss_peak_under_100_mb(&gw, before);
    rss_returns_near(&gw, before, peak).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn each_message_of_a_batch_takes_its_own_admission_slot() {
    let gw = Gateway::start(&format!(
        "[server]\nmax_concurrent_requests = 2\n\n{}",
        demo_connector()
    ));
    gw.wait_catalogs().await;
    let admitted = metric(&gw, "connecta_requests_admitted_total").await;
    // Twenty messages through two slots: each waits for one, none is lost.
    let (status, text) = post(&gw, tools_list_batch(20), &[V0326]).await;
    assert_eq!(status, 200, "{text}");
    let answers: Vec<Value> = serde_json::from_str(&text).expect("an array");
    assert_eq!(answers.len(), 20);
    assert!(answers.iter().all(|a| a["result"]["tools"].is_array()));
    let admitted_now = metric(&gw, "connecta_requests_admitted_total").await;
    assert_eq!(admitted_now - admitted, 20, "one admission per message");
}

/// Connections that send their headers and one byte of a 100-byte body,
/// then wait.
async fn half_sent(gw: &Gateway, n: usize) -> Vec<TcpStream> {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{",
        gw.port
    );
    let mut held = Vec::with_capacity(n);
    for _ in 0..n {
        let mut s = TcpStream::connect(("127.0.0.1", gw.port))
            .await
            .expect("connect");
        s.write_all(head.as_bytes()).await.expect("write");
        held.push(s);
    }
    held
}

#[tokio::test(flavor = "multi_thread")]
async fn two_hundred_sixty_half_sent_requests_do_not_keep_a_whole_one_waiting() {
    let gw = Gateway::start(&demo_connector());
    gw.wait_catalogs().await;
    let held = half_sent(&gw, 260).await;
    // Let the server take in every half request.
    tokio::time::sleep(Duration::from_millis(500)).await;
    // A generous client timeout is the failure signal; the answer must be
    // the real one, not a 503.
    let r = reqwest::Client::new()
        .post(gw.url())
        .timeout(Duration::from_secs(10))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2025-03-26")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .expect("the whole request is answered");
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.expect("json");
    assert_eq!(v["result"]["tools"].as_array().map(Vec::len), Some(7));
    // The half requests are still open (their body deadline is 30 s).
    let mut first = held.into_iter().next().expect("one");
    let mut buf = [0u8; 1];
    let still_open = tokio::time::timeout(Duration::from_millis(200), first.read(&mut buf)).await;
    assert!(still_open.is_err(), "the half request was answered early");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_stops_arriving_is_answered_408() {
    let gw = Gateway::start(&format!(
        "[server]\nrequest_body_timeout_ms = 1000\n\n{}",
        demo_connector()
    ));
    let mut s = half_sent(&gw, 1).await.remove(0);
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes within its body deadline")
        .expect("read");
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    let v: Value = serde_json::from_str(body).expect("a JSON-RPC error");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("request_body_timeout_ms")),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn headers_that_stop_arriving_close_the_connection() {
    let gw = Gateway::start(&format!(
        "[server]\nrequest_header_timeout_ms = 1000\n\n{}",
        demo_connector()
    ));
    let mut s = TcpStream::connect(("127.0.0.1", gw.port))
        .await
        .expect("connect");
    s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        .await
        .expect("write");
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut rest))
        .await
        .expect("the server closes the connection after its header deadline")
        .ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_overloaded_request_is_answered_with_its_own_id() {
    let (gw, busy) = one_slot_taken(6, 4000).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    let (status, text) = loop {
        let (status, text) = post(
            &gw,
            json!({"jsonrpc": "2.0", "id": "req-77", "method": "tools/list"}).to_string(),
            &[V0326],
        )
        .await;
        if status == 503 {
            break (status, text);
        }
        assert!(Instant::now() < deadline, "the slot never filled");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status, 503);
    let v: Value = serde_json::from_str(&text).expect("a JSON-RPC error");
    assert_eq!(v["id"], "req-77", "{v}");
    assert_eq!(v["error"]["data"]["retryable"], true, "{v}");
    // Each message of a batch is refused with its own id as well.
    let (status, text) = post(
        &gw,
        r#"[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]"#
            .into(),
        &[V0326],
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let answers: Vec<Value> = serde_json::from_str(&text).expect("an array");
    assert_eq!(answers[0]["id"], 5, "{text}");
    assert_eq!(answers[1]["id"], 6, "{text}");
    assert!(
        answers.iter().all(|a| a["error"]["code"] == -32000),
        "{text}"
    );
    let _ = busy.await;
}

/// The names of a process's threads.
fn thread_names(pid: u32) -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .map(|n| n.trim().to_owned())
        .collect()
}

/// The gateway gives its allocator's free pages back from one background
/// thread (an idle gateway does not keep a catalog load's peak), and a
/// sandbox worker, the same binary, stays single-threaded: it hardens
/// itself only then, so a program that runs proves it.
#[tokio::test(flavor = "multi_thread")]
async fn the_gateway_purges_from_one_background_thread_and_workers_stay_single_threaded() {
    let gw = Gateway::start(&demo_connector());
    let client = connect(&gw.url()).await;
    assert_eq!(program_ok(&client, "async () => 6 * 7").await, json!(42));
    let purgers = thread_names(gw.pid())
        .into_iter()
        .filter(|n| n == "jemalloc_bg_thd")
        .count();
    assert_eq!(purgers, 1, "threads: {:?}", thread_names(gw.pid()));
    let workers: Vec<u32> = descendants(gw.pid())
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == b"__sandbox-worker"))
        })
        .collect();
    assert!(!workers.is_empty(), "no sandbox worker is running");
    for w in workers {
        assert_eq!(
            thread_names(w).len(),
            1,
            "worker {w}: {:?}",
            thread_names(w)
        );
    }
}
