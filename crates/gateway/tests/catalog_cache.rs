//! The catalog cache: fresh catalogs are served as they are, stale ones are
//! served while exactly one background refresh runs, expired ones wait for a
//! refresh, concurrent misses share one fetch, failures are never cached,
//! and curation (include/exclude globs, annotation overrides) is applied.
//! A fake connector counts fetches; everything else is the real code.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use connecta_connectors::{CallOptions, Connector, ConnectorState, ConnectorStatus};
use connecta_core::activity::{ActivityEvent, ApprovalDecision};
use connecta_core::catalog::ToolDef;
use connecta_core::config::{ConnectorConfig, parse_config};
use connecta_core::error::{ErrorCode, ToolError};
use connecta_core::policy::Annotations;
use connecta_core::result::ToolResult;
use connecta_gateway::CatalogCell;
use connecta_store::{
    AccessTokenRow, ActivityQuery, ApprovalRow, SqliteStore, Store, StoreError, StoredCatalog,
    VaultRow,
};
use serde_json::{Map, Value, json};

struct Fake {
    fetches: AtomicUsize,
    fail: AtomicBool,
    delay: Duration,
    version: AtomicUsize,
}

impl Fake {
    fn new(delay: Duration) -> Arc<Fake> {
        Arc::new(Fake {
            fetches: AtomicUsize::new(0),
            fail: AtomicBool::new(false),
            delay,
            version: AtomicUsize::new(1),
        })
    }
}

fn tool(name: &str, ro: Option<bool>) -> ToolDef {
    ToolDef {
        name: name.into(),
        title: None,
        description: Some(format!("{name} things")),
        input_schema: json!({"type": "object"}).into(),
        output_schema: None,
        annotations: Annotations {
            read_only_hint: ro,
            ..Annotations::default()
        },
    }
}

#[async_trait]
impl Connector for Fake {
    fn id(&self) -> &str {
        "fake"
    }
    fn kind(&self) -> &'static str {
        "mcp"
    }
    async fn start(&self) {}
    async fn list_tools(&self, _timeout: Duration) -> Result<Vec<ToolDef>, ToolError> {
        self.fetches.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.delay).await;
        if self.fail.load(Ordering::SeqCst) {
            return Err(ToolError::with_cause(ErrorCode::Unavailable, "down", true));
        }
        let v = self.version.load(Ordering::SeqCst);
        Ok(vec![
            tool("get_thing", Some(true)),
            tool("delete_thing", Some(false)),
            tool("secret_admin", Some(true)),
            tool(&format!("v{v}_tool"), None),
        ])
    }
    async fn call(
        &self,
        _t: &str,
        _a: Map<String, Value>,
        _o: CallOptions,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::default())
    }
    fn status(&self) -> ConnectorStatus {
        ConnectorStatus {
            state: ConnectorState::Ready,
            last_error: None,
            restarts: 0,
            pid: None,
        }
    }
    async fn shutdown(&self) {}
}

fn config(extra: &str) -> Arc<ConnectorConfig> {
    let text = format!("[[connector]]\nid = \"fake\"\nurl = \"http://127.0.0.1:1/mcp\"\n{extra}");
    let env = |_: &str| None;
    let c = parse_config(&text, "t.toml", &env).expect("config parses");
    Arc::new(c.connectors[0].clone())
}

async fn cell(fake: &Arc<Fake>, extra: &str) -> (tempfile::TempDir, Arc<CatalogCell>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path()).await.expect("store"));
    let cell = Arc::new(CatalogCell::new(
        fake.clone(),
        config(extra),
        store,
        Duration::from_secs(5),
    ));
    (dir, cell)
}

