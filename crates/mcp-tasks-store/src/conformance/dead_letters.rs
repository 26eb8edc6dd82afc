//! Dead letters: written with the final change, listed, requeued, purged.

use mcp_tasks_core::{TaskError, TaskId, TaskStatus, Timestamp};
use serde_json::json;

use super::support::*;
use crate::error::StoreError;
use crate::params::*;
use crate::store::TaskStore;

fn poison(now: Timestamp, reason: &str) -> Change {
    let error = TaskError::internal(format!("gave up: {reason}"));
    Change {
        now,
        status: Some(TaskStatus::Failed),
        terminal_at: Some(now),
        lease: Some(None),
        error: Some(error.clone()),
        dead_letter: Some(NewDeadLetter { reason: reason.to_owned(), error, dead_at: now }),
        ..Change::default()
    }
}

async fn dead_task(store: &dyn TaskStore, tool: &str, dead_at: i64) -> TaskId {
    let t = create(store, new_task(tool, at(0))).await;
    change(store, &t.id, poison(at(dead_at), "poison: attempts exhausted")).await;
    t.id
}

async fn letters(store: &dyn TaskStore, query: DeadLetterQuery) -> Vec<TaskId> {
    store.list_dead_letters(query).await.expect("list_dead_letters").into_iter().map(|d| d.task_id).collect()
}

/// The dead letter is written in the same step as the change that carries
/// it, from the changed row; a change that loses writes none.
pub async fn dead_letter_is_written_with_its_change(store: &dyn TaskStore) {
    let new = NewTask { principal: Some("alice".into()), arguments: json!({ "n": 7 }), ..new_task("flaky", at(0)) };
    let t = create(store, new).await;
    let final_change = Change { attempt: Some(3), ..poison(at(40), "poison: attempts exhausted") };
    let failed = change(store, &t.id, final_change).await;
    assert_eq!(failed.status, TaskStatus::Failed);
    let letter = store.get_dead_letter(&t.id).await.expect("get_dead_letter").expect("a dead letter was written");
    assert_eq!(
        letter,
        DeadLetter {
            task_id: t.id.clone(),
            tool: "flaky".into(),
            arguments: json!({ "n": 7 }),
            principal: Some("alice".into()),
            attempts: 3,
            reason: "poison: attempts exhausted".into(),
            error: TaskError::internal("gave up: poison: attempts exhausted"),
            dead_at: at(40),
            requeued_as: None,
        }
    );

    let other = create(store, new_task("flaky", at(0))).await;
    change(store, &other.id, Change { now: at(1), status_message: Some(Some("moved on".into())), ..Change::default() })
        .await;
    let stale = apply_one(store, GuardedUpdate::change(Guard::read(&other), poison(at(41), "stale"))).await;
    assert_eq!(stale, UpdateOutcome::Lost);
    assert_eq!(
        store.get_dead_letter(&other.id).await.expect("get_dead_letter"),
        None,
        "a lost change writes no dead letter"
    );
    assert_eq!(store.get_dead_letter(&TaskId::random()).await.expect("get_dead_letter"), None);
}

