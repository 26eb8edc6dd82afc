//! A read for an answer (`get_visible_for_answer`) keeps a result as the
//! JSON text stored, checked but not decoded, and is otherwise the read
//! `get_visible` gives; a damaged result is still `Corrupt`.

use mcp_tasks_core::TaskStatus;
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::support::{at, create, finish, new_task};
use mcp_tasks_store::{StoreError, TaskStore};
use rusqlite::Connection;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_is_kept_as_its_stored_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).unwrap();
    let done = create(&store, new_task("report", at(0))).await;
    let done = finish(&store, &done.id, TaskStatus::Completed, at(1)).await;
    let live = create(&store, new_task("report", at(2))).await;

    let read = store.get_visible_for_answer(&done.id, None).await.unwrap().expect("the completed task");
    let stored: String = Connection::open(&path)
        .unwrap()
        .query_row("SELECT result FROM tasks WHERE id = ?1", [done.id.as_str()], |r| r.get(0))
        .unwrap();
    assert_eq!(read.result_text.as_deref().map(|t| t.get()), Some(stored.as_str()), "the text as stored");
    assert_eq!(read.record.result, None, "not decoded into the record");
    assert_eq!(read.into_record().unwrap(), done, "decoded, the record get_visible gives");

    let read = store.get_visible_for_answer(&live.id, None).await.unwrap().expect("the live task");
    assert!(read.result_text.is_none());
    assert_eq!(read.record, live);
    assert!(store.get_visible_for_answer(&live.id, Some("bob")).await.unwrap().is_none(), "another's reads as missing");

    Connection::open(&path)
        .unwrap()
        .execute("UPDATE tasks SET result = '{\"content\": [' WHERE id = ?1", [done.id.as_str()])
        .unwrap();
    match store.get_visible_for_answer(&done.id, None).await {
        Err(e @ StoreError::Corrupt { .. }) => assert!(e.to_string().contains("result"), "{e}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}
