//! Broken downstreams never take the gateway down: a child that crashes is
//! restarted and its next call succeeds; one that hangs yields `timeout`; one
//! that answers garbage yields a typed error. After shutdown no child process
//! remains.

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::*;

fn config() -> String {
    format!(
        r#"
[[connector]]
id = "py"
command = {python}
args = [{server}, "stdio"]
restart_backoff_ms = [100, 1000]

[[connector]]
id = "garbage"
command = {python}
args = [{garbage}]

{demo}
"#,
        python = q(&python()),
        server = q(&peers().join("py_server.py").display().to_string()),
        garbage = q(&peers().join("garbage_server.py").display().to_string()),
        demo = demo_connector(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn crash_hang_and_garbage_are_contained_and_nothing_is_orphaned() {
    let mut gw = Gateway::start(&config());
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;

    // A crash: the call fails typed, the child is restarted, the next call works.
    let (first, err) = call(
        &client,
        "call_tool",
        json!({"address": "py.pid", "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{first}");
    let first_pid = first["pid"].as_u64().expect("pid");
    let (crash, err) = call(&client, "call_tool", json!({"address": "py.crash"})).await;
    assert!(err, "a crash is an error: {crash}");
    let code = crash["error"]["code"].as_str().expect("typed code");
    assert!(
        ["unavailable", "connector_call_failed"].contains(&code),
        "{crash}"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let second_pid = loop {
        let (v, err) = call(
            &client,
            "call_tool",
            json!({"address": "py.pid", "resultMode": "value", "maxRetries": 2}),
        )
        .await;
        if !err {
            break v["pid"].as_u64().expect("pid");
        }
        assert!(
            Instant::now() < deadline,
            "the crashed child never came back: {v}\n{}",
            gw.stderr()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_ne!(first_pid, second_pid, "a new child answered");
    let health = gw
        .wait_health("a restart counted", |v| {
            v["connectors"].as_array().is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["id"] == "py" && c["restarts"].as_u64() >= Some(1))
            })
        })
        .await;
    assert_eq!(health["status"], "ok", "{health}");

    // A hang: the per-call deadline answers `timeout`, retryable.
    let started = Instant::now();
    let (hang, err) = call(
        &client,
        "call_tool",
        json!({"address": "py.hang", "timeoutMs": 800}),
    )
    .await;
    assert!(err);
    assert_eq!(hang["error"]["code"], "timeout", "{hang}");
    assert_eq!(hang["error"]["retryable"], true);
    assert!(started.elapsed() < Duration::from_secs(10));

    // Garbage: a typed error, not a crash and not a hang.
    let (noise, err) = call(
        &client,
        "call_tool",
        json!({"address": "garbage.noise", "timeoutMs": 5000}),
    )
    .await;
    assert!(err, "{noise}");
    let code = noise["error"]["code"].as_str().expect("typed code");
    assert!(
        ["connector_call_failed", "unavailable", "timeout"].contains(&code),
        "{noise}"
    );

    // The gateway is still serving everyone else.
    let (note, err) = call(
        &client,
        "call_tool",
        json!({"address": "demo.get_note", "args": {"id": 1}, "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{note}");
    assert_eq!(note["id"], 1);
    let _ = client.cancel().await;

    // Shutdown stops and reaps every child.
    let children = descendants(gw.pid());
    assert!(
        children.len() >= 3,
        "expected the downstream children, found {children:?}"
    );
    let status = gw.stop();
    assert!(
        status.success(),
        "connecta exited with {status}\n{}",
        gw.stderr()
    );
    std::thread::sleep(Duration::from_millis(200));
    let left: Vec<u32> = children.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "orphans after shutdown: {left:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn e2_a_downstream_that_asks_for_input_mid_call_is_input_required_unsupported() {
    let gw = Gateway::start(&format!(
        "[[connector]]\nid = \"asker\"\ncommand = {}\nargs = [{}]\n",
        q(&python()),
        q(&peers().join("py_elicit_server.py").display().to_string())
    ));
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;
    a_mid_call_question_fails_and_the_connector_goes_on(&c, "asker").await;
    // Inside a program, the call rejects with the same code.
    let (v, err) = program(
        &c,
        "async () => { try { await connecta.call('asker.ask_name', {}); return 'ran'; } catch (e) { return e.code; } }",
    )
    .await;
    assert!(!err, "{v}");
    assert!(v.to_string().contains("input_required_unsupported"), "{v}");
}
