//! The figures of one server command (connecta or any other implementation
//! of the seven meta-tools) at one catalog shape, in a fixed order: boot,
//! `tools/list`, the cold figures (first search, first program), the warm
//! figures, memory, load, memory again, soak, stop.
//!
//! A figure that fails is recorded as failed and the run goes on; a figure
//! whose meta-tool the server does not list is recorded as skipped.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use rmcp::model::ListToolsResult;
use serde_json::{Value, json};

use super::checks;
use super::client::{Client, Driver, connect_with};
use super::sample::{self, Check, LoadCall};
use crate::cpu;
use crate::launcher::{ENV_CONNECTORS, ENV_TOOLS_PER_CONNECTOR, LaunchSpec, ServerProcess};
use crate::plan::{Plan, Shape};
use crate::report::model::{Figure, Load, Single, SoakRound, Startup, TargetReport, ToolsList};
use crate::rss::{self, TreeMemory};
use crate::stats::ms;
use crate::synthetic::{address, marker};

/// A server command to measure.
#[derive(Debug, Clone)]
pub struct TargetSpec {
    /// The name in the report (`connecta`, `reference`, …).
    pub label: String,
    /// A shell command line following the launcher protocol.
    pub command: String,
}

/// The queries, programs and addresses used at one shape.
struct Probe {
    address: String,
    marker: String,
    batch: Vec<String>,
}

impl Probe {
    fn new(shape: &Shape) -> Self {
        let (c, t) = shape.probe();
        let batch = (0..shape.tools_per_connector.min(10))
            .map(|i| address(c, t - i))
            .collect();
        Self {
            address: address(c, t),
            marker: marker(c, t),
            batch,
        }
    }
}

const NATURAL_QUERY: &str = "lookup record 7";
/// Every synthetic description contains these words.
const ALL_QUERY: &str = "synthetic performance record";
const NEGATIVE_QUERY: &str = "zzzzabsentmarker";
const NOOP_PROGRAM: &str = "async () => 1";

fn one_call_program(address: &str) -> String {
    format!("async () => (await connecta.call({address:?}, {{value: 1}})).value")
}

fn batch_program(addresses: &[String]) -> String {
    let calls: Vec<String> = addresses
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{{address: {a:?}, args: {{value: {i}}}}}"))
        .collect();
    format!(
        "async () => {{ const outcomes = await connecta.batch([{}]); return {{ okCount: outcomes.filter((o) => o.ok).length }}; }}",
        calls.join(", ")
    )
}

fn check(
    f: impl Fn(usize, &rmcp::model::CallToolResult) -> Result<(), String> + Send + Sync + 'static,
) -> Check {
    Arc::new(f)
}

fn not_reached<T>() -> Figure<T> {
    Figure::Skipped("not reached: an earlier step failed".into())
}

impl TargetReport {
    fn not_reached(target: &TargetSpec) -> Self {
        Self {
            label: target.label.clone(),
            command: target.command.clone(),
            startup: not_reached(),
            tools_list: not_reached(),
            search_cold: not_reached(),
            search_cold_settled: not_reached(),
            search_warm: not_reached(),
            search_natural: not_reached(),
            search_all: not_reached(),
            search_negative: not_reached(),
            direct_call: not_reached(),
            execute_cold: not_reached(),
            execute_warm: not_reached(),
            batch: not_reached(),
            memory_before_load: not_reached(),
            load: Vec::new(),
            memory_after_load: not_reached(),
            soak: not_reached(),
            stop: not_reached(),
        }
    }
}

/// The environment of the launcher protocol for `shape`.
pub fn protocol_env(shape: &Shape) -> Vec<(String, String)> {
    vec![
        (ENV_CONNECTORS.to_owned(), shape.connectors.to_string()),
        (
            ENV_TOOLS_PER_CONNECTOR.to_owned(),
            shape.tools_per_connector.to_string(),
        ),
    ]
}

/// Memory of the server's tree now.
pub fn memory(server: &ServerProcess) -> Figure<TreeMemory> {
    match server.server_pid() {
        Some(pid) => Figure::from_result(rss::snapshot(pid, server.root_pid()).map_err(Into::into)),
        None => Figure::Failed("the server process has exited".into()),
    }
}

