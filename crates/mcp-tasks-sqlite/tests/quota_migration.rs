//! Schema version 2 adds the per-principal usage counters a quota check
//! reads. A version-1 file with tasks in it is migrated with its usage
//! counted, so quotas hold for tasks created before the upgrade; version 4's
//! counts by tool and status likewise count the tasks already stored.

use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::support::{at, create, new_task};
use mcp_tasks_store::{NewTask, Quota, QuotaResource, StoreError, TaskStore};
use rusqlite::Connection;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_file_is_migrated_with_its_usage_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let alice = |n| NewTask { principal: Some("alice".into()), ..new_task("report", at(n)) };
    {
        let store = SqliteStore::open(&path).unwrap();
        create(&store, alice(0)).await;
        create(&store, alice(1)).await;
        create(&store, new_task("report", at(2))).await;
    }
    // Back to version 1, as a file written before the upgrade would be.
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TRIGGER tasks_attempts_delete; DROP TABLE task_attempts; DROP INDEX tasks_principal; \
             DROP TRIGGER tasks_usage_delete; \
             DROP TABLE principal_usage; \
             DROP TRIGGER tasks_count_delete; \
             DROP TABLE task_counts; ALTER TABLE tasks DROP COLUMN traceparent; PRAGMA user_version = 1;",
        )
        .unwrap();

    let store = SqliteStore::open(&path).unwrap();
    let counts = store.count_by_status_and_tool().await.unwrap();
    assert_eq!(counts, [((mcp_tasks_core::TaskStatus::Working, "report".to_owned()), 3)].into());
    let quota = Quota { max_tasks: Some(2), max_argument_bytes: None };
    match store.create(NewTask { quota: Some(quota), ..alice(3) }).await {
        Err(StoreError::QuotaExceeded { resource: QuotaResource::Tasks, used: 2, .. }) => {}
        other => panic!("alice's two older tasks should count: {other:?}"),
    }
    let anonymous = NewTask { quota: Some(quota), ..new_task("report", at(4)) };
    assert!(store.create(anonymous).await.unwrap().created, "the anonymous principal holds one");
}
