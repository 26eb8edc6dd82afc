//! Losing the database: operations fail promptly with
//! `StoreError::Unavailable` saying the database is unavailable (never
//! hang), and the pool reconnects by itself once it is back.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_postgres::testing::{CutProxy, TestDatabase};
use mcp_tasks_postgres::{PostgresOptions, PostgresStore};
use mcp_tasks_store::conformance::support::{at, claim_params, create, finish, get, new_task};
use mcp_tasks_store::{NewTask, StoreError, TaskStore};

/// No single operation may take longer than this, database down or not.
const BOUND: Duration = Duration::from_secs(30);

/// Runs `op` under [`BOUND`]; a hang fails the test.
async fn bounded<T>(what: &str, op: impl Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, op).await.unwrap_or_else(|_| panic!("{what} hung for more than {BOUND:?}"))
}

/// An error while the database is gone must say so.
fn assert_unavailable(what: &str, error: &StoreError) {
    match error {
        StoreError::Unavailable(message) => assert!(
            message.contains("database is unavailable"),
            "{what}: the message must say the database is unavailable: {error}"
        ),
        other => panic!("{what}: expected Unavailable, got {other}"),
    }
}

/// The store works end to end: create, read, claim, finish.
async fn works(store: &PostgresStore, secs: i64) {
    let task = create(store, new_task("report", at(secs))).await;
    assert_eq!(get(store, &task.id).await, task);
    let claimed = store.claim(claim_params("exec", at(secs + 1), 10)).await.expect("claim");
    assert!(claimed.iter().any(|r| r.id == task.id));
    finish(store, &task.id, TaskStatus::Completed, at(secs + 2)).await;
    store.health().await.expect("healthy");
}

/// Retries `works` until it passes; the pool must have reconnected within
/// a few attempts.
async fn works_again(store: &PostgresStore, secs: i64) {
    for attempt in 1..=10 {
        let probe = bounded("a probe", store.create(new_task("probe", at(secs)))).await;
        match probe {
            Ok(_) => {
                works(store, secs).await;
                return;
            }
            Err(e) => {
                assert_unavailable("a probe while reconnecting", &e);
                eprintln!("attempt {attempt}: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    panic!("the store did not reconnect within 10 attempts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminated_backends_fail_clearly_then_the_pool_reconnects() {
    let Some(db) = TestDatabase::create().await else { return };
    let store = Arc::new(PostgresStore::open(&db.url()).await.expect("open"));
    works(&store, 0).await;
    // Several pooled connections in use at once, so several are terminated.
    let mut busy = Vec::new();
    for _ in 0..8 {
        let store = Arc::clone(&store);
        busy.push(tokio::spawn(async move { store.list(Default::default()).await }));
    }
    for b in busy {
        b.await.unwrap().expect("list");
    }

    let admin = db.connect().await;
    let terminated: i64 = admin
        .query_one(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = $1 AND pid <> pg_backend_pid()) AS t",
            &[&db.schema()],
        )
        .await
        .expect("terminate")
        .get(0);
    assert!(terminated >= 1, "the store's connections were terminated");

    // Whatever comes next either works on a fresh connection or fails
    // saying the database is unavailable, and none of it hangs.
    let id = mcp_tasks_core::TaskId::random();
    let outcomes: Vec<Result<(), StoreError>> = vec![
        bounded("get", store.get(&id)).await.map(drop),
        bounded("create", store.create(new_task("report", at(5)))).await.map(drop),
        bounded("claim", store.claim(claim_params("exec", at(6), 5))).await.map(drop),
        bounded("list", store.list(Default::default())).await.map(drop),
        bounded("health", store.health()).await,
    ];
    for (n, outcome) in outcomes.iter().enumerate() {
        if let Err(e) = outcome {
            assert_unavailable(&format!("operation {n} after termination"), e);
        }
    }
    works_again(&store, 10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_goes_away_fails_promptly_and_comes_back() {
    let Some(db) = TestDatabase::create().await else { return };
    let url = db.url();
    let Some((proxy, proxied)) = CutProxy::in_front_of(&url).await else { return };
    let options = PostgresOptions {
        connect_timeout: Duration::from_secs(3),
        wait_timeout: Duration::from_secs(3),
        ..PostgresOptions::default()
    };
    let store = PostgresStore::open_with(&proxied, options).await.expect("open through the proxy");
    // Not due, so the claims of `works` leave it as it is.
    let before = create(&store, NewTask { run_at: at(100_000), ..new_task("report", at(0)) }).await;

    proxy.down();
    let id = before.id.clone();
    let failures = [
        ("get", bounded("get", store.get(&id)).await.map(drop)),
        ("create", bounded("create", store.create(new_task("report", at(1)))).await.map(drop)),
        ("claim", bounded("claim", store.claim(claim_params("exec", at(2), 5))).await.map(drop)),
        ("apply", bounded("apply", store.apply(vec![])).await.map(drop)),
        ("count", bounded("count", store.count_by_status()).await.map(drop)),
        ("health", bounded("health", store.health()).await),
    ];
    for (what, outcome) in failures {
        if what == "apply" {
            // An empty batch needs no database.
            continue;
        }
        match outcome {
            Ok(()) => panic!("{what} succeeded with the database down"),
            Err(e) => assert_unavailable(what, &e),
        }
    }

    proxy.up();
    works_again(&store, 10).await;
    assert_eq!(get(&store, &before.id).await, before, "nothing was lost");
}
