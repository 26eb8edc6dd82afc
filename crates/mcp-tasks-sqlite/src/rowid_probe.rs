//! A task minted as a UUID v7 is stored under the rowid its id gives
//! (`row_key.rs`) and read by it; a task that could not have it — an id of
//! another form, a rowid another task took, a row moved — is still stored
//! and read, through the id index.

use mcp_tasks_core::{TaskId, Timestamp};
use mcp_tasks_store::conformance::support::{at, create, new_task};
use mcp_tasks_store::{NewTask, StoreError, TaskStore};
use rusqlite::Connection;

use crate::SqliteStore;
use crate::open::open_writer;
use crate::reads::{GET_SQL, GET_VISIBLE_SQL, PROBE_SQL, PROBE_VISIBLE_SQL};
use crate::row_key::rowid_of;
use crate::writes::{RECORD_POLL_PROBE_SQL, RECORD_POLL_SQL};

/// `id` with its last hex digit set to `digit` (past the bits its rowid reads).
fn with_last_digit(id: &TaskId, digit: char) -> TaskId {
    TaskId(format!("{}{digit}", &id.as_str()[..35]))
}

fn rowid(path: &std::path::Path, id: &TaskId) -> i64 {
    Connection::open(path).unwrap().query_row("SELECT rowid FROM tasks WHERE id = ?1", [id.as_str()], |r| r.get(0)).unwrap()
}

/// Every way to read task `id` (as `principal`) returns the same record, whose id is `id`.
async fn reads_back(store: &SqliteStore, id: &TaskId, principal: Option<&str>) {
    let record = store.get(id).await.unwrap().unwrap_or_else(|| panic!("get {id}"));
    assert_eq!(&record.id, id);
    assert_eq!(store.get_visible(id, principal).await.unwrap().as_ref(), Some(&record), "get_visible {id}");
    let read = store.get_visible_for_answer(id, principal).await.unwrap().expect("get_visible_for_answer");
    assert_eq!(read.into_record().unwrap(), record, "get_visible_for_answer {id}");
    assert!(store.get_visible(id, Some("mallory")).await.unwrap().is_none(), "another owner's reads as missing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_minted_task_sits_at_its_ids_rowid_and_others_are_found_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).unwrap();

    let minted = with_last_digit(&TaskId::minted_at(Timestamp::from_secs(1_800_000_000)), '0');
    create(&store, NewTask { id: minted.clone(), principal: Some("alice".into()), ..new_task("report", at(0)) }).await;
    assert_eq!(rowid(&path, &minted), rowid_of(&minted).unwrap(), "stored under its id's rowid");
    reads_back(&store, &minted, Some("alice")).await;

    // Same millisecond and the same 18 random bits, a different id: the
    // rowid is taken, so it is stored under another and found by id.
    let twin = with_last_digit(&minted, '1');
    assert_eq!(rowid_of(&twin), rowid_of(&minted), "{twin} and {minted} share a rowid");
    create(&store, NewTask { id: twin.clone(), ..new_task("report", at(1)) }).await;
    assert_ne!(rowid(&path, &twin), rowid(&path, &minted));
    reads_back(&store, &twin, None).await;
    reads_back(&store, &minted, Some("alice")).await;

    // An id of another form has no rowid of its own.
    let random = TaskId::random();
    assert_eq!(rowid_of(&random), None);
    create(&store, NewTask { id: random.clone(), ..new_task("report", at(2)) }).await;
    reads_back(&store, &random, None).await;

    // A row a migration renumbered is still found, by id.
    Connection::open(&path).unwrap().execute("UPDATE tasks SET rowid = 7 WHERE id = ?1", [minted.as_str()]).unwrap();
    reads_back(&store, &minted, Some("alice")).await;
    // Its rowid is free again: a task minted into it now takes it.
    let late = with_last_digit(&minted, '2');
    create(&store, NewTask { id: late.clone(), ..new_task("report", at(3)) }).await;
    assert_eq!(rowid(&path, &late), rowid_of(&minted).unwrap());
    reads_back(&store, &late, None).await;
    reads_back(&store, &minted, Some("alice")).await;

    // A poll instant reaches every one of them, at its rowid or by id.
    let everyone = [&minted, &twin, &random, &late];
    store.record_polls(&everyone.map(|id| (id.clone(), at(60)))).await.unwrap();
    for id in everyone {
        assert_eq!(store.get(id).await.unwrap().unwrap().last_polled_at, Some(at(60)), "poll of {id} recorded");
    }

    // A duplicate id is still refused as one, not stored under another rowid.
    match store.create(NewTask { id: late.clone(), ..new_task("report", at(4)) }).await {
        Err(StoreError::DuplicateId(id)) => assert_eq!(id, late),
        other => panic!("expected DuplicateId, got {other:?}"),
    }
    assert!(store.get(&TaskId::minted_at(Timestamp::from_secs(1_800_000_000))).await.unwrap().is_none(), "unknown");
}

#[test]
fn a_probe_walks_the_table_alone_and_a_lookup_by_id_the_id_index() {
    let dir = tempfile::tempdir().unwrap();
    let conn = open_writer(&dir.path().join("plans.db"), crate::DEFAULT_BUSY_TIMEOUT).unwrap();
    let plan = |sql: &str| {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let nulls = vec![rusqlite::types::Value::Null; stmt.parameter_count()];
        let rows = stmt.query_map(rusqlite::params_from_iter(nulls), |r| r.get::<_, String>(3)).unwrap();
        rows.collect::<Result<Vec<_>, _>>().unwrap().join(" | ")
    };
    for sql in [&*PROBE_SQL, &*PROBE_VISIBLE_SQL, &*RECORD_POLL_PROBE_SQL] {
        assert_eq!(plan(sql), "SEARCH tasks USING INTEGER PRIMARY KEY (rowid=?)", "{sql}");
    }
    for sql in [&*GET_SQL, &*GET_VISIBLE_SQL, &*RECORD_POLL_SQL] {
        assert_eq!(plan(sql), "SEARCH tasks USING INDEX sqlite_autoindex_tasks_1 (id=?)", "{sql}");
    }
}