/// Listing (filters, newest first, limit), requeue (fresh task, marked once,
/// typed errors, atomic), survival past the task row's expiry, and purge.
pub async fn dead_letter_lifecycle(store: &dyn TaskStore) {
    let alpha10 = dead_task(store, "alpha", 10).await;
    let beta30 = dead_task(store, "beta", 30).await;
    let alpha20 = dead_task(store, "alpha", 20).await;
    let all = DeadLetterQuery { include_requeued: true, ..DeadLetterQuery::default() };
    assert_eq!(letters(store, all.clone()).await, vec![beta30.clone(), alpha20.clone(), alpha10.clone()], "newest first");
    let alphas = DeadLetterQuery { tool: Some("alpha".into()), ..DeadLetterQuery::default() };
    assert_eq!(letters(store, alphas).await, vec![alpha20.clone(), alpha10.clone()]);
    assert_eq!(letters(store, DeadLetterQuery { limit: 1, ..DeadLetterQuery::default() }).await, vec![beta30.clone()]);

    let letter = store.get_dead_letter(&alpha10).await.expect("get").expect("letter");
    let fresh = NewTask { arguments: letter.arguments.clone(), max_attempts: 5, ..new_task("alpha", at(100)) };
    let fresh_id = fresh.id.clone();
    let requeued = store.requeue_dead_letter(&alpha10, fresh).await.expect("requeue");
    assert_eq!(requeued.id, fresh_id);
    assert_eq!(
        (requeued.status, requeued.attempt, requeued.max_attempts),
        (TaskStatus::Working, 1, 5),
        "a fresh attempt budget"
    );
    assert_eq!(get(store, &fresh_id).await, requeued, "the requeued task is stored");
    assert_eq!(store.get_dead_letter(&alpha10).await.expect("get").expect("letter").requeued_as, Some(fresh_id.clone()));
    assert_eq!(
        letters(store, DeadLetterQuery::default()).await,
        vec![beta30.clone(), alpha20.clone()],
        "requeued letters are hidden unless asked for"
    );
    match store.requeue_dead_letter(&alpha10, new_task("alpha", at(101))).await {
        Err(StoreError::AlreadyRequeued { task, requeued_as }) => {
            assert_eq!((task, requeued_as), (alpha10.clone(), fresh_id.clone()))
        }
        other => panic!("a second requeue must fail with AlreadyRequeued, got {other:?}"),
    }
    let nobody = TaskId::random();
    match store.requeue_dead_letter(&nobody, new_task("alpha", at(101))).await {
        Err(StoreError::DeadLetterNotFound(id)) => assert_eq!(id, nobody),
        other => {
            panic!("requeue of an unknown letter must fail with DeadLetterNotFound, got {other:?}")
        }
    }
    let clashing = NewTask { id: fresh_id.clone(), ..new_task("alpha", at(102)) };
    match store.requeue_dead_letter(&alpha20, clashing).await {
        Err(StoreError::DuplicateId(id)) => assert_eq!(id, fresh_id),
        other => panic!("requeue into a used id must fail with DuplicateId, got {other:?}"),
    }
    assert_eq!(
        store.get_dead_letter(&alpha20).await.expect("get").expect("letter").requeued_as,
        None,
        "a failed requeue must not mark the letter"
    );

    let beta_row = get(store, &beta30).await;
    assert_eq!(apply_one(store, GuardedUpdate::delete(Guard::read(&beta_row))).await, UpdateOutcome::Applied(None));
    assert!(store.get_dead_letter(&beta30).await.expect("get").is_some(), "a dead letter outlives its task row");

    let purge = |q: PurgeQuery| async move { store.purge_dead_letters(q).await.expect("purge") };
    assert_eq!(purge(PurgeQuery { tool: Some("beta".into()), ..PurgeQuery::default() }).await, 1);
    assert_eq!(
        purge(PurgeQuery { dead_before: Some(at(10)), ..PurgeQuery::default() }).await,
        0,
        "dead_before is exclusive"
    );
    assert_eq!(purge(PurgeQuery { dead_before: Some(at(11)), ..PurgeQuery::default() }).await, 1);
    assert_eq!(letters(store, all.clone()).await, vec![alpha20.clone()]);
    assert_eq!(purge(PurgeQuery { task_ids: Some(vec![TaskId::random()]), ..PurgeQuery::default() }).await, 0);
    assert_eq!(
        purge(PurgeQuery { task_ids: Some(vec![alpha20.clone()]), tool: Some("beta".into()), ..PurgeQuery::default() })
            .await,
        0,
        "filters combine"
    );
    assert_eq!(purge(PurgeQuery { task_ids: Some(vec![alpha20]), ..PurgeQuery::default() }).await, 1);
    assert!(letters(store, all).await.is_empty());
    assert_eq!(purge(PurgeQuery::default()).await, 0);
    assert_eq!(get(store, &fresh_id).await.status, TaskStatus::Working, "purging letters leaves tasks alone");
}
