//! The `connecta` binary: a thin command line over the gateway crates.

// `deny`, not `forbid`: `allocator` is the one module allowed to opt back in.
#![deny(unsafe_code)]

mod allocator;
mod commands;
mod config_file;
mod demo_server;
mod logging;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "connecta",
    version,
    about = "One MCP endpoint in front of every tool source you choose."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the gateway (HTTP at /mcp, or --stdio).
    Serve {
        /// Config file (default: ./connecta.toml, else the built-in demo config).
        #[arg(long, short)]
        config: Option<PathBuf>,
        /// Serve MCP on stdin/stdout instead of HTTP; logs go to stderr.
        #[arg(long)]
        stdio: bool,
        /// Override server.listen (e.g. 127.0.0.1:0 for an ephemeral port).
        #[arg(long)]
        listen: Option<String>,
    },
    /// Validate a config file without starting anything.
    Check {
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
    /// Write a commented starter config.
    Init {
        /// Where to write it (default: ./connecta.toml).
        #[arg(long, short)]
        config: Option<PathBuf>,
        /// Overwrite an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Check a running deployment end to end and say plainly what is wrong.
    Doctor {
        /// The gateway's base URL, e.g. http://127.0.0.1:8787
        #[arg(long, default_value = "http://127.0.0.1:8787")]
        url: String,
        /// Bearer token for /mcp (default: $CONNECTA_TOKEN).
        #[arg(long, env = "CONNECTA_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
    /// Inspect the payload-free activity log.
    Activity {
        #[command(subcommand)]
        command: commands::activity::ActivityCommand,
    },
    /// Manage connector credentials in the encrypted vault.
    Credential {
        #[command(subcommand)]
        command: commands::credential::CredentialCommand,
    },
    /// Answer the approval questions of the `ask` policy.
    Approvals {
        #[command(subcommand)]
        command: commands::approvals::ApprovalsCommand,
    },
    /// Issue, list and revoke access tokens for /mcp.
    Token {
        #[command(subcommand)]
        command: commands::token::TokenCommand,
    },
    /// Vault key management.
    Vault {
        #[command(subcommand)]
        command: commands::vault::VaultCommand,
    },
    /// Run the built-in demo MCP server on stdio.
    DemoServer,
}

/// The hidden argument that turns this binary into a code-mode sandbox
/// worker. Checked before anything else: the worker hardens itself and must
/// start single-threaded, before any runtime exists.
pub const WORKER_ARG: &str = "__sandbox-worker";

/// How long blocking work still running after a command may delay exit.
const STRAGGLERS: std::time::Duration = std::time::Duration::from_secs(1);

/// Make this process non-dumpable: another process of the same user (a
/// stdio downstream server among them) can then neither attach to it
/// (ptrace) nor read its memory, `/proc/<pid>/environ` (which holds the
/// tokens and the vault key passed in the environment), `/proc/<pid>/mem`,
/// its open descriptors or its maps, and it leaves no core dump. What
/// `/proc/<pid>/status` and `stat` say (memory, CPU, state) stays readable
/// to everyone, as for any process. Sandbox workers are left as they are:
/// they hold no secret and harden themselves.
fn hide_from_same_user_processes() {
    #[cfg(target_os = "linux")]
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        eprintln!("connecta: could not make the process non-dumpable: {e}");
    }
}

fn main() -> ExitCode {
    if std::env::args_os().nth(1).is_some_and(|a| a == WORKER_ARG) {
        allocator::stop_background_purge();
        return connecta_sandbox::worker_main();
    }
    allocator::cap_malloc_arenas();
    hide_from_same_user_processes();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("connecta: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            Command::Serve {
                config,
                stdio,
                listen,
            } => commands::serve::run(config, stdio, listen).await,
            Command::Check { config } => commands::check::run(config),
            Command::Init { config, force } => commands::init::run(config, force),
            Command::Doctor { url, token } => commands::doctor::run(&url, token.as_deref()).await,
            Command::Activity { command } => commands::activity::run(command).await,
            Command::Credential { command } => commands::credential::run(command).await,
            Command::Approvals { command } => commands::approvals::run(command).await,
            Command::Token { command } => commands::token::run(command).await,
            Command::Vault { command } => commands::vault::run(command).await,
            Command::DemoServer => demo_server::run().await,
        }
    });
    // Every command has awaited its own work by now. What can be left is a
    // blocking read of stdin (`serve --stdio` stopped by a signal while the
    // client keeps stdin open), which would hold a plain drop of the runtime
    // forever.
    runtime.shutdown_timeout(STRAGGLERS);
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("connecta: {e:#}");
            ExitCode::FAILURE
        }
    }
}
