//! connecta's state, behind one [`Store`] trait.
//!
//! What lives here: the oversized-result stash (with expiry), the activity
//! log, vault entries (ciphertext only), persisted catalogs, operator-issued
//! access tokens (their SHA-256 only) and approval questions. SQLite is the
//! embedded default; PostgreSQL serves several replicas. Both run the same
//! queries (`sql.rs`) and pass the same suite.
//!
//! Architecture invariant: nothing in this crate sees a plaintext secret
//! but the PostgreSQL URL it connects with (never logged or repeated in an
//! error). Vault rows are opaque ciphertext produced and consumed elsewhere.

#![forbid(unsafe_code)]

mod activity_writer;
mod migrate;
#[macro_use]
mod sql;
mod postgres;
mod private_files;
mod sqlite;
#[cfg(feature = "testing")]
pub mod testing;

use async_trait::async_trait;
use connecta_core::activity::{ActivityEvent, Actor, ApprovalDecision, Outcome, Source};

pub use activity_writer::{ActivitySink, ActivityWriter};
pub use postgres::PgStore;
pub use private_files::{create_private_dir, restrict_file};
pub use sqlite::SqliteStore;

/// The store a config names: PostgreSQL at `postgres_url` when one is set
/// (several replicas share it), else SQLite in `data_dir`.
pub async fn open(
    postgres_url: Option<&str>,
    data_dir: &std::path::Path,
) -> Result<std::sync::Arc<dyn Store>, StoreError> {
    Ok(match postgres_url {
        Some(url) => std::sync::Arc::new(PgStore::connect(url).await?),
        None => std::sync::Arc::new(SqliteStore::open(data_dir).await?),
    })
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// A write that would break a uniqueness rule the caller can act on.
    #[error("{0}")]
    Conflict(String),
    #[error("could not prepare the data directory {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
}

/// An oversized `call_tool` result, kept for paging with `get_result`.
#[derive(Debug, Clone)]
pub struct StashEntry {
    pub id: String,
    /// Only the caller that produced a result can page it.
    pub actor_key: String,
    pub text: String,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

/// How many bytes of unexpired stashed text one caller, and everyone
/// together, may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StashQuota {
    pub caller_bytes: u64,
    pub total_bytes: u64,
}

impl StashQuota {
    /// No bound (tests, tools that stash by hand).
    pub const UNLIMITED: StashQuota = StashQuota {
        caller_bytes: i64::MAX as u64,
        total_bytes: i64::MAX as u64,
    };
}

/// A page request over the activity log, newest first.
#[derive(Debug, Clone, Default)]
pub struct ActivityQuery {
    pub limit: usize,
    /// Keyset cursor: events strictly older than this `(occurred_at_ms, id)`.
    pub before: Option<(i64, String)>,
    pub since_ms: Option<i64>,
    pub connector: Option<String>,
    pub outcome: Option<Outcome>,
    pub source: Option<Source>,
}

/// An encrypted vault value: one field of one connector's credential slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultRow {
    pub connector: String,
    pub field: String,
    pub ciphertext: Vec<u8>,
    pub nonce: Vec<u8>,
    /// Which key encrypted it (a short key fingerprint), so rotation can tell.
    pub key_id: String,
    pub updated_at_ms: i64,
}

/// A catalog as last fetched from its connector, serialized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCatalog {
    pub connector: String,
    pub fingerprint: String,
    pub tools_json: String,
    pub fetched_at_ms: i64,
    /// The connector settings the catalog was fetched and curated under
    /// (`ConnectorConfig::persisted_catalog_key`): a restart restores the
    /// catalog only under the same settings.
    pub config_key: String,
}

/// An operator-issued access token as stored: never the token, only its
/// SHA-256. A name is unique among the tokens not revoked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessTokenRow {
    /// A short random id (`tok_…`), unique forever.
    pub id: String,
    pub name: String,
    pub digest: Vec<u8>,
    pub created_at_ms: i64,
    pub expires_at_ms: Option<i64>,
    pub revoked_at_ms: Option<i64>,
}

/// A question put to a human about one destructive call (policy `ask`).
/// `reason` and `args_json` are for the approver and are cleared when the
/// question is decided; the activity log never holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRow {
    /// Gateway-issued (`apr_…`).
    pub id: String,
    pub connector_id: String,
    pub tool_name: String,
    pub address: String,
    /// Who asked for the call.
    pub actor: Actor,
    pub reason: Option<String>,
    pub args_json: Option<String>,
    pub created_at_ms: i64,
    /// After this nobody may approve it; the asking gateway then decides
    /// `unavailable`.
    pub expires_at_ms: i64,
    /// `pending`, or the decision (`ApprovalDecision::as_str`).
    pub status: String,
    pub decided_by: Option<String>,
    pub decided_at_ms: Option<i64>,
}

impl ApprovalRow {
    pub fn is_pending(&self) -> bool {
        self.status == "pending"
    }

    /// The decision, once there is one (unknown text is `unavailable`).
    pub fn decision(&self) -> Option<ApprovalDecision> {
        (!self.is_pending()).then(|| ApprovalDecision::parse(&self.status))
    }
}

