//! Schema version 7 spells the status `CHECK` as five comparisons instead of
//! an `IN` list, for which SQLite built a temporary table on every creation
//! and every status change. A version-6 file is migrated in place: its tasks
//! are unchanged, the constraint still refuses an unknown status, and
//! neither write builds a temporary table any more. A file whose table
//! holds neither spelling is refused, and left as it was.

use mcp_tasks_core::TaskStatus;
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::StoreError;
use mcp_tasks_store::conformance::support::{at, create, finish, get, new_task};
use rusqlite::{Connection, params};

use crate::expiry_index_migration::{COMPLETE, temporary_tables};

const AS_LIST: &str = "CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled'))";
const AS_COMPARISONS: &str = "CHECK (status = 'working' OR status = 'input_required' \
     OR status = 'completed' OR status = 'failed' OR status = 'cancelled')";

/// A creation's insert, as far as the constraints are concerned.
const INSERT: &str = "INSERT INTO tasks (id, status) VALUES ('y', 'working')";

fn user_version(conn: &Connection) -> i64 {
    conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap()
}

/// Rewrites the tasks table's text the way migration 7 does, `from` → `to`,
/// and sets the file's schema version.
fn rewrite_check(conn: &Connection, from: &str, to: &str, version: i64) {
    let schema_version: i64 = conn.pragma_query_value(None, "schema_version", |r| r.get(0)).unwrap();
    conn.pragma_update(None, "writable_schema", true).unwrap();
    conn.execute("UPDATE sqlite_schema SET sql = replace(sql, ?1, ?2) WHERE name = 'tasks'", params![from, to]).unwrap();
    conn.pragma_update(None, "schema_version", schema_version + 1).unwrap();
    conn.pragma_update(None, "writable_schema", false).unwrap();
    conn.pragma_update(None, "user_version", version).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_6_file_is_migrated_and_its_status_check_builds_no_temporary_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let (done, live) = {
        let store = SqliteStore::open(&path).unwrap();
        let done = create(&store, new_task("report", at(0))).await;
        let done = finish(&store, &done.id, TaskStatus::Completed, at(1)).await;
        (done, create(&store, new_task("report", at(0))).await)
    };
    // Back to version 6: the CHECK as it was spelled then.
    rewrite_check(&Connection::open(&path).unwrap(), AS_COMPARISONS, AS_LIST, 6);
    // A connection opened since parses the text as it now is.
    let old = Connection::open(&path).unwrap();
    assert_eq!(temporary_tables(&old, INSERT), 1, "version 6: a creation builds one for the CHECK");
    assert_eq!(temporary_tables(&old, COMPLETE), 1, "version 6: so does a status change");
    drop(old);

    let store = SqliteStore::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    assert_eq!(user_version(&conn), 10, "opening migrates to the latest version");
    assert_eq!(temporary_tables(&conn, INSERT), 0, "a creation builds no temporary table");
    assert_eq!(temporary_tables(&conn, COMPLETE), 0, "nor does a status change");
    let table: String = conn.query_row("SELECT sql FROM sqlite_schema WHERE name = 'tasks'", [], |r| r.get(0)).unwrap();
    assert!(table.contains(AS_COMPARISONS) && !table.contains(AS_LIST), "{table}");
    assert_eq!(get(&store, &done.id).await, done, "the finished task is unchanged");
    assert_eq!(get(&store, &live.id).await, live, "the live task is unchanged");
    let refused = conn.execute("UPDATE tasks SET status = 'paused' WHERE id = ?1", [live.id.as_str()]).unwrap_err();
    assert!(refused.to_string().contains("CHECK constraint failed"), "{refused}");
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    // The store's own connections parse the new text too: every status still writes.
    finish(&store, &live.id, TaskStatus::Cancelled, at(2)).await;
}

#[test]
fn a_version_6_file_holding_neither_spelling_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    drop(SqliteStore::open(&path).unwrap());
    // Someone else's edit: neither version 6's CHECK nor version 7's.
    rewrite_check(&Connection::open(&path).unwrap(), AS_COMPARISONS, "CHECK (status <> '')", 6);

    let error = SqliteStore::open(&path).expect_err("the migration is refused");
    let StoreError::Open { reason, .. } = &error else { panic!("{error}") };
    assert!(reason.contains("schema version 7") && reason.contains("holds neither"), "{reason}");
    let conn = Connection::open(&path).unwrap();
    assert_eq!(user_version(&conn), 6, "the file stays at version 6");
    let writable: i64 = conn.pragma_query_value(None, "writable_schema", |r| r.get(0)).unwrap();
    assert_eq!(writable, 0);
}
