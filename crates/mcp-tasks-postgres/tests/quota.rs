//! Per-principal quotas on a fleet: instances creating for one principal at
//! once never overshoot its quota, the usage the triggers keep always equals
//! what the rows add up to, and the migration that introduced it counts the
//! tasks already stored.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_store::conformance::support::{at, create, finish, new_task};
use mcp_tasks_store::{Guard, GuardedUpdate, NewTask, Quota, StoreError, TaskStore};
use serde_json::json;

/// (tasks, argument bytes) per principal, as `principal_usage` says and as
/// the rows of `tasks` add up.
async fn usage_and_truth(db: &TestDatabase) -> (BTreeMap<String, (i64, i64)>, BTreeMap<String, (i64, i64)>) {
    let client = db.connect().await;
    let read = |sql: &'static str| {
        let client = &client;
        async move {
            client
                .query(sql, &[])
                .await
                .expect("read usage")
                .iter()
                .map(|r| (r.get::<_, String>(0), (r.get::<_, i64>(1), r.get::<_, i64>(2))))
                .collect::<BTreeMap<_, _>>()
        }
    };
    let usage = read("SELECT principal, tasks, argument_bytes FROM principal_usage WHERE tasks <> 0").await;
    let truth =
        read("SELECT coalesce(principal, ''), count(*), sum(octet_length(arguments))::bigint FROM tasks GROUP BY 1").await;
    (usage, truth)
}