#[async_trait]
pub trait Store: Send + Sync {
    /// The backend's name, for `/health` and logs (`"sqlite"`).
    fn backend(&self) -> &'static str;

    /// Stores `entry` unless it would take the unexpired stash of its
    /// caller past `quota.caller_bytes`, or the whole stash past
    /// `quota.total_bytes`; `false` then, and nothing is stored. Replicas
    /// storing at the same moment can pass a quota by one entry each.
    async fn stash_put(&self, entry: &StashEntry, quota: StashQuota) -> Result<bool, StoreError>;
    /// The stashed text, if it exists, belongs to `actor_key` and has not
    /// expired at `now_ms`.
    async fn stash_get(
        &self,
        id: &str,
        actor_key: &str,
        now_ms: i64,
    ) -> Result<Option<String>, StoreError>;
    async fn stash_purge_expired(&self, now_ms: i64) -> Result<u64, StoreError>;

    async fn activity_append(&self, events: &[ActivityEvent]) -> Result<(), StoreError>;
    async fn activity_list(&self, query: &ActivityQuery) -> Result<Vec<ActivityEvent>, StoreError>;
    async fn activity_purge_before(&self, before_ms: i64) -> Result<u64, StoreError>;

    async fn vault_put(&self, rows: &[VaultRow]) -> Result<(), StoreError>;
    async fn vault_get(&self, connector: &str) -> Result<Vec<VaultRow>, StoreError>;
    async fn vault_list(&self) -> Result<Vec<VaultRow>, StoreError>;
    async fn vault_delete(&self, connector: &str) -> Result<u64, StoreError>;
    /// Deletes one field; the count (0 or 1) says whether this call took it,
    /// so a one-time value (an OAuth flow's state) is used once across
    /// replicas.
    async fn vault_delete_field(&self, connector: &str, field: &str) -> Result<u64, StoreError>;
    /// Replace every vault row at once (key rotation), atomically.
    async fn vault_replace_all(&self, rows: &[VaultRow]) -> Result<(), StoreError>;

    async fn catalog_put(&self, catalog: &StoredCatalog) -> Result<(), StoreError>;
    async fn catalog_get(&self, connector: &str) -> Result<Option<StoredCatalog>, StoreError>;

    /// Adds a token; `Conflict` when a token not revoked has its name.
    async fn token_insert(&self, row: &AccessTokenRow) -> Result<(), StoreError>;
    /// The token with this digest, revoked and expired ones included.
    async fn token_by_digest(&self, digest: &[u8]) -> Result<Option<AccessTokenRow>, StoreError>;
    /// Every token, oldest first.
    async fn token_list(&self) -> Result<Vec<AccessTokenRow>, StoreError>;
    /// Revokes the token not yet revoked whose name or id is `name_or_id`;
    /// `None` when there is none.
    /// Renames the token `id` unless it is revoked (`None` then, or when
    /// there is no such id); `Conflict` when a live token has the name.
    async fn token_rename(
        &self,
        id: &str,
        name: &str,
    ) -> Result<Option<AccessTokenRow>, StoreError>;
    async fn token_revoke(
        &self,
        name_or_id: &str,
        now_ms: i64,
    ) -> Result<Option<AccessTokenRow>, StoreError>;

    async fn approval_insert(&self, row: &ApprovalRow) -> Result<(), StoreError>;
    async fn approval_get(&self, id: &str) -> Result<Option<ApprovalRow>, StoreError>;
    /// Newest first; only the pending ones when `pending_only`.
    async fn approval_list(
        &self,
        pending_only: bool,
        limit: usize,
    ) -> Result<Vec<ApprovalRow>, StoreError>;
    /// Decides a pending question, once: the row as decided, or `None` when
    /// it was not pending (someone decided first) or, with `only_unexpired`,
    /// has expired. Clears the reason and the arguments.
    async fn approval_decide(
        &self,
        id: &str,
        decision: ApprovalDecision,
        decided_by: &str,
        now_ms: i64,
        only_unexpired: bool,
    ) -> Result<Option<ApprovalRow>, StoreError>;
    /// Closes the questions still pending that expired before `before_ms`
    /// (their asker is gone: a crash, a lost replica) as `unavailable`,
    /// decided by `decided_by`, clearing their reason and arguments; returns
    /// them.
    async fn approval_close_expired(
        &self,
        before_ms: i64,
        decided_by: &str,
        now_ms: i64,
    ) -> Result<Vec<ApprovalRow>, StoreError>;
    /// Deletes decided questions created before `before_ms`.
    async fn approval_purge_before(&self, before_ms: i64) -> Result<u64, StoreError>;
}

/// Call event `i` for the crate's unit tests: id `ev-<i>` (six digits),
/// `i` ms after 1,000 ms.
#[cfg(test)]
pub(crate) fn test_event(i: usize) -> ActivityEvent {
    ActivityEvent::new(
        format!("ev-{i:06}"),
        1_000 + i as i64,
        "req-1",
        &Actor::anonymous(),
        connecta_core::activity::CallRecord {
            connector_id: "notes",
            tool_name: "get_note",
            source: Source::CallTool,
            duration_ms: 3,
            attempts: 1,
            error_code: None,
            friction: None,
        },
    )
}
