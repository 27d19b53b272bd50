//! The store suite, run against SQLite and against a real PostgreSQL cluster
//! started for each test: both backends must behave the same.

use std::sync::Arc;

use connecta_core::activity::{
    ActivityEvent, Actor, ApprovalDecision, ApprovalNote, ApprovalRecord, CallRecord, EventKind,
    Outcome, Source,
};
use connecta_core::error::ErrorCode;
use connecta_store::testing::PgCluster;
use connecta_store::{
    AccessTokenRow, ActivityQuery, ActivityWriter, ApprovalRow, PgStore, SqliteStore, StashEntry,
    StashQuota, Store, StoreError, StoredCatalog, VaultRow,
};

fn event(i: i64, connector: &str, code: Option<ErrorCode>) -> ActivityEvent {
    ActivityEvent::new(
        format!("ev-{i:04}"),
        1_000 + i,
        "req-1",
        &Actor::anonymous(),
        CallRecord {
            connector_id: connector,
            tool_name: "get_note",
            source: Source::CallTool,
            duration_ms: 3,
            attempts: 1,
            error_code: code,
            friction: None,
        },
    )
}

/// A store under test, with what keeps it alive.
struct Under {
    store: Arc<dyn Store>,
    _dir: Option<tempfile::TempDir>,
    _cluster: Option<PgCluster>,
}

async fn sqlite() -> Under {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(dir.path()).await.expect("open");
    Under {
        store: Arc::new(store),
        _dir: Some(dir),
        _cluster: None,
    }
}

async fn postgres() -> Under {
    let cluster = tokio::task::spawn_blocking(PgCluster::start)
        .await
        .expect("cluster");
    let url = cluster.fresh_database().await;
    let store = PgStore::connect(&url).await.expect("connect");
    assert_eq!(store.backend(), "postgres");
    Under {
        store: Arc::new(store),
        _dir: None,
        _cluster: Some(cluster),
    }
}

/// Each listed check runs once on SQLite and once on PostgreSQL.
macro_rules! on_both_backends {
    ($($check:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $check() {
                    let under = super::sqlite().await;
                    super::$check(under.store.clone()).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $check() {
                    let under = super::postgres().await;
                    super::$check(under.store.clone()).await;
                }
            )*
        }
    };
}

on_both_backends!(
    stash_respects_owner_and_expiry,
    stash_keeps_to_the_caller_and_total_quotas,
    activity_pages_newest_first_and_filters,
    the_writer_batches_and_flushes,
    vault_rows_upsert_and_replace_atomically,
    one_vault_field_is_deleted_once,
    catalogs_persist,
    access_tokens_are_found_by_digest_and_a_live_name_is_unique,
    a_live_token_is_renamed_by_id_and_a_taken_name_conflicts,
    an_approval_question_is_decided_once_and_keeps_no_payload,
    approval_events_keep_their_kind_and_pair_through_the_store,
);

#[tokio::test]
async fn the_database_file_is_created_and_reopening_is_idempotent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = SqliteStore::open(dir.path()).await.expect("open");
    assert!(dir.path().join("connecta.db").exists());
    s.close().await;
    let again = SqliteStore::open(dir.path())
        .await
        .expect("reopen migrates nothing twice");
    assert_eq!(again.backend(), "sqlite");
}

/// A gateway and a management command (or several) opening one fresh data
/// directory at once: each must wait for the other's migrations, not fail
/// with "database is locked".
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_stores_opened_together_on_a_fresh_file_all_migrate() {
    for _ in 0..5 {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut opens = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let path = dir.path().to_owned();
            opens.spawn(async move { SqliteStore::open(&path).await });
        }
        while let Some(opened) = opens.join_next().await {
            let store = opened.expect("join").expect("every open migrates or waits");
            assert_eq!(
                store.stash_purge_expired(1).await.expect("schema is there"),
                0
            );
            store.close().await;
        }
    }
}

