//! The `connecta-bench` command line: `synthetic-downstream` (the downstream
//! server alone).

#![forbid(unsafe_code)]

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use connecta_bench::launcher::{ENV_CONNECTORS, ENV_TOOLS_PER_CONNECTOR, Ready};
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
    /// Serve synthetic connectors: HTTP at /connector_<c>/mcp, or one over stdio.
    SyntheticDownstream(DownstreamArgs),
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
            Command::SyntheticDownstream(args) => downstream_command(args).await,
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
    shutdown.cancel();
    // Graceful shutdown waits for open connections; do not wait forever.
    let _ = tokio::time::timeout(Duration::from_secs(2), server).await;
    Ok(0)
}
