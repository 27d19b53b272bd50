//! One connector's catalog, cached: a TTL, a stale window during which the
//! old catalog is served while one background refresh runs, and exactly one
//! refresh in flight per connector. A partial catalog is a failure and is
//! never cached or served. Each loaded catalog carries its search index
//! (built lazily, once per fingerprint) and its compiled argument validators.
//!
//! Whatever path a catalog arrives by (a fetch, or a restore of the one an
//! earlier run persisted), it is served only as curated by the current
//! config: a restart must never bring back an earlier file's classification.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use connecta_connectors::DynConnector;
use connecta_core::catalog::{Catalog, ToolDef};
use connecta_core::config::{ConnectorConfig, SearchTerm};
use connecta_core::error::{ErrorCode, ToolError};
use connecta_core::glob::passes_filters;
use connecta_search::CatalogIndex;
use connecta_store::{Store, StoredCatalog};
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};

use crate::clock::now_ms;
use crate::validate::ArgValidator;

/// A loaded catalog and what is derived from it.
pub struct Loaded {
    pub catalog: Arc<Catalog>,
    pub fetched_at_ms: i64,
    /// The connector's configured description, indexed with every tool.
    description: Option<String>,
    /// The connector's configured search terms, indexed with the names.
    search_terms: Arc<[SearchTerm]>,
    index: OnceLock<Arc<CatalogIndex>>,
    validators: Mutex<HashMap<String, Arc<ArgValidator>>>,
    /// Sanitized tool name → tool positions, for program shortcuts.
    aliases: OnceLock<HashMap<String, Vec<usize>>>,
}

