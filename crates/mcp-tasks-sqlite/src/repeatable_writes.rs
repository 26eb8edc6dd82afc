//! The store's repeatable writes (creations, claims, guarded updates, poll
//! instants) share one savepoint when they are queued together. When one of
//! them fails, the run is rolled back and each runs again alone: each must
//! then give the outcome it would have given the first time, so none may
//! consume what it was given on its first run.

use mcp_tasks_core::{TaskId, TaskStatus};
use mcp_tasks_store::conformance::support::{at, claim_params, create, get, ids, new_task};
use mcp_tasks_store::{Change, Guard, GuardedUpdate, NewTask, StoreError, TaskStore, UpdateOutcome};

use crate::SqliteStore;
use crate::writer::held::{hold, queue};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_run_again_after_their_run_failed_keep_one_outcome_each() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("tasks.db")).unwrap();
    let first = create(&store, new_task("report", at(0))).await;
    let second = create(&store, new_task("report", at(1))).await;

    let (release, holder) = hold(&store.writer).await;
    let before = store.write_stats();

    // One batch, in this order: an update, a claim, poll instants, then a
    // creation that fails (the first task's id again) after the others wrote.
    let halfway = Change { now: at(5), status_message: Some(Some("halfway".into())), ..Change::default() };
    let mut update = store.apply_unread(vec![GuardedUpdate::change(Guard::read(&first), halfway)]);
    queue(&mut update).await;
    let mut claim = store.claim(claim_params("exec/1", at(10), 10));
    queue(&mut claim).await;
    let polls = [(second.id.clone(), at(20))];
    let mut poll = store.record_polls(&polls);
    queue(&mut poll).await;
    let mut duplicate = store.create(NewTask { id: first.id.clone(), ..new_task("report", at(2)) });
    queue(&mut duplicate).await;

    release.send(()).unwrap();
    holder.await.unwrap();
    assert_eq!(update.await.unwrap(), vec![UpdateOutcome::Applied(None)]);
    let claimed = claim.await.unwrap();
    poll.await.unwrap();
    let refused = duplicate.await;
    assert!(matches!(&refused, Err(StoreError::DuplicateId(id)) if *id == first.id), "{refused:?}");
    let after = store.write_stats();
    assert_eq!(after.commits - before.commits, 2, "the holder's batch, then one batch of the four");

    // Run again alone, each did what it did in the run, once.
    let mut claimed_ids: Vec<TaskId> = ids(&claimed);
    claimed_ids.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    let mut expected = vec![first.id.clone(), second.id.clone()];
    expected.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    assert_eq!(claimed_ids, expected, "the claim leased both tasks");
    let first_now = get(&store, &first.id).await;
    assert_eq!(first_now.status_message.as_deref(), Some("halfway"), "the update was kept");
    assert_eq!(first_now.version, first.version + 2, "updated once, claimed once");
    assert_eq!(first_now.lease.as_ref().map(|l| l.owner.as_str()), Some("exec/1"));
    let second_now = get(&store, &second.id).await;
    assert_eq!(second_now.version, second.version + 1, "claimed once");
    assert_eq!(second_now.last_polled_at, Some(at(20)), "the poll instant was kept");
    assert_eq!(first_now.status, TaskStatus::Working);
    assert_eq!(first_now.tool, first.tool, "the refused creation changed nothing");
}
