//! A whole `run` against a stand-in gateway: this test binary, started by
//! the driver through the launcher protocol with `--fake-gateway`, serves
//! `search_tools` and `call_tool` over a synthetic catalog (no
//! `execute_code`). A second stand-in (`--fake-gateway liar`) answers every
//! call with the wrong value. The run must measure the first, count every
//! call of the second as an error, skip code mode with a reason, measure
//! the downstream alone and through the TCP and HTTP relays, and write
//! both report files.
//!
//! The stand-in exists only to exercise the driver; its timings mean
//! nothing and no report from it is kept.

use std::sync::Arc;

use connecta_bench::launcher::{ENV_CONNECTORS, ENV_TOOLS_PER_CONNECTOR, Ready, shell_quote};
use connecta_bench::measure::{Driver, TargetSpec};
use connecta_bench::plan::{Plan, Shape};
use connecta_bench::run::{RunOptions, run};
use connecta_bench::synthetic::catalog::parse_tool_name;
use connecta_bench::synthetic::{self, ConnectorCatalog, SyntheticConnector};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Value, json};

#[derive(Clone)]
struct FakeGateway {
    catalogs: Arc<Vec<Arc<ConnectorCatalog>>>,
    liar: bool,
}

fn meta_tool(name: &'static str) -> Tool {
    let schema = json!({"type": "object"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    Tool::new(name, "stand-in", Arc::new(schema))
}

impl FakeGateway {
    fn search(&self, query: &str) -> CallToolResult {
        let words: Vec<String> = query
            .to_lowercase()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let mut matches = Vec::new();
        for catalog in self.catalogs.iter() {
            for t in 0..catalog.len() {
                let name = synthetic::tool_name(t);
                let Some(tool) = catalog.tool(&name) else {
                    continue;
                };
                let text = tool
                    .description
                    .as_deref()
                    .unwrap_or_default()
                    .to_lowercase();
                if words.iter().all(|w| text.contains(w.as_str())) {
                    matches.push(json!({"address": synthetic::address(catalog.index, t)}));
                }
            }
        }
        let total = matches.len();
        matches.truncate(10);
        CallToolResult::structured(json!({"matches": matches, "total": total}))
    }

    fn call(&self, args: &serde_json::Map<String, Value>) -> CallToolResult {
        let address = args
            .get("address")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let found = address.split_once('.').and_then(|(connector, tool)| {
            let c: usize = connector.strip_prefix("connector_")?.parse().ok()?;
            let catalog = self.catalogs.get(c)?;
            let t = parse_tool_name(tool).filter(|&t| t < catalog.len())?;
            Some((catalog.clone(), t))
        });
        match found {
            Some(_) if self.liar => CallToolResult::structured(json!({"value": -1})),
            Some((catalog, t)) => SyntheticConnector::new(catalog)
                .lookup(t, args.get("args").and_then(Value::as_object)),
            None => CallToolResult::structured_error(json!({"error": {"code": "unknown_address"}})),
        }
    }
}

impl ServerHandler for FakeGateway {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions("Stand-in gateway for connecta-bench's own tests.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            meta_tool("search_tools"),
            meta_tool("call_tool"),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        match request.name.as_ref() {
            "search_tools" => Ok(self
                .search(
                    args.get("query")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                )
                .into()),
            "call_tool" => Ok(self.call(&args).into()),
            other => Err(ErrorData::invalid_params(
                format!("unknown tool {other}"),
                None,
            )),
        }
    }
}

fn env_usize(name: &str) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

async fn fake_gateway(liar: bool) {
    let catalogs = synthetic::build(
        env_usize(ENV_CONNECTORS),
        env_usize(ENV_TOOLS_PER_CONNECTOR),
        500,
    );
    let gateway = FakeGateway {
        catalogs: Arc::new(catalogs),
        liar,
    };
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let service = StreamableHttpService::new(
        move || Ok(gateway.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    println!("{}", Ready::new(port).to_line());
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("signal");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            terminate.recv().await;
        })
        .await
        .expect("serve");
}

fn status(figure: &Value) -> &str {
    figure["status"].as_str().unwrap_or("?")
}

async fn drive() {
    let me = std::env::current_exe().expect("test binary");
    let out_dir = std::env::temp_dir().join(format!("connecta-bench-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let plan = Plan {
        name: "test".into(),
        samples: 20,
        warmup: 2,
        execute_samples: 5,
        batch_samples: 5,
        load_calls: 60,
        in_flight: vec![1, 4],
        soak_rounds: 3,
        soak_calls: 30,
        soak_in_flight: 4,
        cold_settle_secs: 0,
        paired_calls: 10,
        paired_instances: 1,
        ready_timeout_secs: 30,
        driver: Driver::Rmcp,
    };
    let options = RunOptions {
        shapes: vec![Shape::new("tiny", 3, 12)],
        plan,
        targets: vec![
            TargetSpec {
                label: "stand-in".into(),
                command: format!("{} --fake-gateway", shell_quote(&me.to_string_lossy())),
            },
            TargetSpec {
                label: "liar".into(),
                command: format!("{} --fake-gateway liar", shell_quote(&me.to_string_lossy())),
            },
        ],
        bench_exe: env!("CARGO_BIN_EXE_connecta-bench").into(),
        out_dir: out_dir.clone(),
        measure_downstream: true,
    };
    run(&options).await.expect("the run completes");

    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("report.json")).expect("report.json"),
    )
    .expect("valid JSON");
    let shape = &json["shapes"][0];
    assert_eq!(shape["shape"]["connectors"], 3);

    let downstream = &shape["downstream"];
    assert_eq!(status(downstream), "measured", "{downstream}");
    let direct = &downstream["value"]["directCall"]["value"];
    assert_eq!(direct["errors"], 0, "{direct}");
    assert_eq!(direct["latency"]["samples"], 20);
    assert_eq!(
        downstream["value"]["load"].as_array().map(Vec::len),
        Some(2)
    );

    assert_eq!(status(&downstream["value"]["alongside"]), "skipped");
    // The same downstream through each relay: every call answered, and the
    // server figures are the relay process's own.
    for (key, subcommand) in [("tcpRelayed", "tcp-relay"), ("httpRelayed", "http-relay")] {
        let relayed = &shape[key];
        assert_eq!(status(relayed), "measured", "{key}: {relayed}");
        let direct = &relayed["value"]["directCall"]["value"];
        assert_eq!(direct["errors"], 0, "{key}: {direct}");
        assert_eq!(direct["latency"]["samples"], 20);
        // Straight to the downstream, in turn with the relayed calls.
        let alongside = &relayed["value"]["alongside"]["value"];
        assert_eq!(alongside["errors"], 0, "{key}: {alongside}");
        assert_eq!(alongside["latency"]["samples"], 20, "{key}: {alongside}");
        // A relay starts in front of a running downstream: no startup figure.
        assert_eq!(status(&relayed["value"]["startup"]), "skipped");
        let relay_loads = relayed["value"]["load"]
            .as_array()
            .expect("relay load levels");
        assert_eq!(relay_loads.len(), 2);
        for load in relay_loads {
            assert_eq!(load["value"]["errors"], 0, "{key}: {load}");
            assert!(load["value"]["serverCpuUsPerCall"].is_number(), "{load}");
        }
        let command = relayed["value"]["memoryAfterLoad"]["value"]["server"]["command"]
            .as_str()
            .unwrap_or_default();
        assert!(command.contains(subcommand), "{key}: {relayed}");
        assert_eq!(
            relayed["value"]["stop"]["value"]["exitedOnSigterm"], true,
            "{key}: {relayed}"
        );
    }

    let ok = &shape["targets"][0];
    assert_eq!(ok["label"], "stand-in");
    assert_eq!(status(&ok["startup"]), "measured", "{}", ok["startup"]);
    let listed = &ok["toolsList"]["value"];
    assert_eq!(listed["toolCount"], 2);
    assert!(listed["instructionsBytes"].as_u64().unwrap_or(0) > 0);
    for cold in ["searchCold", "searchColdSettled"] {
        assert_eq!(status(&ok[cold]), "measured", "{cold}: {}", ok[cold]);
    }
    for figure in [
        "searchWarm",
        "searchNatural",
        "searchAll",
        "searchNegative",
        "directCall",
    ] {
        assert_eq!(status(&ok[figure]), "measured", "{figure}");
        assert_eq!(ok[figure]["value"]["errors"], 0, "{figure}: {}", ok[figure]);
        assert_eq!(ok[figure]["value"]["latency"]["samples"], 20, "{figure}");
    }
    for figure in ["executeCold", "executeWarm", "batch"] {
        assert_eq!(status(&ok[figure]), "skipped", "{figure}");
        assert!(
            ok[figure]["value"]
                .as_str()
                .unwrap_or_default()
                .contains("execute_code")
        );
    }
    let loads = ok["load"].as_array().expect("load levels");
    assert_eq!(loads.len(), 2);
    for (load, in_flight) in loads.iter().zip([1, 4]) {
        assert_eq!(load["value"]["inFlight"], in_flight);
        assert_eq!(load["value"]["calls"], 60);
        assert_eq!(load["value"]["errors"], 0, "{load}");
        assert_eq!(load["value"]["latency"]["samples"], 60);
        assert!(load["value"]["serverCpuUsPerCall"].is_number(), "{load}");
        assert!(load["value"]["driverCpuUsPerCall"].is_number(), "{load}");
        // The stand-in is the launched process itself: no wrapper.
        assert!(load["value"]["launcherCpuUsPerCall"].is_null(), "{load}");
    }
    assert!(
        ok["memoryAfterLoad"]["value"]["server"]["rssBytes"]
            .as_u64()
            .unwrap_or(0)
            > 0
    );
    assert_eq!(ok["soak"]["value"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        ok["stop"]["value"]["exitedOnSigterm"], true,
        "{}",
        ok["stop"]
    );

    // Wrong answers are errors, never timed successes.
    let liar = &shape["targets"][1];
    assert_eq!(
        liar["directCall"]["value"]["errors"], 20,
        "{}",
        liar["directCall"]
    );
    assert!(liar["directCall"]["value"]["latency"].is_null());
    assert_eq!(liar["load"][0]["value"]["errors"], 60);
    assert_eq!(liar["load"][0]["value"]["throughputPerSec"], 0.0);

    let md = std::fs::read_to_string(out_dir.join("report.md")).expect("report.md");
    assert!(md.contains("## tiny: 3 × 12 = 36 tools"), "{md}");
    assert!(
        md.contains("| figure | stand-in | liar | stand-in vs liar |"),
        "{md}"
    );
    assert!(
        md.contains("execute_code cold skipped: the server lists no `execute_code` tool"),
        "{md}"
    );
    assert!(
        md.contains("liar: direct call: 20 of 20 samples failed"),
        "{md}"
    );
    assert!(md.contains("## How cost grows"), "{md}");
    assert!(md.contains("### downstream alone"), "{md}");
    assert!(
        md.contains("| downstream alone | downstream via TCP relay | downstream via HTTP relay |"),
        "{md}"
    );
    assert!(md.contains("a bare hop adds (TCP relay)"), "{md}");
    assert!(md.contains("the hop with HTTP adds (HTTP relay)"), "{md}");
    // The hop's row has a number in each relay's column (and only there).
    let hop_row = md
        .lines()
        .find(|l| l.starts_with("| the relay's hop: direct call through it minus straight"))
        .unwrap_or_else(|| panic!("no hop row: {md}"));
    let header = md
        .lines()
        .find(|l| l.starts_with("| figure |"))
        .unwrap_or_else(|| panic!("no table: {md}"));
    let column = |name: &str| {
        header
            .split('|')
            .map(str::trim)
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no {name} column: {header}"))
    };
    let cells: Vec<&str> = hop_row.split('|').map(str::trim).collect();
    assert_eq!(cells[column("downstream alone")], "—", "{hop_row}");
    for relay in ["downstream via TCP relay", "downstream via HTTP relay"] {
        assert!(cells[column(relay)].ends_with(" ms"), "{hop_row}");
    }
    assert!(
        md.contains("| direct call straight to the downstream, in turn with each relay's, p50 |"),
        "{md}"
    );
    assert!(!md.contains("relay failed"), "{md}");
    assert!(md.contains("### stand-in"), "{md}");
    assert!(
        md.contains("Soak (3 rounds of 30 calls at 4 in flight)"),
        "{md}"
    );
    // scripts/report_medians.py reads the report as written (the floor's
    // figures docs/performance.md quotes over several runs).
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/report_medians.py");
    let medians = std::process::Command::new("python3")
        .arg(&script)
        .arg(&out_dir)
        .output()
        .expect("python3 runs");
    let printed = String::from_utf8_lossy(&medians.stdout);
    assert!(
        medians.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&medians.stderr)
    );
    assert!(printed.starts_with("tiny (1 reports)"), "{printed}");
    for figure in [
        "a bare hop adds, p50 ms (TCP relay, in turn): median",
        "the hop with HTTP adds, p50 ms (HTTP relay, in turn): median",
        "connecta adds, p50 ms: median",
        "server CPU per call at 1 in flight, µs: HTTP relay: median",
    ] {
        assert!(printed.contains(figure), "{figure}: {printed}");
    }
    // This plan has no level at 64 in flight: those figures are left out.
    assert!(!printed.contains("at 64"), "{printed}");
    let _ = std::fs::remove_dir_all(&out_dir);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    if args.get(1).map(String::as_str) == Some("--fake-gateway") {
        runtime.block_on(fake_gateway(
            args.get(2).map(String::as_str) == Some("liar"),
        ));
        return;
    }
    // `cargo test` may pass harness flags (filters, --nocapture); a filter
    // that does not name this test means it was not asked for.
    if let Some(filter) = args.iter().skip(1).find(|a| !a.starts_with('-'))
        && !"driver_end_to_end".contains(filter.as_str())
    {
        return;
    }
    runtime.block_on(drive());
    println!("test driver_end_to_end ... ok");
}
