//! A streamable HTTP downstream with sessions and event-stream answers (the
//! official Python SDK's default), through the binary: calls on its session
//! are posted without rmcp's client service (`connectors/src/mcp/direct.rs`),
//! and keep what rmcp did for them: a request the downstream sends in the
//! middle of a call is answered, a call its caller gave up on is cancelled
//! downstream, an answer whose event stream closed early is picked up with
//! `Last-Event-ID`, and a session the downstream forgot is set up again
//! without losing the call.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

/// `py_elicit_server.py` over HTTP, a gateway fronting it as `asker`, and
/// a client of the gateway.
async fn asker() -> (HttpPeer, Gateway, Client) {
    let peer = HttpPeer::start("py_elicit_server.py", &[]).await;
    let gw = Gateway::start(&format!(
        "[[connector]]\nid = \"asker\"\nurl = {}\n",
        q(&peer.url())
    ));
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;
    (peer, gw, c)
}

async fn cancellations(c: &Client) -> Value {
    let (v, err) = call(
        c,
        "call_tool",
        json!({"address": "asker.cancellations", "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{v}");
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn e2_over_http_a_downstream_that_asks_for_input_mid_call_is_input_required_unsupported() {
    let (_peer, _gw, c) = asker().await;
    a_mid_call_question_fails_and_the_connector_goes_on(&c, "asker").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_that_times_out_is_cancelled_downstream() {
    let (_peer, _gw, c) = asker().await;
    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "asker.wait", "args": {}, "timeoutMs": 300}),
    )
    .await;
    assert!(err, "{v}");
    assert_eq!(v["error"]["code"], "timeout", "{v}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let counts = cancellations(&c).await;
        if counts["cancelled"] == 1 && counts["running"] == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the downstream never heard the call was cancelled: {counts}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_downstream_restarted_in_place_answers_the_next_call_on_a_new_session() {
    let (peer, _gw, c) = asker().await;
    let port = peer.port;
    greets(&c, "asker", "Ana").await;
    // The new process knows no session: it answers the gateway's old
    // session id with HTTP 404, and the call is made on a new one.
    drop(peer);
    let _peer = HttpPeer::start_on(port, "py_elicit_server.py", &[]).await;
    greets(&c, "asker", "Bo").await;
    greets(&c, "asker", "Cy").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_whose_event_stream_closed_early_is_picked_up_by_last_event_id() {
    let (_peer, _gw, c) = asker().await;
    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "asker.drop_stream", "args": {}, "timeoutMs": 10000}),
    )
    .await;
    assert!(!err, "{v}");
    assert!(
        v.to_string().contains("answered after the stream closed"),
        "{v}"
    );
}
