//! `serve --stdio` through the real binary, fed what is not one JSON-RPC
//! message per line: each such line gets a JSON-RPC error with `"id"` (null
//! when none can be read), and the session goes on answering the messages
//! around it, in order of arrival.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::*;

/// Feeds `lines` to `serve --stdio` (the built-in demo config), closes
/// stdin after the answers had time to be written, and returns every
/// line it wrote, parsed.
fn stdio_answers(lines: &[String]) -> Vec<Value> {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = stdio_config(dir.path(), "");
    let mut child = Command::new(bin())
        .args(["serve", "--stdio", "--config"])
        .arg(&config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn connecta --stdio");
    let mut stdin = child.stdin.take().expect("stdin");
    for line in lines {
        writeln!(stdin, "{line}").expect("write");
    }
    stdin.flush().expect("flush");
    // Give the answers time to be written before input ends.
    std::thread::sleep(Duration::from_millis(1500));
    drop(stdin);
    let out = child.wait_with_output().expect("exit");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line out is JSON"))
        .collect()
}

#[test]
fn lines_that_are_not_messages_are_answered_and_the_session_goes_on() {
    let input = [
        "not json".to_owned(),
        json!({"foo": 1, "id": 9}).to_string(),
        json!([{"jsonrpc": "2.0", "id": 5, "method": "ping"}]).to_string(),
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"".to_owned(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string(),
    ];
    let answers = stdio_answers(&input);
    let by_id = |id: Value| {
        answers
            .iter()
            .filter(|a| a["id"] == id)
            .cloned()
            .collect::<Vec<_>>()
    };
    let nulls = by_id(Value::Null);
    let codes: Vec<i64> = nulls
        .iter()
        .map(|a| a["error"]["code"].as_i64().expect("an error"))
        .collect();
    assert_eq!(codes, [-32700, -32600, -32700], "{answers:?}");
    assert!(
        nulls
            .iter()
            .all(|a| a.as_object().is_some_and(|o| o.contains_key("id")))
    );
    assert_eq!(by_id(json!(9))[0]["error"]["code"], -32600);
    assert_eq!(
        by_id(json!(1))[0]["result"]["serverInfo"]["name"],
        "connecta"
    );
    assert_eq!(by_id(json!(3))[0]["result"], json!({}), "{answers:?}");
    assert!(by_id(json!(5)).is_empty(), "a batch element was run");
}

#[test]
fn tools_call_with_params_of_the_wrong_shape_is_invalid_params() {
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": 7}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "skills", "arguments": [1]}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"}),
    ]
    .map(|m| m.to_string());
    let answers = stdio_answers(&input);
    let code = |id: i64| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .map(|a| a["error"]["code"].clone())
            .unwrap_or_else(|| panic!("no answer to {id}: {answers:?}"))
    };
    assert_eq!(code(2), -32602, "{answers:?}");
    assert_eq!(code(3), -32602, "{answers:?}");
    assert_eq!(
        code(4),
        -32601,
        "an unknown method stays -32601: {answers:?}"
    );
}
