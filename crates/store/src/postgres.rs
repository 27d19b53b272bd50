//! The PostgreSQL store, for several replicas on one database (`[store] url`).
//! It runs the same queries as SQLite (`sql.rs`); only the schema's types
//! differ (BIGINT, BYTEA). Replicas that start together migrate one at a
//! time, under an advisory lock.

use std::time::Duration;

use async_trait::async_trait;
use connecta_core::activity::{
    ActivityEvent, Actor, ApprovalDecision, ApprovalNote, EventKind, Friction, Outcome, Source,
};
use connecta_core::error::ErrorCode;
use sqlx::postgres::{PgPool, PgPoolOptions, PgRow};
use sqlx::{Postgres, QueryBuilder, Row};

use crate::migrate::Migration;
use crate::{
    AccessTokenRow, ActivityQuery, ApprovalRow, StashEntry, StashQuota, Store, StoreError,
    StoredCatalog, VaultRow,
};

/// The advisory lock migrations take (any constant unique to connecta).
const MIGRATION_LOCK: i64 = 0x636f_6e6e_6563_7461;

/// Schema migrations, applied in order, each exactly once. Append only.
/// Version 1 is the SQLite schema as of its fourth migration.
const MIGRATIONS: &[Migration] = &[(
    1,
    r#"
CREATE TABLE stash (
    id            TEXT PRIMARY KEY,
    actor_key     TEXT NOT NULL,
    body          TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL
);
CREATE INDEX stash_expiry ON stash (expires_at_ms);

CREATE TABLE activity (
    id             TEXT PRIMARY KEY,
    occurred_at_ms BIGINT NOT NULL,
    request_id     TEXT NOT NULL,
    actor_kind     TEXT NOT NULL,
    actor_id       TEXT,
    connector_id   TEXT NOT NULL,
    tool_name      TEXT NOT NULL,
    address        TEXT NOT NULL,
    source         TEXT NOT NULL,
    outcome        TEXT NOT NULL,
    duration_ms    BIGINT NOT NULL,
    attempts       BIGINT NOT NULL,
    error_code     TEXT,
    friction       TEXT,
    kind           TEXT NOT NULL DEFAULT 'call',
    approval_id    TEXT,
    decision       TEXT,
    decided_by     TEXT
);
CREATE INDEX activity_recent ON activity (occurred_at_ms DESC, id DESC);

CREATE TABLE vault (
    connector     TEXT NOT NULL,
    field         TEXT NOT NULL,
    ciphertext    BYTEA NOT NULL,
    nonce         BYTEA NOT NULL,
    key_id        TEXT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (connector, field)
);

CREATE TABLE catalog (
    connector     TEXT PRIMARY KEY,
    fingerprint   TEXT NOT NULL,
    tools_json    TEXT NOT NULL,
    fetched_at_ms BIGINT NOT NULL,
    config_key    TEXT NOT NULL DEFAULT ''
);

CREATE TABLE access_token (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    digest        BYTEA NOT NULL UNIQUE,
    created_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT,
    revoked_at_ms BIGINT
);
CREATE UNIQUE INDEX access_token_live_name ON access_token (name) WHERE revoked_at_ms IS NULL;

CREATE TABLE approval (
    id            TEXT PRIMARY KEY,
    connector_id  TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    address       TEXT NOT NULL,
    actor_kind    TEXT NOT NULL,
    actor_id      TEXT,
    reason        TEXT,
    args_json     TEXT,
    created_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    status        TEXT NOT NULL,
    decided_by    TEXT,
    decided_at_ms BIGINT
);
CREATE INDEX approval_by_status ON approval (status, created_at_ms);
"#,
)];

#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connect to `url` (`postgres://…`) and migrate. The error never
    /// repeats the URL (it may hold a password).
    pub async fn connect(url: &str) -> Result<PgStore, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await?;
        let store = PgStore { pool };
        store.migrate().await?;
        Ok(store)
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(MIGRATION_LOCK)
            .execute(&mut *tx)
            .await?;
        crate::migrate::apply(
            &mut tx,
            "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at_ms BIGINT NOT NULL)",
            MIGRATIONS,
            crate::sql::dollar,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// The connection activity is appended on: any of the pool's.
    async fn activity_connection(
        &self,
    ) -> Result<sqlx::pool::PoolConnection<Postgres>, sqlx::Error> {
        self.pool.acquire().await
    }

    /// An append failed: nothing to reset, the pool replaces a connection
    /// it finds broken.
    async fn reset_activity_connection(&self) {}
}

impl_store!(PgStore, Postgres, PgRow, "postgres", crate::sql::dollar);
