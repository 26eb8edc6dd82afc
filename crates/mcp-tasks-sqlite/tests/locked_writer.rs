//! While another process holds the write lock: reads still answer at once,
//! writes wait (then fail with a typed error), and buffered polls survive a
//! failed flush.

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_sqlite::{SqliteOptions, SqliteStore};
use mcp_tasks_store::conformance::support::{at, create, get, new_task};
use mcp_tasks_store::{ListQuery, PollBuffer, StoreError, SweepQuery, TaskStore};
use rusqlite::Connection;

/// Takes the database's write lock the way another process would.
fn lock_writes(path: &std::path::Path) -> Connection {
    let other = Connection::open(path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    other
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_do_not_wait_behind_a_blocked_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let options = SqliteOptions { busy_timeout: Duration::from_secs(60), ..SqliteOptions::default() };
    let store = Arc::new(SqliteStore::open_with(&path, options).unwrap());
    let existing = create(&*store, new_task("report", at(0))).await;

    let other = lock_writes(&path);
    let blocked = {
        let store = Arc::clone(&store);
        tokio::spawn(async move { store.create(new_task("report", at(1))).await })
    };
    assert_eq!(get(&*store, &existing.id).await, existing, "a read answers while the writer waits");
    let unseen = store.sweep_candidates(SweepQuery::Unseen { cutoff: at(10), limit: 10 }).await.unwrap();
    assert_eq!(unseen.len(), 1);
    assert_eq!(store.list(ListQuery::default()).await.unwrap().len(), 1);
    assert!(!blocked.is_finished(), "the create cannot commit while another connection holds the write lock");

    other.execute_batch("ROLLBACK").unwrap();
    let created = blocked.await.unwrap().expect("the create commits once the lock is released");
    assert_eq!(get(&*store, &created.record.id).await, created.record);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_cannot_get_the_lock_fails_typed_and_polls_stay_buffered() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let options = SqliteOptions { busy_timeout: Duration::from_millis(100), ..SqliteOptions::default() };
    let store = SqliteStore::open_with(&path, options).unwrap();
    let task = create(&store, new_task("report", at(0))).await;
    let polls = PollBuffer::new();
    polls.record(&task.id, at(7));

    let other = lock_writes(&path);
    match polls.flush(&store).await {
        Err(StoreError::Unavailable(reason)) => assert!(reason.contains("locked"), "{reason}"),
        other => panic!("a flush against a locked database must fail Unavailable, got {other:?}"),
    }
    assert_eq!(polls.len(), 1, "a failed flush keeps its polls for the next one");
    match store.create(new_task("report", at(1))).await {
        Err(StoreError::Unavailable(_)) => {}
        other => panic!("a create against a locked database must fail Unavailable, got {other:?}"),
    }
    drop(other);

    assert_eq!(polls.flush(&store).await.unwrap(), 1);
    assert!(polls.is_empty());
    assert_eq!(get(&store, &task.id).await.last_polled_at, Some(at(7)));
    assert_eq!(store.list(ListQuery::default()).await.unwrap().len(), 1, "the failed create left nothing behind");
}
