//! A row damaged behind the store's back reads as a typed `Corrupt` error
//! naming the task and column, never a panic; other rows stay readable, and
//! an operator listing still shows it.

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
        .execute("UPDATE tasks SET arguments = '{not json' WHERE id = ?1", [damaged.id.as_str()])
        .unwrap();

    match store.get(&damaged.id).await {
        Err(e @ StoreError::Corrupt { .. }) => {
            let text = e.to_string();
            assert!(text.contains(damaged.id.as_str()) && text.contains("arguments"), "{text}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert_eq!(get(&store, &healthy.id).await, healthy, "other rows stay readable");
    // Operators still see it in a listing, with what was unreadable.
    let listed = store.list(ListQuery::default()).await.unwrap();
    let shown = listed.iter().find(|r| r.id == damaged.id).expect("the damaged row is listed");
    let message = shown.status_message.as_deref().unwrap_or_default();
    assert!(message.contains("unreadable") && message.contains("arguments"), "{message}");
    assert!(listed.iter().any(|r| r == &healthy));
}

/// `get_visible` checks the owner in SQL, before decoding: another
/// principal's row reads as missing even when its JSON would not decode,
/// proof that it was never decoded (so it costs what an unknown id costs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_principals_row_is_never_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).unwrap();
    let theirs =
        create(&store, mcp_tasks_store::NewTask { principal: Some("alice".into()), ..new_task("report", at(0)) }).await;
    Connection::open(&path)
        .unwrap()
        .execute("UPDATE tasks SET arguments = '{not json' WHERE id = ?1", [theirs.id.as_str()])
        .unwrap();

    assert_eq!(store.get_visible(&theirs.id, Some("bob")).await, Ok(None));
    assert_eq!(store.get_visible(&theirs.id, None).await, Ok(None));
    assert!(
        matches!(store.get_visible(&theirs.id, Some("alice")).await, Err(StoreError::Corrupt { .. })),
        "the owner is told the row is unreadable"
    );
}
