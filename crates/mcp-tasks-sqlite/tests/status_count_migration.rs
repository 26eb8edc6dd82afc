//! Schema version 9 drops the trigger that moved a task's count in
//! `task_counts` when its status changed: the writer moves it with
//! statements of its own, because an `UPDATE` that fires a trigger runs with
//! a statement journal and copied every page it touched into the
//! sub-journal. A version-8 file keeps its counts through the upgrade, and
//! after it every way a status changes — finished, asked for input and
//! answered, a change that keeps the status, a lost guard, an unreadable
//! row failed in place, a deletion — leaves the counts equal to the table.

use std::collections::BTreeMap;
use std::path::Path;

use mcp_tasks_core::{TaskStatus, Timestamp};
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::support::{apply_one, at, change, claim_params, create, finish, new_task};
use mcp_tasks_store::{Change, Guard, GuardedUpdate, TaskStore, UpdateOutcome};
use rusqlite::Connection;

use crate::insert_triggers_migration::trigger_programs;

/// A completion's update, as far as triggers are concerned.
const STATUS_UPDATE: &str = "UPDATE tasks SET status = 'completed' WHERE id = 'x'";

/// Tasks per (status, tool), counted from the table itself.
fn counted_from_the_table(path: &Path) -> BTreeMap<(TaskStatus, String), u64> {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn.prepare("SELECT status, tool, count(*) FROM tasks GROUP BY status, tool").unwrap();
    stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))
        .unwrap()
        .map(|row| {
            let (status, tool, n) = row.unwrap();
            ((status.parse().unwrap(), tool), n as u64)
        })
        .collect()
}

async fn assert_counts_agree(store: &SqliteStore, path: &Path, after: &str) {
    let kept = store.count_by_status_and_tool().await.unwrap();
    assert_eq!(kept, counted_from_the_table(path), "after {after}");
}

fn status_only(now: Timestamp, status: TaskStatus) -> Change {
    Change { now, status: Some(status), ..Change::default() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_8_file_keeps_its_counts_and_every_status_change_counts_itself_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let (old_done, old_live) = {
        let store = SqliteStore::open(&path).unwrap();
        let done = create(&store, new_task("report", at(0))).await;
        finish(&store, &done.id, TaskStatus::Completed, at(1)).await;
        (done, create(&store, new_task("mail", at(2))).await)
    };
    // Back to version 8: the trigger as migration 4 wrote it.
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER tasks_count_status AFTER UPDATE OF status ON tasks WHEN NEW.status <> OLD.status BEGIN
                 UPDATE task_counts SET tasks = tasks - 1 WHERE tool = OLD.tool AND status = OLD.status;
                 INSERT INTO task_counts (tool, status, tasks) VALUES (NEW.tool, NEW.status, 1)
                     ON CONFLICT (tool, status) DO UPDATE SET tasks = tasks + 1;
             END;
             PRAGMA user_version = 8;",
        )
        .unwrap();
    assert_eq!(trigger_programs(&Connection::open(&path).unwrap(), STATUS_UPDATE), 1, "version 8: one trigger");

    let store = SqliteStore::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version, 10, "opening migrates to the latest version");
    assert_eq!(trigger_programs(&conn, STATUS_UPDATE), 0, "a status change fires no trigger");
    assert_counts_agree(&store, &path, "the upgrade").await;
    assert_eq!(store.count_by_status_and_tool().await.unwrap().values().sum::<u64>(), 2);

    // A task created before the upgrade finishes after it.
    finish(&store, &old_live.id, TaskStatus::Failed, at(3)).await;
    assert_counts_agree(&store, &path, "a task from before the upgrade failed").await;

    let asked = create(&store, new_task("report", at(4))).await;
    change(&store, &asked.id, status_only(at(5), TaskStatus::InputRequired)).await;
    assert_counts_agree(&store, &path, "a question").await;
    change(&store, &asked.id, status_only(at(6), TaskStatus::Working)).await;
    assert_counts_agree(&store, &path, "its answer").await;
    change(&store, &asked.id, status_only(at(7), TaskStatus::Working)).await;
    assert_counts_agree(&store, &path, "a change to the status it already had").await;
    change(&store, &asked.id, Change { now: at(8), status_message: Some(Some("halfway".into())), ..Change::default() })
        .await;
    assert_counts_agree(&store, &path, "a change that names no status").await;

    // A lost guard changes nothing, counts included.
    let stale = Guard { version: Some(1), ..Guard::id(asked.id.clone()) };
    let outcome = apply_one(&store, GuardedUpdate::change(stale, status_only(at(9), TaskStatus::Cancelled))).await;
    assert_eq!(outcome, UpdateOutcome::Lost);
    assert_counts_agree(&store, &path, "a lost guard").await;

    // The runtime's own path: an update that reads nothing back.
    let quiet = GuardedUpdate::change(Guard::id(asked.id.clone()), status_only(at(10), TaskStatus::Cancelled));
    assert!(store.apply_unread(vec![quiet]).await.unwrap()[0].applied());
    assert_counts_agree(&store, &path, "a cancellation applied unread").await;

    // An unreadable live row, failed in place by the claim that meets it.
    let damaged = create(&store, new_task("mail", at(11))).await;
    conn.execute("UPDATE tasks SET arguments = '{not json' WHERE id = ?1", [damaged.id.as_str()]).unwrap();
    assert!(store.claim(claim_params("exec", at(12), 10)).await.unwrap().is_empty());
    assert_counts_agree(&store, &path, "a quarantine").await;

    // A deletion still counts itself by trigger.
    let delete = GuardedUpdate::delete(Guard::id(old_done.id.clone()));
    assert!(apply_one(&store, delete).await.applied());
    assert_counts_agree(&store, &path, "a deletion").await;
    let report = |status| (status, "report".to_owned());
    let mail = |status| (status, "mail".to_owned());
    assert_eq!(
        store.count_by_status_and_tool().await.unwrap(),
        [(report(TaskStatus::Cancelled), 1), (mail(TaskStatus::Failed), 2)].into()
    );
}
