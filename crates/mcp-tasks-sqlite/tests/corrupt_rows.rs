//! A row damaged behind the store's back reads as a typed `Corrupt` error
//! naming the task and column, never a panic; other rows stay readable.

use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::support::{at, create, get, new_task};
use mcp_tasks_store::{ListQuery, StoreError, TaskStore};
use rusqlite::Connection;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_row_is_reported_not_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).unwrap();
    let damaged = create(&store, new_task("report", at(0))).await;
    let healthy = create(&store, new_task("report", at(1))).await;
    Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE tasks SET arguments = '{not json' WHERE id = ?1",
            [damaged.id.as_str()],
        )
        .unwrap();

    match store.get(&damaged.id).await {
        Err(e @ StoreError::Corrupt { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains(damaged.id.as_str()) && text.contains("arguments"),
                "{text}"
            );
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert_eq!(
        get(&store, &healthy.id).await,
        healthy,
        "other rows stay readable"
    );
    assert!(matches!(
        store.list(ListQuery::default()).await,
        Err(StoreError::Corrupt { .. })
    ));
}
