//! JSON-RPC framing at `/mcp` through the real binary: a body that is not
//! JSON, or not a JSON-RPC message, is HTTP 400 with a JSON-RPC error (not
//! rmcp's plain-text 415); a batch is answered under the protocol versions
//! that have batches and refused as an invalid request under later ones;
//! the checks of one message (content type, Origin, Accept, size) hold for
//! a batch too. A client that accepts only one of JSON and an event stream
//! (or says nothing) is answered in a form it reads.

mod support;

use serde_json::{Value, json};
use support::*;

async fn post_raw(
    gw: &Gateway,
    body: &str,
    headers: &[(&str, &str)],
) -> (u16, Option<String>, String) {
    let mut req = reqwest::Client::new()
        .post(gw.url())
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(body.to_owned());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.expect("answered");
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (status, ct, resp.text().await.expect("body"))
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

const V0618: (&str, &str) = ("MCP-Protocol-Version", "2025-06-18");
const V0326: (&str, &str) = ("MCP-Protocol-Version", "2025-03-26");

#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_is_not_a_json_rpc_message_is_a_400_json_rpc_error() {
    let gw = Gateway::start(&demo_connector());

    let (status, ct, text) = post_raw(&gw, "{bad", &[V0618]).await;
    assert_eq!(status, 400, "{text}");
    assert_eq!(ct.as_deref(), Some("application/json"));
    let v = json_of(&text);
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], Value::Null);
    assert_eq!(v["error"]["code"], -32700, "{v}");

    let (status, _, text) = post_raw(&gw, r#"{"foo": 1}"#, &[V0618]).await;
    assert_eq!(status, 400, "{text}");
    let v = json_of(&text);
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert_eq!(v["id"], Value::Null);

    // No "jsonrpc": still invalid, and the error carries the id it could read.
    let (status, _, text) = post_raw(&gw, r#"{"id": 5, "method": "ping"}"#, &[V0618]).await;
    assert_eq!(status, 400, "{text}");
    let v = json_of(&text);
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert_eq!(v["id"], 5);

    // Messages rmcp cannot read for want of a valid id or params shape are
    // invalid requests too, never a plain-text 415.
    for body in [
        r#"{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}"#,
        r#"{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}"#,
        r#"{"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": [1]}"#,
    ] {
        let (status, ct, text) = post_raw(&gw, body, &[V0618]).await;
        assert_eq!(status, 400, "{body}: {text}");
        assert_eq!(ct.as_deref(), Some("application/json"), "{body}");
        assert_eq!(json_of(&text)["error"]["code"], -32600, "{body}: {text}");
    }

    // rmcp's plain-text refusal of a protocol version becomes a JSON-RPC
    // error with the same words.
    let (status, ct, text) = post_raw(
        &gw,
        r#"{"jsonrpc": "2.0", "id": 4, "method": "ping"}"#,
        &[("MCP-Protocol-Version", "1999-01-01")],
    )
    .await;
    assert_eq!(status, 400, "{text}");
    assert_eq!(ct.as_deref(), Some("application/json"));
    let v = json_of(&text);
    assert_eq!(v["id"], 4, "{v}");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("1999-01-01"),
        "{v}"
    );

    // A well-formed message is untouched, unknown method included.
    let (status, _, text) = post_raw(
        &gw,
        r#"{"jsonrpc": "2.0", "id": 6, "method": "no/such"}"#,
        &[V0618],
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], -32601);
    let (status, _, text) = post_raw(
        &gw,
        r#"{"jsonrpc": "2.0", "id": 7, "method": "ping"}"#,
        &[V0618],
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        json_of(&text),
        json!({"jsonrpc": "2.0", "id": 7, "result": {}})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_is_answered_in_order_under_2025_03_26_and_without_a_version() {
    let gw = Gateway::start(&demo_connector());
    let batch = r#"[
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"foo": 2},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/call",
         "params": {"name": "search_tools", "arguments": {"query": "delete a note"}}}
    ]"#;
    for headers in [&[V0326][..], &[][..]] {
        let (status, ct, text) = post_raw(&gw, batch, headers).await;
        assert_eq!(status, 200, "{text}");
        assert_eq!(ct.as_deref(), Some("application/json"));
        let v = json_of(&text);
        let answers = v.as_array().expect("an array answer");
        assert_eq!(answers.len(), 3, "the notification has no answer: {v}");
        assert_eq!(answers[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        assert_eq!(answers[1]["error"]["code"], -32600, "{v}");
        assert_eq!(answers[1]["id"], Value::Null);
        assert_eq!(answers[2]["id"], "b");
        let page = answers[2]["result"]["structuredContent"].to_string();
        assert!(page.contains("demo.delete_note"), "{page}");
    }

    // Nothing that expects an answer: 202, as for one notification.
    let (status, _, text) = post_raw(
        &gw,
        r#"[{"jsonrpc": "2.0", "method": "notifications/initialized"}]"#,
        &[V0326],
    )
    .await;
    assert_eq!(status, 202, "{text}");
    assert!(text.is_empty(), "{text}");

    // initialize may not be batched; a response element gets its own error.
    let (status, _, text) = post_raw(
        &gw,
        r#"[{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
              "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "id": 9, "result": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"}]"#,
        &[V0326],
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let v = json_of(&text);
    let answers = v.as_array().expect("array");
    assert_eq!(answers.len(), 3, "{v}");
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[0]["error"]["code"], -32600, "{v}");
    assert!(
        answers[1]["error"].is_object() && answers[1].get("id").is_some(),
        "{v}"
    );
    assert_eq!(answers[2], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));

    let (status, _, text) = post_raw(&gw, "[]", &[V0326]).await;
    assert_eq!(status, 400, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], -32600);

    // A batch nested too deep to read is one parse error, not one per element.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (status, _, text) = post_raw(&gw, &deep, &[V0326]).await;
    assert_eq!(status, 400, "{}", &text[..text.len().min(200)]);
    assert_eq!(json_of(&text)["error"]["code"], -32700);

    let (status, _, text) = post_raw(&gw, "[{\"jsonrpc\": ", &[V0326]).await;
    assert_eq!(status, 400, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], -32700);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_is_an_invalid_request_under_versions_without_batches() {
    let gw = Gateway::start(&demo_connector());
    for version in ["2025-06-18", "2025-11-25"] {
        let (status, _, text) = post_raw(
            &gw,
            r#"[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]"#,
            &[("MCP-Protocol-Version", version)],
        )
        .await;
        assert_eq!(status, 400, "{version}: {text}");
        let v = json_of(&text);
        assert_eq!(v["error"]["code"], -32600, "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains(version),
            "{v}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_message_s_checks_hold_for_a_batch() {
    let gw = Gateway::start(&demo_connector());
    let batch = r#"[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]"#;

    let (status, _, text) = post_raw(&gw, batch, &[V0326, ("Origin", "http://evil.example")]).await;
    assert_eq!(status, 403, "{text}");

    let r = reqwest::Client::new()
        .post(gw.url())
        .header("Accept", "text/html")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2025-03-26")
        .body(batch)
        .send()
        .await
        .expect("answered");
    assert_eq!(r.status(), 406);

    // Another content type is still refused as one, whatever the body.
    for body in [batch, "{bad"] {
        let r = reqwest::Client::new()
            .post(gw.url())
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "text/plain")
            .body(body)
            .send()
            .await
            .expect("answered");
        assert_eq!(r.status(), 415, "{body}");
    }

    // The size bound holds before anything is read as a batch.
    let big = format!(
        "[{}]",
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "a".repeat(5 << 20)}})
    );
    let (status, _, text) = post_raw(&gw, &big, &[V0326]).await;
    assert_eq!(status, 413, "{}", &text[..text.len().min(200)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_reads_only_one_answer_form_gets_that_form() {
    let gw = Gateway::start(&demo_connector());
    let ping = r#"{"jsonrpc": "2.0", "id": 3, "method": "ping"}"#;
    let send = |accept: Option<&'static str>| {
        let mut req = reqwest::Client::new()
            .post(gw.url())
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", "2025-06-18")
            .body(ping);
        if let Some(a) = accept {
            req = req.header("Accept", a);
        }
        req.send()
    };
    for accept in [Some("application/json"), None, Some("*/*")] {
        let r = send(accept).await.expect("answered");
        assert_eq!(r.status(), 200, "{accept:?}");
        assert_eq!(
            r.headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("application/json"),
            "{accept:?}"
        );
        assert_eq!(
            json_of(&r.text().await.expect("body")),
            json!({"jsonrpc": "2.0", "id": 3, "result": {}})
        );
    }
    // Only an event stream: one `message` event carrying the answer.
    let r = send(Some("text/event-stream")).await.expect("answered");
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let body = r.text().await.expect("body");
    let data: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    assert!(body.starts_with("event: message\n"), "{body}");
    assert_eq!(data.len(), 1, "{body}");
    assert_eq!(
        json_of(data[0]),
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
    // Neither form (a q=0 range refuses its type): 406, saying what would do.
    for accept in ["text/html", "application/json;q=0"] {
        let r = send(Some(accept)).await.expect("answered");
        assert_eq!(r.status(), 406, "{accept}");
        let text = r.text().await.expect("body");
        assert!(
            text.contains("application/json or text/event-stream"),
            "{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_call_with_params_of_the_wrong_shape_is_invalid_params() {
    let gw = Gateway::start(&demo_connector());
    for params in [
        json!({"name": 7}),
        json!({"name": ["skills"]}),
        json!({"name": "skills", "arguments": [1]}),
        json!({"name": "skills", "arguments": "x"}),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": params});
        let (_, _, text) = post_raw(&gw, &body.to_string(), &[V0326]).await;
        let v = json_of(&text);
        assert_eq!(v["error"]["code"], -32602, "{params}: {v}");
        assert_eq!(v["id"], 11, "{v}");
    }
    let body = json!({"jsonrpc": "2.0", "id": 12, "method": "no/such/method"});
    let (_, _, text) = post_raw(&gw, &body.to_string(), &[V0326]).await;
    assert_eq!(json_of(&text)["error"]["code"], -32601, "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_response_posted_alone_is_refused_with_an_id() {
    let gw = Gateway::start(&demo_connector());
    let (status, ct, text) = post_raw(
        &gw,
        r#"{"jsonrpc": "2.0", "id": 9, "result": {}}"#,
        &[V0326],
    )
    .await;
    assert_eq!(status, 400, "{text}");
    assert_eq!(ct.as_deref(), Some("application/json"));
    let v = json_of(&text);
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert_eq!(v["id"], 9, "JSON-RPC errors carry an id: {v}");
}
