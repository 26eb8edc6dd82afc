//! [`TaskStore::apply_unread`]: the same guarded updates as `apply`, with
//! no row in the answer — a backend that skips reading the row back must
//! still write exactly what `apply` writes, and a lost race nothing.

use mcp_tasks_core::{TaskError, TaskStatus};
use serde_json::json;

use super::support::*;
use crate::params::*;
use crate::store::TaskStore;

async fn apply_unread_one(store: &dyn TaskStore, update: GuardedUpdate) -> UpdateOutcome {
    let mut outcomes = store.apply_unread(vec![update]).await.unwrap_or_else(|e| panic!("apply_unread: {e}"));
    assert_eq!(outcomes.len(), 1, "apply_unread returned {} outcomes for one update", outcomes.len());
    outcomes.remove(0)
}

/// A completion as the executor writes it: guarded on its lease and
/// attempt, ending the attempt.
fn completion(holder: &str) -> (Guard, Change) {
    let guard =
        Guard { lease_owner: Some(holder.to_owned()), attempt: Some(1), cancel_requested: Some(false), ..Guard::default() };
    let change = Change {
        now: at(20),
        status: Some(TaskStatus::Completed),
        status_message: Some(Some("completed".into())),
        terminal_at: Some(at(20)),
        expires_at: Some(Some(at(3620))),
        lease: Some(None),
        result: Some(json!({"content": [{"type": "text", "text": "done"}], "isError": false})),
        attempt_end: Some(AttemptEnd {
            attempt: 1,
            started_at: Some(at(10)),
            owner: Some(holder.to_owned()),
            outcome: AttemptOutcome::Completed,
            class: None,
            error: None,
            message: None,
        }),
        ..Change::default()
    };
    (guard, change)
}

/// Two twin tasks, each claimed: one completed through `apply`, the other
/// through `apply_unread`, end the same (row and attempt history); the
/// unread one answers `Applied(None)`. A dead letter is written too.
pub async fn apply_unread_writes_what_apply_writes(store: &dyn TaskStore) {
    let a = create(store, new_task("report", at(0))).await;
    let b = create(store, NewTask { created_at: at(0), ..new_task("report", at(0)) }).await;
    let claimed = store.claim(claim_params("exec/1", at(10), 2)).await.expect("claim");
    assert_eq!(claimed.len(), 2);
    let (guard, change) = completion("exec/1");
    let read = apply_one(store, GuardedUpdate::change(Guard { id: a.id.clone(), ..guard.clone() }, change.clone())).await;
    let UpdateOutcome::Applied(Some(mut after_a)) = read else { panic!("apply: expected Applied(Some), got {read:?}") };
    let unread = apply_unread_one(store, GuardedUpdate::change(Guard { id: b.id.clone(), ..guard }, change)).await;
    assert_eq!(unread, UpdateOutcome::Applied(None), "apply_unread answers no row");
    let after_b = get(store, &b.id).await;
    assert_eq!(after_a, get(store, &a.id).await, "apply answered the stored row");
    after_a.id = b.id.clone();
    assert_eq!(after_b, after_a, "the unread completion wrote what apply wrote");
    let (mut history_a, history_b) =
        (store.attempts(&a.id).await.expect("attempts"), store.attempts(&b.id).await.expect("attempts"));
    for h in &mut history_a {
        h.task_id = b.id.clone();
    }
    assert_eq!(history_b, history_a, "the attempt is recorded the same way");
    assert_eq!(history_b.len(), 1);

    let c = create(store, new_task("flaky", at(0))).await;
    let error = TaskError::internal("gave up");
    let poison = Change {
        now: at(30),
        status: Some(TaskStatus::Failed),
        terminal_at: Some(at(30)),
        error: Some(error.clone()),
        dead_letter: Some(NewDeadLetter { reason: "poison".into(), error, dead_at: at(30) }),
        ..Change::default()
    };
    let outcome = apply_unread_one(store, GuardedUpdate::change(Guard::id(c.id.clone()), poison)).await;
    assert_eq!(outcome, UpdateOutcome::Applied(None));
    let letter = store.get_dead_letter(&c.id).await.expect("get_dead_letter").expect("the dead letter was written");
    assert_eq!((letter.tool.as_str(), letter.arguments), ("flaky", json!({"for": "flaky"})));
}

/// A completion whose task was cancelled or taken over between the claim
/// and the write changes nothing and records no attempt; an unknown task
/// is not found.
pub async fn apply_unread_loses_races_like_apply(store: &dyn TaskStore) {
    let t = create(store, new_task("report", at(0))).await;
    store.claim(claim_params("exec/1", at(10), 1)).await.expect("claim");
    // Taken over: triage requeued it and another executor claimed it.
    change(store, &t.id, Change { now: at(15), lease: Some(None), ..Change::default() }).await;
    store.claim(claim_params("exec/2", at(16), 1)).await.expect("claim again");
    let taken = get(store, &t.id).await;
    let (guard, change_) = completion("exec/1");
    let late = GuardedUpdate::change(Guard { id: t.id.clone(), ..guard.clone() }, change_.clone());
    assert_eq!(apply_unread_one(store, late).await, UpdateOutcome::Lost, "a stale holder must lose");
    assert_eq!(get(store, &t.id).await, taken, "a lost race changed the row");
    assert!(store.attempts(&t.id).await.expect("attempts").is_empty(), "a lost race recorded an attempt");

    let cancelled = finish(store, &t.id, TaskStatus::Cancelled, at(17)).await;
    let (guard2, change2) = completion("exec/2");
    let after_cancel = GuardedUpdate::change(Guard { id: t.id.clone(), ..guard2 }, change2);
    assert_eq!(apply_unread_one(store, after_cancel).await, UpdateOutcome::Lost, "a terminal row never changes");
    assert_eq!(get(store, &t.id).await, cancelled);
    assert!(store.attempts(&t.id).await.expect("attempts").is_empty());

    let missing = GuardedUpdate::change(Guard { id: mcp_tasks_core::TaskId::random(), ..guard }, change_);
    assert_eq!(apply_unread_one(store, missing).await, UpdateOutcome::NotFound);
}
