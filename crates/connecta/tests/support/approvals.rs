//! Shared by the approval tests: the `connecta approvals` CLI, and a
//! 2026-07-28 client whose human answers the questions it is handed.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Gateway, bin, call, connect, run};

/// `connecta approvals ARGS --config <the gateway's>`: (ok, stdout, stderr).
pub fn approvals_cli(gw: &Gateway, args: &[&str]) -> (bool, String, String) {
    let (status, out, err) = run(
        Command::new(bin())
            .arg("approvals")
            .args(args)
            .arg("--config")
            .arg(&gw.config_path),
        Duration::from_secs(30),
    );
    (status.success(), out, err)
}

/// The questions `approvals list --json` shows (`--all` with `all`).
pub fn questions(gw: &Gateway, all: bool) -> Vec<Value> {
    let mut args = vec!["list", "--json"];
    if all {
        args.push("--all");
    }
    let (ok, out, err) = approvals_cli(gw, &args);
    assert!(ok, "{err}");
    out.lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

/// The first pending question, once there is one.
pub async fn wait_for_question(gw: &Gateway) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(q) = questions(gw, false).into_iter().next() {
            return q;
        }
        assert!(Instant::now() < deadline, "no question was asked");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A 2026-07-28 client (rmcp's, which drives multi round-trip requests
/// through its `ClientHandler`) whose human answers every form with
/// `approve`, and remembers what it was asked.
#[derive(Clone)]
pub struct HumanBehindTheClient {
    pub approve: bool,
    pub asked: Arc<Mutex<Vec<String>>>,
}

impl HumanBehindTheClient {
    pub fn new(approve: bool) -> Self {
        HumanBehindTheClient {
            approve,
            asked: Arc::default(),
        }
    }

    /// Connects to `url` with `server/discover` (MCP 2026-07-28).
    pub async fn connect(
        &self,
        url: &str,
    ) -> rmcp::service::RunningService<rmcp::RoleClient, HumanBehindTheClient> {
        rmcp::service::serve_client_with_lifecycle(
            self.clone(),
            rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned()),
            rmcp::service::ClientLifecycleMode::Auto {
                preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
                legacy_version: None,
            },
        )
        .await
        .expect("connects with server/discover")
    }
}

impl rmcp::ClientHandler for HumanBehindTheClient {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::builder()
                .enable_elicitation()
                .build(),
            rmcp::model::Implementation::new("approver", "1.0.0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        if let rmcp::model::ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().expect("lock").push(message);
        }
        Ok(
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(json!({"approve": self.approve})),
        )
    }
}

/// The titles of the demo's notes, as `demo.list_notes` lists them.
pub async fn titles(gw: &Gateway) -> String {
    let client = connect(&gw.url()).await;
    let (v, is_err) = call(
        &client,
        "call_tool",
        json!({"address": "demo.list_notes", "args": {}}),
    )
    .await;
    assert!(!is_err, "{v}");
    v.to_string()
}
