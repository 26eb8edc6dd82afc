//! A database file deleted or replaced under a running store: writes are
//! refused with `Unavailable` naming the file and what happened (instead of
//! being acknowledged into a file nobody will open again), and `health()`
//! reports the same error. The checkpoint refuses too.

use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::support::{at, create, new_task};
use mcp_tasks_store::{StoreError, TaskStore};

fn assert_lost(result: Result<impl std::fmt::Debug, StoreError>, path: &std::path::Path, what: &str) {
    match result {
        Err(StoreError::Unavailable(message)) => {
            assert!(
                message.contains(&path.display().to_string())
                    && message.contains(what)
                    && message.contains("Restart the server"),
                "{message}"
            );
        }
        other => panic!("expected Unavailable naming the {what} file, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_to_a_deleted_file_are_refused_and_health_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).unwrap();
    create(&store, new_task("report", at(0))).await;
    assert_eq!(store.health().await, Ok(()));

    std::fs::remove_file(&path).unwrap();

    assert_lost(store.health().await, &path, "deleted");
    assert_lost(store.create(new_task("report", at(1))).await, &path, "deleted");
    assert_lost(store.create(new_task("report", at(2))).await, &path, "deleted");
    assert_lost(store.checkpoint().await, &path, "deleted");
    assert!(!path.exists(), "nothing recreated the file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_to_a_replaced_file_are_refused_and_health_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).unwrap();
    create(&store, new_task("report", at(0))).await;

    // Another file renamed over the path (a restore, a careless `mv`).
    let other = dir.path().join("other.db");
    std::fs::write(&other, b"").unwrap();
    std::fs::rename(&other, &path).unwrap();

    assert_lost(store.create(new_task("report", at(1))).await, &path, "replaced");
    assert_lost(store.health().await, &path, "replaced");
}