#[tokio::test]
async fn concurrent_misses_share_one_fetch() {
    let fake = Fake::new(Duration::from_millis(100));
    let (_d, cell) = cell(&fake, "").await;
    let gets = (0..20).map(|_| {
        let c = cell.clone();
        tokio::spawn(async move { c.get().await.map(|l| l.catalog.len()) })
    });
    for r in futures::future::join_all(gets).await {
        assert_eq!(r.expect("join").expect("loaded"), 4);
    }
    assert_eq!(fake.fetches.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn fresh_is_served_stale_refreshes_in_the_background_expired_waits() {
    let fake = Fake::new(Duration::from_millis(10));
    let (_d, cell) = cell(&fake, "catalog_ttl_secs = 1\ncatalog_stale_secs = 1\n").await;
    let first = cell.get().await.expect("load");
    let fp1 = first.catalog.fingerprint().to_owned();
    assert!(
        cell.get()
            .await
            .expect("fresh")
            .catalog
            .get("v1_tool")
            .is_some()
    );
    assert_eq!(
        fake.fetches.load(Ordering::SeqCst),
        1,
        "fresh catalogs are not refetched"
    );
    // Stale: the old catalog is answered at once and one refresh runs.
    fake.version.store(2, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let stale = cell.get().await.expect("stale");
    assert!(
        stale.catalog.get("v1_tool").is_some(),
        "the stale catalog is served"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(fake.fetches.load(Ordering::SeqCst), 2);
    let refreshed = cell.get().await.expect("refreshed");
    assert!(refreshed.catalog.get("v2_tool").is_some());
    assert_ne!(
        refreshed.catalog.fingerprint(),
        fp1,
        "the fingerprint detects the change"
    );
    // Expired (past TTL + stale): a request waits for the fetch; a failure
    // is returned, not the old catalog, and is not cached.
    fake.fail.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let err = cell.get().await.err().expect("expired and failing");
    assert_eq!(err.code, ErrorCode::CatalogLookupFailed);
    assert!(err.retryable);
    fake.fail.store(false, Ordering::SeqCst);
    assert!(cell.get().await.is_ok(), "the next request fetches again");
}

#[tokio::test]
async fn a_failed_first_load_is_never_cached() {
    let fake = Fake::new(Duration::ZERO);
    fake.fail.store(true, Ordering::SeqCst);
    let (_d, cell) = cell(&fake, "").await;
    assert!(cell.get().await.is_err());
    assert!(cell.peek().is_none());
    assert!(cell.last_error().is_some());
    fake.fail.store(false, Ordering::SeqCst);
    assert!(cell.get().await.is_ok());
    assert!(cell.last_error().is_none());
}

#[tokio::test]
async fn include_exclude_and_overrides_curate_the_catalog() {
    let fake = Fake::new(Duration::ZERO);
    let (_d, cell) = cell(
        &fake,
        "include_tools = [\"*_thing\", \"secret_*\"]\nexclude_tools = [\"secret_*\"]\n[connector.overrides.delete_thing]\nread_only = true\ndestructive = true\n[connector.overrides.get_thing]\nread_only = false\n",
    )
    .await;
    let l = cell.get().await.expect("load");
    let names: Vec<&str> = l.catalog.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["get_thing", "delete_thing"]);
    assert!(
        !l.catalog.get("get_thing").expect("t").read_only(),
        "an override can withdraw read-only"
    );
    assert!(
        !l.catalog.get("delete_thing").expect("t").read_only(),
        "read_only + destructive stays approval-required"
    );
}

#[tokio::test]
async fn a_persisted_catalog_is_restored_within_its_window() {
    let fake = Fake::new(Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path()).await.expect("store"));
    let first = Arc::new(CatalogCell::new(
        fake.clone(),
        config(""),
        store.clone(),
        Duration::from_secs(5),
    ));
    first.get().await.expect("load");
    first.persisted().await;
    let second = Arc::new(CatalogCell::new(
        fake.clone(),
        config(""),
        store,
        Duration::from_secs(5),
    ));
    second.restore().await;
    let restored = second.peek().expect("restored without a fetch");
    assert_eq!(restored.catalog.len(), 4);
    assert_eq!(fake.fetches.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_persisted_catalog_curated_under_other_settings_is_not_restored() {
    let fake = Fake::new(Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path()).await.expect("store"));
    let first = Arc::new(CatalogCell::new(
        fake.clone(),
        config(""),
        store.clone(),
        Duration::from_secs(5),
    ));
    first.get().await.expect("load");
    first.persisted().await;
    assert!(
        first
            .peek()
            .expect("loaded")
            .catalog
            .get("get_thing")
            .expect("t")
            .read_only()
    );

    // The operator withdraws read-only from a tool and restarts: the stored
    // catalog, curated without the override, must not come back.
    let overridden = "[connector.overrides.get_thing]\nread_only = false\ndestructive = true\n";
    let second = Arc::new(CatalogCell::new(
        fake.clone(),
        config(overridden),
        store.clone(),
        Duration::from_secs(5),
    ));
    second.restore().await;
    assert!(second.peek().is_none(), "restored under other settings");
    let fresh = second.get().await.expect("load");
    assert!(!fresh.catalog.get("get_thing").expect("t").read_only());
    assert_eq!(fake.fetches.load(Ordering::SeqCst), 2);

    // The catalog it loaded is stored under the new settings: the next
    // restart with this config restores it, with the override.
    second.persisted().await;
    let third = Arc::new(CatalogCell::new(
        fake.clone(),
        config(overridden),
        store,
        Duration::from_secs(5),
    ));
    third.restore().await;
    let restored = third.peek().expect("restored under the same settings");
    assert!(!restored.catalog.get("get_thing").expect("t").read_only());
    assert_eq!(fake.fetches.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_excluded_tool_does_not_come_back_from_the_store() {
    let fake = Fake::new(Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path()).await.expect("store"));
    let first = Arc::new(CatalogCell::new(
        fake.clone(),
        config(""),
        store.clone(),
        Duration::from_secs(5),
    ));
    first.get().await.expect("load");
    first.persisted().await;
    let second = Arc::new(CatalogCell::new(
        fake.clone(),
        config("exclude_tools = [\"secret_*\"]\n"),
        store,
        Duration::from_secs(5),
    ));
    second.restore().await;
    let served = match second.peek() {
        Some(l) => l,
        None => second.get().await.expect("load"),
    };
    assert!(served.catalog.get("secret_admin").is_none());
}

#[tokio::test]
async fn a_caller_with_a_deadline_is_answered_by_it_and_the_load_goes_on() {
    let fake = Fake::new(Duration::from_millis(800));
    let (_d, cell) = cell(&fake, "").await;
    let started = std::time::Instant::now();
    let e = match cell.get_within(Duration::from_millis(50)).await {
        Ok(_) => panic!("a catalog that takes 800 ms was served within 50 ms"),
        Err(e) => e,
    };
    assert!(started.elapsed() < Duration::from_millis(700));
    assert_eq!(e.code, ErrorCode::Timeout, "{e:?}");
    assert!(e.retryable);
    // Nobody waits on the load any more, yet it finishes and is served.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert!(cell.peek().is_some(), "the abandoned load was dropped");
    cell.get().await.expect("served");
    assert_eq!(fake.fetches.load(Ordering::SeqCst), 1);
}

/// A store whose catalog writes wait until the test opens the gate; every
/// other call goes straight to SQLite.
struct GatedStore {
    inner: SqliteStore,
    gate: tokio::sync::Semaphore,
}

#[async_trait]
impl Store for GatedStore {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    async fn stash_put(
        &self,
        e: &connecta_store::StashEntry,
        quota: connecta_store::StashQuota,
    ) -> Result<bool, StoreError> {
        self.inner.stash_put(e, quota).await
    }
    async fn stash_get(
        &self,
        id: &str,
        actor_key: &str,
        now_ms: i64,
    ) -> Result<Option<String>, StoreError> {
        self.inner.stash_get(id, actor_key, now_ms).await
    }
    async fn stash_purge_expired(&self, now_ms: i64) -> Result<u64, StoreError> {
        self.inner.stash_purge_expired(now_ms).await
    }
    async fn activity_append(&self, events: &[ActivityEvent]) -> Result<(), StoreError> {
        self.inner.activity_append(events).await
    }
    async fn activity_list(&self, q: &ActivityQuery) -> Result<Vec<ActivityEvent>, StoreError> {
        self.inner.activity_list(q).await
    }
    async fn activity_purge_before(&self, before_ms: i64) -> Result<u64, StoreError> {
        self.inner.activity_purge_before(before_ms).await
    }
    async fn vault_put(&self, rows: &[VaultRow]) -> Result<(), StoreError> {
        self.inner.vault_put(rows).await
    }
    async fn vault_get(&self, connector: &str) -> Result<Vec<VaultRow>, StoreError> {
        self.inner.vault_get(connector).await
    }
    async fn vault_list(&self) -> Result<Vec<VaultRow>, StoreError> {
        self.inner.vault_list().await
    }
    async fn vault_delete(&self, connector: &str) -> Result<u64, StoreError> {
        self.inner.vault_delete(connector).await
    }
    async fn vault_delete_field(&self, connector: &str, field: &str) -> Result<u64, StoreError> {
        self.inner.vault_delete_field(connector, field).await
    }
    async fn vault_replace_all(&self, rows: &[VaultRow]) -> Result<(), StoreError> {
        self.inner.vault_replace_all(rows).await
    }
    async fn catalog_put(&self, catalog: &StoredCatalog) -> Result<(), StoreError> {
        let _open = self.gate.acquire().await.expect("gate");
        self.inner.catalog_put(catalog).await
    }
    async fn catalog_get(&self, connector: &str) -> Result<Option<StoredCatalog>, StoreError> {
        self.inner.catalog_get(connector).await
    }
    async fn token_insert(&self, row: &AccessTokenRow) -> Result<(), StoreError> {
        self.inner.token_insert(row).await
    }
    async fn token_by_digest(&self, digest: &[u8]) -> Result<Option<AccessTokenRow>, StoreError> {
        self.inner.token_by_digest(digest).await
    }
    async fn token_list(&self) -> Result<Vec<AccessTokenRow>, StoreError> {
        self.inner.token_list().await
    }
    async fn token_revoke(
        &self,
        name_or_id: &str,
        now_ms: i64,
    ) -> Result<Option<AccessTokenRow>, StoreError> {
        self.inner.token_revoke(name_or_id, now_ms).await
    }
    async fn token_rename(
        &self,
        id: &str,
        name: &str,
    ) -> Result<Option<AccessTokenRow>, StoreError> {
        self.inner.token_rename(id, name).await
    }
    async fn approval_insert(&self, row: &ApprovalRow) -> Result<(), StoreError> {
        self.inner.approval_insert(row).await
    }
    async fn approval_get(&self, id: &str) -> Result<Option<ApprovalRow>, StoreError> {
        self.inner.approval_get(id).await
    }
    async fn approval_list(
        &self,
        pending_only: bool,
        limit: usize,
    ) -> Result<Vec<ApprovalRow>, StoreError> {
        self.inner.approval_list(pending_only, limit).await
    }
    async fn approval_decide(
        &self,
        id: &str,
        decision: ApprovalDecision,
        decided_by: &str,
        now_ms: i64,
        only_unexpired: bool,
    ) -> Result<Option<ApprovalRow>, StoreError> {
        self.inner
            .approval_decide(id, decision, decided_by, now_ms, only_unexpired)
            .await
    }
    async fn approval_close_expired(
        &self,
        before_ms: i64,
        decided_by: &str,
        now_ms: i64,
    ) -> Result<Vec<ApprovalRow>, StoreError> {
        self.inner
            .approval_close_expired(before_ms, decided_by, now_ms)
            .await
    }
    async fn approval_purge_before(&self, before_ms: i64) -> Result<u64, StoreError> {
        self.inner.approval_purge_before(before_ms).await
    }
}

#[tokio::test]
async fn a_loaded_catalog_is_served_before_it_is_written_to_the_store() {
    let fake = Fake::new(Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(GatedStore {
        inner: SqliteStore::open(dir.path()).await.expect("store"),
        gate: tokio::sync::Semaphore::new(0),
    });
    let cell = Arc::new(CatalogCell::new(
        fake.clone(),
        config(""),
        store.clone(),
        Duration::from_secs(5),
    ));
    // The write is blocked, yet the catalog is served.
    let loaded = tokio::time::timeout(Duration::from_secs(5), cell.get())
        .await
        .expect("the load does not wait for the store")
        .expect("load");
    assert_eq!(loaded.catalog.len(), 4);
    assert!(
        store.catalog_get("fake").await.expect("read").is_none(),
        "nothing is written while the gate is shut"
    );
    // `persisted` waits for the write in progress.
    let waiting = tokio::time::timeout(Duration::from_millis(200), cell.persisted()).await;
    assert!(waiting.is_err(), "persisted() returned before the write");
    store.gate.add_permits(1);
    cell.persisted().await;
    let stored = store
        .catalog_get("fake")
        .await
        .expect("read")
        .expect("written");
    assert_eq!(stored.fingerprint, loaded.catalog.fingerprint());
}
