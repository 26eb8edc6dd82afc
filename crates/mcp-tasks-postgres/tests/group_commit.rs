//! Group commit: concurrent creations share transactions and commits, each
//! returns only once its row is committed, and one creation's failure does
//! not undo the others in its batch.

use std::collections::HashSet;
use std::sync::Arc;

use mcp_tasks_core::TaskId;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_postgres::{CreateStats, PostgresStore};
use mcp_tasks_store::conformance::support::{at, create, get, new_task};
use mcp_tasks_store::{NewTask, StoreError, TaskStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_share_commits_and_failures_stay_local() {
    let Some(db) = TestDatabase::create().await else { return };
    let store = Arc::new(PostgresStore::open(&db.url()).await.expect("open"));
    // A connection of its own: in READ COMMITTED it sees only committed rows.
    let observer = Arc::new(db.connect().await);
    let taken = create(&*store, new_task("report", at(0))).await;
    let before = store.create_stats();
    assert_eq!(before, CreateStats { commits: 1, creates: 1 });

    let mut handles = Vec::new();
    for i in 0..256usize {
        let store = Arc::clone(&store);
        let observer = Arc::clone(&observer);
        // Every 4th create reuses a taken id and must fail alone.
        let id = if i % 4 == 0 { taken.id.clone() } else { TaskId::random() };
        handles.push(tokio::spawn(async move {
            let new = NewTask { id: id.clone(), ..new_task("report", at(i as i64)) };
            let result = store.create(new).await;
            let committed = observer
                .query_opt("SELECT 1 FROM tasks WHERE id = $1", &[&id.as_str()])
                .await
                .expect("observer read")
                .is_some();
            (i, id, result, committed)
        }));
    }
    let mut created = HashSet::new();
    for h in handles {
        let (i, id, result, committed) = h.await.unwrap();
        match result {
            Ok(c) if i % 4 != 0 => {
                assert!(c.created);
                assert!(committed, "create {i} returned before its row was committed");
                created.insert(id);
            }
            Err(StoreError::DuplicateId(dup)) if i % 4 == 0 => assert_eq!(dup, taken.id),
            other => panic!("create {i}: unexpected {other:?}"),
        }
    }
    assert_eq!(created.len(), 192);
    for id in &created {
        get(&*store, id).await;
    }
    assert_eq!(get(&*store, &taken.id).await, taken, "failed creates must not touch the existing row");
    let after = store.create_stats();
    let creates = after.creates - before.creates;
    let commits = after.commits - before.commits;
    assert_eq!(creates, 256, "every create is answered by a batch");
    eprintln!("group commit: {commits} commits for {creates} concurrent creates");
    assert!(commits < creates, "concurrent creates must share commits: {commits} commits for {creates} creates");
    let total = store.count_by_status().await.unwrap().values().sum::<u64>();
    assert_eq!(total, 193);
}
