//! SQL shared by the backends: the column lists, and the whole `Store`
//! implementation as one macro instantiated for SQLite and PostgreSQL, so
//! the two run the same queries. Queries are written with `?` placeholders;
//! PostgreSQL's are rewritten to `$1, $2, …` once per query ([`dollar`]).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

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

/// The access token columns by name (see `catalog_get` on `*`).
macro_rules! token_columns {
    () => {
        "id, name, digest, created_at_ms, expires_at_ms, revoked_at_ms"
    };
}

/// `?` placeholders (outside quotes) as `$1, $2, …`, for PostgreSQL. Each
/// query text is rewritten once and kept for the life of the process.
pub(crate) fn dollar(sql: &'static str) -> &'static str {
    static CACHE: OnceLock<Mutex<HashMap<&'static str, &'static str>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(done) = cache.get(sql) {
        return done;
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    let mut quoted = false;
    for c in sql.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                out.push(c);
            }
            '?' if !quoted => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(c),
        }
    }
    let done: &'static str = Box::leak(out.into_boxed_str());
    cache.insert(sql, done);
    done
}

/// SQLite takes `?` as written.
pub(crate) fn question(sql: &'static str) -> &'static str {
    sql
}

/// Rows per multi-row `INSERT` of activity. The statement's text depends on
/// its row count, and sqlx keeps each text it runs as a prepared statement
/// in the connection's cache (100 of them): batches of every size from 1 to
/// 500 filled it with large statements (a gateway at 16 calls in flight
/// held about 30 MB more of SQLite's memory after 50,000 calls,
/// docs/performance.md "The latest full report"). Batches are cut into
/// these sizes, largest first, so at most nine such statements are ever
/// prepared and a batch of n rows takes n / 256 + (ones in n % 256) of them.
const INSERT_ROWS: [usize; 9] = [256, 128, 64, 32, 16, 8, 4, 2, 1];

/// `rows` in order, in chunks of the [`INSERT_ROWS`] sizes, largest first.
pub(crate) fn insert_chunks<T>(mut rows: &[T]) -> impl Iterator<Item = &[T]> {
    std::iter::from_fn(move || {
        let n = INSERT_ROWS.into_iter().find(|&n| n <= rows.len())?;
        let (chunk, rest) = rows.split_at(n);
        rows = rest;
        Some(chunk)
    })
}

/// The `Store` implementation shared by every backend, written once: `$store`
/// is the backend's type (with a `pool` field), `$db` its sqlx database,
/// `$row` its row type, `$name` what `backend()` says, and `$sql` turns a
/// query written with `?` placeholders into the backend's.
macro_rules! impl_store {
    ($store:ty, $db:ty, $row:ty, $name:literal, $sql:path) => {
        /// Appends `events` in one transaction on `connection`.
        async fn activity_insert(
            connection: &mut <$db as sqlx::Database>::Connection,
            events: &[ActivityEvent],
        ) -> Result<(), StoreError> {
            let mut tx = sqlx::Connection::begin(connection).await?;
            // One multi-row INSERT per chunk (SQLite allows 32,766 bound
            // variables), of a few sizes only (`INSERT_ROWS`).
            for chunk in $crate::sql::insert_chunks(events) {
                let mut qb: QueryBuilder<$db> = QueryBuilder::new(concat!(
                    "INSERT INTO activity (",
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
                qb.push(" ON CONFLICT (id) DO NOTHING");
                qb.build().execute(&mut *tx).await?;
            }
            tx.commit().await?;
            Ok(())
        }

        fn activity_from_row(row: &$row) -> Result<ActivityEvent, StoreError> {
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



        fn approval_from_row(r: &$row) -> Result<ApprovalRow, StoreError> {
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


        fn token_from_row(r: &$row) -> Result<AccessTokenRow, StoreError> {
            Ok(AccessTokenRow {
                id: r.try_get("id")?,
                name: r.try_get("name")?,
                digest: r.try_get("digest")?,
                created_at_ms: r.try_get("created_at_ms")?,
                expires_at_ms: r.try_get("expires_at_ms")?,
                revoked_at_ms: r.try_get("revoked_at_ms")?,
            })
        }

        fn vault_from_row(row: &$row) -> Result<VaultRow, StoreError> {
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
            tx: &mut sqlx::Transaction<'_, $db>,
            row: &VaultRow,
        ) -> Result<(), StoreError> {
            sqlx::query($sql(
                "INSERT INTO vault (connector, field, ciphertext, nonce, key_id, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?)
                 ON CONFLICT (connector, field) DO UPDATE SET ciphertext = excluded.ciphertext, nonce = excluded.nonce,
                 key_id = excluded.key_id, updated_at_ms = excluded.updated_at_ms",
            ))
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
        impl Store for $store {
            fn backend(&self) -> &'static str {
                $name
            }

            async fn stash_put(&self, entry: &StashEntry, quota: StashQuota) -> Result<bool, StoreError> {
                // One statement: the quotas are checked against what is
                // stored, unexpired, at the moment of the insert.
                let size = entry.text.len() as i64;
                let cap = |q: u64| i64::try_from(q).unwrap_or(i64::MAX);
                let stored = sqlx::query($sql(
                    "INSERT INTO stash (id, actor_key, body, created_at_ms, expires_at_ms)
                     SELECT ?, ?, ?, ?, ?
                     WHERE (SELECT COALESCE(SUM(octet_length(body)), 0) FROM stash
                            WHERE actor_key = ? AND expires_at_ms > ?) + ? <= ?
                       AND (SELECT COALESCE(SUM(octet_length(body)), 0) FROM stash
                            WHERE expires_at_ms > ?) + ? <= ?",
                ))
                .bind(&entry.id)
                .bind(&entry.actor_key)
                .bind(&entry.text)
                .bind(entry.created_at_ms)
                .bind(entry.expires_at_ms)
                .bind(&entry.actor_key)
                .bind(entry.created_at_ms)
                .bind(size)
                .bind(cap(quota.caller_bytes))
                .bind(entry.created_at_ms)
                .bind(size)
                .bind(cap(quota.total_bytes))
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(stored == 1)
            }

            async fn stash_get(
                &self,
                id: &str,
                actor_key: &str,
                now_ms: i64,
            ) -> Result<Option<String>, StoreError> {
                Ok(sqlx::query_scalar($sql(
                    "SELECT body FROM stash WHERE id = ? AND actor_key = ? AND expires_at_ms > ?",
                ))
                .bind(id)
                .bind(actor_key)
                .bind(now_ms)
                .fetch_optional(&self.pool)
                .await?)
            }

            async fn stash_purge_expired(&self, now_ms: i64) -> Result<u64, StoreError> {
                Ok(sqlx::query($sql("DELETE FROM stash WHERE expires_at_ms <= ?"))
                    .bind(now_ms)
                    .execute(&self.pool)
                    .await?
                    .rows_affected())
            }

            async fn activity_append(&self, events: &[ActivityEvent]) -> Result<(), StoreError> {
                if events.is_empty() {
                    return Ok(());
                }
                let appended = match self.activity_connection().await {
                    Ok(mut connection) => activity_insert(&mut connection, events).await,
                    Err(e) => Err(e.into()),
                };
                // The connection (a guard on the SQLite writer's) is
                // dropped by now: resetting it takes the same lock.
                if appended.is_err() {
                    self.reset_activity_connection().await;
                }
                appended
            }

            async fn activity_list(&self, q: &ActivityQuery) -> Result<Vec<ActivityEvent>, StoreError> {
                let mut qb: QueryBuilder<$db> = QueryBuilder::new(concat!(
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
                Ok(sqlx::query($sql("DELETE FROM activity WHERE occurred_at_ms < ?"))
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
                let rows = sqlx::query($sql("SELECT * FROM vault WHERE connector = ? ORDER BY field"))
                    .bind(connector)
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(vault_from_row).collect()
            }

            async fn vault_list(&self) -> Result<Vec<VaultRow>, StoreError> {
                let rows = sqlx::query($sql("SELECT * FROM vault ORDER BY connector, field"))
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(vault_from_row).collect()
            }

            async fn vault_delete(&self, connector: &str) -> Result<u64, StoreError> {
                Ok(sqlx::query($sql("DELETE FROM vault WHERE connector = ?"))
                    .bind(connector)
                    .execute(&self.pool)
                    .await?
                    .rows_affected())
            }

            async fn vault_delete_field(&self, connector: &str, field: &str) -> Result<u64, StoreError> {
                Ok(sqlx::query($sql("DELETE FROM vault WHERE connector = ? AND field = ?"))
                    .bind(connector)
                    .bind(field)
                    .execute(&self.pool)
                    .await?
                    .rows_affected())
            }

            async fn vault_replace_all(&self, rows: &[VaultRow]) -> Result<(), StoreError> {
                let mut tx = self.pool.begin().await?;
                sqlx::query($sql("DELETE FROM vault")).execute(&mut *tx).await?;
                for row in rows {
                    insert_vault(&mut tx, row).await?;
                }
                tx.commit().await?;
                Ok(())
            }

            async fn catalog_put(&self, c: &StoredCatalog) -> Result<(), StoreError> {
                sqlx::query($sql(
                    "INSERT INTO catalog (connector, fingerprint, tools_json, fetched_at_ms, config_key) VALUES (?, ?, ?, ?, ?)
                     ON CONFLICT (connector) DO UPDATE SET fingerprint = excluded.fingerprint,
                     tools_json = excluded.tools_json, fetched_at_ms = excluded.fetched_at_ms,
                     config_key = excluded.config_key",
                ))
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
                let row = sqlx::query($sql(
                    "SELECT connector, fingerprint, tools_json, fetched_at_ms, config_key
                     FROM catalog WHERE connector = ?",
                ))
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
                let inserted = sqlx::query($sql(
                    "INSERT INTO access_token (id, name, digest, created_at_ms, expires_at_ms, revoked_at_ms)
                     VALUES (?, ?, ?, ?, ?, ?)",
                ))
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
                let row = sqlx::query($sql(concat!(
                    "SELECT ",
                    token_columns!(),
                    " FROM access_token WHERE digest = ?"
                )))
                .bind(digest)
                .fetch_optional(&self.pool)
                .await?;
                row.as_ref().map(token_from_row).transpose()
            }

            async fn token_list(&self) -> Result<Vec<AccessTokenRow>, StoreError> {
                let rows = sqlx::query($sql(concat!(
                    "SELECT ",
                    token_columns!(),
                    " FROM access_token ORDER BY created_at_ms, id"
                )))
                .fetch_all(&self.pool)
                .await?;
                rows.iter().map(token_from_row).collect()
            }

            async fn token_rename(
                &self,
                id: &str,
                name: &str,
            ) -> Result<Option<AccessTokenRow>, StoreError> {
                let renamed = sqlx::query($sql(concat!(
                    "UPDATE access_token SET name = ?
                     WHERE revoked_at_ms IS NULL AND id = ? RETURNING ",
                    token_columns!()
                )))
                .bind(name)
                .bind(id)
                .fetch_optional(&self.pool)
                .await;
                match renamed {
                    Ok(row) => row.as_ref().map(token_from_row).transpose(),
                    Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                        Err(StoreError::Conflict(format!(
                            "a token named `{name}` exists and is not revoked; pick another name"
                        )))
                    }
                    Err(e) => Err(e.into()),
                }
            }

            async fn token_revoke(
                &self,
                name_or_id: &str,
                now_ms: i64,
            ) -> Result<Option<AccessTokenRow>, StoreError> {
                // An id first (unique forever), then a name: never both.
                for by in [
                    $sql(concat!(
                        "UPDATE access_token SET revoked_at_ms = ?
                         WHERE revoked_at_ms IS NULL AND id = ? RETURNING ",
                        token_columns!()
                    )),
                    $sql(concat!(
                        "UPDATE access_token SET revoked_at_ms = ?
                         WHERE revoked_at_ms IS NULL AND name = ? RETURNING ",
                        token_columns!()
                    )),
                ] {
                    let row = sqlx::query(by)
                        .bind(now_ms)
                        .bind(name_or_id)
                        .fetch_optional(&self.pool)
                        .await?;
                    if let Some(row) = row {
                        return token_from_row(&row).map(Some);
                    }
                }
                Ok(None)
            }

            async fn approval_insert(&self, a: &ApprovalRow) -> Result<(), StoreError> {
                sqlx::query($sql(concat!(
                    "INSERT INTO approval (",
                    approval_columns!(),
                    ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                )))
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
                let row = sqlx::query($sql(concat!(
                    "SELECT ",
                    approval_columns!(),
                    " FROM approval WHERE id = ?"
                )))
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
                let rows = sqlx::query($sql(concat!(
                    "SELECT ",
                    approval_columns!(),
                    " FROM approval WHERE (? = 0 OR status = 'pending')
                     ORDER BY created_at_ms DESC, id DESC LIMIT ?"
                )))
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
                let row = sqlx::query($sql(concat!(
                    "UPDATE approval SET status = ?, decided_by = ?, decided_at_ms = ?,
                         reason = NULL, args_json = NULL
                     WHERE id = ? AND status = 'pending' AND (? = 0 OR expires_at_ms > ?)
                     RETURNING ",
                    approval_columns!()
                )))
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

            async fn approval_close_expired(
                &self,
                before_ms: i64,
                decided_by: &str,
                now_ms: i64,
            ) -> Result<Vec<ApprovalRow>, StoreError> {
                let rows = sqlx::query($sql(concat!(
                    "UPDATE approval SET status = 'unavailable', decided_by = ?, decided_at_ms = ?,
                         reason = NULL, args_json = NULL
                     WHERE status = 'pending' AND expires_at_ms < ? RETURNING ",
                    approval_columns!()
                )))
                .bind(decided_by)
                .bind(now_ms)
                .bind(before_ms)
                .fetch_all(&self.pool)
                .await?;
                rows.iter().map(approval_from_row).collect()
            }

            async fn approval_purge_before(&self, before_ms: i64) -> Result<u64, StoreError> {
                Ok(
                    sqlx::query($sql("DELETE FROM approval WHERE status <> 'pending' AND created_at_ms < ?"))
                        .bind(before_ms)
                        .execute(&self.pool)
                        .await?
                        .rows_affected(),
                )
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::{INSERT_ROWS, dollar, insert_chunks};

    #[test]
    fn activity_batches_are_inserted_in_a_few_statement_sizes_and_in_order() {
        for n in 0..=1_300usize {
            let rows: Vec<usize> = (0..n).collect();
            let chunks: Vec<&[usize]> = insert_chunks(&rows).collect();
            assert!(
                chunks.iter().all(|c| INSERT_ROWS.contains(&c.len())),
                "{n}: {:?}",
                chunks.iter().map(|c| c.len()).collect::<Vec<_>>()
            );
            assert_eq!(chunks.concat(), rows, "{n}");
        }
        // Largest first: a batch of 600 is 256, 256, 64, 16 and 8 rows.
        let rows = [0u8; 600];
        let sizes: Vec<usize> = insert_chunks(&rows).map(<[u8]>::len).collect();
        assert_eq!(sizes, [256, 256, 64, 16, 8]);
    }

    #[test]
    fn placeholders_become_numbered_outside_quotes() {
        assert_eq!(
            dollar("SELECT a FROM t WHERE b = ? AND c <> 'x?' AND (? = 0 OR d > ?)"),
            "SELECT a FROM t WHERE b = $1 AND c <> 'x?' AND ($2 = 0 OR d > $3)"
        );
        let once = dollar("DELETE FROM t WHERE id = ?");
        assert!(std::ptr::eq(once, dollar("DELETE FROM t WHERE id = ?")));
    }
}
