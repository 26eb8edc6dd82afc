//! Schema version 8 drops the two triggers that counted a creation (in
//! `principal_usage` and `task_counts`): the creation counts itself with
//! statements of its own, because an `INSERT` that fires a trigger runs
//! with a statement journal and copied every page it touched into the
//! sub-journal. A version-7 file keeps its counts through the upgrade and
//! counts each later creation once.

use mcp_tasks_core::TaskStatus;
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::support::{at, create, finish, new_task};
use mcp_tasks_store::{NewTask, Quota, QuotaResource, StoreError, TaskStore};
use rusqlite::Connection;

/// A creation's insert, as far as triggers are concerned.
const INSERT: &str = "INSERT INTO tasks (id, tool, status) VALUES ('y', 'report', 'working')";

/// Trigger programs a statement runs (`Program` opcodes in its bytecode).
pub(crate) fn trigger_programs(conn: &Connection, sql: &str) -> usize {
    let mut stmt = conn.prepare(&format!("EXPLAIN {sql}")).unwrap();
    let ops: Vec<String> = stmt.query_map([], |r| r.get::<_, String>(1)).unwrap().map(Result::unwrap).collect();
    ops.iter().filter(|op| *op == "Program").count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_7_file_keeps_its_counts_and_a_creation_fires_no_trigger() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let alice = |n| NewTask { principal: Some("alice".into()), ..new_task("report", at(n)) };
    {
        let store = SqliteStore::open(&path).unwrap();
        create(&store, alice(0)).await;
        let done = create(&store, new_task("report", at(1))).await;
        finish(&store, &done.id, TaskStatus::Completed, at(2)).await;
    }
    // Back to version 7: the two triggers as migrations 2 and 4 wrote them.
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER tasks_usage_insert AFTER INSERT ON tasks BEGIN
                 INSERT INTO principal_usage (principal, tasks, argument_bytes)
                     VALUES (coalesce(NEW.principal, ''), 1, length(CAST(NEW.arguments AS BLOB)))
                     ON CONFLICT (principal) DO UPDATE SET
                         tasks = tasks + 1, argument_bytes = argument_bytes + excluded.argument_bytes;
             END;
             CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks BEGIN
                 INSERT INTO task_counts (tool, status, tasks) VALUES (NEW.tool, NEW.status, 1)
                     ON CONFLICT (tool, status) DO UPDATE SET tasks = tasks + 1;
             END;
             PRAGMA user_version = 7;",
        )
        .unwrap();
    assert_eq!(trigger_programs(&Connection::open(&path).unwrap(), INSERT), 2, "version 7: two triggers");

    let store = SqliteStore::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version, 10, "opening migrates to the latest version");
    assert_eq!(trigger_programs(&conn, INSERT), 0, "a creation fires no trigger");

    // Counted once each, before the upgrade and after it.
    create(&store, alice(3)).await;
    create(&store, new_task("report", at(4))).await;
    let counts = store.count_by_status_and_tool().await.unwrap();
    let report = |status| (status, "report".to_owned());
    assert_eq!(counts, [(report(TaskStatus::Working), 3), (report(TaskStatus::Completed), 1)].into());
    let usage: (i64, i64) = conn
        .query_row("SELECT tasks, argument_bytes FROM principal_usage WHERE principal = 'alice'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let bytes: i64 = conn
        .query_row("SELECT sum(length(CAST(arguments AS BLOB))) FROM tasks WHERE principal = 'alice'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(usage, (2, bytes), "alice's tasks and their argument bytes");
    let quota = Quota { max_tasks: Some(2), max_argument_bytes: None };
    match store.create(NewTask { quota: Some(quota), ..alice(5) }).await {
        Err(StoreError::QuotaExceeded { resource: QuotaResource::Tasks, used: 2, .. }) => {}
        other => panic!("alice holds two tasks: {other:?}"),
    }
}
