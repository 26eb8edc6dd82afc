//! Schema version 5 adds the attempt history. A version-4 file with tasks
//! in it is migrated: its tasks keep everything (with no history: it was
//! not kept then), new attempt ends are recorded, and expiry deletes them.

use mcp_tasks_core::{FailureClass, TaskError, TaskStatus};
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::support::{apply_one, at, change, create, get, new_task};
use mcp_tasks_store::{AttemptEnd, AttemptOutcome, Change, Guard, GuardedUpdate, TaskStore};
use rusqlite::Connection;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_4_file_is_migrated_and_records_attempts_from_then_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let task = {
        let store = SqliteStore::open(&path).unwrap();
        create(&store, new_task("report", at(0))).await
    };
    // Back to version 4, as a file written before the upgrade would be.
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TRIGGER tasks_attempts_delete; DROP TABLE task_attempts; DROP INDEX tasks_principal; \
             PRAGMA user_version = 4;",
        )
        .unwrap();

    let store = SqliteStore::open(&path).unwrap();
    let version: i64 = Connection::open(&path).unwrap().pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version, 10, "opening migrates to the latest version");
    assert_eq!(get(&store, &task.id).await, task, "the migrated task is unchanged");
    assert!(store.attempts(&task.id).await.unwrap().is_empty(), "no history was kept before version 5");

    let end = AttemptEnd {
        attempt: 1,
        started_at: Some(at(1)),
        owner: Some("exec/1".into()),
        outcome: AttemptOutcome::Failed,
        class: Some(FailureClass::Permanent),
        error: Some(TaskError::internal("E_BAD")),
        message: None,
    };
    let failed = Change {
        now: at(2),
        status: Some(TaskStatus::Failed),
        terminal_at: Some(at(2)),
        error: Some(TaskError::internal("E_BAD")),
        attempt_end: Some(end.clone()),
        ..Change::default()
    };
    change(&store, &task.id, failed).await;
    let history = store.attempts(&task.id).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!((history[0].outcome, history[0].class, history[0].ended_at), (AttemptOutcome::Failed, end.class, at(2)));
    assert!(apply_one(&store, GuardedUpdate::delete(Guard::id(task.id.clone()))).await.applied());
    assert!(store.attempts(&task.id).await.unwrap().is_empty(), "the history goes with its task");
}
