//! The embedded SQLite store: one file in the data directory, created on
//! first run, migrated at open.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use connecta_core::activity::{
    ActivityEvent, Actor, ApprovalDecision, ApprovalNote, EventKind, Friction, Outcome, Source,
};
use connecta_core::error::ErrorCode;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteRow, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection, QueryBuilder, Row, Sqlite};
use tokio::sync::{MappedMutexGuard, Mutex, MutexGuard};

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
    /// The activity writer's own connection (see
    /// [`SqliteStore::activity_connection`]).
    activity: Arc<Mutex<Writer>>,
    path: PathBuf,
}

/// The activity writer's connection: opened at the first append, and
/// again after an append failed.
#[derive(Debug)]
struct Writer {
    options: SqliteConnectOptions,
    connection: Option<SqliteConnection>,
    closed: bool,
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
        let pool = connect_waiting_for_others(options.clone().pragma("cache_size", POOL_CACHE_KIB))
            .await?;
        // The writer needs only the last pages of the activity table and
        // its indexes; a cache of SQLite's default size (2 MB) would fill
        // with every page it ever wrote.
        let writer = Writer {
            options: options.pragma("cache_size", WRITER_CACHE_KIB),
            connection: None,
            closed: false,
        };
        let store = SqliteStore {
            pool,
            activity: Arc::new(Mutex::new(writer)),
            path,
        };
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
        self.activity.lock().await.closed = true;
        self.reset_activity_connection().await;
        self.pool.close().await;
    }

    /// The connection activity is appended on, opened if there is none.
    /// SQLite drops a connection's whole page cache when another connection
    /// wrote since its last transaction, and the pool hands its connections
    /// out in turn: appends on pooled connections read the activity table's
    /// last pages back (about ten reads per append) and each pooled
    /// connection cached them again. The writer's own connection keeps them
    /// while nothing else writes between its appends.
    async fn activity_connection(
        &self,
    ) -> Result<MappedMutexGuard<'_, SqliteConnection>, sqlx::Error> {
        let mut writer = self.activity.lock().await;
        if writer.closed {
            return Err(sqlx::Error::PoolClosed);
        }
        if writer.connection.is_none() {
            writer.connection = Some(writer.options.connect().await?);
        }
        MutexGuard::try_map(writer, |w| w.connection.as_mut()).map_err(|_| sqlx::Error::PoolClosed)
    }

    /// An append failed (or the store closes): the writer's connection is
    /// closed, and the next append opens a new one. SQLite ends
    /// the transaction itself on some errors (a full disk, an I/O error),
    /// sqlx's rollback then fails and it keeps counting the transaction as
    /// open, so every later append would nest in a transaction that never
    /// commits and hold the database's write lock; a pooled connection is
    /// replaced in time, this one would not be.
    async fn reset_activity_connection(&self) {
        let connection = self.activity.lock().await.connection.take();
        if let Some(connection) = connection {
            let _ = connection.close().await;
        }
    }
}

/// The activity writer's page cache, in KiB (SQLite's negative
/// `cache_size`): 64 pages.
const WRITER_CACHE_KIB: &str = "-256";