/// Workers on three instances keep creating for alice and bob (capped)
/// and carol (not capped) until refused, so batches of different instances
/// overlap all the time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creators_on_many_instances_never_overshoot_a_quota() {
    let Some(db) = TestDatabase::create().await else { return };
    let mut stores = Vec::new();
    for _ in 0..3 {
        stores.push(Arc::new(PostgresStore::open(&db.url()).await.expect("open")));
    }
    const LIMIT: u64 = 60;
    const CAROLS: usize = 15;
    let quota = Quota { max_tasks: Some(LIMIT), max_argument_bytes: None };
    let mut workers = Vec::new();
    for w in 0..18usize {
        let store = Arc::clone(&stores[w % stores.len()]);
        let principal = ["alice", "bob", "carol"][w % 3];
        workers.push(tokio::spawn(async move {
            let mut created = 0;
            for n in 0.. {
                if principal == "carol" && created == CAROLS {
                    break;
                }
                let new = NewTask {
                    principal: Some(principal.to_owned()),
                    quota: (principal != "carol").then_some(quota),
                    arguments: json!({ "w": w, "n": n }),
                    ..new_task("report", at(0))
                };
                match store.create(new).await {
                    Ok(c) => {
                        assert!(c.created);
                        created += 1;
                    }
                    Err(StoreError::QuotaExceeded { principal: p, used, limit, .. }) => {
                        assert_eq!((p.as_deref(), used, limit), (Some(principal), LIMIT, LIMIT));
                        break;
                    }
                    Err(e) => panic!("create for {principal}: {e}"),
                }
            }
            (principal, created)
        }));
    }
    let mut created: BTreeMap<&str, usize> = BTreeMap::new();
    for worker in workers {
        let (principal, n) = worker.await.expect("creator panicked");
        *created.entry(principal).or_default() += n;
    }
    assert_eq!(
        created,
        BTreeMap::from([("alice", LIMIT as usize), ("bob", LIMIT as usize), ("carol", 6 * CAROLS)]),
        "capped principals get exactly their quota, across instances"
    );
    let (usage, truth) = usage_and_truth(&db).await;
    assert_eq!(usage, truth, "the triggers' usage is what the rows add up to");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_follows_inserts_and_deletes() {
    let Some(db) = TestDatabase::create().await else { return };
    let store = PostgresStore::open(&db.url()).await.expect("open");
    let mut made = Vec::new();
    for (n, principal) in [Some("alice"), None, Some("alice"), Some("bob"), None].into_iter().enumerate() {
        let new = NewTask {
            principal: principal.map(str::to_owned),
            arguments: json!({ "pad": "é".repeat(n * 7) }),
            ..new_task("report", at(0))
        };
        made.push(create(&store, new).await);
    }
    let (usage, truth) = usage_and_truth(&db).await;
    assert_eq!(usage, truth);
    assert_eq!(usage.get("").map(|u| u.0), Some(2), "the anonymous principal is ''");
    // Two deletions in one apply: one transaction, two statements.
    let mut deletes = Vec::new();
    for record in [&made[0], &made[1]] {
        let done = finish(&store, &record.id, TaskStatus::Completed, at(5)).await;
        deletes.push(GuardedUpdate::delete(Guard::read(&done)));
    }
    store.apply(deletes).await.expect("delete");
    let (usage, truth) = usage_and_truth(&db).await;
    assert_eq!(usage, truth, "deleted rows stop counting");
    assert_eq!(usage.get("alice").map(|u| u.0), Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_usage_migration_counts_tasks_already_stored() {
    let Some(db) = TestDatabase::create().await else { return };
    {
        let store = PostgresStore::open(&db.url()).await.expect("open");
        for principal in [Some("alice"), Some("alice"), None] {
            let new = NewTask { principal: principal.map(str::to_owned), ..new_task("report", at(0)) };
            create(&store, new).await;
        }
    }
    // Back to schema version 1: no usage table, no triggers (and none of
    // the later versions' leader table and NOTIFY triggers either).
    db.connect()
        .await
        .batch_execute(
            "DROP TABLE task_attempts; DROP INDEX tasks_principal; \
             DROP TABLE principal_usage; \
             DROP FUNCTION mcp_tasks_usage_insert() CASCADE; \
             DROP FUNCTION mcp_tasks_usage_delete() CASCADE; \
             DROP TABLE maintenance_leader; \
             DROP FUNCTION mcp_tasks_notify_created() CASCADE; \
             DROP FUNCTION mcp_tasks_notify_changed() CASCADE; \
             DROP INDEX tasks_tool_status; \
             ALTER TABLE tasks DROP COLUMN traceparent; \
             DELETE FROM mcp_tasks_schema_migrations WHERE version >= 2",
        )
        .await
        .expect("downgrade to version 1");
    let store = PostgresStore::open(&db.url()).await.expect("reopen migrates");
    let (usage, truth) = usage_and_truth(&db).await;
    assert_eq!(usage, truth, "the migration counted the existing rows");
    let capped = NewTask {
        principal: Some("alice".into()),
        quota: Some(Quota { max_tasks: Some(2), max_argument_bytes: None }),
        ..new_task("report", at(1))
    };
    assert!(
        matches!(store.create(capped).await, Err(StoreError::QuotaExceeded { used: 2, .. })),
        "tasks stored before the migration count against the quota"
    );
}

/// A creation racing a transaction that inserted a task for the same
/// principal and has not committed waits for it, then counts its row: the
/// principal's usage row is locked before the quota is read, not only when
/// the triggers add to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_creation_waits_for_an_uncommitted_one_of_its_principal() {
    let Some(db) = TestDatabase::create().await else { return };
    let store = Arc::new(PostgresStore::open(&db.url()).await.expect("open"));
    let quota = Quota { max_tasks: Some(3), max_argument_bytes: None };
    let alice = move |n: i64| NewTask { principal: Some("alice".into()), quota: Some(quota), ..new_task("report", at(n)) };
    create(&*store, alice(0)).await;
    create(&*store, alice(1)).await;
    // Another instance's transaction inserts alice's third task and holds.
    let mut other = db.connect().await;
    let tx = other.transaction().await.expect("begin");
    tx.execute(
        "INSERT INTO tasks (id, version, tool, arguments, principal, status, attempt, max_attempts, \
           created_at, updated_at, deadline_at, run_at, cancel_requested, input_requests, input_responses, fingerprint) \
         VALUES ('uncommitted', 1, 'report', '{}', 'alice', 'working', 1, 3, 0, 0, 1, 0, false, '{}', '{}', 'f')",
        &[],
    )
    .await
    .expect("insert alice's third task");
    let racing = tokio::spawn({
        let store = Arc::clone(&store);
        async move { store.create(alice(2)).await }
    });
    // Commit only once the creation waits on a lock (polled, bounded).
    let watcher = db.connect().await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let waiting: i64 = watcher
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
                &[&db.schema()],
            )
            .await
            .expect("pg_stat_activity")
            .get(0);
        if waiting > 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the creation never waited for the lock");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    tx.commit().await.expect("commit");
    match racing.await.expect("creator panicked") {
        Err(StoreError::QuotaExceeded { used, limit, .. }) => assert_eq!((used, limit), (3, 3)),
        other => panic!("the creation must see the committed third task and be refused, got {other:?}"),
    }
    let (usage, truth) = usage_and_truth(&db).await;
    assert_eq!(usage, truth);
    assert_eq!(usage["alice"].0, 3, "never more than the quota");
}