#[tokio::test]
async fn postgres_replicas_that_start_together_migrate_once_and_share_rows() {
    let cluster = tokio::task::spawn_blocking(PgCluster::start)
        .await
        .expect("cluster");
    let url = cluster.fresh_database().await;
    let (a, b) = tokio::join!(PgStore::connect(&url), PgStore::connect(&url));
    let (a, b) = (a.expect("replica a"), b.expect("replica b"));
    let stored = a
        .stash_put(
            &StashEntry {
                id: "r1".into(),
                actor_key: "token:ci/tok_1".into(),
                text: "{\"page\":1}".into(),
                created_at_ms: 0,
                expires_at_ms: i64::MAX,
            },
            StashQuota::UNLIMITED,
        )
        .await
        .expect("put on a");
    assert!(stored);
    assert_eq!(
        b.stash_get("r1", "token:ci/tok_1", 1)
            .await
            .expect("get on b"),
        Some("{\"page\":1}".into())
    );
    // A third start finds everything migrated.
    let c = PgStore::connect(&url).await.expect("replica c");
    assert_eq!(c.stash_purge_expired(1).await.expect("purge"), 0);
}

async fn stash_respects_owner_and_expiry(s: Arc<dyn Store>) {
    let stored = s
        .stash_put(
            &StashEntry {
                id: "r1".into(),
                actor_key: "anonymous".into(),
                text: "héllo".into(),
                created_at_ms: 0,
                expires_at_ms: 100,
            },
            StashQuota::UNLIMITED,
        )
        .await
        .expect("put");
    assert!(stored);
    assert_eq!(
        s.stash_get("r1", "anonymous", 50)
            .await
            .expect("get")
            .as_deref(),
        Some("héllo")
    );
    assert_eq!(
        s.stash_get("r1", "token:other", 50).await.expect("get"),
        None
    );
    assert_eq!(
        s.stash_get("r1", "anonymous", 100).await.expect("get"),
        None
    );
    assert_eq!(s.stash_purge_expired(101).await.expect("purge"), 1);
}

async fn stash_keeps_to_the_caller_and_total_quotas(s: Arc<dyn Store>) {
    let quota = StashQuota {
        caller_bytes: 10,
        total_bytes: 16,
    };
    let put = |id: &str, actor: &str, text: &str, at: i64| StashEntry {
        id: id.into(),
        actor_key: actor.into(),
        text: text.into(),
        created_at_ms: at,
        expires_at_ms: at + 100,
    };
    // Bytes, not characters: "é" is two.
    assert!(
        s.stash_put(&put("a1", "a", "éééé", 0), quota)
            .await
            .expect("put")
    );
    assert!(
        s.stash_put(&put("a2", "a", "xx", 0), quota)
            .await
            .expect("put")
    );
    // a holds 10 bytes: one more is over its quota, and nothing is stored.
    assert!(
        !s.stash_put(&put("a3", "a", "y", 0), quota)
            .await
            .expect("put")
    );
    assert_eq!(s.stash_get("a3", "a", 1).await.expect("get"), None);
    // b has its own quota, but everyone together holds at most 16.
    assert!(
        s.stash_put(&put("b1", "b", "123456", 0), quota)
            .await
            .expect("put")
    );
    assert!(
        !s.stash_put(&put("b2", "b", "1", 0), quota)
            .await
            .expect("put")
    );
    // Expired entries count for nothing, purged or not.
    assert!(
        s.stash_put(&put("a4", "a", "0123456789", 100), quota)
            .await
            .expect("put")
    );
    assert_eq!(
        s.stash_get("a4", "a", 101).await.expect("get").as_deref(),
        Some("0123456789")
    );
}

