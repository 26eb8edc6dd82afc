//! The writer's count tally (`counts.rs`) within one group commit: writes
//! queued into one batch — creations of a new principal's and a new tool's
//! first tasks, their completion and deletion, a creation refused by its
//! quota, a duplicate that breaks the shared savepoint so the run is rolled
//! back and replayed — leave `task_counts` and `principal_usage` equal to
//! what the table holds, and a quota counts the batch's own creations.

use std::path::Path;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_store::conformance::support::{at, create, new_task};
use mcp_tasks_store::{Change, Created, Guard, GuardedUpdate, NewTask, Quota, StoreError, TaskStore, UpdateOutcome};
use rusqlite::Connection;

use crate::SqliteStore;
use crate::writer::held::{hold, queue};

/// Rows of (key, tasks, bytes).
type Counts = Vec<(String, i64, i64)>;

fn rows(path: &Path, sql: &str) -> Counts {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

/// (kept counts, counted from `tasks`) per tool and status, then per principal.
fn kept_and_counted(path: &Path) -> [(Counts, Counts); 2] {
    [
        (
            rows(path, "SELECT tool || '/' || status, tasks, 0 FROM task_counts WHERE tasks <> 0 ORDER BY 1"),
            rows(path, "SELECT tool || '/' || status, count(*), 0 FROM tasks GROUP BY tool, status ORDER BY 1"),
        ),
        (
            rows(
                path,
                "SELECT principal, tasks, argument_bytes FROM principal_usage \
                 WHERE tasks <> 0 OR argument_bytes <> 0 ORDER BY 1",
            ),
            rows(
                path,
                "SELECT coalesce(principal, ''), count(*), sum(length(CAST(arguments AS BLOB))) FROM tasks \
                 GROUP BY coalesce(principal, '') ORDER BY 1",
            ),
        ),
    ]
}

fn of(principal: &str, tool: &str, n: i64, quota: Option<Quota>) -> NewTask {
    NewTask { principal: Some(principal.to_owned()), quota, ..new_task(tool, at(n)) }
}

fn completed(now: i64) -> Change {
    Change {
        now: at(now),
        status: Some(TaskStatus::Completed),
        terminal_at: Some(at(now)),
        result: Some(serde_json::json!({ "content": [], "isError": false })),
        ..Change::default()
    }
}

/// One batch: `zed`'s first task of tool `fresh` is created, completed and
/// deleted; `amy` creates three tasks under a quota of two; and a duplicate
/// creation fails after all of them wrote, so the run replays alone.
async fn one_batch(store: &SqliteStore) -> Vec<Result<Created, StoreError>> {
    let old = create(store, of("amy", "report", 0, None)).await;
    let two = Some(Quota { max_tasks: Some(2), max_argument_bytes: None });
    let fleeting = of("zed", "fresh", 1, None);
    let id = fleeting.id.clone();
    let (release, holder) = hold(&store.writer).await;

    let mut first = store.create(fleeting);
    queue(&mut first).await;
    let mut done = store.apply_unread(vec![GuardedUpdate::change(Guard::id(id.clone()), completed(2))]);
    queue(&mut done).await;
    let mut gone = store.apply_unread(vec![GuardedUpdate::delete(Guard::id(id.clone()))]);
    queue(&mut gone).await;
    let mut creations = Vec::new();
    for n in 3..6 {
        let mut job = store.create(of("amy", "report", n, two));
        queue(&mut job).await;
        creations.push(job);
    }
    let mut duplicate = store.create(NewTask { id: old.id.clone(), ..of("amy", "report", 7, None) });
    queue(&mut duplicate).await;

    release.send(()).unwrap();
    holder.await.unwrap();
    assert!(first.await.unwrap().created);
    assert_eq!(done.await.unwrap(), vec![UpdateOutcome::Applied(None)]);
    assert_eq!(gone.await.unwrap(), vec![UpdateOutcome::Applied(None)]);
    assert!(matches!(duplicate.await, Err(StoreError::DuplicateId(_))));
    let mut results = Vec::new();
    for job in creations {
        results.push(job.await);
    }
    results
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_batch_of_every_kind_of_count_change_leaves_the_counts_equal_to_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).unwrap();
    let before = store.write_stats().commits;
    let results = one_batch(&store).await;
    assert_eq!(store.write_stats().commits - before, 3, "amy's first task, the holder's batch, one batch of the rest");

    // amy held one task: the quota of two admits one more, counting the
    // batch's own creation that no table held yet.
    assert!(results[0].as_ref().is_ok_and(|c| c.created), "{:?}", results[0]);
    for refused in &results[1..] {
        assert!(matches!(refused, Err(StoreError::QuotaExceeded { .. })), "{refused:?}");
    }
    for (kept, counted) in kept_and_counted(&path) {
        assert_eq!(kept, counted);
    }
    assert_eq!(kept_and_counted(&path)[0].0, vec![("report/working".to_owned(), 2, 0)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletion_triggers_that_update_instead_of_adding_lose_a_count_the_batch_had_not_written() {
    // The same batch under the deletion triggers of schema version 9, which
    // `UPDATE` a row that may not exist yet: the counts go wrong. Version
    // 10's triggers (the test above) add a delta instead.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).unwrap();
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TRIGGER tasks_usage_delete;
             CREATE TRIGGER tasks_usage_delete AFTER DELETE ON tasks BEGIN
                 UPDATE principal_usage SET tasks = tasks - 1,
                     argument_bytes = argument_bytes - length(CAST(OLD.arguments AS BLOB))
                   WHERE principal = coalesce(OLD.principal, '');
             END;
             DROP TRIGGER tasks_count_delete;
             CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks BEGIN
                 UPDATE task_counts SET tasks = tasks - 1 WHERE tool = OLD.tool AND status = OLD.status;
             END;",
        )
        .unwrap();
    one_batch(&store).await;
    let [tasks, usage] = kept_and_counted(&path);
    assert_ne!(tasks.0, tasks.1, "the deleted task's completion stays counted");
    assert_ne!(usage.0, usage.1, "the deleted task stays in zed's usage");
}
