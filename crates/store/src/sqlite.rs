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

use crate::{
    AccessTokenRow, ActivityQuery, ApprovalRow, StashEntry, Store, StoreError, StoredCatalog,
    VaultRow,
};

/// The store's file name inside the data directory.
pub const DB_FILE: &str = "connecta.db";

/// Schema migrations, applied in order, each exactly once. Append only.
const MIGRATIONS: &[(i64, &str)] = &[
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
    pub async fn open(data_dir: &Path) -> Result<SqliteStore, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|source| StoreError::DataDir {
            path: data_dir.display().to_string(),
            source,
        })?;
        let path = data_dir.join(DB_FILE);
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .min_connections(1)
            .connect_with(options)
            .await?;
        let store = SqliteStore { pool, path };
        store.migrate().await?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        sqlx::query(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at_ms INTEGER NOT NULL)",
        )
        .execute(&self.pool)
        .await?;
        for (version, sql) in MIGRATIONS {
            let mut tx = self.pool.begin().await?;
            let done: Option<i64> =
                sqlx::query_scalar("SELECT version FROM schema_migrations WHERE version = ?")
                    .bind(version)
                    .fetch_optional(&mut *tx)
                    .await?;
            if done.is_some() {
                continue;
            }
            sqlx::raw_sql(*sql).execute(&mut *tx).await?;
            sqlx::query("INSERT INTO schema_migrations (version, applied_at_ms) VALUES (?, ?)")
                .bind(version)
                .bind(now_ms())
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            tracing::debug!(version, "applied store migration");
        }
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn activity_from_row(row: &SqliteRow) -> Result<ActivityEvent, StoreError> {
    let corrupt = |what: &str, v: &str| StoreError::Corrupt(format!("activity {what} \"{v}\""));
    let source: String = row.try_get("source")?;
    let outcome: String = row.try_get("outcome")?;
    let error_code: Option<String> = row.try_get("error_code")?;
    let friction: Option<String> = row.try_get("friction")?;
    let kind: String = row.try_get("kind")?;
    let approval_id: Option<String> = row.try_get("approval_id")?;
    let decision: Option<String> = row.try_get("decision")?;
    Ok(ActivityEvent {
        id: row.try_get("id")?,
        occurred_at_ms: row.try_get("occurred_at_ms")?,
        request_id: row.try_get("request_id")?,
        actor: Actor {
            kind: row.try_get("actor_kind")?,
            id: row.try_get("actor_id")?,
        },
        connector_id: row.try_get("connector_id")?,
        tool_name: row.try_get("tool_name")?,
        address: row.try_get("address")?,
        source: Source::parse(&source).ok_or_else(|| corrupt("source", &source))?,
        outcome: Outcome::parse(&outcome).ok_or_else(|| corrupt("outcome", &outcome))?,
        duration_ms: row.try_get::<i64, _>("duration_ms")?.max(0) as u64,
        attempts: row.try_get::<i64, _>("attempts")?.clamp(1, u32::MAX as i64) as u32,
        error_code: match error_code {
            Some(c) => Some(ErrorCode::parse(&c).ok_or_else(|| corrupt("error code", &c))?),
            None => None,
        },
        friction: match friction {
            Some(f) => Some(Friction::parse(&f).ok_or_else(|| corrupt("friction", &f))?),
            None => None,
        },
        kind: EventKind::parse(&kind),
        approval: match approval_id {
            Some(id) => Some(ApprovalNote {
                id,
                decision: decision.as_deref().map(ApprovalDecision::parse),
                decided_by: row.try_get("decided_by")?,
            }),
            None => None,
        },
    })
}

/// The activity columns by name (see `catalog_get` on `*`).
macro_rules! activity_columns {
    () => {
        "id, occurred_at_ms, request_id, actor_kind, actor_id, connector_id, tool_name, address, source, outcome, duration_ms, attempts, error_code, friction, kind, approval_id, decision, decided_by"
    };
}

/// The approval columns by name.
macro_rules! approval_columns {
    () => {
        "id, connector_id, tool_name, address, actor_kind, actor_id, reason, args_json, created_at_ms, expires_at_ms, status, decided_by, decided_at_ms"
    };
}

