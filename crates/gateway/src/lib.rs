//! The gateway engine: connectors and their cached catalogs, the call path
//! with its fail-closed policy, result shaping and stashing, activity, and
//! the meta-tools — all as plain Rust over plain values.
//!
//! Architecture invariant: this crate does not know JSON-RPC or HTTP. The
//! server crate turns MCP requests into [`Gateway::call_meta`] calls and
//! [`MetaOutput`]s back into MCP results.

#![forbid(unsafe_code)]

mod admission;
mod approvals;
mod call_path;
mod catalog_cell;
mod clock;
mod code;
mod context;
pub mod credential_admin;
pub mod credentials;
pub mod meta;
pub mod metrics;
pub mod oauth_flow;
mod redact;
mod shaping;
pub mod surface;
mod validate;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use connecta_connectors::{
    ApiConnector, Connector, CredentialBinding, DynConnector, McpConnector, McpOptions,
};
use connecta_core::config::{Config, ConnectorConfig, ConnectorKind, McpTransport, StartMode};
use connecta_store::{ActivitySink, ActivityWriter, Store};
use connecta_vault::KeyLocation;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

pub use admission::CallAdmission;
pub use approvals::{approval_status, approval_view};
pub use catalog_cell::{CatalogCell, CatalogStatus, Loaded};
pub use clock::now_ms;
pub use code::{WorkerCommand, truncate_result};
pub use connecta_connectors::{ConnectorState, ConnectorStatus};
pub use context::{ApprovalInput, Elicitor, InputRequest, RequestCtx};
pub use credentials::{KeyCache, VaultCredentials};
pub use meta::MetaOutput;
pub use redact::Redactor;
pub use validate::ArgValidator;

/// How often expired stash entries and old activity are purged.
const HOUSEKEEPING_EVERY: Duration = Duration::from_secs(60);

/// One configured connector and everything the gateway keeps for it.
pub struct ConnectorHandle {
    pub config: Arc<ConnectorConfig>,
    pub connector: DynConnector,
    pub catalog: Arc<CatalogCell>,
    pub admission: CallAdmission,
    /// The vault credential of a connector with a `[connector.credential]`.
    pub credential: Option<Arc<VaultCredentials>>,
    /// The downstream OAuth of a connector with `[connector.oauth]`.
    pub oauth: Option<Arc<oauth_flow::OAuthCredentials>>,
    /// Latency of this connector's calls, by outcome (`/metrics`).
    pub calls: Arc<metrics::ConnectorCalls>,
}

pub struct Gateway {
    pub config: Arc<Config>,
    connectors: Vec<ConnectorHandle>,
    by_id: HashMap<String, usize>,
    pub store: Arc<dyn Store>,
    activity: ActivitySink,
    writer: Mutex<Option<ActivityWriter>>,
    pub redactor: Redactor,
    /// Where the vault key lives; operator actions that set credentials
    /// create it there when it is missing.
    pub keys: Arc<KeyCache>,
    started: Instant,
    housekeeping: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Code mode; `None` only for in-process gateways started without a
    /// worker command (the binary always has one).
    code: Option<code::CodeMode>,
    /// A handle on ourselves for work that outlives a borrow (program hosts).
    me: Weak<Gateway>,
    /// Fired when a shutdown's grace has run out: the requests still running
    /// are stopped and answer `executor_closed`, so their clients get a typed
    /// result instead of a dropped response.
    stopping: CancellationToken,
    /// Latency histograms (requests, downstream calls, programs).
    metrics: metrics::Metrics,
}

/// What `/health` reports.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthReport {
    pub status: &'static str,
    pub version: &'static str,
    pub uptime_ms: u128,
    pub store: &'static str,
    pub connectors: Vec<ConnectorHealth>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorHealth {
    pub id: String,
    pub kind: &'static str,
    #[serde(flatten)]
    pub status: ConnectorStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalog: Option<CatalogStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalog_error: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("connector \"{id}\": {message}")]
    Connector { id: String, message: String },
    #[error("the code-mode sandbox could not start: {0}")]
    Sandbox(String),
}

impl Gateway {
    /// Build every connector, restore persisted catalogs, start boot-time
    /// children and warm catalogs in the background. Returns once the gateway
    /// can answer (catalog loads continue behind it).
    pub async fn start(
        config: Config,
        store: Arc<dyn Store>,
        worker: Option<WorkerCommand>,
    ) -> Result<Arc<Gateway>, StartError> {
        let keys = vault_key_location(&config, None);
        Gateway::start_with_vault(config, store, worker, keys).await
    }

