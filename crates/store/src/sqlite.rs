//! The embedded SQLite store: one file in the data directory, created on
//! first run, migrated at open.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use connecta_core::activity::{
    ActivityEvent, Actor, ApprovalDecision, ApprovalNote, EventKind, Friction, Outcome, Source,
};
use connecta_core::error::ErrorCode;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use sqlx::{QueryBuilder, Row, Sqlite};

use crate::migrate::Migration;
use crate::{
    AccessTokenRow, ActivityQuery, ApprovalRow, StashEntry, StashQuota, Store, StoreError,
    StoredCatalog, VaultRow,
};

/// The store's file name inside the data directory.
pub const DB_FILE: &str = "connecta.db";

/// Schema migrations, applied in order, each exactly once. Append only.
const MIGRATIONS: &[Migration] = &[
    (
        1,
        r#"
CREATE TABLE stash (
    id            TEXT PRIMARY KEY,
    actor_key     TEXT NOT NULL,
    body          TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
);
CREATE INDEX stash_expiry ON stash (expires_at_ms);

CREATE TABLE activity (
    id             TEXT PRIMARY KEY,
    occurred_at_ms INTEGER NOT NULL,
    request_id     TEXT NOT NULL,
    actor_kind     TEXT NOT NULL,
    actor_id       TEXT,
    connector_id   TEXT NOT NULL,
    tool_name      TEXT NOT NULL,
    address        TEXT NOT NULL,
    source         TEXT NOT NULL,
    outcome        TEXT NOT NULL,
    duration_ms    INTEGER NOT NULL,
    attempts       INTEGER NOT NULL,
    error_code     TEXT,
    friction       TEXT
);
CREATE INDEX activity_recent ON activity (occurred_at_ms DESC, id DESC);

CREATE TABLE vault (
    connector     TEXT NOT NULL,
    field         TEXT NOT NULL,
    ciphertext    BLOB NOT NULL,
    nonce         BLOB NOT NULL,
    key_id        TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    PRIMARY KEY (connector, field)
);

CREATE TABLE catalog (
    connector     TEXT PRIMARY KEY,
    fingerprint   TEXT NOT NULL,
    tools_json    TEXT NOT NULL,
    fetched_at_ms INTEGER NOT NULL
);
"#,
    ),
    // Catalogs written before this carry an empty key and are never
    // restored: nothing says which settings they were curated under.
    (
        2,
        "ALTER TABLE catalog ADD COLUMN config_key TEXT NOT NULL DEFAULT ''",
    ),
    (
        3,
        r#"
CREATE TABLE access_token (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    digest        BLOB NOT NULL UNIQUE,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER,
    revoked_at_ms INTEGER
);
CREATE UNIQUE INDEX access_token_live_name ON access_token (name) WHERE revoked_at_ms IS NULL;
"#,
    ),
    (
        4,
        r#"
ALTER TABLE activity ADD COLUMN kind TEXT NOT NULL DEFAULT 'call';
ALTER TABLE activity ADD COLUMN approval_id TEXT;
ALTER TABLE activity ADD COLUMN decision TEXT;
ALTER TABLE activity ADD COLUMN decided_by TEXT;

CREATE TABLE approval (
    id            TEXT PRIMARY KEY,
    connector_id  TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    address       TEXT NOT NULL,
    actor_kind    TEXT NOT NULL,
    actor_id      TEXT,
    reason        TEXT,
    args_json     TEXT,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    status        TEXT NOT NULL,
    decided_by    TEXT,
    decided_at_ms INTEGER
);
CREATE INDEX approval_by_status ON approval (status, created_at_ms);
"#,
    ),
];

#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    path: PathBuf,
}

impl SqliteStore {
    /// Open (creating if needed) `<data_dir>/connecta.db` and migrate it.
    /// The directory is created 0700 and the database files are kept 0600
    /// (they hold stashed results and the arguments of open approval
    /// questions), whatever the umask.
    pub async fn open(data_dir: &Path) -> Result<SqliteStore, StoreError> {
        let data_dir_error = |source| StoreError::DataDir {
            path: data_dir.display().to_string(),
            source,
        };
        crate::create_private_dir(data_dir).map_err(data_dir_error)?;
        if let Some(warning) = crate::private_files::open_to_others(data_dir) {
            tracing::warn!("{warning}");
        }
        let path = data_dir.join(DB_FILE);
        // SQLite creates its `-wal` and `-shm` files with the database
        // file's mode: a database created 0600 (or tightened to it) gives
        // private companions.
        crate::private_files::create_private_file(&path).map_err(data_dir_error)?;
        for file in db_files(&path) {
            crate::private_files::restrict_file(&file).map_err(data_dir_error)?;
        }
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let pool = connect_waiting_for_others(options).await?;
        let store = SqliteStore { pool, path };
        store.migrate().await?;
        for file in db_files(&store.path) {
            crate::private_files::restrict_file(&file).map_err(data_dir_error)?;
        }
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        // The write lock from the start: see `migrate`.
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        crate::migrate::apply(
            &mut tx,
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at_ms INTEGER NOT NULL)",
            MIGRATIONS,
            crate::sql::question,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// How long a statement waits for another connection's lock, and how long
/// an open waits for other processes opening the same fresh file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The pool, once its first connection is set up. Switching a fresh file
/// to WAL takes an exclusive lock, and SQLite answers `SQLITE_BUSY` at once
/// (its busy handler is not consulted: waiting could deadlock) when
/// another connection, of this process or another one opening the same
/// data directory, holds the file meanwhile. Such an open is retried, with
/// a short backoff, for up to [`BUSY_TIMEOUT`].
async fn connect_waiting_for_others(
    options: SqliteConnectOptions,
) -> Result<SqlitePool, sqlx::Error> {
    let deadline = tokio::time::Instant::now() + BUSY_TIMEOUT;
    let mut backoff = Duration::from_millis(5);
    loop {
        // One attempt may itself wait in SQLite's busy handler: the
        // deadline bounds it too.
        let attempt = tokio::time::timeout_at(
            deadline,
            SqlitePoolOptions::new()
                .max_connections(4)
                .min_connections(1)
                .connect_with(options.clone()),
        )
        .await
        .unwrap_or(Err(sqlx::Error::PoolTimedOut));
        match attempt {
            Err(e) if is_busy(&e) && tokio::time::Instant::now() + backoff < deadline => {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_millis(200));
            }
            other => return other,
        }
    }
}

/// `SQLITE_BUSY` or one of its extended codes.
fn is_busy(e: &sqlx::Error) -> bool {
    const SQLITE_BUSY: i32 = 5;
    let sqlx::Error::Database(db) = e else {
        return false;
    };
    db.code()
        .and_then(|c| c.parse::<i32>().ok())
        .is_some_and(|c| c & 0xff == SQLITE_BUSY)
}

/// The database file and the WAL-mode companions SQLite keeps beside it.
fn db_files(db: &Path) -> [PathBuf; 3] {
    let with = |suffix: &str| {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    [db.to_path_buf(), with("-wal"), with("-shm")]
}

impl_store!(
    SqliteStore,
    Sqlite,
    SqliteRow,
    "sqlite",
    crate::sql::question
);
