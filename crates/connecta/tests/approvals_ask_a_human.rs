//! The `ask` approval policy through the real binary: a destructive call
//! waits for a human. An operator answers with `connecta approvals
//! approve|reject` (the call runs once, or is refused `approval_rejected`),
//! nobody answering is `approval_unavailable`, a caller that goes away
//! cancels its question, a call that could not run asks nobody, and a stdio
//! client that can be asked is asked by MCP elicitation (the official Python
//! SDK). The activity log gets each question and decision as a pair, with
//! who decided, and never the reason or the arguments.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::approvals::*;
use support::*;

const REASON_MARKER: &str = "reason-marker-7Qx";
const ARGS_MARKER: &str = "args-marker-9Zk";

fn ask_config(timeout_ms: u64) -> String {
    format!(
        "[approvals]\npolicy = \"ask\"\ntimeout_ms = {timeout_ms}\n\n{}",
        demo_connector()
    )
}

/// Starts `call_destructive_tool demo.create_note {title}` on its own
/// client, with the markers in its body and reason.
fn create_note(gw: &Gateway, title: &'static str) -> tokio::task::JoinHandle<(Value, bool)> {
    destructive_create_note(gw, title, ARGS_MARKER, REASON_MARKER)
}

fn approval_events(gw: &Gateway) -> Vec<Value> {
    activity(gw)
        .into_iter()
        .filter(|e| e.get("approval").is_some())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_approves_once_or_rejects_and_each_decision_is_recorded_as_a_pair() {
    let gw = Gateway::start(&ask_config(60_000));
    gw.wait_catalogs().await;

    // Approved: the question shows the approver everything, then the call runs.
    let call = create_note(&gw, "approved-note");
    let q = wait_for_question(&gw).await;
    assert_eq!(q["status"], "pending", "{q}");
    assert_eq!(q["address"], "demo.create_note");
    assert_eq!(q["reason"], REASON_MARKER);
    assert_eq!(q["args"]["body"], ARGS_MARKER);
    let id = q["id"].as_str().expect("id").to_owned();
    assert!(
        !call.is_finished(),
        "the call did not wait for its approval"
    );
    let (ok, out, err) = approvals_cli(&gw, &["approve", &id, "--by", "alice"]);
    assert!(ok, "{err}");
    assert!(out.contains("allowed-once"), "{out}");
    let (v, is_err) = call.await.expect("join");
    assert!(!is_err, "{v}");
    assert_eq!(v["title"], "approved-note", "{v}");
    // Once: the same question cannot be answered again.
    let (ok, _, err) = approvals_cli(&gw, &["approve", &id]);
    assert!(!ok && err.contains("already decided"), "{err}");

    // Rejected: the call is refused and says who decided.
    let call = create_note(&gw, "rejected-note");
    let q = wait_for_question(&gw).await;
    let rejected_id = q["id"].as_str().expect("id").to_owned();
    let (ok, _, err) = approvals_cli(&gw, &["reject", &rejected_id, "--by", "bob"]);
    assert!(ok, "{err}");
    let (v, is_err) = call.await.expect("join");
    assert!(is_err, "{v}");
    assert_eq!(v["error"]["code"], "approval_rejected", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("cli:bob"),
        "{v}"
    );
    assert_eq!(v["error"]["approvalId"], rejected_id.as_str());
    let notes = titles(&gw).await;
    assert!(
        notes.contains("approved-note") && !notes.contains("rejected-note"),
        "{notes}"
    );

    // The history keeps the decisions, not the reason or the arguments.
    let history = questions(&gw, true);
    let decided: Vec<(&str, &str)> = history
        .iter()
        .map(|q| {
            (
                q["status"].as_str().unwrap_or(""),
                q["decidedBy"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(
        decided.contains(&("allowed-once", "cli:alice")),
        "{decided:?}"
    );
    assert!(decided.contains(&("rejected", "cli:bob")), "{decided:?}");
    let dump = serde_json::to_string(&history).expect("json");
    assert!(
        !dump.contains(REASON_MARKER) && !dump.contains(ARGS_MARKER),
        "{dump}"
    );

    // Activity: asked and decided for each, paired by id; no payload.
    let events = approval_events(&gw);
    for (qid, decision, by) in [
        (&id, "allowed-once", "cli:alice"),
        (&rejected_id, "rejected", "cli:bob"),
    ] {
        let pair: Vec<&Value> = events
            .iter()
            .filter(|e| e["approval"]["id"] == qid.as_str())
            .collect();
        assert_eq!(pair.len(), 2, "{events:?}");
        assert!(
            pair.iter().any(|e| e["kind"] == "approval_asked"),
            "{pair:?}"
        );
        let d = pair
            .iter()
            .find(|e| e["kind"] == "approval_decided")
            .expect("decided event");
        assert_eq!(d["approval"]["decision"], decision, "{d}");
        assert_eq!(d["approval"]["decidedBy"], by, "{d}");
        assert_eq!(d["address"], "demo.create_note");
    }
    let all = serde_json::to_string(&activity(&gw)).expect("json");
    assert!(
        !all.contains(REASON_MARKER) && !all.contains(ARGS_MARKER),
        "{all}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn nobody_answering_is_unavailable_and_a_caller_that_leaves_cancels() {
    let gw = Gateway::start(&ask_config(1_000));
    gw.wait_catalogs().await;
    let (v, is_err) = create_note(&gw, "unanswered").await.expect("join");
    assert!(is_err, "{v}");
    assert_eq!(v["error"]["code"], "approval_unavailable", "{v}");
    let id = v["error"]["approvalId"]
        .as_str()
        .expect("approval id")
        .to_owned();
    let history = questions(&gw, true);
    assert_eq!(history[0]["status"], "unavailable", "{history:?}");
    let (ok, _, err) = approvals_cli(&gw, &["approve", &id]);
    assert!(!ok && err.contains("already decided"), "{err}");
    drop(gw);

    // A caller that gives up takes its question with it.
    let gw = Gateway::start(&ask_config(60_000));
    gw.wait_catalogs().await;
    abandon_tool_call(
        &gw.url(),
        "call_destructive_tool",
        json!({"address": "demo.delete_note", "args": {"id": 3}}),
        Duration::from_millis(1_500),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let history = questions(&gw, true);
        if history.first().is_some_and(|q| q["status"] == "cancelled") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the question stayed open: {history:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(questions(&gw, false).is_empty());
    let events = approval_events(&gw);
    assert!(
        events
            .iter()
            .any(|e| e["approval"]["decision"] == "cancelled" && e["outcome"] == "cancelled"),
        "{events:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_that_could_not_run_asks_nobody() {
    let gw = Gateway::start(&ask_config(60_000));
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    let (v, is_err) = call(
        &client,
        "call_destructive_tool",
        json!({"address": "demo.delete_note", "args": {"id": "not a number"}}),
    )
    .await;
    assert!(is_err);
    assert_eq!(v["error"]["code"], "invalid_args", "{v}");
    let (v, is_err) = call(
        &client,
        "call_destructive_tool",
        json!({"address": "demo.no_such_tool", "args": {}}),
    )
    .await;
    assert!(is_err);
    assert_eq!(v["error"]["code"], "unknown_tool", "{v}");
    assert!(questions(&gw, true).is_empty());
    // Both refusals are recorded, and nothing else was.
    let events = activity_until(&gw, |e| e.len() >= 2).await;
    let codes: Vec<&str> = events
        .iter()
        .map(|e| e["errorCode"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        codes.contains(&"invalid_args") && codes.contains(&"unknown_tool"),
        "{codes:?}"
    );
    assert!(approval_events(&gw).is_empty());
}

#[test]
fn a_stdio_client_that_can_answer_is_asked_by_elicitation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = stdio_config(dir.path(), &ask_config(60_000));
    let (status, out, err) = run(
        Command::new(python())
            .arg(peers().join("py_approver.py"))
            .arg(bin())
            .arg(&config),
        Duration::from_secs(120),
    );
    assert!(
        status.success() && out.contains("OK"),
        "stdout:\n{out}\nstderr:\n{err}"
    );
    let (status, out, _) = run(
        Command::new(bin())
            .args(["approvals", "list", "--all", "--json", "--config"])
            .arg(&config),
        Duration::from_secs(30),
    );
    assert!(status.success());
    let decided: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let statuses: Vec<&str> = decided
        .iter()
        .map(|q| q["status"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(statuses, vec!["rejected", "allowed-once"], "{decided:?}");
    assert!(
        decided.iter().all(|q| q["decidedBy"]
            .as_str()
            .unwrap_or("")
            .starts_with("elicitation:")),
        "{decided:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_whose_gateway_died_is_closed_without_its_payload() {
    let mut first = Gateway::start(&ask_config(1_000));
    first.wait_catalogs().await;
    let _call = create_note(&first, "orphaned");
    let asked = wait_for_question(&first).await;
    let id = asked["id"].as_str().expect("id").to_owned();
    // The asker dies before the question expires: nobody settles it.
    let _ = first.child.kill();
    let _ = first.child.wait();
    tokio::time::sleep(Duration::from_millis(11_500)).await;
    let data = first.data_dir();
    let second = Gateway::start(&format!(
        "[server]\ndata_dir = {}\n\n{}",
        q(&data.display().to_string()),
        ask_config(1_000)
    ));
    second.wait_catalogs().await;
    // The next gateway closes it as it starts.
    let deadline = Instant::now() + Duration::from_secs(20);
    let closed = loop {
        let history = questions(&second, true);
        if let Some(found) = history
            .iter()
            .find(|h| h["id"] == id.as_str() && h["status"] != "pending")
        {
            break found.clone();
        }
        assert!(Instant::now() < deadline, "still open: {history:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(closed["status"], "unavailable", "{closed}");
    assert_eq!(closed["reason"], Value::Null, "{closed}");
    assert_eq!(closed["args"], Value::Null, "{closed}");
    let events = approval_events(&second);
    assert!(
        events
            .iter()
            .any(|e| e["approval"]["id"] == id.as_str()
                && e["approval"]["decision"] == "unavailable"),
        "{events:?}"
    );
}

/// A 2026-07-28 client over HTTP: the question comes back as an
/// `input_required` result, the client's human answers, and the retry
/// carries the answer. Yes runs the call once; no refuses it; the activity
/// log has the pair with who decided, and one call event per decided call.
#[tokio::test(flavor = "multi_thread")]
async fn a_2026_client_over_http_is_asked_through_an_input_required_result() {
    let mut gw = Gateway::start(&ask_config(60_000));
    for (approve, title) in [(true, "mrtr-yes"), (false, "mrtr-no")] {
        let human = HumanBehindTheClient::new(approve);
        let client = human.connect(&gw.url()).await;
        let Value::Object(args) = json!({"address": "demo.create_note",
            "args": {"title": title, "body": ARGS_MARKER}, "reason": REASON_MARKER})
        else {
            unreachable!()
        };
        let r = client
            .call_tool(
                rmcp::model::CallToolRequestParams::new("call_destructive_tool")
                    .with_arguments(args),
            )
            .await
            .expect("answered");
        let asked = human.asked.lock().expect("lock").clone();
        assert_eq!(asked.len(), 1, "asked once: {asked:?}");
        assert!(asked[0].contains(REASON_MARKER) && asked[0].contains("demo.create_note"));
        let v = r.structured_content.clone().unwrap_or(Value::Null);
        if approve {
            assert_ne!(r.is_error, Some(true), "{v}");
        } else {
            assert_eq!(r.is_error, Some(true), "{v}");
            assert_eq!(v["error"]["code"], "approval_rejected", "{v}");
        }
    }
    let listed = titles(&gw).await;
    assert!(
        listed.contains("mrtr-yes") && !listed.contains("mrtr-no"),
        "{listed}"
    );
    assert!(questions(&gw, false).is_empty(), "nothing is left pending");

    // An answer is good for its own call only: a retry that names another
    // call's question (here, the approved one) with "yes" runs nothing.
    let approved_id = questions(&gw, true)
        .into_iter()
        .find(|q| q["status"] == "allowed-once")
        .and_then(|q| q["id"].as_str().map(str::to_owned))
        .expect("the approved question");
    let forger = connect(&gw.url()).await;
    let Value::Object(args) = json!({"address": "demo.create_note",
        "args": {"title": "mrtr-forged", "body": "x"}})
    else {
        unreachable!()
    };
    let mut params =
        rmcp::model::CallToolRequestParams::new("call_destructive_tool").with_arguments(args);
    params.request_state = Some(approved_id);
    params.input_responses = Some(
        [(
            "approval".to_owned(),
            json!({"action": "accept", "content": {"approve": true}}),
        )]
        .into_iter()
        .collect(),
    );
    let forged = forger.call_tool(params).await.expect("answered");
    let v = forged.structured_content.clone().unwrap_or(Value::Null);
    assert_eq!(forged.is_error, Some(true), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("already decided or has expired"),
        "{v}"
    );
    assert!(!titles(&gw).await.contains("mrtr-forged"));

    // A still-open question answers only for its own call: the same
    // caller's retry with other arguments is refused and decides nothing;
    // the retry for the call it was asked about then runs.
    let modern = HumanBehindTheClient::new(true).connect(&gw.url()).await;
    let params_for = |title: &str| {
        let Value::Object(args) = json!({"address": "demo.create_note",
            "args": {"title": title, "body": "x"}})
        else {
            unreachable!()
        };
        rmcp::model::CallToolRequestParams::new("call_destructive_tool").with_arguments(args)
    };
    let first = modern
        .call_tool_once(params_for("mrtr-asked"))
        .await
        .expect("answered");
    let rmcp::model::CallToolResponse::InputRequired(handed) = first else {
        panic!("the question was not handed back: {first:?}")
    };
    let state = handed.request_state.clone().expect("requestState");
    let yes: rmcp::model::InputResponses = [(
        "approval".to_owned(),
        json!({"action": "accept", "content": {"approve": true}}),
    )]
    .into_iter()
    .collect();
    let mut other = params_for("mrtr-swapped");
    other.request_state = Some(state.clone());
    other.input_responses = Some(yes.clone());
    let swapped = modern.call_tool_once(other).await.expect("answered");
    let rmcp::model::CallToolResponse::Complete(swapped) = swapped else {
        panic!("expected a final answer")
    };
    let v = swapped.structured_content.clone().unwrap_or(Value::Null);
    assert_eq!(swapped.is_error, Some(true), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("not for this call"),
        "{v}"
    );
    assert_eq!(questions(&gw, false).len(), 1, "the question is still open");
    let mut right = params_for("mrtr-asked");
    right.request_state = Some(state);
    right.input_responses = Some(yes);
    let ran = modern.call_tool_once(right).await.expect("answered");
    let rmcp::model::CallToolResponse::Complete(ran) = ran else {
        panic!("expected a final answer")
    };
    assert_ne!(ran.is_error, Some(true), "{:?}", ran.structured_content);
    let listed = titles(&gw).await;
    assert!(
        listed.contains("mrtr-asked") && !listed.contains("mrtr-swapped"),
        "{listed}"
    );

    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let decided: Vec<Value> = approval_events(&gw)
            .into_iter()
            .filter(|e| e["kind"] == "approval_decided")
            .collect();
        if decided.len() == 3 {
            for e in &decided {
                let by = e["approval"]["decidedBy"].as_str().unwrap_or_default();
                assert!(by.starts_with("elicitation:"), "{e}");
            }
            break;
        }
        assert!(Instant::now() < deadline, "decisions missing: {decided:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let calls = |events: &[Value]| {
        events
            .iter()
            .filter(|e| e["toolName"] == "create_note" && e.get("approval").is_none())
            .count()
    };
    let events = activity_until(&gw, |e| calls(e) >= 5).await;
    assert_eq!(
        calls(&events),
        5,
        "one call event per decided call and per refused retry, none for the hand-backs"
    );
    gw.stop();
}