impl Loaded {
    /// The tools a shortcut name could mean: every tool whose sanitized
    /// name is `alias` (contract A2/A3), the tool of that exact name among
    /// them. A shortcut that means two tools picks neither, even when one is
    /// named exactly so (`lookup_record` beside `lookup-record`): the model
    /// may have found the other in search. Only a name no identifier
    /// spells (`svc["get-thing"]`) means its tool alone.
    pub fn by_alias(&self, alias: &str) -> Vec<Arc<ToolDef>> {
        if let Some(t) = self.catalog.get(alias)
            && connecta_core::address::sanitize_identifier(alias) != alias
        {
            return vec![t.clone()];
        }
        let map = self.aliases.get_or_init(|| {
            let mut m: HashMap<String, Vec<usize>> = HashMap::new();
            for (i, t) in self.catalog.tools().iter().enumerate() {
                m.entry(connecta_core::address::sanitize_identifier(&t.name))
                    .or_default()
                    .push(i);
            }
            m
        });
        map.get(alias)
            .map(|ix| {
                ix.iter()
                    .map(|&i| self.catalog.tools()[i].clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn new(catalog: Catalog, fetched_at_ms: i64, config: &ConnectorConfig) -> Loaded {
        Loaded {
            catalog: Arc::new(catalog),
            fetched_at_ms,
            description: config.description.clone(),
            search_terms: config.search_terms.clone().into(),
            index: OnceLock::new(),
            validators: Mutex::new(HashMap::new()),
            aliases: OnceLock::new(),
        }
    }

    /// The search index, built on first use (and warmed in the background
    /// right after a catalog loads, so requests rarely pay for it).
    pub fn index(&self) -> Arc<CatalogIndex> {
        self.index
            .get_or_init(|| {
                Arc::new(CatalogIndex::with_config(
                    self.catalog.clone(),
                    self.description.as_deref(),
                    &self.search_terms,
                ))
            })
            .clone()
    }

    /// Build the index off the request path.
    fn warm(self: &Arc<Self>) {
        if self.index.get().is_none() {
            let me = self.clone();
            tokio::task::spawn_blocking(move || {
                me.index();
            });
        }
    }

    /// The compiled validator for a tool's input schema, compiled on first use.
    pub fn validator(&self, tool: &ToolDef) -> Arc<ArgValidator> {
        let mut map = self.validators.lock().unwrap_or_else(|p| p.into_inner());
        // Looked up by `&str` first: the name is copied once, not per call.
        if let Some(v) = map.get(tool.name.as_str()) {
            return v.clone();
        }
        let v = Arc::new(ArgValidator::compile(&tool.input_schema.value()));
        map.insert(tool.name.clone(), v.clone());
        v
    }
}

type Refresh = Shared<BoxFuture<'static, Result<Arc<Loaded>, ToolError>>>;

pub struct CatalogCell {
    connector: DynConnector,
    config: Arc<ConnectorConfig>,
    store: Arc<dyn Store>,
    list_timeout: Duration,
    /// The settings this cell's catalogs are persisted under
    /// ([`ConnectorConfig::persisted_catalog_key`]); `None`: never persisted.
    persist_key: Option<String>,
    current: Mutex<Option<Arc<Loaded>>>,
    inflight: Mutex<Option<Refresh>>,
    last_error: Mutex<Option<ToolError>>,
    /// `fetched_at_ms` of the newest catalog written to the store; held
    /// while writing, so writes land in fetch order.
    persisted: Arc<tokio::sync::Mutex<i64>>,
}

/// The freshness of what a cell holds, for `/health`.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogStatus {
    pub tools: usize,
    pub fingerprint: String,
    pub age_ms: i64,
    pub stale: bool,
}

impl CatalogCell {
    pub fn new(
        connector: DynConnector,
        config: Arc<ConnectorConfig>,
        store: Arc<dyn Store>,
        list_timeout: Duration,
    ) -> CatalogCell {
        CatalogCell {
            persist_key: config.persisted_catalog_key(),
            connector,
            config,
            store,
            list_timeout,
            current: Mutex::new(None),
            inflight: Mutex::new(None),
            last_error: Mutex::new(None),
            persisted: Arc::new(tokio::sync::Mutex::new(i64::MIN)),
        }
    }

    /// Wait for the catalog write in progress, if any (catalogs are written
    /// off the request path; shutdown and tests wait here).
    pub async fn persisted(&self) {
        drop(self.persisted.lock().await);
    }

    /// Write a freshly loaded catalog to the store in the background: a
    /// restart restores from it, but no request waits for it (serializing
    /// 10,000 tools and the SQLite write took longer than everything else a
    /// first search does). When no write is running, the lock is taken
    /// before this returns, so a later [`CatalogCell::persisted`] waits for
    /// this write. An older catalog never overwrites a newer one.
    fn persist(&self, catalog: Arc<Catalog>, fetched_at_ms: i64) {
        let Some(key) = self.persist_key.clone() else {
            return;
        };
        let Ok(guard) = self.persisted.clone().try_lock_owned() else {
            // A write is running: queue behind it.
            let lock = self.persisted.clone();
            let store = self.store.clone();
            tokio::spawn(async move {
                let guard = lock.lock_owned().await;
                write_catalog(store, guard, catalog, fetched_at_ms, key).await;
            });
            return;
        };
        let store = self.store.clone();
        tokio::spawn(write_catalog(store, guard, catalog, fetched_at_ms, key));
    }

    /// Seed the cell with a catalog persisted by an earlier run, if it is
    /// still within its stale window and was fetched and curated under the
    /// settings the config gives now. One persisted under other settings
    /// (an override added, a glob changed, another command) is left alone:
    /// the connector loads afresh, as on a first run.
    pub async fn restore(&self) {
        let Some(key) = &self.persist_key else {
            return;
        };
        let Ok(Some(stored)) = self.store.catalog_get(&self.config.id).await else {
            return;
        };
        if stored.config_key != *key {
            tracing::info!(connector = %self.config.id, "the persisted catalog was curated under other settings; loading afresh");
            return;
        }
        let age = now_ms() - stored.fetched_at_ms;
        if age < 0
            || age as u128 >= (self.config.catalog_ttl + self.config.catalog_stale).as_millis()
        {
            return;
        }
        let Ok(tools) = serde_json::from_str::<Vec<ToolDef>>(&stored.tools_json) else {
            return;
        };
        // Curating again is idempotent and cheap, and keeps "every served
        // catalog went through the current curation" true on this path by
        // construction rather than by the key alone.
        let loaded = Arc::new(Loaded::new(
            Catalog::new(&self.config.id, curate(&self.config, tools)),
            stored.fetched_at_ms,
            &self.config,
        ));
        loaded.warm();
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(loaded);
    }

    pub fn peek(&self) -> Option<Arc<Loaded>> {
        self.current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn status(&self) -> Option<CatalogStatus> {
        let loaded = self.peek()?;
        let age = now_ms() - loaded.fetched_at_ms;
        Some(CatalogStatus {
            tools: loaded.catalog.len(),
            fingerprint: loaded.catalog.fingerprint().to_owned(),
            age_ms: age,
            stale: age as u128 >= self.config.catalog_ttl.as_millis(),
        })
    }

    pub fn last_error(&self) -> Option<ToolError> {
        self.last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The catalog to serve now: fresh; or stale within the window (and a
    /// background refresh started); or, failing both, the result of a refresh.
    pub async fn get(self: &Arc<Self>) -> Result<Arc<Loaded>, ToolError> {
        if let Some(loaded) = self.peek() {
            let age = (now_ms() - loaded.fetched_at_ms).max(0) as u128;
            if age < self.config.catalog_ttl.as_millis() {
                return Ok(loaded);
            }
            if age < (self.config.catalog_ttl + self.config.catalog_stale).as_millis() {
                // Started, not awaited: its own task drives it.
                drop(self.refresh_future());
                return Ok(loaded);
            }
        }
        self.refresh_future().await
    }

    /// [`CatalogCell::get`] for a caller with a deadline of its own (a
    /// program's host call, contract L4): a catalog still loading after
    /// `wait` is a retryable `timeout` for this caller, and the load goes on
    /// for the next one.
    pub async fn get_within(self: &Arc<Self>, wait: Duration) -> Result<Arc<Loaded>, ToolError> {
        match tokio::time::timeout(wait, self.get()).await {
            Ok(r) => r,
            Err(_) => {
                let id = self.config.id.as_str();
                Err(ToolError::with_cause(
                    ErrorCode::Timeout,
                    format!(
                        "the catalog of {id} did not load within {} ms; it is still loading, so try again shortly",
                        wait.as_millis()
                    ),
                    true,
                )
                .detail("connector", id))
            }
        }
    }

    /// Force a refresh now (single flight with any refresh already running).
    pub async fn refresh(self: &Arc<Self>) -> Result<Arc<Loaded>, ToolError> {
        self.refresh_future().await
    }

    fn refresh_future(self: &Arc<Self>) -> Refresh {
        let mut slot = self.inflight.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = slot.as_ref() {
            return f.clone();
        }
        let me = self.clone();
        let fut: BoxFuture<'static, Result<Arc<Loaded>, ToolError>> = async move {
            let result = me.load().await;
            *me.inflight.lock().unwrap_or_else(|p| p.into_inner()) = None;
            result
        }
        .boxed();
        let shared = fut.shared();
        *slot = Some(shared.clone());
        // Driven by a task of its own: a caller that stops waiting (its
        // deadline passed, its client went away) must not stall the load
        // for everyone else.
        let driver = shared.clone();
        tokio::spawn(async move {
            let _ = driver.await;
        });
        shared
    }

    async fn load(&self) -> Result<Arc<Loaded>, ToolError> {
        let id = &self.config.id;
        let tools = match self.connector.list_tools(self.list_timeout).await {
            Ok(t) => t,
            Err(e) if e.code == ErrorCode::AuthRequired => {
                // A credential problem keeps its code and recovery envelope
                // (contract E3): it is the thing the agent must act on.
                *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.clone());
                return Err(e);
            }
            Err(e) => {
                let err = ToolError::with_cause(
                    ErrorCode::CatalogLookupFailed,
                    format!("the catalog of {id} could not be loaded: {}", e.message),
                    e.retryable,
                )
                .detail("connector", id.as_str());
                let err = match e.retry_after_ms {
                    Some(ms) => err.retry_after(ms),
                    None => err,
                };
                tracing::warn!(connector = %id, error = %err.message, "catalog load failed");
                *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(err.clone());
                return Err(err);
            }
        };
        let curated = curate(&self.config, tools);
        let catalog = Catalog::new(id, curated);
        let fetched_at_ms = now_ms();
        let previous = self.peek();
        let changed = previous
            .as_ref()
            .is_none_or(|p| p.catalog.fingerprint() != catalog.fingerprint());
        if changed {
            tracing::info!(connector = %id, tools = catalog.len(), fingerprint = %catalog.fingerprint(), "catalog loaded");
        }
        // An unchanged catalog keeps its index and validators.
        let loaded = match previous {
            Some(p) if p.catalog.fingerprint() == catalog.fingerprint() => Arc::new(Loaded {
                catalog: p.catalog.clone(),
                fetched_at_ms,
                description: p.description.clone(),
                search_terms: p.search_terms.clone(),
                index: p.index.get().cloned().map_or_else(OnceLock::new, |i| {
                    let cell = OnceLock::new();
                    let _ = cell.set(i);
                    cell
                }),
                validators: Mutex::new(
                    p.validators
                        .lock()
                        .unwrap_or_else(|x| x.into_inner())
                        .clone(),
                ),
                aliases: OnceLock::new(),
            }),
            _ => Arc::new(Loaded::new(catalog, fetched_at_ms, &self.config)),
        };
        if changed {
            self.persist(loaded.catalog.clone(), fetched_at_ms);
        }
        loaded.warm();
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(loaded.clone());
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = None;
        Ok(loaded)
    }
}

async fn write_catalog(
    store: Arc<dyn Store>,
    mut newest: tokio::sync::OwnedMutexGuard<i64>,
    catalog: Arc<Catalog>,
    fetched_at_ms: i64,
    config_key: String,
) {
    if fetched_at_ms < *newest {
        return;
    }
    let id = catalog.connector.clone();
    let fingerprint = catalog.fingerprint().to_owned();
    let serialized = tokio::task::spawn_blocking(move || serde_json::to_string(catalog.tools()))
        .await
        .ok()
        .and_then(Result::ok);
    let Some(tools_json) = serialized else {
        tracing::warn!(connector = %id, "could not serialize the catalog to persist it");
        return;
    };
    let stored = StoredCatalog {
        connector: id.clone(),
        fingerprint,
        tools_json,
        fetched_at_ms,
        config_key,
    };
    match store.catalog_put(&stored).await {
        Ok(()) => *newest = fetched_at_ms,
        Err(e) => tracing::warn!(connector = %id, error = %e, "could not persist catalog"),
    }
}

/// Apply include/exclude globs and operator annotation overrides.
pub fn curate(config: &ConnectorConfig, tools: Vec<ToolDef>) -> Vec<ToolDef> {
    tools
        .into_iter()
        .filter(|t| passes_filters(&t.name, &config.include_tools, &config.exclude_tools))
        .map(|mut t| {
            if let Some(o) = config.overrides.get(&t.name) {
                o.apply(&mut t.annotations);
            }
            t
        })
        .collect()
}
