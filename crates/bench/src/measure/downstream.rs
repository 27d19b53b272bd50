//! The synthetic downstream measured directly: the same client, the same
//! tool, the same load levels as through a gateway, so that the gateway's
//! added cost is the difference. Started as its own process
//! (`connecta-bench synthetic-downstream`) at the same shape. Measured
//! again through `connecta-bench tcp-relay` and `http-relay`
//! ([`measure_relayed`]): one more loopback hop and no work, then the hop
//! with connecta's HTTP stacks and no MCP, the floor of that added cost.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use serde_json::json;

use super::checks;
use super::client::{Client, connect_with};
use super::sample::{self, Check, LoadCall};
use super::target::{
    close_all, connect_many, first_list, load_with_cpu, memory, protocol_env, tools_list_figure,
};
use crate::launcher::{LaunchSpec, ServerProcess, shell_quote};
use crate::plan::{Plan, Shape};
use crate::relay::RelayKind;
use crate::report::model::{DownstreamReport, Figure, Startup};
use crate::stats::ms;
use crate::synthetic::http::connector_url;
use crate::synthetic::tool_name;

/// The command line that starts the synthetic downstream at the shape given
/// by the launcher protocol's environment.
pub fn command(bench_exe: &Path) -> String {
    format!(
        "{} synthetic-downstream",
        shell_quote(&bench_exe.to_string_lossy())
    )
}

/// Launch the synthetic downstream at `shape`.
async fn launch(
    bench_exe: &Path,
    shape: &Shape,
    plan: &Plan,
    log_file: Option<PathBuf>,
) -> anyhow::Result<ServerProcess> {
    ServerProcess::launch(&LaunchSpec {
        command: command(bench_exe),
        env: protocol_env(shape),
        ready_timeout: Duration::from_secs(plan.ready_timeout_secs),
        log_file,
    })
    .await
}

/// Launch the synthetic downstream at `shape`, measure it, stop it.
pub async fn measure(
    bench_exe: &Path,
    shape: &Shape,
    plan: &Plan,
    log_file: Option<PathBuf>,
) -> anyhow::Result<DownstreamReport> {
    let server = launch(bench_exe, shape, plan, log_file).await?;
    let result = measure_running(&server, shape, plan, None).await;
    let stop = Figure::from_result(server.stop(Duration::from_secs(10)).await);
    let mut report = result?;
    report.stop = stop;
    Ok(report)
}

/// The command line that starts a `kind` relay to the downstream on `port`.
fn relay_command_line(bench_exe: &Path, kind: RelayKind, port: u16) -> String {
    format!(
        "{} {} --to 127.0.0.1:{port}",
        shell_quote(&bench_exe.to_string_lossy()),
        kind.subcommand()
    )
}

/// Launch the synthetic downstream at `shape` and a `kind` relay in front
/// of it (`crate::relay`), measure the downstream through the relay as
/// [`measure`] measures it alone (its direct calls in turn with calls
/// straight to the downstream), stop both. The server figures (CPU per
/// call, memory) are the relay's; its startup is not measured (the relay
/// starts in front of a downstream that is already up). The two processes
/// log to `<shape>-<relay>-downstream.log` and `<shape>-<relay>.log` in
/// `logs`.
pub async fn measure_relayed(
    bench_exe: &Path,
    kind: RelayKind,
    shape: &Shape,
    plan: &Plan,
    logs: &Path,
) -> anyhow::Result<DownstreamReport> {
    let name = format!("{}-{}", shape.name, kind.subcommand());
    let downstream_log = logs.join(format!("{name}-downstream.log"));
    let downstream = launch(bench_exe, shape, plan, Some(downstream_log)).await?;
    let relay = match ServerProcess::launch(&LaunchSpec {
        command: relay_command_line(bench_exe, kind, downstream.ready.port),
        env: Vec::new(),
        ready_timeout: Duration::from_secs(plan.ready_timeout_secs),
        log_file: Some(logs.join(format!("{name}.log"))),
    })
    .await
    {
        Ok(relay) => relay,
        Err(e) => {
            stop_behind_relay(downstream).await;
            return Err(e.context("starting the relay"));
        }
    };
    let straight = connector_url(downstream.ready.port, shape.probe().0);
    let result = measure_running(&relay, shape, plan, Some(&straight)).await;
    let stop = Figure::from_result(relay.stop(Duration::from_secs(10)).await);
    stop_behind_relay(downstream).await;
    let mut report = result?;
    report.startup = Figure::Skipped("the relay starts in front of a running downstream".into());
    report.stop = stop;
    Ok(report)
}