fn approval_from_row(r: &SqliteRow) -> Result<ApprovalRow, StoreError> {
    Ok(ApprovalRow {
        id: r.try_get("id")?,
        connector_id: r.try_get("connector_id")?,
        tool_name: r.try_get("tool_name")?,
        address: r.try_get("address")?,
        actor: Actor {
            kind: r.try_get("actor_kind")?,
            id: r.try_get("actor_id")?,
        },
        reason: r.try_get("reason")?,
        args_json: r.try_get("args_json")?,
        created_at_ms: r.try_get("created_at_ms")?,
        expires_at_ms: r.try_get("expires_at_ms")?,
        status: r.try_get("status")?,
        decided_by: r.try_get("decided_by")?,
        decided_at_ms: r.try_get("decided_at_ms")?,
    })
}

/// The access token columns by name (see `catalog_get` on `*`).
macro_rules! token_columns {
    () => {
        "id, name, digest, created_at_ms, expires_at_ms, revoked_at_ms"
    };
}

fn token_from_row(r: &SqliteRow) -> Result<AccessTokenRow, StoreError> {
    Ok(AccessTokenRow {
        id: r.try_get("id")?,
        name: r.try_get("name")?,
        digest: r.try_get("digest")?,
        created_at_ms: r.try_get("created_at_ms")?,
        expires_at_ms: r.try_get("expires_at_ms")?,
        revoked_at_ms: r.try_get("revoked_at_ms")?,
    })
}

fn vault_from_row(row: &SqliteRow) -> Result<VaultRow, StoreError> {
    Ok(VaultRow {
        connector: row.try_get("connector")?,
        field: row.try_get("field")?,
        ciphertext: row.try_get("ciphertext")?,
        nonce: row.try_get("nonce")?,
        key_id: row.try_get("key_id")?,
        updated_at_ms: row.try_get("updated_at_ms")?,
    })
}

