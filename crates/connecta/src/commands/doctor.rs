//! `connecta doctor`: check a running deployment end to end — health, the
//! tool list, a search, one read-only call — and say plainly what is wrong.

use std::process::ExitCode;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

const EXPECTED_TOOLS: &[&str] = &[
    "execute_code",
    "search_tools",
    "call_tool",
    "call_destructive_tool",
    "authorize_connector",
    "get_result",
    "skills",
];

struct Report {
    problems: usize,
}

impl Report {
    fn ok(&self, what: &str) {
        println!("ok    {what}");
    }
    fn warn(&self, what: &str) {
        println!("warn  {what}");
    }
    fn fail(&mut self, what: &str) {
        self.problems += 1;
        println!("FAIL  {what}");
    }
}

pub async fn run(url: &str, token: Option<&str>) -> anyhow::Result<ExitCode> {
    let base = url
        .trim_end_matches('/')
        .trim_end_matches("/mcp")
        .to_owned();
    let mut r = Report { problems: 0 };
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()?;

    match http.get(format!("{base}/health")).send().await {
        Ok(resp) if resp.status().is_success() => {
            let health: Value = resp.json().await.unwrap_or(Value::Null);
            let connectors = health["connectors"].as_array().cloned().unwrap_or_default();
            r.ok(&format!(
                "health: {} (version {}, store {}, {} connector{})",
                health["status"].as_str().unwrap_or("?"),
                health["version"].as_str().unwrap_or("?"),
                health["store"].as_str().unwrap_or("?"),
                connectors.len(),
                if connectors.len() == 1 { "" } else { "s" }
            ));
            for c in connectors {
                let id = c["id"].as_str().unwrap_or("?");
                let state = c["state"].as_str().unwrap_or("?");
                let tools = c["catalog"]["tools"].as_u64();
                match (state, tools) {
                    ("ready", Some(n)) => r.ok(&format!("connector {id}: ready, {n} tools")),
                    ("idle", _) => r.ok(&format!(
                        "connector {id}: not started yet (starts on first use)"
                    )),
                    (_, Some(n)) if c["catalogError"].is_null() => {
                        r.ok(&format!("connector {id}: {state}, {n} tools cached"))
                    }
                    _ => {
                        let why = c["catalogError"]
                            .as_str()
                            .or(c["lastError"].as_str())
                            .unwrap_or("no catalog yet");
                        r.fail(&format!("connector {id}: {state} — {why}"));
                    }
                }
            }
        }
        Ok(resp) => r.fail(&format!(
            "health: {base}/health answered HTTP {}",
            resp.status()
        )),
        Err(e) => {
            r.fail(&format!(
                "health: cannot reach {base}/health ({e}); is connecta running there?"
            ));
            return Ok(ExitCode::FAILURE);
        }
    }

    let mut cfg = StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp"));
    if let Some(t) = token {
        cfg = cfg.auth_header(t.to_owned());
    }
    let client = match tokio::time::timeout(
        Duration::from_secs(15),
        ().serve(StreamableHttpClientTransport::from_config(cfg)),
    )
    .await
    {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            let msg = e.to_string();
            if msg.contains("401") || msg.to_lowercase().contains("auth") {
                r.fail("mcp: the gateway refused the connection: it needs a bearer token (pass --token or set CONNECTA_TOKEN)");
            } else {
                r.fail(&format!(
                    "mcp: could not initialize a session at {base}/mcp: {msg}"
                ));
            }
            return Ok(ExitCode::FAILURE);
        }
        Err(_) => {
            r.fail(&format!(
                "mcp: {base}/mcp did not answer initialize within 15 s"
            ));
            return Ok(ExitCode::FAILURE);
        }
    };
    match client.list_all_tools().await {
        Ok(tools) => {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
            let missing: Vec<&&str> = EXPECTED_TOOLS
                .iter()
                .filter(|t| !names.contains(t))
                .collect();
            if missing.is_empty() {
                r.ok(&format!("tools/list: {}", names.join(", ")));
            } else {
                r.fail(&format!(
                    "tools/list: missing {missing:?} (got {names:?}); is this a connecta gateway?"
                ));
            }
        }
        Err(e) => r.fail(&format!("tools/list failed: {e}")),
    }

    let search = call(
        &client,
        "search_tools",
        json!({"safety": "readOnly", "limit": 100, "includeSchemas": "json"}),
    )
    .await;
    let candidate = match search {
        Ok(v) => {
            let tools = v["tools"].as_array().cloned().unwrap_or_default();
            if tools.is_empty() {
                r.fail("search_tools: no read-only tools are reachable (are the connectors up and their tools annotated readOnlyHint?)");
                None
            } else {
                r.ok(&format!(
                    "search_tools: {} read-only tools reachable",
                    v["total"]
                ));
                if let Some(u) = v["unavailable"]
                    .as_array()
                    .or(v["unavailableConnectors"].as_array())
                {
                    for c in u {
                        r.warn(&format!(
                            "search_tools: connector {} could not be searched",
                            c["connector"]
                        ));
                    }
                }
                tools.into_iter().find(|t| {
                    t["inputSchema"]["required"]
                        .as_array()
                        .is_none_or(|req| req.is_empty())
                })
            }
        }
        Err(e) => {
            r.fail(&format!("search_tools failed: {e}"));
            None
        }
    };
    match candidate {
        Some(tool) => {
            let address = tool["address"].as_str().unwrap_or_default().to_owned();
            match call(
                &client,
                "call_tool",
                json!({"address": address, "fields": ["__doctor_probe__"]}),
            )
            .await
            {
                Ok(_) => r.ok(&format!("call_tool: {address} answered")),
                Err(e) => r.fail(&format!("call_tool {address}: {e}")),
            }
        }
        None => r.warn("call_tool: skipped (no read-only tool without required arguments to try)"),
    }
    let _ = client.cancel().await;
    if r.problems == 0 {
        println!("connecta at {base} looks healthy");
        Ok(ExitCode::SUCCESS)
    } else {
        println!(
            "{} problem{} found",
            r.problems,
            if r.problems == 1 { "" } else { "s" }
        );
        Ok(ExitCode::FAILURE)
    }
}

/// Call a meta-tool and return its structured value, or its error as text.
async fn call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    name: &str,
    args: Value,
) -> Result<Value, String> {
    let Value::Object(args) = args else {
        return Err("arguments must be an object".into());
    };
    let result = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .map_err(|e| e.to_string())?;
    let value = result.structured_content.clone().unwrap_or(Value::Null);
    if result.is_error == Some(true) {
        let e = &value["error"];
        return Err(format!(
            "{}: {}",
            e["code"].as_str().unwrap_or("error"),
            e["message"].as_str().unwrap_or("")
        ));
    }
    Ok(value)
}