    /// [`Gateway::start`] with the vault key's location (`CONNECTA_VAULT_KEY`
    /// or the key file) given by the caller. The key is read lazily, when a
    /// credential is first needed, and never created here.
    pub async fn start_with_vault(
        config: Config,
        store: Arc<dyn Store>,
        worker: Option<WorkerCommand>,
        keys: KeyLocation,
    ) -> Result<Arc<Gateway>, StartError> {
        let config = Arc::new(config);
        // What stdio children must not reach: the gateway's own files.
        let hidden = vec![data_dir(&config, None), keys.file.clone()];
        let keys = Arc::new(KeyCache::new(keys));
        let redactor = Redactor::process();
        for t in &config.auth.bearer_tokens {
            redactor.add(t.expose());
        }
        let mut connectors = Vec::with_capacity(config.connectors.len());
        let mut by_id = HashMap::new();
        for c in &config.connectors {
            let c = Arc::new(c.clone());
            for (tool, o) in &c.overrides {
                tracing::info!(connector = %c.id, tool = %tool, read_only = ?o.read_only, destructive = ?o.destructive, idempotent = ?o.idempotent, "operator annotation override");
            }
            let credential = c.credential.as_ref().map(|slot| {
                Arc::new(VaultCredentials::new(
                    &c.id,
                    slot.clone(),
                    store.clone(),
                    keys.clone(),
                    redactor.clone(),
                ))
            });
            let oauth = match (&c.oauth, &c.kind) {
                (Some(o), ConnectorKind::Mcp(m)) => match &m.transport {
                    McpTransport::Http { url, .. } => {
                        Some(Arc::new(oauth_flow::OAuthCredentials::new(
                            &c.id,
                            o.clone(),
                            url,
                            &config.server.public_url,
                            store.clone(),
                            keys.clone(),
                            redactor.clone(),
                        )))
                    }
                    McpTransport::Stdio { .. } => None,
                },
                _ => None,
            };
            let binding = match (&credential, &oauth) {
                (Some(source), _) => Some(CredentialBinding {
                    slot: source.slot().clone(),
                    source: source.clone(),
                    consent: false,
                }),
                (None, Some(source)) => Some(CredentialBinding {
                    slot: oauth_flow::oauth_slot(),
                    source: source.clone(),
                    consent: true,
                }),
                (None, None) => None,
            };
            let connector = build_connector(&c, &redactor, binding, &hidden)?;
            let catalog = Arc::new(CatalogCell::new(
                connector.clone(),
                c.clone(),
                store.clone(),
                config.limits.max_call_timeout,
            ));
            by_id.insert(c.id.clone(), connectors.len());
            connectors.push(ConnectorHandle {
                admission: CallAdmission::new(&c.id, c.max_concurrency, c.rate_limit),
                calls: Arc::new(metrics::ConnectorCalls::new(&c.id)),
                config: c,
                connector,
                catalog,
                credential,
                oauth,
            });
        }
        let metrics = metrics::Metrics::new(connectors.iter().map(|h| h.calls.clone()).collect());
        let code = match &worker {
            Some(w) => {
                let ids: Vec<&str> = config.connectors.iter().map(|c| c.id.as_str()).collect();
                Some(
                    code::CodeMode::start(&config.code, w, &ids)
                        .await
                        .map_err(StartError::Sandbox)?,
                )
            }
            None => None,
        };
        let (activity, writer) = ActivityWriter::spawn(store.clone());
        let gateway = Arc::new_cyclic(|me| Gateway {
            config,
            connectors,
            by_id,
            store,
            activity,
            writer: Mutex::new(Some(writer)),
            redactor,
            keys,
            started: Instant::now(),
            housekeeping: Mutex::new(None),
            code,
            me: me.clone(),
            stopping: CancellationToken::new(),
            metrics,
        });
        for h in &gateway.connectors {
            h.catalog.restore().await;
        }
        gateway.report_credentials().await;
        for h in &gateway.connectors {
            let boot = match &h.config.kind {
                ConnectorKind::Mcp(m) => m.start == StartMode::Boot,
                ConnectorKind::Api(_) => true,
            };
            if boot {
                let connector = h.connector.clone();
                let cell = h.catalog.clone();
                tokio::spawn(async move {
                    connector.start().await;
                    let _ = cell.get().await;
                });
            }
        }
        let me = Arc::downgrade(&gateway);
        *gateway
            .housekeeping
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(HOUSEKEEPING_EVERY);
            loop {
                tick.tick().await;
                let Some(g) = me.upgrade() else { break };
                g.housekeeping().await;
            }
        }));
        Ok(gateway)
    }

    async fn housekeeping(&self) {
        let now = clock::now_ms();
        if let Err(e) = self.store.stash_purge_expired(now).await {
            tracing::warn!(error = %e, "stash purge failed");
        }
        let retention =
            i64::try_from(self.config.activity.retention.as_millis()).unwrap_or(i64::MAX);
        let cutoff = now.saturating_sub(retention);
        if let Err(e) = self.store.activity_purge_before(cutoff).await {
            tracing::warn!(error = %e, "activity retention purge failed");
        }
        self.close_abandoned_approvals(now).await;
        // Decided approval questions keep no reason or arguments; their
        // history lives as long as the activity it pairs with.
        if let Err(e) = self.store.approval_purge_before(cutoff).await {
            tracing::warn!(error = %e, "approval retention purge failed");
        }
    }

    /// Say at boot which credential slots are empty or unreadable (names and
    /// labels only). `serve` never creates a key; it reports.
    async fn report_credentials(&self) {
        for h in &self.connectors {
            let Some(source) = &h.credential else {
                continue;
            };
            if let Err(why) = connecta_connectors::CredentialSource::load(source.as_ref()).await {
                tracing::warn!(
                    connector = %h.config.id,
                    credential = %source.slot().label,
                    "credential not usable: {}; set it with `connecta credential set {}`",
                    why.operator_detail(),
                    h.config.id
                );
            }
        }
    }

    pub fn connectors(&self) -> &[ConnectorHandle] {
        &self.connectors
    }

    pub fn connector(&self, id: &str) -> Option<&ConnectorHandle> {
        self.by_id.get(id).map(|&i| &self.connectors[i])
    }

    /// Finish a downstream OAuth flow at its callback: the connector it
    /// authorized, or why not (for the log; the browser is told nothing).
    pub async fn complete_oauth(
        &self,
        state: &str,
        code: Option<&str>,
        iss: Option<&str>,
        error: Option<&str>,
    ) -> Result<String, oauth_flow::CallbackRefusal> {
        let sources: Vec<(String, Arc<oauth_flow::OAuthCredentials>)> = self
            .connectors
            .iter()
            .filter_map(|h| h.oauth.clone().map(|o| (h.config.id.clone(), o)))
            .collect();
        oauth_flow::complete_callback(&sources, state, code, iss, error).await
    }

    pub fn activity(&self) -> &ActivitySink {
        &self.activity
    }

    /// The latency histograms, for `/metrics`.
    pub fn metrics(&self) -> &metrics::Metrics {
        &self.metrics
    }

    /// Sandbox worker pids (the benchmark measures their memory).
    pub fn sandbox_worker_pids(&self) -> Vec<u32> {
        self.code
            .as_ref()
            .map(|c| c.pool.stats().worker_pids)
            .unwrap_or_default()
    }

    pub fn health(&self) -> HealthReport {
        let connectors: Vec<ConnectorHealth> = self
            .connectors
            .iter()
            .map(|h| ConnectorHealth {
                id: h.config.id.clone(),
                kind: h.config.kind.as_str(),
                status: {
                    // A downstream's failure may quote what it was sent.
                    let mut s = h.connector.status();
                    s.last_error = s.last_error.map(|e| self.redactor.redact(&e).into_owned());
                    s
                },
                catalog: h.catalog.status(),
                catalog_error: h
                    .catalog
                    .last_error()
                    .map(|e| self.redactor.redact(&e.message).into_owned()),
            })
            .collect();
        let degraded = connectors.iter().any(|c| {
            c.catalog.is_none() && c.catalog_error.is_some()
                || c.status.state == connecta_connectors::ConnectorState::Down
        });
        HealthReport {
            status: if degraded { "degraded" } else { "ok" },
            version: env!("CARGO_PKG_VERSION"),
            uptime_ms: self.started.elapsed().as_millis(),
            store: self.store.backend(),
            connectors,
        }
    }

    /// End the shutdown grace: every request still in flight is cancelled
    /// and answers `executor_closed`, and any request after this one is
    /// refused the same way. Call it before [`Gateway::shutdown`], and give
    /// the surfaces a moment to write those answers.
    pub fn stop_in_flight(&self) {
        self.stopping.cancel();
    }

    /// Stop every connector (children are stopped and reaped), finish the
    /// catalog writes in progress, and flush the activity log.
    pub async fn shutdown(&self) {
        if let Some(h) = self
            .housekeeping
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            h.abort();
        }
        if let Some(code) = &self.code {
            code.pool.shutdown().await;
        }
        futures::future::join_all(self.connectors.iter().map(|h| h.connector.shutdown())).await;
        futures::future::join_all(self.connectors.iter().map(|h| h.catalog.persisted())).await;
        self.activity.flush().await;
    }

    /// Wait for activity written so far to reach the store (tests, CLI).
    pub async fn flush_activity(&self) {
        self.activity.flush().await;
    }

    /// Take the activity writer so the caller can await its end after the
    /// last sink is dropped.
    pub fn take_activity_writer(&self) -> Option<ActivityWriter> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// Register the secrets a connector's config holds (header values, a
