//! The attempt history: written by the guarded update that ends an attempt,
//! in the same atomic step, and deleted with its task.

use mcp_tasks_core::{FailureClass, TaskError, TaskId, TaskStatus};

use super::support::*;
use crate::params::*;
use crate::store::TaskStore;

/// The end of `attempt`, failed with `class` (or completed when `None`).
fn end(attempt: u32, class: Option<FailureClass>) -> AttemptEnd {
    AttemptEnd {
        attempt,
        started_at: Some(at(i64::from(attempt) * 10)),
        owner: Some(format!("exec/{attempt}")),
        outcome: if class.is_some() { AttemptOutcome::Failed } else { AttemptOutcome::Completed },
        class,
        error: class.map(|c| TaskError::internal(format!("{c} trouble"))),
        message: None,
    }
}

/// A transient failure retried, then a success: two attempts, oldest
/// first, each with its class, error, owner and instants as written.
pub async fn retry_then_success_records_two_attempts(store: &dyn TaskStore) {
    let t = create(store, new_task("report", at(0))).await;
    assert!(store.attempts(&t.id).await.expect("attempts").is_empty(), "a new task has no attempts");
    let retry = Change {
        now: at(15),
        attempt: Some(2),
        status_message: Some(Some("retrying".into())),
        attempt_end: Some(end(1, Some(FailureClass::Transient))),
        ..Change::default()
    };
    change(store, &t.id, retry).await;
    let done = Change {
        now: at(25),
        status: Some(TaskStatus::Completed),
        terminal_at: Some(at(25)),
        result: Some(serde_json::json!({"ok": true})),
        attempt_end: Some(end(2, None)),
        ..Change::default()
    };
    change(store, &t.id, done).await;
    let history = store.attempts(&t.id).await.expect("attempts");
    let expected = vec![
        AttemptRecord::from_end(t.id.clone(), at(15), end(1, Some(FailureClass::Transient))),
        AttemptRecord::from_end(t.id.clone(), at(25), end(2, None)),
    ];
    assert_eq!(history, expected, "two attempts: transient failure, then completed");
    let other = create(store, new_task("report", at(1))).await;
    assert!(store.attempts(&other.id).await.expect("attempts").is_empty(), "histories are per task");
}

/// A guarded update that loses (stale version, or a terminal row) records
/// no attempt, exactly as it changes nothing else.
pub async fn a_lost_race_records_no_attempt(store: &dyn TaskStore) {
    let t = create(store, new_task("report", at(0))).await;
    change(store, &t.id, Change { now: at(1), status_message: Some(Some("moved on".into())), ..Change::default() }).await;
    let stale = GuardedUpdate::change(
        Guard::read(&t),
        Change {
            now: at(2),
            status: Some(TaskStatus::Failed),
            attempt_end: Some(end(1, Some(FailureClass::Permanent))),
            ..Change::default()
        },
    );
    assert_eq!(apply_one(store, stale).await, UpdateOutcome::Lost, "the stale version must lose");
    assert!(store.attempts(&t.id).await.expect("attempts").is_empty(), "a lost race wrote an attempt");
    finish(store, &t.id, TaskStatus::Cancelled, at(3)).await;
    let late = GuardedUpdate::change(
        Guard::id(t.id.clone()),
        Change { now: at(4), attempt_end: Some(end(1, None)), ..Change::default() },
    );
    assert_eq!(apply_one(store, late).await, UpdateOutcome::Lost, "a terminal row never changes");
    assert!(store.attempts(&t.id).await.expect("attempts").is_empty(), "a refused change wrote an attempt");
}

/// Deleting a task (expiry) deletes its attempt history.
pub async fn attempts_are_deleted_with_their_task(store: &dyn TaskStore) {
    let t = create(store, new_task("report", at(0))).await;
    let kept = create(store, new_task("report", at(0))).await;
    for id in [&t.id, &kept.id] {
        let failed = Change {
            now: at(5),
            status: Some(TaskStatus::Failed),
            terminal_at: Some(at(5)),
            error: Some(TaskError::internal("E_BAD")),
            attempt_end: Some(end(1, Some(FailureClass::Permanent))),
            ..Change::default()
        };
        change(store, id, failed).await;
    }
    assert_eq!(store.attempts(&t.id).await.expect("attempts").len(), 1);
    assert!(apply_one(store, GuardedUpdate::delete(Guard::id(t.id.clone()))).await.applied());
    assert!(store.attempts(&t.id).await.expect("attempts").is_empty(), "the deleted task's attempts remain");
    assert_eq!(store.attempts(&kept.id).await.expect("attempts").len(), 1, "another task's history went too");
}