/// Stop the downstream that was behind the relay; its stop is not a figure
/// of the report, so a slow one is only said.
async fn stop_behind_relay(downstream: ServerProcess) {
    match downstream.stop(Duration::from_secs(10)).await {
        Ok(outcome) if outcome.exited_on_sigterm => {}
        Ok(_) => eprintln!("  the downstream behind the relay had to be killed"),
        Err(e) => eprintln!("  stopping the downstream behind the relay: {e:#}"),
    }
}

/// Measure the downstream behind `server` (itself, or the relay in front
/// of it). With `straight_url`, the direct calls through `server` alternate
/// with calls straight to that URL ([`sample::alternating`]).
async fn measure_running(
    server: &ServerProcess,
    shape: &Shape,
    plan: &Plan,
    straight_url: Option<&str>,
) -> anyhow::Result<DownstreamReport> {
    let (c, t) = shape.probe();
    let url = connector_url(server.ready.port, c);
    let (client, pages, walk) = first_list(
        &url,
        Duration::from_secs(plan.ready_timeout_secs),
        plan.driver,
    )
    .await?;
    let first_list_ms = ms(server.spawned_at.elapsed());
    let startup = Figure::Measured(Startup {
        ready_line_ms: ms(server.ready_after),
        first_list_ms,
        server_only_ms: None,
    });
    let tools_list = Figure::Measured(tools_list_figure(
        &pages,
        client.instructions().as_deref(),
        walk,
    ));

    let call = lookup_request(&tool_name(t));
    let echo: Check = Arc::new(|i, r| checks::echoes(r, i as i64));
    let client = Arc::new(client);
    let (direct_call, alongside) = match straight_url {
        None => (
            sample::sequential(
                plan.warmup,
                plan.samples,
                |i| call(client.clone(), i),
                echo.clone(),
            )
            .await,
            Figure::Skipped("measured only through the relay".into()),
        ),
        Some(url) => {
            let straight = Arc::new(connect_with(url, plan.driver).await?);
            let (through, straight_samples) = sample::alternating(
                plan.warmup,
                plan.samples,
                |i| call(client.clone(), i),
                |i| call(straight.clone(), i),
                echo.clone(),
            )
            .await;
            // Not needed under load: closed before it.
            close_all([straight]).await;
            (through, Figure::Measured(straight_samples))
        }
    };
    let direct_call = Figure::Measured(direct_call);
    let clients = connect_many(&url, plan.max_in_flight(), plan.driver).await?;
    let mut load = Vec::new();
    for &in_flight in &plan.in_flight {
        load.push(Figure::Measured(
            load_with_cpu(
                server,
                &clients,
                plan.load_calls,
                in_flight,
                call.clone(),
                echo.clone(),
            )
            .await,
        ));
    }
    let memory_after_load = memory(server);
    close_all(clients.into_iter().chain([client])).await;
    Ok(DownstreamReport {
        startup,
        tools_list,
        direct_call,
        alongside,
        load,
        memory_after_load,
        stop: Figure::Skipped("not stopped yet".into()),
    })
}

/// `tools/call` of `tool` with `{value: i}`, straight to the connector.
fn lookup_request(tool: &str) -> LoadCall {
    let tool: Arc<str> = tool.into();
    Arc::new(move |client: Arc<Client>, i: usize| {
        let tool = tool.clone();
        async move { client.call(&tool, json!({"value": i})).await }.boxed()
    })
}
