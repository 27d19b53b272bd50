//! `approvers = ["operator"]` through the real binary: under the `ask`
//! policy the calling client is never asked (no `input_required`, no
//! elicitation), a client that answers its own question anyway has that
//! call refused and recorded, and only an operator's answer decides. Per
//! connector as well as for the deployment; a list that leaves the
//! operator out is a config error.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::approvals::*;
use support::*;

fn note_args(title: &str) -> rmcp::model::CallToolRequestParams {
    let Value::Object(args) = json!({"address": "demo.create_note",
        "args": {"title": title, "body": "x"}, "reason": "testing"})
    else {
        unreachable!()
    };
    rmcp::model::CallToolRequestParams::new("call_destructive_tool").with_arguments(args)
}

/// Activity events until `pred` holds for them.
async fn events_until(gw: &Gateway, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let events = activity(gw);
        if pred(&events) {
            return events;
        }
        assert!(Instant::now() < deadline, "activity: {events:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_answering_its_own_approval_is_refused_and_recorded() {
    let gw = Gateway::start(&format!(
        "[approvals]\npolicy = \"ask\"\napprovers = [\"operator\"]\ntimeout_ms = 60000\n\n{}",
        demo_connector()
    ));
    gw.wait_catalogs().await;

    // A 2026-07-28 client that could be handed the question is not: its
    // call waits for an operator.
    let human = HumanBehindTheClient::new(true);
    let client = human.connect(&gw.url()).await;
    let waiting = tokio::spawn(async move {
        let r = client
            .call_tool_once(note_args("waits-for-an-operator"))
            .await;
        (r, client)
    });
    let q = wait_for_question(&gw).await;
    let id = q["id"].as_str().expect("id").to_owned();
    assert!(!waiting.is_finished(), "the call did not wait");

    // The caller answers its own question with "yes": refused at once, and
    // the question is still the operator's.
    let forger = HumanBehindTheClient::new(true).connect(&gw.url()).await;
    let mut forged = note_args("self-approved");
    forged.request_state = Some(id.clone());
    forged.input_responses = Some(
        [(
            "approval".to_owned(),
            json!({"action": "accept", "content": {"approve": true}}),
        )]
        .into_iter()
        .collect(),
    );
    let rmcp::model::CallToolResponse::Complete(r) =
        forger.call_tool_once(forged).await.expect("answered")
    else {
        panic!("a self-answer must not be handed a question")
    };
    let v = r.structured_content.clone().unwrap_or(Value::Null);
    assert_eq!(r.is_error, Some(true), "{v}");
    assert_eq!(v["error"]["code"], "approval_rejected", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("operator only"),
        "{v}"
    );
    assert_eq!(v["error"]["approvers"], json!(["operator"]), "{v}");
    let pending = questions(&gw, false);
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0]["id"], id.as_str());

    // The operator decides; the waiting call hears it.
    let (ok, _, err) = approvals_cli(&gw, &["reject", &id, "--by", "bob"]);
    assert!(ok, "{err}");
    let (r, _client) = waiting.await.expect("join");
    let rmcp::model::CallToolResponse::Complete(r) = r.expect("answered") else {
        panic!("the waiting call was handed a question")
    };
    let v = r.structured_content.clone().unwrap_or(Value::Null);
    assert_eq!(v["error"]["code"], "approval_rejected", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("cli:bob"),
        "{v}"
    );
    assert!(
        human.asked.lock().expect("lock").is_empty(),
        "the client was asked"
    );
    let listed = titles(&gw).await;
    assert!(
        !listed.contains("self-approved") && !listed.contains("waits-for-an-operator"),
        "{listed}"
    );

    // Activity: the refused self-answer is a call event of its own; the
    // question's pair says the operator decided.
    let events = events_until(&gw, |e| {
        e.iter()
            .any(|e| e["kind"] == "approval_decided" && e["approval"]["id"] == id.as_str())
            && e.iter()
                .filter(|e| e["toolName"] == "create_note" && e.get("approval").is_none())
                .count()
                == 2
    })
    .await;
    let calls: Vec<&Value> = events
        .iter()
        .filter(|e| e["toolName"] == "create_note" && e.get("approval").is_none())
        .collect();
    assert!(
        calls.iter().all(
            |e| e["errorCode"] == "approval_rejected" && e["source"] == "call_destructive_tool"
        ),
        "{calls:#?}"
    );
    let decided = events
        .iter()
        .find(|e| e["kind"] == "approval_decided" && e["approval"]["id"] == id.as_str())
        .expect("decided");
    assert_eq!(decided["approval"]["decidedBy"], "cli:bob", "{decided}");
    let pairs = events
        .iter()
        .filter(|e| e.get("approval").is_some_and(|a| !a.is_null()))
        .count();
    assert_eq!(pairs, 2, "one question, one decision: {events:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connector_can_require_an_operator_where_the_deployment_asks_clients_too() {
    let gw = Gateway::start(&format!(
        "[approvals]\npolicy = \"ask\"\ntimeout_ms = 60000\n\n{}approvers = [\"operator\"]\n",
        demo_connector()
    ));
    gw.wait_catalogs().await;
    let human = HumanBehindTheClient::new(true);
    let client = human.connect(&gw.url()).await;
    let waiting = tokio::spawn(async move {
        (
            client.call_tool_once(note_args("operator-said-yes")).await,
            client,
        )
    });
    let q = wait_for_question(&gw).await;
    let id = q["id"].as_str().expect("id").to_owned();
    let (ok, _, err) = approvals_cli(&gw, &["approve", &id, "--by", "alice"]);
    assert!(ok, "{err}");
    let (r, _client) = waiting.await.expect("join");
    let rmcp::model::CallToolResponse::Complete(r) = r.expect("answered") else {
        panic!("the client was handed the question")
    };
    assert_ne!(r.is_error, Some(true), "{:?}", r.structured_content);
    assert!(human.asked.lock().expect("lock").is_empty());
    assert!(titles(&gw).await.contains("operator-said-yes"));
}

#[test]
fn approvers_must_include_the_operator() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("connecta.toml");
    for (approvers, says) in [
        ("[\"client\"]", "must include \"operator\""),
        ("[]", "must include \"operator\""),
        ("[\"operator\", \"robot\"]", "not \"robot\""),
    ] {
        std::fs::write(
            &path,
            format!("[approvals]\npolicy = \"ask\"\napprovers = {approvers}\n"),
        )
        .expect("write");
        let (status, out, err) = run(
            std::process::Command::new(bin())
                .arg("check")
                .arg("--config")
                .arg(&path),
            Duration::from_secs(30),
        );
        let said = format!("{out}{err}");
        assert!(!status.success(), "{approvers}: {said}");
        assert!(
            said.contains(says) && said.contains(":3:"),
            "{approvers}: {said}"
        );
    }
}