/// child's environment) with `redactor`.
pub fn register_config_secrets(c: &ConnectorConfig, redactor: &Redactor) {
    let values: Vec<&connecta_core::secret::Secret> = match &c.kind {
        ConnectorKind::Mcp(m) => match &m.transport {
            McpTransport::Http { headers, .. } => headers.iter().map(|(_, v)| v).collect(),
            McpTransport::Stdio { env, .. } => env.iter().map(|(_, v)| v).collect(),
        },
        ConnectorKind::Api(api) => api
            .headers
            .iter()
            .chain(api.tools.iter().flat_map(|t| t.headers.iter()))
            .map(|(_, v)| v)
            .collect(),
    };
    for v in values {
        redactor.add(v.expose());
    }
    if let Some(s) = c.oauth.as_ref().and_then(|o| o.client_secret.as_ref()) {
        redactor.add(s.expose());
    }
}

fn build_connector(
    c: &ConnectorConfig,
    redactor: &Redactor,
    credential: Option<CredentialBinding>,
    hidden_paths: &[PathBuf],
) -> Result<DynConnector, StartError> {
    register_config_secrets(c, redactor);
    match &c.kind {
        ConnectorKind::Mcp(m) => {
            let options = McpOptions {
                handshake: m.handshake,
                start: m.start,
                backoff_min: m.restart_backoff_min,
                backoff_max: m.restart_backoff_max,
                hidden_paths: hidden_paths.to_vec(),
                ..McpOptions::default()
            };
            Ok(Arc::new(McpConnector::with_credential(
                &c.id,
                m.transport.clone(),
                options,
                credential,
            )) as Arc<dyn Connector>)
        }
        ConnectorKind::Api(api) => {
            let connector = ApiConnector::new(&c.id, api, credential).map_err(|message| {
                StartError::Connector {
                    id: c.id.clone(),
                    message,
                }
            })?;
            Ok(Arc::new(connector) as Arc<dyn Connector>)
        }
    }
}

