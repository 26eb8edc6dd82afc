//! Several store instances on one schema, as a fleet of `serve` processes
//! would be: creations racing on one idempotency key make one task, and
//! claimers never share a task.

use std::collections::HashSet;
use std::sync::Arc;

use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_store::conformance::support::{at, claim_params, create, new_task};
use mcp_tasks_store::{NewTask, StoreError, TaskStore};
use serde_json::json;

async fn fleet(db: &TestDatabase, n: usize) -> Vec<Arc<PostgresStore>> {
    let mut stores = Vec::new();
    for _ in 0..n {
        stores.push(Arc::new(PostgresStore::open(&db.url()).await.expect("open")));
    }
    stores
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creators_on_many_instances_racing_on_one_key_agree() {
    let Some(db) = TestDatabase::create().await else { return };
    let stores = fleet(&db, 4).await;
    let mut handles = Vec::new();
    for i in 0..64usize {
        let store = Arc::clone(&stores[i % stores.len()]);
        // Every 8th caller reuses the key for another call.
        let arguments = if i % 8 == 7 { json!({ "x": 2 }) } else { json!({ "x": 1 }) };
        handles.push(tokio::spawn(async move {
            let new = NewTask {
                principal: Some("alice".into()),
                idempotency_key: Some("once".into()),
                trace_parent: None,
                arguments,
                ..new_task("report", at(0))
            };
            (i, store.create(new).await)
        }));
    }
    let mut created = 0;
    let mut ids = HashSet::new();
    let mut conflicts = 0;
    for h in handles {
        match h.await.unwrap() {
            (_, Ok(c)) => {
                created += usize::from(c.created);
                ids.insert(c.record.id);
            }
            (_, Err(StoreError::IdempotencyConflict { existing, .. })) => {
                conflicts += 1;
                ids.insert(existing);
            }
            (i, Err(e)) => panic!("create {i}: {e}"),
        }
    }
    assert_eq!(created, 1, "exactly one creation under one key across instances");
    assert_eq!(ids.len(), 1, "every caller is told of the same task");
    // Whichever call took the key, every caller of the other one conflicts.
    assert!(conflicts == 8 || conflicts == 56, "callers of the other call conflict: {conflicts}");
    let listed = stores[0].list(Default::default()).await.unwrap();
    assert_eq!(listed.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claimers_on_many_instances_never_share_a_task() {
    let Some(db) = TestDatabase::create().await else { return };
    let stores = fleet(&db, 4).await;
    let mut made = HashSet::new();
    for i in 0..120 {
        made.insert(create(&*stores[0], new_task("report", at(i % 30))).await.id);
    }
    let mut claimers = Vec::new();
    for c in 0..8usize {
        let store = Arc::clone(&stores[c % stores.len()]);
        claimers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let batch = store.claim(claim_params(&format!("exec-{c}"), at(100), 4)).await.expect("claim");
                if batch.is_empty() {
                    break mine;
                }
                mine.extend(batch.into_iter().map(|r| r.id));
            }
        }));
    }
    let mut seen = HashSet::new();
    for claimer in claimers {
        for id in claimer.await.unwrap() {
            assert!(seen.insert(id.clone()), "task {id} was claimed twice");
        }
    }
    assert_eq!(seen, made);
}