/// Connect and walk `tools/list` until it succeeds, from spawn up to
/// `deadline`. Returns the client, the pages, and the time of the walk.
pub async fn first_list(
    url: &str,
    deadline: Duration,
    driver: Driver,
) -> anyhow::Result<(Client, Vec<ListToolsResult>, Duration)> {
    let give_up = Instant::now() + deadline;
    loop {
        let attempt = async {
            let client = connect_with(url, driver).await?;
            let started = Instant::now();
            let pages = client.list_all_pages().await?;
            anyhow::Ok((client, pages, started.elapsed()))
        }
        .await;
        match attempt {
            Ok(done) => return Ok(done),
            Err(e) if Instant::now() >= give_up => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    }
}

/// The `tools/list` figure from a walk.
pub fn tools_list_figure(
    pages: &[ListToolsResult],
    instructions: Option<&str>,
    walk: Duration,
) -> ToolsList {
    let tools: Vec<&rmcp::model::Tool> = pages.iter().flat_map(|p| p.tools.iter()).collect();
    ToolsList {
        tool_count: tools.len(),
        tool_names: if tools.len() <= 50 {
            tools.iter().map(|t| t.name.to_string()).collect()
        } else {
            Vec::new()
        },
        pages: pages.len(),
        tools_bytes: serde_json::to_vec(&tools).map(|v| v.len()).unwrap_or(0),
        instructions_bytes: instructions.map_or(0, str::len),
        walk_ms: ms(walk),
    }
}

/// Launch, measure, stop.
pub async fn measure(
    target: &TargetSpec,
    shape: &Shape,
    plan: &Plan,
    log_file: Option<PathBuf>,
) -> TargetReport {
    let mut report = TargetReport::not_reached(target);
    let spec = LaunchSpec {
        command: target.command.clone(),
        env: protocol_env(shape),
        ready_timeout: Duration::from_secs(plan.ready_timeout_secs),
        log_file,
    };
    let server = match ServerProcess::launch(&spec).await {
        Ok(server) => server,
        Err(e) => {
            report.startup = Figure::Failed(format!("{e:#}"));
            return report;
        }
    };
    if let Err(e) = measure_running(&server, shape, plan, &mut report).await {
        // Only connecting can end the sequence early; say where it stopped.
        if report.startup.measured().is_none() {
            report.startup = Figure::Failed(format!("{e:#}"));
        }
    }
    report.stop = Figure::from_result(server.stop(Duration::from_secs(10)).await);
    let lists_search = report.tools_list.measured().is_some_and(|l| {
        l.tool_names.iter().any(|n| n == "search_tools") || l.tool_names.is_empty()
    });
    report.search_cold_settled = if report.search_cold.measured().is_none() {
        match &report.search_cold {
            Figure::Skipped(why) => Figure::Skipped(why.clone()),
            _ => not_reached(),
        }
    } else if lists_search {
        Figure::from_result(settled_cold_search(&spec, shape, plan).await)
    } else {
        Figure::Skipped("the server lists no `search_tools` tool".into())
    };
    report
}

/// A second boot: wait for the first `tools/list`, stay idle for the
/// plan's settle (a server that loads its catalogs in the background has
/// them by then; one that loads them on the first search still pays for
/// it), then time the first search.
async fn settled_cold_search(
    spec: &LaunchSpec,
    shape: &Shape,
    plan: &Plan,
) -> anyhow::Result<Single> {
    let spec = LaunchSpec {
        log_file: spec
            .log_file
            .as_ref()
            .map(|p| p.with_extension("settled.log")),
        ..spec.clone()
    };
    let server = ServerProcess::launch(&spec).await?;
    let measured = async {
        let (client, _, _) = first_list(
            &server.mcp_url(),
            Duration::from_secs(plan.ready_timeout_secs),
            plan.driver,
        )
        .await?;
        tokio::time::sleep(Duration::from_secs(plan.cold_settle_secs)).await;
        let probe = Probe::new(shape);
        let args = json!({"query": probe.marker, "includeSchemas": "compact"});
        let expected = probe.address.clone();
        let c = &client;
        let single = sample::single(
            || async move { c.call("search_tools", args).await },
            check(move |_, r| checks::mentions(r, &expected)),
        )
        .await;
        client.close().await;
        single
    }
    .await;
    let _ = server.stop(Duration::from_secs(10)).await;
    measured
}

async fn measure_running(
    server: &ServerProcess,
    shape: &Shape,
    plan: &Plan,
    report: &mut TargetReport,
) -> anyhow::Result<()> {
    let (client, pages, walk) = first_list(
        &server.mcp_url(),
        Duration::from_secs(plan.ready_timeout_secs),
        plan.driver,
    )
    .await?;
    let first_list_ms = ms(server.spawned_at.elapsed());
    report.startup = Figure::Measured(Startup {
        ready_line_ms: ms(server.ready_after),
        first_list_ms,
        server_only_ms: server.ready.spawned_after_ms.map(|s| first_list_ms - s),
    });
    let instructions = client.instructions();
    let listed = tools_list_figure(&pages, instructions.as_deref(), walk);
    let names: Vec<String> = pages
        .iter()
        .flat_map(|p| p.tools.iter().map(|t| t.name.to_string()))
        .collect();
    report.tools_list = Figure::Measured(listed);
    let has = |tool: &str| names.iter().any(|n| n == tool);
    let missing = |tool: &str| format!("the server lists no `{tool}` tool");
    let probe = Probe::new(shape);
    let client = Arc::new(client);

    // Cold figures first: nothing may have warmed these paths.
    if has("search_tools") {
        let c = client.clone();
        let args = json!({"query": probe.marker, "includeSchemas": "compact"});
        let expected = probe.address.clone();
        report.search_cold = Figure::from_result(
            sample::single(
                || async move { c.call("search_tools", args).await },
                check(move |_, r| checks::mentions(r, &expected)),
            )
            .await,
        );
    } else {
        report.search_cold = Figure::Skipped(missing("search_tools"));
    }
    let has_code = has("execute_code");
    if has_code {
        let c = client.clone();
        report.execute_cold = Figure::from_result(
            sample::single(
                || async move { c.call("execute_code", json!({"code": NOOP_PROGRAM})).await },
                check(|_, r| returns_number(r, 1)),
            )
            .await,
        );
    } else {
        report.execute_cold = Figure::Skipped(missing("execute_code"));
    }

    // Warm searches.
    if has("search_tools") {
        let searches: [(&mut Figure<_>, Value, Option<String>); 4] = [
            (
                &mut report.search_warm,
                json!({"query": probe.marker, "includeSchemas": "compact"}),
                Some(probe.address.clone()),
            ),
            (
                &mut report.search_natural,
                json!({"query": NATURAL_QUERY}),
                None,
            ),
            (&mut report.search_all, json!({"query": ALL_QUERY}), None),
            (
                &mut report.search_negative,
                json!({"query": NEGATIVE_QUERY}),
                None,
            ),
        ];
        for (figure, args, expected) in searches {
            let c = client.clone();
            let samples = sample::sequential(
                plan.warmup,
                plan.samples,
                |_| {
                    let c = c.clone();
                    let args = args.clone();
                    async move { c.call("search_tools", args).await }
                },
                check(move |_, r| match &expected {
                    Some(address) => checks::mentions(r, address),
                    None => checks::not_error(r),
                }),
            )
            .await;
            *figure = Figure::Measured(samples);
        }
    } else {
        for figure in [
            &mut report.search_warm,
            &mut report.search_natural,
            &mut report.search_all,
            &mut report.search_negative,
        ] {
            *figure = Figure::Skipped(missing("search_tools"));
        }
    }

    // The direct call and everything under load.
    let call = call_tool_request(&probe.address);
    let echo = check(|i, r| checks::echoes(r, i as i64));
    if has("call_tool") {
        let c = client.clone();
        let call = call.clone();
        report.direct_call = Figure::Measured(
            sample::sequential(
                plan.warmup,
                plan.samples,
                |i| call(c.clone(), i),
                echo.clone(),
            )
            .await,
        );
    } else {
        report.direct_call = Figure::Skipped(missing("call_tool"));
    }

    if has_code {
        let c = client.clone();
        let program = one_call_program(&probe.address);
        report.execute_warm = Figure::Measured(
            sample::sequential(
                plan.warmup,
                plan.execute_samples,
                |_| {
                    let c = c.clone();
                    let code = program.clone();
                    async move { c.call("execute_code", json!({ "code": code })).await }
                },
                check(|_, r| returns_number(r, 1)),
            )
            .await,
        );
        let c = client.clone();
        let program = batch_program(&probe.batch);
        let expected = Value::from(probe.batch.len());
        report.batch = Figure::Measured(
            sample::sequential(
                plan.warmup.min(5),
                plan.batch_samples,
                |_| {
                    let c = c.clone();
                    let code = program.clone();
                    async move { c.call("execute_code", json!({ "code": code })).await }
                },
                check(move |_, r| {
                    checks::not_error(r)?;
                    let value = checks::result_value(r);
                    if checks::has_member(&value, "okCount", &expected) {
                        Ok(())
                    } else {
                        Err(format!(
                            "not every batch call succeeded: {}",
                            checks::clamp(&value.to_string(), 300)
                        ))
                    }
                }),
            )
            .await,
        );
    } else {
        report.execute_warm = Figure::Skipped(missing("execute_code"));
        report.batch = Figure::Skipped(missing("execute_code"));
    }

    report.memory_before_load = memory(server);
    if !has("call_tool") {
        report.memory_after_load = Figure::Skipped(missing("call_tool"));
        report.soak = Figure::Skipped(missing("call_tool"));
        return Ok(());
    }
    let clients = match connect_many(&server.mcp_url(), plan.max_in_flight(), plan.driver).await {
        Ok(clients) => clients,
        Err(e) => {
            report.load = vec![Figure::Failed(format!("{e:#}"))];
            return Ok(());
        }
    };
    for &in_flight in &plan.in_flight {
        let load = load_with_cpu(
            server,
            &clients,
            plan.load_calls,
            in_flight,
            call.clone(),
            echo.clone(),
        )
        .await;
        report.load.push(Figure::Measured(load));
    }
    report.memory_after_load = memory(server);
    report.soak = Figure::Measured(soak(server, &clients, plan, call, echo).await);
    close_all(clients).await;
    Ok(())
}

/// `call_tool` of `address` with `{value: i}`, result as a value.
fn call_tool_request(address: &str) -> LoadCall {
    let address: Arc<str> = address.into();
    Arc::new(move |client: Arc<Client>, i: usize| {
        let args = json!({"address": &*address, "args": {"value": i}, "resultMode": "value"});
        async move { client.call("call_tool", args).await }.boxed()
    })
}

fn returns_number(result: &rmcp::model::CallToolResult, expected: i64) -> Result<(), String> {
    checks::not_error(result)?;
    let value = checks::result_value(result);
    if checks::contains_number(&value, &Value::from(expected)) {
        Ok(())
    } else {
        Err(format!(
            "the program's result is not {expected}: {}",
            checks::clamp(&value.to_string(), 300)
        ))
    }
}

/// One load level, with the CPU the server tree, a wrapping launcher and
/// this driver spent on it per call.
pub async fn load_with_cpu(
    server: &ServerProcess,
    clients: &[Arc<Client>],
    calls: usize,
    in_flight: usize,
    call: LoadCall,
    check: Check,
) -> Load {
    let server_pid = server.server_pid();
    let launcher_pid = server.root_pid().filter(|&root| Some(root) != server_pid);
    let server_cpu = || server_pid.and_then(|pid| cpu::tree_cpu_seconds(pid).ok());
    let launcher_cpu = || launcher_pid.and_then(|pid| cpu::cpu_seconds(pid).ok());
    let driver_cpu = || cpu::cpu_seconds(std::process::id()).ok();
    let before = (server_cpu(), launcher_cpu(), driver_cpu());
    let mut load = sample::load(clients, calls, in_flight, call, check).await;
    let per_call = |before: Option<f64>, after: Option<f64>| {
        before
            .zip(after)
            .map(|(b, a)| (a - b) * 1e6 / calls.max(1) as f64)
    };
    load.server_cpu_us_per_call = per_call(before.0, server_cpu());
    load.launcher_cpu_us_per_call = per_call(before.1, launcher_cpu());
    load.driver_cpu_us_per_call = per_call(before.2, driver_cpu());
    load
}

/// Close each client no one else holds any more.
pub async fn close_all(clients: impl IntoIterator<Item = Arc<Client>>) {
    for c in clients {
        if let Ok(c) = Arc::try_unwrap(c) {
            c.close().await;
        }
    }
}

/// `count` clients, connected concurrently.
pub async fn connect_many(
    url: &str,
    count: usize,
    driver: Driver,
) -> anyhow::Result<Vec<Arc<Client>>> {
    let connecting = (0..count.max(1)).map(|_| connect_with(url, driver));
    futures::future::join_all(connecting)
        .await
        .into_iter()
        .map(|c| c.map(Arc::new))
        .collect()
}

async fn soak(
    server: &ServerProcess,
    clients: &[Arc<Client>],
    plan: &Plan,
    call: LoadCall,
    echo: Check,
) -> Vec<SoakRound> {
    let mut rounds = Vec::with_capacity(plan.soak_rounds);
    for round in 1..=plan.soak_rounds {
        let load: Load = load_with_cpu(
            server,
            clients,
            plan.soak_calls,
            plan.soak_in_flight,
            call.clone(),
            echo.clone(),
        )
        .await;
        let memory = memory(server);
        let memory = memory.measured();
        rounds.push(SoakRound {
            round,
            load,
            server_rss_bytes: memory.map(|m| m.server.rss_bytes),
            workers_rss_bytes: memory.map(TreeMemory::workers_total),
        });
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_name_the_probe_addresses() {
        assert_eq!(
            one_call_program("connector_0.lookup_record_0"),
            r#"async () => (await connecta.call("connector_0.lookup_record_0", {value: 1})).value"#
        );
        let batch = batch_program(&["a.b".to_owned(), "c.d".to_owned()]);
        assert!(batch.contains(
            r#"[{address: "a.b", args: {value: 0}}, {address: "c.d", args: {value: 1}}]"#
        ));
    }

    #[test]
    fn the_probe_is_the_end_of_the_catalog() {
        let probe = Probe::new(&Shape::new("t", 3, 12));
        assert_eq!(probe.address, "connector_2.lookup_record_11");
        assert_eq!(probe.batch.len(), 10);
        assert_eq!(probe.batch[9], "connector_2.lookup_record_2");
        assert_eq!(Probe::new(&Shape::new("t", 1, 4)).batch.len(), 4);
    }
}