/// A pooled connection's page cache, in KiB: 128 pages. SQLite drops a
/// connection's whole cache at its next transaction when another
/// connection wrote since its last one, which the activity writer does
/// with every batch (within 50 ms of a call), so while calls are made a
/// pooled connection's cache is seldom read again; what it held was
/// mostly the pages of the last large row it wrote or read: a catalog of
/// 10,000 tools filled SQLite's default cache (2 MB) of each connection
/// that touched it (docs/performance.md, "What holds the memory").
const POOL_CACHE_KIB: &str = "-512";

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
                // A ping before each use is a round trip to the
                // connection's thread; a connection to a local file does
                // not go stale the way a network one does.
                .test_before_acquire(false)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;

    fn events(from: usize, n: usize) -> Vec<ActivityEvent> {
        (from..from + n).map(crate::test_event).collect()
    }

    /// Bytes SQLite's connection threads in this process have read through
    /// read-like system calls (its pages, from the database and the WAL).
    /// Fails when there are no such threads or their counts cannot be read.
    /// nextest (`scripts/test`) runs each test in a process of its own;
    /// under `cargo test` other tests' stores would be counted too.
    fn bytes_sqlite_read() -> u64 {
        let (mut total, mut threads) = (0, 0);
        for task in std::fs::read_dir("/proc/self/task")
            .expect("tasks")
            .flatten()
        {
            let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            if !comm.starts_with("sqlx-sqlite") {
                continue;
            }
            let io = std::fs::read_to_string(task.path().join("io")).expect("the thread's io");
            total += io
                .lines()
                .find_map(|l| l.strip_prefix("rchar: "))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .expect("rchar");
            threads += 1;
        }
        assert!(threads > 0, "no SQLite connection thread found");
        total
    }

    /// Each pooled connection caches at most `POOL_CACHE_KIB`, the
    /// activity writer `WRITER_CACHE_KIB` (SQLite's default is 2 MB each).
    #[tokio::test]
    async fn pooled_connections_and_the_writer_have_small_page_caches() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = SqliteStore::open(dir.path()).await.expect("open");
        let cache_size = |row: sqlx::sqlite::SqliteRow| row.get::<i64, _>(0).to_string();
        let mut held = Vec::new();
        for _ in 0..4 {
            let mut connection = store.pool.acquire().await.expect("connection");
            let row = sqlx::query("PRAGMA cache_size")
                .fetch_one(&mut *connection)
                .await
                .expect("pragma");
            assert_eq!(cache_size(row), POOL_CACHE_KIB);
            held.push(connection);
        }
        let row = sqlx::query("PRAGMA cache_size")
            .fetch_one(&mut *store.activity_connection().await.expect("writer"))
            .await
            .expect("pragma");
        assert_eq!(cache_size(row), WRITER_CACHE_KIB);
    }

    /// A busy gateway's pool holds all its connections and hands them out
    /// in turn. Appends on them read the table's last pages back each time
    /// (another connection wrote since); on the writer's own connection
    /// they stay cached.
    #[tokio::test]
    async fn activity_appends_keep_their_pages_cached_between_batches() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = SqliteStore::open(dir.path()).await.expect("open");
        let mut held = Vec::new();
        for _ in 0..4 {
            held.push(store.pool.acquire().await.expect("connection"));
        }
        drop(held);
        for batch in 0..20 {
            store
                .activity_append(&events(batch * 100, 100))
                .await
                .expect("append");
        }
        // No checkpoint in the middle (it would read the WAL back).
        sqlx::raw_sql("PRAGMA wal_autocheckpoint = 0")
            .execute(&mut *store.activity_connection().await.expect("writer"))
            .await
            .expect("pragma");
        // 60 appends write several times the writer's cache: what it
        // evicts is never needed again.
        let before = bytes_sqlite_read();
        assert!(before > 0, "SQLite read nothing while it opened the store");
        for batch in 0..60 {
            store
                .activity_append(&events(2_000 + batch * 50, 50))
                .await
                .expect("append");
        }
        let pages = bytes_sqlite_read().saturating_sub(before) / 4096;
        assert!(pages < 10, "60 appends read {pages} pages back");
        let page = store
            .activity_list(&crate::ActivityQuery {
                limit: 5,
                ..Default::default()
            })
            .await
            .expect("list");
        assert_eq!(page.first().map(|e| e.id.as_str()), Some("ev-004999"));
    }

    /// A writer's connection left inside a transaction (as SQLite leaves it
    /// after ending one itself on a full disk, with sqlx still counting it
    /// open) fails its next append and is replaced: the append after that
    /// is written, instead of every later one failing.
    #[tokio::test]
    async fn a_failed_append_gets_the_next_one_a_new_connection() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = SqliteStore::open(dir.path()).await.expect("open");
        store.activity_append(&events(0, 1)).await.expect("append");
        sqlx::raw_sql("BEGIN")
            .execute(&mut *store.activity_connection().await.expect("writer"))
            .await
            .expect("begin");
        assert!(store.activity_append(&events(1, 1)).await.is_err());
        store.activity_append(&events(2, 1)).await.expect("append");
        let ids: Vec<String> = store
            .activity_list(&crate::ActivityQuery {
                limit: 10,
                ..Default::default()
            })
            .await
            .expect("list")
            .into_iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(ids, ["ev-000002", "ev-000000"]);
    }

    /// A closed store refuses appends instead of opening a connection
    /// again.
    #[tokio::test]
    async fn a_closed_store_refuses_activity() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = SqliteStore::open(dir.path()).await.expect("open");
        store.close().await;
        assert!(store.activity_append(&events(0, 1)).await.is_err());
    }
}
