//! The `connecta-bench` command line: `run` (measure and write the report),
//! `synthetic-downstream` (the downstream server alone), and
//! `serve-synthetic` (connecta over the synthetic downstream, behind the
//! launcher protocol).

#![forbid(unsafe_code)]

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use connecta_bench::launcher::serve_synthetic::{self, DownstreamMode, ServeSynthetic};
use connecta_bench::launcher::{ENV_CONNECTORS, ENV_TOOLS_PER_CONNECTOR, Ready, shell_quote};
use connecta_bench::measure::{Driver, TargetSpec};
use connecta_bench::plan::{Plan, Shape};
use connecta_bench::relay::{self, RelayKind};
use connecta_bench::run::{RunOptions, run};
use connecta_bench::synthetic::{self, ConnectorCatalog, DEFAULT_PAGE_SIZE};
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Parser)]
#[command(
    name = "connecta-bench",
    version,
    about = "Measure connecta (or any MCP gateway) over streamable HTTP."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Measure every shape and write report.md and report.json.
    Run(RunArgs),
    /// Serve synthetic connectors: HTTP at /connector_<c>/mcp, or one over stdio.
    SyntheticDownstream(DownstreamArgs),
    /// Start connecta over the synthetic downstream and relay its ready line.
    ServeSynthetic(ServeArgs),
    /// Copy each connection's bytes to a downstream and back: one loopback
    /// hop and nothing else (the floor of a gateway's added cost).
    TcpRelay(RelayArgs),
    /// Forward each HTTP request to a downstream unread (axum in, reqwest
    /// out): the hop and connecta's two HTTP stacks, without MCP.
    HttpRelay(RelayArgs),
}

#[derive(Debug, Args)]
struct RunArgs {
    /// Fewer samples, for routine use (under two minutes).
    #[arg(long)]
    quick: bool,
    /// Comma-separated shapes: small, medium, large, wide, or <C>x<T>.
    #[arg(long, value_delimiter = ',', default_value = "small,medium,large,wide")]
    shapes: Vec<String>,
    /// Measure this server command instead of connecta (launcher protocol).
    #[arg(long)]
    server_command: Option<String>,
    /// The report's name for the measured server.
    #[arg(long)]
    label: Option<String>,
    /// Also measure this server command in the same run, for same-run ratios.
    #[arg(long)]
    compare_command: Option<String>,
    /// The report's name for the compared server.
    #[arg(long, default_value = "reference")]
    compare_label: String,
    /// The connecta binary (default: `connecta` next to this executable).
    #[arg(long)]
    connecta_bin: Option<PathBuf>,
    /// How connecta reaches the synthetic connectors.
    #[arg(long, value_enum, default_value = "http")]
    downstream: DownstreamMode,
    /// Where report.md, report.json and logs/ go.
    #[arg(long, default_value = "bench")]
    out_dir: PathBuf,
    /// Do not measure the synthetic downstream alone.
    #[arg(long, conflicts_with = "downstream_only")]
    no_downstream: bool,
    /// Measure only the synthetic downstream alone (no server command).
    #[arg(long)]
    downstream_only: bool,
    /// The measuring client: rmcp's, or raw JSON-RPC POSTs (to measure the
    /// client's own cost).
    #[arg(long, value_enum, default_value = "rmcp")]
    driver: Driver,
}

#[derive(Debug, Args)]
struct DownstreamArgs {
    /// Number of connectors (HTTP mode).
    #[arg(long, env = ENV_CONNECTORS, default_value_t = 10)]
    connectors: usize,
    /// Tools per connector.
    #[arg(long, env = ENV_TOOLS_PER_CONNECTOR, default_value_t = 10)]
    tools: usize,
    /// Tools per `tools/list` page.
    #[arg(long, default_value_t = DEFAULT_PAGE_SIZE)]
    page_size: usize,
    /// Loopback port to listen on; 0 picks one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Serve one connector on stdin/stdout instead of HTTP.
    #[arg(long)]
    stdio: bool,
    /// The connector to serve over stdio (its index c in connector_<c>).
    #[arg(long, default_value_t = 0)]
    connector_index: usize,
}

#[derive(Debug, Args)]
struct RelayArgs {
    /// The downstream's address, e.g. 127.0.0.1:8080.
    #[arg(long)]
    to: std::net::SocketAddr,
}