async fn insert_vault(
    tx: &mut sqlx::Transaction<'_, Sqlite>,
    row: &VaultRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO vault (connector, field, ciphertext, nonce, key_id, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (connector, field) DO UPDATE SET ciphertext = excluded.ciphertext, nonce = excluded.nonce,
         key_id = excluded.key_id, updated_at_ms = excluded.updated_at_ms",
    )
    .bind(&row.connector)
    .bind(&row.field)
    .bind(&row.ciphertext)
    .bind(&row.nonce)
    .bind(&row.key_id)
    .bind(row.updated_at_ms)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

#[async_trait]
impl Store for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    async fn stash_put(&self, entry: &StashEntry) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO stash (id, actor_key, body, created_at_ms, expires_at_ms) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(&entry.id)
        .bind(&entry.actor_key)
        .bind(&entry.text)
        .bind(entry.created_at_ms)
        .bind(entry.expires_at_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn stash_get(
        &self,
        id: &str,
        actor_key: &str,
        now_ms: i64,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT body FROM stash WHERE id = ? AND actor_key = ? AND expires_at_ms > ?",
        )
        .bind(id)
        .bind(actor_key)
        .bind(now_ms)
        .fetch_optional(&self.pool)
        .await?)
    }

    async fn stash_purge_expired(&self, now_ms: i64) -> Result<u64, StoreError> {
        Ok(sqlx::query("DELETE FROM stash WHERE expires_at_ms <= ?")
            .bind(now_ms)
            .execute(&self.pool)
            .await?
            .rows_affected())
    }

    async fn activity_append(&self, events: &[ActivityEvent]) -> Result<(), StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let mut tx = self.pool.begin().await?;
        // One multi-row INSERT per chunk; SQLite allows 32,766 bound variables.
        for chunk in events.chunks(500) {
            let mut qb: QueryBuilder<Sqlite> = QueryBuilder::new(concat!(
                "INSERT OR IGNORE INTO activity (",
                activity_columns!(),
                ") "
            ));
            qb.push_values(chunk, |mut b, e| {
                b.push_bind(&e.id)
                    .push_bind(e.occurred_at_ms)
                    .push_bind(&e.request_id)
                    .push_bind(&e.actor.kind)
                    .push_bind(&e.actor.id)
                    .push_bind(&e.connector_id)
                    .push_bind(&e.tool_name)
                    .push_bind(&e.address)
                    .push_bind(e.source.as_str())
                    .push_bind(e.outcome.as_str())
                    .push_bind(e.duration_ms.min(i64::MAX as u64) as i64)
                    .push_bind(i64::from(e.attempts))
                    .push_bind(e.error_code.map(ErrorCode::as_str))
                    .push_bind(e.friction.map(Friction::as_str))
                    .push_bind(e.kind.as_str())
                    .push_bind(e.approval.as_ref().map(|a| a.id.clone()))
                    .push_bind(
                        e.approval
                            .as_ref()
                            .and_then(|a| a.decision.map(ApprovalDecision::as_str)),
                    )
                    .push_bind(e.approval.as_ref().and_then(|a| a.decided_by.clone()));
            });
            qb.build().execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn activity_list(&self, q: &ActivityQuery) -> Result<Vec<ActivityEvent>, StoreError> {
        let mut qb: QueryBuilder<Sqlite> = QueryBuilder::new(concat!(
            "SELECT ",
            activity_columns!(),
            " FROM activity WHERE 1 = 1"
        ));
        if let Some((ms, id)) = &q.before {
            qb.push(" AND (occurred_at_ms < ")
                .push_bind(*ms)
                .push(" OR (occurred_at_ms = ")
                .push_bind(*ms)
                .push(" AND id < ")
                .push_bind(id.clone())
                .push("))");
        }
        if let Some(since) = q.since_ms {
            qb.push(" AND occurred_at_ms >= ").push_bind(since);
        }
        if let Some(c) = &q.connector {
            qb.push(" AND connector_id = ").push_bind(c.clone());
        }
        if let Some(o) = q.outcome {
            qb.push(" AND outcome = ").push_bind(o.as_str());
        }
        if let Some(s) = q.source {
            qb.push(" AND source = ").push_bind(s.as_str());
        }
        qb.push(" ORDER BY occurred_at_ms DESC, id DESC LIMIT ")
            .push_bind(q.limit.clamp(1, 10_000) as i64);
        let rows = qb.build().fetch_all(&self.pool).await?;
        rows.iter().map(activity_from_row).collect()
    }

    async fn activity_purge_before(&self, before_ms: i64) -> Result<u64, StoreError> {
        Ok(sqlx::query("DELETE FROM activity WHERE occurred_at_ms < ?")
            .bind(before_ms)
            .execute(&self.pool)
            .await?
            .rows_affected())
    }

    async fn vault_put(&self, rows: &[VaultRow]) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        for row in rows {
            insert_vault(&mut tx, row).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn vault_get(&self, connector: &str) -> Result<Vec<VaultRow>, StoreError> {
        let rows = sqlx::query("SELECT * FROM vault WHERE connector = ? ORDER BY field")
            .bind(connector)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(vault_from_row).collect()
    }

    async fn vault_list(&self) -> Result<Vec<VaultRow>, StoreError> {
        let rows = sqlx::query("SELECT * FROM vault ORDER BY connector, field")
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(vault_from_row).collect()
    }

    async fn vault_delete(&self, connector: &str) -> Result<u64, StoreError> {
        Ok(sqlx::query("DELETE FROM vault WHERE connector = ?")
            .bind(connector)
            .execute(&self.pool)
            .await?
            .rows_affected())
    }

    async fn vault_replace_all(&self, rows: &[VaultRow]) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("DELETE FROM vault").execute(&mut *tx).await?;
        for row in rows {
            insert_vault(&mut tx, row).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn catalog_put(&self, c: &StoredCatalog) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO catalog (connector, fingerprint, tools_json, fetched_at_ms, config_key) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (connector) DO UPDATE SET fingerprint = excluded.fingerprint,
             tools_json = excluded.tools_json, fetched_at_ms = excluded.fetched_at_ms,
             config_key = excluded.config_key",
        )
        .bind(&c.connector)
        .bind(&c.fingerprint)
        .bind(&c.tools_json)
        .bind(c.fetched_at_ms)
        .bind(&c.config_key)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn catalog_get(&self, connector: &str) -> Result<Option<StoredCatalog>, StoreError> {
        // Columns by name, not `*`: once migration 2 had added a column,
        // sqlx-sqlite described four columns for `*` and panicked on the
        // fifth SQLite returned.
        let row = sqlx::query(
            "SELECT connector, fingerprint, tools_json, fetched_at_ms, config_key
             FROM catalog WHERE connector = ?",
        )
        .bind(connector)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            Ok(StoredCatalog {
                connector: r.try_get("connector")?,
                fingerprint: r.try_get("fingerprint")?,
                tools_json: r.try_get("tools_json")?,
                fetched_at_ms: r.try_get("fetched_at_ms")?,
                config_key: r.try_get("config_key")?,
            })
        })
        .transpose()
    }

    async fn token_insert(&self, t: &AccessTokenRow) -> Result<(), StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO access_token (id, name, digest, created_at_ms, expires_at_ms, revoked_at_ms)
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(&t.id)
        .bind(&t.name)
        .bind(&t.digest)
        .bind(t.created_at_ms)
        .bind(t.expires_at_ms)
        .bind(t.revoked_at_ms)
        .execute(&self.pool)
        .await;
        match inserted {
            Ok(_) => Ok(()),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                Err(StoreError::Conflict(format!(
                    "a token named `{}` exists and is not revoked; revoke it first or pick another name",
                    t.name
                )))
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn token_by_digest(&self, digest: &[u8]) -> Result<Option<AccessTokenRow>, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            token_columns!(),
            " FROM access_token WHERE digest = ?"
        ))
        .bind(digest)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(token_from_row).transpose()
    }

    async fn token_list(&self) -> Result<Vec<AccessTokenRow>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            token_columns!(),
            " FROM access_token ORDER BY created_at_ms, id"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(token_from_row).collect()
    }

    async fn token_revoke(
        &self,
        name_or_id: &str,
        now_ms: i64,
    ) -> Result<Option<AccessTokenRow>, StoreError> {
        let row = sqlx::query(concat!(
            "UPDATE access_token SET revoked_at_ms = ?
             WHERE revoked_at_ms IS NULL AND (name = ? OR id = ?) RETURNING ",
            token_columns!()
        ))
        .bind(now_ms)
        .bind(name_or_id)
        .bind(name_or_id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(token_from_row).transpose()
    }

    async fn approval_insert(&self, a: &ApprovalRow) -> Result<(), StoreError> {
        sqlx::query(concat!(
            "INSERT INTO approval (",
            approval_columns!(),
            ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ))
        .bind(&a.id)
        .bind(&a.connector_id)
        .bind(&a.tool_name)
        .bind(&a.address)
        .bind(&a.actor.kind)
        .bind(&a.actor.id)
        .bind(&a.reason)
        .bind(&a.args_json)
        .bind(a.created_at_ms)
        .bind(a.expires_at_ms)
        .bind(&a.status)
        .bind(&a.decided_by)
        .bind(a.decided_at_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn approval_get(&self, id: &str) -> Result<Option<ApprovalRow>, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            approval_columns!(),
            " FROM approval WHERE id = ?"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(approval_from_row).transpose()
    }

    async fn approval_list(
        &self,
        pending_only: bool,
        limit: usize,
    ) -> Result<Vec<ApprovalRow>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            approval_columns!(),
            " FROM approval WHERE (? = 0 OR status = 'pending')
             ORDER BY created_at_ms DESC, id DESC LIMIT ?"
        ))
        .bind(i64::from(pending_only))
        .bind(limit.clamp(1, 10_000) as i64)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(approval_from_row).collect()
    }

    async fn approval_decide(
        &self,
        id: &str,
        decision: ApprovalDecision,
        decided_by: &str,
        now_ms: i64,
        only_unexpired: bool,
    ) -> Result<Option<ApprovalRow>, StoreError> {
        let row = sqlx::query(concat!(
            "UPDATE approval SET status = ?, decided_by = ?, decided_at_ms = ?,
                 reason = NULL, args_json = NULL
             WHERE id = ? AND status = 'pending' AND (? = 0 OR expires_at_ms > ?)
             RETURNING ",
            approval_columns!()
        ))
        .bind(decision.as_str())
        .bind(decided_by)
        .bind(now_ms)
        .bind(id)
        .bind(i64::from(only_unexpired))
        .bind(now_ms)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(approval_from_row).transpose()
    }

    async fn approval_purge_before(&self, before_ms: i64) -> Result<u64, StoreError> {
        Ok(
            sqlx::query("DELETE FROM approval WHERE status <> 'pending' AND created_at_ms < ?")
                .bind(before_ms)
                .execute(&self.pool)
                .await?
                .rows_affected(),
        )
    }
}
