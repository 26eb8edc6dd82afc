//! Group commit: concurrent writes share commits, and one write's failure
//! does not undo the others in its batch.

use std::collections::HashSet;
use std::sync::Arc;

use mcp_tasks_core::TaskId;
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::support::{at, create, get, new_task};
use mcp_tasks_store::{NewTask, StoreError, TaskStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_share_commits_and_failures_stay_local() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path().join("tasks.db")).unwrap());
    let taken = create(&*store, new_task("report", at(0))).await;
    let before = store.write_stats();
    assert_eq!(before, mcp_tasks_sqlite::WriteStats { commits: 1, writes: 1 });

    let mut handles = Vec::new();
    for i in 0..256usize {
        let store = Arc::clone(&store);
        // Every 4th create reuses a taken id and must fail alone.
        let id = if i % 4 == 0 { taken.id.clone() } else { TaskId::random() };
        handles.push(tokio::spawn(async move {
            let new = NewTask { id: id.clone(), ..new_task("report", at(i as i64)) };
            (i, id, store.create(new).await)
        }));
    }
    let mut created = HashSet::new();
    for h in handles {
        let (i, id, result) = h.await.unwrap();
        match result {
            Ok(c) if i % 4 != 0 => {
                assert!(c.created);
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
    let after = store.write_stats();
    let writes = after.writes - before.writes;
    let commits = after.commits - before.commits;
    assert_eq!(writes, 256, "every create is one write");
    assert!(commits < writes, "concurrent creates must share commits: {commits} commits for {writes} writes");
    let total = store.count_by_status().await.unwrap().values().sum::<u64>();
    assert_eq!(total, 193);
}