#[derive(Debug, Args)]
struct ServeArgs {
    #[arg(long, env = ENV_CONNECTORS)]
    connectors: usize,
    #[arg(long, env = ENV_TOOLS_PER_CONNECTOR)]
    tools: usize,
    /// The connecta binary (default: `connecta` next to this executable).
    #[arg(long)]
    connecta_bin: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "http")]
    downstream: DownstreamMode,
    #[arg(long, default_value_t = DEFAULT_PAGE_SIZE)]
    page_size: usize,
    /// Seconds connecta may take to print its ready line.
    #[arg(long, default_value_t = 120)]
    ready_timeout: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("connecta-bench: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => run_command(args).await,
            Command::SyntheticDownstream(args) => downstream_command(args).await,
            Command::ServeSynthetic(args) => serve_command(args).await,
            Command::TcpRelay(args) => relay_command(args, RelayKind::Tcp).await,
            Command::HttpRelay(args) => relay_command(args, RelayKind::Http).await,
        }
    });
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("connecta-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run_command(args: RunArgs) -> anyhow::Result<u8> {
    let bench_exe = std::env::current_exe().context("locating this executable")?;
    let shapes = args
        .shapes
        .iter()
        .map(|s| Shape::parse(s).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let connecta = match &args.server_command {
        Some(command) => TargetSpec {
            label: args.label.clone().unwrap_or_else(|| "server".into()),
            command: command.clone(),
        },
        None => {
            let bin = match &args.connecta_bin {
                Some(bin) => bin.clone(),
                None => serve_synthetic::default_connecta_bin()?,
            };
            if !args.downstream_only && !bin.exists() {
                anyhow::bail!(
                    "no connecta binary at {} (build it with `cargo build --release -p connecta`, \
                     pass --connecta-bin, or measure another server with --server-command)",
                    bin.display()
                );
            }
            let downstream = match args.downstream {
                DownstreamMode::Http => "http",
                DownstreamMode::Stdio => "stdio",
            };
            TargetSpec {
                label: args.label.clone().unwrap_or_else(|| "connecta".into()),
                command: format!(
                    "{} serve-synthetic --connecta-bin {} --downstream {downstream}",
                    shell_quote(&bench_exe.to_string_lossy()),
                    shell_quote(&bin.to_string_lossy())
                ),
            }
        }
    };
    let mut targets = vec![connecta];
    if args.downstream_only {
        targets.clear();
    } else if let Some(command) = &args.compare_command {
        targets.push(TargetSpec {
            label: args.compare_label.clone(),
            command: command.clone(),
        });
    }
    let options = RunOptions {
        shapes,
        plan: Plan {
            driver: args.driver,
            ..if args.quick {
                Plan::quick()
            } else {
                Plan::full()
            }
        },
        targets,
        bench_exe,
        out_dir: args.out_dir.clone(),
        measure_downstream: !args.no_downstream,
    };
    let report = run(&options).await?;
    eprintln!(
        "connecta-bench: wrote {} and {} in {:.0} s",
        args.out_dir.join("report.md").display(),
        args.out_dir.join("report.json").display(),
        report.wall_seconds
    );
    Ok(0)
}

async fn downstream_command(args: DownstreamArgs) -> anyhow::Result<u8> {
    if args.stdio {
        let catalog = Arc::new(ConnectorCatalog::new(
            args.connector_index,
            args.tools,
            args.page_size,
            &synthetic::catalog::Schemas::default(),
        ));
        synthetic::stdio::serve(catalog).await?;
        return Ok(0);
    }
    let catalogs = synthetic::build(args.connectors, args.tools, args.page_size);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .with_context(|| format!("binding 127.0.0.1:{}", args.port))?;
    let port = listener.local_addr()?.port();
    let shutdown = CancellationToken::new();
    let server = tokio::spawn({
        let shutdown = shutdown.clone();
        async move { synthetic::http::serve(listener, &catalogs, shutdown).await }
    });
    ready_until_signalled(port).await?;
    shutdown.cancel();
    // Graceful shutdown waits for open connections; do not wait forever.
    let _ = tokio::time::timeout(Duration::from_secs(2), server).await;
    Ok(0)
}

/// Print the ready line for `port`, then wait for SIGTERM or SIGINT.
async fn ready_until_signalled(port: u16) -> anyhow::Result<()> {
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", Ready::new(port).to_line())?;
        out.flush()?;
    }
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    Ok(())
}

async fn relay_command(args: RelayArgs, kind: RelayKind) -> anyhow::Result<u8> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding 127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let shutdown = CancellationToken::new();
    let relay = relay::spawn(kind, listener, args.to, shutdown.clone())?;
    ready_until_signalled(port).await?;
    shutdown.cancel();
    // The HTTP relay lets requests in flight finish; a stream a client
    // holds open must not keep it up.
    let _ = tokio::time::timeout(Duration::from_secs(2), relay).await;
    Ok(0)
}

async fn serve_command(args: ServeArgs) -> anyhow::Result<u8> {
    let connecta_bin = match args.connecta_bin {
        Some(bin) => bin,
        None => serve_synthetic::default_connecta_bin()?,
    };
    let code = serve_synthetic::run(ServeSynthetic {
        connectors: args.connectors,
        tools_per_connector: args.tools,
        connecta_bin,
        downstream: args.downstream,
        page_size: args.page_size,
        ready_timeout: Duration::from_secs(args.ready_timeout),
    })
    .await?;
    Ok(u8::try_from(code).unwrap_or(1))
}
