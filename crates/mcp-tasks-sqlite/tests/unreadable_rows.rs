//! One unreadable row (its stored JSON damaged behind the store's back, by
//! raw SQL on the real file) among good ones: the claim and the sweeps
//! return the good ones and quarantine the bad one, failed in place with an
//! error saying the stored task could not be read, instead of failing as a
//! whole (which would stop all execution, or the server's start).

use std::path::Path;

use mcp_tasks_core::{TaskError, TaskId, TaskStatus};
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::support::{at, claim_params, create, finish, ids, new_task};
use mcp_tasks_store::{SweepQuery, TaskStore};
use rusqlite::{Connection, OptionalExtension};

fn damage(path: &Path, id: &TaskId) {
    let changed = Connection::open(path)
        .unwrap()
        .execute("UPDATE tasks SET arguments = '{not json' WHERE id = ?1", [id.as_str()])
        .unwrap();
    assert_eq!(changed, 1);
}

/// (status, error, lease owner, run_at, arguments) of a row, read raw.
fn raw(path: &Path, id: &TaskId) -> (String, Option<String>, Option<String>, Option<i64>, String) {
    Connection::open(path)
        .unwrap()
        .query_row("SELECT status, error, lease_owner, run_at, arguments FROM tasks WHERE id = ?1", [id.as_str()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .optional()
        .unwrap()
        .expect("the row is kept")
}

fn assert_quarantined(path: &Path, id: &TaskId) {
    let (status, error, owner, run_at, arguments) = raw(path, id);
    assert_eq!(status, "failed");
    assert_eq!((owner, run_at), (None, None), "no lease, never due again");
    assert_eq!(arguments, "{not json", "the bad column is left as it was, for inspection");
    let error: TaskError = serde_json::from_str(&error.expect("an error is written")).unwrap();
    assert_eq!(error.code, -32603);
    assert!(
        error.message.contains("stored task could not be read") && error.message.contains("arguments"),
        "{}",
        error.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_hands_out_the_good_rows_and_fails_the_unreadable_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).unwrap();
    let first = create(&store, new_task("report", at(0))).await;
    let bad = create(&store, new_task("report", at(1))).await;
    let last = create(&store, new_task("report", at(2))).await;
    damage(&path, &bad.id);

    let claimed = store.claim(claim_params("exec", at(10), 10)).await.expect("the claim succeeds");
    assert_eq!(ids(&claimed), vec![first.id.clone(), last.id.clone()]);
    assert_quarantined(&path, &bad.id);

    // It never comes back.
    assert!(store.claim(claim_params("exec", at(20), 10)).await.unwrap().is_empty());
    let listed = store.list(Default::default()).await.unwrap();
    let shown = listed.iter().find(|r| r.id == bad.id).expect("operators still see it");
    assert_eq!(shown.status, TaskStatus::Failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweeps_hand_out_the_good_rows_and_fail_the_unreadable_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).unwrap();
    let good = create(&store, new_task("report", at(0))).await;
    let bad = create(&store, new_task("report", at(1))).await;
    // Both leased by an executor that has died (what start-up triage sweeps).
    assert_eq!(store.claim(claim_params("dead", at(5), 10)).await.unwrap().len(), 2);
    damage(&path, &bad.id);

    let leased = store.sweep_candidates(SweepQuery::Leased { before: None, limit: 10 }).await.expect("the sweep succeeds");
    assert_eq!(ids(&leased), vec![good.id.clone()]);
    assert_quarantined(&path, &bad.id);

    let past = store.sweep_candidates(SweepQuery::PastDeadline { now: at(100_000), limit: 10 }).await.unwrap();
    assert_eq!(ids(&past), vec![good.id.clone()], "a quarantined row is terminal: no sweep of live rows sees it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_terminal_row_is_skipped_and_left_as_it_is_until_it_expires() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).unwrap();
    let good = create(&store, new_task("report", at(0))).await;
    let bad = create(&store, new_task("report", at(1))).await;
    finish(&store, &good.id, TaskStatus::Completed, at(2)).await;
    finish(&store, &bad.id, TaskStatus::Completed, at(2)).await;
    damage(&path, &bad.id);
    let before = raw(&path, &bad.id);

    // Other sweeps and claims pass it by: terminal is final, not rewritten.
    assert!(store.claim(claim_params("exec", at(3), 10)).await.unwrap().is_empty());
    let leased = store.sweep_candidates(SweepQuery::Leased { before: None, limit: 10 }).await.unwrap();
    assert!(leased.is_empty());
    assert_eq!(raw(&path, &bad.id), before);

    // Before its retention runs out the expiry sweep finds neither.
    let expires_at: i64 = Connection::open(&path)
        .unwrap()
        .query_row("SELECT expires_at FROM tasks WHERE id = ?1", [bad.id.as_str()], |r| r.get(0))
        .unwrap();
    let early = mcp_tasks_core::Timestamp::from_millis(expires_at - 1);
    assert!(store.sweep_candidates(SweepQuery::Expired { now: early, limit: 10 }).await.unwrap().is_empty());
    assert_eq!(raw(&path, &bad.id), before);

    let expired =
        store.sweep_candidates(SweepQuery::Expired { now: at(100_000), limit: 10 }).await.expect("the sweep succeeds");
    assert_eq!(ids(&expired), vec![good.id.clone()]);
    let gone: Option<String> = Connection::open(&path)
        .unwrap()
        .query_row("SELECT id FROM tasks WHERE id = ?1", [bad.id.as_str()], |r| r.get(0))
        .optional()
        .unwrap();
    assert_eq!(gone, None, "it was due for deletion: deleted, not returned");
}

/// Unreadable expired rows at the head of the expiry order must not keep
/// the readable ones behind them from ever being swept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_expired_rows_do_not_starve_the_expiry_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path).unwrap();
    let mut bad = Vec::new();
    for i in 0..5 {
        let task = create(&store, new_task("report", at(i))).await;
        finish(&store, &task.id, TaskStatus::Completed, at(10)).await;
        damage(&path, &task.id);
        bad.push(task.id);
    }
    let good = create(&store, new_task("report", at(20))).await;
    finish(&store, &good.id, TaskStatus::Completed, at(30)).await;

    let mut seen = Vec::new();
    for _ in 0..3 {
        let batch = store.sweep_candidates(SweepQuery::Expired { now: at(100_000), limit: 5 }).await.unwrap();
        seen.extend(ids(&batch));
        if !seen.is_empty() {
            break;
        }
    }
    assert_eq!(seen, vec![good.id.clone()], "the readable task is reached once the unreadable ones are gone");
}