/// `list` filters by principal, creation instant (before: exclusive, since:
/// inclusive) and id prefix, combined with every other filter.
pub async fn list_filters_by_principal_age_and_id_prefix(store: &dyn TaskStore) {
    let mut made = Vec::new();
    for (n, (secs, principal)) in
        [(1, Some("alice")), (2, Some("bob")), (3, Some("alice")), (4, None)].into_iter().enumerate()
    {
        let mut new = new_task("report", at(secs));
        new.id = mcp_tasks_core::TaskId(format!("{}-{n}", if n < 2 { "ab" } else { "cd" }));
        new.principal = principal.map(str::to_owned);
        made.push(create(store, new).await.id);
    }
    let list = |q: ListQuery| async move { ids(&store.list(q).await.expect("list")) };
    let alice = ListQuery { principal: Some("alice".into()), ..ListQuery::default() };
    assert_eq!(list(alice.clone()).await, vec![made[2].clone(), made[0].clone()]);
    let before = ListQuery { created_before: Some(at(3)), ..ListQuery::default() };
    assert_eq!(list(before).await, vec![made[1].clone(), made[0].clone()], "before is exclusive");
    let since = ListQuery { created_since: Some(at(3)), ..ListQuery::default() };
    assert_eq!(list(since).await, vec![made[3].clone(), made[2].clone()], "since is inclusive");
    let prefix = ListQuery { id_prefix: Some("ab".into()), ..ListQuery::default() };
    assert_eq!(list(prefix).await, vec![made[1].clone(), made[0].clone()]);
    let exact = ListQuery { id_prefix: Some("cd-3".into()), ..ListQuery::default() };
    assert_eq!(list(exact).await, vec![made[3].clone()], "a whole id is its own prefix");
    let none = ListQuery { id_prefix: Some("abc".into()), ..ListQuery::default() };
    assert!(list(none).await.is_empty());
    let combined = ListQuery { id_prefix: Some("cd".into()), created_since: Some(at(2)), ..alice };
    assert_eq!(list(combined).await, vec![made[2].clone()], "filters combine");
}

/// `list_dead_letters` filters by when the letter was written and by task id prefix.
pub async fn dead_letters_filter_by_age(store: &dyn TaskStore) {
    let mut made = Vec::new();
    for secs in [10, 20, 30] {
        // Random ids (not minted at one instant): their first characters differ.
        let t = create(store, NewTask { id: TaskId::random(), ..new_task("report", at(0)) }).await;
        let letter = NewDeadLetter { reason: "poison".into(), error: TaskError::internal("boom"), dead_at: at(secs) };
        let c = Change {
            now: at(secs),
            status: Some(TaskStatus::Failed),
            terminal_at: Some(at(secs)),
            dead_letter: Some(letter),
            ..Change::default()
        };
        change(store, &t.id, c).await;
        made.push(t.id);
    }
    let letters = |q: DeadLetterQuery| async move {
        store.list_dead_letters(q).await.expect("list_dead_letters").into_iter().map(|d| d.task_id).collect::<Vec<_>>()
    };
    let before = DeadLetterQuery { dead_before: Some(at(20)), ..DeadLetterQuery::default() };
    assert_eq!(letters(before).await, vec![made[0].clone()], "before is exclusive");
    let since = DeadLetterQuery { dead_since: Some(at(20)), ..DeadLetterQuery::default() };
    assert_eq!(letters(since).await, vec![made[2].clone(), made[1].clone()], "since is inclusive");
    let prefix = made[1].as_str()[..12].to_owned();
    let by_prefix = DeadLetterQuery { id_prefix: Some(prefix), ..DeadLetterQuery::default() };
    assert_eq!(letters(by_prefix).await, vec![made[1].clone()], "a random id's 12 characters name one letter");
}