async fn activity_pages_newest_first_and_filters(s: Arc<dyn Store>) {
    let events: Vec<_> = (0..25)
        .map(|i| {
            event(
                i,
                if i % 2 == 0 { "a" } else { "b" },
                (i % 5 == 0).then_some(ErrorCode::Timeout),
            )
        })
        .collect();
    s.activity_append(&events).await.expect("append");
    let page = s
        .activity_list(&ActivityQuery {
            limit: 10,
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(page.len(), 10);
    assert_eq!(page[0].id, "ev-0024");
    let last = page.last().expect("non-empty");
    let next = s
        .activity_list(&ActivityQuery {
            limit: 10,
            before: Some((last.occurred_at_ms, last.id.clone())),
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(next[0].id, "ev-0014");
    let timeouts = s
        .activity_list(&ActivityQuery {
            limit: 100,
            outcome: Some(Outcome::Timeout),
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(timeouts.len(), 5);
    assert_eq!(timeouts[0], events[20]);
    let a = s
        .activity_list(&ActivityQuery {
            limit: 100,
            connector: Some("a".into()),
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(a.len(), 13);
    assert_eq!(s.activity_purge_before(1_010).await.expect("purge"), 10);
}

async fn the_writer_batches_and_flushes(s: Arc<dyn Store>) {
    let (sink, writer) = ActivityWriter::spawn(s.clone());
    for i in 0..1_000 {
        sink.record(event(i, "a", None));
    }
    sink.flush().await;
    let all = s
        .activity_list(&ActivityQuery {
            limit: 5_000,
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(all.len(), 1_000);
    assert_eq!(sink.dropped(), 0);
    drop(sink);
    writer.finish().await;
}

async fn vault_rows_upsert_and_replace_atomically(s: Arc<dyn Store>) {
    let row = |c: &str, f: &str, b: u8| VaultRow {
        connector: c.into(),
        field: f.into(),
        ciphertext: vec![b; 8],
        nonce: vec![1; 24],
        key_id: "k1".into(),
        updated_at_ms: 1,
    };
    s.vault_put(&[row("a", "secret", 1), row("b", "secret", 2)])
        .await
        .expect("put");
    s.vault_put(&[row("a", "secret", 3)]).await.expect("upsert");
    assert_eq!(
        s.vault_get("a").await.expect("get")[0].ciphertext,
        vec![3; 8]
    );
    s.vault_replace_all(&[row("c", "secret", 4)])
        .await
        .expect("replace");
    let all = s.vault_list().await.expect("list");
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].connector, "c");
    assert_eq!(s.vault_delete("c").await.expect("delete"), 1);
}

async fn catalogs_persist(s: Arc<dyn Store>) {
    let c = StoredCatalog {
        connector: "a".into(),
        fingerprint: "f1".into(),
        tools_json: "[]".into(),
        fetched_at_ms: 5,
        config_key: "k1".into(),
    };
    s.catalog_put(&c).await.expect("put");
    s.catalog_put(&StoredCatalog {
        fingerprint: "f2".into(),
        config_key: "k2".into(),
        ..c.clone()
    })
    .await
    .expect("put");
    assert_eq!(
        s.catalog_get("a")
            .await
            .expect("get")
            .map(|c| (c.fingerprint, c.config_key)),
        Some(("f2".into(), "k2".into()))
    );
    assert_eq!(s.catalog_get("zz").await.expect("get"), None);
}

async fn one_vault_field_is_deleted_once(s: Arc<dyn Store>) {
    let row = |field: &str| VaultRow {
        connector: "gh".into(),
        field: field.into(),
        ciphertext: vec![1, 2, 3],
        nonce: vec![4; 12],
        key_id: "k1".into(),
        updated_at_ms: 10,
    };
    s.vault_put(&[row("oauth.pending"), row("oauth.tokens")])
        .await
        .expect("put");
    assert_eq!(
        s.vault_delete_field("gh", "oauth.pending")
            .await
            .expect("first"),
        1
    );
    assert_eq!(
        s.vault_delete_field("gh", "oauth.pending")
            .await
            .expect("again"),
        0
    );
    let left: Vec<String> = s
        .vault_get("gh")
        .await
        .expect("get")
        .into_iter()
        .map(|r| r.field)
        .collect();
    assert_eq!(left, ["oauth.tokens"]);
}

fn token(id: &str, name: &str, digest: u8, created: i64) -> AccessTokenRow {
    AccessTokenRow {
        id: id.into(),
        name: name.into(),
        digest: vec![digest; 32],
        created_at_ms: created,
        expires_at_ms: Some(created + 1_000),
        revoked_at_ms: None,
    }
}

async fn access_tokens_are_found_by_digest_and_a_live_name_is_unique(s: Arc<dyn Store>) {
    s.token_insert(&token("tok_a", "ci", 1, 10))
        .await
        .expect("first");
    match s.token_insert(&token("tok_b", "ci", 2, 20)).await {
        Err(StoreError::Conflict(m)) => assert!(m.contains("`ci`"), "{m}"),
        other => panic!("a second live `ci` must conflict: {other:?}"),
    }
    let found = s.token_by_digest(&[1; 32]).await.expect("lookup");
    assert_eq!(found, Some(token("tok_a", "ci", 1, 10)));
    assert_eq!(s.token_by_digest(&[9; 32]).await.expect("lookup"), None);

    // Revoked by name; the name is free again, the row stays (for lookups
    // that must say "revoked" and for the list).
    let revoked = s
        .token_revoke("ci", 50)
        .await
        .expect("revoke")
        .expect("one");
    assert_eq!(
        (revoked.id.as_str(), revoked.revoked_at_ms),
        ("tok_a", Some(50))
    );
    assert_eq!(s.token_revoke("ci", 60).await.expect("again"), None);
    s.token_insert(&token("tok_b", "ci", 2, 20))
        .await
        .expect("name reused");
    let found = s
        .token_by_digest(&[1; 32])
        .await
        .expect("lookup")
        .expect("kept");
    assert_eq!(found.revoked_at_ms, Some(50));

    // An id is matched before a name, and only one token is revoked.
    s.token_insert(&token("tok_c", "tok_b", 3, 30))
        .await
        .expect("a name shaped like an id (the CLI refuses these)");
    let by_id = s
        .token_revoke("tok_b", 65)
        .await
        .expect("revoke")
        .expect("one");
    assert_eq!(by_id.id, "tok_b");
    assert_eq!(
        s.token_by_digest(&[3; 32])
            .await
            .expect("lookup")
            .expect("kept")
            .revoked_at_ms,
        None,
        "the token named tok_b was revoked too"
    );
    assert!(s.token_revoke("tok_c", 66).await.expect("by id").is_some());

    // By id as well; the list is oldest first.
    assert!(s.token_revoke("tok_b", 70).await.expect("by id").is_none());
    let names: Vec<_> = s
        .token_list()
        .await
        .expect("list")
        .into_iter()
        .map(|t| (t.id, t.revoked_at_ms))
        .collect();
    assert_eq!(
        names,
        vec![
            ("tok_a".into(), Some(50)),
            ("tok_b".into(), Some(65)),
            ("tok_c".into(), Some(66))
        ]
    );
}

async fn a_live_token_is_renamed_by_id_and_a_taken_name_conflicts(s: Arc<dyn Store>) {
    s.token_insert(&token("tok_a", "ci", 1, 10))
        .await
        .expect("a");
    s.token_insert(&token("tok_b", "deploy", 2, 20))
        .await
        .expect("b");
    let renamed = s
        .token_rename("tok_a", "ci-2")
        .await
        .expect("rename")
        .expect("found");
    assert_eq!(
        (renamed.id.as_str(), renamed.name.as_str()),
        ("tok_a", "ci-2")
    );
    assert_eq!(
        s.token_by_digest(&[1; 32])
            .await
            .expect("lookup")
            .map(|t| t.name),
        Some("ci-2".into()),
        "the same token (digest) answers to the new name"
    );
    match s.token_rename("tok_a", "deploy").await {
        Err(StoreError::Conflict(m)) => assert!(m.contains("`deploy`"), "{m}"),
        other => panic!("renaming onto a live name must conflict: {other:?}"),
    }
    // Only by id, never by name; a revoked token keeps its name.
    assert_eq!(s.token_rename("ci-2", "x").await.expect("by name"), None);
    s.token_revoke("tok_b", 30).await.expect("revoke");
    assert_eq!(s.token_rename("tok_b", "y").await.expect("revoked"), None);
    s.token_rename("tok_a", "deploy")
        .await
        .expect("a revoked token's name is free")
        .expect("found");
}

fn question(id: &str, created: i64) -> ApprovalRow {
    ApprovalRow {
        id: id.into(),
        connector_id: "demo".into(),
        tool_name: "delete_note".into(),
        address: "demo.delete_note".into(),
        actor: Actor::anonymous(),
        reason: Some("tidy up".into()),
        args_json: Some("{\"id\":1}".into()),
        created_at_ms: created,
        expires_at_ms: created + 1_000,
        status: "pending".into(),
        decided_by: None,
        decided_at_ms: None,
    }
}

async fn an_approval_question_is_decided_once_and_keeps_no_payload(s: Arc<dyn Store>) {
    s.approval_insert(&question("apr_a", 100))
        .await
        .expect("insert");
    s.approval_insert(&question("apr_b", 200))
        .await
        .expect("insert");
    let pending: Vec<_> = s
        .approval_list(true, 10)
        .await
        .expect("list")
        .into_iter()
        .map(|q| q.id)
        .collect();
    assert_eq!(pending, vec!["apr_b", "apr_a"], "newest first");

    // A human may not answer after expiry; the asking gateway still may.
    assert_eq!(
        s.approval_decide("apr_a", ApprovalDecision::AllowedOnce, "cli:x", 1_100, true)
            .await
            .expect("decide"),
        None
    );
    let decided = s
        .approval_decide(
            "apr_a",
            ApprovalDecision::Unavailable,
            "gateway",
            1_100,
            false,
        )
        .await
        .expect("decide")
        .expect("was pending");
    assert_eq!(decided.decision(), Some(ApprovalDecision::Unavailable));
    assert_eq!((decided.reason, decided.args_json), (None, None));
    // Once: a second answer changes nothing.
    assert_eq!(
        s.approval_decide(
            "apr_a",
            ApprovalDecision::AllowedOnce,
            "cli:x",
            1_100,
            false
        )
        .await
        .expect("decide"),
        None
    );
    let b = s
        .approval_decide("apr_b", ApprovalDecision::Rejected, "cli:y", 300, true)
        .await
        .expect("decide")
        .expect("in time");
    assert_eq!(b.decided_by.as_deref(), Some("cli:y"));
    assert!(s.approval_list(true, 10).await.expect("list").is_empty());
    assert_eq!(s.approval_list(false, 10).await.expect("list").len(), 2);

    // A question its asker abandoned is closed, without its payload.
    s.approval_insert(&question("apr_x", 400))
        .await
        .expect("insert");
    let closed = s
        .approval_close_expired(2_000, "gateway", 2_500)
        .await
        .expect("close");
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0].decision(), Some(ApprovalDecision::Unavailable));
    assert_eq!(
        (closed[0].reason.clone(), closed[0].args_json.clone()),
        (None, None)
    );
    assert!(
        s.approval_close_expired(2_000, "gateway", 2_500)
            .await
            .expect("again")
            .is_empty()
    );

    // Decided questions older than the cutoff go; pending ones stay.
    s.approval_insert(&question("apr_c", 50))
        .await
        .expect("insert");
    assert_eq!(s.approval_purge_before(150).await.expect("purge"), 1);
    let left: Vec<_> = s
        .approval_list(false, 10)
        .await
        .expect("list")
        .into_iter()
        .map(|q| q.id)
        .collect();
    assert_eq!(left, vec!["apr_x", "apr_b", "apr_c"], "newest first");
}

async fn approval_events_keep_their_kind_and_pair_through_the_store(s: Arc<dyn Store>) {
    let asked = ActivityEvent::approval(
        "ev-a".into(),
        10,
        "req",
        &Actor::anonymous(),
        ApprovalRecord {
            connector_id: "demo",
            tool_name: "delete_note",
            duration_ms: 0,
            note: ApprovalNote {
                id: "apr_1".into(),
                decision: None,
                decided_by: None,
            },
        },
    );
    let decided = ActivityEvent::approval(
        "ev-b".into(),
        20,
        "req",
        &Actor::anonymous(),
        ApprovalRecord {
            connector_id: "demo",
            tool_name: "delete_note",
            duration_ms: 10,
            note: ApprovalNote {
                id: "apr_1".into(),
                decision: Some(ApprovalDecision::Rejected),
                decided_by: Some("cli:alice".into()),
            },
        },
    );
    s.activity_append(&[asked.clone(), decided.clone(), event(3, "demo", None)])
        .await
        .expect("append");
    let back = s
        .activity_list(&ActivityQuery {
            limit: 10,
            ..ActivityQuery::default()
        })
        .await
        .expect("list");
    assert!(back.contains(&asked) && back.contains(&decided), "{back:?}");
    assert_eq!(decided.kind, EventKind::ApprovalDecided);
    assert_eq!(decided.outcome, Outcome::Error);
    let call = back.iter().find(|e| e.id == "ev-0003").expect("call event");
    assert_eq!(
        (call.kind, call.approval.is_none()),
        (EventKind::Call, true)
    );
}
