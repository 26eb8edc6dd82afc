//! Schema version 7 adds the attempt history. A version-6 schema with a task
//! in it is migrated on open: the task is unchanged, attempt ends are
//! recorded from then on, and deleting the task deletes its history.

use mcp_tasks_core::{FailureClass, TaskError, TaskStatus};
use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_store::conformance::support::{apply_one, at, change, create, get, new_task};
use mcp_tasks_store::{AttemptEnd, AttemptOutcome, Change, Guard, GuardedUpdate, TaskStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_6_schema_is_migrated_and_records_attempts_from_then_on() {
    let Some(db) = TestDatabase::create().await else { return };
    let task = {
        let store = PostgresStore::open(&db.url()).await.expect("open");
        create(&store, new_task("report", at(0))).await
    };
    db.connect()
        .await
        .batch_execute(
            "DROP TABLE task_attempts; DROP INDEX tasks_principal; \
             DELETE FROM mcp_tasks_schema_migrations WHERE version >= 7",
        )
        .await
        .expect("downgrade to version 6");

    let store = PostgresStore::open(&db.url()).await.expect("reopen migrates");
    assert_eq!(get(&store, &task.id).await, task, "the migrated task is unchanged");
    assert!(store.attempts(&task.id).await.unwrap().is_empty());
    let end = AttemptEnd {
        attempt: 1,
        started_at: None,
        owner: Some("exec/1".into()),
        outcome: AttemptOutcome::LeaseLapsed,
        class: Some(FailureClass::Poison),
        error: Some(TaskError::internal("the executor died")),
        message: Some("crashed".into()),
    };
    let failed = Change {
        now: at(2),
        status: Some(TaskStatus::Failed),
        terminal_at: Some(at(2)),
        attempt_end: Some(end.clone()),
        ..Change::default()
    };
    change(&store, &task.id, failed).await;
    let history = store.attempts(&task.id).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        (history[0].outcome, history[0].class, history[0].message.as_deref()),
        (end.outcome, end.class, Some("crashed"))
    );
    assert!(apply_one(&store, GuardedUpdate::delete(Guard::id(task.id.clone()))).await.applied());
    assert!(store.attempts(&task.id).await.unwrap().is_empty(), "the history goes with its task");
}
