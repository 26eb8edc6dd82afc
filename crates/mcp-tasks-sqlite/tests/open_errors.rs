//! Opening the wrong thing gives a typed error naming what was wrong, and
//! never modifies a file that is not ours.

use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::StoreError;
use mcp_tasks_store::conformance::support::{at, create, get, new_task};
use rusqlite::Connection;

fn not_ours_reason(result: Result<SqliteStore, StoreError>, path: &std::path::Path) -> String {
    match result {
        Err(e @ StoreError::NotOurs { .. }) => {
            assert!(e.to_string().contains(&path.display().to_string()), "the error must name the file: {e}");
            let StoreError::NotOurs { reason, .. } = e else { unreachable!() };
            reason
        }
        other => panic!("{}: expected NotOurs, got {other:?}", path.display()),
    }
}

fn open_reason(result: Result<SqliteStore, StoreError>, path: &std::path::Path) -> String {
    match result {
        Err(e @ StoreError::Open { .. }) => {
            assert!(e.to_string().contains(&path.display().to_string()), "the error must name the path: {e}");
            let StoreError::Open { reason, .. } = e else { unreachable!() };
            reason
        }
        other => panic!("{}: expected Open, got {other:?}", path.display()),
    }
}

#[test]
fn a_text_file_is_not_ours_and_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    let text = "these are my notes, not a database\n".repeat(200);
    std::fs::write(&path, &text).unwrap();
    let reason = not_ours_reason(SqliteStore::open(&path), &path);
    assert!(reason.contains("not an SQLite database"), "{reason}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "the file must be untouched");
}

#[test]
fn another_applications_database_is_not_ours_and_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crm.db");
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('Ada');",
        )
        .unwrap();
    }
    let reason = not_ours_reason(SqliteStore::open(&path), &path);
    assert!(reason.contains("another application") && reason.contains("customers"), "{reason}");
    let conn = Connection::open(&path).unwrap();
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema WHERE type = 'table'", [], |r| r.get(0)).unwrap();
    assert_eq!(tables, 1, "no table may be added to a foreign database");
    let user_version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(user_version, 0);
}

#[test]
fn an_empty_database_of_another_application_id_is_not_ours() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    Connection::open(&path).unwrap().pragma_update(None, "application_id", 0x1234_5678).unwrap();
    let reason = not_ours_reason(SqliteStore::open(&path), &path);
    assert!(reason.contains("application_id") && reason.contains("0x12345678"), "{reason}");
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    drop(SqliteStore::open(&path).expect("fresh open"));
    Connection::open(&path).unwrap().pragma_update(None, "user_version", 99).unwrap();
    let reason = not_ours_reason(SqliteStore::open(&path), &path);
    assert!(reason.contains("99") && reason.contains("newer"), "{reason}");
}

#[test]
fn a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let reason = open_reason(SqliteStore::open(dir.path()), dir.path());
    assert!(reason.contains("directory"), "{reason}");
}

#[test]
fn an_unopenable_path_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("tasks.db");
    let reason = open_reason(SqliteStore::open(&missing), &missing);
    assert!(reason.contains("no-such-dir"), "{reason}");

    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let under_file = file.join("tasks.db");
    open_reason(SqliteStore::open(&under_file), &under_file);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_keeps_tasks_and_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).expect("fresh open");
    let task = create(&store, new_task("report", at(0))).await;
    drop(store);
    let store = SqliteStore::open(&path).expect("reopen");
    assert_eq!(get(&store, &task.id).await, task);
    drop(store);
    let conn = Connection::open(&path).unwrap();
    let app: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0)).unwrap();
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
    assert_eq!((app, version, mode.as_str()), (0x4D43_5054, 10, "wal"));
}
