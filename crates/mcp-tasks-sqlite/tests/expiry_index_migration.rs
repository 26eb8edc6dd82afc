//! Schema version 6 spells the expiry index's condition as "not live": a
//! version-5 file is migrated, its expired tasks are still found through
//! the index (and live ones not), and a write that changes a status builds
//! no temporary table for the index.

use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::support::{at, create, finish, new_task};
use mcp_tasks_store::{SweepQuery, TaskStore};
use rusqlite::Connection;

/// How many temporary tables (`OpenEphemeral`) `sql` opens when run.
pub(crate) fn temporary_tables(conn: &Connection, sql: &str) -> usize {
    let mut stmt = conn.prepare(&format!("EXPLAIN {sql}")).unwrap();
    let ops: Vec<String> = stmt.query_map([], |r| r.get::<_, String>(1)).unwrap().map(Result::unwrap).collect();
    ops.iter().filter(|op| *op == "OpenEphemeral").count()
}

/// A completion as the executor writes it (a status change).
pub(crate) const COMPLETE: &str = "UPDATE tasks SET status = 'completed', terminal_at = 1, expires_at = 2, lease_owner = NULL, \
     lease_expires_at = NULL, version = version + 1 WHERE id = 'x' AND status IN ('working', 'input_required')";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_5_file_is_migrated_and_still_sweeps_expired_tasks_by_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let (done, live) = {
        let store = SqliteStore::open(&path).unwrap();
        let done = create(&store, new_task("report", at(0))).await;
        finish(&store, &done.id, TaskStatus::Completed, at(1)).await;
        (done, create(&store, new_task("report", at(0))).await)
    };
    // Back to version 5: the index as it was spelled then.
    let old = Connection::open(&path).unwrap();
    old.execute_batch(
        "DROP INDEX tasks_expiry; \
         CREATE INDEX tasks_expiry ON tasks (expires_at, id) \
             WHERE status IN ('completed', 'failed', 'cancelled') AND expires_at IS NOT NULL; \
         PRAGMA user_version = 5;",
    )
    .unwrap();
    assert_eq!(temporary_tables(&old, COMPLETE), 2, "version 5: the index condition, old row and new");
    drop(old);

    let store = SqliteStore::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert!(version >= 6, "opening migrates to version 6 at least, got {version}");
    assert_eq!(temporary_tables(&conn, COMPLETE), 0, "nothing builds a temporary table (the CHECK: version 7)");

    let later = at(1).plus(Duration::from_secs(7200));
    let expired = store.sweep_candidates(SweepQuery::Expired { now: later, limit: 10 }).await.unwrap();
    let ids: Vec<_> = expired.iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids, std::slice::from_ref(&done.id), "the finished task is found, the live one ({}) is not", live.id);
    let plan: String = conn
        .query_row(
            "EXPLAIN QUERY PLAN SELECT id FROM tasks \
             WHERE status NOT IN ('working', 'input_required') AND expires_at IS NOT NULL AND expires_at <= 5 \
             ORDER BY expires_at, id LIMIT 10",
            [],
            |r| r.get(3),
        )
        .unwrap();
    assert!(plan.contains("tasks_expiry"), "the sweep reads the index: {plan}");
}
