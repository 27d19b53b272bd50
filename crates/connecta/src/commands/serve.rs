//! `connecta serve`: load config, open the store, start the gateway, serve
//! HTTP (or stdio) until SIGTERM/SIGINT, then drain and stop every child.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use connecta_gateway::{Gateway, WorkerCommand};
use connecta_server::AppState;
use connecta_store::Store;
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};

use crate::config_file::{self, LoadError};

pub async fn run(
    config: Option<PathBuf>,
    stdio: bool,
    listen: Option<String>,
) -> anyhow::Result<ExitCode> {
    let mut loaded = match config_file::load(config, true) {
        Ok(l) => l,
        Err(LoadError::Invalid(e)) => {
            eprintln!("{e}");
            return Ok(ExitCode::FAILURE);
        }
        Err(LoadError::Other(e)) => return Err(e),
    };
    if let Some(l) = listen {
        let addr = l
            .parse::<SocketAddr>()
            .with_context(|| format!("--listen {l} is not an address like 127.0.0.1:8787"))?;
        if let Err(e) = loaded.config.listen_on(addr) {
            eprintln!("{}: --listen {l}: {e}", loaded.describe());
            return Ok(ExitCode::FAILURE);
        }
    }
    crate::logging::init(&loaded.config.log);
    // The catalog loads ahead leave their peak free in the allocator; this
    // gives it back while the gateway is idle.
    crate::allocator::start_background_purge();
    for w in &loaded.config.warnings {
        tracing::warn!("{w}");
    }
    let data_dir = connecta_gateway::data_dir(&loaded.config, loaded.dir());
    let store = crate::commands::open_store(&loaded.config, &data_dir).await?;
    // From here on the data directory is named as resolved, so the gateway
    // (which hides it from stdio children) finds it whatever its cwd.
    loaded.config.server.data_dir = data_dir.display().to_string();
    if !stdio {
        warn_if_nobody_can_connect(&loaded.config, store.as_ref()).await;
    }
    tracing::info!(config = %loaded.describe(), data = %data_dir.display(), store = store.backend(), connectors = loaded.config.connectors.len(), "starting connecta");

    // Bound before anything starts, so a busy port fails at once and a
    // derived public URL names the port actually bound (`--listen :0`).
    let listener = if stdio {
        None
    } else {
        let listen_addr = loaded.config.server.listen;
        let listener = TcpListener::bind(listen_addr)
            .await
            .with_context(|| format!("could not listen on {listen_addr}"))?;
        let local = listener.local_addr()?;
        if let Err(e) = loaded.config.listen_on(local) {
            eprintln!("{}: {e}", loaded.describe());
            return Ok(ExitCode::FAILURE);
        }
        Some((listener, local))
    };
    // The operator secret is settled before anything starts, so a bad
    // secret file stops the boot with nothing to clean up.
    let operator = if stdio {
        None
    } else {
        match connecta_server::operator::resolve_secret(&loaded.config, &data_dir) {
            Ok(Some((secret, source))) => Some((secret, operator_secret_origin(source))),
            Ok(None) => {
                tracing::info!("the operator UI is off ([operator] enabled = false)");
                None
            }
            Err(e) => {
                eprintln!("the operator secret could not be read or created: {e}");
                return Ok(ExitCode::FAILURE);
            }
        }
    };
    let worker = WorkerCommand {
        program: std::env::current_exe()
            .context("could not find this executable for the sandbox workers")?,
        args: vec![crate::WORKER_ARG.to_owned()],
    };
    let keys = connecta_gateway::vault_key_location(&loaded.config, loaded.dir());
    // Every index the gateway builds, and every search against it, reads
    // words with the deployment's lexicon.
    if loaded.config.search.lexicon.is_some() {
        tracing::info!(lexicon = ?loaded.config.search.lexicon, "search lexicon extended");
    }
    if connecta_search::install_lexicon(loaded.lexicon.clone()).is_err() {
        anyhow::bail!("the search lexicon was installed twice in one process");
    }
    let gateway =
        Gateway::start_with_vault(loaded.config, store.clone(), Some(worker), keys).await?;

    // Each surface drains its own requests within the grace (and stops the
    // ones that outlast it) before it returns; only then are the connectors
    // and sandboxes those requests use stopped.
    let outcome = if let Some((listener, local)) = listener {
        // One machine-readable line on stdout for launchers and benchmarks,
        // and a human one on stderr.
        println!("{{\"type\":\"ready\",\"port\":{}}}", local.port());
        eprintln!("connecta is listening: connect your MCP client to http://{local}/mcp");
        let mut state = AppState::new(gateway.clone())
            .with_memory_release(crate::allocator::release_free_memory);
        if let Some((secret, from)) = &operator {
            state = state.with_operator(secret);
            eprintln!(
                "operator UI: {}/ui (sign in with {from})",
                gateway.config.server.public_url.trim_end_matches('/')
            );
        }
        connecta_server::serve_http(listener, state, announced_shutdown())
            .await
            .context("HTTP server failed")
    } else {
        connecta_server::serve_stdio(gateway.clone(), announced_shutdown())
            .await
            .context("stdio session failed")
    };
    tracing::info!("stopping connectors");
    tokio::time::timeout(Duration::from_secs(15), gateway.shutdown())
        .await
        .unwrap_or_else(|_| tracing::warn!("connectors did not all stop in time"));
    if let Some(writer) = gateway.take_activity_writer() {
        drop(gateway);
        let _ = tokio::time::timeout(Duration::from_secs(5), writer.finish()).await;
    }
    tracing::info!("stopped");
    outcome.map(|()| ExitCode::SUCCESS)
}

fn operator_secret_origin(source: connecta_server::operator::SecretSource) -> String {
    match source {
        connecta_server::operator::SecretSource::Config => {
            "the [operator] secret in the config".to_owned()
        }
        connecta_server::operator::SecretSource::File { path, created } => format!(
            "the secret in {}{}",
            path.display(),
            if created {
                ", created now with mode 0600"
            } else {
                ""
            }
        ),
    }
}

/// [`shutdown_signal`], logged when it arrives.
async fn announced_shutdown() {
    shutdown_signal().await;
    tracing::info!("shutting down: draining in-flight requests");
}

/// Resolves on SIGTERM or SIGINT.
async fn shutdown_signal() {
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    match (term, int) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// With `auth.open = false` and no `bearer_tokens`, /mcp takes only issued
/// tokens: say so at boot when none is active.
async fn warn_if_nobody_can_connect(config: &connecta_core::config::Config, store: &dyn Store) {
    if config.auth.open || !config.auth.bearer_tokens.is_empty() || config.auth.oauth.is_some() {
        return;
    }
    let now = connecta_gateway::now_ms();
    let active = match store.token_list().await {
        Ok(rows) => rows
            .iter()
            .any(|t| t.revoked_at_ms.is_none() && t.expires_at_ms.is_none_or(|e| e > now)),
        Err(e) => {
            tracing::warn!("could not count the access tokens: {e}");
            return;
        }
    };
    if !active {
        tracing::warn!(
            "auth.open is false, no bearer_tokens are set and no access token is active: /mcp refuses every HTTP request until you issue one (`connecta token create NAME`) or set bearer_tokens (serve --stdio is not affected)"
        );
    }
}
