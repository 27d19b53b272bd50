//! The one schema migration runner, for both backends: each backend lists
//! its migrations (`(version, sql)`, applied in order, each exactly once,
//! append only) and opens a transaction that holds its migration lock; this
//! applies what the database has not seen yet inside that transaction and
//! records it in `schema_migrations`.
//!
//! The lock is what makes processes that open one database at the same time
//! (replicas starting together, a management command next to a running
//! gateway) apply each migration once: on PostgreSQL an advisory lock, on
//! SQLite a `BEGIN IMMEDIATE` transaction (the write lock from the start;
//! a deferred one that read `schema_migrations` could not upgrade to a
//! writer after another process wrote, and would fail instead of waiting).
//!
//! sqlx's own `Migrator` is not used: its bookkeeping table differs from
//! `schema_migrations`, which every existing database already has.

use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Transaction, Type};

use crate::StoreError;

/// One schema change: its version and its SQL (several statements allowed).
pub(crate) type Migration = (i64, &'static str);

/// Apply, inside `tx`, every migration not yet recorded. `create_table`
/// creates `schema_migrations (version, applied_at_ms)` if missing;
/// `sql` rewrites `?` placeholders for the backend. The caller commits.
pub(crate) async fn apply<DB>(
    tx: &mut Transaction<'static, DB>,
    create_table: &'static str,
    migrations: &[Migration],
    sql: fn(&'static str) -> &'static str,
) -> Result<(), StoreError>
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    DB::Arguments: IntoArguments<DB>,
    for<'q> i64: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    usize: ColumnIndex<DB::Row>,
{
    sqlx::query(create_table).execute(&mut **tx).await?;
    for &(version, statements) in migrations {
        let done: Option<i64> = sqlx::query_scalar(sql(
            "SELECT version FROM schema_migrations WHERE version = ?",
        ))
        .bind(version)
        .fetch_optional(&mut **tx)
        .await?;
        if done.is_some() {
            continue;
        }
        sqlx::raw_sql(statements).execute(&mut **tx).await?;
        sqlx::query(sql(
            "INSERT INTO schema_migrations (version, applied_at_ms) VALUES (?, ?)",
        ))
        .bind(version)
        .bind(now_ms())
        .execute(&mut **tx)
        .await?;
        tracing::debug!(version, "applied store migration");
    }
    Ok(())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