/// Problems `connecta check` reports beyond what config lowering can see:
/// api connectors whose schemas do not compile or whose headers cannot be
/// sent (the same checks that stop `serve` at boot).
pub fn check_connectors(config: &Config) -> Vec<String> {
    config
        .connectors
        .iter()
        .filter_map(|c| match &c.kind {
            ConnectorKind::Api(api) => ApiConnector::new(&c.id, api, None)
                .err()
                .map(|e| format!("connector \"{}\": {e}", c.id)),
            ConnectorKind::Mcp(_) => None,
        })
        .collect()
}

/// Where the vault key is: `CONNECTA_VAULT_KEY`, else `vault.key_file`
/// (relative to the data directory).
pub fn vault_key_location(config: &Config, config_dir: Option<&std::path::Path>) -> KeyLocation {
    let file = PathBuf::from(&config.vault.key_file);
    let file = if file.is_relative() {
        data_dir(config, config_dir).join(file)
    } else {
        file
    };
    KeyLocation::from_process_env(file)
}

/// Where the data directory is, resolved against the config file's folder.
pub fn data_dir(config: &Config, config_dir: Option<&std::path::Path>) -> PathBuf {
    let p = PathBuf::from(&config.server.data_dir);
    match config_dir {
        Some(dir) if p.is_relative() => dir.join(p),
        _ => p,
    }
}
